/*-------------------------------------------------------------------------
 *
 * generator.h
 *		The generator's shared state and the per-backend counters.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/generator.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_GENERATOR_H
#define IDGEN_GENERATOR_H

#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

#include "idgen_compat.h"

/* What each backend counts; summed by idgen_stats. */
typedef enum IdgenCounter
{
	IDGEN_MINTED,
	IDGEN_BORROWED_MS,			/* a full sequence carried into a later ms */
	IDGEN_CLOCK_BEHIND,			/* mints that found the wall clock behind */
	IDGEN_CLOCK_STEPS_BACK,		/* wall clock read earlier than the last read */
	IDGEN_WAITS,				/* sleeps for the wall clock or the fence */
	IDGEN_WAIT_US,
	IDGEN_MAX_WAIT_ERRORS,
	IDGEN_FENCE_WAITS,
	IDGEN_NUM_COUNTERS
} IdgenCounter;

/*
 * One per PGPROC.  Only the process in the slot writes it, so the counters
 * need atomic visibility but no atomic read-modify-write.  Counters are
 * never reset: a process taking over a slot records where they stood, so
 * totals last since start and a pid's own figures are the difference.
 */
typedef struct IdgenBackendSlot
{
	pg_atomic_uint64 counters[IDGEN_NUM_COUNTERS];
	pg_atomic_uint64 last_id;
	uint64		base[IDGEN_NUM_COUNTERS];
	Oid			userid;			/* session user, as pg_stat_activity's */
	int			pid;
}
#ifdef pg_attribute_aligned
/* neighbouring processes never write the same cache line */
			pg_attribute_aligned(PG_CACHE_LINE_SIZE)
#endif
IdgenBackendSlot;

typedef struct IdgenShared
{
	/* (ms << sequence_bits) | sequence of the last ID minted; alone in its line */
	pg_atomic_uint64 state;
	char		pad1[PG_CACHE_LINE_SIZE - sizeof(pg_atomic_uint64)];

	/* Read on every mint, written a few times a second. */
	pg_atomic_uint64 fence;		/* a millisecond never reached */
	pg_atomic_uint64 fence_wake_at; /* minting here wakes the worker */
	pg_atomic_uint32 fence_wanted;	/* a caller asked for a new fence */
	char		pad2[PG_CACHE_LINE_SIZE - 2 * sizeof(pg_atomic_uint64) -
					 sizeof(pg_atomic_uint32)];

	LWLock	   *fence_lock;		/* serialises fence writers */
	ConditionVariable fence_cv; /* broadcast when the fence moves */
	slock_t		mutex;			/* protects worker_latch */
	Latch	   *worker_latch;	/* the fence worker's, or NULL */
	pg_atomic_uint64 fence_advances;

	int			nslots;
	IdgenBackendSlot slots[FLEXIBLE_ARRAY_MEMBER];
} IdgenShared;

extern IDGEN_HOT_GLOBAL IdgenShared *idgen_shared;

/* Settings the generator reads. */
extern IDGEN_HOT_GLOBAL int idgen_max_lead;
extern IDGEN_HOT_GLOBAL int idgen_max_wait;

extern Size idgen_shmem_size(void);
extern void idgen_shmem_init(int64 fence_ms);

extern int64 idgen_mint(int32 shard);
extern void idgen_publish_fence(int64 fence_ms, int64 wake_at_ms);
extern void idgen_raise_state(int64 ms);
extern void idgen_wake_worker(void);

#endif							/* IDGEN_GENERATOR_H */
