/*-------------------------------------------------------------------------
 *
 * lane_lease.h
 *		The backfill lanes' rows in the lease registry, for the lease
 *		worker.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lane_lease.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LANE_LEASE_H
#define IDGEN_LANE_LEASE_H

#include "utils/palloc.h"

#include "lease_set.h"

extern void idgen_lane_leases_refresh(void);
extern int64 idgen_lane_leases_step(const char *owner_name, MemoryContext round_context);
extern bool idgen_lane_leases_round(const LeaseRhythm *rhythm, const char *owner_name,
									bool giving_back_all);

#endif							/* IDGEN_LANE_LEASE_H */
