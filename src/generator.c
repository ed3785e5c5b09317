/*-------------------------------------------------------------------------
 *
 * generator.c
 *		Minting IDs from one word of shared memory.
 *
 * The node's generator is one 64-bit word, state = (ms << sequence_bits) |
 * sequence, holding the last (millisecond, sequence) pair minted for any
 * shard.  Minting is a compare-and-swap loop:
 *
 *		new = max(state + 1, now << sequence_bits)
 *
 * The +1 never lets a value repeat (invariants 1 and 2 of doc/design.md),
 * carries into the next millisecond when a sequence is full, and max()
 * ignores a wall clock that stepped back.  Every shard shares the word: a
 * node mints at most 2^sequence_bits IDs a millisecond in all, and its IDs
 * are strictly increasing in the order they are minted, whatever their
 * shard.
 *
 * Two bounds make callers wait instead of minting:
 *	- the generator's millisecond may run at most idgen.max_lead ahead of the
 *	  wall clock (after borrowing, or a clock step back);
 *	- it never reaches the durable fence (fence.c), so that nothing minted
 *	  before a crash, restart or promotion can be minted again.
 * A caller that would wait longer than idgen.max_wait in all gets an error.
 * No lock, no table, no WAL on the minting path.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/generator.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/twophase.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"

#include "generator.h"
#include "idgen_compat.h"
#include "layout.h"
#include "wait_event.h"

IdgenShared *idgen_shared = NULL;

int			idgen_max_lead = 1000;
int			idgen_max_wait = 10000;

static IdgenBackendSlot *my_slot = NULL;
static int64 my_last_wall_ms = PG_INT64_MIN;

static int
idgen_num_slots(void)
{
	/* Every PGPROC: backends, auxiliary processes and prepared xacts. */
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

Size
idgen_shmem_size(void)
{
	return add_size(offsetof(IdgenShared, slots),
					mul_size(idgen_num_slots(), sizeof(IdgenBackendSlot)));
}

/*
 * Called by the postmaster with AddinShmemInitLock held, on a fresh segment.
 * The generator starts at the recovered fence: nothing minted before it can
 * be reached again.
 */
void
idgen_shmem_init(int64 fence_ms)
{
	IdgenShared *sh = idgen_shared;

	fence_ms = Max(fence_ms, 0);
	pg_atomic_init_u64(&sh->state, (uint64) fence_ms << idgen_layout.sequence_bits);
	pg_atomic_init_u64(&sh->fence, (uint64) fence_ms);
	pg_atomic_init_u64(&sh->fence_wake_at, (uint64) fence_ms);
	pg_atomic_init_u32(&sh->fence_wanted, 0);
	sh->fence_lock = &(GetNamedLWLockTranche("idgen"))->lock;
	ConditionVariableInit(&sh->fence_cv);
	SpinLockInit(&sh->mutex);
	sh->worker_latch = NULL;
	pg_atomic_init_u64(&sh->fence_advances, 0);
	sh->nslots = idgen_num_slots();
	for (int i = 0; i < sh->nslots; i++)
	{
		IdgenBackendSlot *slot = &sh->slots[i];

		for (int c = 0; c < IDGEN_NUM_COUNTERS; c++)
		{
			pg_atomic_init_u64(&slot->counters[c], 0);
			slot->base[c] = 0;
		}
		pg_atomic_init_u64(&slot->last_id, 0);
		slot->userid = InvalidOid;
		slot->pid = 0;
	}
}

static inline void
slot_add(IdgenBackendSlot *slot, IdgenCounter c, uint64 n)
{
	pg_atomic_write_u64(&slot->counters[c],
						pg_atomic_read_u64(&slot->counters[c]) + n);
}

/* Counters stay in the totals; only the row of idgen_stats_backends goes. */
static void
release_slot(int code, Datum arg)
{
	if (my_slot != NULL && my_slot->pid == MyProcPid)
		my_slot->pid = 0;
	my_slot = NULL;
}

/*
 * What a process checks before its first mint.  Once it passes, it holds for
 * the life of the process: the library cannot be unloaded, and recovery only
 * ever ends.  The minting path then tests one pointer.
 */
pg_noinline static void
prepare_to_mint(void)
{
	int			procno = IDGEN_MY_PROC_NUMBER;
	IdgenBackendSlot *slot;

	idgen_check_preloaded();
	if (idgen_shared == NULL)
		elog(ERROR, "idgen shared memory is not initialized");
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot mint IDs during recovery"),
				 errdetail("A standby never mints: its IDs could repeat those of its primary."),
				 errhint("Mint on the primary; a standby mints once it is promoted.")));

	if (procno < 0 || procno >= idgen_shared->nslots)
		elog(ERROR, "idgen: process number %d has no slot", procno);
	slot = &idgen_shared->slots[procno];
	for (int c = 0; c < IDGEN_NUM_COUNTERS; c++)
		slot->base[c] = pg_atomic_read_u64(&slot->counters[c]);
	slot->userid = GetSessionUserId();
	pg_write_barrier();
	slot->pid = MyProcPid;
	before_shmem_exit(release_slot, 0);
	my_slot = slot;
}

/*
 * Raise the generator to at least ms, sequence 0: used when a fence is
 * replayed, so that nothing below it is minted again.
 */
void
idgen_raise_state(int64 ms)
{
	uint64		target = (uint64) Max(ms, 0) << idgen_layout.sequence_bits;
	uint64		old = pg_atomic_read_u64(&idgen_shared->state);

	while (old < target &&
		   !pg_atomic_compare_exchange_u64(&idgen_shared->state, &old, target))
		;
}

/* Publish a new fence and wake whoever waits for it. */
void
idgen_publish_fence(int64 fence_ms, int64 wake_at_ms)
{
	pg_atomic_write_u64(&idgen_shared->fence_wake_at, (uint64) Max(wake_at_ms, 0));
	pg_write_barrier();
	pg_atomic_write_u64(&idgen_shared->fence, (uint64) Max(fence_ms, 0));
	pg_atomic_write_u32(&idgen_shared->fence_wanted, 0);
	ConditionVariableBroadcast(&idgen_shared->fence_cv);
}

void
idgen_wake_worker(void)
{
	Latch	   *latch;

	pg_atomic_write_u32(&idgen_shared->fence_wanted, 1);
	SpinLockAcquire(&idgen_shared->mutex);
	latch = idgen_shared->worker_latch;
	SpinLockRelease(&idgen_shared->mutex);
	if (latch)
		SetLatch(latch);
}

static int64
elapsed_us(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MICROSEC(now);
}

pg_noinline static void
too_long_for_wall_clock(int64 lead_ms, int64 wait_ms)
{
	slot_add(my_slot, IDGEN_MAX_WAIT_ERRORS, 1);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("idgen's clock is " INT64_FORMAT " ms ahead of the wall clock",
					lead_ms),
			 errdetail("Minting would wait " INT64_FORMAT " ms for the wall clock, longer than \"%s\" (%d ms).",
					   wait_ms, "idgen.max_wait", idgen_max_wait),
			 errhint("If the system clock stepped back, correct it; to ride out such a step, raise \"%s\" or \"%s\".",
					 "idgen.max_wait", "idgen.max_lead")));
}

/* Sleep until the wall clock is within idgen.max_lead of ms. */
pg_noinline static void
wait_for_wall_clock(int64 ms, int64 now, int64 *waited_us)
{
	int64		wait_ms = ms - now - idgen_max_lead;
	instr_time	start;

	if (*waited_us / 1000 + wait_ms > idgen_max_wait)
		too_long_for_wall_clock(ms - now, *waited_us / 1000 + wait_ms);

	INSTR_TIME_SET_CURRENT(start);
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 (long) wait_ms,
					 idgen_wait_event_info(IDGEN_WAIT_WALL_CLOCK));
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();

	slot_add(my_slot, IDGEN_WAITS, 1);
	slot_add(my_slot, IDGEN_WAIT_US, elapsed_us(start));
	*waited_us += elapsed_us(start);
}

/* Sleep until the fence worker has moved the fence past ms. */
pg_noinline static void
wait_for_fence(int64 ms, int64 *waited_us)
{
	instr_time	start;
	uint32		wait_event_info = idgen_wait_event_info(IDGEN_WAIT_FENCE);

	INSTR_TIME_SET_CURRENT(start);
	ConditionVariablePrepareToSleep(&idgen_shared->fence_cv);
	while (pg_atomic_read_u64(&idgen_shared->fence) <= (uint64) ms)
	{
		if (*waited_us + elapsed_us(start) > (int64) idgen_max_wait * 1000)
		{
			ConditionVariableCancelSleep();
			/* a wait that ends in the error is a wait all the same */
			slot_add(my_slot, IDGEN_WAITS, 1);
			slot_add(my_slot, IDGEN_FENCE_WAITS, 1);
			slot_add(my_slot, IDGEN_WAIT_US, elapsed_us(start));
			slot_add(my_slot, IDGEN_MAX_WAIT_ERRORS, 1);
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("could not advance the idgen fence within \"%s\" (%d ms)",
							"idgen.max_wait", idgen_max_wait),
					 errdetail("Minting waits until the background worker \"idgen fence\" has made the next milliseconds durable."),
					 errhint("Check the server log for the \"idgen fence\" worker, that \"max_worker_processes\" leaves room for it, and that synchronous standbys are connected.")));
		}
		idgen_wake_worker();
		(void) ConditionVariableTimedSleep(&idgen_shared->fence_cv, 10,
										   wait_event_info);
	}
	ConditionVariableCancelSleep();

	slot_add(my_slot, IDGEN_WAITS, 1);
	slot_add(my_slot, IDGEN_FENCE_WAITS, 1);
	slot_add(my_slot, IDGEN_WAIT_US, elapsed_us(start));
	*waited_us += elapsed_us(start);
}

pg_noinline static void
layout_exhausted(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("the ID layout has run out of time"),
			 errdetail("With %d bits of milliseconds, IDs end at %s.",
					   idgen_layout.time_bits,
					   timestamptz_to_str(idgen_ms_to_timestamptz(idgen_max_ms()))),
			 errhint("Move to a new layout (a later \"%s\" or more time bits) with \"%s\".",
					 "idgen.epoch", "idgen.allow_layout_change")));
}

int64
idgen_mint(int32 shard)
{
	IdgenShared *sh = idgen_shared;
	int			seq_bits = idgen_layout.sequence_bits;
	uint64		seq_mask = (UINT64CONST(1) << seq_bits) - 1;
	int64		waited_us = 0;
	uint64		new;
	int64		new_ms;
	int64		now;
	int64		id;

	if (unlikely(my_slot == NULL))
		prepare_to_mint();

	for (;;)
	{
		uint64		old = pg_atomic_read_u64(&sh->state);
		uint64		fence = pg_atomic_read_u64(&sh->fence);
		uint64		floor;

		now = idgen_wall_ms();
		if (unlikely(now < my_last_wall_ms))
			slot_add(my_slot, IDGEN_CLOCK_STEPS_BACK, 1);
		my_last_wall_ms = now;
		floor = now > 0 ? (uint64) now << seq_bits : 0;

		for (;;)
		{
			new = Max(old + 1, floor);
			new_ms = (int64) (new >> seq_bits);
			if (unlikely((uint64) new_ms >= fence ||
						 new_ms - now > idgen_max_lead))
				break;
			if (pg_atomic_compare_exchange_u64(&sh->state, &old, new))
				goto minted;
		}

		if (new_ms >= idgen_max_ms())
			layout_exhausted();
		if ((uint64) new_ms >= fence)
			wait_for_fence(new_ms, &waited_us);
		else
			wait_for_wall_clock(new_ms, now, &waited_us);
	}

minted:
	id = idgen_encode(new_ms, shard, (int64) (new & seq_mask));

	slot_add(my_slot, IDGEN_MINTED, 1);
	pg_atomic_write_u64(&my_slot->last_id, (uint64) id);
	if (unlikely(new_ms > now))
	{
		slot_add(my_slot, IDGEN_CLOCK_BEHIND, 1);
		if ((new & seq_mask) == 0)
			slot_add(my_slot, IDGEN_BORROWED_MS, 1);
	}
	if (unlikely((uint64) new_ms >= pg_atomic_read_u64(&sh->fence_wake_at)) &&
		pg_atomic_read_u32(&sh->fence_wanted) == 0)
		idgen_wake_worker();

	return id;
}
