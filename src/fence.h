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
 * RM_EXPERIMENTAL_ID until idgen has an ID of its own on the PostgreSQL
 * wiki's list of custom resource managers.
 */
#define RM_IDGEN_ID				RM_EXPERIMENTAL_ID
#define XLOG_IDGEN_FENCE		0x00

#define IDGEN_STATE_FILE		"idgen.state"

extern int	idgen_fence_horizon;
extern bool idgen_allow_layout_change;

extern void idgen_fence_register(void);
extern int64 idgen_fence_load(void);
extern void idgen_fence_shutdown(int code, Datum arg);

extern PGDLLEXPORT void idgen_fence_worker_main(Datum main_arg);

#endif							/* IDGEN_FENCE_H */
