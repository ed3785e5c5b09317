/*-------------------------------------------------------------------------
 *
 * lane.c
 *		Backfill lanes: IDs for a given time, unique by construction.
 *
 * A lane is a shard reserved for backfills (idgen.backfill_shards), never
 * minted live.  Its IDs at a millisecond come from one open range of
 * milliseconds [open_lo, fence) with a cursor, the next free state word
 * (ms << sequence_bits | sequence), that minters move by compare-and-swap
 * to max(cursor, ms << sequence_bits) + n, as the live generator moves its
 * word with the clock: no lock on the minting path.  The fence is durable
 * before it is published (lane_durable.c, through the fence worker), so
 * after a crash the lane starts above everything it gave.
 *
 * A time no open range can give (an import of 2019 while a late event sits
 * at today) closes one lane's open range, recording the milliseconds it
 * used, and opens a range at that time, bounded above by the lane's next
 * used range: ranges of one lane never overlap, and a millisecond is given
 * by each lane at most once.  A millisecond full in one lane is taken from
 * the next; past every lane, the ID goes to the nearest later millisecond
 * within idgen.backfill_max_shift, counted, or the call fails.
 *
 * doc/design.md, "Minting for a given time", says why each step is safe.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lane.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/s_lock.h"
#include "utils/timestamp.h"

#include "fence_gate.h"
#include "generator.h"
#include "lane.h"
#include "lane_shmem.h"
#include "lease_gate.h"
#include "layout_history.h"
#include "settings.h"
#include "worker.h"

/* how many later milliseconds a spill looks for in the windows, at most */
#define LANE_SPILL_SCAN_MS	INT64CONST(1024)

/* how far past its fence this process's own lane stretches to follow it */
#define LANE_SWEEP_GAP_MS	INT64CONST(86400000)

/* this process: the wall clock of its last call, the lane that last gave */
static int64 my_wall_ms = 0;
static int	my_lane = -1;		/* none yet */

Size
idgen_lanes_shmem_size(void)
{
	return add_size(sizeof(IdgenLanes), idgen_lanes_late_shmem_size());
}

/* A shard's lane, added if there is room; NULL past the capacity. */
IdgenLane *
idgen_lane_of(int32 shard)
{
	IdgenLane  *lane;

	for (int i = 0; i < idgen_lanes->nlanes; i++)
		if (idgen_lanes->lanes[i].used.shard == shard)
			return &idgen_lanes->lanes[i];
	if (idgen_lanes->nlanes >= IDGEN_LANE_TABLE_MAX)
		return NULL;
	lane = &idgen_lanes->lanes[idgen_lanes->nlanes];
	memset(lane, 0, sizeof(*lane));
	pg_atomic_init_u64(&lane->next, LANE_CLOSED);
	pg_atomic_init_u64(&lane->fence, 0);
	pg_atomic_init_u32(&lane->takers, 0);
	pg_atomic_init_u64(&lane->last_mint_ms, 0);
	pg_atomic_init_u64(&lane->minted, 0);
	pg_atomic_init_u64(&lane->spilled, 0);
	pg_atomic_init_u64(&lane->largest_shift, 0);
	pg_atomic_init_u64(&lane->late_lo, 0);
	pg_atomic_init_u64(&lane->late_hi, 0);
	lane->open_lo = -1;
	lane->used.shard = shard;
	/* minters read nlanes without the lock: the lane is whole first */
	pg_write_barrier();
	idgen_lanes->nlanes++;
	return lane;
}

/* A list of shards as text, for a message. */
char *
idgen_shard_list(const int32 *shards, int n)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < n; i++)
		appendStringInfo(&buf, "%s%d", i > 0 ? ", " : "", shards[i]);
	return buf.data;
}

/* ---- asking the worker ---- */

/* With a lease registry: whether a lane holds its row and mints. */
static IdgenAwait
lanes_leased(void *arg)
{
	for (int i = 0; i < idgen_lanes->nlanes; i++)
		if (idgen_lanes->lanes[i].mints)
			return IDGEN_AWAIT_DONE;
	return IDGEN_AWAIT_MORE;
}

static IdgenAwait
lanes_written(void *arg)
{
	uint64		gen = *(uint64 *) arg;

	if (pg_atomic_read_u64(&idgen_lanes->written) >= gen)
		return IDGEN_AWAIT_DONE;
	return IDGEN_AWAIT_MORE;
}

/*
 * With the lock held: ask; then, released, wait for the durable write, up
 * to max_wait_ms in all.  False if it did not come.
 */
bool
idgen_lanes_ask_and_await_up_to(int max_wait_ms, int64 *waited_us)
{
	uint64		gen = pg_atomic_add_fetch_u64(&idgen_lanes->asked, 1);
	instr_time	start;
	instr_time	end;
	bool		done;

	LWLockRelease(idgen_lanes->lock);
	INSTR_TIME_SET_CURRENT(start);
	done = idgen_worker_await(&idgen_lanes->cv, lanes_written, &gen, idgen_fence_poke_worker,
							  Max((int64) max_wait_ms * 1000 - *waited_us, 0),
							  IDGEN_WAIT_FENCE);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	*waited_us += INSTR_TIME_GET_MICROSEC(end);
	return done;
}

/* The same, up to idgen.max_wait. */
bool
idgen_lanes_ask_and_await(int64 *waited_us)
{
	return idgen_lanes_ask_and_await_up_to(idgen_max_wait, waited_us);
}

/* The same, failing if the write did not come. */
void
idgen_lanes_ask_and_wait(int64 *waited_us)
{
	if (!idgen_lanes_ask_and_await(waited_us))
		idgen_lanes_refuse_not_durable();
}

/* The durable write did not come within idgen.max_wait. */
pg_noinline void
idgen_lanes_refuse_not_durable(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("could not make the backfill lanes durable within \"%s\" (%d ms)",
					"idgen.max_wait", idgen_max_wait),
			 errdetail("A lane mints only below a fence that the background worker \"idgen fence\" has written to the lanes file and WAL%s.",
					   idgen_lanes->leased_mode ? ", and the lease registry holds in the lane's row" : ""),
			 idgen_lanes->leased_mode ?
			 errhint("Check the server log for the \"idgen fence\" and \"idgen lease\" workers, that synchronous standbys are connected, and that the lease registry is reached.") :
			 errhint("Check the server log for the \"idgen fence\" worker, and that synchronous standbys are connected.")));
}

/* ---- refusals ---- */

pg_noinline void
idgen_lanes_refuse_unknown(IdgenLanesUnknown unknown)
{
	const char *detail = NULL;
	const char *hint = "If IDs of these lanes may exist (restored, copied, or minted by the old primary), run SELECT idgen_advance_past(max(id)) on them first, one per shard.  Then SELECT idgen_lanes_init() attests the lanes.";

	switch (unknown)
	{
		case LANES_NO_FILE:
			detail = "The lanes file \"idgen.lanes\" does not exist: the lanes are new, or the file was lost.";
			break;
		case LANES_FOREIGN_FILE:
			detail = "The lanes file \"idgen.lanes\" was written by another cluster: this data directory is a copy.";
			break;
		case LANES_AFTER_RECOVERY:
			detail = "The server has replayed WAL of another server (a promotion, a point-in-time restore, a base backup): that server may have minted past what this one received.";
			break;
		case LANES_OVERFLOW:
			detail = "Replay met more lanes than are kept; a lane left out could mint again what it minted.";
			hint = "Keep this server's backfill lanes unused; backfill on a server whose lanes file is of its own primary.";
			break;
		case LANES_RESTORED_INTO:
			detail = "A dump was restored into a database of this server (it brought idgen's stamp): its rows may hold IDs of these lanes' shards at milliseconds the lanes would mint at.";
			hint = "Run SELECT idgen_advance_past(max(id)) on the restored tables' keys, one per shard, first.  Then SELECT idgen_lanes_init() attests the lanes.";
			break;
		case LANES_KNOWN:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the backfill lanes' past is not known"),
			 errdetail("%s", detail),
			 errhint("%s", hint)));
}

pg_noinline void
idgen_lanes_refuse_lane(IdgenLane *lane)
{
	int32		shard = lane->used.shard;

	if (idgen_lane_table_was_live(&idgen_lanes->base, shard))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shard %d was minted live and cannot be a backfill lane", shard),
				 errdetail("Its live IDs sit at the past milliseconds a lane would mint at."),
				 errhint("Remove shard %d from \"%s\"; name shards that were never minted live.",
						 shard, "idgen.backfill_shards")));
	if (lane_restored(lane))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("backfill lane %d refuses since a restore named its shard", shard),
				 errdetail("A dump restored into a database of this server names shard %d: its rows may hold IDs of it at milliseconds the lane would mint at.",
						   shard),
				 errhint("Run SELECT idgen_advance_past(max(id)) on the restored tables' keys, one per shard; then SELECT idgen_lanes_init().")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("backfill lane %d is new to this cluster", shard),
			 errdetail("Lanes named in \"%s\" since the lanes were attested are not used until idgen_lanes_init() attests them.",
					   "idgen.backfill_shards"),
			 errhint("If IDs of shard %d may exist, run SELECT idgen_advance_past(max(id)) FROM t WHERE id_to_shard(id) = %d on each table t that may hold them first; then SELECT idgen_lanes_init().",
					 shard, shard)));
}

static IdgenAwait
restores_closed(void *arg)
{
	return pg_atomic_read_u32(&idgen_lanes->restores_open) == 0 ?
		IDGEN_AWAIT_DONE : IDGEN_AWAIT_MORE;
}

/* This backend's transaction holds lanes for a restore (lane_durable.c). */
bool		idgen_lanes_restoring_here = false;

/*
 * A restore's transaction is open (stamp_hooks.c): its rows may hold IDs
 * of the shards of the lanes it holds.  When no other lane can give a
 * time, they are waited for, as a row another transaction has changed, up
 * to idgen.max_wait: what the restore did is seen only once it ends, a
 * stop if it commits, nothing if it rolls back.
 */
static void
await_restores(void)
{
	/* the restore's own transaction would wait for itself */
	if (idgen_lanes_restoring_here)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the backfill lanes this transaction's restore names do not mint in it"),
				 errdetail("Only a lane a restore holds could give this time, and the restored rows may hold IDs of its shard."),
				 errhint("Mint for a given time after the restore, once SELECT idgen_advance_past(max(id)) on the restored keys, one per shard, and SELECT idgen_lanes_init() have run.")));
	if (!idgen_worker_await(&idgen_lanes->cv, restores_closed, NULL, NULL,
							(int64) idgen_max_wait * 1000, IDGEN_WAIT_STAMPS))
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("the backfill lanes waited \"%s\" for a restore to end", "idgen.max_wait"),
				 errdetail("A transaction still open restores idgen's stamp into a database of this server; its rows may hold IDs of the lanes' shards."),
				 errhint("Try again once it ends: if it commits, the lanes it names refuse until SELECT idgen_advance_past(max(id)) on the restored keys, one per shard, and SELECT idgen_lanes_init(); if it rolls back, they mint as before.")));
}

/* With the lock: the index of a configured lane that may not mint, or -1. */
static int
unusable_lane(void)
{
	for (int i = 0; i < idgen_lanes->nlanes; i++)
		if (idgen_lanes->lanes[i].configured && !lane_may_mint(&idgen_lanes->lanes[i]))
			return i;
	return -1;
}

/*
 * With the lock: an open restore holds a lane that would mint otherwise,
 * so that waiting for the restore may give the time.
 */
static bool
held_lane_would_mint(void)
{
	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];

		if (lane->restoring > 0 && lane_may_mint_unheld(lane))
			return true;
	}
	return false;
}

/* The same, taking the lock. */
static bool
restore_holds_a_lane(void)
{
	bool		held;

	if (pg_atomic_read_u32(&idgen_lanes->restores_open) == 0)
		return false;
	LWLockAcquire(idgen_lanes->lock, LW_SHARED);
	held = held_lane_would_mint();
	LWLockRelease(idgen_lanes->lock);
	return held;
}

static bool
any_lane_may_mint(void)
{
	for (int i = 0; i < idgen_lanes->nlanes; i++)
		if (idgen_lanes->lanes[i].configured && lane_may_mint(&idgen_lanes->lanes[i]))
			return true;
	return false;
}

/*
 * With the lock held: refuse, releasing it, when the lanes' past is not
 * known or no configured lane may mint; otherwise return holding it.
 */
void
idgen_lanes_refuse_unusable(void)
{
	for (bool waited = false;; waited = true)
	{
		IdgenLanesUnknown unknown;
		int			passed;

		unknown = idgen_lanes->unknown;
		if (unknown != LANES_KNOWN)
		{
			LWLockRelease(idgen_lanes->lock);
			idgen_lanes_refuse_unknown(unknown);
		}
		/*
		 * A lane that may not mint (new, or once live) is passed over, as
		 * one another server holds: the others mint, idgen_lanes() shows it
		 * not ready, and it is named when the others cannot give a time.
		 */
		while ((passed = unusable_lane()) >= 0 && !any_lane_may_mint())
		{
			bool		held = held_lane_would_mint();

			LWLockRelease(idgen_lanes->lock);
			if (!held)
				idgen_lanes_refuse_lane(&idgen_lanes->lanes[passed]);
			/* each lane held by an open restore: how it ends decides */
			await_restores();
			LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
		}
		if (!idgen_lanes->leased_mode || lanes_leased(NULL) == IDGEN_AWAIT_DONE)
			return;
		LWLockRelease(idgen_lanes->lock);
		if (waited)
			break;
		/* none held: as a live mint waits for its lease, up to max_wait */
		(void) idgen_worker_await(&idgen_lanes->cv, lanes_leased, NULL,
								  idgen_lease_poke, (int64) idgen_max_wait * 1000,
								  IDGEN_WAIT_LEASE);
		LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("no backfill lane of this server holds its lease"),
			 errdetail("With \"%s\" set, a lane mints only while this server holds its row in the registry; another server holds each of them, or the lease worker has not taken them yet.",
					   "idgen.lease_registry"),
			 errhint("Give each server lanes of its own in \"%s\"; a lane another server held passes on when its lease ends.",
					 "idgen.backfill_shards")));
}

/* ---- minting ---- */

/*
 * The millisecond of t, refused where a lane may not mint: before the first
 * millisecond of the layout version in force, past idgen.max_lead.
 */
int64
idgen_lanes_ms_of(TimestampTz t)
{
	const IdgenLayoutHistory *history = idgen_server_history(NULL);
	const IdgenLayoutVersion *last = &history->versions[history->nversions - 1];
	uint64		low = UINT64CONST(1) << idgen_low_bits(&idgen_layout);
	int64		first_ms = (int64) ((last->first_id + low - 1) / low);
	int64		ms;
	int64		now = idgen_wall_ms();

	my_wall_ms = now;
	if (TIMESTAMP_NOT_FINITE(t))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("cannot mint an ID for an infinite time")));
	if (t < idgen_layout.epoch ||
		(ms = idgen_ms_of_timestamptz(&idgen_layout, t)) < first_ms)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("cannot mint an ID for %s, before the layout in force",
						timestamptz_to_str(t)),
				 errdetail("IDs of this layout begin at %s.",
						   timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, first_ms))),
				 errhint("Times before \"%s\" need a layout with an earlier epoch; see doc/backfill.md.",
						 "idgen.epoch")));
	if (ms - now > idgen_max_lead)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("cannot mint an ID for %s, " INT64_FORMAT " ms ahead of the wall clock",
						timestamptz_to_str(t), ms - now),
				 errdetail("An ID for a given time may be at most \"%s\" (%d ms) ahead.",
						   "idgen.max_lead", idgen_max_lead),
				 errhint("Mint IDs for the future when it comes.")));
	return ms;
}

/*
 * Take up to want states of one lane in [ms, ms + shift], below its fence,
 * without waiting: the count, or 0.
 */
static int64
take_from(IdgenLane *lane, int64 ms, int64 shift, int64 want, uint64 *first)
{
	uint64		old;
	int64		count = 0;

	/* a full barrier: idgen_lane_close_open sees this taker, or we see it */
	pg_atomic_fetch_add_u32(&lane->takers, 1);
	old = pg_atomic_read_u64(&lane->next);
	while (old != LANE_CLOSED)
	{
		int64		fence;
		int64		end_ms;
		uint64		start;
		uint64		end;

		/* the fence of the range old belongs to: a range opens by next */
		pg_read_barrier();
		fence = (int64) pg_atomic_read_u64(&lane->fence);
		start = Max(old, lane_state_word(ms, 0));
		end_ms = Min(fence, ms + shift + 1);
		if (lane_state_ms(start) >= end_ms)
			break;
		end = lane_state_word(end_ms, 0);
		count = (int64) Min((uint64) want, end - start);
		if (pg_atomic_compare_exchange_u64(&lane->next, &old, start + count))
		{
			*first = start;
			break;
		}
		count = 0;
	}
	pg_atomic_fetch_sub_u32(&lane->takers, 1);
	return count;
}

/*
 * Close a lane's open range, with the lock: its used milliseconds kept.
 *
 * A range opened below a closed one may end its cursor exactly where the
 * closed one began; a minter that read that value before the close would
 * then win its compare-and-swap in the new range with the old range's
 * fence.  So the close waits until no minter is between its read of the
 * cursor and its swap: every later minter reads the cursor closed.
 */
void
idgen_lane_close_open(IdgenLane *lane)
{
	uint64		old = pg_atomic_read_u64(&lane->next);
	SpinDelayStatus delay;

	Assert(LWLockHeldByMeInMode(idgen_lanes->lock, LW_EXCLUSIVE));
	if (lane->open_lo < 0)
		return;
	while (!pg_atomic_compare_exchange_u64(&lane->next, &old, LANE_CLOSED))
		;
	init_local_spin_delay(&delay);
	while (pg_atomic_read_u32(&lane->takers) != 0)
		perform_spin_delay(&delay);
	finish_spin_delay(&delay);

	/*
	 * Up to and with the cursor's millisecond: no state of this range is
	 * ever given again, by this lane or by a range opened later.
	 */
	idgen_lane_add_range(&lane->used, lane->open_lo, lane_state_ms(old) + 1);
	lane->open_lo = -1;
	lane->range_gen++;
}

/* Open a range at ms on a lane, with the lock; ms is free on it. */
static void
open_range(IdgenLane *lane, int64 ms)
{
	Assert(!idgen_lane_used(&lane->used, ms));
	idgen_lane_close_open(lane);
	lane->open_lo = ms;
	lane->cap = Min(idgen_lane_used_above(&lane->used, ms),
					idgen_max_ms(&idgen_layout));
	lane->need = ms;
	lane->range_gen++;
	pg_atomic_write_u64(&lane->fence, (uint64) ms);
	pg_write_barrier();
	pg_atomic_write_u64(&lane->next, lane_state_word(ms, 0));
}

/*
 * With the lock: make a lane able to give a millisecond in [ms, ms + shift]
 * once the worker has written, by asking a fence move of a range that
 * reaches it soon, or else by opening a range on the lane least in use.
 * False when no lane can.
 */
static bool
prepare_lane(int64 ms, int64 shift)
{
	IdgenLane  *best = NULL;
	int64		best_ms = 0;

	/*
	 * This process's lane first: an import sweeping forward keeps to one
	 * lane across gaps of up to a day, leaving the other lanes' span free,
	 * instead of opening a range a row on every lane in turn.
	 */
	for (int k = 0, nlanes = idgen_lanes->nlanes; k < nlanes; k++)
	{
		int			i = (Max(my_lane, 0) + k) % nlanes;
		IdgenLane  *lane = &idgen_lanes->lanes[i];
		uint64		next = pg_atomic_read_u64(&lane->next);
		int64		fence = (int64) pg_atomic_read_u64(&lane->fence);
		int64		reach;
		int64		at;

		if (!lane->mints || lane->open_lo < 0 || next == LANE_CLOSED)
			continue;
		reach = lane_horizon(lane, fence);
		if (i == my_lane)
			reach = Max(reach, LANE_SWEEP_GAP_MS);
		at = Max(lane_state_ms(next), ms);
		if (at <= ms + shift && at < lane->cap && at < fence + reach)
		{
			lane->need = Max(lane->need, at);
			return true;
		}
	}

	/*
	 * A time below a cursor (a later one came first) goes to a counted
	 * window (lane_late.c), not to one more range: ranges are few.
	 */
	if (idgen_lanes_late_extend(ms))
		return true;
	if (idgen_lanes_is_late(ms) && idgen_lanes_late_open(ms))
		return true;
	/* a spill allowed: a window at a later millisecond */
	for (int64 at = ms + 1; at <= ms + Min(shift, LANE_SPILL_SCAN_MS); at++)
		if (idgen_lanes_late_extend(at) ||
			(idgen_lanes_is_late(at) && idgen_lanes_late_open(at)))
			return true;

	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];
		int64		at;
		int64		open_hi;

		if (!lane->mints)
			continue;
		at = idgen_lane_free_from(&lane->used, ms);
		/* the open range's milliseconds are used too, up to its fence */
		if (lane->open_lo >= 0 && at >= lane->open_lo &&
			at < (open_hi = (int64) pg_atomic_read_u64(&lane->fence)))
			at = idgen_lane_free_from(&lane->used, open_hi);
		if (at > ms + shift)
			continue;
		if (best == NULL ||
			(best->open_lo >= 0 && lane->open_lo < 0) ||
			((best->open_lo >= 0) == (lane->open_lo >= 0) &&
			 pg_atomic_read_u64(&lane->last_mint_ms) <
			 pg_atomic_read_u64(&best->last_mint_ms)))
		{
			best = lane;
			best_ms = at;
		}
	}
	if (best == NULL)
		return idgen_lanes_late_open(ms);
	open_range(best, best_ms);
	return true;
}

pg_noinline static void
lanes_full(int64 ms)
{
	int			n = 0;
	int			nelsewhere = 0;
	int			npassed = 0;
	int			passed;
	int32		passed_shard = -1;
	bool		passed_live = false;
	bool		passed_restored = false;
	int			full;
	int			used_before;
	StringInfoData detail;

	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	passed = unusable_lane();
	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];

		if (!lane->configured)
			continue;
		if (lane->mints)
			n++;
		else if (lane_may_mint(lane))
			nelsewhere++;		/* its row held by another server */
		else
			npassed++;
	}
	if (passed >= 0)
	{
		passed_shard = idgen_lanes->lanes[passed].used.shard;
		passed_live = idgen_lane_table_was_live(&idgen_lanes->base, passed_shard);
		passed_restored = lane_restored(&idgen_lanes->lanes[passed]);
	}
	idgen_lanes_late_explain(ms, &full, &used_before);
	LWLockRelease(idgen_lanes->lock);

	initStringInfo(&detail);
	appendStringInfo(&detail,
					 n == 1 ?
					 "Of the %d lane that mints here, %d gave all its %d IDs at that millisecond or went past it, and %d used it in a window or range that has ended (a restart ends them; their milliseconds stay used); \"%s\" is %d ms." :
					 "Of the %d lanes that mint here, %d gave all their %d IDs at that millisecond or went past it, and %d used it in a window or range that has ended (a restart ends them; their milliseconds stay used); \"%s\" is %d ms.",
					 n, full, 1 << idgen_layout.sequence_bits, used_before,
					 "idgen.backfill_max_shift", idgen_backfill_max_shift);
	if (nelsewhere > 0)
		appendStringInfo(&detail, "  %d more lane%s leased to other servers.",
						 nelsewhere, nelsewhere == 1 ? " is" : "s are");
	/* the others are full there: a lane passed over is named too */
	if (npassed > 0)
		appendStringInfo(&detail, "  %d more lane%s passed over: lane %d %s.",
						 npassed, npassed == 1 ? " is" : "s are", passed_shard,
						 passed_live ? "was minted live" :
						 passed_restored ? "was named by a restore" :
						 "is new to this cluster (named since the lanes were attested)");
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("no backfill lane can mint at %s",
					timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, ms))),
			 errdetail("%s", detail.data),
			 npassed > 0 && passed_live ?
			 errhint("Remove shard %d from \"%s\": a shard minted live cannot be a lane.",
					 passed_shard, "idgen.backfill_shards") :
			 npassed > 0 ?
			 errhint("Attest the lanes passed over with SELECT idgen_lanes_init() once SELECT idgen_advance_past(max(id)) has run, one per shard, on the keys that may hold their IDs (the restored keys, for a lane a restore named); add lanes to \"%s\", or allow IDs a few milliseconds later with \"%s\".",
					 "idgen.backfill_shards", "idgen.backfill_max_shift") :
			 errhint("Add lanes to \"%s\", or allow IDs a few milliseconds later with \"%s\".",
					 "idgen.backfill_shards", "idgen.backfill_max_shift")));
}

static void
count_run(IdgenLane *lane, int64 ms, const IdgenLaneRun *run)
{
	int64		shift = lane_state_ms(run->first + (uint64) run->count - 1) - ms;
	uint64		largest = pg_atomic_read_u64(&lane->largest_shift);

	pg_atomic_fetch_add_u64(&lane->minted, (uint64) run->count);
	if (pg_atomic_read_u64(&lane->last_mint_ms) != (uint64) Max(my_wall_ms, 0))
		pg_atomic_write_u64(&lane->last_mint_ms, (uint64) Max(my_wall_ms, 0));
	if (lane_state_ms(run->first) > ms || shift > 0)
	{
		pg_atomic_fetch_add_u64(&lane->spilled, (uint64) run->count);
		while (largest < (uint64) shift &&
			   !pg_atomic_compare_exchange_u64(&lane->largest_shift, &largest,
											   (uint64) shift))
			;
	}
}

static bool
any_lane_configured(void)
{
	for (int i = 0; i < idgen_lanes->nlanes; i++)
		if (idgen_lanes->lanes[i].configured)
			return true;
	return false;
}

/*
 * The exact millisecond from any lane: from a window that holds it, or from
 * a cursor, the one that gave last first.
 */
static bool
take_exact(int64 ms, int64 want, IdgenLaneRun *run)
{
	int			late = idgen_lanes_take_late(ms, want, run);

	if (late >= 0)
	{
		count_run(&idgen_lanes->lanes[late], ms, run);
		return true;
	}

	/* an import keeps to one lane while it can, without scanning full ones */
	for (int k = 0, nlanes = idgen_lanes->nlanes; k < nlanes; k++)
	{
		int			i = (Max(my_lane, 0) + k) % nlanes;
		IdgenLane  *lane = &idgen_lanes->lanes[i];

		uint64		next = pg_atomic_read_u64(&lane->next);

		/* a cursor past ms gives nothing there: no need to stop it */
		if (!lane->mints || next == LANE_CLOSED || lane_state_ms(next) > ms)
			continue;
		run->count = take_from(lane, ms, 0, want, &run->first);
		if (run->count > 0)
		{
			run->shard = lane->used.shard;
			my_lane = i;
			count_run(lane, ms, run);
			return true;
		}
	}
	return false;
}

/*
 * The nearest later millisecond within shift that any lane can give now:
 * the lowest, whichever lane holds it.
 */
static bool
take_nearest(int64 ms, int64 shift, int64 want, IdgenLaneRun *run)
{
	for (;;)
	{
		IdgenLane  *best = NULL;
		int64		best_at = ms + shift + 1;

		for (int i = 0, nlanes = idgen_lanes->nlanes; i < nlanes; i++)
		{
			IdgenLane  *lane = &idgen_lanes->lanes[i];
			uint64		next;
			int64		fence;
			int64		at;

			if (!lane->mints)
				continue;
			next = pg_atomic_read_u64(&lane->next);
			if (next == LANE_CLOSED)
				continue;
			pg_read_barrier();
			fence = (int64) pg_atomic_read_u64(&lane->fence);
			at = lane_state_ms(Max(next, lane_state_word(ms, 0)));
			if (at < Min(fence, best_at))
			{
				best = lane;
				best_at = at;
			}
		}
		/* a window's millisecond below the best cursor's is nearer */
		for (int64 at = ms + 1; at < Min(best_at, ms + 1 + LANE_SPILL_SCAN_MS); at++)
		{
			int			late = idgen_lanes_take_late(at, want, run);

			if (late >= 0)
			{
				my_lane = late;
				count_run(&idgen_lanes->lanes[late], ms, run);
				return true;
			}
		}
		if (best == NULL)
			return false;
		run->count = take_from(best, ms, best_at - ms, want, &run->first);
		if (run->count > 0)
		{
			run->shard = best->used.shard;
			my_lane = (int) (best - idgen_lanes->lanes);
			count_run(best, ms, run);
			return true;
		}
		/* another minter took it first: look again */
	}
}

/*
 * Up to want IDs for millisecond ms from one lane: run says which.  The
 * exact millisecond first, from any lane, without waiting or by asking the
 * worker; then, if idgen.backfill_max_shift allows, the nearest later one.
 */
void
idgen_lanes_reserve(int64 ms, int64 want, IdgenLaneRun *run)
{
	int64		waited_us = 0;
	int			shift_allowed = idgen_backfill_max_shift;
	bool		waited_restores = false;

	idgen_check_preloaded();
	idgen_check_not_in_recovery();

	if (unlikely(!any_lane_configured()))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no backfill lane is configured"),
				 errdetail("IDs for a given time are minted on shards reserved for it, named by \"%s\".",
						   "idgen.backfill_shards"),
				 errhint("Set \"%s\" to shards this node never mints live, restart the server, and run SELECT idgen_lanes_init().",
						 "idgen.backfill_shards")));

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (likely(idgen_lanes->unknown == LANES_KNOWN) &&
			take_exact(ms, want, run))
			return;
		LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
		idgen_lanes_refuse_unusable();	/* releases the lock if it refuses */
		if (prepare_lane(ms, 0))
		{
			idgen_lanes_ask_and_wait(&waited_us);	/* releases the lock */
			continue;
		}
		LWLockRelease(idgen_lanes->lock);

		if (shift_allowed == 0)
		{
			if (!waited_restores && restore_holds_a_lane())
			{
				await_restores();
				waited_restores = true;
				continue;
			}
			break;
		}
		if (take_nearest(ms, shift_allowed, want, run))
			return;
		LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
		idgen_lanes_refuse_unusable();
		if (prepare_lane(ms, shift_allowed))
		{
			idgen_lanes_ask_and_wait(&waited_us);
			continue;
		}
		LWLockRelease(idgen_lanes->lock);
		/* a lane held by an open restore may give it once that ends */
		if (!waited_restores && restore_holds_a_lane())
		{
			await_restores();
			waited_restores = true;
			continue;
		}
		break;
	}
	lanes_full(ms);
}

int64
idgen_lane_run_id(const IdgenLaneRun *run, int64 i)
{
	uint64		state = run->first + (uint64) i;

	return idgen_encode(lane_state_ms(state), run->shard,
						idgen_state_sequence(state, idgen_layout.sequence_bits));
}
