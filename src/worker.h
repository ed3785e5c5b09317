/*-------------------------------------------------------------------------
 *
 * worker.h
 *		Registering idgen's background workers, and waking them.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_WORKER_H
#define IDGEN_WORKER_H

#include "storage/latch.h"
#include "storage/spin.h"

/*
 * Where a worker leaves its latch, in shared memory, for the processes
 * that wake it: NULL while it does not run.
 */
typedef struct IdgenWorkerLatch
{
	slock_t		mutex;			/* protects latch */
	Latch	   *latch;
} IdgenWorkerLatch;

extern void idgen_register_worker(const char *name, const char *function_name);

extern void idgen_worker_latch_init(IdgenWorkerLatch *wl);
extern void idgen_worker_latch_set(IdgenWorkerLatch *wl, Latch *latch);
extern void idgen_worker_wake(IdgenWorkerLatch *wl);

#endif							/* IDGEN_WORKER_H */
