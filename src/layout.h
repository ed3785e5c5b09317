/*-------------------------------------------------------------------------
 *
 * layout.h
 *		The bit layout of an ID, and time in the layout's milliseconds.
 *
 *		bit 63       always 0: IDs are never negative
 *		time_bits    milliseconds since idgen.epoch
 *		shard_bits   shard number
 *		sequence_bits  sequence within the millisecond
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/layout.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LAYOUT_H
#define IDGEN_LAYOUT_H

#include <time.h>

#include "datatype/timestamp.h"

#include "idgen_compat.h"
#include "layout_history.h"

typedef struct IdgenLayout
{
	TimestampTz epoch;			/* idgen.epoch */
	int			shard_bits;		/* idgen.shard_bits */
	int			sequence_bits;	/* idgen.sequence_bits */
	int			time_bits;		/* what is left of 63 bits */
} IdgenLayout;

/* Fixed at server start; valid only when idgen_layout_ready. */
extern IDGEN_HOT_GLOBAL IdgenLayout idgen_layout;
extern bool idgen_layout_ready;

extern bool idgen_parse_epoch(const char *str, TimestampTz *result,
							  bool *relative);
extern void idgen_layout_init(TimestampTz epoch, int shard_bits,
							  int sequence_bits);
extern void idgen_check_preloaded(void);
extern void idgen_warn_layout_end(int64 warn_before_ms);

extern TimestampTz idgen_ms_to_timestamptz(int64 ms);
extern char *idgen_timestamp_text(TimestampTz t);
extern TimestampTz idgen_version_ms_to_timestamptz(const IdgenLayoutVersion *v,
												   int64 ms);

/* Microseconds from the Unix epoch to PostgreSQL's (2000-01-01). */
#define IDGEN_POSTGRES_EPOCH_UNIX_US \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)

/* The error every function taking an ID gives a negative one (22003). */
#define IDGEN_NEGATIVE_ID_HINT \
	"IDs minted by idgen are never negative; check where this value came from."
extern void idgen_refuse_negative(int64 id, const char *hint);

/*
 * idgen.epoch as Unix time, seconds rounded down and the nanoseconds left,
 * for the clock on the minting path.  Kept apart: an epoch centuries away
 * from 1970 does not fit in 64 bits of nanoseconds.
 */
typedef struct IdgenUnixTime
{
	int64		sec;
	long		nsec;			/* 0 to 999,999,999 */
} IdgenUnixTime;

extern IDGEN_HOT_GLOBAL IdgenUnixTime idgen_epoch_unix;

/*
 * The wall clock in the layout's milliseconds, rounded down.  Inline, and
 * division by constants only: this is most of what a mint costs.
 * clock_gettime() is served by the vDSO, without a system call.
 */
static inline int64
idgen_wall_ms(void)
{
	struct timespec ts;
	int64		sec;
	long		nsec;

	clock_gettime(CLOCK_REALTIME, &ts);
	sec = (int64) ts.tv_sec - idgen_epoch_unix.sec;
	nsec = ts.tv_nsec - idgen_epoch_unix.nsec;
	if (nsec < 0)
	{
		sec--;
		nsec += 1000000000;
	}
	return sec * 1000 + nsec / 1000000;
}

static inline int64
idgen_max_ms(void)
{
	return INT64CONST(1) << idgen_layout.time_bits;
}

/* The bits below the time field of the configured layout: shard, sequence. */
static inline int
idgen_low_bits(void)
{
	return idgen_layout.shard_bits + idgen_layout.sequence_bits;
}

/* The first ID of a millisecond of the configured layout. */
static inline uint64
idgen_first_id_of_ms(int64 ms)
{
	return (uint64) ms << idgen_low_bits();
}

/* The millisecond of an ID of the configured layout. */
static inline int64
idgen_ms_of_id(uint64 id)
{
	return (int64) (id >> idgen_low_bits());
}

/* The configured layout as a version of the history, its first ID unset. */
static inline void
idgen_configured_version(IdgenLayoutVersion *v)
{
	v->epoch = idgen_layout.epoch;
	v->shard_bits = idgen_layout.shard_bits;
	v->sequence_bits = idgen_layout.sequence_bits;
}

/* Whether a version of the history is in the configured layout. */
static inline bool
idgen_version_is_configured(const IdgenLayoutVersion *v)
{
	return v->epoch == idgen_layout.epoch &&
		v->shard_bits == idgen_layout.shard_bits &&
		v->sequence_bits == idgen_layout.sequence_bits;
}

static inline int64
idgen_encode(int64 ms, int32 shard, int64 sequence)
{
	return (ms << (idgen_layout.shard_bits + idgen_layout.sequence_bits)) |
		((int64) shard << idgen_layout.sequence_bits) | sequence;
}

/* Decoding, for SQL: each checks its argument. */
extern int64 idgen_id_ms(int64 id);

#endif							/* IDGEN_LAYOUT_H */
