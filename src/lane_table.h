/*-------------------------------------------------------------------------
 *
 * lane_table.h
 *		The backfill lanes' durable table: the milliseconds each lane may
 *		have minted at, its file and its WAL record.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lane_table.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LANE_TABLE_H
#define IDGEN_LANE_TABLE_H

#include "wal_records.h"

#define IDGEN_LANES_FILE		"idgen.lanes"

/*
 * Why the lanes may not mint until idgen_lanes_init(); the table keeps it
 * (IdgenLaneTable.unknown), so that a restart does not forget a refusal.
 */
typedef enum IdgenLanesUnknown
{
	LANES_KNOWN = 0,
	LANES_NO_FILE,
	LANES_FOREIGN_FILE,			/* the data directory is a copy */
	LANES_AFTER_RECOVERY,		/* a promotion, a restore, a backup */
	LANES_OVERFLOW,				/* replay met more lanes than are kept */
	LANES_RESTORED_INTO			/* a dump was restored into a database */
} IdgenLanesUnknown;

/* What the file said at start. */
typedef enum IdgenLaneFileRead
{
	LANE_FILE_MISSING,
	LANE_FILE_OURS,
	LANE_FILE_FOREIGN			/* another cluster's: a copy */
} IdgenLaneFileRead;

/* Ranges of one lane; every change keeps them ascending and disjoint. */
extern void idgen_lane_add_range(IdgenLaneEntry *lane, int64 lo, int64 hi);
extern bool idgen_lane_used(const IdgenLaneEntry *lane, int64 ms);
extern int64 idgen_lane_used_above(const IdgenLaneEntry *lane, int64 ms);
extern int64 idgen_lane_free_from(const IdgenLaneEntry *lane, int64 ms);

/* Whole tables. */
extern IdgenLaneEntry *idgen_lane_table_find(IdgenLaneTable *table, int32 shard);
extern bool idgen_lane_table_merge(IdgenLaneTable *into,
								   const IdgenLaneTable *from);
extern uint16 idgen_lane_flags_merge(uint16 into, uint32 into_cleared,
									 uint16 from, uint32 from_cleared);
extern void idgen_lane_table_add_live(IdgenLaneTable *table, int32 shard);
extern bool idgen_lane_table_was_live(const IdgenLaneTable *table, int32 shard);

extern IdgenLaneFileRead idgen_lane_table_read(IdgenLaneTable *table);
extern void idgen_lane_table_write(const IdgenLaneTable *table);
extern bool idgen_lane_table_log(const IdgenLaneTable *table);
extern bool idgen_lane_table_check(const IdgenLaneTable *table, size_t len);

#endif							/* IDGEN_LANE_TABLE_H */
