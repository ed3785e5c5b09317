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
 *	- shared memory, where every mint compares with it (fence_gate.c);
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
 * The protocol step by step, with what a crash at each step leaves behind,
 * and how the start is bounded when the state file is missing, older than
 * the last checkpoint or another cluster's, is in doc/design/fence.md.
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
#include "access/transam.h"
#include "access/xlogreader.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
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

#include "durable_file.h"
#include "fence.h"
#include "fence_gate.h"
#include "generator.h"
#include "history_recovery.h"
#include "idgen_compat.h"
#include "lane.h"
#include "layout.h"
#include "layout_history.h"
#include "layout_stamp.h"
#include "stamp_worker.h"
#include "settings.h"
#include "wait_event.h"
#include "worker.h"

#define IDGEN_STATE_TMP_FILE	IDGEN_STATE_FILE ".tmp"
#define IDGEN_STATE_MAGIC		0x69646731	/* "idg1" */
#define IDGEN_STATE_VERSION		3	/* 1: idgen 1.0, without cluster and redo;
									 * 2: idgen 1.1 and 1.2, without the
									 * layout history */

/* how long after the last mint the worker keeps a horizon open */
#define IDGEN_FENCE_KEEP_OPEN_MS	(60 * 1000)
/* the layout's end is told at start, then this often */
#define IDGEN_LAYOUT_END_WARNING_EVERY_MS	(24 * 3600 * 1000)


/*
 * The state file.  It names the cluster that wrote it, so that a copy from
 * another cluster is recognised, and the redo pointer of the latest
 * checkpoint when it was written, so that an older copy of this cluster's
 * own file is recognised too (see recover_fence_ms).
 */
typedef struct IdgenStateFile
{
	uint32		magic;
	uint32		version;
	uint64		system_identifier;	/* pg_control's, of the writer */
	XLogRecPtr	redo;			/* GetRedoRecPtr() when written */
	IdgenFenceRecord rec;
	IdgenLayoutHistory history; /* every layout minted under, rec's last */
	pg_crc32c	crc;			/* of everything above */
} IdgenStateFile;

/* What idgen 1.1 and 1.2 wrote: the fence's layout, and no history. */
typedef struct IdgenStateFileV2
{
	uint32		magic;
	uint32		version;
	uint64		system_identifier;
	XLogRecPtr	redo;
	IdgenFenceRecord rec;
	pg_crc32c	crc;
} IdgenStateFileV2;

/* What idgen 1.0 wrote: read, then treated as older than any checkpoint. */
typedef struct IdgenStateFileV1
{
	uint32		magic;
	uint32		version;
	IdgenFenceRecord rec;
	pg_crc32c	crc;
} IdgenStateFileV1;

/* The redo pointer the last write of this process recorded. */
static XLogRecPtr written_redo = InvalidXLogRecPtr;

/* The first millisecond of this layout whose IDs all lie at or above id. */
static int64
ms_at_or_above(uint64 id)
{
	uint64		low = UINT64CONST(1) << idgen_low_bits(&idgen_layout);

	return (int64) ((id + low - 1) / low);
}

/*
 * Where a recorded fence puts this layout's generator: the fence is an ID,
 * so whatever layout recorded it, this is above every ID minted before it.
 */
static int64
fence_ms_of(const IdgenFenceRecord *rec)
{
	return ms_at_or_above(rec->fence_id);
}

static void
history_of_record(IdgenLayoutHistory *history, const IdgenFenceRecord *rec)
{
	idgen_history_assume(history, &rec->layout);
}

static void
make_record(IdgenFenceRecord *rec, int64 fence_ms)
{
	memset(rec, 0, sizeof(*rec));
	rec->fence_id = idgen_first_id_of_ms(&idgen_layout, fence_ms);
	rec->layout = idgen_layout;
}

/* With the history given, or (NULL) the one published. */
static void
write_state_file(const IdgenFenceRecord *rec, const IdgenLayoutHistory *history)
{
	IdgenStateFile file;

	memset(&file, 0, sizeof(file));
	file.magic = IDGEN_STATE_MAGIC;
	file.version = IDGEN_STATE_VERSION;
	file.system_identifier = GetSystemIdentifier();
	file.redo = GetRedoRecPtr();
	file.rec = *rec;
	if (history)
		file.history = *history;
	else
		idgen_history_copy(&file.history);
	idgen_file_write(IDGEN_STATE_FILE, IDGEN_STATE_TMP_FILE, &file, sizeof(file),
					 offsetof(IdgenStateFile, crc));
	written_redo = file.redo;
}

/*
 * A bound on every ID minted before the last checkpoint, from pg_control
 * alone: a mint never runs more than idgen.max_lead ahead of the wall clock,
 * and a fence never more than idgen.fence_horizon ahead of the generator, so
 * any fence whose WAL record precedes the checkpoint's redo pointer (and so
 * is not replayed) is below the checkpoint's time plus both.  The time is in
 * whole seconds: one more second covers its fraction and the instants
 * between reading the clock and fixing the redo pointer.  Assumes the wall
 * clock did not step back across that checkpoint and the two settings were
 * not lowered since.
 */
static uint64
checkpoint_floor_id(const ControlFileData *ctl, const IdgenLayoutVersion *v)
{
	TimestampTz t = time_t_to_timestamptz(ctl->checkPointCopy.time + 1);
	int64		ms = 0;

	if (t > v->layout.epoch)
		ms = idgen_ms_of_timestamptz(&v->layout, t) + 1;
	ms += (int64) idgen_max_lead + idgen_fence_horizon;
	return idgen_first_id_of_ms(&v->layout, Min(ms, idgen_max_ms(&v->layout)));
}

typedef enum IdgenStateRead
{
	STATE_MISSING,
	STATE_V1,					/* idgen 1.0's: no cluster, no redo pointer */
	STATE_CURRENT
} IdgenStateRead;

/*
 * Read and check the state file; ERROR if it is corrupt.  The files of
 * idgen 1.0 to 1.2 carry no history: the layout of their fence is taken as
 * the only one, and *with_history says so.
 */
static IdgenStateRead
read_state_file(IdgenStateFile *file, bool *with_history)
{
	union
	{
		IdgenStateFile v3;
		IdgenStateFileV2 v2;
		IdgenStateFileV1 v1;
		char		bytes[sizeof(IdgenStateFile) + 1];
	}			buf;
	int			r;
	bool		ok = false;
	IdgenStateRead kind = STATE_CURRENT;

	/* zeroed even when missing: the caller passes its fields on */
	*with_history = false;
	memset(file, 0, sizeof(*file));
	memset(&buf, 0, sizeof(buf));
	r = idgen_read_whole(IDGEN_STATE_FILE, &buf, sizeof(buf));
	if (r < 0)
		return STATE_MISSING;

	if (r == sizeof(IdgenStateFile) && buf.v3.magic == IDGEN_STATE_MAGIC &&
		buf.v3.version == IDGEN_STATE_VERSION)
	{
		ok = idgen_file_intact(&buf.v3, offsetof(IdgenStateFile, crc)) &&
			idgen_history_check(&buf.v3.history);
		*file = buf.v3;
		*with_history = true;
	}
	else if (r == sizeof(IdgenStateFileV2) && buf.v2.magic == IDGEN_STATE_MAGIC &&
			 buf.v2.version == 2)
	{
		ok = idgen_file_intact(&buf.v2, offsetof(IdgenStateFileV2, crc));
		file->system_identifier = buf.v2.system_identifier;
		file->redo = buf.v2.redo;
		file->rec = buf.v2.rec;
		history_of_record(&file->history, &file->rec);
	}
	else if (r == sizeof(IdgenStateFileV1) && buf.v1.magic == IDGEN_STATE_MAGIC &&
			 buf.v1.version == 1)
	{
		ok = idgen_file_intact(&buf.v1, offsetof(IdgenStateFileV1, crc));
		file->rec = buf.v1.rec;
		history_of_record(&file->history, &file->rec);
		kind = STATE_V1;
	}
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idgen state file \"%s\" is corrupt", IDGEN_STATE_FILE),
				 errhint("Move the file out of the data directory: the server then starts above its last checkpoint, as for a missing file, and logs what it assumed.")));
	return kind;
}

/*
 * Where the generator starts, in this layout's milliseconds: nothing minted
 * before may be reached again.  Called by the postmaster when it (re)creates
 * shared memory, before WAL replay (which may raise the fence further);
 * an ERROR stops the server.
 *
 * The state file is trusted alone when it was written after the latest
 * checkpoint and by this cluster: every fence logged before that checkpoint
 * is in it, and replay brings every fence logged since.  Otherwise (no
 * file, an older copy, idgen 1.0's file, or the moments between a
 * checkpoint and the worker's rewrite) the start is also held above the
 * checkpoint's bound, and a WARNING says what was assumed.  A file written
 * by another cluster is refused: this cluster's own fence would be lost
 * with it, unless idgen.allow_foreign_state says it was carried over on
 * purpose.
 */
/* Another cluster's file: this cluster's own fence would be lost with it. */
idgen_noreturn static void
refuse_foreign_state(const ControlFileData *ctl, const IdgenStateFile *file)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("idgen state file \"%s\" belongs to another cluster",
					IDGEN_STATE_FILE),
			 errdetail("The file was written by the cluster with system identifier " UINT64_FORMAT "; this cluster's is " UINT64_FORMAT ".",
					   file->system_identifier, ctl->system_identifier),
			 errhint("Move the file out of the data directory to start above this cluster's last checkpoint; to keep new IDs above the other cluster's as well (a file carried over by pg_upgrade or a restore), start once with \"%s\" = on.",
					 "idgen.allow_foreign_state")));
}

static int64
recover_fence_ms(const ControlFileData *ctl, const IdgenStateFile *file,
				 IdgenStateRead kind, int64 floor_ms)
{
	int64		fence_ms;
	char	   *checkpoint_time;

	checkpoint_time = pstrdup(timestamptz_to_str(time_t_to_timestamptz(ctl->checkPointCopy.time)));

	/*
	 * A cluster stopped cleanly before any object of its own was made (the
	 * first start after initdb) cannot have minted: that needs CREATE
	 * EXTENSION.  No file is then expected, and no bound is needed.
	 */
	if (kind == STATE_MISSING && ctl->state == DB_SHUTDOWNED &&
		ctl->checkPointCopy.nextOid < FirstNormalObjectId)
		return 0;

	if (kind == STATE_MISSING)
	{
		ereport(WARNING,
				(errmsg("idgen state file \"%s\" does not exist", IDGEN_STATE_FILE),
				 errdetail("New IDs start at %s: the last checkpoint (%s) plus \"%s\" and \"%s\", assuming the system clock did not step back before it.",
						   timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, floor_ms)),
						   checkpoint_time, "idgen.max_lead", "idgen.fence_horizon"),
				 errhint("This is expected at the first start after idgen was added to \"%s\"; otherwise the file was removed.",
						 "shared_preload_libraries")));
		return floor_ms;
	}

	if (kind == STATE_CURRENT &&
		file->system_identifier != ctl->system_identifier)
	{
		fence_ms = fence_ms_of(&file->rec);
		ereport(WARNING,
				(errmsg("idgen state file \"%s\" was written by another cluster",
						IDGEN_STATE_FILE),
				 errdetail("\"%s\" is on: new IDs start at %s, above its fence and above the last checkpoint (%s) plus \"%s\" and \"%s\".",
						   "idgen.allow_foreign_state",
						   timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, Max(fence_ms, floor_ms))),
						   checkpoint_time, "idgen.max_lead", "idgen.fence_horizon")));
		return Max(fence_ms, floor_ms);
	}

	fence_ms = fence_ms_of(&file->rec);
	if (kind == STATE_CURRENT && file->redo >= ctl->checkPointCopy.redo)
		return fence_ms;

	/*
	 * A start from a base backup (a new standby, a restore): the file was
	 * copied after the backup's checkpoint began, so it holds every fence
	 * logged before that checkpoint, and recovery replays every one since.
	 */
	if (kind == STATE_CURRENT && access(BACKUP_LABEL_FILE, F_OK) == 0)
		return fence_ms;

	if (floor_ms > fence_ms)
		ereport(WARNING,
				(errmsg("idgen state file \"%s\" is older than the last checkpoint",
						IDGEN_STATE_FILE),
				 errdetail("New IDs start at %s: the last checkpoint (%s) plus \"%s\" and \"%s\", assuming the system clock did not step back before it.",
						   timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, floor_ms)),
						   checkpoint_time, "idgen.max_lead", "idgen.fence_horizon"),
				 errhint("%s",
						 kind == STATE_V1 ?
						 "The file was written by idgen 1.0; the next fence move replaces it." :
						 "A crash right after a checkpoint leaves the file so; otherwise an older copy was restored.")));
	return Max(fence_ms, floor_ms);
}

/* The history first: the checkpoint's bound is in its last version's IDs. */
int64
idgen_fence_recover(void)
{
	IdgenStateFile file;
	IdgenStateRead kind;
	IdgenLayoutHistory history;
	const IdgenLayoutVersion *last;
	bool		file_has_history = false;
	ControlFileData *ctl;
	bool		control_ok;
	int64		start_ms;

	ctl = get_controlfile(DataDir, &control_ok);
	if (!control_ok)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("calculated CRC checksum does not match value stored in control file"),
				 errdetail("idgen reads the last checkpoint from it to bound the IDs minted before.")));

	kind = read_state_file(&file, &file_has_history);
	if (kind == STATE_CURRENT && file.system_identifier != ctl->system_identifier &&
		!idgen_allow_foreign_state)
		refuse_foreign_state(ctl, &file);

	idgen_history_recover(&history, kind == STATE_MISSING ? NULL : &file.history,
						  file_has_history, file.system_identifier,
						  ctl->system_identifier);
	idgen_history_publish(&history);

	/*
	 * The checkpoint's bound is on IDs of the layout minted under before
	 * this start; the start never falls below its version's first ID.
	 */
	last = &history.versions[history.nversions - 1];
	start_ms = recover_fence_ms(ctl, &file, kind,
								ms_at_or_above(checkpoint_floor_id(ctl, last)));
	start_ms = Max(start_ms, ms_at_or_above(last->first_id));

	idgen_history_check_change_at(&history, start_ms);
	return start_ms;
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
	if (code != 0 || !idgen_generator_attached())
		return;

	last_ms = idgen_generator_ms();

	/*
	 * Written even when the fence does not come down (a standby): the file
	 * then records the shutdown checkpoint, and the next start trusts it.
	 */
	make_record(&rec, Min(last_ms + 1, idgen_fence_ms()));
	PG_TRY();
	{
		write_state_file(&rec, NULL);
	}
	PG_CATCH();
	{
		/* the file keeps the higher fence it had: safe, only later */
		EmitErrorReport();
		FlushErrorState();
	}
	PG_END_TRY();
}

/* ---- replay (wal_records.c dispatches) ---- */

void
idgen_fence_redo(const IdgenFenceRecord *replayed)
{
	IdgenFenceRecord rec;
	int64		fence_ms = fence_ms_of(replayed);

	idgen_fence_lock();
	if (fence_ms > idgen_fence_ms())
	{
		/* the file first: a restartpoint may skip this record next time */
		make_record(&rec, fence_ms);
		write_state_file(&rec, NULL);
		idgen_raise_generator(fence_ms);
		idgen_fence_publish_replayed(fence_ms);
	}
	idgen_fence_unlock();
}

/* The primary's history, durable in both files before it is published. */
void
idgen_fence_redo_history(const IdgenLayoutHistory *replayed)
{
	IdgenFenceRecord rec;

	if (!idgen_history_take_replayed(replayed))
		return;
	idgen_fence_lock();
	idgen_history_write_file(replayed);
	make_record(&rec, idgen_fence_ms());
	write_state_file(&rec, replayed);
	idgen_history_publish(replayed);
	idgen_fence_unlock();
}

/* ---- the background worker ---- */

static void
die_unpublished(void)
{
	CHECK_FOR_INTERRUPTS();
	proc_exit(1);
}

/*
 * Move the fence to max(now, generator, what waiting callers need) +
 * horizon, durably, then publish it.
 * Only the worker calls this, so that an interrupted wait for synchronous
 * standbys can never publish a fence they have not received.
 */
static void
fence_advance(void)
{
	int64		now = idgen_wall_ms();
	int64		target = Min(Max(Max(now, idgen_generator_ms()),
								 idgen_fence_needed_ms()) + idgen_fence_horizon,
							 idgen_max_ms(&idgen_layout));
	IdgenFenceRecord rec;

	if (target <= idgen_fence_ms())
	{
		idgen_fence_forget_ask();
		return;
	}

	make_record(&rec, target);

	idgen_fence_lock();
	write_state_file(&rec, NULL);
	if (!idgen_log_durably(XLOG_IDGEN_FENCE, &rec, sizeof(rec)))
	{
		idgen_fence_unlock();
		die_unpublished();
	}
	idgen_fence_publish_move(target, target - idgen_fence_horizon / 2);
	idgen_fence_unlock();
}

/*
 * Log the layout history, first appending the configured layout when it is
 * not the last version (idgen_history_append_configured says where the new
 * version begins), with the generator raised to its first ID.  Durable as a
 * fence move is, in both files and in WAL, before the decoders see it;
 * logged at every start, so that a standby learns a history that a crash
 * kept out of WAL.
 */
static void
fence_log_history(void)
{
	IdgenLayoutHistory history;
	const IdgenLayoutVersion *added;
	IdgenFenceRecord rec;

	idgen_fence_lock();
	idgen_history_copy(&history);
	added = idgen_history_append_configured(&history, idgen_generator_ms());
	if (added)
		idgen_raise_generator(idgen_ms_of_id(&idgen_layout, added->first_id));
	idgen_history_write_file(&history);
	make_record(&rec, idgen_fence_ms());
	write_state_file(&rec, &history);
	if (!idgen_log_durably(XLOG_IDGEN_LAYOUTS, &history, sizeof(history)))
	{
		idgen_fence_unlock();
		die_unpublished();
	}
	idgen_history_publish(&history);
	idgen_fence_unlock();

	if (added)
		idgen_history_log_added(&history);

	/*
	 * Every database's stamp, for the dumps, before an ID of a new version
	 * is minted.  Not while pg_upgrade itself runs the server: a connection
	 * to a database would stop it dropping or creating one.
	 */
	if (!IsBinaryUpgrade)
	{
		idgen_stamps_shards_changed();
		idgen_stamps_begin(&history);
	}
}

/*
 * After each checkpoint the file is written again, with the fence as it
 * stands, so that it records the new redo pointer: a start then trusts it
 * alone (see idgen_fence_recover).
 */
static void
fence_rewrite_after_checkpoint(void)
{
	IdgenFenceRecord rec;

	if (GetRedoRecPtr() == written_redo)
		return;
	idgen_fence_lock();
	make_record(&rec, idgen_fence_ms());
	write_state_file(&rec, NULL);
	idgen_fence_unlock();
}

static void
fence_worker_detach(int code, Datum arg)
{
	idgen_fence_set_worker_latch(NULL);
}

void
idgen_fence_worker_main(Datum main_arg)
{
	int64		next_layout_warning_ms;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);

	/*
	 * A cancel (pg_cancel_backend) would end the wait for synchronous
	 * standbys without error, and the fence would be published unreceived:
	 * the worker has no query to cancel, so it takes none.
	 */
	pqsignal(SIGINT, PG_SIG_IGN);
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

	idgen_fence_set_worker_latch(MyLatch);
	on_shmem_exit(fence_worker_detach, 0);

	/* Record the layouts and open the first horizon before anyone asks. */
	fence_log_history();
	fence_advance();
	idgen_lanes_note_live();
	idgen_lanes_worker_step();
	next_layout_warning_ms = idgen_wall_ms() + IDGEN_LAYOUT_END_WARNING_EVERY_MS;

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
			idgen_lanes_note_live();
			idgen_stamps_shards_changed();
		}

		/*
		 * Asked for, or minting has passed half of the horizon, or the wall
		 * clock has and minting was recent: a server that minted in the last
		 * minute keeps a horizon open, so that its next caller does not wait
		 * for I/O; an idle one stops writing.
		 */
		state_ms = idgen_generator_ms();
		now = idgen_wall_ms();
		wake_at = idgen_fence_wake_at_ms();
		if (idgen_fence_move_asked() ||
			state_ms >= wake_at ||
			(now >= wake_at && now - state_ms < IDGEN_FENCE_KEEP_OPEN_MS))
			fence_advance();
		fence_rewrite_after_checkpoint();
		idgen_lanes_worker_step();
		idgen_stamps_retry();

		/* a clock stepped back does not put the next one off */
		if (now >= next_layout_warning_ms ||
			next_layout_warning_ms - now > IDGEN_LAYOUT_END_WARNING_EVERY_MS)
		{
			idgen_warn_layout_end((int64) idgen_layout_end_warning * 60 * 1000);
			next_layout_warning_ms = now + IDGEN_LAYOUT_END_WARNING_EVERY_MS;
		}
	}
}

void
idgen_fence_register(void)
{
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

	/* a standby replays the fence; only a primary moves it */
	idgen_register_worker("idgen fence", "idgen_fence_worker_main");
}
