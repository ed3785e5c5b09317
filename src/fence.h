/*-------------------------------------------------------------------------
 *
 * fence.h
 *		The durable fence: state file, WAL records, worker.
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

#include "layout_history.h"
#include "wal_records.h"

#define IDGEN_STATE_FILE		"idgen.state"


extern void idgen_fence_register(void);
extern int64 idgen_fence_recover(void);
extern void idgen_fence_shutdown(int code, Datum arg);
extern void idgen_fence_redo(const IdgenFenceRecord *replayed);
extern void idgen_fence_redo_history(const IdgenLayoutHistory *replayed);

extern PGDLLEXPORT void idgen_fence_worker_main(Datum main_arg);

#endif							/* IDGEN_FENCE_H */
