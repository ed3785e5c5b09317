/*-------------------------------------------------------------------------
 *
 * decode.c
 *		Decoding IDs by the layout history, in this database: each ID by the
 *		version that minted it, where the database's stamp lets it be told
 *		(layout_stamp.c); and the first ID of an instant.
 *
 * Above the stamp, so that layout.c stays the vocabulary: encoding, the
 * minting clock and the conversions, with no catalog below it.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/decode.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/timestamp.h"

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
	return idgen_version_ms_to_timestamptz(v, id >> idgen_version_low_bits(v));
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

	return (int32) ((id >> v->sequence_bits) &
					((INT64CONST(1) << v->shard_bits) - 1));
}

int32
idgen_id_sequence(int64 id)
{
	const IdgenLayoutVersion *v = version_of(id);

	return (int32) (id & ((INT64CONST(1) << v->sequence_bits) - 1));
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
	int			low_bits;
	int			time_bits;
	int64		ms;
	int64		id;

	idgen_check_preloaded();
	v = idgen_history_version_at(idgen_decoding_history(), ts, &version, &below);
	low_bits = idgen_version_low_bits(v);
	time_bits = 63 - low_bits;

	if (TIMESTAMP_IS_NOBEGIN(ts) || ts < v->epoch)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp is before the epoch of the ID layout"),
				 errdetail("\"%s\" is %s.", "idgen.epoch",
						   timestamptz_to_str(v->epoch)),
				 errhint("Use a timestamp on or after the epoch.")));

	/*
	 * ts >= epoch, so the difference is non-negative, but it may not fit in
	 * an int64 (the largest timestamp less an epoch long before 2000): it
	 * does in a uint64, and in milliseconds it fits an int64 again.
	 */
	if (TIMESTAMP_IS_NOEND(ts))
		ms = INT64CONST(1) << time_bits;
	else
		ms = (int64) (((uint64) ts - (uint64) v->epoch) / 1000);
	if (ms >= (INT64CONST(1) << time_bits))
	{
		/* a version that ended before the next began: the next's first */
		if (below != PG_UINT64_MAX)
			return (int64) below;
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp is past the end of the ID layout"),
				 errdetail("With %d bits of milliseconds, IDs end at %s.",
						   time_bits,
						   timestamptz_to_str(idgen_version_ms_to_timestamptz(v, INT64CONST(1) << time_bits))),
				 errhint("Use a timestamp before the end of the layout.")));
	}

	id = ms << low_bits;
	id = Max(id, (int64) v->first_id);
	if ((uint64) id > below)
		id = (int64) below;
	return id;
}
