/*-------------------------------------------------------------------------
 *
 * lane_table.c
 *		The backfill lanes' durable table: for every lane this cluster has
 *		kept, the milliseconds it may have minted at.
 *
 * A lane is unique the way the live generator is: its IDs at a millisecond
 * come from a cursor that only grows below a durable fence.  What is
 * durable is this table: each lane's used ranges of milliseconds, the open
 * range counted up to its fence.  A range only ever grows or joins another,
 * so any two copies of the table (the file, a WAL record, what a standby
 * replayed) are merged by union, and the union is safe: it may call a
 * millisecond used that was not, never the reverse.  When a lane holds more
 * ranges than fit, the two nearest are joined, giving up the gap between.
 *
 * The table goes to its own file, $PGDATA/idgen.lanes (written to a
 * temporary file and durable_rename'd), and to WAL as one LANES record
 * holding it whole, which crash recovery and standbys merge in.  A file of
 * its own: an older library rewrites idgen.state without knowing of lanes,
 * and must not drop them.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lane_table.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "port/pg_crc32c.h"

#include "durable_file.h"
#include "lane_table.h"
#include "layout.h"

#define IDGEN_LANES_TMP_FILE	IDGEN_LANES_FILE ".tmp"
#define IDGEN_LANES_MAGIC		0x69646c31	/* "idl1" */
#define IDGEN_LANES_VERSION		1

typedef struct IdgenLaneFile
{
	uint32		magic;
	uint32		version;
	uint64		system_identifier;	/* pg_control's, of the writer */
	IdgenLaneTable table;
	pg_crc32c	crc;			/* of everything above */
} IdgenLaneFile;

/* ---- one lane's ranges ---- */

/*
 * Add [lo, hi), joining what it touches; past the capacity, join the two
 * ranges with the smallest gap between them.
 */
void
idgen_lane_add_range(IdgenLaneEntry *lane, int64 lo, int64 hi)
{
	IdgenMsRange merged[IDGEN_LANE_MAX_RANGES + 1];
	int			n = 0;
	bool		placed = false;

	if (lo >= hi)
		return;
	for (int i = 0; i < lane->nranges; i++)
	{
		IdgenMsRange r = lane->ranges[i];

		if (r.hi < lo)
			merged[n++] = r;
		else if (r.lo > hi)
		{
			if (!placed)
			{
				merged[n].lo = lo;
				merged[n++].hi = hi;
				placed = true;
			}
			merged[n++] = r;
		}
		else
		{
			/* touches or overlaps: absorb it */
			lo = Min(lo, r.lo);
			hi = Max(hi, r.hi);
		}
	}
	if (!placed)
	{
		merged[n].lo = lo;
		merged[n++].hi = hi;
	}

	while (n > IDGEN_LANE_MAX_RANGES)
	{
		int			best = 0;

		for (int i = 1; i < n - 1; i++)
			if (merged[i + 1].lo - merged[i].hi < merged[best + 1].lo - merged[best].hi)
				best = i;
		merged[best].hi = merged[best + 1].hi;
		memmove(&merged[best + 1], &merged[best + 2],
				(n - best - 2) * sizeof(IdgenMsRange));
		n--;
	}
	memcpy(lane->ranges, merged, n * sizeof(IdgenMsRange));
	lane->nranges = n;
}

bool
idgen_lane_used(const IdgenLaneEntry *lane, int64 ms)
{
	for (int i = 0; i < lane->nranges; i++)
		if (ms >= lane->ranges[i].lo && ms < lane->ranges[i].hi)
			return true;
	return false;
}

/* The first used millisecond above ms, or PG_INT64_MAX. */
int64
idgen_lane_used_above(const IdgenLaneEntry *lane, int64 ms)
{
	for (int i = 0; i < lane->nranges; i++)
		if (lane->ranges[i].lo > ms)
			return lane->ranges[i].lo;
	return PG_INT64_MAX;
}

/* The first millisecond at or above ms that the lane has not used. */
int64
idgen_lane_free_from(const IdgenLaneEntry *lane, int64 ms)
{
	for (int i = 0; i < lane->nranges; i++)
		if (ms >= lane->ranges[i].lo && ms < lane->ranges[i].hi)
			ms = lane->ranges[i].hi;
	return ms;
}

/* ---- whole tables ---- */

/* A shard's entry, added if there is room; NULL past the capacity. */
IdgenLaneEntry *
idgen_lane_table_find(IdgenLaneTable *table, int32 shard)
{
	IdgenLaneEntry *lane;

	for (int i = 0; i < table->nlanes; i++)
		if (table->lanes[i].shard == shard)
			return &table->lanes[i];
	if (table->nlanes >= IDGEN_LANE_TABLE_MAX)
		return NULL;
	lane = &table->lanes[table->nlanes++];
	memset(lane, 0, sizeof(*lane));
	lane->shard = shard;
	return lane;
}

/*
 * A range of another layout's milliseconds in this one's, widened to whole
 * milliseconds of this one: the same instants, or more.
 */
static void
convert_range(const IdgenLayout *from, IdgenMsRange *r)
{
	int64		shift_us = from->epoch - idgen_layout.epoch;
	int64		lo_us = r->lo * 1000 + shift_us;
	int64		hi_us = r->hi * 1000 + shift_us;

	r->lo = Max(lo_us >= 0 ? lo_us / 1000 : -((-lo_us + 999) / 1000), 0);
	r->hi = Max(hi_us >= 0 ? (hi_us + 999) / 1000 : -(-hi_us / 1000), 0);
}

/*
 * into gets every range of from: the union, in into's layout.  False when
 * a lane of from found no room, and was left out.
 */
bool
idgen_lane_table_merge(IdgenLaneTable *into, const IdgenLaneTable *from)
{
	bool		same = idgen_layout_equal(&into->layout, &from->layout);
	bool		whole = true;

	for (int i = 0; i < from->nlive; i++)
		for (int64 s = from->live[i].lo; s < from->live[i].hi; s++)
			idgen_lane_table_add_live(into, (int32) s);
	for (int i = 0; i < from->nlanes; i++)
	{
		const IdgenLaneEntry *src = &from->lanes[i];
		IdgenLaneEntry *dst = idgen_lane_table_find(into, src->shard);

		if (dst == NULL)
		{
			whole = false;
			continue;
		}
		dst->flags = idgen_lane_flags_merge(dst->flags, into->cleared,
											src->flags, from->cleared);

		for (int j = 0; j < src->nranges; j++)
		{
			IdgenMsRange r = src->ranges[j];

			if (!same)
				convert_range(&from->layout, &r);
			idgen_lane_add_range(dst, r.lo, r.hi);
		}
	}
	into->cleared = Max(into->cleared, from->cleared);
	return whole;
}

/*
 * A lane's flags from two tables.  ATTESTED only grows.  RESTORED is set
 * by a restore and cleared by an attestation, which counts in its table's
 * "cleared": the table that counts more clearings says whether it is set,
 * and with the same count, either does (a restore since).  A table
 * replayed after the file (older) cannot set it back, nor clear it.
 */
uint16
idgen_lane_flags_merge(uint16 into, uint32 into_cleared,
					   uint16 from, uint32 from_cleared)
{
	uint16		restored;

	if (from_cleared > into_cleared)
		restored = from & IDGEN_LANE_RESTORED;
	else if (from_cleared < into_cleared)
		restored = into & IDGEN_LANE_RESTORED;
	else
		restored = (into | from) & IDGEN_LANE_RESTORED;
	return ((into | from) & IDGEN_LANE_ATTESTED) | restored;
}

/* Shard numbers are kept as ranges too; past the capacity, widened. */
void
idgen_lane_table_add_live(IdgenLaneTable *table, int32 shard)
{
	IdgenLaneEntry as_lane;

	if (idgen_lane_table_was_live(table, shard))
		return;
	as_lane.nranges = table->nlive;
	memcpy(as_lane.ranges, table->live, table->nlive * sizeof(IdgenMsRange));
	idgen_lane_add_range(&as_lane, shard, (int64) shard + 1);
	table->nlive = Min(as_lane.nranges, IDGEN_LANE_MAX_LIVE);
	memcpy(table->live, as_lane.ranges, table->nlive * sizeof(IdgenMsRange));
}

bool
idgen_lane_table_was_live(const IdgenLaneTable *table, int32 shard)
{
	for (int i = 0; i < table->nlive; i++)
		if (shard >= table->live[i].lo && shard < table->live[i].hi)
			return true;
	return false;
}

/* A table read from a file or WAL: sane before anything trusts it. */
bool
idgen_lane_table_check(const IdgenLaneTable *table, size_t len)
{
	if (len < offsetof(IdgenLaneTable, lanes) ||
		table->unknown < LANES_KNOWN || table->unknown > LANES_RESTORED_INTO ||
		table->nlanes < 0 || table->nlanes > IDGEN_LANE_TABLE_MAX ||
		table->nlive < 0 || table->nlive > IDGEN_LANE_MAX_LIVE ||
		len != IDGEN_LANE_TABLE_SIZE(table->nlanes))
		return false;
	for (int i = 0; i < table->nlive; i++)
		if (table->live[i].lo < 0 || table->live[i].lo >= table->live[i].hi ||
			table->live[i].hi > PG_INT32_MAX ||
			(i > 0 && table->live[i].lo <= table->live[i - 1].hi))
			return false;
	for (int i = 0; i < table->nlanes; i++)
	{
		const IdgenLaneEntry *lane = &table->lanes[i];

		if (lane->shard < 0 || lane->nranges < 0 ||
			lane->nranges > IDGEN_LANE_MAX_RANGES ||
			(lane->flags & ~IDGEN_LANE_FLAGS) != 0)
			return false;
		for (int j = 0; j < lane->nranges; j++)
			if (lane->ranges[j].lo < 0 || lane->ranges[j].lo >= lane->ranges[j].hi ||
				(j > 0 && lane->ranges[j].lo <= lane->ranges[j - 1].hi))
				return false;
	}
	return true;
}

/* ---- the file and the record ---- */

IdgenLaneFileRead
idgen_lane_table_read(IdgenLaneTable *table)
{
	IdgenLaneFile file;
	int			len = idgen_read_whole(IDGEN_LANES_FILE, &file, sizeof(file));

	memset(table, 0, sizeof(*table));
	table->layout = idgen_layout;
	if (len < 0)
		return LANE_FILE_MISSING;

	if (len != sizeof(file) || file.magic != IDGEN_LANES_MAGIC ||
		file.version != IDGEN_LANES_VERSION ||
		!idgen_file_intact(&file, offsetof(IdgenLaneFile, crc)) ||
		!idgen_lane_table_check(&file.table,
								IDGEN_LANE_TABLE_SIZE(file.table.nlanes)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idgen's lanes file \"%s\" is corrupted", IDGEN_LANES_FILE),
				 errdetail("It records which milliseconds the backfill lanes have minted at."),
				 errhint("Restore it from a backup of this cluster; removing it stops the lanes until idgen_lanes_init() is run.")));

	(void) idgen_lane_table_merge(table, &file.table);
	table->unknown = file.table.unknown;
	return file.system_identifier == GetSystemIdentifier() ?
		LANE_FILE_OURS : LANE_FILE_FOREIGN;
}

void
idgen_lane_table_write(const IdgenLaneTable *table)
{
	IdgenLaneFile file;

	memset(&file, 0, sizeof(file));
	file.magic = IDGEN_LANES_MAGIC;
	file.version = IDGEN_LANES_VERSION;
	file.system_identifier = GetSystemIdentifier();
	memcpy(&file.table, table, IDGEN_LANE_TABLE_SIZE(table->nlanes));
	idgen_file_write(IDGEN_LANES_FILE, IDGEN_LANES_TMP_FILE, &file, sizeof(file),
					 offsetof(IdgenLaneFile, crc));
}

/* Logged whole, flushed, received by the synchronous standbys. */
bool
idgen_lane_table_log(const IdgenLaneTable *table)
{
	return idgen_log_durably(XLOG_IDGEN_LANES, table,
								   IDGEN_LANE_TABLE_SIZE(table->nlanes));
}
