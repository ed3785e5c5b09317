/*
 * bench/generators.sql: the ID generators the benchmark compares with
 * idgen_next(), and the helpers it uses.  Loaded by bench/run.sh into a
 * throwaway database; written for the benchmark from the generators' public
 * descriptions.
 *
 * psql variable "with_idgen" ('on' or 'off') says whether the idgen
 * extension is there to create.
 */

\set ON_ERROR_STOP on

\if :with_idgen
CREATE EXTENSION idgen;
\endif

/* nextval() on a plain sequence: CACHE 1 is what bigserial gets. */
CREATE SEQUENCE bench_seq1 CACHE 1;
CREATE SEQUENCE bench_seq100 CACHE 100;

/*
 * UUIDv7 (RFC 9562, section 5.7): 48 bits of Unix time in milliseconds,
 * then the version (0111), 12 random bits, the variant (10) and 62 random
 * bits.  We start from a version 4 UUID, whose 122 random bits and variant
 * are already in place, put the big-endian millisecond count over its first
 * six bytes and turn version 0100 into 0111 by setting the two low bits of
 * the version nibble (bits 52 and 53 in set_bit's numbering, which counts
 * from the least significant bit of byte 0).
 *
 * A single SELECT with no FROM, so the planner inlines it as it would a
 * hand-written expression: the fastest fair version of the SQL approach.
 */
CREATE FUNCTION bench_uuidv7()
RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE
AS $$
	SELECT encode(
		set_bit(set_bit(
			overlay(uuid_send(gen_random_uuid())
					PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
									  FROM 3)
					FROM 1 FOR 6),
			52, 1), 53, 1),
		'hex')::uuid
$$;

/*
 * Instagram's scheme (their 2012 engineering post "Sharding & IDs at
 * Instagram"), in PL/pgSQL as they ran it: 41 bits of milliseconds since
 * their custom epoch, shifted left 23, the 13-bit shard id shifted left 10,
 * and the low 10 bits of a per-shard sequence.
 */
CREATE SEQUENCE bench_insta_seq;

CREATE FUNCTION bench_instagram_id(shard_id integer DEFAULT 5)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	our_epoch	bigint := 1314220021721;	/* 2011-08-24 21:07:01.721 UTC */
	now_ms		bigint;
	seq_id		bigint;
BEGIN
	now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000);
	seq_id := nextval('bench_insta_seq') % 1024;
	RETURN ((now_ms - our_epoch) << 23) | (shard_id::bigint << 10) | seq_id;
END
$$;

/*
 * Wait (at most max_wait seconds) until idgen's generator is no further
 * ahead of the wall clock than "target" milliseconds, so every idgen run
 * starts with the same head room under idgen.max_lead.  Returns the lead
 * left.  Untimed: bench/run.sh calls it between runs.
 */
\if :with_idgen
CREATE FUNCTION bench_idgen_drain(target bigint DEFAULT 0,
								  max_wait float8 DEFAULT 10)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
	lead	bigint;
	t0		timestamptz := clock_timestamp();
BEGIN
	LOOP
		SELECT s.lead_ms INTO lead FROM idgen_stats s;
		EXIT WHEN lead <= target
			OR clock_timestamp() - t0 > make_interval(secs => max_wait);
		PERFORM pg_sleep(least(0.05, greatest(lead - target, 1) / 1000.0));
	END LOOP;
	RETURN lead;
END
$$;
\endif
