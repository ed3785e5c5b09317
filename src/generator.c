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
 *	- it never reaches the durable fence (published in fence_gate.c, made
 *	  durable by fence.c), so that nothing minted before a crash, restart
 *	  or promotion can be minted again.
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

#include "fence_gate.h"
#include "generator.h"
#include "idgen_compat.h"
#include "layout.h"
#include "lease_gate.h"
#include "settings.h"
#include "wait_event.h"

/*
 * One per PGPROC.  Only the process in the slot writes it, so the counters
 * need atomic visibility but no atomic read-modify-write.  Counters are
 * never reset: a process taking over a slot records where they stood, so
 * totals last since start and a pid's own figures are the difference.  The
 * pid is written last, after a write barrier; readers read it, then a read
 * barrier, then the rest.
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

/*
 * The node's shared state.  Who writes what, and why minting needs no lock:
 *
 * - state: the last (ms, sequence) minted, encoded by idgen_state_word()
 *   and decoded by idgen_state_ms() (layout.h) alone.  Minters change it
 *   by compare-and-swap only, a full barrier, so it needs no other; replay
 *   raises it the same way.
 * - raised_to: raised (compare-and-swap to the maximum) by
 *   idgen_raise_past, read only for the error of a mint that waits too
 *   long for the wall clock.
 *
 * The fence, which every mint also reads, is the fence gate's
 * (fence_gate.c).
 */
typedef struct IdgenShared
{
	/* alone in its cache line: every mint writes it */
	pg_atomic_uint64 state;
	char		pad1[PG_CACHE_LINE_SIZE - sizeof(pg_atomic_uint64)];

	pg_atomic_uint64 raised_to;	/* highest ms idgen_raise_past moved it to */

	int			nslots;
	IdgenBackendSlot slots[FLEXIBLE_ARRAY_MEMBER];
} IdgenShared;

static IdgenShared *idgen_shared = NULL;

/* The state word of an ID, whatever its shard: orders IDs by mint. */
static inline uint64
state_of_id(int64 id)
{
	Assert(id >= 0);
	return idgen_state_word(idgen_ms_of_id(&idgen_layout, id),
							(uint64) idgen_sequence_of_id(&idgen_layout, id),
							idgen_layout.sequence_bits);
}

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
 * Attach to the shared state, with AddinShmemInitLock held; false when the
 * segment is new and idgen_shmem_init must fill it.
 */
bool
idgen_shmem_attach(void)
{
	bool		found;

	idgen_shared = NULL;
	idgen_shared = ShmemInitStruct("idgen", idgen_shmem_size(), &found);
	return found;
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
	pg_atomic_init_u64(&sh->state,
					   idgen_state_word(fence_ms, 0, idgen_layout.sequence_bits));
	pg_atomic_init_u64(&sh->raised_to, 0);
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
	idgen_check_not_in_recovery();

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

/* ---- for the fence (fence.c) and the leases (lease_worker.c) ---- */

bool
idgen_generator_attached(void)
{
	return idgen_shared != NULL;
}

/* The generator's millisecond: the last one minted, or where it starts. */
int64
idgen_generator_ms(void)
{
	return idgen_state_ms(pg_atomic_read_u64(&idgen_shared->state),
					idgen_layout.sequence_bits);
}

/*
 * Raise the generator to at least ms, sequence 0: used when a fence is
 * replayed, so that nothing below it is minted again.
 */
void
idgen_raise_generator(int64 ms)
{
	uint64		target = idgen_state_word(Max(ms, 0), 0, idgen_layout.sequence_bits);
	uint64		old = pg_atomic_read_u64(&idgen_shared->state);

	while (old < target &&
		   !pg_atomic_compare_exchange_u64(&idgen_shared->state, &old, target))
		;
}

/*
 * Move the generator one step, so that a minter whose compare-and-swap
 * comes later has read the state again, and return the millisecond it is
 * now at: no ID minted so far, or by a compare-and-swap that read the state
 * before this one, is later.  For giving a lease back (lease_worker.c).
 */
int64
idgen_step_generator(void)
{
	uint64		old = pg_atomic_read_u64(&idgen_shared->state);

	while (!pg_atomic_compare_exchange_u64(&idgen_shared->state, &old, old + 1))
		;
	return idgen_state_ms(old + 1, idgen_layout.sequence_bits);
}

/* ---- for the statistics (stats.c) ---- */

/*
 * The node's totals.  Read without a lock, as pg_stat views are: figures
 * may be a few mints apart from each other.
 */
void
idgen_read_node_figures(IdgenNodeFigures *figures)
{
	IdgenShared *sh = idgen_shared;
	uint64		last_key = 0;

	memset(figures, 0, sizeof(*figures));
	for (int s = 0; s < sh->nslots; s++)
	{
		int64		id = (int64) pg_atomic_read_u64(&sh->slots[s].last_id);

		for (int c = 0; c < IDGEN_NUM_COUNTERS; c++)
			figures->counters[c] += pg_atomic_read_u64(&sh->slots[s].counters[c]);
		/* the latest mint has the largest state word, whatever its shard */
		if (id > 0 && state_of_id(id) >= last_key)
		{
			last_key = state_of_id(id);
			figures->last_id = id;
		}
	}
	figures->generator_ms = idgen_generator_ms();
	figures->fence_ms = idgen_fence_ms();
	figures->fence_advances = idgen_fence_moves();
}

int
idgen_process_slots(void)
{
	return idgen_shared->nslots;
}

/* A live process's figures; false if the slot is free. */
bool
idgen_read_process_figures(int slotno, IdgenProcessFigures *figures)
{
	IdgenBackendSlot *slot = &idgen_shared->slots[slotno];
	int			pid = slot->pid;

	if (pid == 0)
		return false;
	pg_read_barrier();
	figures->pid = pid;
	figures->userid = slot->userid;
	for (int c = 0; c < IDGEN_NUM_COUNTERS; c++)
		figures->counters[c] = pg_atomic_read_u64(&slot->counters[c]) - slot->base[c];
	figures->last_id = (int64) pg_atomic_read_u64(&slot->last_id);
	return true;
}

/* ---- minting ---- */

static int64
elapsed_us(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MICROSEC(now);
}

/*
 * The error for a mint (n = 1) or block that would wait too long for the
 * wall clock.  gen_ms is where the generator stood, end_ms the millisecond
 * the mint or the block's last ID needs.  Why the generator is ahead is
 * told where this process can know it: a block longer than what is left
 * of idgen.max_lead, or idgen_raise_past; a clock step back and a burst
 * leave no trace, so the rest is worded for either.
 */
pg_noinline static void
too_long_for_wall_clock(int64 gen_ms, int64 end_ms, int64 n, int64 now,
						int64 wait_ms)
{
	int64		raised_ms = (int64) pg_atomic_read_u64(&idgen_shared->raised_to);
	int64		lead_ms = Max(gen_ms - now, 0);
	char	   *wait;
	char	   *why;
	char	   *hint;

	slot_add(my_slot, IDGEN_MAX_WAIT_ERRORS, 1);
	wait = psprintf("Minting would wait " INT64_FORMAT " ms for the wall clock, longer than \"%s\" (%d ms).",
					wait_ms, "idgen.max_wait", idgen_max_wait);
	if (raised_ms - now > idgen_max_lead && raised_ms >= gen_ms - idgen_max_lead)
	{
		why = psprintf("idgen_advance_past() (or taking a shard's lease) moved the generator to %s, which the wall clock has not reached.",
					   timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, raised_ms)));
		hint = psprintf("Wait until the wall clock is within \"%s\" of that time, or raise \"%s\" to wait for it.",
						"idgen.max_lead", "idgen.max_wait");
	}
	else if (n > 1 && lead_ms <= idgen_max_lead)
	{
		why = psprintf("The generator is " INT64_FORMAT " ms ahead of the wall clock; its own IDs take the block's last one " INT64_FORMAT " ms further.",
					   lead_ms, end_ms - gen_ms);
		hint = psprintf("Ask for fewer IDs at once, or raise \"%s\".",
						"idgen.max_wait");
	}
	else
	{
		why = psprintf("The generator runs ahead of the wall clock when the system clock steps back, or when IDs are minted faster than %d a millisecond (blocks included).",
					   1 << idgen_layout.sequence_bits);
		hint = psprintf("If the system clock stepped back, correct it; to ride out a step or a burst, raise \"%s\" or \"%s\".",
						"idgen.max_wait", "idgen.max_lead");
	}

	if (n > 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("a block of " INT64_FORMAT " IDs would end " INT64_FORMAT " ms ahead of the wall clock",
						n, end_ms - now),
				 errdetail("%s %s", why, wait),
				 errhint("%s", hint)));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("idgen's clock is " INT64_FORMAT " ms ahead of the wall clock",
					end_ms - now),
			 errdetail("%s %s", why, wait),
			 errhint("%s", hint)));
}

/* Sleep until the wall clock is within idgen.max_lead of ms. */
pg_noinline static void
wait_for_wall_clock(int64 gen_ms, int64 ms, int64 n, int64 now,
					int64 *waited_us)
{
	int64		wait_ms = ms - now - idgen_max_lead;
	instr_time	start;

	if (*waited_us / 1000 + wait_ms > idgen_max_wait)
		too_long_for_wall_clock(gen_ms, ms, n, now, *waited_us / 1000 + wait_ms);

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
	bool		passed;

	INSTR_TIME_SET_CURRENT(start);
	passed = idgen_fence_wait(ms, (int64) idgen_max_wait * 1000 - *waited_us);
	/* a wait that ends in the error is a wait all the same */
	slot_add(my_slot, IDGEN_WAITS, 1);
	slot_add(my_slot, IDGEN_FENCE_WAITS, 1);
	slot_add(my_slot, IDGEN_WAIT_US, elapsed_us(start));
	*waited_us += elapsed_us(start);
	if (!passed)
	{
		slot_add(my_slot, IDGEN_MAX_WAIT_ERRORS, 1);
		idgen_fence_error();
	}
}

/* Sleep until this server's lease on shard reaches past ms. */
pg_noinline static void
wait_for_lease(int32 shard, int64 ms, int64 *waited_us)
{
	instr_time	start;
	bool		held;

	INSTR_TIME_SET_CURRENT(start);
	held = idgen_lease_wait(shard, ms,
							(int64) idgen_max_wait * 1000 - *waited_us);
	slot_add(my_slot, IDGEN_WAITS, 1);
	slot_add(my_slot, IDGEN_WAIT_US, elapsed_us(start));
	*waited_us += elapsed_us(start);
	if (!held)
	{
		if (idgen_lease_end(shard) != IDGEN_LEASE_NOT_HELD)
			slot_add(my_slot, IDGEN_MAX_WAIT_ERRORS, 1);
		idgen_lease_error(shard);
	}
}

pg_noinline static void
layout_exhausted(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("the ID layout has run out of time"),
			 errdetail("With %d bits of milliseconds, IDs end at %s.",
					   idgen_time_bits(&idgen_layout),
					   timestamptz_to_str(idgen_layout_end(&idgen_layout))),
			 errhint("Move to a new layout (a later \"%s\" or more time bits) with \"%s\".",
					 "idgen.epoch", "idgen.allow_layout_change")));
}

/*
 * Reserve n consecutive state words, first .. first + n - 1, with one
 * compare-and-swap, and return the ID of the last; *first is set to the
 * first.  The IDs are increasing and disjoint from every ID minted before or
 * concurrently, under the bounds of doc/design/minting.md, "Minting":
 * max_lead, the fence, the shard's lease, max_wait.  One loop for a single
 * mint and for a block; inlined into each, so a single mint has n = 1
 * folded in.
 */
static pg_attribute_always_inline int64
mint_states(int32 shard, int64 n, uint64 *first)
{
	IdgenShared *sh = idgen_shared;
	int			seq_bits = idgen_layout.sequence_bits;
	uint64		seq_mask = (UINT64CONST(1) << seq_bits) - 1;
	int64		waited_us = 0;
	uint64		last;
	int64		last_ms;
	int64		now;
	int64		id;

	Assert(n >= 1);
	if (unlikely(my_slot == NULL))
		prepare_to_mint();

	for (;;)
	{
		uint64		old = pg_atomic_read_u64(&sh->state);
		uint64		fence = (uint64) idgen_fence_ms();
		uint64		floor;

		now = idgen_wall_ms();
		if (unlikely(now < my_last_wall_ms))
			slot_add(my_slot, IDGEN_CLOCK_STEPS_BACK, 1);
		my_last_wall_ms = now;
		floor = now > 0 ? idgen_state_word(now, 0, seq_bits) : 0;

		for (;;)
		{
			*first = Max(old + 1, floor);
			last = *first + (uint64) (n - 1);
			last_ms = idgen_state_ms(last, seq_bits);
			if (unlikely((uint64) last_ms >= fence ||
						 last_ms - now > idgen_max_lead))
				break;
			/* read after old, every time old changes (lease_worker.c) */
			if (unlikely(idgen_leases_on) &&
				(uint64) last_ms >= idgen_lease_end(shard))
				break;
			if (pg_atomic_compare_exchange_u64(&sh->state, &old, last))
				goto reserved;
		}

		if (last_ms >= idgen_max_ms(&idgen_layout))
			layout_exhausted();

		/*
		 * The clock first: a block too far ahead of it fails on that, its
		 * real cause, rather than on a fence that need not move until then.
		 */
		if (last_ms - now > idgen_max_lead)
			wait_for_wall_clock(idgen_state_ms(old, seq_bits), last_ms, n, now,
								&waited_us);
		else if ((uint64) last_ms >= fence)
			wait_for_fence(last_ms, &waited_us);
		else
			wait_for_lease(shard, last_ms, &waited_us);
	}

reserved:
	id = idgen_encode(last_ms, shard, (int64) (last & seq_mask));
	slot_add(my_slot, IDGEN_MINTED, (uint64) n);
	pg_atomic_write_u64(&my_slot->last_id, (uint64) id);
	if (unlikely(last_ms > now))
	{
		slot_add(my_slot, IDGEN_CLOCK_BEHIND, 1);
		/* single mints only: a block never counted its borrowing */
		if (n == 1 && (last & seq_mask) == 0)
			slot_add(my_slot, IDGEN_BORROWED_MS, 1);
	}
	idgen_fence_note_minted(last_ms);
	return id;
}

int64
idgen_mint(int32 shard)
{
	uint64		first;

	return mint_states(shard, 1, &first);
}

/*
 * Reserve a block of n IDs, idgen_block_id(first, 0 .. n-1), and return
 * first.  The caller checked n with idgen_check_block_size().
 */
uint64
idgen_mint_block(int32 shard, int64 n)
{
	uint64		first;

	(void) mint_states(shard, n, &first);
	return first;
}

/* The i-th ID of a block that begins at the state word first. */
int64
idgen_block_id(uint64 first, int64 i, int32 shard)
{
	int			seq_bits = idgen_layout.sequence_bits;
	uint64		state = first + (uint64) i;

	return idgen_encode(idgen_state_ms(state, seq_bits), shard,
						(int64) (state & ((UINT64CONST(1) << seq_bits) - 1)));
}

/* A standby never mints, live or for a given time. */
void
idgen_check_not_in_recovery(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot mint IDs during recovery"),
				 errdetail("A standby never mints: its IDs could repeat those of its primary."),
				 errhint("Mint on the primary; a standby mints once it is promoted.")));
}

/*
 * A block a caller asks for, live or for a given time: at most
 * IDGEN_MAX_BLOCK, and no more than fits in idgen.max_lead from now (a
 * block never waits for itself).
 */
void
idgen_check_block_size(int32 n)
{
	int64		fits = ((int64) idgen_max_lead + 1) << idgen_layout.sequence_bits;
	int64		limit = Min(fits, IDGEN_MAX_BLOCK);

	if (n < 1 || n > limit)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot reserve %d IDs in one block", n),
				 errdetail("A block holds 1 to " INT64_FORMAT " IDs: at most %d, and no more than the sequence holds in \"%s\" (%d ms) plus one millisecond.",
						   limit, IDGEN_MAX_BLOCK, "idgen.max_lead",
						   idgen_max_lead),
				 errhint("Ask for several smaller blocks.")));
}

/*
 * Move the generator durably above id: after pg_upgrade, a restore into a
 * new cluster or an import of IDs minted elsewhere, so that new IDs are
 * above them whatever the clock says.  The fence is moved past id's
 * millisecond first, and made durable, as for any mint (WAL, the state
 * file, synchronous standbys); then the generator is raised to it.
 * Returns how far ahead of the wall clock the generator now is, in ms.
 */
int64
idgen_raise_past(int64 id)
{
	int64		target_ms = idgen_ms_of_id(&idgen_layout, id) + 1;
	int64		waited_us = 0;

	Assert(id >= 0);
	if (unlikely(my_slot == NULL))
		prepare_to_mint();
	if (target_ms >= idgen_max_ms(&idgen_layout))
		layout_exhausted();
	if (target_ms >= idgen_fence_ms())
		wait_for_fence(target_ms, &waited_us);
	idgen_raise_generator(target_ms);
	/* for the error of a mint that then waits too long for the clock */
	{
		uint64		raised = pg_atomic_read_u64(&idgen_shared->raised_to);

		while (raised < (uint64) target_ms &&
			   !pg_atomic_compare_exchange_u64(&idgen_shared->raised_to,
											   &raised, (uint64) target_ms))
			;
	}
	return target_ms - idgen_wall_ms();
}
