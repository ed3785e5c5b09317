--
-- idgen_next_n: a block of IDs in one call.  Properties only: counts,
-- order, disjointness, bounds and errors, never the values themselves.
--

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

SELECT idgen_next() AS before \gset

CREATE TEMP TABLE block AS
SELECT id, i FROM idgen_next_n(1000) WITH ORDINALITY AS b(id, i);
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       min(id) > :before AS after_earlier_ids,
       bool_and(id_to_shard(id) = current_setting('idgen.shard_id')::integer) AS shard_of_shard_id
  FROM block;
SELECT count(*) AS pairs, bool_and(id > prev) AS increasing_in_order
  FROM (SELECT id, lag(id) OVER (ORDER BY i) AS prev FROM block) AS s
 WHERE prev IS NOT NULL;
SELECT idgen_next() > max(id) AS next_id_follows_block FROM block;

-- blocks and single IDs mixed in one statement never meet
SELECT count(*) AS ids, count(DISTINCT id) = count(*) AS all_distinct
  FROM (SELECT idgen_next_n(500) AS id
        UNION ALL SELECT idgen_next() FROM generate_series(1, 500)
        UNION ALL SELECT idgen_next_n(500)
        UNION ALL SELECT id FROM block) AS s;

-- a block for another shard this node owns (test/idgen.conf: 7, 100-163)
SELECT count(*) AS ids, bool_and(id_to_shard(id) = 7) AS shard_7
  FROM idgen_next_n(100, 7) AS id;

-- the smallest and the largest block (1,000,000 IDs fit in the default
-- idgen.max_lead of 1 s: 1,025,024 would)
SELECT count(*) AS ids FROM idgen_next_n(1);
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids
  FROM idgen_next_n(1000000) AS id;

-- the statistics count every ID of a block
SELECT minted AS minted_before FROM idgen_stats_backends
 WHERE pid = pg_backend_pid() \gset
SELECT count(*) FROM idgen_next_n(250);
SELECT minted - :minted_before AS minted FROM idgen_stats_backends
 WHERE pid = pg_backend_pid();

-- refused
SELECT idgen_next_n(0);
SELECT idgen_next_n(-5);
SELECT idgen_next_n(1000001);
SELECT idgen_next_n(10, 5);
SELECT idgen_next_n(10, 4096);
SELECT count(*) AS rows_for_null FROM idgen_next_n(NULL);

DROP TABLE block;

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
