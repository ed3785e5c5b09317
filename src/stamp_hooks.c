/*-------------------------------------------------------------------------
 *
 * stamp_hooks.c
 *		The statements that write a database's stamp of the layout history,
 *		and the SQL functions that do: COMMENT ON EXTENSION idgen (a restore
 *		brings the stamp that way; one by hand keeps it), a restore of a 1.3
 *		dump's idgen_layout_versions rows, idgen_layout_adopt(), the update
 *		from 1.3, and 1.3's entry points for a database not updated yet.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/stamp_hooks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_namespace.h"
#include "commands/comment.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "idgen_compat.h"
#include "lane.h"
#include "layout.h"
#include "layout_stamp.h"
#include "stamp_hooks.h"
#include "stamp_kept.h"
#include "stamp_write.h"

static void warn_other_history(const IdgenLayoutHistory *stamp);

PG_FUNCTION_INFO_V1(idgen_layout_adopt_server);
PG_FUNCTION_INFO_V1(idgen_layout_stamp_from_copy);
PG_FUNCTION_INFO_V1(idgen_layout_record);
PG_FUNCTION_INFO_V1(idgen_layout_adopt);
PG_FUNCTION_INFO_V1(idgen_layout_versions_restore);
PG_FUNCTION_INFO_V1(idgen_layout_versions_changed);

/*
 * idgen_layout_adopt(): this database's IDs were minted under this server's
 * layouts; its stamp becomes the server's history.
 */
Datum
idgen_layout_adopt_server(PG_FUNCTION_ARGS)
{
	const IdgenLayoutHistory *server;
	StringInfoData buf;

	idgen_check_preloaded();
	server = idgen_server_history(NULL);
	idgen_stamp_write(server);
	initStringInfo(&buf);
	idgen_stamp_format(&buf, server);
	PG_RETURN_TEXT_P(cstring_to_text(buf.data));
}

/* CREATE EXTENSION idgen is running. */
static bool creating_idgen = false;

/*
 * Whether the database has tables of its own (not the extension's, not
 * temporary): rows that may hold any shard's IDs, from before the
 * extension (a clone, a drop and create, an extension added late).
 */
static bool
tables_here(void)
{
	bool		found;
	bool		isnull;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT EXISTS (SELECT FROM pg_catalog.pg_class AS c"
					" JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace"
					" WHERE c.relkind IN ('r', 'p')"
					" AND n.nspname <> ALL (ARRAY['pg_catalog', 'information_schema'])"
					" AND n.nspname !~ '^pg_(toast|temp_|toast_temp_)'"
					" AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend AS d"
					" WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass"
					" AND d.objid = c.oid AND d.deptype = 'e'))",
					true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not look for tables in this database");
	found = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	return found;
}

/*
 * The stamp of CREATE EXTENSION and of the update from 1.3: the versions of
 * 1.3's table where they are not a prefix of the server's history (a
 * database restored from another server, which then refuses), else the
 * server's history.
 */
Datum
idgen_layout_stamp_from_copy(PG_FUNCTION_ARGS)
{
	IdgenExtensionHere ext;
	IdgenLayoutHistory copy;
	const IdgenLayoutHistory *server;
	IdgenStampShards any;
	IdgenStampShards shards;
	Oid			relid;

	idgen_check_preloaded();
	idgen_stamp_shards_any(&any);
	server = idgen_server_history(NULL);
	if (!idgen_extension_here(&ext))
		PG_RETURN_VOID();
	relid = get_relname_relid(IDGEN_COPY_TABLE, ext.schema);
	memset(&copy, 0, sizeof(copy));
	if (OidIsValid(relid))
		idgen_read_copy(relid, &copy);
	/* a stamp kept from a restore, or from a DROP EXTENSION, is the one */
	if (copy.nversions == 0 && idgen_stamp_kept_read(&copy))
	{
		idgen_stamp_kept_clear();
		warn_other_history(&copy);
		idgen_stamp_write_on(ext.oid, idgen_comment_text(GetComment(ext.oid, ExtensionRelationId, 0)), &copy, &any);
	}
	else if (copy.nversions > 0 && idgen_stamp_match(&copy, server) == IDGEN_STAMP_OTHER)
	{
		ereport(WARNING,
				(errmsg("this database's layout history does not match the server's, and it will refuse to decode until adopted"),
				 errhint("See SELECT idgen_layout_adopt() in the guide.")));
		idgen_stamp_write_on(ext.oid, idgen_comment_text(GetComment(ext.oid, ExtensionRelationId, 0)), &copy, &any);
	}
	else
	{
		/*
		 * A new extension in a database without tables holds what this
		 * server mints; rows from before it, or 1.3's, any shard's.
		 */
		if (creating_idgen && !tables_here())
			memset(&shards, 0, sizeof(shards));
		else
			shards = any;
		idgen_stamp_write_on(ext.oid, idgen_comment_text(GetComment(ext.oid, ExtensionRelationId, 0)), server, &shards);
	}
	PG_RETURN_VOID();
}

/*
 * 1.3's entry points, for a database not updated yet.  Its table is no
 * longer written by idgen: the triggers only tell the processes that read
 * it, and the functions refuse, saying to update.
 */
Datum
idgen_layout_versions_restore(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "idgen_layout_versions_restore() must be called as a trigger");
	return PointerGetDatum(trigdata->tg_trigtuple);
}

Datum
idgen_layout_versions_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "idgen_layout_versions_changed() must be called as a trigger");
	CacheInvalidateRelcache(trigdata->tg_relation);
	return PointerGetDatum(NULL);
}

idgen_noreturn static void
refuse_13(const char *function)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("%s() belongs to idgen 1.3, whose per-database layout table is no longer kept", function),
			 errhint("Run ALTER EXTENSION idgen UPDATE: the database's layout history is then its stamp, in the extension's comment.")));
}

Datum
idgen_layout_record(PG_FUNCTION_ARGS)
{
	refuse_13("idgen_layout_record");
	PG_RETURN_VOID();
}

Datum
idgen_layout_adopt(PG_FUNCTION_ARGS)
{
	refuse_13("idgen_layout_adopt");
	PG_RETURN_VOID();
}

/* ---- The lanes stop when a restore commits ---- */

/*
 * A statement that brings a stamp is a restore's, and the lanes its dump
 * names must not mint while its rows may be arriving; but a statement
 * that fails, or a transaction or savepoint rolled back, must leave
 * nothing behind.  So once the statement is allowed, those lanes refuse
 * while its transaction is open (idgen_lanes_restore_begins, in shared
 * memory only, with the nesting level that named each), its commit makes
 * the stop durable, and a rollback lets them mint as before.
 */
static bool xact_callbacks_registered = false;

static void
stamp_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			idgen_lanes_restore_ends(true);
			break;
		case XACT_EVENT_PRE_PREPARE:
			/* its outcome comes later, in another session: refused (below) */
			if (idgen_lanes_restore_names())
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that restores idgen's stamp into a server with backfill lanes"),
						 errhint("Run the restore in a transaction of its own, committed or rolled back in this session.")));
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			idgen_lanes_restore_ends(false);
			break;
		default:
			break;
	}
}

static void
stamp_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB || event == SUBXACT_EVENT_COMMIT_SUB)
		idgen_lanes_restore_subxact(event == SUBXACT_EVENT_COMMIT_SUB,
									GetCurrentTransactionNestLevel());
}

/*
 * The stop is made durable at PRE_COMMIT, so nothing may fail the commit
 * after it: a serializable transaction can still fail there, at its
 * serialization check, and is refused before anything changes.
 */
static void
stop_lanes_at_commit(const IdgenStampShards *brought)
{
	int32		named[IDGEN_LANE_TABLE_MAX];
	int			nkept;
	int			n = 0;

	if (!xact_callbacks_registered)
	{
		RegisterXactCallback(stamp_xact_callback, NULL);
		RegisterSubXactCallback(stamp_subxact_callback, NULL);
		xact_callbacks_registered = true;
	}
	/* a dump holds no ID of a lane whose shard its stamp does not name */
	nkept = idgen_lanes_kept(named);
	for (int i = 0; i < nkept; i++)
		if (idgen_stamp_shards_names(brought, named[i]))
			named[n++] = named[i];
	if (idgen_lanes_restore_begins(named, n, GetCurrentTransactionNestLevel()) &&
		IsolationIsSerializable())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a restore of idgen's stamp cannot run in a serializable transaction"),
				 errdetail("Its commit stops the backfill lanes durably before the serialization check, which could still roll it back."),
				 errhint("Restore at the default isolation level, READ COMMITTED (PGOPTIONS='-c default_transaction_isolation=read\\ committed').")));
}

/* ---- The statements that carry a stamp ---- */

static ProcessUtility_hook_type prev_utility_hook = NULL;
static object_access_hook_type prev_object_access_hook = NULL;

/* The statement itself, through the hooks installed before ours. */
static void
run_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
			ProcessUtilityContext context, ParamListInfo params,
			QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	if (prev_utility_hook)
		prev_utility_hook(pstmt, queryString, readOnlyTree, context, params,
						  queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

static bool
is_comment_on_idgen(Node *parsetree)
{
	CommentStmt *stmt;

	if (!IsA(parsetree, CommentStmt))
		return false;
	stmt = (CommentStmt *) parsetree;
	return stmt->objtype == OBJECT_EXTENSION && IsA(stmt->object, String) &&
		strcmp(strVal(stmt->object), "idgen") == 0;
}

static bool
extension_owner(Oid extoid)
{
#if PG_VERSION_NUM >= 160000
	return object_ownercheck(ExtensionRelationId, extoid, GetUserId());
#else
	return pg_extension_ownercheck(extoid, GetUserId());
#endif
}

/*
 * Who may say which layout history minted a database's rows: the
 * extension's owner, and whoever has the privileges of the database's
 * owner (superusers too).  The owner is who restores a database on a
 * server where the application's role is not a superuser; any other role
 * could make every decoder of the database refuse.
 */
static bool
may_apply_stamp(const IdgenExtensionHere *ext)
{
	if (ext != NULL && extension_owner(ext->oid))
		return true;
	return has_privs_of_role(GetUserId(), ROLE_PG_DATABASE_OWNER);
}

idgen_noreturn static void
refuse_stamp(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("must be owner of this database or of extension idgen to apply the layout history this restore brings"),
			 errdetail("This statement is a restore's: it says which layouts the dump's IDs were minted under, and which shards' IDs it may hold; refused, it stops no backfill lane."),
			 errhint("Run the restore as the database's owner or as a superuser, in one transaction (pg_restore --single-transaction, psql -1): rows loaded without this statement decode by this database's layout history, which may not be theirs.")));
}

/*
 * A dump of a database at 1.3 carries its history as the rows of
 * idgen_layout_versions (COPY ... FROM stdin), a table 1.4 has no more:
 * their COPY goes to a temporary table of that name, and they become the
 * stamp, with the WARNING of a restored stamp where they are not this
 * server's history.
 */
static bool
is_copy_of_13_history(Node *parsetree, IdgenExtensionHere *ext)
{
	CopyStmt   *stmt;

	if (!IsA(parsetree, CopyStmt))
		return false;
	stmt = (CopyStmt *) parsetree;
	if (!stmt->is_from || stmt->filename != NULL || stmt->relation == NULL ||
		strcmp(stmt->relation->relname, IDGEN_COPY_TABLE) != 0 ||
		OidIsValid(RangeVarGetRelid(stmt->relation, NoLock, true)) ||
		!idgen_extension_here(ext) || ext->minor < 4)
		return false;
	/* where the table was: the extension's schema */
	if (stmt->relation->schemaname != NULL &&
		get_namespace_oid(stmt->relation->schemaname, true) != ext->schema)
		return false;
	/* who writes the stamp is as for COMMENT */
	if (!may_apply_stamp(ext))
		refuse_stamp();
	/* a standby or a read-only transaction gets COPY's own error */
	return !RecoveryInProgress() && !XactReadOnly;
}

static void
warn_other_history(const IdgenLayoutHistory *stamp)
{
	StringInfoData buf;

	if (idgen_stamp_match(stamp, idgen_server_history(NULL)) == IDGEN_STAMP_SAME)
		return;
	initStringInfo(&buf);
	idgen_stamp_format(&buf, stamp);
	ereport(WARNING,
			(errmsg("this database's IDs were minted under another layout history than this server's"),
			 errdetail("The stamp lists %s.", buf.data),
			 errhint("Its decoders and idgen_next() fail until SELECT idgen_layout_adopt(), which is right only if every ID in it was minted under this server's layouts; otherwise restore it into a server with that history.")));
}

static void
restore_13_history(PlannedStmt *pstmt, const char *queryString,
				   ProcessUtilityContext context, ParamListInfo params,
				   QueryEnvironment *queryEnv, DestReceiver *dest,
				   QueryCompletion *qc, const IdgenExtensionHere *ext)
{
	PlannedStmt *copy_pstmt = copyObject(pstmt);
	CopyStmt   *copy = (CopyStmt *) copy_pstmt->utilityStmt;
	IdgenLayoutHistory history;
	IdgenStampShards any;
	Oid			relid;
	int			ret;

	idgen_check_preloaded();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* heap: a restore may have set default_table_access_method */
	ret = SPI_execute("CREATE TEMPORARY TABLE " IDGEN_COPY_TABLE " (version pg_catalog.int4,"
					  " epoch pg_catalog.timestamptz, shard_bits pg_catalog.int4,"
					  " sequence_bits pg_catalog.int4, first_id pg_catalog.int8,"
					  " history pg_catalog.int8) USING heap", false, 0);
	if (ret != SPI_OK_UTILITY)
		elog(ERROR, "could not create a temporary table for idgen 1.3's history");
	SPI_finish();
	CommandCounterIncrement();

	copy->relation->schemaname = pstrdup("pg_temp");
	run_utility(copy_pstmt, queryString, false, context, params, queryEnv,
				dest, qc);
	CommandCounterIncrement();

	relid = RangeVarGetRelid(copy->relation, NoLock, false);
	idgen_read_copy(relid, &history);
	idgen_stamp_shards_any(&any);
	stop_lanes_at_commit(&any);
	/* gone at once: a second such COPY in the transaction is redirected too */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("DROP TABLE pg_temp." IDGEN_COPY_TABLE, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not drop the temporary table of idgen 1.3's history");
	SPI_finish();
	CommandCounterIncrement();
	if (history.nversions == 0)
		return;
	warn_other_history(&history);
	idgen_stamp_write_on(ext->oid,
						 idgen_comment_text(GetComment(ext->oid, ExtensionRelationId, 0)),
						 &history, &any);
}

/* What core checks of a COMMENT besides ownership, for one idgen writes. */
static void
comment_may_write(void)
{
	PreventCommandIfReadOnly("COMMENT");
	PreventCommandIfParallelMode("COMMENT");
	PreventCommandDuringRecovery("COMMENT");
}

/*
 * COMMENT ON EXTENSION idgen by the database's owner who does not own the
 * extension: the comment is written here, the statement's own ownership
 * check being the one idgen replaces; the rest of what core checks of a
 * COMMENT stands.
 */
static void
comment_as_database_owner(CommentStmt *stmt, const IdgenExtensionHere *ext)
{
	comment_may_write();
	CreateComments(ext->oid, ExtensionRelationId, 0, stmt->comment);
}

/*
 * A restore's COMMENT in a database where the extension is not created
 * yet (its role may not create it): the stamp is kept for CREATE
 * EXTENSION, which takes it instead of the server's history.
 */
static void
keep_for_create_extension(const IdgenLayoutHistory *stamp)
{
	comment_may_write();
	idgen_stamp_kept_write(stamp);
	ereport(WARNING,
			(errmsg("extension \"idgen\" is not created in this database; the layout history it brings is kept for CREATE EXTENSION idgen"),
			 errhint("A superuser's CREATE EXTENSION idgen in this database takes it as the database's stamp; rows minted under another history than this server's then refuse to decode rather than decode wrong.")));
}

/*
 * A comment by hand keeps the stamp: it is put back after the new text.
 * One that brings a stamp (a restore's) must parse; one that differs from
 * the server's history is taken, with a WARNING, and the database refuses
 * to decode until idgen_layout_adopt().
 */
static void
stamp_utility_hook(PlannedStmt *pstmt, const char *queryString,
				   bool readOnlyTree, ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	CommentStmt *stmt;
	IdgenExtensionHere ext;
	IdgenLayoutHistory before;
	IdgenLayoutHistory after;
	IdgenStampShards shards_before;
	IdgenStampShards brought;
	bool		here;
	bool		had = false;
	bool		restore = false;
	bool		malformed;
	char	   *comment;

	if (is_copy_of_13_history(parsetree, &ext))
	{
		restore_13_history(pstmt, queryString, context, params, queryEnv,
						   dest, qc, &ext);
		return;
	}
	if (IsA(parsetree, CreateExtensionStmt) &&
		strcmp(((CreateExtensionStmt *) parsetree)->extname, "idgen") == 0)
	{
		bool		was = creating_idgen;

		creating_idgen = true;
		PG_TRY();
		{
			run_utility(pstmt, queryString, readOnlyTree, context, params,
						queryEnv, dest, qc);
		}
		PG_FINALLY();
		{
			creating_idgen = was;
		}
		PG_END_TRY();
		return;
	}
	if (!is_comment_on_idgen(parsetree))
	{
		run_utility(pstmt, queryString, readOnlyTree, context, params,
					queryEnv, dest, qc);
		return;
	}

	stmt = (CommentStmt *) parsetree;
	here = idgen_extension_here(&ext);
	idgen_stamp_shards_any(&shards_before);
	if (here)
	{
		idgen_stamp_lock(ext.oid);
		comment = GetComment(ext.oid, ExtensionRelationId, 0);
		had = idgen_comment_stamp(comment, &before, &malformed);
		idgen_comment_shards(comment, &shards_before);
	}
	if (stmt->comment != NULL &&
		idgen_comment_stamp(stmt->comment, &after, &malformed))
	{
		/* a restore's: who may run it is decided before anything changes */
		if (!may_apply_stamp(here ? &ext : NULL))
			refuse_stamp();
		if (!here)
			keep_for_create_extension(&after);
		else if (extension_owner(ext.oid))
			run_utility(pstmt, queryString, readOnlyTree, context, params,
						queryEnv, dest, qc);
		else
			comment_as_database_owner(stmt, &ext);
		idgen_comment_shards(stmt->comment, &brought);
		stop_lanes_at_commit(&brought);
		if (!here)
			return;
		restore = true;
	}
	else
	{
		run_utility(pstmt, queryString, readOnlyTree, context, params,
					queryEnv, dest, qc);
		if (!here)
			return;
	}

	CommandCounterIncrement();
	comment = GetComment(ext.oid, ExtensionRelationId, 0);
	if (idgen_comment_stamp(comment, &after, &malformed))
	{
		warn_other_history(&after);
		/*
		 * The shards a restore's stamp names, those the database named
		 * before it, and this server's; pg_upgrade brings the database's
		 * own comment, as it was.
		 */
		if (restore && !IsBinaryUpgrade)
			(void) idgen_stamp_add_shards(&shards_before);
		idgen_stamp_changed();
	}
	else if (malformed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the comment on extension idgen ends with a malformed layout history"),
				 errhint("Leave its last part, from \"[layout history:\", as idgen wrote it.")));
	else if (had)
		idgen_stamp_write_on(ext.oid, idgen_comment_text(comment), &before, &shards_before);
}

/*
 * The extension dropped, however (DROP EXTENSION, a schema dropped with
 * CASCADE): its comment goes, and the rows stay.  A stamp that is not the
 * server's own is kept for the next CREATE EXTENSION, so that dropping and
 * creating the extension again does not make a refusing database decode
 * wrong.  Its own (the history, or the one last stamped everywhere that the
 * stamps worker has yet to extend) needs no keeping: CREATE EXTENSION
 * stamps the server's history.
 */
static void
stamp_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					int subId, void *arg)
{
	IdgenLayoutHistory stamp;
	bool		malformed;
	char	   *name;
	char	   *comment;

	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_DROP || classId != ExtensionRelationId || subId != 0)
		return;
	name = get_extension_name(objectId);
	if (name == NULL || strcmp(name, "idgen") != 0)
		return;
	comment = GetComment(objectId, ExtensionRelationId, 0);
	if (!idgen_comment_stamp(comment, &stamp, &malformed) ||
		idgen_stamp_is_own(&stamp, idgen_server_history(NULL)))
	{
		/*
		 * Own, or none: kept as the server's history all the same, since
		 * the rows stay and CREATE EXTENSION alone would name only this
		 * server's shards: the new stamp names any shard.
		 */
		idgen_stamp_kept_write(idgen_server_history(NULL));
		return;
	}
	idgen_stamp_kept_write(&stamp);
	ereport(NOTICE,
			(errmsg("this database's layout history is not the server's, and is kept for CREATE EXTENSION idgen")));
}

/*
 * idgen_advance_past of an ID of a shard not minted live here, the guide's
 * step after a load idgen could not see (a data-only restore, COPY): this
 * database holds IDs of that shard, so its dumps name it from now on, and
 * their restore stops a server's lane on it.  Where the database names any
 * lane, or cannot be written, there is nothing to add.
 */
void
idgen_stamp_name_shard(int32 shard)
{
	IdgenStampShards one;

	memset(&one, 0, sizeof(one));
	one.nranges = 1;
	one.lo[0] = one.hi[0] = shard;
	if (RecoveryInProgress() || XactReadOnly || IsInParallelMode())
	{
		ereport(WARNING,
				(errmsg("shard %d is not named in this database's stamp", shard),
				 errdetail("This transaction cannot write it; a dump of the database would not say it holds IDs of shard %d.", shard),
				 errhint("Run idgen_advance_past again in a read-write transaction on the primary.")));
		return;
	}
	(void) idgen_stamp_add_shards(&one);
}

void
idgen_stamp_hook_install(void)
{
	prev_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = stamp_utility_hook;
	prev_object_access_hook = object_access_hook;
	object_access_hook = stamp_object_access;
	idgen_stamp_kept_register();
}
