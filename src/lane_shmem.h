/*-------------------------------------------------------------------------
 *
 * lane_shmem.h
 *		The backfill lanes' shared memory, between lane.c (minting) and
 *		lane_durable.c (what is durable and what is known).  Nothing else
 *		includes it.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lane_shmem.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LANE_SHMEM_H
#define IDGEN_LANE_SHMEM_H

#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"

#include "idgen_compat.h"
#include "lane.h"
#include "lane_table.h"
#include "layout.h"
#include "settings.h"

#define LANE_CLOSED		PG_UINT64_MAX

typedef struct IdgenLane
{
	/* read and moved by minters */
	pg_atomic_uint64 next;		/* next free state word, or LANE_CLOSED */
	pg_atomic_uint64 fence;		/* the open range stays below this ms */
	pg_atomic_uint32 takers;	/* minters between reading next and CAS */
	bool		mints;			/* configured, attested, never live */
	pg_atomic_uint64 last_mint_ms;	/* wall clock: the lane least in use */
	pg_atomic_uint64 minted;
	pg_atomic_uint64 spilled;
	pg_atomic_uint64 largest_shift;

	/* under the lock */
	int64		open_lo;		/* -1: no open range */
	int64		cap;			/* the open range never reaches it */
	int64		need;			/* a millisecond asked to be below the fence */
	uint64		range_gen;		/* bumped when a range closes or opens */
	bool		configured;		/* in idgen.backfill_shards */
	bool		leased;			/* with a lease registry: its row is ours */
	int			restoring;		/* open restores whose dump names it */
	IdgenLaneEntry used;		/* closed ranges, the shard, its flags */

	/* the late window (lane_late.c): counted, published once durable */
	pg_atomic_uint64 late_lo;
	pg_atomic_uint64 late_hi;	/* 0: none */
	int64		late_want_lo;	/* under the lock: asked, in used */
	int64		late_want_hi;	/* 0: none asked */
	uint64		late_gen;		/* bumped when asked or ended */
} IdgenLane;

typedef struct IdgenLanes
{
	LWLock	   *lock;
	ConditionVariable cv;		/* broadcast when the worker wrote */
	pg_atomic_uint64 asked;		/* writes asked for, under the lock */
	pg_atomic_uint64 written;	/* the last asked the worker made durable */
	pg_atomic_uint32 restores_open;	/* restores naming lanes, still open */
	pg_atomic_uint32 late_takers;	/* minters in the late counts */
	pg_atomic_uint32 late_closed;	/* the counts are being emptied */
	pg_atomic_uint32 late_taken;	/* counts' slots taken */
	pg_atomic_uint32 late_windows;	/* windows published, or 0 */
	IdgenLanesUnknown unknown;
	bool		leased_mode;	/* a lease registry: lanes mint when leased */
	/* with one, a table written and logged, published once the registry has its ranges */
	pg_atomic_uint64 pending_asked;	/* the asks it answers; 0: none yet */
	IdgenLanesPending pending;	/* under the lock */
	IdgenLaneTable base;		/* layout and live shards; lanes below */
	int			nlanes;
	IdgenLane	lanes[IDGEN_LANE_TABLE_MAX];
} IdgenLanes;

extern IdgenLanes *idgen_lanes;

/* A cursor is a state word of the configured layout (layout.h). */
static inline uint64
lane_state_word(int64 ms, uint64 seq)
{
	return idgen_state_word(ms, seq, idgen_layout.sequence_bits);
}

static inline int64
lane_state_ms(uint64 state)
{
	return idgen_state_ms(state, idgen_layout.sequence_bits);
}

/*
 * How far past an open range's fence the worker moves it: a horizon that
 * doubles with the range, so that a sweeping import asks ever less often.
 */
static inline int64
lane_horizon(const IdgenLane *lane, int64 fence)
{
	return Max((int64) idgen_fence_horizon, fence - lane->open_lo);
}

static inline bool
lane_attested(const IdgenLane *lane)
{
	return (lane->used.flags & IDGEN_LANE_ATTESTED) != 0;
}

/* A restore named it, committed (durable) or still open (shared memory). */
static inline bool
lane_restored(const IdgenLane *lane)
{
	return (lane->used.flags & IDGEN_LANE_RESTORED) != 0 || lane->restoring > 0;
}

/*
 * Whether a lane may mint here once no open restore holds it, its lease
 * aside: named, attested, never a live shard, and named by no restore
 * committed since.  With the lock held.
 */
static inline bool
lane_may_mint_unheld(const IdgenLane *lane)
{
	return lane->configured && lane_attested(lane) &&
		(lane->used.flags & IDGEN_LANE_RESTORED) == 0 &&
		!idgen_lane_table_was_live(&idgen_lanes->base, lane->used.shard);
}

/* The same, and no open restore holds it: whether it may mint now. */
static inline bool
lane_may_mint(const IdgenLane *lane)
{
	return lane_may_mint_unheld(lane) && lane->restoring == 0;
}

/* lane.c */
extern IdgenLane *idgen_lane_of(int32 shard);
extern void idgen_lane_close_open(IdgenLane *lane);
extern char *idgen_shard_list(const int32 *shards, int n);
extern bool idgen_lanes_ask_and_await_up_to(int max_wait_ms, int64 *waited_us);
extern bool idgen_lanes_ask_and_await(int64 *waited_us);
extern void idgen_lanes_ask_and_wait(int64 *waited_us);
idgen_noreturn extern void idgen_lanes_refuse_unknown(IdgenLanesUnknown unknown);
idgen_noreturn extern void idgen_lanes_refuse_not_durable(void);
idgen_noreturn extern void idgen_lanes_refuse_lane(IdgenLane *lane);
extern void idgen_lanes_refuse_unusable(void);

/* lane_durable.c */
extern void idgen_lanes_set_mints(void);

/* lane_late.c */
extern Size idgen_lanes_late_shmem_size(void);
extern void idgen_lanes_late_attach(bool init);
extern int	idgen_lanes_take_late(int64 ms, int64 want, IdgenLaneRun *run);
extern bool idgen_lanes_late_extend(int64 ms);
extern bool idgen_lanes_late_open(int64 ms);
extern bool idgen_lanes_is_late(int64 ms);
extern void idgen_lane_close_late(IdgenLane *lane);
extern void idgen_lanes_late_publish(IdgenLane *lane, uint64 gen, int64 lo, int64 hi);
extern void idgen_lanes_late_explain(int64 ms, int *full, int *used_before);

/*
 * With the lock: a lane's open range and its window end, their spans kept
 * as used; what it gives next opens anew.
 */
static inline void
idgen_lane_stop(IdgenLane *lane)
{
	idgen_lane_close_open(lane);
	idgen_lane_close_late(lane);
}

#endif							/* IDGEN_LANE_SHMEM_H */
