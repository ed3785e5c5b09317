/*-------------------------------------------------------------------------
 *
 * worker.c
 *		Registering idgen's background workers.
 *
 * Below every subsystem that starts a worker (the fence's, the leases'), so
 * that none of them reaches into another to register its own.
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
