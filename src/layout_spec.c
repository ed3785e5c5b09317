/*-------------------------------------------------------------------------
 *
 * layout_spec.c
 *		Decoding IDs under a layout given as an argument.
 *
 * idgen_decode(id, layout), id_to_timestamp(id, layout) and
 * min_id_at(ts, layout) read IDs that idgen did not mint (Twitter, Discord,
 * Instagram, pgEdge snowflake, Sonyflake) or that it minted on another
 * server, on any server: they need neither the preload nor the server's
 * layout, and are IMMUTABLE because the layout is an argument.
 *
 * A layout is a preset name or a specification, items separated by ';':
 *
 *	epoch=<timestamp>		the instant time counts from (required); without a
 *							zone it is UTC, as for idgen.epoch
 *	unit=<N>ms | <N>s		the time field's unit (1ms)
 *	shard_bits=<N>			the shard (machine, node, worker) field (0)
 *	sequence_bits=<N>		the sequence (counter, increment) field (0)
 *	order=shard-sequence | sequence-shard
 *							which of the two sits higher (shard-sequence)
 *
 * The time field takes the rest of 63 bits: an ID is a non-negative bigint.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/layout_spec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "nodes/pg_list.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "idgen_compat.h"
#include "layout.h"

PG_FUNCTION_INFO_V1(idgen_decode_layout);
PG_FUNCTION_INFO_V1(id_to_timestamp_layout);
PG_FUNCTION_INFO_V1(min_id_at_layout);

/*
 * A layout as named: its time field counts units of unit_us, not always
 * milliseconds, so only the helpers on its bits apply to it.
 */
typedef struct LayoutSpec
{
	IdgenLayout layout;
	int64		unit_us;
	bool		sequence_above_shard;
} LayoutSpec;

typedef struct LayoutPreset
{
	const char *name;
	const char *spec;
} LayoutPreset;

/* Each as its owner describes it; the README names the sources. */
static const LayoutPreset presets[] = {
	{"idgen", "epoch=2026-01-01 00:00:00+00; shard_bits=12; sequence_bits=10"},
	{"twitter", "epoch=2010-11-04 01:42:54.657+00; shard_bits=10; sequence_bits=12"},
	{"discord", "epoch=2015-01-01 00:00:00+00; shard_bits=10; sequence_bits=12"},
	{"instagram", "epoch=2011-08-24 21:07:01.721+00; shard_bits=13; sequence_bits=10"},
	/*
	 * pgEdge snowflake puts the 10-bit node above the 12-bit counter, as
	 * Twitter does (snowflake.c of its 2.6.0: NODE_SHIFT 12, COUNT_SHIFT 0,
	 * MSEC_SHIFT 22, epoch 1672531200 s); idgen_layouts decodes IDs it minted.
	 */
	{"pgedge", "epoch=2023-01-01 00:00:00+00; shard_bits=10; sequence_bits=12"},
	{"sonyflake", "epoch=2014-09-01 00:00:00+00; unit=10ms; shard_bits=16; sequence_bits=8; order=sequence-shard"},
};

#define SPEC_NEGATIVE_HINT \
	"IDs of these layouts are never negative; check where this value came from."

/*
 * At most max bytes of s, in whole characters, then "...": a message quotes
 * enough of an argument to recognise it, never a whole 100 kB one.
 */
static char *
clipped(const char *s, int max)
{
	int			len = strlen(s);

	if (len <= max)
		return pstrdup(s);
	return psprintf("%.*s...", pg_mbcliplen(s, len, max), s);
}

idgen_noreturn static pg_noinline void
bad_layout(const char *layout, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid ID layout \"%s\"", clipped(layout, 100)),
			 errdetail_internal("%s", clipped(detail, 300)),
			 errhint("Give a preset (idgen, twitter, discord, instagram, pgedge, sonyflake) or a specification such as 'epoch=2015-01-01 00:00:00+00; unit=1ms; shard_bits=10; sequence_bits=12; order=shard-sequence'.")));
}

static char *
trim(char *s)
{
	char	   *end;

	while (isspace((unsigned char) *s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char) end[-1]))
		*--end = '\0';
	return s;
}

static int
parse_bits(const char *layout, const char *key, const char *value)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (errno != 0 || end == value || *trim(end) != '\0' || v < 0 || v > 31)
		bad_layout(layout, psprintf("%s must be a whole number from 0 to 31, not \"%s\".",
									key, value));
	return (int) v;
}

static void
parse_spec(const char *layout, const char *text, LayoutSpec *spec)
{
	char	   *copy = pstrdup(text);
	char	   *item;
	char	   *save;
	bool		have_epoch = false;
	List	   *seen = NIL;
	ListCell   *lc;

	memset(spec, 0, sizeof(*spec));
	spec->unit_us = 1000;

	for (item = strtok_r(copy, ";", &save); item != NULL;
		 item = strtok_r(NULL, ";", &save))
	{
		char	   *eq = strchr(item, '=');
		char	   *key;
		char	   *value;

		if (*trim(item) == '\0')
			continue;
		if (eq == NULL)
			bad_layout(layout, psprintf("\"%s\" is neither a preset nor key=value.",
										trim(item)));
		*eq = '\0';
		key = trim(item);
		value = trim(eq + 1);
		/* the later of two would win silently, whichever was meant */
		foreach(lc, seen)
			if (strcmp((char *) lfirst(lc), key) == 0)
				bad_layout(layout, psprintf("%s is given twice.", key));
		seen = lappend(seen, key);
		if (strcmp(key, "epoch") == 0)
		{
			bool		relative;

			if (!idgen_parse_epoch(value, &spec->layout.epoch, &relative))
				bad_layout(layout, psprintf("epoch \"%s\" is not a fixed instant.", value));
			have_epoch = true;
		}
		else if (strcmp(key, "unit") == 0)
		{
			char	   *end;
			long		n;

			errno = 0;
			n = strtol(value, &end, 10);
			if (errno == 0 && end != value && n > 0 && n <= 86400 &&
				strcmp(trim(end), "ms") == 0)
				spec->unit_us = (int64) n * 1000;
			else if (errno == 0 && end != value && n > 0 && n <= 86400 &&
					 strcmp(trim(end), "s") == 0)
				spec->unit_us = (int64) n * 1000000;
			else
				bad_layout(layout, psprintf("unit must be a number of ms or s, such as 1ms or 10ms, not \"%s\".",
											value));
		}
		else if (strcmp(key, "shard_bits") == 0)
			spec->layout.shard_bits = parse_bits(layout, key, value);
		else if (strcmp(key, "sequence_bits") == 0)
			spec->layout.sequence_bits = parse_bits(layout, key, value);
		else if (strcmp(key, "order") == 0)
		{
			if (strcmp(value, "shard-sequence") == 0)
				spec->sequence_above_shard = false;
			else if (strcmp(value, "sequence-shard") == 0)
				spec->sequence_above_shard = true;
			else
				bad_layout(layout, psprintf("order must be shard-sequence or sequence-shard, not \"%s\".",
											value));
		}
		else
			bad_layout(layout, psprintf("\"%s\" is not a layout key (epoch, unit, shard_bits, sequence_bits, order).",
										key));
	}
	if (!have_epoch)
		bad_layout(layout, "A specification needs an epoch.");
	if (idgen_time_bits(&spec->layout) < 1)
		bad_layout(layout, "shard_bits and sequence_bits leave no bit for time.");
}

/*
 * The layout an argument names, parsed once per call site: the same text
 * row after row is the usual case.
 */
typedef struct LayoutCache
{
	text	   *layout;
	LayoutSpec spec;
} LayoutCache;

static const LayoutSpec *
get_layout(FunctionCallInfo fcinfo, int argno)
{
	text	   *arg = PG_GETARG_TEXT_PP(argno);
	LayoutCache *cache = fcinfo->flinfo->fn_extra;
	char	   *name;

	if (cache != NULL &&
		VARSIZE_ANY_EXHDR(cache->layout) == VARSIZE_ANY_EXHDR(arg) &&
		memcmp(VARDATA_ANY(cache->layout), VARDATA_ANY(arg),
			   VARSIZE_ANY_EXHDR(arg)) == 0)
		return &cache->spec;

	if (cache == NULL)
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(LayoutCache));
	else if (cache->layout != NULL)
		pfree(cache->layout);
	cache->layout = NULL;

	name = text_to_cstring(arg);
	{
		char	   *lower = pstrdup(name);
		char	   *preset = NULL;

		for (char *p = lower; *p; p++)
			*p = tolower((unsigned char) *p);
		for (int i = 0; i < (int) lengthof(presets); i++)
			if (strcmp(trim(lower), presets[i].name) == 0)
				preset = (char *) presets[i].spec;
		parse_spec(name, preset != NULL ? preset : name, &cache->spec);
	}

	cache->layout = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, VARSIZE_ANY(arg));
	memcpy(cache->layout, arg, VARSIZE_ANY(arg));
	fcinfo->flinfo->fn_extra = cache;
	return &cache->spec;
}

static TimestampTz
spec_timestamp(const LayoutSpec *spec, int64 id)
{
	uint64		ticks = (uint64) id >> idgen_low_bits(&spec->layout);
	uint64		span_us = (uint64) (END_TIMESTAMP - 1) - (uint64) spec->layout.epoch;

	idgen_refuse_negative(id, SPEC_NEGATIVE_HINT);
	/* the span from the epoch to the last timestamp, in unsigned arithmetic */
	if (ticks > span_us / (uint64) spec->unit_us)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range"),
				 errdetail("ID " INT64_FORMAT " encodes a time past the end of PostgreSQL's timestamps.", id)));
	return (TimestampTz) ((uint64) spec->layout.epoch + ticks * (uint64) spec->unit_us);
}

static void
spec_fields(const LayoutSpec *spec, int64 id, int32 *shard, int32 *sequence)
{
	uint64		shard_mask = (UINT64CONST(1) << spec->layout.shard_bits) - 1;
	uint64		seq_mask = (UINT64CONST(1) << spec->layout.sequence_bits) - 1;

	if (spec->sequence_above_shard)
	{
		*shard = (int32) ((uint64) id & shard_mask);
		*sequence = (int32) (((uint64) id >> spec->layout.shard_bits) & seq_mask);
	}
	else
	{
		*sequence = (int32) ((uint64) id & seq_mask);
		*shard = (int32) (((uint64) id >> spec->layout.sequence_bits) & shard_mask);
	}
}

Datum
id_to_timestamp_layout(PG_FUNCTION_ARGS)
{
	const LayoutSpec *spec = get_layout(fcinfo, 1);

	PG_RETURN_TIMESTAMPTZ(spec_timestamp(spec, PG_GETARG_INT64(0)));
}

Datum
idgen_decode_layout(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	const LayoutSpec *spec = get_layout(fcinfo, 1);
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {0};
	int32		shard;
	int32		sequence;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = TimestampTzGetDatum(spec_timestamp(spec, id));
	spec_fields(spec, id, &shard, &sequence);
	values[1] = Int32GetDatum(shard);
	values[2] = Int32GetDatum(sequence);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* The smallest ID of the layout's time unit that contains ts. */
Datum
min_id_at_layout(PG_FUNCTION_ARGS)
{
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
	const LayoutSpec *spec = get_layout(fcinfo, 1);
	uint64		ticks;

	if (TIMESTAMP_IS_NOBEGIN(ts) || ts < spec->layout.epoch)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp is before the epoch of the ID layout"),
				 errdetail("The layout's epoch is %s.", timestamptz_to_str(spec->layout.epoch)),
				 errhint("Use a timestamp on or after the epoch.")));
	ticks = TIMESTAMP_IS_NOEND(ts) ? UINT64_MAX :
		((uint64) ts - (uint64) spec->layout.epoch) / (uint64) spec->unit_us;
	if (ticks >= (UINT64CONST(1) << idgen_time_bits(&spec->layout)))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp is past the end of the ID layout"),
				 errdetail("The layout has %d bits of time.", idgen_time_bits(&spec->layout)),
				 errhint("Use a timestamp before the end of the layout.")));
	PG_RETURN_INT64((int64) (ticks << idgen_low_bits(&spec->layout)));
}
