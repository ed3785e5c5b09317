/*-------------------------------------------------------------------------
 *
 * lane_figures.c
 *		What idgen_lanes() shows of each backfill lane: where it mints,
 *		what it minted, and why it does not mint, with what to run.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lane_figures.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/lwlock.h"

#include "lane.h"
#include "lane_shmem.h"

#define RAISE_ATTEST \
	"run SELECT idgen_advance_past(max(id)) on the keys that may hold its IDs, one per shard, then SELECT idgen_lanes_init()"

/* Why the past of every lane is not known; NULL when it is. */
static const char *
past_unknown(IdgenLanesUnknown unknown)
{
	switch (unknown)
	{
		case LANES_NO_FILE:
			return "no lanes file (new, or lost)";
		case LANES_FOREIGN_FILE:
			return "the lanes file is another cluster's";
		case LANES_AFTER_RECOVERY:
			return "replayed another server's WAL";
		case LANES_RESTORED_INTO:
			return "a restore (before 1.8)";
		case LANES_OVERFLOW:
		case LANES_KNOWN:
			break;
	}
	return NULL;
}

/*
 * With the lock: why a lane does not mint, and what to run; NULL when it
 * mints.  A restore's stop is said before a reason of every lane (which
 * the mint path gives first): the attestation that ends that reason ends
 * the stop too, so its raise must come first.
 */
static const char *
not_ready_reason(const IdgenLane *lane)
{
	const char *past = past_unknown(idgen_lanes->unknown);

	if (lane->mints && idgen_lanes->unknown == LANES_KNOWN)
		return NULL;
	if (!lane->configured)
		return "not named in idgen.backfill_shards";
	if (idgen_lane_table_was_live(&idgen_lanes->base, lane->used.shard))
		return "minted live here: remove it from idgen.backfill_shards";
	if (idgen_lanes->unknown == LANES_OVERFLOW)
		return "replay met more lanes than are kept: backfill on another server";
	if (lane->used.flags & IDGEN_LANE_RESTORED)
	{
		/* a 1.7 table's server-wide restore says the same */
		if (idgen_lanes->unknown == LANES_RESTORED_INTO)
			past = NULL;
		return psprintf("named by a restore%s%s: run SELECT idgen_advance_past(max(id)) on the restored keys, one per shard%s, then SELECT idgen_lanes_init()",
						past ? ", and " : "", past ? past : "",
						past ? ", and on the keys that may hold its other IDs" : "");
	}
	if (past != NULL)
		return psprintf("%s: " RAISE_ATTEST, past);
	if (lane->restoring > 0)
		return "a restore naming it is in an open transaction";
	if (!lane_attested(lane))
		return "new since the lanes were attested: " RAISE_ATTEST;
	return "its lease registry row is another server's, or not taken yet";
}

int
idgen_lanes_figures(IdgenLaneFigures *figures)
{
	int			n;

	if (idgen_lanes == NULL)
		return 0;
	LWLockAcquire(idgen_lanes->lock, LW_SHARED);
	n = idgen_lanes->nlanes;
	for (int i = 0; i < n; i++)
	{
		IdgenLane  *lane = &idgen_lanes->lanes[i];
		IdgenLaneFigures *f = &figures[i];
		uint64		next = pg_atomic_read_u64(&lane->next);

		f->shard = lane->used.shard;
		f->configured = lane->configured;
		f->not_ready_reason = not_ready_reason(lane);
		f->ready = f->not_ready_reason == NULL;
		f->open_from_ms = lane->open_lo;
		f->next_ms = next == LANE_CLOSED ? -1 : lane_state_ms(next);
		f->fence_ms = lane->open_lo >= 0 ? (int64) pg_atomic_read_u64(&lane->fence) : -1;
		f->used_ranges = lane->used.nranges;
		f->minted = pg_atomic_read_u64(&lane->minted);
		f->spilled = pg_atomic_read_u64(&lane->spilled);
		f->largest_shift_ms = (int64) pg_atomic_read_u64(&lane->largest_shift);
	}
	LWLockRelease(idgen_lanes->lock);
	return n;
}
