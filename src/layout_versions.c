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

PG_FUNCTION_INFO_V1(idgen_layout_versions_changed);
PG_FUNCTION_INFO_V1(idgen_layout_versions_restore);

/* idgen_layout_record() and idgen_layout_adopt() are writing the table */
static bool recording = false;

/* What a process decodes by, and what it was derived from. */
static struct
{
	bool		valid;
	bool		agree;			/* the copy and the server's history agree */
	bool		callback_registered;
	uint32		server_changes;
	Oid			relid;			/* the table, InvalidOid when none */
	IdgenLayoutHistory copy;	/* the table's rows */
	IdgenLayoutHistory effective;
} decoding;

static void
versions_invalidated(Datum arg, Oid relid)
{
	/* with no table yet, any relation may be the new one */
	if (relid == InvalidOid || relid == decoding.relid ||
		!OidIsValid(decoding.relid))
		decoding.valid = false;
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
read_copy(Oid relid, IdgenLayoutHistory *copy)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tuple;
	bool		seen[IDGEN_MAX_LAYOUT_VERSIONS] = {0};
	int			rows = 0;

	memset(copy, 0, sizeof(*copy));
	rel = table_open(relid, AccessShareLock);
	if (RelationGetDescr(rel)->natts != 5)
		copy_damaged("It does not have the five columns of idgen 1.3.");
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tuple = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Datum		values[5];
		bool		nulls[5];
		int32		version;
		IdgenLayoutVersion *v;

		heap_deform_tuple(tuple, RelationGetDescr(rel), values, nulls);
		for (int i = 0; i < 5; i++)
			if (nulls[i])
				copy_damaged("A row has a NULL.");
		version = DatumGetInt32(values[0]);
		if (version < 1 || version > IDGEN_MAX_LAYOUT_VERSIONS || seen[version - 1])
			copy_damaged("A version is out of range or repeated.");
		seen[version - 1] = true;
		rows++;
		v = &copy->versions[version - 1];
		v->epoch = DatumGetTimestampTz(values[1]);
		v->shard_bits = DatumGetInt32(values[2]);
		v->sequence_bits = DatumGetInt32(values[3]);
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

/* The history this database decodes by; false when none can be told. */
static bool
merge(const IdgenLayoutHistory *copy, const IdgenLayoutHistory *server,
	  IdgenLayoutHistory *out)
{
	const IdgenLayoutVersion *last;
	int			k;

	if (copy->nversions == 0 || idgen_history_is_prefix(copy, server))
	{
		*out = *server;
		return true;
	}
	last = &copy->versions[copy->nversions - 1];
	for (k = server->nversions - 1; k >= 0; k--)
		if (idgen_same_layout(&server->versions[k], last))
			break;
	if (k < 0)
		return false;
	*out = *copy;
	out->flags = 0;
	for (int j = k + 1; j < server->nversions; j++)
	{
		if (out->nversions >= IDGEN_MAX_LAYOUT_VERSIONS ||
			server->versions[j].first_id <= out->versions[out->nversions - 1].first_id)
			return false;
		out->versions[out->nversions++] = server->versions[j];
	}
	return true;
}

static void
refresh(void)
{
	const IdgenLayoutHistory *server = idgen_server_history(&decoding.server_changes);

	if (!decoding.callback_registered)
	{
		CacheRegisterRelcacheCallback(versions_invalidated, (Datum) 0);
		decoding.callback_registered = true;
	}
	decoding.valid = true;
	decoding.relid = versions_relid();
	if (OidIsValid(decoding.relid))
		read_copy(decoding.relid, &decoding.copy);
	else
		memset(&decoding.copy, 0, sizeof(decoding.copy));
	decoding.agree = merge(&decoding.copy, server, &decoding.effective);
}

static void
disagree_error(void)
{
	const IdgenLayoutVersion *last = &decoding.copy.versions[decoding.copy.nversions - 1];

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("this database's layout history does not match the server's"),
			 errdetail("The database's last version (%d) is epoch %s, shard_bits %d, sequence_bits %d, which this server never minted under: its IDs could not be told from this server's.",
					   decoding.copy.nversions, timestamptz_to_str(last->epoch),
					   last->shard_bits, last->sequence_bits),
			 errhint("The database was restored from a server with another layout. Run SELECT idgen_layout_adopt(N), N the largest ID of the database (as the server it was dumped from has it, if its tables could not be restored here), so that this server's IDs begin above it as a version of its own.")));
}

/*
 * The history the decoders use in this database.  Outside a transaction
 * (no table can be read), the server's.
 */
const IdgenLayoutHistory *
idgen_decoding_history(void)
{
	if (unlikely(!decoding.valid ||
				 idgen_server_history_changed(decoding.server_changes)))
	{
		if (!IsTransactionState())
			return idgen_server_history(NULL);
		refresh();
	}
	if (unlikely(!decoding.agree))
		disagree_error();
	return &decoding.effective;
}

/* The same, or NULL where the copy and the server's history disagree. */
const IdgenLayoutHistory *
idgen_decoding_history_if_any(void)
{
	if (!decoding.valid || idgen_server_history_changed(decoding.server_changes))
	{
		if (!IsTransactionState())
			return idgen_server_history(NULL);
		refresh();
	}
	return decoding.agree ? &decoding.effective : NULL;
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

/* Insert versions from, to - 1 of a history into the table, through SPI. */
static void
insert_versions(Oid relid, const IdgenLayoutHistory *h, int from, int to)
{
	char	   *sql;
	Oid			types[5] = {INT4OID, TIMESTAMPTZOID, INT4OID, INT4OID, INT8OID};

	sql = psprintf("INSERT INTO %s.%s VALUES ($1, $2, $3, $4, $5)",
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
			Datum		values[5];

			values[0] = Int32GetDatum(i + 1);
			values[1] = TimestampTzGetDatum(v->epoch);
			values[2] = Int32GetDatum(v->shard_bits);
			values[3] = Int32GetDatum(v->sequence_bits);
			values[4] = Int64GetDatum((int64) v->first_id);
			if (SPI_execute_with_args(sql, 5, types, values, NULL, false, 0) != SPI_OK_INSERT)
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
 * number written.  Where the copy and the server disagree: ERROR, or with
 * quiet, a WARNING and -1.
 */
int
idgen_versions_record(bool quiet)
{
	Oid			relid = versions_relid_or_error();
	IdgenLayoutHistory copy;
	IdgenLayoutHistory effective;

	LockRelationOid(relid, ShareRowExclusiveLock);
	read_copy(relid, &copy);
	if (!merge(&copy, idgen_server_history(NULL), &effective))
	{
		decoding.valid = false;
		if (!quiet)
		{
			refresh();
			disagree_error();
		}
		ereport(WARNING,
				(errmsg("the layout history of database \"%s\" does not match the server's",
						get_database_name(MyDatabaseId)),
				 errhint("Run SELECT idgen_layout_adopt(max(id)) in it with its largest ID.")));
		return -1;
	}
	insert_versions(relid, &effective, copy.nversions, effective.nversions);
	return effective.nversions - copy.nversions;
}

/*
 * Append the server's current layout to the table as a version of its own,
 * from current->first_id on, which the caller has put above every ID of the
 * database.  The version number, or 0 when there was nothing to adopt.
 */
int
idgen_versions_adopt(const IdgenLayoutVersion *current)
{
	Oid			relid = versions_relid_or_error();
	IdgenLayoutHistory copy;
	IdgenLayoutHistory effective;

	LockRelationOid(relid, ShareRowExclusiveLock);
	read_copy(relid, &copy);
	if (merge(&copy, idgen_server_history(NULL), &effective) &&
		idgen_same_layout(&effective.versions[effective.nversions - 1], current))
		return 0;
	if (copy.nversions >= IDGEN_MAX_LAYOUT_VERSIONS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("table \"%s\" is full", IDGEN_VERSIONS_TABLE)));
	if (copy.nversions > 0 &&
		current->first_id <= copy.versions[copy.nversions - 1].first_id)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the new version would begin below the database's last one"),
				 errdetail("It would begin at ID " UINT64_FORMAT "; version %d begins at " UINT64_FORMAT ".",
						   current->first_id, copy.nversions,
						   copy.versions[copy.nversions - 1].first_id)));
	copy.versions[copy.nversions] = *current;
	copy.nversions++;
	insert_versions(relid, &copy, copy.nversions - 1, copy.nversions);
	return copy.nversions;
}

/*
 * The table's statement trigger: every process drops what it derived from
 * the table when the change commits.
 */
Datum
idgen_layout_versions_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("idgen_layout_versions_changed() must be called as a trigger")));
	CacheInvalidateRelcacheByRelid(RelationGetRelid(trigdata->tg_relation));
	decoding.valid = false;
	return PointerGetDatum(NULL);
}

/*
 * Refuse a change of this database's history while rows of a table whose
 * stored values depend on the decoders (a stored generated column, a CHECK
 * constraint, a partition key) are there: they were computed by the
 * history being replaced.  pg_dump writes each table's rows in the order
 * of their names, so a restore may bring such rows before the history's.
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
				   "        'min_id_at(timestamptz)']) AS f),"
				   " uses AS (SELECT d.classid, d.objid FROM pg_catalog.pg_depend AS d"
				   "   WHERE d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass"
				   "     AND d.refobjid IN (SELECT oid FROM decoders))"
				   " SELECT DISTINCT r::pg_catalog.regclass::pg_catalog.text FROM ("
				   "  SELECT ad.adrelid FROM uses JOIN pg_catalog.pg_attrdef AS ad"
				   "    ON uses.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND ad.oid = uses.objid"
				   "  UNION ALL SELECT con.conrelid FROM uses JOIN pg_catalog.pg_constraint AS con"
				   "    ON uses.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND con.oid = uses.objid"
				   "   WHERE con.contype = 'c'"
				   "  UNION ALL SELECT pt.partrelid FROM uses JOIN pg_catalog.pg_partitioned_table AS pt"
				   "    ON uses.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND pt.partrelid = uses.objid"
				   " ) AS t(r) ORDER BY 1",
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
					 errdetail("Its stored values depend on idgen's decoders, and were computed by the history that \"%s\" is being given in place of this server's.",
							   IDGEN_VERSIONS_TABLE),
					 errhint("Restore \"%s\" before the other tables' rows: pg_restore --section=pre-data, then --data-only --table=%s, then the rest.",
							 IDGEN_VERSIONS_TABLE, IDGEN_VERSIONS_TABLE)));
	}
}

/*
 * BEFORE INSERT FOR EACH ROW: a restore brings the rows of the dumped
 * database's history over those CREATE EXTENSION wrote.  A row equal to one
 * there is skipped; one that differs replaces that version and every later
 * one (this server's, not the dumped database's); either a new or another
 * version is refused while rows decoded by the history before it are there.
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
	Datum		args[5];
	Oid			types[5] = {INT4OID, TIMESTAMPTZOID, INT4OID, INT4OID, INT8OID};
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
	for (int i = 0; i < 5; i++)
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
	if (SPI_execute_with_args(psprintf("SELECT (epoch, shard_bits, sequence_bits, first_id) = ($2, $3, $4, $5) FROM %s WHERE version = $1", tbl),
							  5, types, args, NULL, false, 1) != SPI_OK_SELECT)
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
		SPI_execute_with_args(psprintf("DELETE FROM %s WHERE version >= $1", tbl),
							  1, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete from %s", tbl);
	SPI_finish();
	return PointerGetDatum(tuple);
}

/* ---- the "idgen layouts" worker ---- */

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
 * After a start that began a version, the copy in every database: one
 * worker lists the databases, then starts one per database in turn.
 */
void
idgen_versions_launch_sync(void)
{
	BackgroundWorker worker;

	layouts_worker(&worker, InvalidOid);
	if (!RegisterDynamicBackgroundWorker(&worker, NULL))
		ereport(WARNING,
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

		if (!db->datallowconn)
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
sync_database(void)
{
	int			added;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (OidIsValid(versions_relid()))
	{
		added = idgen_versions_record(true);
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
		BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
		pgstat_report_activity(STATE_RUNNING, "recording the layout history");
		sync_database();
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
