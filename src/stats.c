/*-------------------------------------------------------------------------
 *
 * stats.c
 *		idgen_stats and idgen_stats_backends: reading the counters; and
 *		idgen_leases(): the shard leases as the lease worker published them.
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
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "generator.h"
#include "layout.h"
#include "lease_gate.h"
#include "lease_set.h"
#include "shard.h"
#include "stats.h"

PG_FUNCTION_INFO_V1(idgen_stats);
PG_FUNCTION_INFO_V1(idgen_stats_backends);
PG_FUNCTION_INFO_V1(idgen_leases);

#define IDGEN_STATS_COLS			16
#define IDGEN_STATS_COLS_1_1		13	/* before layout_ends, shard, shard_since */
#define IDGEN_STATS_BACKENDS_COLS	9

static void
check_shmem(void)
{
	idgen_check_preloaded();
	if (!idgen_generator_attached())
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
	TupleDesc	tupdesc;
	Datum		values[IDGEN_STATS_COLS];
	bool		nulls[IDGEN_STATS_COLS] = {0};
	IdgenNodeFigures f;
	int64		now;
	int32		shard;
	TimestampTz since;
	int			i;

	check_shmem();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	idgen_read_node_figures(&f);
	now = idgen_wall_ms();

	i = fill_counters(values, f.counters);
	values[i++] = Int64GetDatum(Max(f.generator_ms - now, 0));
	if (f.last_id > 0)
		values[i++] = Int64GetDatum(f.last_id);
	else
		nulls[i++] = true;
	values[i++] = TimestampTzGetDatum(idgen_ms_to_timestamptz(&idgen_layout, f.fence_ms));
	values[i++] = Int64GetDatum(f.fence_ms - now);
	values[i++] = Int64GetDatum((int64) f.fence_advances);
	values[i++] = Int64GetDatum((int64) f.counters[IDGEN_FENCE_WAITS]);
	values[i++] = TimestampTzGetDatum(idgen_layout_end(&idgen_layout));
	/* the shard idgen_next() mints for; with a pool, none until claimed */
	shard = idgen_pool_on ? idgen_pool_held() : idgen_shard_id;
	if (shard >= 0)
		values[i++] = Int32GetDatum(shard);
	else
		nulls[i++] = true;
	since = shard >= 0 && idgen_leases_on ? idgen_lease_since(shard) : 0;
	if (since != 0)
		values[i++] = TimestampTzGetDatum(since);
	else
		nulls[i++] = true;
	Assert(i == IDGEN_STATS_COLS);

	/* a database still at 1.1 declares the first columns only */
	if (tupdesc->natts != IDGEN_STATS_COLS &&
		tupdesc->natts != IDGEN_STATS_COLS_1_1)
		elog(ERROR, "idgen_stats() is declared with %d columns, expected %d",
			 tupdesc->natts, IDGEN_STATS_COLS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

Datum
idgen_stats_backends(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		read_all;
	int			nslots;

	check_shmem();
	InitMaterializedSRF(fcinfo, 0);
	read_all = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	nslots = idgen_process_slots();

	for (int s = 0; s < nslots; s++)
	{
		IdgenProcessFigures f;
		Datum		values[IDGEN_STATS_BACKENDS_COLS];
		bool		nulls[IDGEN_STATS_BACKENDS_COLS] = {0};
		int			i = 0;

		if (!idgen_read_process_figures(s, &f) || f.counters[IDGEN_MINTED] == 0)
			continue;

		values[i++] = Int32GetDatum(f.pid);
		if (read_all || has_privs_of_role(GetUserId(), f.userid))
		{
			i += fill_counters(&values[i], f.counters);
			values[i++] = Int64GetDatum(f.last_id);
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

#define IDGEN_LEASES_COLS		4
#define IDGEN_LEASES_COLS_1_1	3	/* before since */

/*
 * This server's lease on each shard it owns: no rows without a registry.
 * valid_until is the last millisecond this server may stamp, since when
 * it holds the lease.  With a pool, the one row of the shard it claimed,
 * or a row without a shard, "claiming", while it holds none.
 */
Datum
idgen_leases(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int32	   *shards;
	int			nshards;
	int64		now;

	idgen_check_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	/* a database still at 1.1 declares every column but the last */
	if (rsinfo->setDesc->natts != IDGEN_LEASES_COLS &&
		rsinfo->setDesc->natts != IDGEN_LEASES_COLS_1_1)
		elog(ERROR, "idgen_leases() is declared with %d columns, expected %d",
			 rsinfo->setDesc->natts, IDGEN_LEASES_COLS);
	if (!idgen_leases_on)
		PG_RETURN_VOID();

	if (idgen_pool_on)
	{
		int32		held = idgen_pool_held();

		shards = palloc(sizeof(int32));
		shards[0] = held;
		nshards = held >= 0 ? 1 : 0;
		if (held < 0)
		{
			Datum		values[IDGEN_LEASES_COLS] = {0};
			bool		nulls[IDGEN_LEASES_COLS] = {true, false, true, true};

			values[1] = CStringGetTextDatum("claiming");
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	else
		nshards = idgen_owned_shards(&shards);
	now = idgen_lease_now();
	for (int i = 0; i < nshards; i++)
	{
		uint64		end = idgen_lease_end(shards[i]);
		TimestampTz since = idgen_lease_since(shards[i]);
		Datum		values[IDGEN_LEASES_COLS];
		bool		nulls[IDGEN_LEASES_COLS] = {false, false, false, false};

		values[0] = Int32GetDatum(shards[i]);
		if (end == IDGEN_LEASE_PENDING)
			values[1] = CStringGetTextDatum("pending");
		else if (end == IDGEN_LEASE_NOT_HELD)
			values[1] = CStringGetTextDatum("not held");
		else if ((int64) end <= now)
			values[1] = CStringGetTextDatum("expired");
		else
			values[1] = CStringGetTextDatum("held");
		if (end > IDGEN_LEASE_NOT_HELD)
			values[2] = TimestampTzGetDatum(idgen_ms_to_timestamptz(&idgen_layout, (int64) end - 1));
		else
			nulls[2] = true;
		values[3] = TimestampTzGetDatum(since);
		nulls[3] = since == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}
