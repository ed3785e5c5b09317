--
-- idgen_decode: decoding fixed IDs under the default layout
--
-- The default layout: epoch 2026-01-01 00:00:00+00, 12 shard bits, 10
-- sequence bits, so 41 time bits:
--
--   id = (ms << 22) | (shard << 10) | sequence
--
-- Every ID below is built by hand (or written as a literal), never minted, so
-- every value printed here is fixed.
--
CREATE EXTENSION idgen;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

SHOW idgen.epoch;
SHOW idgen.shard_bits;
SHOW idgen.sequence_bits;

-- ID 0 is the epoch, shard 0, sequence 0
SELECT id_to_timestamp(0), id_to_shard(0), id_to_sequence(0);
SELECT * FROM idgen_decode(0);

-- a worked example: ms = 1000, shard = 5, sequence = 7
SELECT (1000::bigint << 22) | (5 << 10) | 7 AS id;
SELECT * FROM idgen_decode(4194309127);

-- 2026-10-27 12:34:56.789+00 is 25878896789 ms after the epoch
SELECT (extract(epoch FROM '2026-10-27 12:34:56.789+00'::timestamptz
                        - '2026-01-01 00:00:00+00'::timestamptz) * 1000)::bigint
       AS ms;
SELECT id,
       (25878896789::bigint << 22) | (shard << 10) | seq = id AS built_right,
       id_to_timestamp(id), id_to_shard(id), id_to_sequence(id)
  FROM (VALUES (108543960317689856, 0, 0),
               (108543960317694983, 5, 7),
               (108543960321884159, 4095, 1023)) AS v(id, shard, seq)
 ORDER BY id;
SELECT (idgen_decode(108543960317694983)).*;

-- the largest ID: the last millisecond of the layout, every field full
SELECT * FROM idgen_decode(9223372036854775807);
SELECT 9223372036854775807 >> 22 AS last_ms;

-- min_id_at: the smallest ID of the millisecond containing ts
SELECT min_id_at('2026-01-01 00:00:00+00') AS at_epoch,
       min_id_at('2026-01-01 00:00:00.000999+00') AS within_first_ms,
       min_id_at('2026-01-01 00:00:00.001+00') AS second_ms,
       min_id_at('2026-01-01 00:00:01+00') AS one_second;
-- rounding down within a millisecond: every microsecond of 12:34:56.789
SELECT min_id_at('2026-10-27 12:34:56.789+00') AS ms_start,
       min_id_at('2026-10-27 12:34:56.789999+00') AS ms_end,
       min_id_at('2026-10-27 12:34:56.79+00') AS next_ms;
SELECT count(DISTINCT min_id_at('2026-10-27 12:34:56.789+00'::timestamptz
                                + us * interval '1 microsecond')) AS distinct_ids,
       min(min_id_at('2026-10-27 12:34:56.789+00'::timestamptz
                     + us * interval '1 microsecond')) = 108543960317689856
       AS all_equal_ms_start
  FROM generate_series(0, 999) AS us;
-- the epoch written in another time zone is the same instant
SELECT min_id_at('2025-12-31 19:00:00-05') AS epoch_in_new_york;
-- the last instant of the layout decodes back to the largest millisecond
SELECT min_id_at('2095-09-07 15:47:35.551999+00') AS last_ms_start,
       id_to_timestamp(9223372036854775807) = '2095-09-07 15:47:35.551+00'
       AS max_id_time;

-- round trips over IDs spread across the whole range (fields, time, build)
WITH ids AS (
    SELECT 0::bigint AS id
    UNION ALL SELECT 9223372036854775807
    UNION ALL SELECT 4194309127
    UNION ALL SELECT (g::bigint * 7919 * 1000003 * 104729) & 9223372036854775807
      FROM generate_series(1, 10000) AS g
)
SELECT count(*) AS ids,
       bool_and(min_id_at(id_to_timestamp(id)) <= id) AS min_id_le_id,
       bool_and(CASE WHEN id_to_timestamp(id) < '2095-09-07 15:47:35.551+00'
                THEN id < min_id_at(id_to_timestamp(id) + interval '1 millisecond')
                ELSE true END) AS id_lt_next_ms,
       bool_and(min_id_at(id_to_timestamp(id))
                | (id_to_shard(id)::bigint << 10)
                | id_to_sequence(id) = id) AS rebuilt,
       bool_and((idgen_decode(id)).created_at = id_to_timestamp(id)
                AND (idgen_decode(id)).shard = id_to_shard(id)
                AND (idgen_decode(id)).sequence = id_to_sequence(id))
       AS decode_agrees,
       bool_and(id_to_shard(id) BETWEEN 0 AND 4095
                AND id_to_sequence(id) BETWEEN 0 AND 1023) AS fields_in_range,
       bool_and(id_to_timestamp(id) = date_trunc('milliseconds', id_to_timestamp(id)))
       AS whole_ms
  FROM ids;

-- round trips over timestamps: the ID's time is ts truncated to the ms
SELECT count(*) AS timestamps,
       bool_and(id_to_timestamp(min_id_at(ts)) = date_trunc('milliseconds', ts))
       AS time_truncated,
       bool_and(id_to_shard(min_id_at(ts)) = 0
                AND id_to_sequence(min_id_at(ts)) = 0) AS fields_zero
  FROM (SELECT '2026-01-01 00:00:00+00'::timestamptz
               + g * interval '12345 seconds 678901 microseconds' AS ts
          FROM generate_series(0, 10000) AS g) AS s;

-- order: IDs sort as their times do
SELECT bool_and(min_id_at(a) < min_id_at(b)) AS order_kept
  FROM (SELECT '2026-03-01+00'::timestamptz + g * interval '1 millisecond' AS a,
               '2026-03-01+00'::timestamptz + (g + 1) * interval '1 millisecond' AS b
          FROM generate_series(0, 999) AS g) AS s;

-- NULL in, NULL out
SELECT id_to_timestamp(NULL) IS NULL AS id_to_timestamp,
       id_to_shard(NULL) IS NULL AS id_to_shard,
       id_to_sequence(NULL) IS NULL AS id_to_sequence,
       min_id_at(NULL) IS NULL AS min_id_at,
       idgen_decode(NULL) IS NULL AS idgen_decode,
       idgen_next(NULL::integer) IS NULL AS idgen_next;
SELECT * FROM idgen_decode(NULL);

-- in a table: a generated column and an expression index
CREATE TABLE events (
    id bigint PRIMARY KEY,
    created_at timestamptz GENERATED ALWAYS AS (id_to_timestamp(id)) STORED,
    payload text
);
CREATE INDEX events_shard_idx ON events (id_to_shard(id));
INSERT INTO events (id, payload)
SELECT (ms << 22) | (shard << 10) | seq, format('ms %s shard %s seq %s', ms, shard, seq)
  FROM (VALUES (0::bigint, 0, 0),
               (1000, 5, 7),
               (25878896789, 5, 8),
               (25878896789, 4095, 1023),
               (25965296789, 17, 0),
               (25965296790, 5, 0)) AS v(ms, shard, seq);
SELECT id, created_at, payload FROM events ORDER BY id;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT id, created_at FROM events WHERE id_to_shard(id) = 5;
SELECT id, created_at FROM events WHERE id_to_shard(id) = 5 ORDER BY id;

-- a time range on the primary key: min_id_at of a constant is folded at
-- plan time, so the index condition holds two plain bigint constants
EXPLAIN (COSTS OFF)
SELECT * FROM events
 WHERE id >= min_id_at('2026-10-27 00:00:00+00')
   AND id < min_id_at('2026-10-28 00:00:00+00');
SELECT id, created_at FROM events
 WHERE id >= min_id_at('2026-10-27 00:00:00+00')
   AND id < min_id_at('2026-10-28 00:00:00+00')
 ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- a generated column cannot be written
INSERT INTO events (id, created_at) VALUES (1, now());

-- partitions by day, bounds from min_id_at
CREATE TABLE events_by_day (
    id bigint NOT NULL,
    payload text
) PARTITION BY RANGE (id);
CREATE TABLE events_2026_10_27 PARTITION OF events_by_day
    FOR VALUES FROM (min_id_at('2026-10-27')) TO (min_id_at('2026-10-28'));
CREATE TABLE events_2026_10_28 PARTITION OF events_by_day
    FOR VALUES FROM (min_id_at('2026-10-28')) TO (min_id_at('2026-10-29'));
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound
  FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid
 WHERE i.inhparent = 'events_by_day'::regclass
 ORDER BY c.relname;
INSERT INTO events_by_day SELECT id, payload FROM events
 WHERE id_to_timestamp(id) >= '2026-10-27' AND id_to_timestamp(id) < '2026-10-29';
SELECT tableoid::regclass AS partition, id, id_to_timestamp(id)
  FROM events_by_day ORDER BY id;
-- outside every partition
INSERT INTO events_by_day VALUES (0, 'the epoch');
-- pruning at plan time
EXPLAIN (COSTS OFF)
SELECT * FROM events_by_day
 WHERE id >= min_id_at('2026-10-28 06:00:00+00')
   AND id < min_id_at('2026-10-28 07:00:00+00');

DROP TABLE events_by_day;
DROP TABLE events;

-- the extension is relocatable (idgen.control), and can be dropped and
-- created again
CREATE SCHEMA idgen_elsewhere;
ALTER EXTENSION idgen SET SCHEMA idgen_elsewhere;
SELECT idgen_elsewhere.id_to_shard(4194309127) AS shard,
       idgen_elsewhere.min_id_at('2026-01-01 00:00:01+00') AS min_id,
       (SELECT count(*) FROM idgen_elsewhere.idgen_stats) AS stats_rows;
-- (the error alone: PostgreSQL 19 words its hint for a missing function
-- differently)
\set VERBOSITY terse
SELECT id_to_shard(4194309127);
ALTER EXTENSION idgen SET SCHEMA public;
DROP SCHEMA idgen_elsewhere;
DROP EXTENSION idgen;
SELECT id_to_shard(4194309127);
\set VERBOSITY default
CREATE EXTENSION idgen;
SELECT id_to_shard(4194309127) AS shard;

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
