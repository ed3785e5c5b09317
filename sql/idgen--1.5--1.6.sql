/* idgen--1.5--1.6.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.6'" to load this file. \quit

-- Minting for a given time, on the backfill lanes (idgen.backfill_shards):
-- VOLATILE like idgen_next(), and the lanes are shared by every process, so
-- parallel workers may mint too.
CREATE FUNCTION idgen_next_at(t timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next_at'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next_at(timestamptz) IS
'mint a new ID whose time is t''s millisecond, on a backfill lane';

CREATE FUNCTION idgen_next_at_n(t timestamptz, n integer)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'idgen_next_at_n'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next_at_n(timestamptz, integer) IS
'mint n IDs whose time is t''s millisecond, on the backfill lanes, in increasing order';

-- Attesting that the lanes' past is what this server knows: for the
-- operator, after reading doc/backfill.md.
CREATE FUNCTION idgen_lanes_init()
RETURNS integer
AS 'MODULE_PATHNAME', 'idgen_lanes_init_sql'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE EXECUTE ON FUNCTION idgen_lanes_init() FROM PUBLIC;

COMMENT ON FUNCTION idgen_lanes_init() IS
'attest that the backfill lanes new to this server have no ID anywhere, and start them';

CREATE FUNCTION idgen_lanes(
	OUT shard integer,
	OUT configured boolean,
	OUT ready boolean,
	OUT open_from timestamptz,
	OUT next_at timestamptz,
	OUT fence timestamptz,
	OUT used_ranges integer,
	OUT minted bigint,
	OUT spilled bigint,
	OUT largest_shift_ms bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_lanes_sql'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_lanes() IS
'the backfill lanes: where each mints, and what it minted since the server started';
