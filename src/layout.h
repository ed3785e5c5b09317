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

/* A layout needs at least this many bits of milliseconds (about 24 days). */
#define IDGEN_MIN_TIME_BITS			31

/*
 * A layout: the configured one, each version of the layout history
 * (layout_history.h), the one a fence record was minted under
 * (wal_records.h) and one named to idgen_decode_layout() (layout_spec.c).
 * One struct, so that the arithmetic below is written once.  The versions
 * and the records are written to state files and WAL that servers read
 * back, with this in them: its bytes never change.
 */
typedef struct IdgenLayout
{
	TimestampTz epoch;			/* idgen.epoch */
	int32		shard_bits;		/* idgen.shard_bits */
	int32		sequence_bits;	/* idgen.sequence_bits */
} IdgenLayout;

StaticAssertDecl(sizeof(IdgenLayout) == 16,
				 "IdgenLayout is in state files and WAL");
StaticAssertDecl(offsetof(IdgenLayout, epoch) == 0 &&
				 offsetof(IdgenLayout, shard_bits) == 8 &&
				 offsetof(IdgenLayout, sequence_bits) == 12,
				 "IdgenLayout is in state files and WAL");

/* Fixed at server start; valid only when idgen_layout_ready. */
extern IDGEN_HOT_GLOBAL IdgenLayout idgen_layout;
extern bool idgen_layout_ready;

extern bool idgen_parse_epoch(const char *str, TimestampTz *result,
							  bool *relative);
extern void idgen_layout_init(TimestampTz epoch, int shard_bits,
							  int sequence_bits);
extern void idgen_check_preloaded(void);
extern void idgen_warn_layout_end(int64 warn_before_ms);

extern TimestampTz idgen_ms_to_timestamptz(const IdgenLayout *l, int64 ms);
extern TimestampTz idgen_layout_end(const IdgenLayout *l);
extern char *idgen_timestamp_text(TimestampTz t);

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

/*
 * The arithmetic of a layout, for the configured one (&idgen_layout) and any
 * other alike.  Inline: the minting path calls these on idgen_layout, where
 * they fold to what a hand-written shift would.
 */

/* The bits below the time field: shard and sequence. */
static inline int
idgen_low_bits(const IdgenLayout *l)
{
	return l->shard_bits + l->sequence_bits;
}

/* The bits of the time field: what is left of 63. */
static inline int
idgen_time_bits(const IdgenLayout *l)
{
	return 63 - idgen_low_bits(l);
}

/* The first millisecond past the layout's end: no ID is of it or later. */
static inline int64
idgen_max_ms(const IdgenLayout *l)
{
	return INT64CONST(1) << idgen_time_bits(l);
}

/* The first ID of a millisecond: shard and sequence zero. */
static inline uint64
idgen_first_id_of_ms(const IdgenLayout *l, int64 ms)
{
	return (uint64) ms << idgen_low_bits(l);
}

/* The millisecond of an ID. */
static inline int64
idgen_ms_of_id(const IdgenLayout *l, uint64 id)
{
	return (int64) (id >> idgen_low_bits(l));
}

/*
 * The millisecond of an instant at or after the epoch, rounded down, not
 * capped at the layout's end (the inverse of idgen_ms_to_timestamptz).
 * From an epoch long before 2000 to a late instant the span overflows an
 * int64 of microseconds but not a uint64, and in milliseconds fits an
 * int64 again.
 */
static inline int64
idgen_ms_of_timestamptz(const IdgenLayout *l, TimestampTz t)
{
	Assert(t >= l->epoch);
	return (int64) (((uint64) t - (uint64) l->epoch) / 1000);
}

/* The same layout: the same epoch and widths. */
static inline bool
idgen_layout_equal(const IdgenLayout *a, const IdgenLayout *b)
{
	return a->epoch == b->epoch && a->shard_bits == b->shard_bits &&
		a->sequence_bits == b->sequence_bits;
}

/* An ID's shard field. */
static inline int32
idgen_shard_of_id(const IdgenLayout *l, uint64 id)
{
	return (int32) ((id >> l->sequence_bits) &
					((UINT64CONST(1) << l->shard_bits) - 1));
}

/* An ID's sequence field. */
static inline int64
idgen_sequence_of_id(const IdgenLayout *l, uint64 id)
{
	return (int64) (id & ((UINT64CONST(1) << l->sequence_bits) - 1));
}

/*
 * A minter's state word, the live generator's or a lane's cursor: (ms <<
 * sequence_bits) | sequence, ordered as the IDs it becomes, shard aside.
 * The widths are passed, not the layout, so that a minter reads them once.
 */
static inline uint64
idgen_state_word(int64 ms, uint64 sequence, int sequence_bits)
{
	return ((uint64) ms << sequence_bits) | sequence;
}

static inline int64
idgen_state_ms(uint64 state, int sequence_bits)
{
	return (int64) (state >> sequence_bits);
}

static inline int64
idgen_state_sequence(uint64 state, int sequence_bits)
{
	return (int64) (state & ((UINT64CONST(1) << sequence_bits) - 1));
}

/* An ID of the configured layout. */
static inline int64
idgen_encode(int64 ms, int32 shard, int64 sequence)
{
	return (int64) idgen_first_id_of_ms(&idgen_layout, ms) |
		((int64) shard << idgen_layout.sequence_bits) | sequence;
}

/* Decoding, for SQL: each checks its argument. */
extern int64 idgen_id_ms(int64 id);

#endif							/* IDGEN_LAYOUT_H */
