/*-------------------------------------------------------------------------
 *
 * worker.h
 *		Registering idgen's background workers.
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

extern void idgen_register_worker(const char *name, const char *function_name);

#endif							/* IDGEN_WORKER_H */
