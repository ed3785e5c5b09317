/*-------------------------------------------------------------------------
 *
 * wal_records.h
 *		The kinds of idgen's WAL records and their format.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/wal_records.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_WAL_RECORDS_H
#define IDGEN_WAL_RECORDS_H

/*
 * idgen's own custom WAL resource manager ID (custom IDs run from 128 to
 * 255).  Not RM_EXPERIMENTAL_ID (128): every extension in development
 * shares that one.  163 was free in the community's list of custom resource
 * managers when it was chosen; the README says where to register it.  WAL
 * written under another ID cannot be replayed by this build, so the ID
 * never changes once released.  wal_replay.c replays every record,
 * through the subsystem that wrote it.
 */
#define RM_IDGEN_ID				163
#define XLOG_IDGEN_FENCE		0x00
#define XLOG_IDGEN_LAYOUTS		0x10	/* the layout history, whole */
#define XLOG_IDGEN_STAMPED		0x20	/* the history every database has */
#define XLOG_IDGEN_LANES		0x30	/* the backfill lanes' table, whole */

#include "layout.h"

/* What a FENCE record and the state file carry. */
typedef struct IdgenFenceRecord
{
	uint64		fence_id;		/* no ID at or above this was minted */
	IdgenLayout layout;			/* the layout it was minted under */
} IdgenFenceRecord;

/*
 * The bytes the record had before the layout was a struct of its own, as
 * servers wrote it to WAL and the state file: they must not change.
 */
StaticAssertDecl(sizeof(IdgenFenceRecord) == 24,
				 "IdgenFenceRecord is in WAL and the state file");
StaticAssertDecl(offsetof(IdgenFenceRecord, fence_id) == 0 &&
				 offsetof(IdgenFenceRecord, layout.epoch) == 8 &&
				 offsetof(IdgenFenceRecord, layout.shard_bits) == 16 &&
				 offsetof(IdgenFenceRecord, layout.sequence_bits) == 20,
				 "IdgenFenceRecord is in WAL and the state file");

/*
 * What a LANES record and the file idgen.lanes carry (lane_table.c): for
 * every lane this cluster has kept, the milliseconds it may have minted at,
 * as ranges [lo, hi) of the layout named, whether its past was attested
 * and whether a restore named it since; and the shards it has minted on
 * live.  The record holds the lanes in use only (nlanes of them).
 */
#define IDGEN_LANE_MAX_RANGES	16
#define IDGEN_LANE_MAX_LIVE		16
#define IDGEN_LANE_TABLE_MAX	64	/* IDGEN_MAX_LANES, shard.h */

typedef struct IdgenMsRange
{
	int64		lo;
	int64		hi;				/* exclusive */
} IdgenMsRange;

#define IDGEN_LANE_ATTESTED		0x0001	/* its past is known: it may mint */
#define IDGEN_LANE_RESTORED		0x0002	/* a restore named it: it may not */
#define IDGEN_LANE_FLAGS		(IDGEN_LANE_ATTESTED | IDGEN_LANE_RESTORED)

typedef struct IdgenLaneEntry
{
	int32		shard;
	int16		nranges;
	uint16		flags;
	IdgenMsRange ranges[IDGEN_LANE_MAX_RANGES];	/* ascending, disjoint */
} IdgenLaneEntry;

typedef struct IdgenLaneTable
{
	IdgenLayout layout;			/* the milliseconds' layout */
	int32		unknown;		/* why the lanes wait (lane_table.h), or 0 */
	int32		nlive;
	int32		nlanes;
	uint32		cleared;		/* how often flags were cleared (0 before 1.8) */
	IdgenMsRange live[IDGEN_LANE_MAX_LIVE]; /* shard numbers, [lo, hi) */
	IdgenLaneEntry lanes[IDGEN_LANE_TABLE_MAX];
} IdgenLaneTable;

/* The bytes of a table with n lanes, as logged. */
#define IDGEN_LANE_TABLE_SIZE(n) \
	(offsetof(IdgenLaneTable, lanes) + (n) * sizeof(IdgenLaneEntry))

#endif							/* IDGEN_WAL_RECORDS_H */
