/*-------------------------------------------------------------------------
 *
 * layout_versions.c
 *		Each database's copy of the layout history.
 *
 * The server's history (layout_history.c) lives in its data directory; a
 * dump does not carry it, and a database restored into another server would
 * decode its old IDs by that server's history.  So every database with the
 * extension keeps a copy in the table idgen_layout_versions, an extension
 * configuration table (pg_dump dumps its rows), and the decoders use the
 * two together:
 *
 *	- the copy is the start of the server's history (the same server, a
 *	  version not copied yet), or empty: the server's history;
 *	- otherwise the copy came from elsewhere (a restore): the copy, followed
 *	  by the versions the server began after the last version of the copy's
 *	  layout, each above the copy's last first ID;
 *	- when the server never minted under the copy's last layout, no history
 *	  can tell which of the database's IDs are the server's: every decoder
 *	  fails, with the hint to run idgen_layout_adopt().
 *
 * The copy is written by idgen_layout_record(): at CREATE EXTENSION, by the
 * "idgen layouts" worker in every database after a start that began a
 * version, and by hand.  A row restored over a different row of the same
 * version (a dump of another server's history) replaces it and every later
 * one, in the table's trigger.
 *
 * Each process keeps the history it decodes by until the table or the
 * server's history changes: the table's statement trigger invalidates its
 * relcache entry, which every process hears of.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/layout_versions.c
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
#include "catalog/indexing.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "layout_versions.h"

PG_FUNCTION_INFO_V1(idgen_layout_versions_restore);

/* The table's rows: a history, and the history id of each version's origin. */
typedef struct DatabaseCopy
{
	IdgenLayoutHistory h;		/* h.id unused */
	uint64		origin[IDGEN_MAX_LAYOUT_VERSIONS];
} DatabaseCopy;

#define COPY_COLUMNS	6

static bool add_marker(Oid relid, DatabaseCopy *copy,
					   const IdgenLayoutHistory *server,
					   const IdgenLayoutVersion *here);

/* idgen_layout_record() and idgen_layout_adopt() are writing the table */
static bool recording = false;

/* What a process decodes by, and what it was derived from. */
static struct
{
	bool		valid;
	bool		agree;			/* the copy and the server's history agree */
	bool		callback_registered;
	uint64		generation;		/* moved by every invalidation */
	uint32		server_changes;
	Oid			relid;			/* the table, InvalidOid when none */
	DatabaseCopy copy;
	IdgenLayoutHistory effective;
} decoding;

bool		idgen_database_history_ok = false;

/* set only while valid and agreeing: the inline fast path's */
const IdgenLayoutHistory *idgen_decoding_effective = NULL;
uint32		idgen_decoding_server_changes = 0;

static void
versions_invalidated(Datum arg, Oid relid)
{
	/* with no table yet, any relation may be the new one */
	if (relid == InvalidOid || relid == decoding.relid ||
		!OidIsValid(decoding.relid))
	{
		decoding.valid = false;
		decoding.generation++;
		idgen_database_history_ok = false;
		idgen_decoding_effective = NULL;
	}
}

/* The extension's schema, as get_extension_schema() (static before 16). */
static Oid
versions_relid(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			schema = InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("idgen"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		schema = ((Form_pg_extension) GETSTRUCT(tuple))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (!OidIsValid(schema))
		return InvalidOid;
	return get_relname_relid(IDGEN_VERSIONS_TABLE, schema);
}

static void
copy_damaged(const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("table \"%s\" is not a layout history", IDGEN_VERSIONS_TABLE),
			 errdetail("%s", why),
			 errhint("Its rows are versions 1, 2, ... with rising first IDs; restore them from a dump, or delete them all and run SELECT idgen_layout_record().")));
}

/*
 * The table's rows, by version.  Read with a catalog snapshot: the decoders
 * may run where no statement snapshot is set, and a change to the table is
 * committed before its invalidation is heard.
 */
static void
read_copy(Oid relid, DatabaseCopy *copy)
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
		for (int i = 0; i < COPY_COLUMNS; i++)
			if (nulls[i])
				copy_damaged("A row has a NULL.");
		version = DatumGetInt32(values[0]);
		if (version < 1 || version > IDGEN_MAX_LAYOUT_VERSIONS || seen[version - 1])
			copy_damaged("A version is out of range or repeated.");
		seen[version - 1] = true;
		rows++;
		v = &copy->h.versions[version - 1];
		v->epoch = DatumGetTimestampTz(values[1]);
		v->shard_bits = DatumGetInt32(values[2]);
		v->sequence_bits = DatumGetInt32(values[3]);
		v->first_id = (uint64) DatumGetInt64(values[4]);
		copy->origin[version - 1] = (uint64) DatumGetInt64(values[5]);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);

	copy->h.nversions = rows;
	for (int i = 0; i < rows; i++)
		if (!seen[i])
			copy_damaged("A version is missing.");
	if (rows > 0 && !idgen_history_check(&copy->h))
		copy_damaged("The first IDs do not rise from 0, or a layout is impossible.");
}

/*
 * The history this database decodes by; false when none can be told.
 *
 * The copy's last version must be one this server began (its history id):
 * its own versions, a marker a restore or idgen_layout_adopt() left where
 * this server began minting in the database, with the layout the server
 * was at there.  The server's versions after that point follow.  A copy
 * whose last version another server began (a restore into a server with
 * another layout, not adopted yet) cannot tell its IDs from this server's;
 * neither can a copy this server began that does not match what it minted
 * (a server whose own history was lost, with a new id, included).
 */
static bool
merge(const DatabaseCopy *copy, const IdgenLayoutHistory *server,
	  IdgenLayoutHistory *out)
{
	int			n = copy->h.nversions;
	const IdgenLayoutVersion *last;
	const IdgenLayoutVersion *in_force;
	int			version;

	if (n == 0)
	{
		*out = *server;
		return true;
	}
	last = &copy->h.versions[n - 1];
	if (copy->origin[n - 1] != server->id)
		return false;
	in_force = idgen_history_version_of_id(server, (int64) last->first_id, &version);
	if (!idgen_same_layout(in_force, last))
		return false;
	*out = copy->h;
	out->id = server->id;
	out->flags = 0;
	for (int k = version; k < server->nversions; k++)
	{
		if (out->nversions >= IDGEN_MAX_LAYOUT_VERSIONS)
			return false;
		out->versions[out->nversions++] = server->versions[k];
	}
	return true;
}

/*
 * Derive again what this process decodes by.  Kept valid only when nothing
 * failed and no invalidation came meanwhile: an error half-way leaves it
 * to be derived again at the next call.
 */
static void
refresh(void)
{
	uint32		changes;
	const IdgenLayoutHistory *server = idgen_server_history(&changes);
	uint64		generation;
	Oid			relid;

	if (!decoding.callback_registered)
	{
		CacheRegisterRelcacheCallback(versions_invalidated, (Datum) 0);
		decoding.callback_registered = true;
	}
	decoding.valid = false;
	idgen_database_history_ok = false;
	idgen_decoding_effective = NULL;
	generation = decoding.generation;
	relid = versions_relid();
	decoding.relid = relid;
	if (OidIsValid(relid))
		read_copy(relid, &decoding.copy);
	else
		memset(&decoding.copy, 0, sizeof(decoding.copy));
	decoding.agree = merge(&decoding.copy, server, &decoding.effective);
	decoding.server_changes = changes;
	if (decoding.generation == generation)
	{
		decoding.valid = true;
		idgen_database_history_ok = decoding.agree;
		if (decoding.agree)
		{
			idgen_decoding_server_changes = changes;
			idgen_decoding_effective = &decoding.effective;
		}
	}
}

static void
disagree_error(void)
{
	const DatabaseCopy *copy = &decoding.copy;
	const IdgenLayoutVersion *last = &copy->h.versions[Max(copy->h.nversions, 1) - 1];

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("this database's layout history does not match the server's"),
			 errdetail("The database's last version (%d, epoch %s, shard_bits %d, sequence_bits %d) was not begun by this server: its IDs could not be told from this server's.",
					   copy->h.nversions, timestamptz_to_str(last->epoch),
					   last->shard_bits, last->sequence_bits),
			 errhint("The database was restored from a server with another layout. Run SELECT idgen_layout_adopt(N), N the largest ID of any table of the database (as the server it was dumped from has it, if its tables could not be restored here), so that this server's IDs begin above it as a version of its own.")));
}

static const IdgenLayoutHistory *
decoding_history(bool error_if_disagree)
{
	if (unlikely(!decoding.valid ||
				 idgen_server_history_changed(decoding.server_changes)))
	{
		if (!IsTransactionState())
			return idgen_server_history(NULL);
		refresh();
	}
	if (unlikely(!decoding.agree))
	{
		if (error_if_disagree)
			disagree_error();
		return NULL;
	}
	return &decoding.effective;
}

/*
 * The history the decoders use in this database.  Outside a transaction
 * (no table can be read), the server's.
 */
const IdgenLayoutHistory *
idgen_decoding_history_slow(void)
{
	return decoding_history(true);
}

/* The same, or NULL where the copy and the server's history disagree. */
const IdgenLayoutHistory *
idgen_decoding_history_if_any(void)
{
	return decoding_history(false);
}

static Oid
versions_relid_or_error(void)
{
	Oid			relid = versions_relid();

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table \"%s\" does not exist", IDGEN_VERSIONS_TABLE),
				 errhint("Run ALTER EXTENSION idgen UPDATE: the table comes with idgen 1.3.")));
	return relid;
}

/*
 * Insert versions from, to - 1 of a history into the table, as begun by
 * history id origin, through SPI.
 */
static void
insert_versions(Oid relid, const IdgenLayoutHistory *h, int from, int to,
				uint64 origin)
{
	char	   *sql;
	Oid			types[COPY_COLUMNS] = {INT4OID, TIMESTAMPTZOID, INT4OID, INT4OID, INT8OID, INT8OID};

	sql = psprintf("INSERT INTO %s.%s VALUES ($1, $2, $3, $4, $5, $6)",
				   quote_identifier(get_namespace_name(get_rel_namespace(relid))),
				   quote_identifier(IDGEN_VERSIONS_TABLE));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	recording = true;
	PG_TRY();
	{
		for (int i = from; i < to; i++)
		{
			const IdgenLayoutVersion *v = &h->versions[i];
			Datum		values[COPY_COLUMNS];

			values[0] = Int32GetDatum(i + 1);
			values[1] = TimestampTzGetDatum(v->epoch);
			values[2] = Int32GetDatum(v->shard_bits);
			values[3] = Int32GetDatum(v->sequence_bits);
			values[4] = Int64GetDatum((int64) v->first_id);
			values[5] = Int64GetDatum((int64) origin);
			if (SPI_execute_with_args(sql, COPY_COLUMNS, types, values, NULL, false, 0) != SPI_OK_INSERT)
				elog(ERROR, "could not insert into \"%s\"", IDGEN_VERSIONS_TABLE);
		}
	}
	PG_FINALLY();
	{
		recording = false;
	}
	PG_END_TRY();
	SPI_finish();
}

/*
 * Write into the table the versions the decoders use that it lacks; the
 * number written.  Where the copy is another history's (a restore, or the
 * server's history carried over or lost), the marker where this server
 * begins (here), if one fits.  Where the copy and the server disagree:
 * ERROR, or with quiet, a WARNING and -1.
 */
int
idgen_versions_record(bool quiet, const IdgenLayoutVersion *here)
{
	Oid			relid = versions_relid_or_error();
	DatabaseCopy copy;
	IdgenLayoutHistory effective;
	const IdgenLayoutHistory *server = idgen_server_history(NULL);
	bool		agree;

	LockRelationOid(relid, ShareRowExclusiveLock);
	read_copy(relid, &copy);
	agree = merge(&copy, server, &effective);
	if (!agree && here != NULL && add_marker(relid, &copy, server, here))
		return 1;
	if (!agree)
	{
		if (!quiet)
		{
			decoding.copy = copy;
			disagree_error();
		}
		ereport(WARNING,
				(errmsg("the layout history of database \"%s\" does not match the server's",
						get_database_name(MyDatabaseId)),
				 errhint("Run SELECT idgen_layout_adopt(N) in it, N the largest ID of any of its tables.")));
		return -1;
	}
	insert_versions(relid, &effective, copy.h.nversions, effective.nversions, server->id);
	return effective.nversions - copy.h.nversions;
}

/*
 * Append the server's current layout to the table as a version this
 * server began, from current->first_id on, which the caller has put above
 * every ID of the database.  The version number, or 0 when there was
 * nothing to adopt.
 */
int
idgen_versions_adopt(const IdgenLayoutVersion *current)
{
	Oid			relid = versions_relid_or_error();
	DatabaseCopy copy;
	IdgenLayoutHistory effective;
	const IdgenLayoutHistory *server = idgen_server_history(NULL);

	LockRelationOid(relid, ShareRowExclusiveLock);
	read_copy(relid, &copy);
	if (merge(&copy, server, &effective))
		return 0;
	if (copy.h.nversions >= IDGEN_MAX_LAYOUT_VERSIONS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("table \"%s\" is full", IDGEN_VERSIONS_TABLE)));
	if (copy.h.nversions > 0 &&
		current->first_id <= copy.h.versions[copy.h.nversions - 1].first_id)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the new version would begin below the database's last one"),
				 errdetail("It would begin at ID " UINT64_FORMAT "; version %d begins at " UINT64_FORMAT ".",
						   current->first_id, copy.h.nversions,
						   copy.h.versions[copy.h.nversions - 1].first_id)));
	copy.h.versions[copy.h.nversions] = *current;
	copy.h.nversions++;
	insert_versions(relid, &copy.h, copy.h.nversions - 1, copy.h.nversions, server->id);
	return copy.h.nversions;
}

/*
 * After a statement that wrote the table: every process drops what it
 * derived from it when the change commits.  After a restore's rows (an
 * INSERT or COPY not by idgen_layout_record() or idgen_layout_adopt()),
 * when the copy's last version is another server's and of the layout this
 * server mints under, a marker: a version this server began, of the same
 * layout, from where it stands (first_id, which the caller computes).  The
 * IDs on either side decode alike; the marker is where this server's next
 * versions follow on.  Returns whether it added one.
 */
/*
 * A marker, when the copy's last version is another server's and of the
 * layout this server mints under (here: that layout, first_id where the
 * server stands): a version this server began, from there.  The IDs on
 * either side decode alike; the marker is where this server's next
 * versions follow on.  A restored version that begins where this server
 * has not minted yet (the other server's clock or generator ahead) would
 * have this server's next IDs decode by the version before it: no marker,
 * and idgen_layout_adopt() raises the generator above it first.
 */
static bool
add_marker(Oid relid, DatabaseCopy *copy, const IdgenLayoutHistory *server,
		   const IdgenLayoutVersion *here)
{
	const IdgenLayoutVersion *last;

	if (copy->h.nversions == 0 || copy->h.nversions >= IDGEN_MAX_LAYOUT_VERSIONS ||
		copy->origin[copy->h.nversions - 1] == server->id)
		return false;
	last = &copy->h.versions[copy->h.nversions - 1];
	if (!idgen_same_layout(last, here) || last->first_id >= here->first_id)
		return false;
	copy->h.versions[copy->h.nversions] = *here;
	copy->h.nversions++;
	copy->origin[copy->h.nversions - 1] = server->id;
	insert_versions(relid, &copy->h, copy->h.nversions - 1, copy->h.nversions, server->id);
	return true;
}

/*
 * After a statement that wrote the table: every process drops what it
 * derived from it when the change commits; after a restore's rows (an
 * INSERT or COPY not by idgen_layout_record() or idgen_layout_adopt()),
 * the marker where this server begins, if one fits.
 */
bool
idgen_versions_after_write(Oid relid, bool insert, const IdgenLayoutVersion *here)
{
	DatabaseCopy copy;

	CacheInvalidateRelcacheByRelid(relid);
	decoding.valid = false;
	idgen_database_history_ok = false;
	idgen_decoding_effective = NULL;
	if (!insert || recording)
		return false;
	read_copy(relid, &copy);
	return add_marker(relid, &copy, idgen_server_history(NULL), here);
}

/*
 * Refuse a change of this database's history while rows of a table whose
 * stored values depend on the decoders (a stored generated column, a CHECK
 * constraint, a partition key), or whose column default mints, are there:
 * they were computed, or minted, under the history being replaced.
 * pg_dump writes each table's rows in the order of their names, so a
 * restore may bring such rows before the history's; and a restore into a
 * database this server already minted in would have its IDs decode by the
 * dumped history.
 */
static void
refuse_if_decoded_rows(const char *schema)
{
	const char *q = quote_identifier(schema);
	char	   *sql;
	uint64		n;
	char	  **rels;

	sql = psprintf("WITH decoders AS ("
				   " SELECT pg_catalog.to_regprocedure(pg_catalog.format('%%s.%%s', %s, f))::pg_catalog.oid AS oid"
				   "   FROM pg_catalog.unnest(ARRAY['id_to_timestamp(bigint)', 'id_to_shard(bigint)',"
				   "        'id_to_sequence(bigint)', 'idgen_decode(bigint)', 'id_to_layout_version(bigint)',"
				   "        'min_id_at(timestamptz)', 'idgen_next()', 'idgen_next(integer)']) AS f),"
				   " uses AS (SELECT d.classid, d.objid FROM pg_catalog.pg_depend AS d"
				   "   WHERE d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass"
				   "     AND d.refobjid IN (SELECT oid FROM decoders))"
				   " SELECT DISTINCT pg_catalog.format('%%I.%%I', n.nspname, c.relname) FROM ("
				   "  SELECT ad.adrelid FROM uses JOIN pg_catalog.pg_attrdef AS ad"
				   "    ON uses.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND ad.oid = uses.objid"
				   "  UNION ALL SELECT con.conrelid FROM uses JOIN pg_catalog.pg_constraint AS con"
				   "    ON uses.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND con.oid = uses.objid"
				   "   WHERE con.contype = 'c'"
				   "  UNION ALL SELECT pt.partrelid FROM uses JOIN pg_catalog.pg_partitioned_table AS pt"
				   "    ON uses.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND pt.partrelid = uses.objid"
				   " ) AS t(r) JOIN pg_catalog.pg_class AS c ON c.oid = t.r"
				   " JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace ORDER BY 1",
				   quote_literal_cstr(q));
	if (SPI_execute(sql, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the tables that use idgen's decoders");
	n = SPI_processed;
	rels = palloc(sizeof(char *) * (n + 1));
	for (uint64 i = 0; i < n; i++)
		rels[i] = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;

		if (SPI_execute(psprintf("SELECT EXISTS (SELECT FROM %s)", rels[i]), true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read table %s", rels[i]);
		if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("rows of table %s were stored before this database's layout history", rels[i]),
					 errdetail("Its IDs were minted, or its stored values computed by idgen's decoders, under the history that \"%s\" is being given in place of this server's.",
							   IDGEN_VERSIONS_TABLE),
					 errhint("Restore \"%s\" before the other tables' rows: pg_restore --section=pre-data, then --data-only --table=%s, then the rest.",
							 IDGEN_VERSIONS_TABLE, IDGEN_VERSIONS_TABLE)));
	}
}

/*
 * BEFORE INSERT FOR EACH ROW: a restore brings the rows of the dumped
 * database's history over those CREATE EXTENSION wrote.  A row equal to one
 * there is skipped; one that differs replaces that version and every later
 * one of another origin (this server's, not the dumped database's, which
 * may arrive in any order); either a new or another version is refused
 * while rows decoded by the history before it are there.
 * idgen_layout_record() and idgen_layout_adopt() pass unchecked: what they
 * write is what the decoders already use.
 */
Datum
idgen_layout_versions_restore(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	HeapTuple	tuple;
	TupleDesc	desc;
	Datum		args[COPY_COLUMNS];
	Oid			types[COPY_COLUMNS] = {INT4OID, TIMESTAMPTZOID, INT4OID, INT4OID, INT8OID, INT8OID};
	char	   *schema;
	char	   *tbl;
	bool		existed;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) || !TRIGGER_FIRED_BEFORE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("idgen_layout_versions_restore() must be called as a BEFORE INSERT row trigger")));
	tuple = trigdata->tg_trigtuple;
	if (recording)
		return PointerGetDatum(tuple);

	rel = trigdata->tg_relation;
	desc = RelationGetDescr(rel);
	if (desc->natts != COPY_COLUMNS)
		copy_damaged("It does not have the six columns of idgen 1.3.");
	for (int i = 0; i < COPY_COLUMNS; i++)
	{
		bool		isnull;

		args[i] = heap_getattr(tuple, i + 1, desc, &isnull);
		if (isnull)
			return PointerGetDatum(tuple);	/* NOT NULL refuses it */
	}
	schema = get_namespace_name(RelationGetNamespace(rel));
	tbl = psprintf("%s.%s", quote_identifier(schema),
				   quote_identifier(RelationGetRelationName(rel)));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* not read-only: rows an earlier line of the same COPY wrote are seen */
	if (SPI_execute_with_args(psprintf("SELECT (epoch, shard_bits, sequence_bits, first_id, history) = ($2, $3, $4, $5, $6) FROM %s WHERE version = $1", tbl),
							  COPY_COLUMNS, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read %s", tbl);
	existed = SPI_processed > 0;
	if (existed)
	{
		bool		isnull;

		if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
		{
			SPI_finish();
			return PointerGetDatum(NULL);
		}
	}
	refuse_if_decoded_rows(schema);
	if (existed &&
		SPI_execute_with_args(psprintf("DELETE FROM %s WHERE version >= $1 AND history <> $6", tbl),
							  COPY_COLUMNS, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete from %s", tbl);
	SPI_finish();
	return PointerGetDatum(tuple);
}

/* An "idgen layouts" worker: for one database, or (InvalidOid) the one that lists them. */
static void
layouts_worker(BackgroundWorker *worker, Oid dboid)
{
	memset(worker, 0, sizeof(*worker));
	worker->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker->bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker->bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker->bgw_library_name, "idgen", BGW_MAXLEN);
	strlcpy(worker->bgw_function_name, "idgen_layouts_worker_main", BGW_MAXLEN);
	strlcpy(worker->bgw_name, "idgen layouts", BGW_MAXLEN);
	strlcpy(worker->bgw_type, "idgen layouts", BGW_MAXLEN);
	worker->bgw_main_arg = ObjectIdGetDatum(dboid);
}

/*
 * At each start of the fence worker, the copy in every database: one
 * worker lists the databases, then starts one per database in turn; most
 * find nothing to record.  bgw_extra carries where the server stands, for
 * the markers.  needed: a version was appended or the history taken over,
 * so that failing to start is worth a WARNING.
 */
void
idgen_versions_launch_sync(const IdgenLayoutVersion *here, bool needed)
{
	BackgroundWorker worker;

	layouts_worker(&worker, InvalidOid);
	StaticAssertStmt(sizeof(IdgenLayoutVersion) <= BGW_EXTRALEN,
					 "a layout version fits in bgw_extra");
	memcpy(worker.bgw_extra, here, sizeof(*here));
	if (!RegisterDynamicBackgroundWorker(&worker, NULL))
		ereport(needed ? WARNING : LOG,
				(errmsg("could not start the \"idgen layouts\" worker"),
				 errhint("Raise \"%s\", or run SELECT idgen_layout_record() in each database with idgen.",
						 "max_worker_processes")));
}

static List *
database_list(void)
{
	List	   *oids = NIL;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tuple;

	StartTransactionCommand();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tuple = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tuple);
		MemoryContext old;

		/* a template: a worker connected to it would fail CREATE DATABASE */
		if (!db->datallowconn || db->datistemplate)
			continue;
		old = MemoryContextSwitchTo(TopMemoryContext);
		oids = lappend_oid(oids, db->oid);
		MemoryContextSwitchTo(old);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return oids;
}

static void
sync_database(const IdgenLayoutVersion *here)
{
	int			added;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (OidIsValid(versions_relid()))
	{
		added = idgen_versions_record(true, here);
		if (added > 0)
			ereport(LOG,
					(errmsg("idgen recorded %d layout version(s) in database \"%s\"",
							added, get_database_name(MyDatabaseId))));
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
}

void
idgen_layouts_worker_main(Datum main_arg)
{
	Oid			dboid = DatumGetObjectId(main_arg);
	ListCell   *lc;
	List	   *oids;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	if (OidIsValid(dboid))
	{
		IdgenLayoutVersion here;

		BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
		memcpy(&here, MyBgworkerEntry->bgw_extra, sizeof(here));
		pgstat_report_activity(STATE_RUNNING, "recording the layout history");
		sync_database(&here);
		proc_exit(0);
	}

	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	oids = database_list();
	foreach(lc, oids)
	{
		BackgroundWorker worker;
		BackgroundWorkerHandle *handle;
		pid_t		pid;

		layouts_worker(&worker, lfirst_oid(lc));
		memcpy(worker.bgw_extra, MyBgworkerEntry->bgw_extra, BGW_EXTRALEN);
		worker.bgw_notify_pid = MyProcPid;
		if (!RegisterDynamicBackgroundWorker(&worker, &handle) ||
			WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED)
		{
			ereport(WARNING,
					(errmsg("could not start the \"idgen layouts\" worker for database %u",
							lfirst_oid(lc)),
					 errhint("Run SELECT idgen_layout_record() in it.")));
			continue;
		}
		(void) WaitForBackgroundWorkerShutdown(handle);
	}
	proc_exit(0);
}
