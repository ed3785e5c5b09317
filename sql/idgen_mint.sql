--
-- idgen_mint: properties of minted IDs, printed as booleans
--
-- Minted IDs depend on the clock, so nothing here prints one: each query
-- states a property and prints whether it holds.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

-- 100000 IDs from one statement, with the order they were minted in
CREATE TEMP TABLE minted AS
SELECT n, idgen_next() AS id
  FROM generate_series(1, 100000) AS n;
SELECT count(*) AS ids,
       count(*) = count(DISTINCT id) AS unique_ids,
       bool_and(id > 0) AS positive,
       bool_and(id_to_shard(id) = current_setting('idgen.shard_id')::integer)
       AS shard_is_shard_id,
       bool_and(id_to_sequence(id) BETWEEN 0 AND 1023) AS sequence_in_field
  FROM minted;
-- strictly increasing in the order minted
SELECT count(*) AS pairs, bool_and(id > prev_id) AS strictly_increasing
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev_id FROM minted) AS s
 WHERE prev_id IS NOT NULL;
-- the same with WITH ORDINALITY over an array built in one statement
SELECT count(*) AS pairs, bool_and(a.id < b.id) AS strictly_increasing
  FROM (SELECT array_agg(idgen_next()) AS ids
          FROM generate_series(1, 10000)) AS m,
       unnest(m.ids) WITH ORDINALITY AS a(id, n)
  JOIN unnest(m.ids) WITH ORDINALITY AS b(id, n) ON b.n = a.n + 1;
-- a later statement mints larger IDs than an earlier one
SELECT min(idgen_next()) > (SELECT max(id) FROM minted) AS later_is_larger
  FROM generate_series(1, 1000);
-- every millisecond used holds at most 1024 IDs (10 sequence bits)
SELECT max(c) <= 1024 AS per_ms_within_field
  FROM (SELECT count(*) AS c FROM minted GROUP BY id >> 22) AS s;

-- the time field follows the wall clock: never before the clock at the
-- moment of minting, and at most idgen.max_lead (1 s) after it; the bounds
-- below leave room for a slow machine
SELECT clock_timestamp() AS t0 \gset
SELECT idgen_next() AS id \gset
SELECT clock_timestamp() AS t1 \gset
SELECT id_to_timestamp(:id) >= date_trunc('milliseconds', :'t0'::timestamptz)
       AS not_before_clock,
       id_to_timestamp(:id) < :'t1'::timestamptz + interval '3 seconds'
       AS not_far_ahead,
       abs(extract(epoch FROM id_to_timestamp(idgen_next()) - clock_timestamp())) < 5
       AS within_seconds;

-- a million IDs from one statement: about a second of the layout's IDs
-- (1024 a millisecond) in a fraction of one, so minting runs ahead of the
-- clock, up to idgen.max_lead, and stays unique and increasing
CREATE TEMP TABLE million AS
SELECT n, idgen_next() AS id
  FROM generate_series(1, 1000000) AS n;
SELECT count(*) AS ids,
       count(*) = count(DISTINCT id) AS unique_ids,
       max(id_to_timestamp(id)) < clock_timestamp() + interval '3 seconds'
       AS not_far_ahead
  FROM million;
SELECT bool_and(id > prev_id) AS strictly_increasing
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev_id FROM million) AS s
 WHERE prev_id IS NOT NULL;
SELECT max(c) <= 1024 AS per_ms_within_field
  FROM (SELECT count(*) AS c FROM million GROUP BY id >> 22) AS s;
SELECT min(idgen_next()) > (SELECT max(id) FROM million) AS later_is_larger
  FROM generate_series(1, 1000);
DROP TABLE million;

-- explicit shard: the node owns idgen.shard_id
SELECT id_to_shard(idgen_next(0)) = 0 AS own_shard;
SELECT idgen_next(0) < idgen_next() AS shared_sequence;

-- the other shards the node owns (idgen.shard_ids = '7, 100-163' in
-- test/idgen.conf); the node has one generator, so the (millisecond,
-- sequence) pairs of all shards together are unique and increasing in the
-- order minted, and each shard's IDs are increasing
CREATE TEMP TABLE by_shard AS
SELECT n, shard, idgen_next(shard) AS id
  FROM generate_series(1, 30000) AS n,
       LATERAL (SELECT (ARRAY[0, 7, 100, 163])[n % 4 + 1] AS shard) AS s;
SELECT count(*) AS ids,
       bool_and(id_to_shard(id) = shard) AS shard_field_right,
       count(DISTINCT id) = count(*) AS unique_ids,
       count(DISTINCT (id >> 22, id & 1023)) = count(*) AS unique_ms_sequence
  FROM by_shard;
SELECT shard, count(*) AS pairs, bool_and(id > prev_id) AS increasing
  FROM (SELECT shard, id, lag(id) OVER (PARTITION BY shard ORDER BY n) AS prev_id
          FROM by_shard) AS s
 WHERE prev_id IS NOT NULL
 GROUP BY shard ORDER BY shard;
SELECT bool_and((id >> 22, id & 1023) > (prev_id >> 22, prev_id & 1023))
       AS node_sequence_increasing
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev_id FROM by_shard) AS s
 WHERE prev_id IS NOT NULL;

-- idgen.shard_id comes from the configuration file, not from a session
SET idgen.shard_id = 7;
SELECT id_to_shard(idgen_next()) = 0 AS still_shard_0;

-- as a column default
CREATE TABLE orders (
    id bigint PRIMARY KEY DEFAULT idgen_next(),
    note text
);
INSERT INTO orders (note) SELECT 'order ' || g FROM generate_series(1, 5000) AS g;
INSERT INTO orders (note) VALUES ('one more') RETURNING id_to_shard(id) AS shard;
SELECT count(*) AS orders, count(DISTINCT id) = count(*) AS unique_ids,
       bool_and(id_to_timestamp(id) <= clock_timestamp() + interval '3 seconds')
       AS sane_times
  FROM orders;
-- insertion order is key order
SELECT bool_and(id > prev_id) AS insert_order_is_key_order
  FROM (SELECT id, lag(id) OVER (ORDER BY substr(note, 7)::integer) AS prev_id
          FROM orders WHERE note LIKE 'order %') AS s
 WHERE prev_id IS NOT NULL;

-- the stats views
\d idgen_stats
-- when the default layout runs out: 2^41 ms after 2026-01-01 UTC
SELECT layout_ends = timestamptz '2095-09-07 15:47:35.552+00' AS layout_ends_right FROM idgen_stats;
-- the shard idgen_next() mints for; without leases, held since no time
SELECT shard, shard_since IS NULL AS no_lease FROM idgen_stats;
\d idgen_stats_backends
SELECT count(*) AS rows FROM idgen_stats;
SELECT minted AS minted_before FROM idgen_stats \gset
SELECT b.minted AS mine_before FROM idgen_stats_backends AS b
 WHERE b.pid = pg_backend_pid() \gset
SELECT count(idgen_next()) FROM generate_series(1, 1000);
SELECT idgen_next() AS last \gset
SELECT minted - :minted_before AS minted_since,
       last_id = :last AS last_id_is_last,
       fence > id_to_timestamp(:last) AS fence_ahead_of_last,
       fence_ahead_ms >= 0 AS fence_ahead_ms_nonneg,
       lead_ms >= 0 AS lead_ms_nonneg,
       borrowed_ms >= 0 AND clock_behind >= 0 AND clock_steps_back >= 0
       AND waits >= 0 AND wait_time_ms >= 0 AND max_wait_errors = 0
       AND fence_advances >= 0 AND fence_waits >= 0 AS counters_sane
  FROM idgen_stats;
SELECT b.minted - :mine_before AS mine_since,
       b.last_id = :last AS my_last_id
  FROM idgen_stats_backends AS b
 WHERE b.pid = pg_backend_pid();

-- parallel workers mint too (the PARALLEL SAFE labels); the generator is
-- shared, so IDs from workers are unique with the leader's and with
-- each other's
CREATE TABLE par_src AS SELECT g FROM generate_series(1, 100000) AS g;
ANALYZE par_src;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF, VERBOSE)
SELECT g, idgen_next() AS id, id_to_shard(idgen_next()) AS shard FROM par_src;
SELECT b.minted AS mine_before FROM idgen_stats_backends AS b
 WHERE b.pid = pg_backend_pid() \gset
CREATE TEMP TABLE par_ids AS
SELECT g, idgen_next() AS id, id_to_shard(idgen_next()) AS shard FROM par_src;
SELECT b.minted - :mine_before AS minted_by_leader
  FROM idgen_stats_backends AS b
 WHERE b.pid = pg_backend_pid();
SELECT count(*) AS ids, count(DISTINCT id) = count(*) AS unique_ids,
       bool_and(shard = 0 AND id_to_shard(id) = 0) AS shard_0,
       min(id) > :last AS after_earlier_ids
  FROM par_ids;
SELECT count(*) AS clashes_with_orders FROM par_ids JOIN orders USING (id);
-- the whole query in one worker: debug_parallel_query, called
-- force_parallel_mode before PostgreSQL 16
RESET parallel_leader_participation;
SELECT current_setting('server_version_num')::int >= 160000 AS pg16 \gset
\if :pg16
SET debug_parallel_query = on;
\else
SET force_parallel_mode = on;
\endif
EXPLAIN (COSTS OFF)
SELECT idgen_next() AS id, id_to_timestamp(idgen_next()) AS t;
SELECT b.minted AS mine_before FROM idgen_stats_backends AS b
 WHERE b.pid = pg_backend_pid() \gset
CREATE TEMP TABLE forced AS
SELECT g, idgen_next() AS id,
       (idgen_decode(idgen_next())).shard AS shard,
       id_to_timestamp(idgen_next()) AS t
  FROM generate_series(1, 1000) AS g;
SELECT count(*) AS ids, count(DISTINCT id) = count(*) AS unique_ids,
       bool_and(shard = 0) AS shard_0,
       bool_and(t >= '2026-01-01+00') AS time_after_epoch,
       min(id) > (SELECT max(id) FROM par_ids) AS after_parallel_ids
  FROM forced;
SELECT b.minted - :mine_before AS minted_by_leader
  FROM idgen_stats_backends AS b
 WHERE b.pid = pg_backend_pid();
SELECT count(*) AS rows, count(DISTINCT id) = count(*) AS unique_ids
  FROM (SELECT idgen_next() AS id FROM par_src) AS s;
-- every other function labelled PARALLEL SAFE, in a worker: each query's
-- plan is a Gather over it all, and each runs
SET idgen.public_key = '000102030405060708090a0b0c0d0e0f';
CREATE FUNCTION pg_temp.top_plan_node(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    EXECUTE 'EXPLAIN (COSTS OFF) ' || query INTO line;
    RETURN line;
END
$$;
CREATE TEMP TABLE parallel_safe (n int, query text);
INSERT INTO parallel_safe VALUES
    (1, $$SELECT idgen_from_text(idgen_to_text(4194309127, 'evt'), 'evt') = 4194309127 AS text_form,
       idgen_from_public(idgen_to_public(4194309127)) = 4194309127 AS public_form,
       idgen_span('1 day') = 86400000::bigint << 22 AS span,
       (idgen_decode(4194309127, 'idgen')).shard = 5
       AND id_to_timestamp(4194309127, 'idgen') = id_to_timestamp(4194309127)
       AND min_id_at('2026-01-01+00', 'idgen') = 0 AS by_layout,
       idgen_row_to_json(ROW(9007199254740993::bigint))::text = '{"f1":"9007199254740993"}'
       AND idgen_row_to_jsonb(ROW(1::bigint)) = '{"f1": "1"}' AS json$$),
    (2, 'SELECT count(*) AS block FROM idgen_next_n(10)'),
    (3, 'SELECT count(*) AS stats FROM idgen_stats()'),
    (4, 'SELECT count(*) >= 1 AS stats_backends FROM idgen_stats_backends()'),
    (5, 'SELECT count(*) AS leases FROM idgen_leases()'),
    (6, 'SELECT count(*) AS layout_dependents FROM idgen_layout_dependents()');
SELECT n, pg_temp.top_plan_node(query) AS top_node FROM parallel_safe ORDER BY n;
SELECT query FROM parallel_safe ORDER BY n \gexec
DROP TABLE parallel_safe;
RESET idgen.public_key;
-- an error in a worker reaches the client whole
\set SHOW_CONTEXT always
SELECT idgen_next(5);
SELECT id_to_timestamp(-1 * g) FROM generate_series(1, 3) AS g;
\set SHOW_CONTEXT errors
\if :pg16
RESET debug_parallel_query;
\else
RESET force_parallel_mode;
\endif
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

DROP TABLE par_src;
DROP TABLE orders;

-- without idgen.lease_registry this server holds no leases, and needs none
SELECT count(*) AS leases FROM idgen_leases();

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
