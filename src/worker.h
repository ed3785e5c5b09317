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

#include "postmaster/bgworker.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/spin.h"

#include "wait_event.h"

/*
 * Where a worker leaves its latch, in shared memory, for the processes
 * that wake it: NULL while it does not run.
 */
typedef struct IdgenWorkerLatch
{
	slock_t		mutex;			/* protects latch */
	Latch	   *latch;
} IdgenWorkerLatch;

/*
 * What a backend waiting on a worker finds when it looks: not yet, there,
 * or never coming by waiting.
 */
typedef enum IdgenAwait
{
	IDGEN_AWAIT_MORE,
	IDGEN_AWAIT_DONE,
	IDGEN_AWAIT_NEVER
} IdgenAwait;

typedef IdgenAwait (*IdgenAwaitCheck) (void *arg);

extern void idgen_describe_worker(BackgroundWorker *worker, const char *name,
								  const char *function_name, int restart_time);
extern void idgen_register_worker(const char *name, const char *function_name);
extern bool idgen_start_worker(const char *name, const char *function_name,
							   Datum main_arg, pid_t notify_pid,
							   BackgroundWorkerHandle **handle);

extern void idgen_worker_latch_init(IdgenWorkerLatch *wl);
extern void idgen_worker_latch_set(IdgenWorkerLatch *wl, Latch *latch);
extern void idgen_worker_wake(IdgenWorkerLatch *wl);
extern bool idgen_worker_await(ConditionVariable *cv, IdgenAwaitCheck check,
							   void *arg, void (*wake) (void),
							   int64 timeout_us, IdgenWaitEvent event);

#endif							/* IDGEN_WORKER_H */
