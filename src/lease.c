/*-------------------------------------------------------------------------
 *
 * lease.c
 *		Shard leases in a registry database, so that two servers never
 *		mint for one shard at once.
 *
 * With idgen.lease_registry set, the registry's table public.idgen_lease
 * holds a row per shard: its owner, a token new at every server start (a
 * cloned data directory is another owner), and valid_until, no later than
 * which the owner stamps no ID of the shard.  The "idgen lease" worker takes,
 * renews and gives back this server's leases; it alone talks to the
 * registry.  The minting path only compares the millisecond it stamps with
 * the lease's end in shared memory, beside the fence.
 *
 * Why two servers' IDs never collide: an owner stamps only milliseconds
 * below its lease's end, and publishes an end here only after the registry
 * committed it; a new owner takes a lease only when it has ended by the
 * registry's clock, or was given back, and raises the generator strictly
 * above the previous valid_until before it mints.  The two servers' IDs of
 * the shard are then in disjoint ranges of milliseconds, whatever their
 * clocks say and however long either was paused: clocks decide only when a
 * lease may pass on, never whether IDs can repeat.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lease.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/htup_details.h"
#include "access/xlog.h"
#include "common/int.h"
#include "funcapi.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "generator.h"
#include "idgen_compat.h"
#include "layout.h"
#include "lease.h"
#include "settings.h"
#include "shard.h"
#include "wait_event.h"
#include "worker.h"

/* A lease array indexed by shard: 2^16 shards take 512 kB. */
#define MAX_LEASE_SHARD_BITS	16

/* The longest one exchange with the registry may take. */
#define REGISTRY_TIMEOUT_MS		5000

bool		idgen_leases_on = false;
pg_atomic_uint64 *idgen_lease_ends = NULL;

typedef struct IdgenLeaseShared
{
	char		owner[33];		/* this start's token, hexadecimal */
	slock_t		mutex;			/* protects worker_latch */
	Latch	   *worker_latch;
	ConditionVariable cv;		/* broadcast when a lease's end moves */
	pg_atomic_uint32 wanted;	/* a minter waits for a lease */
	int			nshards;
	pg_atomic_uint64 ends[FLEXIBLE_ARRAY_MEMBER];	/* by shard */
} IdgenLeaseShared;

static IdgenLeaseShared *lease_shared = NULL;

/* Made by the postmaster once, so a crash restart keeps it. */
static char owner_token[33];

/* ---- shared memory ---- */

Size
idgen_lease_shmem_size(void)
{
	if (!idgen_leases_on)
		return 0;
	return add_size(offsetof(IdgenLeaseShared, ends),
					mul_size(sizeof(pg_atomic_uint64),
							 (Size) 1 << idgen_layout.shard_bits));
}

/* With AddinShmemInitLock held. */
void
idgen_lease_shmem_startup(void)
{
	bool		found;

	if (!idgen_leases_on)
		return;
	lease_shared = ShmemInitStruct("idgen lease", idgen_lease_shmem_size(),
								   &found);
	if (!found)
	{
		strlcpy(lease_shared->owner, owner_token, sizeof(lease_shared->owner));
		SpinLockInit(&lease_shared->mutex);
		lease_shared->worker_latch = NULL;
		ConditionVariableInit(&lease_shared->cv);
		pg_atomic_init_u32(&lease_shared->wanted, 0);
		lease_shared->nshards = 1 << idgen_layout.shard_bits;
		for (int i = 0; i < lease_shared->nshards; i++)
			pg_atomic_init_u64(&lease_shared->ends[i], IDGEN_LEASE_PENDING);
	}
	idgen_lease_ends = lease_shared->ends;
}

/* ---- minting ---- */

static void
wake_lease_worker(void)
{
	Latch	   *latch;

	if (pg_atomic_read_u32(&lease_shared->wanted) != 0)
		return;
	pg_atomic_write_u32(&lease_shared->wanted, 1);
	SpinLockAcquire(&lease_shared->mutex);
	latch = lease_shared->worker_latch;
	SpinLockRelease(&lease_shared->mutex);
	if (latch)
		SetLatch(latch);
}

/*
 * Wait until this server's lease on shard reaches past ms: true when it
 * does, false when it is held elsewhere or timeout_us passes first.
 */
bool
idgen_lease_wait(int32 shard, int64 ms, int64 timeout_us)
{
	uint32		wait_event_info = idgen_wait_event_info(IDGEN_WAIT_LEASE);
	instr_time	start;
	instr_time	now;
	bool		held = false;

	INSTR_TIME_SET_CURRENT(start);
	ConditionVariablePrepareToSleep(&lease_shared->cv);
	for (;;)
	{
		uint64		end = idgen_lease_end(shard);

		if (end > (uint64) ms)
		{
			held = true;
			break;
		}
		if (end == IDGEN_LEASE_NOT_HELD)
			break;
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		if (INSTR_TIME_GET_MICROSEC(now) >= timeout_us)
			break;
		wake_lease_worker();
		(void) ConditionVariableTimedSleep(&lease_shared->cv, 10,
										   wait_event_info);
	}
	ConditionVariableCancelSleep();
	return held;
}

/* Why a mint for shard cannot go on. */
void
idgen_lease_error(int32 shard)
{
	uint64		end = idgen_lease_end(shard);

	if (end == IDGEN_LEASE_NOT_HELD)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this server holds no lease on shard %d", shard),
				 errdetail("The lease registry of \"%s\" has not given this server the shard's lease: another server holds it, or this server gave it back.",
						   "idgen.lease_registry"),
				 errhint("Give each server shards of its own; a shard moves to another server once its owner drops it from \"%s\" or \"%s\", or stops.",
						 "idgen.shard_id", "idgen.shard_ids")));
	if (end == IDGEN_LEASE_PENDING)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not take the lease on shard %d within \"%s\" (%d ms)",
						shard, "idgen.max_wait", idgen_max_wait),
				 errdetail("With \"%s\" set, a server mints for a shard only while it holds the shard's lease.",
						   "idgen.lease_registry"),
				 errhint("Check the server log for messages of the \"idgen lease\" worker, and that the lease registry is reachable.")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("could not renew the lease on shard %d within \"%s\" (%d ms)",
					shard, "idgen.max_wait", idgen_max_wait),
			 errdetail("This server's lease on the shard ended at %s, and the lease registry has not renewed it.",
					   timestamptz_to_str(idgen_ms_to_timestamptz((int64) end))),
			 errhint("Check the server log for messages of the \"idgen lease\" worker, and that the lease registry is reachable.")));
}

/* ---- the registry ---- */

/*
 * Times cross the wire as microseconds since 1970; the registry turns them
 * into timestamptz, so that people read its rows.
 */
#define UNIX_US_TO_TIMESTAMPTZ(p) \
	"timestamptz 'epoch' + " p "::bigint * interval '1 microsecond'"
/* infinity is "forever", -infinity "never" (NULL) */
#define TIMESTAMPTZ_TO_UNIX_US(x) \
	"CASE WHEN isfinite(" x ") THEN (extract(epoch FROM " x ") * 1000000)::bigint " \
	"WHEN " x " > 'epoch' THEN 9223372036854775807 END"

static const char *const create_table_sql =
"CREATE TABLE IF NOT EXISTS public.idgen_lease (\n"
"    shard integer PRIMARY KEY CHECK (shard >= 0),\n"
"    owner text,\n"
"    owner_name text,\n"
"    valid_until timestamptz,\n"
"    previous_until timestamptz,\n"
"    renewed_at timestamptz,\n"
"    stamped_until timestamptz\n"
")";

/*
 * The table's owner can rewrite its rows behind the servers' backs (a
 * trigger): trusted only if it could as well have replaced the table, or
 * its rights are the registry role's.
 */
static const char *const table_owner_sql =
"SELECT pg_catalog.pg_get_userbyid(c.relowner), "
"r.rolsuper OR pg_catalog.pg_has_role(c.relowner, 'MEMBER') "
"OR pg_catalog.pg_has_role(c.relowner, n.nspowner, 'MEMBER') "
"FROM pg_catalog.pg_class AS c "
"JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
"JOIN pg_catalog.pg_roles AS r ON r.oid = c.relowner "
"WHERE c.oid = pg_catalog.to_regclass('public.idgen_lease')";

/*
 * Guards on the rows, installed by the servers (in one transaction, when
 * a session finds them missing): whatever an UPDATE by hand says,
 * stamped_until never decreases below any valid_until the row ever held,
 * except in a give-back by the holder itself (the session names it in
 * idgen_lease.giving_back), which names the last millisecond it stamped;
 * previous_until never decreases under one owner, and a new owner's is at
 * least the old row's valid_until and stamped_until; rows are never
 * deleted, nor the table truncated.  So a taker's floor,
 * GREATEST(valid_until, stamped_until), is never below what a previous
 * holder may have stamped.
 */
static const char *const guard_sql[] = {
	"ALTER TABLE public.idgen_lease ADD COLUMN IF NOT EXISTS stamped_until timestamptz",
	"CREATE OR REPLACE FUNCTION public.idgen_lease_guard() RETURNS trigger "
	"LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $f$\n"
	"BEGIN\n"
	"    IF NEW.shard IS DISTINCT FROM OLD.shard THEN\n"
	"        RAISE EXCEPTION USING ERRCODE = '55000',\n"
	"            MESSAGE = 'the shard of a row of public.idgen_lease never changes',\n"
	"            HINT = 'To free a shard, UPDATE public.idgen_lease SET owner = NULL WHERE shard = ...';\n"
	"    END IF;\n"
	"    IF NEW.owner IS NULL AND OLD.owner IS NOT NULL\n"
	"       AND OLD.owner = current_setting('idgen_lease.giving_back', true) THEN\n"
	"        -- its holder gives it back, up to the last millisecond it stamped,\n"
	"        -- above the floor it started from\n"
	"        NEW.stamped_until := GREATEST(NEW.valid_until, OLD.previous_until);\n"
	"    ELSE\n"
	"        NEW.stamped_until := GREATEST(OLD.stamped_until, OLD.valid_until,\n"
	"                                      NEW.valid_until, NEW.stamped_until);\n"
	"    END IF;\n"
	"    IF NEW.owner IS NOT DISTINCT FROM OLD.owner THEN\n"
	"        NEW.previous_until := GREATEST(OLD.previous_until, NEW.previous_until);\n"
	"    ELSIF NEW.owner IS NOT NULL THEN\n"
	"        NEW.previous_until := GREATEST(NEW.previous_until, OLD.valid_until,\n"
	"                                       OLD.stamped_until);\n"
	"    END IF;\n"
	"    RETURN NEW;\n"
	"END\n$f$",
	"CREATE OR REPLACE FUNCTION public.idgen_lease_refuse() RETURNS trigger "
	"LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $f$\n"
	"BEGIN\n"
	"    RAISE EXCEPTION USING ERRCODE = '55000',\n"
	"        MESSAGE = 'rows of public.idgen_lease are never deleted',\n"
	"        DETAIL = 'A shard whose row is gone would be taken below the IDs its last owner stamped.',\n"
	"        HINT = 'To free a shard, UPDATE public.idgen_lease SET owner = NULL WHERE shard = ...; its next owner starts above what the last one stamped.';\n"
	"END\n$f$",
	"CREATE OR REPLACE TRIGGER idgen_lease_guard BEFORE UPDATE ON public.idgen_lease "
	"FOR EACH ROW EXECUTE FUNCTION public.idgen_lease_guard()",
	"CREATE OR REPLACE TRIGGER idgen_lease_no_delete BEFORE DELETE ON public.idgen_lease "
	"FOR EACH ROW EXECUTE FUNCTION public.idgen_lease_refuse()",
	"CREATE OR REPLACE TRIGGER idgen_lease_no_truncate BEFORE TRUNCATE ON public.idgen_lease "
	"FOR EACH STATEMENT EXECUTE FUNCTION public.idgen_lease_refuse()",
	NULL
};

/* The guards are there and enabled (a registry of 1.1 has none). */
static const char *const guards_present_sql =
"SELECT (SELECT count(*) FROM pg_catalog.pg_trigger AS t "
"JOIN pg_catalog.pg_proc AS p ON p.oid = t.tgfoid "
"JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace "
"WHERE t.tgrelid = pg_catalog.to_regclass('public.idgen_lease') "
"AND t.tgenabled = 'O' AND n.nspname = 'public' AND "
"(t.tgname, p.proname) IN (('idgen_lease_guard', 'idgen_lease_guard'), "
"('idgen_lease_no_delete', 'idgen_lease_refuse'), "
"('idgen_lease_no_truncate', 'idgen_lease_refuse'))) = 3 "
"AND EXISTS (SELECT FROM pg_catalog.pg_attribute "
"WHERE attrelid = pg_catalog.to_regclass('public.idgen_lease') "
"AND attname = 'stamped_until' AND NOT attisdropped)";

static const char *const giving_back_sql =
"SELECT pg_catalog.set_config('idgen_lease.giving_back', $1, true)";

static const char *const add_rows_sql =
"INSERT INTO public.idgen_lease (shard) SELECT unnest($1::integer[]) "
"ON CONFLICT (shard) DO NOTHING";

static const char *const lock_rows_sql =
"SELECT shard, owner, owner_name, "
TIMESTAMPTZ_TO_UNIX_US("valid_until") ", "
TIMESTAMPTZ_TO_UNIX_US("previous_until") ", "
TIMESTAMPTZ_TO_UNIX_US("clock_timestamp()") ", "
TIMESTAMPTZ_TO_UNIX_US("stamped_until") " "
"FROM public.idgen_lease WHERE shard = ANY ($1::integer[]) ORDER BY shard "
"FOR UPDATE SKIP LOCKED";

static const char *const update_rows_sql =
"UPDATE public.idgen_lease AS l SET owner = n.owner, "
"owner_name = CASE WHEN n.owner IS NULL THEN l.owner_name ELSE $4 END, "
"valid_until = " UNIX_US_TO_TIMESTAMPTZ("n.until") ", "
"previous_until = CASE WHEN n.take THEN GREATEST(l.valid_until, l.stamped_until) "
"ELSE l.previous_until END, "
"renewed_at = clock_timestamp() "
"FROM unnest($1::integer[], $2::text[], $3::bigint[], $5::boolean[]) "
"AS n (shard, owner, until, take) "
"WHERE l.shard = n.shard";

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
static bool giving_back = false;	/* a stop does not cut this round short */

/* Deadlines are microseconds of the monotonic clock. */
static int64
monotonic_us(void)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	return (int64) INSTR_TIME_GET_MICROSEC(now);
}

/* Milliseconds left before deadline, at least 0. */
static long
ms_left(int64 deadline)
{
	int64		left = deadline - monotonic_us();

	return left <= 0 ? 0 : (long) ((left + 999) / 1000);
}

/*
 * Wait for the registry's socket; false at the deadline.  Signals set the
 * latch and are served by the main loop once the exchange ends, which the
 * deadline bounds.
 */
static bool
wait_registry(int socket_events, int64 deadline)
{
	for (;;)
	{
		long		timeout = ms_left(deadline);
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
		if (ShutdownRequestPending && !giving_back)
			return false;
	}
}

static void
registry_close(void)
{
	if (registry != NULL)
		PQfinish(registry);
	registry = NULL;
	registry_has_table = false;
}

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

static void
find_registry_secrets(void)
{
	const char *conninfo = idgen_lease_registry;
	const char *p;
	PQconninfoOption *options = PQconninfoParse(conninfo, NULL);

	if (options != NULL)
	{
		for (PQconninfoOption *o = options; o->keyword != NULL; o++)
			if (strcmp(o->keyword, "password") == 0 && o->val != NULL)
				add_secret(o->val, strlen(o->val));
		PQconninfoFree(options);
	}

	/* a URI's user:password@ */
	if (strncmp(conninfo, "postgresql://", 13) == 0 ||
		strncmp(conninfo, "postgres://", 11) == 0)
	{
		const char *authority = strstr(conninfo, "://") + 3;
		size_t		len = strcspn(authority, "/?");
		const char *at = NULL;

		for (const char *c = authority; c < authority + len; c++)
			if (*c == '@')
				at = c;
		if (at != NULL)
		{
			const char *colon = memchr(authority, ':', at - authority);

			if (colon != NULL)
				add_secret(colon + 1, at - colon - 1);
		}
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

			add_secret(p + 1, end ? end - p - 1 : strlen(p + 1));
		}
		else
			add_secret(p, strcspn(p, " \t\n&"));
	}
}

/* message, every secret of the connection string masked */
static char *
mask_secrets(const char *message)
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
	elog(DEBUG1, "idgen lease registry: %s", mask_secrets(message));
}

/* Connect if not connected; false, with *error set, if that fails. */
static bool
registry_connect(int64 deadline, char **error)
{
	const char *keywords[] = {"dbname", "application_name", NULL};
	const char *values[] = {idgen_lease_registry, "idgen lease", NULL};
	PostgresPollingStatusType status = PGRES_POLLING_WRITING;

	if (registry != NULL && PQstatus(registry) == CONNECTION_OK)
		return true;
	registry_close();

	registry = PQconnectStartParams(keywords, values, true);
	if (registry == NULL)
	{
		*error = pstrdup("out of memory");
		return false;
	}
	PQsetNoticeProcessor(registry, registry_notice, NULL);
	while (status != PGRES_POLLING_OK)
	{
		if (status == PGRES_POLLING_FAILED || PQstatus(registry) == CONNECTION_BAD)
		{
			*error = pchomp(PQerrorMessage(registry));
			registry_close();
			return false;
		}
		if (!wait_registry(status == PGRES_POLLING_READING ?
						   WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE, deadline))
		{
			*error = pstrdup("timed out connecting");
			registry_close();
			return false;
		}
		status = PQconnectPoll(registry);
	}
	if (PQsetnonblocking(registry, 1) != 0)
	{
		*error = pchomp(PQerrorMessage(registry));
		registry_close();
		return false;
	}
	return true;
}

/*
 * Run one statement; its result, or NULL with *error set (the connection is
 * then closed, which rolls back an open transaction).
 */
static PGresult *
registry_exec(const char *sql, int nparams, const char *const *params,
			  int64 deadline, char **error)
{
	PGresult   *result = NULL;
	PGresult   *r;

	if (!PQsendQueryParams(registry, sql, nparams, NULL, params, NULL, NULL, 0))
	{
		*error = pchomp(PQerrorMessage(registry));
		registry_close();
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
			registry_close();
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
				registry_close();
				return NULL;
			}
			if (!PQconsumeInput(registry))
			{
				*error = pchomp(PQerrorMessage(registry));
				PQclear(result);
				registry_close();
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
		registry_close();
		return NULL;
	}
	return result;
}

static bool
registry_command(const char *sql, int nparams, const char *const *params,
				 int64 deadline, char **error)
{
	PGresult   *result = registry_exec(sql, nparams, params, deadline, error);

	if (result == NULL)
		return false;
	PQclear(result);
	return true;
}

/* ---- the worker ---- */

/* This server's view of one shard it owns, or owned. */
typedef struct ShardLease
{
	int32		shard;
	bool		wanted;			/* the shard is in this server's settings */
	uint64		end;			/* as published in shared memory */
	int64		renewed_us;		/* monotonic start of the round that last took
								 * or renewed it; 0 for none */
	bool		warned;			/* "held by another" was logged */
} ShardLease;

static ShardLease *leases = NULL;
static char *owner_name = NULL; /* this server, for people reading the rows */
static int	nleases = 0;
static bool registry_failing = false;

/* The layout's milliseconds to Unix microseconds and back. */
static int64
ms_to_unix_us(int64 ms)
{
	return idgen_ms_to_timestamptz(ms) + IDGEN_POSTGRES_EPOCH_UNIX_US;
}

static int64
unix_us_to_ms(int64 unix_us)
{
	int64		us = unix_us - IDGEN_POSTGRES_EPOCH_UNIX_US - idgen_layout.epoch;

	/* rounded down */
	return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

/*
 * The millisecond leases are measured against: the wall clock's, or the
 * generator's when it runs ahead (after a burst, a clock step back, a
 * take), since that is what minters stamp.
 */
static int64
lease_now(void)
{
	return Max(idgen_wall_ms(), idgen_generator_ms());
}

static void
publish_end(ShardLease *lease, uint64 end)
{
	lease->end = end;
	pg_atomic_write_u64(&lease_shared->ends[lease->shard], end);
	ConditionVariableBroadcast(&lease_shared->cv);
}

/* The shards in the settings now, merged into leases. */
static void
refresh_wanted(void)
{
	int32	   *owned;
	int			nowned = idgen_owned_shards(&owned);
	ShardLease *merged = palloc(sizeof(ShardLease) * (nowned + nleases));
	int			n = 0;
	int			i = 0;
	int			j = 0;

	/* both ascending */
	while (i < nowned || j < nleases)
	{
		if (j >= nleases || (i < nowned && owned[i] < leases[j].shard))
		{
			merged[n] = (ShardLease)
			{
				.shard = owned[i],.wanted = true,
					.end = pg_atomic_read_u64(&lease_shared->ends[owned[i]])
			};
			n++, i++;
		}
		else if (i >= nowned || leases[j].shard < owned[i])
		{
			/* no longer wanted: kept until given back */
			leases[j].wanted = false;
			if (leases[j].end > IDGEN_LEASE_NOT_HELD)
				merged[n++] = leases[j];
			j++;
		}
		else
		{
			merged[n] = leases[j];
			merged[n].wanted = true;
			n++, i++, j++;
		}
	}
	pfree(owned);
	if (leases)
		pfree(leases);
	leases = merged;
	nleases = n;
}

/*
 * Stop minting for the shards not wanted (all of them when giving back at
 * shut down) and say up to which millisecond each was stamped.
 *
 * Order matters.  Their ends go to IDGEN_LEASE_NOT_HELD first; then the
 * generator's state moves one step, by compare-and-swap.  A minter whose
 * compare-and-swap comes after that step read the state after it, so (the
 * read barrier of idgen_lease_end) it reads the end after it too, and does
 * not mint; one whose compare-and-swap came first minted at or below the
 * state stepped from.  So nothing of these shards is ever stamped above
 * the returned millisecond.
 */
static int64
stop_minting(bool all)
{
	bool		any = false;

	for (int i = 0; i < nleases; i++)
	{
		if ((all || !leases[i].wanted) && leases[i].end > IDGEN_LEASE_NOT_HELD)
		{
			pg_atomic_write_u64(&lease_shared->ends[leases[i].shard],
								IDGEN_LEASE_NOT_HELD);
			any = true;
		}
	}
	if (!any)
		return 0;
	pg_memory_barrier();
	return idgen_step_generator();
}

/* The renewal period, a third of the lease, in monotonic microseconds. */
#define RENEWAL_PERIOD_US ((int64) idgen_lease_duration / 3 * 1000)

/*
 * A shard's lease is due for a round: to take, renew or give back.  A held
 * one is due with two thirds of it left by the clock minters stamp with,
 * and also a renewal period after its last renewal by the monotonic clock:
 * after that clock stepped back, the end looks further away than it is
 * (the registry ends it by its own clock), and a round is what finds out
 * that another server took the shard meanwhile.
 */
static bool
lease_due(ShardLease *lease, bool all, int64 now_ms)
{
	if (all || !lease->wanted)
		return lease->end > IDGEN_LEASE_NOT_HELD;
	return lease->end <= IDGEN_LEASE_NOT_HELD ||
		(int64) lease->end - now_ms <= 2 * (int64) idgen_lease_duration / 3 ||
		monotonic_us() - lease->renewed_us >= RENEWAL_PERIOD_US;
}

/*
 * Establish a lease before minters may use it: the generator, durably,
 * strictly above the previous owner's last millisecond, as any mint waits
 * for the fence.  The registry keeps that millisecond (previous_until) as
 * long as the lease is this server's, so a take whose commit was not seen,
 * or a crash restart (shared memory reset, token kept), is established
 * again at the next round.
 */
static void
establish(int64 previous_until)
{
	if (previous_until >= 0)
		(void) idgen_raise_past(idgen_encode(previous_until, 0, 0));
}

/*
 * One exchange with the registry: take or renew the leases due, give back
 * those no longer wanted (all of them, at shut down).  Shared memory
 * changes only after the registry committed, except that minting stops
 * first for a lease given back.  False if it failed.
 */
static bool
lease_round(bool giving_back_all)
{
	int64		deadline;
	int64		round_start_us;
	char	   *error = NULL;
	int64		last_ms;
	int64		now_ms = lease_now();
	StringInfoData shards;
	StringInfoData upd_shards;
	StringInfoData upd_owners;
	StringInfoData upd_until;
	StringInfoData upd_take;
	const char *params[5];
	PGresult   *rows;
	int		   *action;			/* per lease: 0 none, 1 renew, 2 take, 3 give back */
	int64	   *new_end;		/* the layout's ms, for 1 and 2 */
	int64	   *floor;			/* the previous owner's last ms to establish
								 * above, for 1 and 2; -1 for none */
	bool	   *seen;			/* its row was locked and read */
	int			ndue = 0;
	char		timeout[32];
	int			round_ms = Min(REGISTRY_TIMEOUT_MS, Max(idgen_lease_duration / 3, 100));
	bool		ok = false;

	initStringInfo(&shards);
	appendStringInfoChar(&shards, '{');
	for (int i = 0; i < nleases; i++)
		if (lease_due(&leases[i], giving_back_all, now_ms))
			appendStringInfo(&shards, "%s%d", ndue++ ? "," : "", leases[i].shard);
	appendStringInfoChar(&shards, '}');
	if (ndue == 0)
		return true;

	giving_back = giving_back_all;
	round_start_us = monotonic_us();
	deadline = round_start_us + (int64) round_ms * 1000;
	last_ms = stop_minting(giving_back_all);

	action = palloc0(sizeof(int) * nleases);
	new_end = palloc0(sizeof(int64) * nleases);
	floor = palloc0(sizeof(int64) * nleases);
	seen = palloc0(sizeof(bool) * nleases);

	if (registry == NULL || PQstatus(registry) != CONNECTION_OK)
	{
		if (!registry_connect(deadline, &error))
			goto done;
		/* the registry gives up first, so its answer still comes back */
		snprintf(timeout, sizeof(timeout), "%d", Max(round_ms * 3 / 4, 50));
		params[0] = timeout;
		if (!registry_command(search_path_sql, 0, NULL, deadline, &error))
			goto done;
		rows = registry_exec(session_sql, 1, params, deadline, &error);
		if (rows == NULL)
			goto done;
		if (strcmp(PQgetvalue(rows, 0, PQnfields(rows) - 1), "origin") != 0)
		{
			error = psprintf("the registry session has \"%s\" set to \"%s\", not \"%s\"",
							 "session_replication_role",
							 PQgetvalue(rows, 0, PQnfields(rows) - 1), "origin");
			PQclear(rows);
			registry_close();
			goto done;
		}
		PQclear(rows);
	}
	if (!registry_has_table)
	{
		/* CREATE ... IF NOT EXISTS would need CREATE even when it exists */
		rows = registry_exec(table_owner_sql, 0, NULL, deadline, &error);
		if (rows == NULL)
			goto done;
		if (PQntuples(rows) > 0 && strcmp(PQgetvalue(rows, 0, 1), "t") != 0)
		{
			error = psprintf("table \"%s\" is owned by role \"%s\", which is not this role, one it belongs to, the owner of schema \"%s\" or a superuser",
							 "public.idgen_lease", PQgetvalue(rows, 0, 0), "public");
			PQclear(rows);
			registry_close();
			goto done;
		}
		registry_has_table = PQntuples(rows) > 0;
		PQclear(rows);
		if (!registry_has_table &&
			!registry_command(create_table_sql, 0, NULL, deadline, &error))
			goto done;
		registry_has_table = true;
	}
	/* every round: someone may have disabled or dropped them meanwhile */
	for (int attempt = 0;; attempt++)
	{
		bool		present;

		rows = registry_exec(guards_present_sql, 0, NULL, deadline, &error);
		if (rows == NULL)
			goto done;
		present = strcmp(PQgetvalue(rows, 0, 0), "t") == 0;
		PQclear(rows);
		if (present)
			break;
		if (attempt > 0)
		{
			error = psprintf("the triggers that guard the rows of \"%s\" are not there, or not enabled, after this server installed them",
							 "public.idgen_lease");
			registry_close();
			goto done;
		}
		if (!registry_command(begin_sql, 0, NULL, deadline, &error))
			goto done;
		for (const char *const *g = guard_sql; *g != NULL; g++)
			if (!registry_command(*g, 0, NULL, deadline, &error))
				goto done;
		if (!registry_command("COMMIT", 0, NULL, deadline, &error))
			goto done;
		ereport(LOG,
				(errmsg("idgen installed the triggers that guard the rows of \"%s\"",
						"public.idgen_lease")));
	}
	if (!registry_command(begin_sql, 0, NULL, deadline, &error))
		goto done;
	params[0] = shards.data;
	if (!registry_command(add_rows_sql, 1, params, deadline, &error))
		goto done;
	/* rows another round holds are skipped: their turn comes next round */
	rows = registry_exec(lock_rows_sql, 1, params, deadline, &error);
	if (rows == NULL)
		goto done;

	/* decide, row by row (both lists are ascending) */
	now_ms = lease_now();
	initStringInfo(&upd_shards);
	initStringInfo(&upd_owners);
	initStringInfo(&upd_until);
	initStringInfo(&upd_take);
	for (int r = 0, i = 0; r < PQntuples(rows); r++)
	{
		int32		shard = pg_strtoint32(PQgetvalue(rows, r, 0));
		bool		no_owner = PQgetisnull(rows, r, 1);
		bool		mine = !no_owner &&
			strcmp(PQgetvalue(rows, r, 1), lease_shared->owner) == 0;
		bool		never = PQgetisnull(rows, r, 3);
		int64		until_us = never ? 0 : pg_strtoint64(PQgetvalue(rows, r, 3));
		int64		until_ms = never ? -1 : unix_us_to_ms(until_us);
		int64		previous_ms = PQgetisnull(rows, r, 4) ? -1 :
			unix_us_to_ms(pg_strtoint64(PQgetvalue(rows, r, 4)));
		int64		registry_now_us = pg_strtoint64(PQgetvalue(rows, r, 5));
		int64		registry_now_ms = unix_us_to_ms(registry_now_us);
		int64		stamped_ms = PQgetisnull(rows, r, 6) ? -1 :
			unix_us_to_ms(pg_strtoint64(PQgetvalue(rows, r, 6)));
		ShardLease *lease;

		while (i < nleases && leases[i].shard < shard)
			i++;
		if (i >= nleases || leases[i].shard != shard ||
			!lease_due(&leases[i], giving_back_all, now_ms))
			continue;
		lease = &leases[i];
		seen[i] = true;

		if (giving_back_all || !lease->wanted)
		{
			/* only a lease minters used: its end was published */
			if (!mine)
				continue;
			action[i] = 3;
			appendStringInfo(&upd_shards, "%s%d", upd_shards.len ? "," : "", shard);
			appendStringInfo(&upd_owners, "%sNULL", upd_owners.len ? "," : "");
			/* the last millisecond that can carry an ID of it */
			appendStringInfo(&upd_until, "%s" INT64_FORMAT, upd_until.len ? "," : "",
							 ms_to_unix_us(Min(last_ms, (int64) lease->end - 1)));
			appendStringInfo(&upd_take, "%sf", upd_take.len ? "," : "");
			continue;
		}

		if (mine)
		{
			if (lease->end > IDGEN_LEASE_NOT_HELD && until_ms < (int64) lease->end - 1)
				ereport(WARNING,
						(errmsg("the lease registry row of shard %d ends before what this server was granted",
								shard),
						 errdetail("Its valid_until was moved back by hand; this server renews it, and the next owner still starts above %s.",
								   timestamptz_to_str(idgen_ms_to_timestamptz(Max(stamped_ms, (int64) lease->end - 1))))));
			action[i] = 1;
			/* not yet established in this server's memory */
			floor[i] = lease->end <= IDGEN_LEASE_NOT_HELD ? previous_ms : -1;
		}
		else if (no_owner || never || until_us < registry_now_us)
		{
			/*
			 * A previous owner whose clock ran ahead: taking now would move
			 * this server's whole generator (every shard) ahead of its clock.
			 */
			/* whatever valid_until now says, the previous owner stamped up to here */
			int64		floor_ms = Max(until_ms, stamped_ms);

			if (floor_ms > registry_now_ms + idgen_max_lead)
			{
				if (!lease->warned)
					ereport(WARNING,
							(errmsg("shard %d was stamped up to %s, ahead of the lease registry's clock; this server takes its lease when that time comes",
									shard,
									timestamptz_to_str(idgen_ms_to_timestamptz(Min(floor_ms, idgen_max_ms()))))));
				lease->warned = true;
				publish_end(lease, IDGEN_LEASE_NOT_HELD);
				continue;
			}
			action[i] = 2;
			floor[i] = floor_ms;
		}
		else
		{
			if (!lease->warned)
				ereport(WARNING,
						(errmsg("shard %d is leased to another server until %s; this server does not mint for it",
								shard,
								until_us == PG_INT64_MAX ? "infinity" :
								timestamptz_to_str((TimestampTz) (until_us - IDGEN_POSTGRES_EPOCH_UNIX_US))),
						 errdetail("The lease registry names its owner \"%s\".",
								   PQgetisnull(rows, r, 2) ? "" : PQgetvalue(rows, r, 2)),
						 errhint("Give each server shards of its own in \"%s\" and \"%s\".",
								 "idgen.shard_id", "idgen.shard_ids")));
			lease->warned = true;
			publish_end(lease, IDGEN_LEASE_NOT_HELD);
			continue;
		}

		new_end[i] = Max(now_ms, floor[i] + 1) + idgen_lease_duration;
		/* a renewal never shortens what minters were told */
		if (lease->end > IDGEN_LEASE_NOT_HELD)
			new_end[i] = Max(new_end[i], (int64) lease->end);
		new_end[i] = Min(new_end[i], idgen_max_ms());
		appendStringInfo(&upd_shards, "%s%d", upd_shards.len ? "," : "", shard);
		appendStringInfo(&upd_owners, "%s%s", upd_owners.len ? "," : "",
						 lease_shared->owner);
		appendStringInfo(&upd_until, "%s" INT64_FORMAT, upd_until.len ? "," : "",
						 ms_to_unix_us(new_end[i] - 1));
		appendStringInfo(&upd_take, "%s%s", upd_take.len ? "," : "",
						 action[i] == 2 ? "t" : "f");
	}
	PQclear(rows);

	if (upd_shards.len > 0)
	{
		bool		gives_back = false;

		for (int i = 0; i < nleases; i++)
			gives_back |= action[i] == 3;
		/* lets the guard trigger lower stamped_until to what this server stamped */
		params[0] = lease_shared->owner;
		if (gives_back &&
			!registry_command(giving_back_sql, 1, params, deadline, &error))
			goto done;
		params[0] = psprintf("{%s}", upd_shards.data);
		params[1] = psprintf("{%s}", upd_owners.data);
		params[2] = psprintf("{%s}", upd_until.data);
		params[3] = owner_name;
		params[4] = psprintf("{%s}", upd_take.data);
		if (!registry_command(update_rows_sql, 5, params, deadline, &error))
			goto done;
	}
	rows = registry_exec("COMMIT", 0, NULL, deadline, &error);
	if (rows == NULL)
		goto done;
	if (strcmp(PQcmdStatus(rows), "COMMIT") != 0)
	{
		error = psprintf("the transaction ended in %s", PQcmdStatus(rows));
		PQclear(rows);
		registry_close();
		goto done;
	}
	PQclear(rows);
	ok = true;

	/* committed: establish, then minters may use what was taken or renewed */
	for (int i = 0; i < nleases; i++)
	{
		ShardLease *lease = &leases[i];

		if (action[i] == 1 || action[i] == 2)
		{
			bool		first = lease->end <= IDGEN_LEASE_NOT_HELD;

			establish(floor[i]);
			if (action[i] == 2 && floor[i] >= 0)
				ereport(LOG,
						(errmsg("idgen took the lease on shard %d", lease->shard),
						 errdetail("IDs of the shard start after %s, where the previous lease ended.",
								   timestamptz_to_str(idgen_ms_to_timestamptz(floor[i])))));
			else if (first)
				ereport(LOG,
						(errmsg("idgen holds the lease on shard %d", lease->shard)));
			publish_end(lease, (uint64) new_end[i]);
			lease->renewed_us = round_start_us;
			lease->warned = false;
		}
		else if (action[i] == 3)
			ereport(LOG,
					(errmsg("idgen gave back the lease on shard %d", lease->shard)));
	}

done:
	giving_back = false;
	if (!ok)
	{
		/* a failed give-back is always worth a line: the lease now expires */
		if (!registry_failing || giving_back_all)
			ereport(WARNING,
					(errmsg("could not renew shard leases in the idgen lease registry: %s",
							mask_secrets(error)),
					 giving_back_all ?
					 errdetail("The leases of this server were not given back; other servers take them once they end.") :
					 errdetail("Minting for a shard stops when its lease ends, %d ms after its last renewal, unless the registry is reached before.",
							   idgen_lease_duration),
					 errhint("Check \"%s\" and the registry server.",
							 "idgen.lease_registry")));
		registry_failing = true;
	}
	else
	{
		if (registry_failing)
			ereport(LOG,
					(errmsg("reached the idgen lease registry again")));
		registry_failing = false;
	}

	/* forget the leases no longer wanted that are settled */
	if (ok)
	{
		int			n = 0;

		for (int i = 0; i < nleases; i++)
			if (leases[i].wanted || !seen[i])
				leases[n++] = leases[i];
		nleases = n;
	}
	return ok;
}

static void
lease_worker_detach(int code, Datum arg)
{
	SpinLockAcquire(&lease_shared->mutex);
	lease_shared->worker_latch = NULL;
	SpinLockRelease(&lease_shared->mutex);
	registry_close();
}

/*
 * When the next exchange is due, in monotonic microseconds: the wall
 * clock's steps neither stretch nor shrink the rhythm (a lease renewed
 * every third of it, a retry every second).
 */
static int64
next_round_us(bool last_ok)
{
	int64		now = lease_now();
	int64		mono = monotonic_us();
	int64		retry = (int64) Min(1000, idgen_lease_duration / 10) * 1000;
	int64		next = RENEWAL_PERIOD_US;

	if (!last_ok)
		return mono + retry;
	for (int i = 0; i < nleases; i++)
	{
		if (!leases[i].wanted)
			return mono;
		if (leases[i].end <= IDGEN_LEASE_NOT_HELD)
			next = Min(next, retry);
		else
		{
			/*
			 * renew with two thirds of the lease left, or a renewal period
			 * after the last renewal; retry if that passed
			 */
			int64		renew = ((int64) leases[i].end -
								 2 * (int64) idgen_lease_duration / 3 - now) * 1000;

			renew = Min(renew, leases[i].renewed_us + RENEWAL_PERIOD_US - mono);
			next = Min(next, renew > 0 ? renew : retry);
		}
	}
	return mono + next;
}

void
idgen_lease_worker_main(Datum main_arg)
{
	bool		last_ok = true;
	int64		next_us;		/* monotonic, as every time below */
	int64		last_round_us = PG_INT64_MIN / 2;
	MemoryContext round_context;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	SpinLockAcquire(&lease_shared->mutex);
	lease_shared->worker_latch = MyLatch;
	SpinLockRelease(&lease_shared->mutex);
	before_shmem_exit(lease_worker_detach, 0);

	{
		char		host[256];

		if (gethostname(host, sizeof(host)) != 0)
			strlcpy(host, "?", sizeof(host));
		host[sizeof(host) - 1] = '\0';
		owner_name = MemoryContextStrdup(TopMemoryContext,
										 psprintf("%s port %d, system %llu, postmaster %d",
												  host, PostPortNumber,
												  (unsigned long long) GetSystemIdentifier(),
												  (int) getppid()));
	}
	round_context = AllocSetContextCreate(TopMemoryContext, "idgen lease round",
										  ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(TopMemoryContext);
	find_registry_secrets();
	refresh_wanted();
	next_us = monotonic_us();

	for (;;)
	{
		int64		now;
		bool		asked = false;

		if (ShutdownRequestPending)
		{
			/* a clean stop hands every lease back with its last ms */
			MemoryContextSwitchTo(round_context);
			(void) lease_round(true);
			MemoryContextSwitchTo(TopMemoryContext);

			/*
			 * Not 0: a worker stopped alone (pg_terminate_backend) must be
			 * started again; at shutdown the postmaster starts none.
			 */
			proc_exit(1);
		}
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			MemoryContextSwitchTo(TopMemoryContext);
			refresh_wanted();
			next_us = monotonic_us();
		}

		/* a minter waits: at once, but not more than every 100 ms */
		asked = pg_atomic_read_u32(&lease_shared->wanted) != 0;
		now = monotonic_us();
		if (now >= next_us || (asked && now - last_round_us >= 100 * 1000))
		{
			MemoryContext old = MemoryContextSwitchTo(round_context);

			pg_atomic_write_u32(&lease_shared->wanted, 0);
			last_ok = lease_round(false);
			MemoryContextSwitchTo(old);
			MemoryContextReset(round_context);
			last_round_us = now;
			next_us = next_round_us(last_ok);
		}
		else if (asked)
			next_us = Min(next_us, last_round_us + 100 * 1000);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(Min(ms_left(next_us), idgen_lease_duration), 1),
						 idgen_wait_event_info(IDGEN_WAIT_LEASE_WORKER_MAIN));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* ---- SQL ---- */

PG_FUNCTION_INFO_V1(idgen_leases);

/*
 * This server's lease on each shard it owns: no rows without a registry.
 * valid_until is the last millisecond this server may stamp.
 */
Datum
idgen_leases(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int32	   *shards;
	int			nshards;
	int64		now;

	idgen_check_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	if (!idgen_leases_on)
		PG_RETURN_VOID();

	nshards = idgen_owned_shards(&shards);
	now = lease_now();
	for (int i = 0; i < nshards; i++)
	{
		uint64		end = pg_atomic_read_u64(&lease_shared->ends[shards[i]]);
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = Int32GetDatum(shards[i]);
		if (end == IDGEN_LEASE_PENDING)
			values[1] = CStringGetTextDatum("pending");
		else if (end == IDGEN_LEASE_NOT_HELD)
			values[1] = CStringGetTextDatum("not held");
		else if ((int64) end <= now)
			values[1] = CStringGetTextDatum("expired");
		else
			values[1] = CStringGetTextDatum("held");
		if (end > IDGEN_LEASE_NOT_HELD)
			values[2] = TimestampTzGetDatum(idgen_ms_to_timestamptz((int64) end - 1));
		else
			nulls[2] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/* ---- start ---- */

void
idgen_lease_register(void)
{
	uint8		token[16];

	idgen_leases_on = idgen_lease_registry != NULL && idgen_lease_registry[0] != '\0';
	if (!idgen_leases_on)
		return;
	if (idgen_layout.shard_bits > MAX_LEASE_SHARD_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" needs \"%s\" of %d or fewer",
						"idgen.lease_registry", "idgen.shard_bits",
						MAX_LEASE_SHARD_BITS),
				 errhint("Leave \"%s\" empty, or use fewer shard bits.",
						 "idgen.lease_registry")));

	/* new at every start of the server, so a copy of it is another owner */
	if (!pg_strong_random(token, sizeof(token)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random lease owner token")));
	hex_encode((char *) token, sizeof(token), owner_token);
	owner_token[32] = '\0';

	/* only a primary mints, so only a primary holds leases */
	idgen_register_worker("idgen lease", "idgen_lease_worker_main");
}
