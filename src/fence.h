/*-------------------------------------------------------------------------
 *
 * fence.h
 *		The durable fence: state file, WAL resource manager, worker.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/fence.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_FENCE_H
#define IDGEN_FENCE_H

#include "access/rmgr.h"

#include "wal_records.h"

#define IDGEN_STATE_FILE		"idgen.state"


extern void idgen_fence_register(void);
extern int64 idgen_fence_recover(void);
extern void idgen_fence_shutdown(int code, Datum arg);

extern PGDLLEXPORT void idgen_fence_worker_main(Datum main_arg);

#endif							/* IDGEN_FENCE_H */
