/*-------------------------------------------------------------------------
 *
 * lane_durable.c
 *		What the backfill lanes make durable, and what they know of their
 *		past: the table at start, the fence worker's writes, replay, and
 *		the operator's idgen_lanes_init() and idgen_advance_past().
 *
 * The fence worker alone writes while the server runs: it builds the table
 * under the lanes' lock, writes the file and logs the record without it
 * (backends never wait on the lock through an fsync or a synchronous
 * standby), then publishes the fences of the ranges it wrote, if they are
 * still open.  Replay writes before the worker starts.
 *
 * What cannot be known is refused, and the refusal is kept in the table, so
 * that a restart does not forget it: lanes with no table of this cluster
 * (the file missing or another cluster's), after an archive recovery, a
 * promotion or a start from a base backup (the primary may have gone on
 * past what this server received), and lanes new to the table, until
 * idgen_lanes_init() attests them.  A shard ever minted live never becomes
 * a lane.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lane_durable.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/xlog.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "fence_gate.h"
#include "lane.h"
#include "lease_gate.h"
#include "lane_shmem.h"
#include "settings.h"
#include "shard.h"
#include "worker.h"

/* the fence worker: the checkpoint its last record follows */
static XLogRecPtr logged_redo = InvalidXLogRecPtr;

/* ---- the table in memory ---- */

/* Every range of a table into the lanes; false if a lane found no room. */
static bool
take_table(const IdgenLaneTable *table)
{
	IdgenLaneTable merged;
	bool		whole;

	merged = idgen_lanes->base;
	merged.nlanes = 0;
	whole = idgen_lane_table_merge(&merged, table);
	idgen_lanes->base.nlive = merged.nlive;
	memcpy(idgen_lanes->base.live, merged.live, sizeof(merged.live));
	for (int i = 0; i < merged.nlanes; i++)
	{
		IdgenLane  *lane = idgen_lane_of(merged.lanes[i].shard);

		if (lane == NULL)
		{
			whole = false;
			continue;
		}
		for (int j = 0; j < merged.lanes[i].nranges; j++)
			idgen_lane_add_range(&lane->used, merged.lanes[i].ranges[j].lo,
								 merged.lanes[i].ranges[j].hi);
		lane->used.flags = idgen_lane_flags_merge(lane->used.flags,
												  idgen_lanes->base.cleared,
												  merged.lanes[i].flags,
												  table->cleared);
	}
	idgen_lanes->base.cleared = Max(idgen_lanes->base.cleared, table->cleared);
	return whole;
}

/* With the lock: which lanes mint, after anything they depend on moved. */
void
idgen_lanes_set_mints(void)
{
	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];

		lane->mints = lane_may_mint(lane) &&
			(!idgen_lanes->leased_mode || lane->leased);
	}
}

/*
 * The table as it must be durable: each open range up to its fence, every
 * lane with a past (attested, named by a restore, or raised past restored
 * IDs).
 */
static void
build_table(IdgenLaneTable *table, const int64 *fences)
{
	*table = idgen_lanes->base;
	table->layout = idgen_layout;
	table->unknown = idgen_lanes->unknown;
	table->nlanes = 0;
	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];
		IdgenLaneEntry *entry;

		if (lane->used.flags == 0 && lane->used.nranges == 0)
			continue;
		entry = &table->lanes[table->nlanes++];
		*entry = lane->used;
		if (lane->open_lo >= 0)
			idgen_lane_add_range(entry, lane->open_lo,
								 fences ? fences[i] :
								 (int64) pg_atomic_read_u64(&lane->fence));
	}
}

static bool
table_empty(void)
{
	return idgen_lanes->nlanes == 0 && idgen_lanes->base.nlive == 0;
}

/* ---- at start ---- */

/*
 * A server that replays WAL it did not write itself: a standby, a
 * point-in-time restore, a start from a base backup.
 */
static bool
recovering_from_elsewhere(void)
{
	struct stat st;

	return stat(STANDBY_SIGNAL_FILE, &st) == 0 ||
		stat(RECOVERY_SIGNAL_FILE, &st) == 0 ||
		stat(BACKUP_LABEL_FILE, &st) == 0;
}

/*
 * In the postmaster, on a fresh segment, after the fence is recovered: the
 * table from the file; replay merges the rest in.
 */
void
idgen_lanes_shmem_startup(void)
{
	bool		found;
	IdgenLaneTable *table;
	IdgenLaneFileRead kind;
	int32		shards[IDGEN_MAX_LANES];
	int			n;
	IdgenLanesUnknown unknown;

	idgen_lanes = ShmemInitStruct("idgen lanes", sizeof(IdgenLanes), &found);
	idgen_lanes_late_attach(!found);
	if (found)
		return;

	memset(idgen_lanes, 0, sizeof(*idgen_lanes));
	idgen_lanes->lock = &(GetNamedLWLockTranche(IDGEN_FENCE_LOCK_TRANCHE))[1].lock;
	ConditionVariableInit(&idgen_lanes->cv);
	pg_atomic_init_u64(&idgen_lanes->asked, 0);
	pg_atomic_init_u64(&idgen_lanes->written, 0);
	pg_atomic_init_u32(&idgen_lanes->restores_open, 0);
	pg_atomic_init_u64(&idgen_lanes->pending_asked, 0);
	pg_atomic_init_u32(&idgen_lanes->late_takers, 0);
	pg_atomic_init_u32(&idgen_lanes->late_closed, 0);
	pg_atomic_init_u32(&idgen_lanes->late_taken, 0);
	pg_atomic_init_u32(&idgen_lanes->late_windows, 0);
	idgen_lanes->leased_mode = idgen_lease_registry != NULL &&
		idgen_lease_registry[0] != '\0';
	idgen_lanes->base.layout = idgen_layout;

	table = palloc(sizeof(IdgenLaneTable));
	kind = idgen_lane_table_read(table);
	(void) take_table(table);	/* a file holds at most what fits */
	n = idgen_lane_shards(shards);
	for (int i = 0; i < n; i++)
	{
		IdgenLane  *lane = idgen_lane_of(shards[i]);

		if (lane == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("idgen keeps at most %d backfill lanes", IDGEN_LANE_TABLE_MAX),
					 errdetail("Shards this cluster used as lanes, or raised past restored IDs of, are kept with those named now."),
					 errhint("Name in \"%s\" shards this cluster already keeps (see idgen_lanes()).",
							 "idgen.backfill_shards")));
		lane->configured = true;
	}

	/*
	 * What replays WAL of another server never makes the lanes known,
	 * however whole, since that server may have gone on past what was
	 * received; and the refusal is written at once, to outlast the signal
	 * files.
	 */
	if (recovering_from_elsewhere())
		unknown = LANES_AFTER_RECOVERY;
	else if (kind == LANE_FILE_MISSING)
		unknown = LANES_NO_FILE;
	else if (kind == LANE_FILE_FOREIGN)
		unknown = LANES_FOREIGN_FILE;
	else
		unknown = (IdgenLanesUnknown) table->unknown;
	idgen_lanes->unknown = unknown;
	if (unknown != LANES_NO_FILE &&
		((int32) unknown != table->unknown || kind == LANE_FILE_FOREIGN))
	{
		build_table(table, NULL);
		idgen_lane_table_write(table);
	}
	idgen_lanes_set_mints();
	pfree(table);
}

/*
 * The live generator starts above every lane's last millisecond: a former
 * lane may be minted live, and a new layout version begins above every ID
 * of the old one, lanes included.
 */
int64
idgen_lanes_floor_ms(void)
{
	int64		floor = 0;

	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		const IdgenLaneEntry *used = &idgen_lanes->lanes[i].used;

		if (used->nranges > 0)
			floor = Max(floor, used->ranges[used->nranges - 1].hi);
	}

	/*
	 * No lane mints past the wall clock, max_lead and its horizon: a later
	 * end (written by hand in a registry row) holds no ID, and would hold
	 * the live generator there.
	 */
	return Min(floor, idgen_wall_ms() + idgen_max_lead + 2 * (int64) idgen_fence_horizon + 1);
}

/* ---- what the worker makes durable ---- */

/*
 * Where the worker moves an open range's fence: past what was asked, by a
 * horizon that doubles with the range (a sweeping import asks ever less
 * often), never to the next used range, nor further ahead of the wall
 * clock than a mint may be.
 */
static int64
fence_target(const IdgenLane *lane, int64 fence, int64 now)
{
	int64		horizon = lane_horizon(lane, fence);
	int64		target;

	if (lane->open_lo < 0 || lane->need < fence)
		return fence;
	target = lane->need + 1 + horizon;
	target = Min(target, lane->cap);
	target = Min(target, now + idgen_max_lead + idgen_fence_horizon + 1);
	target = Min(target, idgen_max_ms(&idgen_layout));
	return Max(target, fence);
}

/*
 * The fences of the ranges a table wrote, where those ranges are still open
 * (one closed or opened meanwhile was not in it), and the windows it held;
 * with a lease registry, only for the lanes whose ranges it committed.
 * Then the asks it answers are done.
 */
static void
publish_fences(const IdgenLanesPending *p, const int32 *committed, int ncommitted)
{
	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	for (int i = 0; i < p->n; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];
		bool		held = !idgen_lanes->leased_mode;

		for (int c = 0; c < ncommitted && !held; c++)
			held = committed[c] == lane->used.shard && lane->leased;
		if (!held)
			continue;
		if (lane->open_lo >= 0 && lane->range_gen == p->gens[i] &&
			(uint64) p->fences[i] > pg_atomic_read_u64(&lane->fence))
			pg_atomic_write_u64(&lane->fence, (uint64) p->fences[i]);
		idgen_lanes_late_publish(lane, p->late_gens[i], p->late_lo[i], p->late_hi[i]);
	}
	if (p->asked > pg_atomic_read_u64(&idgen_lanes->written))
		pg_atomic_write_u64(&idgen_lanes->written, p->asked);
	LWLockRelease(idgen_lanes->lock);
	ConditionVariableBroadcast(&idgen_lanes->cv);
}

/*
 * In the fence worker: make the table durable when a backend asked, or a
 * checkpoint passed since it was last logged (so that crash recovery from
 * that checkpoint finds it whole even without the file), then publish the
 * fences of the ranges written.  The re-log after a checkpoint comes at the
 * worker's next round: until then, recovery from that checkpoint without
 * the file finds no table, and refuses (LANES_NO_FILE).
 */
void
idgen_lanes_worker_step(void)
{
	uint64		asked;
	XLogRecPtr	redo;
	int			n;
	int64		now;
	IdgenLanesPending *p;
	bool		any_leased = false;

	if (idgen_lanes == NULL)
		return;
	asked = pg_atomic_read_u64(&idgen_lanes->asked);
	redo = GetRedoRecPtr();
	if (asked == pg_atomic_read_u64(&idgen_lanes->written) &&
		(table_empty() || redo == logged_redo))
		return;
	/* written and logged: the lease worker publishes it */
	if (idgen_lanes->leased_mode && redo == logged_redo &&
		asked == pg_atomic_read_u64(&idgen_lanes->pending_asked))
		return;

	p = palloc0(sizeof(IdgenLanesPending));
	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	asked = pg_atomic_read_u64(&idgen_lanes->asked);
	now = idgen_wall_ms();
	n = idgen_lanes->nlanes;
	for (int i = 0; i < n; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];
		int64		fence = (int64) pg_atomic_read_u64(&lane->fence);

		p->gens[i] = lane->range_gen;
		p->fences[i] = idgen_lanes->unknown == LANES_KNOWN ?
			fence_target(lane, fence, now) : fence;
		/* a window is in the used ranges from when it was asked */
		p->late_gens[i] = lane->late_gen;
		p->late_lo[i] = lane->late_want_lo;
		p->late_hi[i] = lane->late_want_hi;
		any_leased |= lane->leased;
	}
	p->asked = asked;
	p->n = n;
	build_table(&p->table, p->fences);
	LWLockRelease(idgen_lanes->lock);

	idgen_lane_table_write(&p->table);
	if (!idgen_lane_table_log(&p->table))
	{
		CHECK_FOR_INTERRUPTS();
		proc_exit(1);
	}
	logged_redo = redo;

	/*
	 * While any lane holds its row, every table goes through the registry,
	 * so that what a lane learns without moving a fence (a raise, its past
	 * from before the registry) reaches its row too; a lane leased since
	 * the table was built asks for another.
	 */
	if (any_leased)
	{
		/* another server takes a lane with the ranges its row holds */
		LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
		idgen_lanes->pending = *p;
		pg_atomic_write_u64(&idgen_lanes->pending_asked, asked);
		LWLockRelease(idgen_lanes->lock);
		idgen_lease_poke();
	}
	else
		publish_fences(p, NULL, 0);
	pfree(p);
}

/*
 * The shards minted live, recorded whether or not lanes exist yet, so that
 * none becomes a lane later.
 */
void
idgen_lanes_note_live(void)
{
	int32	   *owned;
	int			n;
	bool		added = false;

	if (idgen_lanes == NULL || RecoveryInProgress())
		return;
	n = idgen_owned_shards(&owned);
	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	for (int i = 0; i < n; i++)
		if (!idgen_lane_table_was_live(&idgen_lanes->base, owned[i]))
		{
			idgen_lane_table_add_live(&idgen_lanes->base, owned[i]);
			added = true;
		}
	if (added)
	{
		idgen_lanes_set_mints();
		pg_atomic_fetch_add_u64(&idgen_lanes->asked, 1);
	}
	LWLockRelease(idgen_lanes->lock);
	pfree(owned);
}

/* Replay: the union, written to the file before anything else. */
void
idgen_lanes_redo(const IdgenLaneTable *replayed)
{
	IdgenLaneTable *table = palloc(sizeof(IdgenLaneTable));

	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	if (!take_table(replayed) && idgen_lanes->unknown != LANES_OVERFLOW)
	{
		ereport(WARNING,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("idgen's backfill lanes are stopped: replay met more than %d lanes",
						IDGEN_LANE_TABLE_MAX),
				 errdetail("The lanes file of this server and the WAL it replays name more lanes together than are kept; a lane left out could mint again what it minted."),
				 errhint("Keep this server's backfill lanes unused; backfill on a server whose lanes file is of its own primary.")));
		idgen_lanes->unknown = LANES_OVERFLOW;
	}
	/* a whole table of this cluster: a lost file is no longer unknown */
	if (idgen_lanes->unknown == LANES_NO_FILE)
		idgen_lanes->unknown = (IdgenLanesUnknown) replayed->unknown;
	idgen_lanes_set_mints();
	build_table(table, NULL);
	idgen_lane_table_write(table);
	LWLockRelease(idgen_lanes->lock);
	pfree(table);
}

/* ---- attesting and raising ---- */

/*
 * The operator attests that the lanes' past is what this server knows, and
 * that the lanes new to it have no ID anywhere: the lanes mint from now.
 * Returns how many lanes are ready.
 */
int
idgen_lanes_init(void)
{
	int64		waited_us = 0;
	int			ready = 0;
	int32		lifted[IDGEN_LANE_TABLE_MAX];
	int			nlifted = 0;
	bool		durable;

	idgen_check_preloaded();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot attest backfill lanes during recovery"),
				 errhint("Attest them on the primary, or once this server is promoted.")));
	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	if (idgen_lanes->unknown == LANES_OVERFLOW)
	{
		LWLockRelease(idgen_lanes->lock);
		idgen_lanes_refuse_unknown(LANES_OVERFLOW);
	}
	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];

		if (lane->configured &&
			idgen_lane_table_was_live(&idgen_lanes->base, lane->used.shard))
		{
			LWLockRelease(idgen_lanes->lock);
			idgen_lanes_refuse_lane(lane);
		}
	}
	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];

		/*
		 * The guide raises every shard of the restored rows first, a lane
		 * named now or not: each kept lane's stop ends, counted, so that no
		 * older table sets it back.
		 */
		if (lane->used.flags & IDGEN_LANE_RESTORED)
			lifted[nlifted++] = lane->used.shard;
		lane->used.flags &= ~IDGEN_LANE_RESTORED;
		if (!lane->configured)
			continue;
		lane->used.flags |= IDGEN_LANE_ATTESTED;
		ready++;
	}
	if (nlifted > 0)
		idgen_lanes->base.cleared++;
	idgen_lanes->unknown = LANES_KNOWN;
	idgen_lanes_set_mints();
	durable = idgen_lanes_ask_and_await(&waited_us);

	/*
	 * Said, since an attestation made for another reason (a promotion, a
	 * lane added) lifts a restore's stop too; said even when the write
	 * did not come, since the lanes mint meanwhile.
	 */
	if (nlifted > 0)
		ereport(NOTICE,
				(errmsg_plural("the stop a restore put on backfill lane %s is lifted",
							   "the stop a restore put on backfill lanes %s is lifted",
							   nlifted, idgen_shard_list(lifted, nlifted)),
				 errdetail("idgen_lanes_init() takes your word that SELECT idgen_advance_past(max(id)) has run on the restored tables' keys, one per shard.")));
	if (!durable)
		idgen_lanes_refuse_not_durable();
	return ready;
}

/*
 * idgen_advance_past of an ID of a shard that is not minted live here:
 * IDs of that shard may exist up to its millisecond (restored, copied), so
 * the shard, a lane now or later, never mints at or below it.  Its lane is
 * not attested by it.
 */
void
idgen_lanes_raise_past(int64 id)
{
	int32		shard = idgen_shard_of_id(&idgen_layout, (uint64) id);
	int64		ms = idgen_ms_of_id(&idgen_layout, (uint64) id);
	int64		waited_us = 0;
	int32	   *owned;
	int			nowned;
	IdgenLane  *lane;

	if (idgen_lanes == NULL || RecoveryInProgress())
		return;
	/* a live shard's IDs are the live generator's: it was raised */
	nowned = idgen_owned_shards(&owned);
	for (int i = 0; i < nowned; i++)
		if (owned[i] == shard)
		{
			pfree(owned);
			return;
		}
	pfree(owned);

	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	lane = idgen_lane_of(shard);
	if (lane == NULL)
	{
		LWLockRelease(idgen_lanes->lock);
		ereport(WARNING,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("shard %d is not recorded as raised: idgen keeps at most %d shards' lane records",
						shard, IDGEN_LANE_TABLE_MAX),
				 errdetail("The live generator was raised; a backfill lane on shard %d would not know of IDs up to %s.",
						   shard, timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, ms))),
				 errhint("Do not make shard %d a backfill lane.", shard)));
		return;
	}
	/*
	 * The open range and the window are in use, whatever the used ranges
	 * say (a window is in them from when it was asked): they end first.
	 */
	if (lane->open_lo >= 0 && lane->open_lo <= ms)
		idgen_lane_close_open(lane);
	if (lane->late_want_hi > 0 && lane->late_want_lo <= ms)
		idgen_lane_close_late(lane);
	if (idgen_lane_free_from(&lane->used, 0) > ms)
	{
		/* already below what the lane keeps */
		LWLockRelease(idgen_lanes->lock);
		return;
	}
	idgen_lane_add_range(&lane->used, 0, ms + 1);
	idgen_lanes_ask_and_wait(&waited_us);
}

/* ---- leased through a registry (lane_lease.c, in the lease worker) ---- */

/*
 * Whether the table written last waits for the registry, and then (unless
 * out is NULL, a question only) a copy of it.
 */
bool
idgen_lanes_pending(IdgenLanesPending *out)
{
	uint64		asked;

	if (idgen_lanes == NULL || !idgen_lanes->leased_mode)
		return false;
	asked = pg_atomic_read_u64(&idgen_lanes->pending_asked);
	if (asked == 0 || asked <= pg_atomic_read_u64(&idgen_lanes->written))
		return false;
	if (out == NULL)
		return true;
	LWLockAcquire(idgen_lanes->lock, LW_SHARED);
	*out = idgen_lanes->pending;
	LWLockRelease(idgen_lanes->lock);
	return true;
}

/* The registry holds the ranges of the lanes committed: their fences. */
void
idgen_lanes_publish_pending(const IdgenLanesPending *pending,
							const int32 *committed, int ncommitted)
{
	publish_fences(pending, committed, ncommitted);
}

/*
 * This server took or holds a lane's row again: the ranges its row holds
 * are used, whoever used them.  The open range, if one stayed, closes: its
 * cap may now lie in a range another server used.
 */
void
idgen_lanes_lease_taken(int32 shard, const int64 *lo, const int64 *hi, int n)
{
	IdgenLane  *lane;

	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	lane = idgen_lane_of(shard);
	if (lane != NULL)
	{
		idgen_lane_stop(lane);
		for (int i = 0; i < n; i++)
			if (lo[i] < hi[i])
				idgen_lane_add_range(&lane->used, Max(lo[i], 0), hi[i]);
		lane->leased = true;
		idgen_lanes_set_mints();
		/* a table soon, whose commit brings the row this lane's own past */
		pg_atomic_add_fetch_u64(&idgen_lanes->asked, 1);
	}
	LWLockRelease(idgen_lanes->lock);
	ConditionVariableBroadcast(&idgen_lanes->cv);
	idgen_fence_poke_worker();
}

/*
 * Whether a lane would mint here, held: a row worth taking.  Lanes stopped
 * by a restore keep their rows, so that no other server mints over the
 * restored IDs before the raise here reaches the rows.
 */
bool
idgen_lanes_usable(int32 shard)
{
	bool		usable = false;

	LWLockAcquire(idgen_lanes->lock, LW_SHARED);
	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];

		if (lane->used.shard == shard)
			usable = (idgen_lanes->unknown == LANES_KNOWN ||
					  idgen_lanes->unknown == LANES_RESTORED_INTO) &&
				lane->configured && lane_attested(lane) &&
				!idgen_lane_table_was_live(&idgen_lanes->base, shard);
	}
	LWLockRelease(idgen_lanes->lock);
	return usable;
}

/*
 * Another server holds the lane's row: no new range.  What the open range
 * still gives is below a fence the row holds, which its new owner avoids.
 */
void
idgen_lanes_lease_lost(int32 shard)
{
	IdgenLane  *lane;

	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	lane = idgen_lane_of(shard);
	if (lane != NULL)
	{
		idgen_lane_stop(lane);
		lane->leased = false;
		idgen_lanes_set_mints();
	}
	LWLockRelease(idgen_lanes->lock);
}
