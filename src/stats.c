/*-------------------------------------------------------------------------
 *
 * stats.c
 *		idgen_stats and idgen_stats_backends: reading the counters.
 *
 * Each process counts in its own slot (generator.c), so minting never
 * contends on a counter; readers sum the slots.  Figures are read without a
 * lock and may be a few mints apart from each other, as in pg_stat views.
 *
 * Who sees what, as in pg_stat_activity: anyone may read the node's totals
 * and the list of processes that minted; a process's own figures are shown
 * to roles with the privileges of its session user or of
 * pg_read_all_stats, and are NULL for everyone else.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "generator.h"
#include "layout.h"
#include "stats.h"

PG_FUNCTION_INFO_V1(idgen_stats);
PG_FUNCTION_INFO_V1(idgen_stats_backends);

#define IDGEN_STATS_COLS			13
#define IDGEN_STATS_BACKENDS_COLS	9

static void
check_shmem(void)
{
	idgen_check_preloaded();
	if (idgen_shared == NULL)
		elog(ERROR, "idgen shared memory is not initialized");
}

/* The counter columns both functions show, from "minted" on. */
static int
fill_counters(Datum *values, const uint64 *c)
{
	int			i = 0;

	values[i++] = Int64GetDatum(c[IDGEN_MINTED]);
	values[i++] = Int64GetDatum(c[IDGEN_BORROWED_MS]);
	values[i++] = Int64GetDatum(c[IDGEN_CLOCK_BEHIND]);
	values[i++] = Int64GetDatum(c[IDGEN_CLOCK_STEPS_BACK]);
	values[i++] = Int64GetDatum(c[IDGEN_WAITS]);
	values[i++] = Float8GetDatum(c[IDGEN_WAIT_US] / 1000.0);
	values[i++] = Int64GetDatum(c[IDGEN_MAX_WAIT_ERRORS]);
	return i;
}

Datum
idgen_stats(PG_FUNCTION_ARGS)
{
	IdgenShared *sh;
	TupleDesc	tupdesc;
	Datum		values[IDGEN_STATS_COLS];
	bool		nulls[IDGEN_STATS_COLS] = {0};
	uint64		totals[IDGEN_NUM_COUNTERS] = {0};
	uint64		last_id = 0;
	uint64		last_key = 0;
	int64		now;
	int64		state_ms;
	int64		fence;
	int			low_bits;
	uint64		seq_mask;
	int			i;

	check_shmem();
	sh = idgen_shared;
	low_bits = idgen_layout.shard_bits + idgen_layout.sequence_bits;
	seq_mask = (UINT64CONST(1) << idgen_layout.sequence_bits) - 1;
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	for (int s = 0; s < sh->nslots; s++)
	{
		uint64		id;
		uint64		key;

		for (int c = 0; c < IDGEN_NUM_COUNTERS; c++)
			totals[c] += pg_atomic_read_u64(&sh->slots[s].counters[c]);
		id = pg_atomic_read_u64(&sh->slots[s].last_id);
		/* the latest mint has the largest (ms, sequence), whatever its shard */
		key = ((id >> low_bits) << idgen_layout.sequence_bits) | (id & seq_mask);
		if (id > 0 && key >= last_key)
		{
			last_key = key;
			last_id = id;
		}
	}
	now = idgen_wall_ms();
	state_ms = (int64) (pg_atomic_read_u64(&sh->state) >> idgen_layout.sequence_bits);
	fence = (int64) pg_atomic_read_u64(&sh->fence);

	i = fill_counters(values, totals);
	values[i++] = Int64GetDatum(Max(state_ms - now, 0));
	if (last_id > 0)
		values[i++] = Int64GetDatum((int64) last_id);
	else
		nulls[i++] = true;
	values[i++] = TimestampTzGetDatum(idgen_ms_to_timestamptz(fence));
	values[i++] = Int64GetDatum(fence - now);
	values[i++] = Int64GetDatum(pg_atomic_read_u64(&sh->fence_advances));
	values[i++] = Int64GetDatum(totals[IDGEN_FENCE_WAITS]);
	Assert(i == IDGEN_STATS_COLS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

Datum
idgen_stats_backends(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	IdgenShared *sh;
	bool		read_all;

	check_shmem();
	sh = idgen_shared;
	InitMaterializedSRF(fcinfo, 0);
	read_all = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);

	for (int s = 0; s < sh->nslots; s++)
	{
		IdgenBackendSlot *slot = &sh->slots[s];
		Datum		values[IDGEN_STATS_BACKENDS_COLS];
		bool		nulls[IDGEN_STATS_BACKENDS_COLS] = {0};
		uint64		counters[IDGEN_NUM_COUNTERS];
		int			pid = slot->pid;
		int			i = 0;

		if (pid == 0)
			continue;
		pg_read_barrier();
		for (int c = 0; c < IDGEN_NUM_COUNTERS; c++)
			counters[c] = pg_atomic_read_u64(&slot->counters[c]) - slot->base[c];
		if (counters[IDGEN_MINTED] == 0)
			continue;

		values[i++] = Int32GetDatum(pid);
		if (read_all || has_privs_of_role(GetUserId(), slot->userid))
		{
			i += fill_counters(&values[i], counters);
			values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->last_id));
		}
		else
		{
			for (; i < IDGEN_STATS_BACKENDS_COLS; i++)
				nulls[i] = true;
		}
		Assert(i == IDGEN_STATS_BACKENDS_COLS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
