/*-------------------------------------------------------------------------
 *
 * backfill.c
 *		The SQL functions of minting for a given time: idgen_next_at,
 *		idgen_next_at_n, idgen_lanes_init and idgen_lanes.
 *
 * The lanes themselves are lane.c's; this file checks arguments and turns
 * runs of states into IDs.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/backfill.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "generator.h"
#include "lane.h"
#include "layout.h"
#include "layout_stamp.h"

PG_FUNCTION_INFO_V1(idgen_next_at);
PG_FUNCTION_INFO_V1(idgen_next_at_n);
PG_FUNCTION_INFO_V1(idgen_lanes_init_sql);
PG_FUNCTION_INFO_V1(idgen_lanes_sql);
PG_FUNCTION_INFO_V1(idgen_lanes_1_8);

Datum
idgen_next_at(PG_FUNCTION_ARGS)
{
	TimestampTz t = PG_GETARG_TIMESTAMPTZ(0);
	IdgenLaneRun run;
	int64		ms;

	idgen_check_preloaded();
	/* the stamp may change while this waits: it is read after */
	idgen_check_lanes_named();
	idgen_check_database_mints();
	ms = idgen_lanes_ms_of(t);
	idgen_lanes_reserve(ms, 1, &run);
	PG_RETURN_INT64(idgen_lane_run_id(&run, 0));
}

static int
id_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

/*
 * A block for one time: runs of one lane after another, the exact
 * millisecond first (several lanes when one is full), returned ascending,
 * as a block of idgen_next_n is.
 */
Datum
idgen_next_at_n(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TimestampTz t = PG_GETARG_TIMESTAMPTZ(0);
	int32		n = PG_GETARG_INT32(1);
	int64		ms;
	int64		done = 0;
	int64	   *ids;
	bool		sorted = true;
	bool		nulls[1] = {false};

	idgen_check_preloaded();
	/* the stamp may change while this waits: it is read after */
	idgen_check_lanes_named();
	idgen_check_database_mints();
	idgen_check_block_size(n);
	ms = idgen_lanes_ms_of(t);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	ids = palloc(sizeof(int64) * n);
	while (done < n)
	{
		IdgenLaneRun run;

		idgen_lanes_reserve(ms, n - done, &run);
		for (int64 i = 0; i < run.count; i++)
			ids[done + i] = idgen_lane_run_id(&run, i);
		/* a later run may sit below an earlier one: another lane's shard */
		if (done > 0 && ids[done] < ids[done - 1])
			sorted = false;
		done += run.count;
	}
	if (!sorted)
		qsort(ids, n, sizeof(int64), id_cmp);
	for (int64 i = 0; i < n; i++)
	{
		Datum		id = Int64GetDatum(ids[i]);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &id, nulls);
	}
	pfree(ids);
	return (Datum) 0;
}

Datum
idgen_lanes_init_sql(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(idgen_lanes_init());
}

static Datum
ms_datum(int64 ms, bool *isnull)
{
	*isnull = ms < 0;
	return ms < 0 ? (Datum) 0 :
		TimestampTzGetDatum(idgen_ms_to_timestamptz(&idgen_layout, ms));
}

/*
 * One row a lane this server keeps: configured now, or used before.  Each
 * version's columns have a C function of their own, so that a library
 * older than the SQL finds no symbol rather than too few columns.
 */
static Datum
lanes_rows(FunctionCallInfo fcinfo, int ncolumns)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	IdgenLaneFigures *figures;
	int			n;

	idgen_check_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != ncolumns)
		elog(ERROR, "idgen_lanes() is declared with %d columns, not %d: run ALTER EXTENSION idgen UPDATE",
			 rsinfo->setDesc->natts, ncolumns);
	figures = palloc(sizeof(IdgenLaneFigures) * IDGEN_LANE_TABLE_MAX);
	n = idgen_lanes_figures(figures);
	for (int i = 0; i < n; i++)
	{
		IdgenLaneFigures *f = &figures[i];
		Datum		values[11];
		bool		nulls[11] = {false};

		values[0] = Int32GetDatum(f->shard);
		values[1] = BoolGetDatum(f->configured);
		values[2] = BoolGetDatum(f->ready);
		values[3] = ms_datum(f->open_from_ms, &nulls[3]);
		values[4] = ms_datum(f->next_ms, &nulls[4]);
		values[5] = ms_datum(f->fence_ms, &nulls[5]);
		values[6] = Int32GetDatum(f->used_ranges);
		values[7] = Int64GetDatum((int64) f->minted);
		values[8] = Int64GetDatum((int64) f->spilled);
		values[9] = Int64GetDatum(f->largest_shift_ms);
		nulls[10] = f->not_ready_reason == NULL;
		if (!nulls[10])
			values[10] = CStringGetTextDatum(f->not_ready_reason);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* 1.6 and 1.7: ten columns */
Datum
idgen_lanes_sql(PG_FUNCTION_ARGS)
{
	return lanes_rows(fcinfo, 10);
}

/* 1.8: not_ready_reason too */
Datum
idgen_lanes_1_8(PG_FUNCTION_ARGS)
{
	return lanes_rows(fcinfo, 11);
}
