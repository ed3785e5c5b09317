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

#include "lease_set.h"

/*
 * The lanes' part of the lease worker's round (lease_worker.c), in its one
 * registry transaction: begin says whether they are in it, exchange runs
 * their statements, end applies what the registry committed.
 */
extern void idgen_lane_leases_refresh(void);
extern bool idgen_lane_leases_begin(const LeaseRhythm *rhythm, bool giving_back_all);
extern bool idgen_lane_leases_exchange(int64 deadline, const char *owner_name,
									   char **error);
extern void idgen_lane_leases_end(bool committed, const char *error);
extern int64 idgen_lane_leases_next_us(void);

#endif							/* IDGEN_LANE_LEASE_H */
