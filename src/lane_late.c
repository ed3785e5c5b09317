/*-------------------------------------------------------------------------
 *
 * lane_late.c
 *		Backfill lanes for times that come out of order: a window per lane
 *		whose milliseconds are counted.
 *
 * A lane's cursor (lane.c) serves times in order and forgets what it
 * passed.  A time below a cursor (a late event, an import not sorted) goes
 * to a lane's window instead: a span of milliseconds the lane never used,
 * recorded as used in the lanes' table (so durable, and in the lane's
 * registry row) before any ID is given in it.  In it a shared table counts
 * the IDs given at each millisecond, and an ID at ms is (ms, lane, count):
 * minters take counts by compare-and-swap, no lock.
 *
 * The counts live in memory only.  When the server stops or crashes the
 * window ends and its span stays used by the lane for good: a later window
 * opens on another lane there, or on this one elsewhere, and no count is
 * ever needed again.  When the counts are all taken every window ends the
 * same way, and opens again where it is asked.  A window grows to a time
 * asked within its width of it, so that events spread over a month stay on
 * one lane and take a write only for a time beyond all before (a few dozen
 * in 200,000 random ones), and a crash ends few lanes there.
 *
 * doc/design.md, "Times out of order", says why this is safe.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lane_late.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/s_lock.h"
#include "storage/shmem.h"

#include "generator.h"
#include "lane_shmem.h"
#include "shard.h"

/* the lanes' shared struct: here, on the lowest floor of the files using it */
IdgenLanes *idgen_lanes = NULL;

/* a new window's reach on each side of the time that opens it */
#define LATE_FIRST_REACH_MS	INT64CONST(60000)
/* the most a growing window reaches past the time that grows it */
#define LATE_MAX_MARGIN_MS	INT64CONST(3600000)
/* the widest gap a window grows across when no lane is free for a new one */
#define LATE_GAP_MS			INT64CONST(86400000)

typedef struct IdgenLateSlot
{
	pg_atomic_uint64 key;		/* (ms << 7) | (lane index + 1); 0: free */
	pg_atomic_uint32 count;		/* IDs given at ms by the lane */
} IdgenLateSlot;

/* this process: the shared counts, and their size less one (0: none) */
static IdgenLateSlot *late_slots = NULL;
static uint32 late_mask = 0;

static uint32
slots_wanted(void)
{
	uint32		n = 1024;

	/* no lane, no counts: a server without backfill pays nothing */
	if (idgen_backfill_shards == NULL || idgen_backfill_shards[0] == '\0')
		return 0;
	while (n < (uint32) idgen_backfill_counters)
		n <<= 1;
	return n;
}

Size
idgen_lanes_late_shmem_size(void)
{
	return mul_size(slots_wanted(), sizeof(IdgenLateSlot));
}

/* With AddinShmemInitLock held; init on a fresh segment. */
void
idgen_lanes_late_attach(bool init)
{
	uint32		n = slots_wanted();
	bool		found;

	if (n == 0)
		return;
	late_slots = ShmemInitStruct("idgen late counts", n * sizeof(IdgenLateSlot), &found);
	late_mask = n - 1;
	if (found && !init)
		return;
	for (uint32 i = 0; i < n; i++)
	{
		pg_atomic_init_u64(&late_slots[i].key, 0);
		pg_atomic_init_u32(&late_slots[i].count, 0);
	}
}

/* Slots past three quarters taken: probes stay short. */
static uint32
late_limit(void)
{
	return (late_mask + 1) / 4 * 3;
}

/* A 64-bit mix (MurmurHash3's finalizer): neighbouring milliseconds spread. */
static inline uint32
slot_hash(uint64 k)
{
	k ^= k >> 33;
	k *= UINT64CONST(0xff51afd7ed558ccd);
	k ^= k >> 33;
	k *= UINT64CONST(0xc4ceb9fe1a85ec53);
	k ^= k >> 33;
	return (uint32) k;
}

/* The slot of a lane's millisecond, taken if new; NULL when all are taken. */
static IdgenLateSlot *
find_slot(int lane_index, int64 ms)
{
	uint64		key = ((uint64) ms << 7) | (uint64) (lane_index + 1);
	uint32		h = slot_hash(key) & late_mask;

	for (uint32 probes = 0; probes <= late_mask; probes++, h = (h + 1) & late_mask)
	{
		IdgenLateSlot *slot = &late_slots[h];
		uint64		k = pg_atomic_read_u64(&slot->key);

		if (k == key)
			return slot;
		if (k != 0)
			continue;
		if (pg_atomic_read_u32(&idgen_lanes->late_taken) >= late_limit())
			return NULL;
		if (pg_atomic_compare_exchange_u64(&slot->key, &k, key))
		{
			pg_atomic_fetch_add_u32(&idgen_lanes->late_taken, 1);
			return slot;
		}
		if (k == key)
			return slot;
	}
	return NULL;
}

/*
 * Up to want IDs at ms from a window that holds it, without waiting: the
 * lane's index, or -1 if none can give one now.
 */
int
idgen_lanes_take_late(int64 ms, int64 want, IdgenLaneRun *run)
{
	uint32		cap = (uint32) 1 << idgen_layout.sequence_bits;
	int			taken = -1;

	if (pg_atomic_read_u32(&idgen_lanes->late_windows) == 0)
		return -1;
	/* a full barrier: an end of the windows sees this taker, or we see it */
	pg_atomic_fetch_add_u32(&idgen_lanes->late_takers, 1);
	if (pg_atomic_read_u32(&idgen_lanes->late_closed) == 0)
	{
		for (int i = 0, n = idgen_lanes->nlanes; i < n && taken < 0; i++)
		{
			IdgenLane  *lane = &idgen_lanes->lanes[i];
			uint64		hi = pg_atomic_read_u64(&lane->late_hi);
			IdgenLateSlot *slot;
			uint32		count;

			if (!lane->mints || (uint64) ms >= hi)
				continue;
			pg_read_barrier();
			if ((uint64) ms < pg_atomic_read_u64(&lane->late_lo))
				continue;
			if ((slot = find_slot(i, ms)) == NULL)
				break;			/* the counts are full: the slow path ends them */
			count = pg_atomic_read_u32(&slot->count);
			while (count < cap)
			{
				uint32		take = (uint32) Min((int64) (cap - count), want);

				if (pg_atomic_compare_exchange_u32(&slot->count, &count, count + take))
				{
					run->shard = lane->used.shard;
					run->first = lane_state_word(ms, count);
					run->count = take;
					taken = i;
					break;
				}
			}
		}
	}
	pg_atomic_fetch_sub_u32(&idgen_lanes->late_takers, 1);
	return taken;
}

/* With the lock: wait until no minter is in the counts. */
static void
await_late_takers(void)
{
	SpinDelayStatus delay;

	pg_memory_barrier();
	init_local_spin_delay(&delay);
	while (pg_atomic_read_u32(&idgen_lanes->late_takers) != 0)
		perform_spin_delay(&delay);
	finish_spin_delay(&delay);
}

static void
end_window(IdgenLane *lane)
{
	if (lane->late_want_hi > 0 && pg_atomic_read_u64(&lane->late_hi) > 0)
		pg_atomic_fetch_sub_u32(&idgen_lanes->late_windows, 1);
	pg_atomic_write_u64(&lane->late_hi, 0);
	lane->late_want_lo = 0;
	lane->late_want_hi = 0;
	lane->late_gen++;
}

/*
 * With the lock: end a lane's window.  Its span stays used; its counts stay
 * in the table, never looked up again (no window opens on a used span).
 */
void
idgen_lane_close_late(IdgenLane *lane)
{
	Assert(LWLockHeldByMeInMode(idgen_lanes->lock, LW_EXCLUSIVE));
	if (lane->late_want_hi == 0)
		return;
	end_window(lane);
	/* new minters take the slow path meanwhile, so the wait ends */
	pg_atomic_write_u32(&idgen_lanes->late_closed, 1);
	await_late_takers();
	pg_atomic_write_u32(&idgen_lanes->late_closed, 0);
}

/* With the lock: the counts are all taken; every window ends, they empty. */
static void
empty_counts(void)
{
	pg_atomic_write_u32(&idgen_lanes->late_closed, 1);
	for (int i = 0; i < idgen_lanes->nlanes; i++)
		end_window(&idgen_lanes->lanes[i]);
	await_late_takers();
	for (uint32 i = 0; i <= late_mask; i++)
	{
		pg_atomic_write_u64(&late_slots[i].key, 0);
		pg_atomic_write_u32(&late_slots[i].count, 0);
	}
	pg_atomic_write_u32(&idgen_lanes->late_taken, 0);
	pg_write_barrier();
	pg_atomic_write_u32(&idgen_lanes->late_closed, 0);
}

/*
 * The worker wrote a table with the window a lane had asked (gen): minters
 * may count in it.  With the lock.  A window only grows while it lives, so
 * a minter reading the bounds of two sizes reads a span written whole.
 */
void
idgen_lanes_late_publish(IdgenLane *lane, uint64 gen, int64 lo, int64 hi)
{
	if (hi <= 0 || lane->late_gen != gen)
		return;
	if (pg_atomic_read_u64(&lane->late_hi) == 0)
	{
		pg_atomic_write_u64(&lane->late_lo, (uint64) lo);
		pg_write_barrier();
		pg_atomic_write_u64(&lane->late_hi, (uint64) hi);
		pg_atomic_fetch_add_u32(&idgen_lanes->late_windows, 1);
		return;
	}
	if ((uint64) lo < pg_atomic_read_u64(&lane->late_lo))
		pg_atomic_write_u64(&lane->late_lo, (uint64) lo);
	if ((uint64) hi > pg_atomic_read_u64(&lane->late_hi))
		pg_atomic_write_u64(&lane->late_hi, (uint64) hi);
}

/* ---- where a window goes, with the lock ---- */

/*
 * The lowest millisecond a span ending at hi may reach down to on a lane:
 * above its used ranges and its cursor's range.
 */
static int64
free_down_to(IdgenLane *lane, int64 hi)
{
	int64		bound = 0;

	for (int i = 0; i < lane->used.nranges; i++)
		if (lane->used.ranges[i].lo < hi)
			bound = Max(bound, Min(lane->used.ranges[i].hi, hi));
	if (lane->open_lo >= 0 && lane->open_lo < hi)
	{
		int64		fence = (int64) pg_atomic_read_u64(&lane->fence);

		bound = Max(bound, Min(Max(fence, lane->open_lo + 1), hi));
	}
	return bound;
}

/* The end (exclusive) a span starting at lo may reach up to on a lane. */
static int64
free_up_to(IdgenLane *lane, int64 lo)
{
	int64		bound = idgen_max_ms(&idgen_layout);

	/* no lane mints past the wall clock and max_lead (idgen_lanes_floor_ms) */
	bound = Min(bound, idgen_wall_ms() + idgen_max_lead + 1);
	for (int i = 0; i < lane->used.nranges; i++)
		if (lane->used.ranges[i].hi > lo)
			bound = Min(bound, Max(lane->used.ranges[i].lo, lo));
	if (lane->open_lo >= lo)
		bound = Min(bound, lane->open_lo);
	else if (lane->open_lo >= 0 &&
			 Max((int64) pg_atomic_read_u64(&lane->fence), lane->open_lo + 1) > lo)
		bound = lo;
	return bound;
}

/*
 * Ask for a lane's window to be [lo, hi): used from now, published once the
 * worker has written it.  A cursor's range below it stops short of it.
 */
static void
ask_window(IdgenLane *lane, int64 lo, int64 hi)
{
	Assert(lo < hi);
	idgen_lane_add_range(&lane->used, lo, hi);
	lane->late_want_lo = lo;
	lane->late_want_hi = hi;
	lane->late_gen++;
	if (lane->open_lo >= 0 && lane->open_lo < lo && lane->cap > lo)
	{
		/* a fence in flight past lo is written, never published */
		lane->cap = lo;
		lane->range_gen++;
	}
}

/* Whether a lane's window (asked or published) holds ms. */
static bool
window_holds(const IdgenLane *lane, int64 ms)
{
	return lane->late_want_hi > 0 &&
		ms >= lane->late_want_lo && ms < lane->late_want_hi;
}

/* How far ms lies outside a lane's window. */
static int64
window_gap(const IdgenLane *lane, int64 ms)
{
	return ms < lane->late_want_lo ? lane->late_want_lo - ms :
		ms - lane->late_want_hi;
}

/* Whether a window could open at ms on a lane. */
static bool
free_at(IdgenLane *lane, int64 ms)
{
	return free_down_to(lane, ms + 1) <= ms && free_up_to(lane, ms) > ms;
}

/* Ask a new window around ms on a lane free there. */
static void
open_window_at(IdgenLane *lane, int64 ms)
{
	ask_window(lane,
			   Max(Max(ms - LATE_FIRST_REACH_MS, 0), free_down_to(lane, ms + 1)),
			   Min(ms + 1 + LATE_FIRST_REACH_MS, free_up_to(lane, ms)));
}

/* Of two lanes (the first may be NULL), the one that gave last longer ago. */
static IdgenLane *
less_used(IdgenLane *a, IdgenLane *b)
{
	if (a == NULL || pg_atomic_read_u64(&b->last_mint_ms) <
		pg_atomic_read_u64(&a->last_mint_ms))
		return b;
	return a;
}

/*
 * Grow a lane's window to hold ms, if ms is within the window's width of it
 * (or at any distance); false if its neighbours forbid.  It reaches past ms
 * by a quarter of its width, a minute to an hour: few writes for times that
 * sweep, and since what a window spans a restart leaves used, little more
 * than the times asked.
 */
static bool
grow_window(IdgenLane *lane, int64 ms, bool any_distance)
{
	int64		lo = lane->late_want_lo;
	int64		hi = lane->late_want_hi;
	int64		reach = Max(LATE_FIRST_REACH_MS, hi - lo);
	/* a quarter of its width past ms, within a minute and an hour */
	int64		margin = Min(Max(LATE_FIRST_REACH_MS, (hi - lo) / 4), LATE_MAX_MARGIN_MS);

	if (ms < lo)
	{
		if (!any_distance && lo - ms > reach)
			return false;
		lo = Max(Max(ms - margin, 0), free_down_to(lane, lo));
		if (lo > ms)
			return false;
	}
	else if (ms >= hi)
	{
		if (!any_distance && ms - hi >= reach)
			return false;
		hi = Min(ms + 1 + margin, free_up_to(lane, hi));
		if (hi <= ms)
			return false;
	}
	ask_window(lane, lo, hi);
	return true;
}

static bool
lane_counts(const IdgenLane *lane)
{
	return late_mask != 0 && lane->mints;
}

/*
 * Whether ms sits below a lane's cursor: another time, later, came first,
 * and a new range of the cursor's kind at ms would be one more range.
 */
bool
idgen_lanes_is_late(int64 ms)
{
	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];
		uint64		next = pg_atomic_read_u64(&lane->next);

		if (lane->mints && lane->open_lo >= 0 && next != LANE_CLOSED &&
			lane_state_ms(next) > ms)
			return true;
	}
	return false;
}

/*
 * With the lock: make a window hold ms once the worker has written, if one
 * is asked already or one near it can grow.  False if none.
 */
bool
idgen_lanes_late_extend(int64 ms)
{
	IdgenLane  *nearest = NULL;
	int64		nearest_gap = PG_INT64_MAX;

	if (late_mask == 0)
		return false;
	if (pg_atomic_read_u32(&idgen_lanes->late_taken) >= late_limit())
		empty_counts();
	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];
		int64		gap;

		if (!lane_counts(lane) || lane->late_want_hi == 0)
			continue;
		if (window_holds(lane, ms))
		{
			/* asked, not written yet: wait for it; written: full at ms */
			if (pg_atomic_read_u64(&lane->late_hi) <= (uint64) ms ||
				pg_atomic_read_u64(&lane->late_lo) > (uint64) ms)
				return true;
			continue;
		}
		gap = window_gap(lane, ms);
		if (gap < nearest_gap)
		{
			nearest = lane;
			nearest_gap = gap;
		}
	}
	return nearest != NULL && grow_window(nearest, ms, false);
}

/*
 * With the lock: a window for ms where none near can grow: on a lane with
 * none, the one least in use; else the nearest within a day that can grow
 * so far; else the window least in use ends, and opens at ms.  False if no
 * lane can give ms.
 */
bool
idgen_lanes_late_open(int64 ms)
{
	IdgenLane  *fresh = NULL;	/* no window, free at ms */
	IdgenLane  *mover = NULL;	/* a window elsewhere, free at ms */
	IdgenLane  *nearest = NULL;
	int64		nearest_gap = PG_INT64_MAX;

	if (late_mask == 0)
		return false;
	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];

		if (!lane_counts(lane) || window_holds(lane, ms))
			continue;
		if (lane->late_want_hi > 0 && window_gap(lane, ms) < nearest_gap)
		{
			nearest = lane;
			nearest_gap = window_gap(lane, ms);
		}
		if (!free_at(lane, ms))
			continue;
		if (lane->late_want_hi == 0)
			fresh = less_used(fresh, lane);
		else
			mover = less_used(mover, lane);
	}
	if (fresh != NULL)
	{
		open_window_at(fresh, ms);
		return true;
	}
	/* growing spans the gap for good: a day at most, else a window moves */
	if (nearest != NULL && nearest_gap <= LATE_GAP_MS && grow_window(nearest, ms, true))
		return true;
	if (mover == NULL)
		return false;
	idgen_lane_close_late(mover);
	open_window_at(mover, ms);
	return true;
}

/*
 * For an error: of the lanes that mint, how many have a window full at ms
 * or a cursor gone past it, and how many used ms before (a window or range
 * that ended).
 */
void
idgen_lanes_late_explain(int64 ms, int *full, int *used_before)
{
	*full = 0;
	*used_before = 0;
	for (int i = 0; i < idgen_lanes->nlanes; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];
		uint64		next = pg_atomic_read_u64(&lane->next);

		if (!lane->mints)
			continue;

		/* its window counts there, or its cursor went past it */
		if (window_holds(lane, ms) ||
			(lane->open_lo >= 0 && ms >= lane->open_lo && next != LANE_CLOSED &&
			 ms < lane_state_ms(next)))
			(*full)++;
		else if (idgen_lane_used(&lane->used, ms))
			(*used_before)++;
	}
}
