/*-------------------------------------------------------------------------
 *
 * layout.c
 *		The ID layout: validation at start, encoding and decoding.
 *
 * The layout (epoch and field widths) is read once, when the postmaster
 * loads the library.  Decoding follows the layout history instead
 * (layout_history.c, decode.c): each ID by the version that minted it.
 *
 * Time in the layout is whole milliseconds since the epoch, rounded down,
 * so that min_id_at(), id_to_timestamp() and the wall clock agree on which
 * millisecond an instant belongs to.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/layout.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "layout.h"

IdgenLayout idgen_layout;
bool		idgen_layout_ready = false;

IdgenUnixTime idgen_epoch_unix;

/*
 * Parse the epoch without throwing, so that a GUC check hook can report a
 * bad value the way GUCs do.  The epoch is one instant for the life of the
 * cluster, so it must not depend on the server's settings: a value without
 * a zone is read as UTC, an all-numeric date as month/day/year (datestyle's
 * default), whatever timezone and datestyle say; the words that mean a time
 * relative to now (now, today, tomorrow, yesterday) are refused and set
 * *relative; infinities are refused.
 */
bool
idgen_parse_epoch(const char *str, TimestampTz *result, bool *relative)
{
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	struct pg_tm tt;
	fsec_t		fsec;
	int			tz;
#if PG_VERSION_NUM >= 160000
	DateTimeErrorExtra dterr_extra;
#endif

	pg_tz	   *saved_timezone = session_timezone;
	int			saved_date_order = DateOrder;
	int			rc;

	*relative = false;
	if (str == NULL)
		return false;
	if (ParseDateTime(str, workbuf, sizeof(workbuf), field, ftype,
					  MAXDATEFIELDS, &nf) != 0)
		return false;
	/* ParseDateTime has lower-cased the words */
	for (int i = 0; i < nf; i++)
	{
		if (strcmp(field[i], NOW) == 0 || strcmp(field[i], TODAY) == 0 ||
			strcmp(field[i], TOMORROW) == 0 || strcmp(field[i], YESTERDAY) == 0)
		{
			*relative = true;
			return false;
		}
	}

	/* DecodeDateTime reads these; it does not throw */
	session_timezone = pg_tzset_offset(0);
	DateOrder = DATEORDER_MDY;
	/* 16 added an argument for the details of a failure */
#if PG_VERSION_NUM >= 160000
	rc = DecodeDateTime(field, ftype, nf, &dtype, &tt, &fsec, &tz, &dterr_extra);
#else
	rc = DecodeDateTime(field, ftype, nf, &dtype, &tt, &fsec, &tz);
#endif
	session_timezone = saved_timezone;
	DateOrder = saved_date_order;
	if (rc != 0)
		return false;

	switch (dtype)
	{
		case DTK_DATE:
			return tm2timestamp(&tt, fsec, &tz, result) == 0 &&
				IS_VALID_TIMESTAMP(*result);
		case DTK_EPOCH:
			*result = SetEpochTimestamp();
			return true;
		default:
			return false;		/* infinity and friends */
	}
}

/*
 * Check the layout settings as a whole and fix them for the life of the
 * server.  Called by the postmaster, where an ERROR stops the start with the
 * message in the log.
 */
void
idgen_layout_init(TimestampTz epoch, int shard_bits, int sequence_bits)
{
	IdgenLayout layout = {
		.epoch = epoch,
		.shard_bits = shard_bits,
		.sequence_bits = sequence_bits,
	};
	int			time_bits = idgen_time_bits(&layout);
	TimestampTz now = GetCurrentTimestamp();

	if (time_bits < IDGEN_MIN_TIME_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" + \"%s\" leaves too few bits for time",
						"idgen.shard_bits", "idgen.sequence_bits"),
				 errdetail("%d + %d bits leave %d bits of milliseconds; at least %d are needed (about 24 days).",
						   shard_bits, sequence_bits, time_bits,
						   IDGEN_MIN_TIME_BITS),
				 errhint("Lower \"%s\" or \"%s\" so that they add up to at most %d.",
						 "idgen.shard_bits", "idgen.sequence_bits",
						 63 - IDGEN_MIN_TIME_BITS)));

	if (epoch > now)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is in the future", "idgen.epoch"),
				 errdetail("The epoch is %s.", timestamptz_to_str(epoch)),
				 errhint("Set \"%s\" to a time in the past, such as the day the application first minted IDs.",
						 "idgen.epoch")));

	idgen_layout = layout;
	/* seconds rounded down, and what is left: nothing here can overflow */
	{
		int64		unix_us = epoch + IDGEN_POSTGRES_EPOCH_UNIX_US;
		int64		sec = unix_us / USECS_PER_SEC;

		if (sec * USECS_PER_SEC > unix_us)
			sec--;
		idgen_epoch_unix.sec = sec;
		idgen_epoch_unix.nsec = (long) (unix_us - sec * USECS_PER_SEC) * 1000;
	}

	if (idgen_wall_ms() >= idgen_max_ms(&idgen_layout))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is too far in the past for the layout", "idgen.epoch"),
				 errdetail("With %d bits of milliseconds, IDs end at %s.",
						   time_bits,
						   timestamptz_to_str(idgen_layout_end(&idgen_layout))),
				 errhint("Set \"%s\" to a later time, or give time more bits by lowering \"%s\" or \"%s\".",
						 "idgen.epoch", "idgen.shard_bits", "idgen.sequence_bits")));

	idgen_layout_ready = true;
}

/*
 * A WARNING when the layout's last millisecond is nearer than warn_before_ms:
 * past it no ID can be minted, and a layout with more bits of time takes
 * planning.  Layouts that end quietly are how IDs went negative elsewhere.
 */
void
idgen_warn_layout_end(int64 warn_before_ms)
{
	int64		left_ms = idgen_max_ms(&idgen_layout) - idgen_wall_ms();

	if (warn_before_ms <= 0 || left_ms >= warn_before_ms)
		return;
	if (left_ms <= 0)
		ereport(WARNING,
				(errmsg("idgen's layout ran out at %s",
						timestamptz_to_str(idgen_layout_end(&idgen_layout))),
				 errdetail("No ID can be minted any more."),
				 errhint("Change to a layout with more bits of time.")));
	else
		ereport(WARNING,
				(errmsg("idgen's layout runs out at %s",
						timestamptz_to_str(idgen_layout_end(&idgen_layout))),
				 errdetail("That is %lld days from now; from then on no ID can be minted.  The layout has %d bits of milliseconds from the epoch %s.",
						   (long long) (left_ms / (24 * 3600 * INT64CONST(1000))),
						   idgen_time_bits(&idgen_layout),
						   timestamptz_to_str(idgen_layout.epoch)),
				 errhint("Plan a change to a layout with more bits of time before then; \"%s\" sets how early this warns.",
						 "idgen.layout_end_warning")));
}

/*
 * Every SQL function needs the layout, and only a preloaded library has one
 * (the layout settings are PGC_POSTMASTER).
 */
void
idgen_check_preloaded(void)
{
	if (!idgen_layout_ready)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen must be loaded via \"shared_preload_libraries\""),
				 errhint("Add idgen to \"shared_preload_libraries\" in postgresql.conf and restart the server. Standbys, and any server that replays this cluster's WAL, need it too.")));
}

/*
 * A layout's milliseconds as a timestamp.  Layouts with many time bits
 * outlast PostgreSQL's timestamps: infinity past the last one.  With an
 * epoch long before 2000 (far below zero), the span from the epoch to the
 * last timestamp overflows an int64 but not a uint64; ms >= 0.
 */
TimestampTz
idgen_ms_to_timestamptz(const IdgenLayout *l, int64 ms)
{
	uint64		span_us = (uint64) (END_TIMESTAMP - 1) - (uint64) l->epoch;

	Assert(ms >= 0);
	if ((uint64) ms > span_us / 1000)
		return DT_NOEND;
	return (TimestampTz) ((uint64) l->epoch + (uint64) ms * 1000);
}

/* The instant a layout ends: no ID is of it or later. */
TimestampTz
idgen_layout_end(const IdgenLayout *l)
{
	return idgen_ms_to_timestamptz(l, idgen_max_ms(l));
}

/*
 * A timestamp as text, copied: timestamptz_to_str() returns one static
 * buffer, and the arguments of one errdetail() are evaluated in no set
 * order, so two calls in it would print one time twice.  A call of this is
 * a function body, never interleaved with another argument's.
 */
char *
idgen_timestamp_text(TimestampTz t)
{
	return pstrdup(timestamptz_to_str(t));
}

void
idgen_refuse_negative(int64 id, const char *hint)
{
	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("ID " INT64_FORMAT " is negative", id),
				 errhint("%s", hint)));
}

static void
check_id(int64 id)
{
	idgen_check_preloaded();
	idgen_refuse_negative(id, IDGEN_NEGATIVE_ID_HINT);
}

/*
 * The millisecond of the generator's layout whose IDs all lie above id, less
 * one: what idgen_advance_past() raises the generator past, whatever layout
 * minted id.
 */
int64
idgen_id_ms(int64 id)
{
	check_id(id);
	return idgen_ms_of_id(&idgen_layout, id);
}
