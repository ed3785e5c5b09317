/*-------------------------------------------------------------------------
 *
 * fence_gate.h
 *		The fence as minting sees it: the published fence, the wait for it
 *		to move, and the requests that make the fence worker move it.
 *
 * The minting path reads the published fence on every mint (inline, here);
 * everything that makes a fence durable is in fence.c, which publishes it
 * here only afterwards (doc/design/minting.md, "Minting", and
 * doc/design/fence.md, "The durable fence").
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/fence_gate.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_FENCE_GATE_H
#define IDGEN_FENCE_GATE_H

#include "port/atomics.h"
#include "storage/latch.h"

#include "idgen_compat.h"

/* The tranche of the lock that serialises fence writers. */
#define IDGEN_FENCE_LOCK_TRANCHE	"idgen"

/*
 * The words every mint reads, alone in one cache line of the gate's shared
 * state; fence_gate.c says who writes them, and in what order.
 */
typedef struct IdgenFenceWords
{
	pg_atomic_uint64 fence;		/* a millisecond never reached */
	pg_atomic_uint64 wake_at;	/* minting here wakes the worker */
	pg_atomic_uint32 wanted;	/* a minter asked for a new fence */
} IdgenFenceWords;

extern IDGEN_HOT_GLOBAL IdgenFenceWords *idgen_fence_words;

/*
 * The published fence: the first millisecond the generator may not reach.
 * It only grows while the server runs, so a stale read only makes a caller
 * wait.
 */
static inline int64
idgen_fence_ms(void)
{
	return (int64) pg_atomic_read_u64(&idgen_fence_words->fence);
}

extern void idgen_fence_wake_worker(void);
extern void idgen_fence_poke_worker(void);

/*
 * After a mint or block that ends at ms: past where the worker wants to
 * hear of it, wake the worker, unless a minter already asked.
 */
static inline void
idgen_fence_note_minted(int64 ms)
{
	if (unlikely((uint64) ms >= pg_atomic_read_u64(&idgen_fence_words->wake_at)) &&
		pg_atomic_read_u32(&idgen_fence_words->wanted) == 0)
		idgen_fence_wake_worker();
}

/* For minting (generator.c). */
extern bool idgen_fence_wait(int64 ms, int64 timeout_us);
idgen_noreturn extern void idgen_fence_error(void);

/* For the fence worker and replay (fence.c). */
extern int64 idgen_fence_wake_at_ms(void);
extern bool idgen_fence_move_asked(void);
extern int64 idgen_fence_needed_ms(void);
extern void idgen_fence_forget_ask(void);
extern void idgen_fence_lock(void);
extern void idgen_fence_unlock(void);
extern void idgen_fence_publish_move(int64 fence_ms, int64 wake_at_ms);
extern void idgen_fence_publish_replayed(int64 fence_ms);
extern void idgen_fence_set_worker_latch(Latch *latch);

/* For the statistics. */
extern uint64 idgen_fence_moves(void);

/* For the shared memory hooks (idgen.c). */
extern Size idgen_fence_gate_shmem_size(void);
extern bool idgen_fence_gate_shmem_attach(void);
extern void idgen_fence_gate_shmem_init(int64 fence_ms);

#endif							/* IDGEN_FENCE_GATE_H */
