/*-------------------------------------------------------------------------
 *
 * fence_gate.c
 *		The fence's shared state: the published fence, the lock of its
 *		writers, the wait for it to move, and the requests to move it.
 *
 * Who writes what, and why minting needs no lock:
 *
 * - fence, wake_at: written by the fence worker (or replay) under the lock,
 *   only after the fence is durable (fence.c); fence only grows while the
 *   server runs, so a minter reading a stale value can only wait, never
 *   mint past a durable fence.  wake_at is written before fence, with a
 *   write barrier between, so a minter that sees a new fence sees where to
 *   wake the worker next.
 * - wanted: set by minters, cleared by the worker; a lost update only
 *   delays a wake-up by the worker's own timeout.
 * - need: raised (compare-and-swap to the maximum) by callers that wait for
 *   the fence, so that the worker moves it past what they need, even past
 *   a block of IDs longer than the horizon.
 *
 * Nothing here knows how a fence is made durable, nor how the generator
 * mints: this file is below both.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/fence_gate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "fence_gate.h"
#include "settings.h"
#include "wait_event.h"
#include "worker.h"

typedef struct IdgenFenceGate
{
	/* read on every mint, written a few times a second */
	IdgenFenceWords words;
	char		pad[PG_CACHE_LINE_SIZE - sizeof(IdgenFenceWords)];

	pg_atomic_uint64 need;		/* the highest ms a waiting caller needs */
	LWLock	   *lock;			/* serialises fence writers */
	ConditionVariable cv;		/* broadcast when the fence moves */
	IdgenWorkerLatch worker;	/* the fence worker's latch */
	pg_atomic_uint64 moves;		/* moves by the worker since start */
} IdgenFenceGate;

static IdgenFenceGate *fence_gate = NULL;

IdgenFenceWords *idgen_fence_words = NULL;

/* ---- shared memory ---- */

Size
idgen_fence_gate_shmem_size(void)
{
	return sizeof(IdgenFenceGate);
}

/*
 * Attach, with AddinShmemInitLock held; false when the segment is new and
 * idgen_fence_gate_shmem_init must fill it.
 */
bool
idgen_fence_gate_shmem_attach(void)
{
	bool		found;

	fence_gate = NULL;
	idgen_fence_words = NULL;
	fence_gate = ShmemInitStruct("idgen fence", sizeof(IdgenFenceGate), &found);
	idgen_fence_words = &fence_gate->words;
	return found;
}

/* On a fresh segment: the fence recovered at start, nothing asked yet. */
void
idgen_fence_gate_shmem_init(int64 fence_ms)
{
	fence_ms = Max(fence_ms, 0);
	pg_atomic_init_u64(&fence_gate->words.fence, (uint64) fence_ms);
	pg_atomic_init_u64(&fence_gate->words.wake_at, (uint64) fence_ms);
	pg_atomic_init_u32(&fence_gate->words.wanted, 0);
	pg_atomic_init_u64(&fence_gate->need, 0);
	fence_gate->lock = &(GetNamedLWLockTranche(IDGEN_FENCE_LOCK_TRANCHE))->lock;
	ConditionVariableInit(&fence_gate->cv);
	idgen_worker_latch_init(&fence_gate->worker);
	pg_atomic_init_u64(&fence_gate->moves, 0);
}

/* ---- minting ---- */

/* Ask the fence worker for a new fence. */
void
idgen_fence_wake_worker(void)
{
	pg_atomic_write_u32(&fence_gate->words.wanted, 1);
	idgen_worker_wake(&fence_gate->worker);
}

/* Wake the fence worker for the lanes, without asking for a fence. */
void
idgen_fence_poke_worker(void)
{
	idgen_worker_wake(&fence_gate->worker);
}

static IdgenAwait
fence_passed(void *arg)
{
	uint64		ms = *(uint64 *) arg;

	if (pg_atomic_read_u64(&fence_gate->words.fence) > ms)
		return IDGEN_AWAIT_DONE;
	return IDGEN_AWAIT_MORE;
}

/*
 * Wait until the published fence is past ms: true when it is, false when
 * timeout_us passes first.
 */
bool
idgen_fence_wait(int64 ms, int64 timeout_us)
{
	uint64		need = pg_atomic_read_u64(&fence_gate->need);
	uint64		past = (uint64) ms;

	while (need < past &&
		   !pg_atomic_compare_exchange_u64(&fence_gate->need, &need, past))
		;
	return idgen_worker_await(&fence_gate->cv, fence_passed, &past,
							  idgen_fence_wake_worker, timeout_us,
							  IDGEN_WAIT_FENCE);
}

/* Why a mint cannot go on: the fence did not move in time. */
void
idgen_fence_error(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("could not advance the idgen fence within \"%s\" (%d ms)",
					"idgen.max_wait", idgen_max_wait),
			 errdetail("Minting waits until the background worker \"idgen fence\" has made the next milliseconds durable."),
			 errhint("Check the server log for the \"idgen fence\" worker, that \"max_worker_processes\" leaves room for it, and that synchronous standbys are connected.")));
}

/* ---- the fence worker and replay ---- */

/* Minting at or past this millisecond wakes the worker. */
int64
idgen_fence_wake_at_ms(void)
{
	return (int64) pg_atomic_read_u64(&fence_gate->words.wake_at);
}

/* A minter asked for a new fence since the last one was published. */
bool
idgen_fence_move_asked(void)
{
	return pg_atomic_read_u32(&fence_gate->words.wanted) != 0;
}

/* The highest millisecond a caller waiting for the fence needs. */
int64
idgen_fence_needed_ms(void)
{
	return (int64) pg_atomic_read_u64(&fence_gate->need);
}

/* The fence already stands where the worker would move it. */
void
idgen_fence_forget_ask(void)
{
	pg_atomic_write_u32(&fence_gate->words.wanted, 0);
}

void
idgen_fence_lock(void)
{
	LWLockAcquire(fence_gate->lock, LW_EXCLUSIVE);
}

void
idgen_fence_unlock(void)
{
	LWLockRelease(fence_gate->lock);
}

/* A new fence, durable by now: publish it and wake whoever waits for it. */
static void
publish(int64 fence_ms, int64 wake_at_ms)
{
	Assert(LWLockHeldByMeInMode(fence_gate->lock, LW_EXCLUSIVE));
	pg_atomic_write_u64(&fence_gate->words.wake_at, (uint64) Max(wake_at_ms, 0));
	pg_write_barrier();
	pg_atomic_write_u64(&fence_gate->words.fence, (uint64) Max(fence_ms, 0));
	pg_atomic_write_u32(&fence_gate->words.wanted, 0);
	ConditionVariableBroadcast(&fence_gate->cv);
}

/* The worker moved the fence; minting at wake_at_ms asks for the next. */
void
idgen_fence_publish_move(int64 fence_ms, int64 wake_at_ms)
{
	publish(fence_ms, wake_at_ms);
	pg_atomic_fetch_add_u64(&fence_gate->moves, 1);
}

/* Replay raised the fence: not a move of this server's worker. */
void
idgen_fence_publish_replayed(int64 fence_ms)
{
	publish(fence_ms, fence_ms);
}

/* The fence worker's latch, or NULL when it exits. */
void
idgen_fence_set_worker_latch(Latch *latch)
{
	idgen_worker_latch_set(&fence_gate->worker, latch);
}

/* ---- the statistics ---- */

/* How often the worker moved the fence since the server started. */
uint64
idgen_fence_moves(void)
{
	return pg_atomic_read_u64(&fence_gate->moves);
}
