/*-------------------------------------------------------------------------
 *
 * worker.c
 *		Registering idgen's background workers, and waking them.
 *
 * Below every subsystem that starts a worker (the fence's, the leases'), so
 * that none of them reaches into another to register or wake its own.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "postmaster/bgworker.h"
#include "storage/latch.h"
#include "storage/spin.h"

#include "worker.h"

/*
 * Each worker connects to no database, runs only once recovery is over,
 * and is started again a second after it fails.
 */
void
idgen_register_worker(const char *name, const char *function_name)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_library_name, "idgen", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, function_name, BGW_MAXLEN);
	strlcpy(worker.bgw_name, name, BGW_MAXLEN);
	strlcpy(worker.bgw_type, name, BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
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
