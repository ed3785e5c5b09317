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

/*
 * idgen's own custom WAL resource manager ID (custom IDs run from 128 to
 * 255).  Not RM_EXPERIMENTAL_ID (128): every extension in development
 * shares that one.  163 was free in the community's list of custom resource
 * managers when it was chosen; the README says where to register it.  WAL
 * written under another ID cannot be replayed by this build, so the ID
 * never changes once released.
 */
#define RM_IDGEN_ID				163
#define XLOG_IDGEN_FENCE		0x00
#define XLOG_IDGEN_LAYOUTS		0x10	/* the layout history, whole */

#define IDGEN_STATE_FILE		"idgen.state"


extern void idgen_fence_register(void);
extern int64 idgen_fence_recover(void);
extern void idgen_fence_shutdown(int code, Datum arg);

extern PGDLLEXPORT void idgen_fence_worker_main(Datum main_arg);

#endif							/* IDGEN_FENCE_H */
