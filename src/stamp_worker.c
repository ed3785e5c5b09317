/*-------------------------------------------------------------------------
 *
 * stamp_worker.c
 *		The "idgen stamps" worker: every database stamped with the layout
 *		history before an ID of a new version is minted.
 *
 * A database's stamp (layout_stamp.c) is what its dump says about the
 * layouts of its IDs, so it may never lag behind them.  A version is
 * appended only at a start, before the first fence move; the fence worker
 * then compares the history with the one last stamped everywhere (the key
 * in $PGDATA/idgen.stamped) and, where they differ, starts this worker,
 * and minting waits.  One process lists the databases and starts one per
 * database in turn; each stamps the history on a database whose stamp is
 * its first versions (or that has none), and leaves another history's.
 * When all have, the key is written and minting goes on; when any failed,
 * the worker exits with failure and is started again a second later.
 *
 * Most starts find the key unchanged and connect to no database.
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
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "durable_file.h"
#include "layout_stamp.h"
#include "stamp_worker.h"

#define IDGEN_STAMPED_TMP_FILE	IDGEN_STAMPED_FILE ".tmp"

/* the fence worker's: whether this start's worker is registered */
static bool launched = false;

static uint64
stamped_key_on_disk(void)
{
	char		buf[32];
	int			len = idgen_read_whole(IDGEN_STAMPED_FILE, buf, sizeof(buf) - 1);
	char	   *end;
	uint64		key;

	if (len <= 0)
		return 0;
	buf[len] = '\0';
	key = strtoull(buf, &end, 16);
	return *end == '\n' ? key : 0;
}

static void
stamps_worker(BackgroundWorker *worker, Oid dboid)
{
	memset(worker, 0, sizeof(*worker));
	worker->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker->bgw_start_time = BgWorkerStart_RecoveryFinished;
	/* the one that lists: started again after a failed round */
	worker->bgw_restart_time = OidIsValid(dboid) ? BGW_NEVER_RESTART : 1;
	strlcpy(worker->bgw_library_name, "idgen", BGW_MAXLEN);
	strlcpy(worker->bgw_function_name, "idgen_stamps_worker_main", BGW_MAXLEN);
	strlcpy(worker->bgw_name, "idgen stamps", BGW_MAXLEN);
	strlcpy(worker->bgw_type, "idgen stamps", BGW_MAXLEN);
	worker->bgw_main_arg = ObjectIdGetDatum(dboid);
}

static void
launch(void)
{
	BackgroundWorker worker;

	stamps_worker(&worker, InvalidOid);
	launched = RegisterDynamicBackgroundWorker(&worker, NULL);
	if (!launched)
		ereport(WARNING,
				(errmsg("could not start the \"idgen stamps\" worker"),
				 errdetail("Minting waits until every database is stamped with the layout history."),
				 errhint("Raise \"%s\"; the fence worker tries again meanwhile.",
						 "max_worker_processes")));
}

void
idgen_stamps_begin(const IdgenLayoutHistory *h)
{
	uint64		key = idgen_history_key(h);

	launched = false;
	idgen_stamps_begun();
	if (stamped_key_on_disk() == key)
	{
		idgen_stamps_done(key);
		return;
	}
	launch();
}

void
idgen_stamps_retry(void)
{
	IdgenLayoutHistory h;

	if (launched || IsBinaryUpgrade)
		return;
	idgen_history_copy(&h);
	if (idgen_stamps_pending(&h))
		launch();
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

/* One database: the history on a stamp that is its start, or on none. */
static void
stamp_database(const IdgenLayoutHistory *h)
{
	IdgenLayoutHistory stamp;
	bool		present;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (idgen_stamp_read_here(&stamp, &present))
	{
		switch (idgen_stamp_match(&stamp, h))
		{
			case IDGEN_STAMP_SAME:
				break;
			case IDGEN_STAMP_PREFIX:
				idgen_stamp_write(h);
				ereport(LOG,
						(errmsg("idgen stamped database \"%s\" with layout versions %d to %d",
								get_database_name(MyDatabaseId),
								stamp.nversions + 1, h->nversions)));
				break;
			case IDGEN_STAMP_OTHER:
				ereport(LOG,
						(errmsg("database \"%s\" keeps the layout history restored into it, which is not this server's",
								get_database_name(MyDatabaseId)),
						 errhint("Its decoders fail until SELECT idgen_layout_adopt() in it.")));
				break;
		}
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
}

void
idgen_stamps_worker_main(Datum main_arg)
{
	Oid			dboid = DatumGetObjectId(main_arg);
	IdgenLayoutHistory h;
	ListCell   *lc;
	List	   *oids;
	bool		all = true;
	char		buf[32];

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	idgen_history_copy(&h);

	if (OidIsValid(dboid))
	{
		BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
		pgstat_report_activity(STATE_RUNNING, "stamping the layout history");
		stamp_database(&h);
		idgen_stamps_set_last_database(dboid);
		proc_exit(0);
	}

	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	oids = database_list();
	foreach(lc, oids)
	{
		BackgroundWorker worker;
		BackgroundWorkerHandle *handle;
		pid_t		pid;

		idgen_stamps_set_last_database(InvalidOid);
		stamps_worker(&worker, lfirst_oid(lc));
		worker.bgw_notify_pid = MyProcPid;
		if (!RegisterDynamicBackgroundWorker(&worker, &handle) ||
			WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED)
		{
			ereport(WARNING,
					(errmsg("could not start the \"idgen stamps\" worker for database %u",
							lfirst_oid(lc)),
					 errhint("Raise \"%s\"; the worker tries again in a second.",
							 "max_worker_processes")));
			all = false;
			continue;
		}
		(void) WaitForBackgroundWorkerShutdown(handle);
		if (idgen_stamps_last_database() != lfirst_oid(lc))
			all = false;
	}
	if (!all)
	{
		/* a database dropped meanwhile is simply not listed next time */
		proc_exit(1);
	}
	snprintf(buf, sizeof(buf), "%016llx\n",
			 (unsigned long long) idgen_history_key(&h));
	idgen_write_durably(IDGEN_STAMPED_FILE, IDGEN_STAMPED_TMP_FILE, buf, strlen(buf));
	idgen_stamps_done(idgen_history_key(&h));
	ereport(LOG,
			(errmsg("idgen stamped every database with its %d layout version(s)", h.nversions)));
	proc_exit(0);
}
