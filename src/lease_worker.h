/*-------------------------------------------------------------------------
 *
 * lease_worker.h
 *		The "idgen lease" worker, which holds this server's shard leases in
 *		the registry and publishes their ends in the lease gate (lease_gate.h).
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lease_worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LEASE_WORKER_H
#define IDGEN_LEASE_WORKER_H

#include "fmgr.h"

/* For _PG_init (idgen.c). */
extern void idgen_lease_register(void);

extern PGDLLEXPORT void idgen_lease_worker_main(Datum main_arg);

#endif							/* IDGEN_LEASE_WORKER_H */
