/*-------------------------------------------------------------------------
 *
 * decode.c
 *		Decoding IDs by the layout history, in this database: each ID by the
 *		version that minted it, where the database's stamp lets it be told
 *		(layout_stamp.c); the first ID of an instant; and the SQL
 *		decoders.
 *
 * Above the stamp, so that layout.c stays the vocabulary: encoding, the
 * minting clock and the conversions, with no catalog below it.
 *
 * The volatility of idgen's pure functions, decided here for all of them.
 * IMMUTABLE lets a call be an index expression, a generated column or a
 * partition bound, and a call on constants be folded when the statement is
 * planned, which is what turns WHERE id >= min_id_at('...') into a range
 * of the primary key; in exchange the answer for given arguments must
 * never move while anything may hold it.
 *
 * - The ID decoders (id_to_timestamp, id_to_shard, id_to_sequence,
 *   id_to_layout_version, idgen_decode): IMMUTABLE.  An answer depends on
 *   the version in force at the ID, and a history only grows, at a start,
 *   by a version whose first ID is above every ID the server has minted,
 *   so no ID that exists anywhere on the server ever decodes differently.
 *   In a database whose IDs came from elsewhere (a restore) they answer
 *   only where the database's stamp is the server's history, and fail
 *   otherwise (layout_stamp.c): an answer, once given, is the one it will
 *   always be, or an error.  No session setting reaches them: the layout
 *   settings take a restart, and the time they return is a timestamptz.
 * - min_id_at(timestamptz) and idgen_span(): IMMUTABLE, as a collation is.
 *   For a time before the last start they never move, as above; for a
 *   time after a later layout change they follow it, as a collation's sort
 *   follows its version, and idgen_layout_dependents() lists what holds
 *   them (layout_dependents.c).  STABLE would forbid the partition bounds
 *   and expression indexes they exist for.
 * - The decoders and min_id_at() given a layout as text (layout_spec.c),
 *   and the text form (text_form.c): IMMUTABLE outright; the layout, or
 *   nothing, is an argument.
 * - The public IDs (public_id.c): IMMUTABLE within a key.  The key is not
 *   a session's to change (a file named by a reloaded setting; 1.1's
 *   setting is superuser only), and a change of key breaks every public ID
 *   shown anyway, whatever the label; STABLE would forbid the index on
 *   idgen_to_public(id) the functions are used for, and would stop a dump
 *   holding one from restoring.  doc/reference.md tells what a change of
 *   key leaves stale.
 *
 * The regress test idgen_volatility shows what each label protects and
 * that no setting a session may change moves an answer.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/decode.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "common/int.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "decode.h"
#include "layout.h"
#include "layout_stamp.h"

static void
check_id(int64 id)
{
	idgen_check_preloaded();
	idgen_refuse_negative(id, IDGEN_NEGATIVE_ID_HINT);
}

/* Decoding follows the layout history: each ID by the version that minted it. */
static const IdgenLayoutVersion *
version_of(int64 id)
{
	int			version;

	check_id(id);
	return idgen_history_version_of_id(idgen_decoding_history(), id, &version);
}


TimestampTz
idgen_id_timestamp(int64 id, int *version)
{
	const IdgenLayoutVersion *v;

	check_id(id);
	v = idgen_history_version_of_id(idgen_decoding_history(), id, version);
	return idgen_ms_to_timestamptz(&v->layout, idgen_ms_of_id(&v->layout, id));
}

int
idgen_id_layout_version(int64 id)
{
	int			version;

	check_id(id);
	(void) idgen_history_version_of_id(idgen_decoding_history(), id, &version);
	return version;
}

int32
idgen_id_shard(int64 id)
{
	const IdgenLayoutVersion *v = version_of(id);

	return idgen_shard_of_id(&v->layout, (uint64) id);
}

int32
idgen_id_sequence(int64 id)
{
	const IdgenLayoutVersion *v = version_of(id);

	return (int32) idgen_sequence_of_id(&v->layout, (uint64) id);
}

/*
 * The smallest ID of the millisecond containing ts, under the version in
 * force at ts: shard and sequence zero, so [min_id_at(a), min_id_at(b))
 * holds every ID minted in [a, b).  Held between the version's first ID and
 * the next version's, so that it rises with ts across a cut-over even where
 * the new layout moved the time field.
 */
int64
idgen_min_id_at(TimestampTz ts)
{
	const IdgenLayoutVersion *v;
	int			version;
	uint64		below;
	int64		max_ms;
	int64		ms;
	int64		id;

	idgen_check_preloaded();
	v = idgen_history_version_at(idgen_decoding_history(), ts, &version, &below);
	max_ms = idgen_max_ms(&v->layout);

	if (TIMESTAMP_IS_NOBEGIN(ts) || ts < v->layout.epoch)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp is before the epoch of the ID layout"),
				 errdetail("\"%s\" is %s.", "idgen.epoch",
						   timestamptz_to_str(v->layout.epoch)),
				 errhint("Use a timestamp on or after the epoch.")));

	if (TIMESTAMP_IS_NOEND(ts))
		ms = max_ms;
	else
		ms = idgen_ms_of_timestamptz(&v->layout, ts);
	if (ms >= max_ms)
	{
		/* a version that ended before the next began: the next's first */
		if (below != PG_UINT64_MAX)
			return (int64) below;
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp is past the end of the ID layout"),
				 errdetail("With %d bits of milliseconds, IDs end at %s.",
						   idgen_time_bits(&v->layout),
						   timestamptz_to_str(idgen_layout_end(&v->layout))),
				 errhint("Use a timestamp before the end of the layout.")));
	}

	id = (int64) idgen_first_id_of_ms(&v->layout, ms);
	id = Max(id, (int64) v->first_id);
	if ((uint64) id > below)
		id = (int64) below;
	return id;
}

/* ---- SQL ---- */

PG_FUNCTION_INFO_V1(id_to_timestamp);
PG_FUNCTION_INFO_V1(min_id_at);
PG_FUNCTION_INFO_V1(id_to_shard);
PG_FUNCTION_INFO_V1(id_to_sequence);
PG_FUNCTION_INFO_V1(idgen_decode);
PG_FUNCTION_INFO_V1(idgen_span);
PG_FUNCTION_INFO_V1(idgen_layout_history);
PG_FUNCTION_INFO_V1(id_to_layout_version);

static TimestampTz
id_timestamp(int64 id)
{
	int			version;
	TimestampTz ts = idgen_id_timestamp(id, &version);

	if (!IS_VALID_TIMESTAMP(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range"),
				 errdetail("ID " INT64_FORMAT " encodes a time past the end of PostgreSQL's timestamps.", id)));
	return ts;
}

Datum
id_to_timestamp(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(id_timestamp(PG_GETARG_INT64(0)));
}

Datum
min_id_at(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(idgen_min_id_at(PG_GETARG_TIMESTAMPTZ(0)));
}

Datum
id_to_shard(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(idgen_id_shard(PG_GETARG_INT64(0)));
}

Datum
id_to_sequence(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(idgen_id_sequence(PG_GETARG_INT64(0)));
}

Datum
idgen_decode(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {0};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	values[0] = TimestampTzGetDatum(id_timestamp(id));
	values[1] = Int32GetDatum(idgen_id_shard(id));
	values[2] = Int32GetDatum(idgen_id_sequence(id));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * How many IDs an interval covers under the server's layout: the width of
 * a partition of IDs one day (hour, week) wide, as pg_partman's integer
 * mode counts it, for p_interval and for retention.
 */
Datum
idgen_span(PG_FUNCTION_ARGS)
{
	Interval   *span = PG_GETARG_INTERVAL_P(0);
	int64		us;
	int64		epoch_unix_us;

	idgen_check_preloaded();
	if (span->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("an interval with months or years has no fixed length in IDs"),
				 errhint("Give it in days, such as '30 days'.")));
	if (pg_mul_s64_overflow((int64) span->day, USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, span->time, &us) || us <= 0 || us % 1000 != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("an ID span must be a positive whole number of milliseconds")));
	if (us / 1000 >= idgen_max_ms(&idgen_layout))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the interval is longer than the ID layout"),
				 errdetail("With %d bits of milliseconds, IDs end at %s.",
						   idgen_time_bits(&idgen_layout),
						   timestamptz_to_str(idgen_layout_end(&idgen_layout)))));

	/* spans of IDs begin at the epoch: say when that is off the boundaries */
	epoch_unix_us = idgen_layout.epoch + IDGEN_POSTGRES_EPOCH_UNIX_US;
	if (epoch_unix_us % us != 0)
		ereport(WARNING,
				(errmsg("the epoch of the ID layout is not on a boundary of this interval"),
				 errdetail("Partitions of this span begin at %s plus whole spans, not on whole intervals from 1970-01-01 00:00 UTC.",
						   timestamptz_to_str(idgen_layout.epoch)),
				 errhint("Choose an \"%s\" on such a boundary, such as a midnight UTC, if partitions must fall on them.",
						 "idgen.epoch")));

	PG_RETURN_INT64((int64) idgen_first_id_of_ms(&idgen_layout, us / 1000));
}

Datum
id_to_layout_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(idgen_id_layout_version(PG_GETARG_INT64(0)));
}

/*
 * One row per version of the server's layout history, oldest first, and
 * whether this database's stamp lists it.
 */
Datum
idgen_layout_history(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const IdgenLayoutHistory *history;
	const IdgenLayoutHistory *stamp;

	idgen_check_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	history = idgen_server_history(NULL);
	/* a database whose stamp differs still shows the server's history */
	stamp = idgen_database_stamp_if_any();
	for (int i = 0; i < history->nversions; i++)
	{
		const IdgenLayoutVersion *v = &history->versions[i];
		Datum		values[10];
		bool		nulls[10] = {0};
		bool		decodes = false;

		if (stamp == NULL)
			decodes = true;
		else if (i < stamp->nversions &&
				 idgen_version_equal(&stamp->versions[i], v))
			decodes = true;

		values[0] = Int32GetDatum(i + 1);
		values[1] = TimestampTzGetDatum(v->layout.epoch);
		values[2] = Int32GetDatum(v->layout.shard_bits);
		values[3] = Int32GetDatum(v->layout.sequence_bits);
		values[4] = Int32GetDatum(idgen_time_bits(&v->layout));
		values[5] = Int64GetDatum((int64) v->first_id);
		values[6] = TimestampTzGetDatum(idgen_ms_to_timestamptz(&v->layout, idgen_ms_of_id(&v->layout, v->first_id)));
		values[7] = TimestampTzGetDatum(idgen_layout_end(&v->layout));
		values[8] = BoolGetDatum(i == 0 && (history->flags & IDGEN_HISTORY_ASSUMED) != 0);
		values[9] = BoolGetDatum(decodes);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
