/*-------------------------------------------------------------------------
 *
 * stamp_worker.c
 *		The "idgen stamps" worker: every database stamped with the layout
 *		history before an ID of a new version is minted.
 *
 * A database's stamp (layout_stamp.c) is what its dump says about the
 * layouts of its IDs, so it may never lag behind them.  A version is
 * appended only at a start, before the first fence move; the fence worker
 * then compares the history with the one last stamped everywhere (in
 * $PGDATA/idgen.stamped, and in WAL for standbys) and, where they differ,
 * starts this worker, and minting waits.  One process lists the databases
 * and starts one per database in turn.  Each stamps the history on a
 * database whose stamp is the one last stamped everywhere, or that has
 * none; any other stamp came from elsewhere (a restore) and is left, to
 * refuse.  When all have, the history is recorded and minting goes on;
 * when any failed, the fence worker starts the worker again a second later.
 *
 * After each start, and after a reload that changes this server's shards,
 * the same visit adds them to every stamp (stamp_shards.c), so that a
 * dump names every shard whose IDs it may hold; minting for a given time
 * waits for it, the live path does not.  Most visits write nothing.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/stamp_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "replication/syncrep.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "durable_file.h"
#include "layout_history.h"
#include "layout_stamp.h"
#include "settings.h"
#include "stamp_kept.h"
#include "stamp_write.h"
#include "stamp_shards.h"
#include "stamp_worker.h"
#include "wal_records.h"
#include "worker.h"

#define IDGEN_STAMPED_TMP_FILE	IDGEN_STAMPED_FILE ".tmp"
/* The fence worker's: the worker it started, and when. */
static BackgroundWorkerHandle *lister = NULL;
static TimestampTz launched_at = 0;

/* ---- The record of the history stamped everywhere ---- */

/* In the frame of idgen.layouts (layout_history.c), with its own magic. */
static void
write_stamped_file(const IdgenLayoutHistory *h)
{
	idgen_history_file_write(IDGEN_STAMPED_FILE, IDGEN_STAMPED_TMP_FILE,
							 IDGEN_STAMPED_MAGIC, h);
}

/*
 * At the postmaster's start: what the file says was stamped everywhere.
 * Only this cluster's own file, whole, is believed (another cluster's when
 * idgen.allow_foreign_state carries it over, as it does the state and the
 * layouts; and, once, the text an older idgen wrote).  A history taken for
 * stamped that is not would let minting go on past databases without it,
 * and the worker extend a restored stamp as if it were this server's.
 * With none known the worker visits every database again: it leaves those
 * stamped already as they are, and, as for no file, a stamp of fewer
 * versions than a history that changed at this start refuses.
 */
void
idgen_stamps_load_file(void)
{
	IdgenLayoutHistory h;
	uint64		system_identifier;
	char		text[8192];
	int			len;
	int			r;

	r = idgen_history_file_read(IDGEN_STAMPED_FILE, IDGEN_STAMPED_MAGIC, &h,
								&system_identifier);
	if (r < 0)
		return;
	if (r == 0)
	{
		/* carried over on purpose, as the state and the layouts are */
		if (system_identifier == GetSystemIdentifier() ||
			idgen_allow_foreign_state)
		{
			idgen_stamps_done(&h);
			if (system_identifier != GetSystemIdentifier())
				write_stamped_file(&h);
		}
		else
			ereport(WARNING,
					(errmsg("idgen ignores \"%s\": it was written by another cluster",
							IDGEN_STAMPED_FILE),
					 errdetail("The file was written by the cluster with system identifier " UINT64_FORMAT "; this cluster's is " UINT64_FORMAT ".  The \"idgen stamps\" worker stamps every database again at the next start of the fence worker.",
							   system_identifier, GetSystemIdentifier())));
		return;
	}

	/*
	 * The text idgen 1.4 to 1.7 wrote (the history, from ID 0) is taken as
	 * they took it, and written framed at once, so that it is read once: a
	 * history that changed at the upgrade's start then extends stamps of
	 * the versions before it, as it did.
	 */
	len = idgen_read_whole(IDGEN_STAMPED_FILE, text, sizeof(text) - 1);
	if (len > 2 && text[0] == '0' && text[1] == ' ' && text[len - 1] == '\n')
	{
		text[len - 1] = '\0';
		if (idgen_stamp_parse(text, &h))
		{
			idgen_stamps_done(&h);
			write_stamped_file(&h);
			return;
		}
	}
	ereport(WARNING,
			(errmsg("idgen ignores \"%s\": it is not a layout history", IDGEN_STAMPED_FILE),
			 errdetail("The \"idgen stamps\" worker stamps every database again at the next start of the fence worker.")));
}

/* Replay of the primary's record: a standby knows which stamps are its own. */
void
idgen_stamps_replayed(const IdgenLayoutHistory *h)
{
	write_stamped_file(h);
	idgen_stamps_done(h);
}

/* ---- Starting the worker (the fence worker) ---- */

static void
launch(bool warn)
{
	launched_at = GetCurrentTimestamp();
	/* the fence worker starts the one that lists again, not the postmaster */
	if (!idgen_start_worker("idgen stamps", "idgen_stamps_worker_main",
							ObjectIdGetDatum(InvalidOid), 0, &lister))
	{
		lister = NULL;
		if (warn)
			ereport(WARNING,
					(errmsg("could not start the \"idgen stamps\" worker"),
					 errdetail("Minting waits until every database is stamped with the layout history."),
					 errhint("Raise \"%s\"; the fence worker tries again meanwhile.",
							 "max_worker_processes")));
	}
}

void
idgen_stamps_begin(const IdgenLayoutHistory *h)
{
	idgen_stamps_begun();
	if (idgen_stamps_pending(h) || idgen_stamps_shards_pending())
		launch(true);
}

/* At each wake-up of the fence worker: start it again, a second apart. */
void
idgen_stamps_retry(void)
{
	IdgenLayoutHistory h;
	pid_t		pid;

	if (IsBinaryUpgrade)
		return;
	idgen_history_copy(&h);
	if (!idgen_stamps_pending(&h) && !idgen_stamps_shards_pending())
		return;
	if (lister != NULL && GetBackgroundWorkerPid(lister, &pid) != BGWH_STOPPED)
		return;
	if (!TimestampDifferenceExceeds(launched_at, GetCurrentTimestamp(), 1000))
		return;
	launch(false);
}

/* ---- The worker ---- */

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

		/*
		 * Templates too, since a database created from one takes its stamp
		 * (a CREATE DATABASE from it in these milliseconds fails once); not
		 * one left invalid by an interrupted DROP DATABASE.
		 */
		if (!db->datallowconn)
			continue;
#ifdef DATCONNLIMIT_INVALID_DB
		if (db->datconnlimit == DATCONNLIMIT_INVALID_DB)
			continue;
#endif
		old = MemoryContextSwitchTo(TopMemoryContext);
		oids = lappend_oid(oids, db->oid);
		MemoryContextSwitchTo(old);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return oids;
}

/*
 * One database: the history on a stamp that is the one last stamped
 * everywhere (this server's own, behind by the new versions), or on none;
 * this server's lanes named on a stamp of its history.
 */
static void
stamp_database(const IdgenLayoutHistory *h)
{
	IdgenLayoutHistory stamp;
	IdgenStampShards shards;
	IdgenStampShards server;
	IdgenStampShards none;
	bool		present;

	/* the stamp is durable before the record that minting may go on */
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	idgen_stamp_shards_server(&server);
	memset(&none, 0, sizeof(none));
	if (!idgen_stamp_read_here(&stamp, &present, &shards))
	{
		/* no extension, or one whose stamp is not the worker's */
	}
	else if (present && idgen_stamp_match(&stamp, h) == IDGEN_STAMP_SAME)
	{
		if (!idgen_stamp_shards_covers(&shards, &server))
		{
			(void) idgen_stamp_add_shards(&none);
			ereport(LOG,
					(errmsg("idgen named this server's shards in the stamp of database \"%s\"",
							get_database_name(MyDatabaseId))));
		}
	}
	else if (!present && idgen_stamp_kept_read(&stamp))
	{
		/* a database given the extension without the preload: see stamp_kept.c */
		idgen_stamp_kept_clear();
		idgen_stamp_write(&stamp);
		ereport(LOG,
				(errmsg("idgen stamped database \"%s\" with the layout history kept for it",
						get_database_name(MyDatabaseId))));
	}
	else if (!present || idgen_stamp_is_own(&stamp, h))
	{
		idgen_stamp_write(h);
		ereport(LOG,
				(errmsg("idgen stamped database \"%s\" with layout versions %d to %d",
						get_database_name(MyDatabaseId),
						stamp.nversions + 1, h->nversions)));
	}
	else
	{
		/* no lane mints there, but an ID may be stored there from elsewhere */
		(void) idgen_stamp_add_shards(&none);
		ereport(LOG,
				(errmsg("database \"%s\" keeps a layout history that is not this server's",
						get_database_name(MyDatabaseId)),
				 errhint("Its decoders fail until SELECT idgen_layout_adopt() in it, or until it is restored into a server with its history.")));
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/* The record that every database is stamped: WAL first, for standbys. */
static void
record_stamped(const IdgenLayoutHistory *h)
{
	XLogRecPtr	lsn;

	XLogBeginInsert();
	XLogRegisterData((char *) h, sizeof(*h));
	lsn = XLogInsert(RM_IDGEN_ID, XLOG_IDGEN_STAMPED);
	XLogFlush(lsn);
	SyncRepWaitForLSN(lsn, false);
	CHECK_FOR_INTERRUPTS();
	write_stamped_file(h);
	idgen_stamps_done(h);
}

void
idgen_stamps_worker_main(Datum main_arg)
{
	Oid			dboid = DatumGetObjectId(main_arg);
	IdgenLayoutHistory h;
	ListCell   *lc;
	List	   *oids;
	bool		all = true;
	uint64		begun;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	idgen_history_copy(&h);

	if (OidIsValid(dboid))
	{
		BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
		/* a transaction holding the stamp's lock delays this one database */
		SetConfigOption("lock_timeout", "1000", PGC_SUSET, PGC_S_OVERRIDE);
		pgstat_report_activity(STATE_RUNNING, "stamping the layout history");
		stamp_database(&h);
		idgen_stamps_set_last_database(dboid);
		proc_exit(0);
	}

	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	begun = idgen_stamps_shards_visit_begins();
	oids = database_list();
	foreach(lc, oids)
	{
		BackgroundWorkerHandle *handle;
		pid_t		pid;

		idgen_stamps_set_last_database(InvalidOid);
		if (!idgen_start_worker("idgen stamps", "idgen_stamps_worker_main",
								ObjectIdGetDatum(lfirst_oid(lc)), MyProcPid,
								&handle))
		{
			ereport(WARNING,
					(errmsg("could not start the \"idgen stamps\" worker for database %u",
							lfirst_oid(lc)),
					 errhint("Raise \"%s\"; the fence worker starts the worker again in a second.",
							 "max_worker_processes")));
			all = false;
			break;
		}
		/* one that is done already is STOPPED: its result tells */
		if (WaitForBackgroundWorkerStartup(handle, &pid) == BGWH_STARTED)
			(void) WaitForBackgroundWorkerShutdown(handle);
		if (idgen_stamps_last_database() != lfirst_oid(lc))
		{
			/* a database dropped meanwhile is not listed next time */
			ereport(LOG,
					(errmsg("idgen could not stamp database %u; the worker tries again",
							lfirst_oid(lc))));
			all = false;
		}
	}
	if (all)
	{
		if (idgen_stamps_pending(&h))
		{
			record_stamped(&h);
			ereport(LOG,
					(errmsg("idgen stamped every database with its %d layout version(s)",
							h.nversions)));
		}
		/* done, unless another visit was asked for meanwhile */
		idgen_stamps_shards_visited(begun);
	}
	proc_exit(0);
}
