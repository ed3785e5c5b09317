/*-------------------------------------------------------------------------
 *
 * worker.c
 *		Registering idgen's background workers, waking them, and waiting
 *		for them.
 *
 * Below every subsystem that starts a worker (the fence's, the leases', the
 * stamps'), so that none of them reaches into another to register, wake or
 * wait for its own, and all of them do it one way.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/spin.h"

#include "worker.h"

/*
 * The longest a waiting backend sleeps before it looks again.  A worker
 * broadcasts the condition variable when it moves what backends wait for,
 * so a wait rarely ends by this poll; it bounds the wait when the wake-up
 * was lost, because the worker was not running to be woken (starting, or
 * started again a second after it failed), and it is how a wait notices
 * its timeout.  Ten milliseconds keep a waiting backend's wake-ups at 100 a
 * second, nothing beside the minting it waits to do.
 */
#define IDGEN_AWAIT_POLL_MS		10

/*
 * Every idgen worker: shared memory and a database connection (some to no
 * database), started only once recovery is over, restart_time as
 * RegisterBackgroundWorker takes it.
 */
void
idgen_describe_worker(BackgroundWorker *worker, const char *name,
					  const char *function_name, int restart_time)
{
	memset(worker, 0, sizeof(*worker));
	worker->bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker->bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker->bgw_restart_time = restart_time;
	strlcpy(worker->bgw_library_name, "idgen", BGW_MAXLEN);
	strlcpy(worker->bgw_function_name, function_name, BGW_MAXLEN);
	strlcpy(worker->bgw_name, name, BGW_MAXLEN);
	strlcpy(worker->bgw_type, name, BGW_MAXLEN);
}

/* A worker the postmaster starts, and starts again a second after it fails. */
void
idgen_register_worker(const char *name, const char *function_name)
{
	BackgroundWorker worker;

	idgen_describe_worker(&worker, name, function_name, 1);
	RegisterBackgroundWorker(&worker);
}

/*
 * A worker started now, from a running process, never started again by
 * the postmaster (its starter decides), notify_pid told of its start and
 * exit (0: nobody).  False when no background worker slot is free.
 */
bool
idgen_start_worker(const char *name, const char *function_name,
				   Datum main_arg, pid_t notify_pid,
				   BackgroundWorkerHandle **handle)
{
	BackgroundWorker worker;

	idgen_describe_worker(&worker, name, function_name, BGW_NEVER_RESTART);
	worker.bgw_main_arg = main_arg;
	worker.bgw_notify_pid = notify_pid;
	return RegisterDynamicBackgroundWorker(&worker, handle);
}

/* On a fresh segment, with AddinShmemInitLock held. */
void
idgen_worker_latch_init(IdgenWorkerLatch *wl)
{
	SpinLockInit(&wl->mutex);
	wl->latch = NULL;
}

/* The worker's own latch when it starts, NULL when it exits. */
void
idgen_worker_latch_set(IdgenWorkerLatch *wl, Latch *latch)
{
	SpinLockAcquire(&wl->mutex);
	wl->latch = latch;
	SpinLockRelease(&wl->mutex);
}

/* Wake the worker, if it runs; outside the spinlock, as SetLatch may signal. */
void
idgen_worker_wake(IdgenWorkerLatch *wl)
{
	Latch	   *latch;

	SpinLockAcquire(&wl->mutex);
	latch = wl->latch;
	SpinLockRelease(&wl->mutex);
	if (latch)
		SetLatch(latch);
}

/*
 * Sleep on cv until check finds the wait over or timeout_us passes, waking
 * the worker (wake, if any) before each sleep: what the backend waits for
 * is the worker's to move.  The sleep shows as event in pg_stat_activity.
 * True when check found it done.
 */
bool
idgen_worker_await(ConditionVariable *cv, IdgenAwaitCheck check,
				   void *arg, void (*wake) (void),
				   int64 timeout_us, IdgenWaitEvent event)
{
	instr_time	start;
	instr_time	now;
	IdgenAwait	found;
	uint32		wait_event_info = 0;

	INSTR_TIME_SET_CURRENT(start);
	ConditionVariablePrepareToSleep(cv);
	for (;;)
	{
		found = check(arg);
		if (found != IDGEN_AWAIT_MORE)
			break;
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);

		/*
		 * Signed, as PostgreSQL 16 and later give it: 15 gives uint64, and
		 * a timeout already spent (a statement's earlier waits ended a
		 * poll past its idgen.max_wait) compared unsigned would never end.
		 */
		if ((int64) INSTR_TIME_GET_MICROSEC(now) >= timeout_us)
			break;
		if (wake)
			wake();
		/* named only by a process that waits: PostgreSQL 17 lists it then */
		if (wait_event_info == 0)
			wait_event_info = idgen_wait_event_info(event);
		(void) ConditionVariableTimedSleep(cv, IDGEN_AWAIT_POLL_MS,
										   wait_event_info);
	}
	ConditionVariableCancelSleep();
	return found == IDGEN_AWAIT_DONE;
}
