/*-------------------------------------------------------------------------
 *
 * lease_pool.h
 *		Claiming a shard of idgen.shard_pool, for the lease worker.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lease_pool.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LEASE_POOL_H
#define IDGEN_LEASE_POOL_H

#include "lease_set.h"

extern bool idgen_pool_claim(LeaseWorker *w, LeaseRound *round,
							 const char **due_shards);
extern void idgen_pool_settle(LeaseWorker *w, LeaseRound *round, bool round_ok);

#endif							/* IDGEN_LEASE_POOL_H */
