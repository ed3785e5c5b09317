/*-------------------------------------------------------------------------
 *
 * layout_stamp.c
 *		Each database's stamp of the layout history.
 *
 * The decoders decode by the server's history alone (layout_history.c).
 * A dump must still say which layouts its IDs were minted under, or a
 * server with another history would decode them wrong.  It does so by the
 * stamp: the history as text at the end of the extension's comment, which
 * pg_dump writes with default flags right after CREATE EXTENSION, before
 * any row.  Nothing of idgen is a table that schema tools or publications
 * would see.
 *
 * A database decodes and mints only when its stamp is the server's
 * history, version for version.  Otherwise (a restore from a server with
 * another history) every decoder and idgen_next() fail until
 * idgen_layout_adopt().  Two exceptions keep a layout change quiet: while
 * the "idgen stamps" worker has not stamped every database with a new
 * version yet (minting waits for it, so no ID of the version exists), and
 * on a standby (which replays the stamps before any such ID), a stamp that
 * is the history's first versions decodes by the history.
 *
 * A database still at 1.3 has no stamp but its table idgen_layout_versions:
 * its versions serve as the stamp, a prefix of the history being how 1.3
 * kept its own.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/layout_stamp.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/indexing.h"
#include "catalog/pg_description.h"
#include "catalog/pg_extension.h"
#include "commands/comment.h"
#include "commands/trigger.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "pgtime.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "idgen_compat.h"
#include "fence_gate.h"
#include "layout.h"
#include "layout_stamp.h"
#include "settings.h"
#include "wait_event.h"
#include "worker.h"


#define STAMP_CLOSE		"]"
#define COPY_COLUMNS	6

/* ---- The stamp's text ---- */

/* An instant as ISO 8601 in UTC, whatever DateStyle and TimeZone say. */
static void
append_instant(StringInfo buf, TimestampTz ts)
{
	struct pg_tm tm;
	fsec_t		fsec;

	if (timestamp2tm(ts, NULL, &tm, &fsec, NULL, NULL) != 0)
		elog(ERROR, "layout epoch out of range");
	appendStringInfo(buf, "%04d-%02d-%02dT%02d:%02d:%02d",
					 tm.tm_year, tm.tm_mon, tm.tm_mday,
					 tm.tm_hour, tm.tm_min, tm.tm_sec);
	if (fsec != 0)
		appendStringInfo(buf, ".%06d", (int) fsec);
	appendStringInfoChar(buf, 'Z');
}

/* "0 12/10 2026-01-01T00:00:00Z, ...": first ID, widths, epoch. */
void
idgen_stamp_format(StringInfo buf, const IdgenLayoutHistory *h)
{
	for (int i = 0; i < h->nversions; i++)
	{
		const IdgenLayoutVersion *v = &h->versions[i];

		if (i > 0)
			appendStringInfoString(buf, ", ");
		appendStringInfo(buf, UINT64_FORMAT " %d/%d ", v->first_id,
						 v->layout.shard_bits, v->layout.sequence_bits);
		append_instant(buf, v->layout.epoch);
	}
}

static bool
parse_instant(const char **p, TimestampTz *ts)
{
	struct pg_tm tm = {0};
	int			usec = 0;
	int			n = 0;
	const char *s = *p;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
			   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
		return false;
	s += n;
	if (*s == '.')
	{
		n = 0;
		if (sscanf(s, ".%6d%n", &usec, &n) != 1 || n != 7)
			return false;
		s += n;
	}
	if (*s++ != 'Z')
		return false;
	if (tm2timestamp(&tm, usec, NULL, ts) != 0)
		return false;
	*p = s;
	return true;
}

/* The versions of a stamp's text; false where it is not one. */
bool
idgen_stamp_parse(const char *text, IdgenLayoutHistory *h)
{
	const char *p = text;

	memset(h, 0, sizeof(*h));
	while (*p != '\0')
	{
		IdgenLayoutVersion *v;
		char	   *end;
		long		shard_bits;
		long		sequence_bits;

		if (h->nversions >= IDGEN_MAX_LAYOUT_VERSIONS)
			return false;
		v = &h->versions[h->nversions++];
		if (!isdigit((unsigned char) *p))
			return false;
		errno = 0;
		v->first_id = strtoull(p, &end, 10);
		if (errno != 0 || *end != ' ')
			return false;
		shard_bits = strtol(end + 1, &end, 10);
		if (*end != '/')
			return false;
		sequence_bits = strtol(end + 1, &end, 10);
		if (*end != ' ' || shard_bits < 0 || shard_bits > 63 ||
			sequence_bits < 0 || sequence_bits > 63)
			return false;
		v->layout.shard_bits = (int32) shard_bits;
		v->layout.sequence_bits = (int32) sequence_bits;
		p = end + 1;
		if (!parse_instant(&p, &v->layout.epoch))
			return false;
		if (*p == ',' && p[1] == ' ')
			p += 2;
		else if (*p != '\0')
			return false;
	}
	return h->nversions > 0 && idgen_history_check(h);
}

IdgenStampMatch
idgen_stamp_match(const IdgenLayoutHistory *stamp, const IdgenLayoutHistory *server)
{
	if (stamp->nversions > server->nversions)
		return IDGEN_STAMP_OTHER;
	for (int i = 0; i < stamp->nversions; i++)
		if (!idgen_version_equal(&stamp->versions[i], &server->versions[i]))
			return IDGEN_STAMP_OTHER;
	return stamp->nversions == server->nversions ? IDGEN_STAMP_SAME : IDGEN_STAMP_PREFIX;
}

/*
 * A stamp of this server's own: its history, or the history last stamped
 * everywhere that the stamps worker has yet to extend.  Any other stamp
 * came from elsewhere and must keep refusing.
 */
bool
idgen_stamp_is_own(const IdgenLayoutHistory *stamp, const IdgenLayoutHistory *server)
{
	IdgenLayoutHistory done;

	switch (idgen_stamp_match(stamp, server))
	{
		case IDGEN_STAMP_SAME:
			return true;
		case IDGEN_STAMP_PREFIX:
			return idgen_stamps_done_history(&done) &&
				idgen_stamp_match(stamp, &done) == IDGEN_STAMP_SAME;
		case IDGEN_STAMP_OTHER:
			break;
	}
	return false;
}

/* ---- Whether every database is stamped: shared memory ---- */

typedef struct IdgenStampsShared
{
	slock_t		mutex;
	IdgenLayoutHistory done;	/* last stamped everywhere; nversions 0: none */
	pg_atomic_uint64 done_key;	/* idgen_history_key(&done), 0 for none */
	pg_atomic_uint32 last_database;	/* the last one the worker stamped */
	pg_atomic_uint32 begun;		/* the fence worker has recorded the history */
	pg_atomic_uint64 shards_visit;	/* visits asked << 1 | the last one done */
	pg_atomic_uint32 lanes_named;	/* a visit has been done since the start */
	pg_atomic_uint64 shards_key;	/* which shards, as idgen_stamps_shards_changed saw them */
	ConditionVariable cv;		/* broadcast when done or lanes_named change */
} IdgenStampsShared;

static IdgenStampsShared *stamps_shared = NULL;

/* Which shards this server mints on, as a number. */
static uint64
shards_key(void)
{
	IdgenStampShards server;

	idgen_stamp_shards_server(&server);
	return hash_bytes_extended((const unsigned char *) &server, sizeof(server), 0);
}

Size
idgen_stamps_shmem_size(void)
{
	return MAXALIGN(sizeof(IdgenStampsShared));
}

void
idgen_stamps_shmem_attach(void)
{
	bool		found;

	stamps_shared = ShmemInitStruct("idgen stamps", sizeof(IdgenStampsShared), &found);
	if (!found)
	{
		SpinLockInit(&stamps_shared->mutex);
		memset(&stamps_shared->done, 0, sizeof(stamps_shared->done));
		pg_atomic_init_u64(&stamps_shared->done_key, 0);
		pg_atomic_init_u32(&stamps_shared->last_database, InvalidOid);
		pg_atomic_init_u32(&stamps_shared->begun, 0);
		/* known only once the worker has visited every database */
		pg_atomic_init_u64(&stamps_shared->shards_visit, 0);
		pg_atomic_init_u32(&stamps_shared->lanes_named, 0);
		pg_atomic_init_u64(&stamps_shared->shards_key, 0);
		ConditionVariableInit(&stamps_shared->cv);
	}
}

/* Which versions a history has, as a number: never 0. */
uint64
idgen_history_key(const IdgenLayoutHistory *h)
{
	uint64		key;

	key = hash_bytes_extended((const unsigned char *) h->versions,
							  h->nversions * sizeof(IdgenLayoutVersion),
							  (uint64) h->nversions);
	return key == 0 ? 1 : key;
}

bool
idgen_stamps_pending(const IdgenLayoutHistory *h)
{
	return pg_atomic_read_u64(&stamps_shared->done_key) != idgen_history_key(h);
}

/* Every database is stamped with h: from the worker, replay or the file. */
void
idgen_stamps_done(const IdgenLayoutHistory *h)
{
	SpinLockAcquire(&stamps_shared->mutex);
	stamps_shared->done = *h;
	SpinLockRelease(&stamps_shared->mutex);
	pg_atomic_write_u64(&stamps_shared->done_key, idgen_history_key(h));
	/* the postmaster reading the file at a start has no PGPROC, nor waiters */
	if (MyProc != NULL)
		ConditionVariableBroadcast(&stamps_shared->cv);
}

/* The history last stamped everywhere; false where none is known. */
bool
idgen_stamps_done_history(IdgenLayoutHistory *h)
{
	SpinLockAcquire(&stamps_shared->mutex);
	*h = stamps_shared->done;
	SpinLockRelease(&stamps_shared->mutex);
	return h->nversions > 0;
}

/*
 * Every stamp is to name this server's shards: another visit of every
 * database, however far the one under way has gone.  The visit asked for.
 */
uint64
idgen_stamps_shards_ask(void)
{
	uint64		state = pg_atomic_read_u64(&stamps_shared->shards_visit);

	while (!pg_atomic_compare_exchange_u64(&stamps_shared->shards_visit, &state,
										   ((state >> 1) + 1) << 1))
		;
	return (state >> 1) + 1;
}

/*
 * At the fence worker's start and after a reload: a live shard added is
 * named in every database by another visit.
 */
void
idgen_stamps_shards_changed(void)
{
	uint64		key = shards_key();

	if (pg_atomic_exchange_u64(&stamps_shared->shards_key, key) != key)
		(void) idgen_stamps_shards_ask();
}

bool
idgen_stamps_shards_pending(void)
{
	return (pg_atomic_read_u64(&stamps_shared->shards_visit) & 1) == 0;
}

/* The visit the lister starts on: done only if none was asked meanwhile. */
uint64
idgen_stamps_shards_visit_begins(void)
{
	return pg_atomic_read_u64(&stamps_shared->shards_visit) & ~(uint64) 1;
}

void
idgen_stamps_shards_visited(uint64 begun)
{
	/* this server's lanes change only at a start: named by any visit */
	pg_atomic_write_u32(&stamps_shared->lanes_named, 1);
	(void) pg_atomic_compare_exchange_u64(&stamps_shared->shards_visit, &begun, begun | 1);
	ConditionVariableBroadcast(&stamps_shared->cv);
}

bool
idgen_stamps_lanes_pending(void)
{
	return pg_atomic_read_u32(&stamps_shared->lanes_named) == 0;
}

void
idgen_stamps_begun(void)
{
	pg_atomic_write_u32(&stamps_shared->begun, 1);
}

void
idgen_stamps_set_last_database(Oid dboid)
{
	pg_atomic_write_u32(&stamps_shared->last_database, dboid);
}

Oid
idgen_stamps_last_database(void)
{
	return pg_atomic_read_u32(&stamps_shared->last_database);
}

/* ---- This database's stamp ---- */

/* The extension in this database; false where it is not installed. */
bool
idgen_extension_here(IdgenExtensionHere *ext)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		found = false;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("idgen"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		Form_pg_extension form = (Form_pg_extension) GETSTRUCT(tuple);
		bool		isnull;
		Datum		d = heap_getattr(tuple, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);
		char	   *version = isnull ? "" : TextDatumGetCString(d);

		ext->oid = form->oid;
		ext->schema = form->extnamespace;
		ext->minor = strncmp(version, "1.", 2) == 0 ? atoi(version + 2) : 99;
		found = true;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/* Where the stamp begins in a comment, or NULL. */
static const char *
stamp_in(const char *comment)
{
	const char *open = NULL;
	const char *p = comment;

	/* the last one: a description may quote an older stamp */
	while ((p = strstr(p, IDGEN_STAMP_OPEN)) != NULL)
		open = p++;
	if (open == NULL || comment[strlen(comment) - 1] != STAMP_CLOSE[0])
		return NULL;
	return open;
}

/* A comment's stamp; false where it has none or it does not parse. */
bool
idgen_comment_stamp(const char *comment, IdgenLayoutHistory *stamp, bool *malformed)
{
	const char *open;
	char	   *text;
	bool		ok;

	*malformed = false;
	if (comment == NULL || (open = stamp_in(comment)) == NULL)
		return false;
	text = pstrdup(open + strlen(IDGEN_STAMP_OPEN));
	text[strlen(text) - 1] = '\0';
	ok = idgen_stamp_parse(text, stamp);
	*malformed = !ok;
	pfree(text);
	return ok;
}

/* The description without its stamp, the shards' part included. */
char *
idgen_comment_text(const char *comment)
{
	const char *open;
	IdgenStampShards shards;

	if (comment == NULL)
		return pstrdup("");
	open = stamp_in(comment);
	if (open == NULL)
		return pstrdup(comment);
	open = idgen_stamp_shards_in(comment, open, &shards);
	return pnstrdup(comment, open - comment);
}

/* The shards a comment's stamp names: any, where it has no stamp. */
void
idgen_comment_shards(const char *comment, IdgenStampShards *shards)
{
	const char *open = comment ? stamp_in(comment) : NULL;

	if (open == NULL)
		idgen_stamp_shards_any(shards);
	else
		(void) idgen_stamp_shards_in(comment, open, shards);
}

void
idgen_stamp_changed(void)
{
	/* heard by every process of the database at commit */
	CacheInvalidateRelcacheByRelid(DescriptionRelationId);
}

idgen_noreturn static void
copy_damaged(const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("table \"%s\" is not a layout history", IDGEN_COPY_TABLE),
			 errdetail("%s", why),
			 errhint("Its rows must be versions 1, 2, ... with rising first IDs, as idgen 1.3 wrote them.")));
}

/*
 * The versions of 1.3's table.  Read with a catalog snapshot: the decoders
 * may run where no statement snapshot is set.
 */
void
idgen_read_copy(Oid relid, IdgenLayoutHistory *copy)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tuple;
	bool		seen[IDGEN_MAX_LAYOUT_VERSIONS] = {0};
	int			rows = 0;

	memset(copy, 0, sizeof(*copy));
	rel = table_open(relid, AccessShareLock);
	if (RelationGetDescr(rel)->natts != COPY_COLUMNS)
		copy_damaged("It does not have the six columns of idgen 1.3.");
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tuple = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Datum		values[COPY_COLUMNS];
		bool		nulls[COPY_COLUMNS];
		int32		version;
		IdgenLayoutVersion *v;

		heap_deform_tuple(tuple, RelationGetDescr(rel), values, nulls);
		for (int i = 0; i < COPY_COLUMNS - 1; i++)
			if (nulls[i])
				copy_damaged("A row has a NULL.");
		version = DatumGetInt32(values[0]);
		if (version < 1 || version > IDGEN_MAX_LAYOUT_VERSIONS || seen[version - 1])
			copy_damaged("A version is out of range or repeated.");
		seen[version - 1] = true;
		rows++;
		v = &copy->versions[version - 1];
		v->layout.epoch = DatumGetTimestampTz(values[1]);
		v->layout.shard_bits = DatumGetInt32(values[2]);
		v->layout.sequence_bits = DatumGetInt32(values[3]);
		v->first_id = (uint64) DatumGetInt64(values[4]);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);

	copy->nversions = rows;
	for (int i = 0; i < rows; i++)
		if (!seen[i])
			copy_damaged("A version is missing.");
	if (rows > 0 && !idgen_history_check(copy))
		copy_damaged("The first IDs do not rise from 0, or a layout is impossible.");
}

/* What a database has in place of a stamp. */
typedef enum StampKind
{
	KIND_NONE,					/* no extension, or 1.0 to 1.2: no history */
	KIND_COPY,					/* 1.3's table */
	KIND_STAMP,					/* 1.4 and later: the comment's */
	KIND_MISSING				/* 1.4 and later without one */
} StampKind;

typedef enum Verdict
{
	VERDICT_AGREE,				/* decode, and mint */
	VERDICT_BEHIND,				/* decode only while the stamping runs */
	VERDICT_REFUSE
} Verdict;

static struct
{
	bool		valid;
	bool		callback_registered;
	uint64		generation;		/* moved by every invalidation */
	uint32		server_changes;
	StampKind	kind;
	IdgenStampMatch match;
	Verdict		verdict;
	IdgenLayoutHistory stamp;
	IdgenStampShards shards;	/* what a stamp names; any otherwise */
} here;

static StampKind
read_stamp(IdgenLayoutHistory *stamp, Oid *extoid)
{
	IdgenExtensionHere ext;
	char	   *comment;
	bool		malformed;

	memset(stamp, 0, sizeof(*stamp));
	idgen_stamp_shards_any(&here.shards);
	*extoid = InvalidOid;
	if (!idgen_extension_here(&ext) || ext.minor < 3)
		return KIND_NONE;
	*extoid = ext.oid;
	if (ext.minor == 3)
	{
		Oid			relid = get_relname_relid(IDGEN_COPY_TABLE, ext.schema);

		if (!OidIsValid(relid))
			return KIND_NONE;
		idgen_read_copy(relid, stamp);
		return KIND_COPY;
	}
	comment = GetComment(ext.oid, ExtensionRelationId, 0);
	if (idgen_comment_stamp(comment, stamp, &malformed))
	{
		idgen_comment_shards(comment, &here.shards);
		return KIND_STAMP;
	}
	return KIND_MISSING;
}

/* ---- What this process decodes and mints by ---- */

const IdgenLayoutHistory *idgen_decoding_effective = NULL;
uint32		idgen_decoding_server_changes = 0;
bool		idgen_database_mints = false;
uint32		idgen_database_mints_changes = 0;
bool		idgen_database_names_lanes = false;

static void
stamp_invalidated(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == DescriptionRelationId ||
		relid == ExtensionRelationId || here.kind == KIND_COPY)
	{
		here.valid = false;
		here.generation++;
		idgen_decoding_effective = NULL;
		idgen_database_mints = false;
		idgen_database_names_lanes = false;
	}
}

static void
refresh(void)
{
	uint32		changes;
	const IdgenLayoutHistory *server = idgen_server_history(&changes);
	uint64		generation;
	Oid			extoid;

	if (!here.callback_registered)
	{
		CacheRegisterRelcacheCallback(stamp_invalidated, (Datum) 0);
		here.callback_registered = true;
	}
	here.valid = false;
	idgen_decoding_effective = NULL;
	idgen_database_mints = false;
	idgen_database_names_lanes = false;
	generation = here.generation;

	here.kind = read_stamp(&here.stamp, &extoid);
	here.match = idgen_stamp_match(&here.stamp, server);
	if (here.kind == KIND_NONE)
		here.verdict = VERDICT_AGREE;
	else if (here.kind == KIND_COPY)
		/* 1.3 kept its own table a prefix of the history */
		here.verdict = here.match == IDGEN_STAMP_OTHER ? VERDICT_REFUSE : VERDICT_AGREE;
	else if (here.match == IDGEN_STAMP_SAME)
		here.verdict = VERDICT_AGREE;
	else if (here.match == IDGEN_STAMP_PREFIX)
		here.verdict = VERDICT_BEHIND;
	else
		here.verdict = VERDICT_REFUSE;
	here.server_changes = changes;
	if (here.generation == generation)
	{
		here.valid = true;
		if (here.verdict == VERDICT_AGREE)
		{
			idgen_decoding_server_changes = changes;
			idgen_decoding_effective = server;
		}
	}
}

idgen_noreturn static void
refuse(void)
{
	StringInfoData stamp;
	StringInfoData server;

	initStringInfo(&stamp);
	initStringInfo(&server);
	if (here.stamp.nversions > 0)
		idgen_stamp_format(&stamp, &here.stamp);
	else
		appendStringInfoString(&stamp, "none");
	idgen_stamp_format(&server, idgen_server_history(NULL));

	if (here.kind == KIND_COPY)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this database's layout history does not match the server's"),
				 errdetail("Its table %s (idgen 1.3) lists %s; the server's history is %s.",
						   IDGEN_COPY_TABLE, stamp.data, server.data),
				 errhint("It was restored from a server with another layout history, which idgen no longer follows per database: restore it into a server with that history, or run ALTER EXTENSION idgen UPDATE and then, if every ID in it was minted under this server's layouts, SELECT idgen_layout_adopt().")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("this database's layout history does not match the server's"),
			 errdetail("Its IDs were minted under %s; the server's history is %s.",
					   stamp.data, server.data),
			 here.match == IDGEN_STAMP_OTHER ?
			 errhint("It was restored from a server with another layout history: restore it into a server with that history (its idgen.layouts file), or, if every ID in it was minted under this server's layouts, run SELECT idgen_layout_adopt().") :
			 errhint("It was restored from a dump made before a layout change, or has no stamp: if every ID in it was minted under this server's layouts (a dump of this server, not of a copy of it), run SELECT idgen_layout_adopt().")));
}

/*
 * The history the decoders use here: the server's, where the stamp agrees.
 * Outside a transaction (no catalog can be read), the server's.
 */
const IdgenLayoutHistory *
idgen_decoding_history_slow(void)
{
	const IdgenLayoutHistory *server;
	IdgenLayoutHistory done;

	if (!IsTransactionState())
		return idgen_server_history(NULL);
	/* the history compared is the one returned */
	while (!here.valid || idgen_server_history_changed(here.server_changes))
		refresh();
	server = idgen_server_history(NULL);
	if (here.verdict == VERDICT_AGREE)
		return server;

	/*
	 * A stamp that is the history last stamped everywhere, while the worker
	 * has not stamped the newer versions yet: this server's own database,
	 * which holds no ID of them yet (minting waits for the worker; a standby
	 * replays the stamps before any such ID).  Any other stamp of fewer
	 * versions came from elsewhere, and a copy of this server that kept
	 * minting under the old layout would decode wrong.
	 */
	if (here.verdict == VERDICT_BEHIND && idgen_stamps_pending(server) &&
		(here.kind == KIND_MISSING ||
		 (idgen_stamps_done_history(&done) &&
		  idgen_stamp_match(&here.stamp, &done) == IDGEN_STAMP_SAME)))
		return server;
	refuse();
	pg_unreachable();
}

const IdgenLayoutHistory *
idgen_database_stamp_if_any(void)
{
	if (!IsTransactionState())
		return NULL;
	if (!here.valid || idgen_server_history_changed(here.server_changes))
		refresh();
	return here.kind == KIND_NONE ? NULL : &here.stamp;
}

/*
 * Whether every database is stamped with the server's history as it is
 * now, and *arg the history's count of changes when it was read.
 */
static IdgenAwait
stamps_reached(void *arg)
{
	if (idgen_stamps_pending(idgen_server_history((uint32 *) arg)))
		return IDGEN_AWAIT_MORE;
	return IDGEN_AWAIT_DONE;
}

/*
 * A mint here needs the stamp to be the history, and every database's to
 * be: an ID of a version stored in a database whose stamp lacked it would
 * travel in its dump under the wrong history.  After a change, minting
 * waits for the stamps worker, up to idgen.max_wait.
 */
void
idgen_check_database_mints_slow(void)
{
	uint32		changes = 0;

	idgen_check_preloaded();
	/* a standby mints nothing, and says so itself */
	if (RecoveryInProgress())
		return;
	if (!idgen_worker_await(&stamps_shared->cv, stamps_reached, &changes, NULL,
							(int64) idgen_max_wait * 1000,
							IDGEN_WAIT_STAMPS))
	{
		/* the fence worker has not even recorded the history: its error */
		if (pg_atomic_read_u32(&stamps_shared->begun) == 0)
			idgen_fence_error();
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen has not yet stamped every database with its layout history"),
				 errdetail("Minting waits for it after a start that changed the history, so that no database holds IDs its stamp does not list."),
				 errhint("See the log of the \"idgen stamps\" worker: it needs a free background worker slot (\"max_worker_processes\") and a connection to each database.")));
	}
	if (!here.valid || idgen_server_history_changed(here.server_changes))
		refresh();
	/* 1.3's table must be the whole history, or its dumps would lack a version */
	if (here.kind == KIND_COPY && here.match == IDGEN_STAMP_PREFIX)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this database's idgen 1.3 layout table lacks the server's newer layout versions"),
				 errhint("Run ALTER EXTENSION idgen UPDATE in it.")));
	if (here.kind != KIND_NONE && here.match != IDGEN_STAMP_SAME)
		refuse();
	if (here.valid)
	{
		IdgenStampShards server;

		/* one the stamps worker has not named this server's shards in yet */
		idgen_stamp_shards_server(&server);
		if (here.kind == KIND_STAMP && !idgen_stamp_shards_covers(&here.shards, &server))
		{
			(void) idgen_stamps_shards_ask();
			idgen_fence_wake_worker();
		}
		idgen_database_mints_changes = changes;
		idgen_database_mints = true;
	}
}

/* The first visit since the start is done, and *arg the one asked (0: none). */
static IdgenAwait
lanes_reached(void *arg)
{
	uint64		asked = *(uint64 *) arg;
	uint64		state = pg_atomic_read_u64(&stamps_shared->shards_visit);

	if (idgen_stamps_lanes_pending())
		return IDGEN_AWAIT_MORE;
	if (asked > 0 && ((state & 1) == 0 || (state >> 1) < asked))
		return IDGEN_AWAIT_MORE;
	return IDGEN_AWAIT_DONE;
}

/*
 * A lane mints into a database only once its stamp names the lane, and
 * every database's does (an ID may be stored in another database than the
 * one that minted it): after a start, the stamps worker's visit.  One it
 * missed (created during the visit, or from a template it could not
 * enter) asks for another.
 */
void
idgen_check_lanes_named_slow(void)
{
	IdgenStampShards lanes;
	uint64		asked = 0;

	if (RecoveryInProgress())
		return;
	idgen_stamp_shards_lanes(&lanes);
	for (int ask = 0; ask < 2; ask++)
	{
		if (!idgen_worker_await(&stamps_shared->cv, lanes_reached, &asked,
								idgen_fence_wake_worker,
								(int64) idgen_max_wait * 1000,
								IDGEN_WAIT_STAMPS))
		{
			if (pg_atomic_read_u32(&stamps_shared->begun) == 0)
				idgen_fence_error();
			break;
		}
		/* the worker's write, heard inside this transaction too */
		AcceptInvalidationMessages();
		if (!here.valid)
			refresh();
		if (here.kind != KIND_STAMP || idgen_stamp_shards_covers(&here.shards, &lanes))
		{
			idgen_database_names_lanes = here.valid;
			return;
		}
		asked = idgen_stamps_shards_ask();
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("idgen has not yet named this server's backfill lanes in every database's stamp"),
			 errdetail("After a start, minting for a given time waits until every database's stamp names the lanes, so that a dump says which lanes' IDs it may hold."),
			 errhint("See the log of the \"idgen stamps\" worker: it needs a free background worker slot (\"max_worker_processes\") and a connection to each database.")));
}
