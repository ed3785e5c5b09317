/*-------------------------------------------------------------------------
 *
 * lane.h
 *		Backfill lanes: minting IDs for a given time on shards reserved for
 *		it, each lane a cursor below a durable fence.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lane.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LANE_H
#define IDGEN_LANE_H

#include "datatype/timestamp.h"

#include "wal_records.h"

/* A run of IDs one lane gave: consecutive states of one shard. */
typedef struct IdgenLaneRun
{
	int32		shard;
	uint64		first;			/* state word: (ms << sequence_bits) | seq */
	int64		count;
} IdgenLaneRun;

/*
 * With a lease registry, a table the fence worker wrote and logged, whose
 * fences wait for the registry to hold its ranges (lane_lease.c).  Indexes
 * are the lanes' in shared memory.
 */
typedef struct IdgenLanesPending
{
	uint64		asked;			/* the asks it answers */
	int			n;
	uint64		gens[IDGEN_LANE_TABLE_MAX];
	int64		fences[IDGEN_LANE_TABLE_MAX];
	uint64		late_gens[IDGEN_LANE_TABLE_MAX];	/* the windows it holds */
	int64		late_lo[IDGEN_LANE_TABLE_MAX];
	int64		late_hi[IDGEN_LANE_TABLE_MAX];
	IdgenLaneTable table;
} IdgenLanesPending;

/* shared memory and the start (lane.c, lane_durable.c) */
extern Size idgen_lanes_shmem_size(void);
extern void idgen_lanes_shmem_startup(void);
extern int64 idgen_lanes_floor_ms(void);

/* minting, for backfill.c */
extern int64 idgen_lanes_ms_of(TimestampTz t);
extern void idgen_lanes_reserve(int64 ms, int64 want, IdgenLaneRun *run);
extern int64 idgen_lane_run_id(const IdgenLaneRun *run, int64 i);
extern int	idgen_lanes_init(void);
extern void idgen_lanes_raise_past(int64 id);
extern int	idgen_lanes_kept(int32 *shards);
extern bool idgen_lanes_restore_begins(const int32 *shards, int n, int level);
extern void idgen_lanes_restore_subxact(bool committed, int level);
extern bool idgen_lanes_restore_names(void);
extern bool idgen_lanes_restoring_here;
extern void idgen_lanes_restore_ends(bool committed);

/* the lanes' leases (lane_lease.c, in the lease worker) */
extern bool idgen_lanes_pending(IdgenLanesPending *out);
extern void idgen_lanes_publish_pending(const IdgenLanesPending *pending,
										const int32 *committed, int ncommitted);
extern void idgen_lanes_lease_taken(int32 shard, const int64 *lo, const int64 *hi, int n);
extern void idgen_lanes_lease_lost(int32 shard);
extern bool idgen_lanes_usable(int32 shard);

/* the fence worker and replay */
extern void idgen_lanes_worker_step(void);
extern void idgen_lanes_note_live(void);
extern void idgen_lanes_redo(const IdgenLaneTable *replayed);

/* the statistics: one lane's figures */
typedef struct IdgenLaneFigures
{
	int32		shard;
	bool		configured;
	bool		ready;
	int64		open_from_ms;	/* -1: no open range */
	int64		next_ms;
	int64		fence_ms;
	int			used_ranges;
	uint64		minted;
	uint64		spilled;
	int64		largest_shift_ms;
	const char *not_ready_reason;	/* NULL when ready */
} IdgenLaneFigures;

extern int	idgen_lanes_figures(IdgenLaneFigures *figures);

#endif							/* IDGEN_LANE_H */
