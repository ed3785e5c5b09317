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
extern void idgen_lanes_restored_into(void);

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
} IdgenLaneFigures;

extern int	idgen_lanes_figures(IdgenLaneFigures *figures);

#endif							/* IDGEN_LANE_H */
