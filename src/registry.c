/*-------------------------------------------------------------------------
 *
 * registry.c
 *		The lease worker's client of the lease registry.
 *
 * One libpq session, non-blocking: a connection, a send and a wait for a
 * result each end at the caller's deadline, so that a registry that hangs
 * never holds up a round for longer than its time limit.  What the leases
 * rest on is made true here before any round uses the session: its
 * settings pinned, the table public.idgen_lease owned by someone trusted,
 * and the triggers that guard its rows in place (doc/design/leases.md,
 * "Shard leases").  Failures come back as messages, for the worker to
 * report with the connection string's password masked.
 *
 * The session's socket counts against this process's file descriptors, as
 * postgres_fdw's connections do: it is reserved before connecting and
 * released when the session closes.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/registry.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "utils/memutils.h"

#include "lease_sql.h"
#include "registry.h"
#include "wait_event.h"

/*
 * The session forces what the protocol needs, whatever the registry's
 * postgresql.conf, ALTER ROLE or ALTER DATABASE set:
 *
 * - A round abandoned on the client side must not live on in the registry,
 *   holding row locks or a connection: each session's statements, lock
 *   waits and idle transactions end on the registry's side too ($1).
 * - A commit is acknowledged only once durable (and with a synchronous
 *   standby, once there): a renewal lost in a crash after this server
 *   published its end hands the lease on while it still mints.  remote_apply
 *   is stronger than on and kept.
 * - Row security off makes a policy on the table an error, not rows that
 *   silently vanish; array_nulls makes NULL in an array an SQL null.
 *
 * session_replication_role is checked, not set, since only a superuser may:
 * "replica" would silence the table's triggers.
 */
/*
 * First, alone, so that no later name (a table, function, operator or type)
 * is looked up in a schema someone with CREATE on the registry made, such
 * as one named after the registry role.  The table is always public's.
 */
static const char *const search_path_sql =
"SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', false)";

static const char *const session_sql =
"SELECT pg_catalog.set_config('statement_timeout', $1, false), "
"pg_catalog.set_config('lock_timeout', $1, false), "
"pg_catalog.set_config('idle_in_transaction_session_timeout', $1, false), "
"pg_catalog.set_config('synchronous_commit', "
"CASE pg_catalog.current_setting('synchronous_commit') "
"WHEN 'remote_apply' THEN 'remote_apply' ELSE 'on' END, false), "
"pg_catalog.set_config('row_security', 'off', false), "
"pg_catalog.set_config('array_nulls', 'on', false), "
"pg_catalog.current_setting('session_replication_role')";

/* Isolation and read-only defaults are the registry's: not ours. */
static const char *const begin_sql =
"BEGIN ISOLATION LEVEL READ COMMITTED, READ WRITE";

static PGconn *registry = NULL;
static bool registry_has_table = false;
/* a newer schema found in the registry was logged, once per worker */
static bool registry_newer_said = false;
static const char *registry_conninfo = NULL;
static const char *registry_conninfo_error = NULL;	/* libpq cannot read it */
static bool stoppable = true;	/* a stop cuts waits short */
static bool short_of_fds = false;	/* the last failure: no file to spare */

/*
 * What of idgen.lease_registry must never reach a log: the password as
 * libpq decodes it, and as written, which libpq quotes (the whole string,
 * or the password alone) when it cannot parse them.
 */
static List *registry_secrets = NIL;

static void
add_secret(const char *start, size_t len)
{
	if (len > 0)
		registry_secrets = lappend(registry_secrets,
								   MemoryContextStrdup(TopMemoryContext,
													   pnstrdup(start, len)));
}

static int
longer_first(const ListCell *a, const ListCell *b)
{
	size_t		la = strlen(lfirst(a));
	size_t		lb = strlen(lfirst(b));

	return (la < lb) - (la > lb);
}

/*
 * Longest first: a word that holds the password is masked whole, before
 * the password inside it would leave the rest of the word standing.
 */
static void
sort_secrets(void)
{
	list_sort(registry_secrets, longer_first);
}

/*
 * The password of a URI-like word, scheme://user:password@host/...: the
 * scheme in any case, with any number of slashes, or none.
 */
static void
add_uri_secret(const char *word, size_t len)
{
	const char *end = word + len;
	const char *authority = word;
	const char *scheme_end = memchr(word, ':', len);
	const char *at = NULL;
	const char *colon;

	if (scheme_end != NULL && scheme_end + 1 < end && scheme_end[1] == '/')
	{
		authority = scheme_end + 1;
		while (authority < end && *authority == '/')
			authority++;
	}
	for (const char *c = authority; c < end && *c != '/' && *c != '?'; c++)
		if (*c == '@')
			at = c;
	if (at == NULL)
		return;
	colon = memchr(authority, ':', at - authority);
	if (colon != NULL)
		add_secret(colon + 1, at - colon - 1);
}

/* In the worker, before any session: what to connect to, and its secrets. */
void
idgen_registry_init(const char *conninfo)
{
	const char *p;
	char	   *parse_error = NULL;
	PQconninfoOption *options = PQconninfoParse(conninfo, &parse_error);

	registry_conninfo = MemoryContextStrdup(TopMemoryContext, conninfo);

	/*
	 * libpq takes a string it cannot read as a database name, and the server
	 * it reaches then logs it whole, where nothing of ours can mask it.  A
	 * bare name is one; a mistyped URI (" postgresql://", "POSTGRESQL://",
	 * "postgresql:/") is not, and is never sent.
	 */
	if (options == NULL && conninfo[strcspn(conninfo, ":@/ \t\n\r\f\v")] != '\0')
		registry_conninfo_error =
			MemoryContextStrdup(TopMemoryContext,
								parse_error ? pchomp(parse_error) : "out of memory");
	if (parse_error)
		PQfreemem(parse_error);

	if (options != NULL)
	{
		for (PQconninfoOption *o = options; o->keyword != NULL; o++)
			if (strcmp(o->keyword, "password") == 0 && o->val != NULL)
				add_secret(o->val, strlen(o->val));
		PQconninfoFree(options);
	}
	else
	{
		/*
		 * libpq cannot parse it, and its error quotes part of it: the first
		 * word, up to a space or an '=', when a URI's scheme is mistyped
		 * (" postgresql://", "POSTGRESQL://", "postgresql:/") and it reads
		 * the string as keyword=value.  Whatever the form, nothing of it
		 * reaches a log: the whole string, and each such word.
		 */
		add_secret(conninfo, strlen(conninfo));
		for (p = conninfo; *p != '\0';)
		{
			size_t		len = strcspn(p, " \t\n\r\f\v=");

			if (len > 1)
				add_secret(p, len);
			p += len;
			if (*p != '\0')
				p++;
		}
	}

	/* a URI's user:password@, in each word, whatever its scheme */
	for (p = conninfo; *p != '\0';)
	{
		size_t		len = strcspn(p, " \t\n\r\f\v");

		add_uri_secret(p, len);
		p += len;
		if (*p != '\0')
			p++;
	}

	/* password=... as a keyword or a URI parameter, quoted or not */
	for (p = conninfo; (p = strstr(p, "password")) != NULL;)
	{
		p += strlen("password");
		while (*p == ' ')
			p++;
		if (*p != '=')
			continue;
		p++;
		while (*p == ' ')
			p++;
		if (*p == '\'')
		{
			const char *end = strchr(p + 1, '\'');

			add_secret(p + 1, end ? (size_t) (end - p - 1) : strlen(p + 1));
		}
		else
			add_secret(p, strcspn(p, " \t\n&"));
	}
	sort_secrets();
}

/* message, every secret of the connection string masked */
char *
idgen_registry_mask(const char *message)
{
	char	   *masked = pstrdup(message);
	ListCell   *lc;

	foreach(lc, registry_secrets)
	{
		const char *secret = lfirst(lc);
		size_t		len = strlen(secret);
		StringInfoData buf;
		const char *p = masked;
		const char *hit;

		initStringInfo(&buf);
		while ((hit = strstr(p, secret)) != NULL)
		{
			appendBinaryStringInfo(&buf, p, hit - p);
			appendStringInfoString(&buf, "********");
			p = hit + len;
		}
		appendStringInfoString(&buf, p);
		pfree(masked);
		masked = buf.data;
	}
	return masked;
}

/* The registry's notices ("relation already exists") are no news. */
static void
registry_notice(void *arg, const char *message)
{
	elog(DEBUG1, "idgen lease registry: %s", idgen_registry_mask(message));
}


/*
 * Wait for the registry's socket; false at the deadline.  Signals set the
 * latch and are served by the worker's main loop once the exchange ends,
 * which the deadline bounds.
 */
static bool
wait_registry(int socket_events, int64 deadline)
{
	for (;;)
	{
		long		timeout = idgen_ms_left(deadline);
		int			rc;

		if (timeout <= 0)
			return false;
		rc = WaitLatchOrSocket(MyLatch,
							   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH |
							   socket_events,
							   PQsocket(registry), timeout,
							   idgen_wait_event_info(IDGEN_WAIT_LEASE_REGISTRY));
		if (rc & WL_LATCH_SET)
			ResetLatch(MyLatch);
		if (rc & socket_events)
			return true;
		/* a stop gives the leases back at once, in a round of its own */
		if (ShutdownRequestPending && stoppable)
			return false;
	}
}

/*
 * A stop request cuts the session's waits short, except in the round that
 * gives the leases back at a stop.
 */
void
idgen_registry_set_stoppable(bool on)
{
	stoppable = on;
}

void
idgen_registry_close(void)
{
	if (registry != NULL)
	{
		PQfinish(registry);
		ReleaseExternalFD();
	}
	registry = NULL;
	registry_has_table = false;
}

/* Connect if not connected; false, with *error set, if that fails. */
static bool
registry_connect(int64 deadline, char **error)
{
	const char *keywords[] = {"dbname", "application_name", NULL};
	const char *values[] = {registry_conninfo, "idgen lease", NULL};
	PostgresPollingStatusType status = PGRES_POLLING_WRITING;

	if (registry != NULL && PQstatus(registry) == CONNECTION_OK)
		return true;
	idgen_registry_close();

	if (registry_conninfo_error != NULL)
	{
		*error = psprintf("\"%s\" is neither a connection string nor a URI that libpq can read: %s",
						  "idgen.lease_registry", registry_conninfo_error);
		return false;
	}

	/* the socket is one of this process's files, as fd.c counts them */
	if (!AcquireExternalFD())
	{
		*error = pstrdup("could not reserve a file descriptor for the connection: there are too many open files on this server");
		short_of_fds = true;
		return false;
	}
	registry = PQconnectStartParams(keywords, values, true);
	if (registry == NULL)
	{
		ReleaseExternalFD();
		*error = pstrdup("out of memory");
		return false;
	}
	PQsetNoticeProcessor(registry, registry_notice, NULL);
	while (status != PGRES_POLLING_OK)
	{
		if (status == PGRES_POLLING_FAILED || PQstatus(registry) == CONNECTION_BAD)
		{
			*error = pchomp(PQerrorMessage(registry));
			idgen_registry_close();
			return false;
		}
		if (!wait_registry(status == PGRES_POLLING_READING ?
						   WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE, deadline))
		{
			*error = pstrdup("timed out connecting");
			idgen_registry_close();
			return false;
		}
		status = PQconnectPoll(registry);
	}
	if (PQsetnonblocking(registry, 1) != 0)
	{
		*error = pchomp(PQerrorMessage(registry));
		idgen_registry_close();
		return false;
	}
	return true;
}

/*
 * Run one statement; its result, or NULL with *error set (the connection is
 * then closed, which rolls back an open transaction).
 */
PGresult *
idgen_registry_exec(const char *sql, int nparams, const char *const *params,
					int64 deadline, char **error)
{
	PGresult   *result = NULL;
	PGresult   *r;

	if (!PQsendQueryParams(registry, sql, nparams, NULL, params, NULL, NULL, 0))
	{
		*error = pchomp(PQerrorMessage(registry));
		idgen_registry_close();
		return NULL;
	}
	/* non-blocking: a send, too, waits no longer than the deadline */
	for (;;)
	{
		int			flushed = PQflush(registry);

		if (flushed == 0)
			break;
		if (flushed < 0 ||
			!wait_registry(WL_SOCKET_READABLE | WL_SOCKET_WRITEABLE, deadline) ||
			!PQconsumeInput(registry))
		{
			*error = flushed < 0 || PQstatus(registry) == CONNECTION_BAD ?
				pchomp(PQerrorMessage(registry)) :
				pstrdup("timed out sending to the registry");
			idgen_registry_close();
			return NULL;
		}
	}
	for (;;)
	{
		while (PQisBusy(registry))
		{
			if (!wait_registry(WL_SOCKET_READABLE, deadline))
			{
				*error = pstrdup("timed out waiting for the registry");
				PQclear(result);
				idgen_registry_close();
				return NULL;
			}
			if (!PQconsumeInput(registry))
			{
				*error = pchomp(PQerrorMessage(registry));
				PQclear(result);
				idgen_registry_close();
				return NULL;
			}
		}
		r = PQgetResult(registry);
		if (r == NULL)
			break;
		/* keep the first result, or the first error */
		if (result == NULL || (PQresultStatus(r) == PGRES_FATAL_ERROR &&
							   PQresultStatus(result) != PGRES_FATAL_ERROR))
		{
			PQclear(result);
			result = r;
		}
		else
			PQclear(r);
	}
	if (result == NULL || PQresultStatus(result) == PGRES_FATAL_ERROR ||
		PQresultStatus(result) == PGRES_BAD_RESPONSE ||
		PQresultStatus(result) == PGRES_NONFATAL_ERROR)
	{
		*error = result ? pchomp(PQresultErrorMessage(result)) :
			pchomp(PQerrorMessage(registry));
		PQclear(result);
		idgen_registry_close();
		return NULL;
	}
	return result;
}

bool
idgen_registry_command(const char *sql, int nparams, const char *const *params,
					   int64 deadline, char **error)
{
	PGresult   *result = idgen_registry_exec(sql, nparams, params, deadline, error);

	if (result == NULL)
		return false;
	PQclear(result);
	return true;
}


/*
 * COMMIT, and true only if the transaction committed: one that failed
 * ends in ROLLBACK, which is no error to libpq.
 */
bool
idgen_registry_commit(int64 deadline, char **error)
{
	PGresult   *result = idgen_registry_exec("COMMIT", 0, NULL, deadline, error);

	if (result == NULL)
		return false;
	if (strcmp(PQcmdStatus(result), "COMMIT") != 0)
	{
		*error = psprintf("the transaction ended in %s", PQcmdStatus(result));
		PQclear(result);
		idgen_registry_close();
		return false;
	}
	PQclear(result);
	return true;
}

/* What to do about the last failure, when this client knows better. */
const char *
idgen_registry_hint(void)
{
	if (!short_of_fds)
		return NULL;
	return psprintf("Raise the server's \"%s\" and/or \"ulimit -n\" limits.",
					"max_files_per_process");
}

/* A new session: its settings, before it runs anything else. */
static bool
pin_session(int64 deadline, int timeout_ms, char **error)
{
	char		timeout[32];
	const char *params[1];
	PGresult   *rows;

	snprintf(timeout, sizeof(timeout), "%d", timeout_ms);
	params[0] = timeout;
	if (!idgen_registry_command(search_path_sql, 0, NULL, deadline, error))
		return false;
	rows = idgen_registry_exec(session_sql, 1, params, deadline, error);
	if (rows == NULL)
		return false;
	if (strcmp(PQgetvalue(rows, 0, PQnfields(rows) - 1), "origin") != 0)
	{
		*error = psprintf("the registry session has \"%s\" set to \"%s\", not \"%s\"",
						  "session_replication_role",
						  PQgetvalue(rows, 0, PQnfields(rows) - 1), "origin");
		PQclear(rows);
		idgen_registry_close();
		return false;
	}
	PQclear(rows);
	return true;
}

/* The table, made if missing, and owned by someone trusted. */
static bool
check_table(int64 deadline, char **error)
{
	PGresult   *rows;

	/* CREATE ... IF NOT EXISTS would need CREATE even when it exists */
	rows = idgen_registry_exec(idgen_lease_sql_table_owner, 0, NULL, deadline, error);
	if (rows == NULL)
		return false;
	if (PQntuples(rows) > 0 && strcmp(PQgetvalue(rows, 0, 1), "t") != 0)
	{
		*error = psprintf("table \"%s\" is owned by role \"%s\", which is not this role, one it belongs to, the owner of schema \"%s\" or a superuser",
						  "public.idgen_lease", PQgetvalue(rows, 0, 0), "public");
		PQclear(rows);
		idgen_registry_close();
		return false;
	}
	registry_has_table = PQntuples(rows) > 0;
	PQclear(rows);
	if (!registry_has_table &&
		!idgen_registry_command(idgen_lease_sql_create_table, 0, NULL, deadline, error))
		return false;
	registry_has_table = true;
	return true;
}

/*
 * The guards of the rows, installed if missing, disabled or of an older
 * schema version; one of a newer version is a newer idgen's, and is left.
 */
static bool
check_guards(int64 deadline, char **error)
{
	for (int attempt = 0;; attempt++)
	{
		PGresult   *rows;
		bool		present;
		int			version;

		rows = idgen_registry_exec(idgen_lease_sql_guards_present, 0, NULL, deadline, error);
		if (rows == NULL)
			return false;
		present = strcmp(PQgetvalue(rows, 0, 0), "t") == 0;
		version = atoi(PQgetvalue(rows, 0, 1));
		PQclear(rows);
		if (present && version > IDGEN_REGISTRY_SCHEMA_VERSION &&
			!registry_newer_said)
		{
			ereport(LOG,
					(errmsg("the lease registry's schema is of version %d, newer than this server's %d; this server leaves it as it is",
							version, IDGEN_REGISTRY_SCHEMA_VERSION),
					 errdetail("A newer idgen installed it; it keeps what this version needs.")));
			registry_newer_said = true;
		}
		if (present && version >= IDGEN_REGISTRY_SCHEMA_VERSION)
			return true;
		if (attempt > 0)
		{
			*error = psprintf("the triggers that guard the rows of \"%s\" are not there, not enabled or not of this version, after this server installed them",
							  "public.idgen_lease");
			idgen_registry_close();
			return false;
		}
		if (!idgen_registry_begin(deadline, error))
			return false;
		for (const char *const *g = idgen_lease_sql_guard; *g != NULL; g++)
			if (!idgen_registry_command(*g, 0, NULL, deadline, error))
				return false;
		if (!idgen_registry_command("COMMIT", 0, NULL, deadline, error))
			return false;
		ereport(LOG,
				(errmsg("idgen installed the triggers that guard the rows of \"%s\", schema version %d (it found version %d)",
						"public.idgen_lease", IDGEN_REGISTRY_SCHEMA_VERSION, version)));
	}
}

/*
 * A session ready for a round, connected if it was not: its settings
 * pinned (timeout_ms is the registry's own time limit on statements, lock
 * waits and idle transactions), the table there, and its guards checked
 * every time, since someone may have disabled or dropped them meanwhile.
 */
bool
idgen_registry_ready(int64 deadline, int timeout_ms, char **error)
{
	short_of_fds = false;
	if (registry == NULL || PQstatus(registry) != CONNECTION_OK)
	{
		if (!registry_connect(deadline, error) ||
			!pin_session(deadline, timeout_ms, error))
			return false;
	}
	if (!registry_has_table && !check_table(deadline, error))
		return false;
	return check_guards(deadline, error);
}

/* A transaction of the session's own characteristics. */
bool
idgen_registry_begin(int64 deadline, char **error)
{
	return idgen_registry_command(begin_sql, 0, NULL, deadline, error);
}
