/*-------------------------------------------------------------------------
 *
 * fence.c
 *		The durable fence: a millisecond the generator never reaches.
 *
 * The generator keeps its state in shared memory only, so a crash, a restart
 * or a promotion forgets it; a wall clock that is behind would then mint
 * again IDs minted before.  The fence closes that gap.  It is kept in three
 * places:
 *
 *	- shared memory, where every mint compares with it;
 *	- the state file $PGDATA/idgen.state (written to a temporary file and
 *	  durable_rename'd), which a restart or crash recovery starts from;
 *	- WAL, as records of idgen's resource manager, which crash recovery and
 *	  standbys replay.
 *
 * The background worker "idgen fence" moves the fence to max(now, generator)
 * + idgen.fence_horizon when minting passes half of the horizon: it writes
 * the file, inserts and flushes the WAL record, waits for synchronous
 * standbys, and only then publishes the new fence, so a mint never waits on
 * I/O unless it outruns the worker.  It keeps the horizon open for a minute
 * after the last mint; a server idle for longer writes nothing, and its
 * next mint waits for one fence move.
 *
 * At start, after a crash or on promotion the generator begins at the fence
 * recovered from the file and from WAL: nothing minted before can be minted
 * again, whatever the wall clock says.  At a clean exit the postmaster, the
 * last process standing, writes the fence just above the last millisecond
 * minted, so that a restart does not begin a horizon ahead of the clock.
 * A standby replays fence records into its shared memory and state file and
 * never mints.
 *
 * The fence is recorded as an ID, the smallest the generator may not reach
 * yet, with the layout it was minted under.  A start with another layout is
 * refused unless idgen.allow_layout_change is on; then the new generator
 * starts above every ID of the old layout, so IDs stay unique across the
 * change too.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/fence.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/syncrep.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "fence.h"
#include "generator.h"
#include "layout.h"
#include "wait_event.h"

#define IDGEN_STATE_TMP_FILE	IDGEN_STATE_FILE ".tmp"
#define IDGEN_STATE_MAGIC		0x69646731	/* "idg1" */
#define IDGEN_STATE_VERSION		1

/* how long after the last mint the worker keeps a horizon open */
#define IDGEN_FENCE_KEEP_OPEN_MS	(60 * 1000)

int			idgen_fence_horizon = 1000;
bool		idgen_allow_layout_change = false;

/* What the state file and every WAL record carry. */
typedef struct IdgenFenceRecord
{
	uint64		fence_id;		/* no ID at or above this was minted */
	TimestampTz epoch;			/* the layout it was minted under */
	int32		shard_bits;
	int32		sequence_bits;
} IdgenFenceRecord;

typedef struct IdgenStateFile
{
	uint32		magic;
	uint32		version;
	IdgenFenceRecord rec;
	pg_crc32c	crc;			/* of everything above */
} IdgenStateFile;

static void idgen_redo(XLogReaderState *record);
static void idgen_desc(StringInfo buf, XLogReaderState *record);
static const char *idgen_identify(uint8 info);

static RmgrData idgen_rmgr = {
	.rm_name = "idgen",
	.rm_redo = idgen_redo,
	.rm_desc = idgen_desc,
	.rm_identify = idgen_identify,
};

static int
low_bits(void)
{
	return idgen_layout.shard_bits + idgen_layout.sequence_bits;
}

static bool
same_layout(const IdgenFenceRecord *rec)
{
	return rec->epoch == idgen_layout.epoch &&
		rec->shard_bits == idgen_layout.shard_bits &&
		rec->sequence_bits == idgen_layout.sequence_bits;
}

/*
 * The first millisecond of this layout whose IDs all lie at or above the
 * recorded fence ID, whatever layout recorded it.
 */
static int64
fence_ms_of(const IdgenFenceRecord *rec, const char *where)
{
	uint64		low = UINT64CONST(1) << low_bits();

	if (!same_layout(rec))
	{
		char	   *recorded = pstrdup(timestamptz_to_str(rec->epoch));

		if (!idgen_allow_layout_change)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("idgen layout differs from the one recorded in %s", where),
					 errdetail("Recorded: epoch %s, shard_bits %d, sequence_bits %d. Configured: epoch %s, shard_bits %d, sequence_bits %d.",
							   recorded, rec->shard_bits, rec->sequence_bits,
							   timestamptz_to_str(idgen_layout.epoch),
							   idgen_layout.shard_bits, idgen_layout.sequence_bits),
					 errhint("Restore the recorded \"%s\", \"%s\" and \"%s\"; to change the layout on purpose, start once with \"%s\" = on.",
							 "idgen.epoch", "idgen.shard_bits", "idgen.sequence_bits",
							 "idgen.allow_layout_change")));
		ereport(LOG,
				(errmsg("idgen layout changed from epoch %s, shard_bits %d, sequence_bits %d",
						recorded, rec->shard_bits, rec->sequence_bits),
				 errdetail("\"%s\" is on; new IDs start above every ID minted before.",
						   "idgen.allow_layout_change")));
	}
	return (int64) ((rec->fence_id + low - 1) / low);
}

static void
make_record(IdgenFenceRecord *rec, int64 fence_ms)
{
	memset(rec, 0, sizeof(*rec));
	rec->fence_id = (uint64) fence_ms << low_bits();
	rec->epoch = idgen_layout.epoch;
	rec->shard_bits = idgen_layout.shard_bits;
	rec->sequence_bits = idgen_layout.sequence_bits;
}

static void
write_state_file(const IdgenFenceRecord *rec)
{
	IdgenStateFile file;
	int			fd;

	memset(&file, 0, sizeof(file));
	file.magic = IDGEN_STATE_MAGIC;
	file.version = IDGEN_STATE_VERSION;
	file.rec = *rec;
	INIT_CRC32C(file.crc);
	COMP_CRC32C(file.crc, &file, offsetof(IdgenStateFile, crc));
	FIN_CRC32C(file.crc);

	fd = OpenTransientFile(IDGEN_STATE_TMP_FILE, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", IDGEN_STATE_TMP_FILE)));
	errno = 0;
	if (write(fd, &file, sizeof(file)) != sizeof(file))
	{
		if (errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", IDGEN_STATE_TMP_FILE)));
	}
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", IDGEN_STATE_TMP_FILE)));

	/* fsyncs the file, renames it, fsyncs the directory */
	(void) durable_rename(IDGEN_STATE_TMP_FILE, IDGEN_STATE_FILE, ERROR);
}

/*
 * Read the fence from the state file, in this layout's milliseconds; 0 when
 * there is none yet.  Called by the postmaster when it (re)creates shared
 * memory, where an ERROR stops the server.
 */
int64
idgen_fence_load(void)
{
	IdgenStateFile file;
	pg_crc32c	crc;
	int			fd;
	int			r;

	fd = OpenTransientFile(IDGEN_STATE_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ENOENT)
			return 0;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", IDGEN_STATE_FILE)));
	}
	r = read(fd, &file, sizeof(file));
	if (r < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read file \"%s\": %m", IDGEN_STATE_FILE)));
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", IDGEN_STATE_FILE)));

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &file, offsetof(IdgenStateFile, crc));
	FIN_CRC32C(crc);
	if (r != sizeof(file) || file.magic != IDGEN_STATE_MAGIC ||
		file.version != IDGEN_STATE_VERSION || !EQ_CRC32C(crc, file.crc))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idgen state file \"%s\" is corrupt", IDGEN_STATE_FILE),
				 errhint("Restore the file from a backup of this data directory. Removing it is safe only if the system clock is not behind any ID minted so far.")));

	return fence_ms_of(&file.rec, "\"" IDGEN_STATE_FILE "\"");
}

/*
 * At a clean postmaster exit no process can mint any more, so the state word
 * is exactly the last millisecond minted: record the fence just above it.
 * The next start then begins where minting stopped, not a horizon later,
 * and quick restarts do not push the generator ahead of the clock.  WAL may
 * still hold higher fences; replaying those is safe.
 */
void
idgen_fence_shutdown(int code, Datum arg)
{
	IdgenFenceRecord rec;
	int64		last_ms;

	/* after a crash, leave the file as the last fence move wrote it */
	if (code != 0 || idgen_shared == NULL)
		return;

	last_ms = (int64) (pg_atomic_read_u64(&idgen_shared->state) >>
					   idgen_layout.sequence_bits);
	if ((uint64) last_ms + 1 >= pg_atomic_read_u64(&idgen_shared->fence))
		return;

	make_record(&rec, last_ms + 1);
	PG_TRY();
	{
		write_state_file(&rec);
	}
	PG_CATCH();
	{
		/* the file keeps the higher fence it had: safe, only later */
		EmitErrorReport();
		FlushErrorState();
	}
	PG_END_TRY();
}

/* ---- the WAL resource manager ---- */

static void
idgen_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	IdgenFenceRecord rec;
	int64		fence_ms;

	if (info != XLOG_IDGEN_FENCE)
		elog(PANIC, "idgen_redo: unknown op code %u", info);
	if (XLogRecGetDataLen(record) != sizeof(rec))
		elog(PANIC, "idgen_redo: fence record of %u bytes, expected %zu",
			 (unsigned) XLogRecGetDataLen(record), sizeof(rec));

	memcpy(&rec, XLogRecGetData(record), sizeof(rec));
	fence_ms = fence_ms_of(&rec, "WAL");

	LWLockAcquire(idgen_shared->fence_lock, LW_EXCLUSIVE);
	if ((uint64) fence_ms > pg_atomic_read_u64(&idgen_shared->fence))
	{
		/* the file first: a restartpoint may skip this record next time */
		make_record(&rec, fence_ms);
		write_state_file(&rec);
		idgen_raise_state(fence_ms);
		idgen_publish_fence(fence_ms, fence_ms);
	}
	LWLockRelease(idgen_shared->fence_lock);
}

static void
idgen_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_IDGEN_FENCE &&
		XLogRecGetDataLen(record) == sizeof(IdgenFenceRecord))
	{
		IdgenFenceRecord rec;

		memcpy(&rec, XLogRecGetData(record), sizeof(rec));
		appendStringInfo(buf, "fence id " UINT64_FORMAT "; shard_bits %d, sequence_bits %d",
						 rec.fence_id, rec.shard_bits, rec.sequence_bits);
	}
}

static const char *
idgen_identify(uint8 info)
{
	if ((info & ~XLR_INFO_MASK) == XLOG_IDGEN_FENCE)
		return "FENCE";
	return NULL;
}

/* ---- the background worker ---- */

/*
 * Move the fence to max(now, generator) + horizon, durably, then publish it.
 * Only the worker calls this, so that an interrupted wait for synchronous
 * standbys can never publish a fence they have not received.
 */
static void
fence_advance(void)
{
	int64		now = idgen_wall_ms();
	int64		state_ms = (int64) (pg_atomic_read_u64(&idgen_shared->state) >>
									idgen_layout.sequence_bits);
	int64		target = Min(Max(now, state_ms) + idgen_fence_horizon,
							 idgen_max_ms());
	IdgenFenceRecord rec;
	XLogRecPtr	lsn;

	if ((uint64) target <= pg_atomic_read_u64(&idgen_shared->fence))
	{
		pg_atomic_write_u32(&idgen_shared->fence_wanted, 0);
		return;
	}

	make_record(&rec, target);

	LWLockAcquire(idgen_shared->fence_lock, LW_EXCLUSIVE);
	write_state_file(&rec);
	XLogBeginInsert();
	XLogRegisterData((char *) &rec, sizeof(rec));
	lsn = XLogInsert(RM_IDGEN_ID, XLOG_IDGEN_FENCE);
	XLogFlush(lsn);
	SyncRepWaitForLSN(lsn, false);

	/* SyncRepWaitForLSN gives up without error when we are told to die */
	if (ProcDiePending)
	{
		LWLockRelease(idgen_shared->fence_lock);
		CHECK_FOR_INTERRUPTS();
		proc_exit(1);
	}

	idgen_publish_fence(target, target - idgen_fence_horizon / 2);
	pg_atomic_fetch_add_u64(&idgen_shared->fence_advances, 1);
	LWLockRelease(idgen_shared->fence_lock);
}

static void
fence_worker_detach(int code, Datum arg)
{
	SpinLockAcquire(&idgen_shared->mutex);
	idgen_shared->worker_latch = NULL;
	SpinLockRelease(&idgen_shared->mutex);
}

void
idgen_fence_worker_main(Datum main_arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	/*
	 * A connection to no database, as the logical replication launcher
	 * makes: it reads no catalog, but it makes the worker a row of
	 * pg_stat_activity, with its waits, instead of a process only ps shows.
	 */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	/*
	 * A fence a synchronous standby has not flushed could be reached again
	 * after it is promoted.  Commits may trade durability for speed with
	 * synchronous_commit = local or off; the fence may not.
	 */
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);

	SpinLockAcquire(&idgen_shared->mutex);
	idgen_shared->worker_latch = MyLatch;
	SpinLockRelease(&idgen_shared->mutex);
	on_shmem_exit(fence_worker_detach, 0);

	/* Record the layout and open the first horizon before anyone asks. */
	fence_advance();

	for (;;)
	{
		int64		state_ms;
		int64		now;
		int64		wake_at;

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(idgen_fence_horizon / 4, 1),
						 idgen_wait_event_info(IDGEN_WAIT_FENCE_WORKER_MAIN));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		/*
		 * Asked for, or minting has passed half of the horizon, or the wall
		 * clock has and minting was recent: a server that minted in the last
		 * minute keeps a horizon open, so that its next caller does not wait
		 * for I/O; an idle one stops writing.
		 */
		state_ms = (int64) (pg_atomic_read_u64(&idgen_shared->state) >>
							idgen_layout.sequence_bits);
		now = idgen_wall_ms();
		wake_at = (int64) pg_atomic_read_u64(&idgen_shared->fence_wake_at);
		if (pg_atomic_read_u32(&idgen_shared->fence_wanted) != 0 ||
			state_ms >= wake_at ||
			(now >= wake_at && now - state_ms < IDGEN_FENCE_KEEP_OPEN_MS))
			fence_advance();
	}
}

void
idgen_fence_register(void)
{
	BackgroundWorker worker;

	RegisterCustomRmgr(RM_IDGEN_ID, &idgen_rmgr);

	/*
	 * Without its worker no fence ever moves and every mint would wait out
	 * idgen.max_wait; PostgreSQL's own message would not name idgen.
	 */
	if (max_worker_processes < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idgen needs a background worker, and \"%s\" is 0",
						"max_worker_processes"),
				 errhint("Raise \"%s\" by one for the \"idgen fence\" worker.",
						 "max_worker_processes")));

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* a standby replays the fence; only a primary moves it */
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_library_name, "idgen", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "idgen_fence_worker_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "idgen fence", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "idgen fence", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}
