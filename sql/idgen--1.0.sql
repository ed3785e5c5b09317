/* idgen--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION idgen" to load this file. \quit

-- Minting reads and writes shared memory: VOLATILE, like nextval(), but the
-- state is shared by every process, so parallel workers may mint too.
CREATE FUNCTION idgen_next()
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next() IS
'mint a new ID for the shard in idgen.shard_id';

CREATE FUNCTION idgen_next(shard integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next_shard'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next(integer) IS
'mint a new ID for a shard this node owns (idgen.shard_id or idgen.shard_ids)';

-- The layout cannot change while the server runs (and a durable guard refuses
-- a start with another one), so decoding depends on its arguments alone.
CREATE FUNCTION id_to_timestamp(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'id_to_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_to_timestamp(bigint) IS
'the millisecond embedded in an ID';

CREATE FUNCTION min_id_at(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'min_id_at'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION min_id_at(timestamptz) IS
'the smallest ID any shard could mint in the millisecond containing ts';

CREATE FUNCTION id_to_shard(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'id_to_shard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_to_shard(bigint) IS
'the shard field of an ID';

CREATE FUNCTION id_to_sequence(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'id_to_sequence'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_to_sequence(bigint) IS
'the sequence field of an ID';

CREATE FUNCTION idgen_decode(id bigint,
	OUT created_at timestamptz,
	OUT shard integer,
	OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_decode(bigint) IS
'the time, shard and sequence of an ID';

-- Readers of shared counters: VOLATILE, and safe in parallel workers as
-- pg_stat_statements' readers are.
CREATE FUNCTION idgen_stats(
	OUT minted bigint,
	OUT borrowed_ms bigint,
	OUT clock_behind bigint,
	OUT clock_steps_back bigint,
	OUT waits bigint,
	OUT wait_time_ms double precision,
	OUT max_wait_errors bigint,
	OUT lead_ms bigint,
	OUT last_id bigint,
	OUT fence timestamptz,
	OUT fence_ahead_ms bigint,
	OUT fence_advances bigint,
	OUT fence_waits bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_stats'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_stats() IS
'what the generator has done since the server started';

CREATE VIEW idgen_stats AS
	SELECT * FROM idgen_stats();

COMMENT ON VIEW idgen_stats IS
'what the generator has done since the server started';

CREATE FUNCTION idgen_stats_backends(
	OUT pid integer,
	OUT minted bigint,
	OUT borrowed_ms bigint,
	OUT clock_behind bigint,
	OUT clock_steps_back bigint,
	OUT waits bigint,
	OUT wait_time_ms double precision,
	OUT max_wait_errors bigint,
	OUT last_id bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_stats_backends'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_stats_backends() IS
'the generator''s counters per backend that has minted since it started';

CREATE VIEW idgen_stats_backends AS
	SELECT * FROM idgen_stats_backends();

COMMENT ON VIEW idgen_stats_backends IS
'the generator''s counters per backend that has minted since it started';
