--
-- pgTAP: a million IDs from one statement
--
-- Run by pg_prove in a database where "CREATE EXTENSION pgtap" and
-- "CREATE EXTENSION idgen" were run, on a server with idgen preloaded.
--
\unset ECHO
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off
\set ON_ERROR_ROLLBACK 1
\set ON_ERROR_STOP true

BEGIN;

SELECT plan(8);

-- n is the order of minting: generate_series feeds rows one at a time and
-- idgen_next() is evaluated once per row as it comes
CREATE TEMP TABLE million ON COMMIT DROP AS
SELECT n, idgen_next() AS id
  FROM generate_series(1, 1000000) AS n;

SELECT is((SELECT count(*) FROM million), 1000000::bigint,
          'one statement minted 1000000 IDs');
SELECT is((SELECT count(DISTINCT id) FROM million), 1000000::bigint,
          'all 1000000 IDs are distinct');
SELECT ok((SELECT bool_and(id > prev_id)
             FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev_id
                     FROM million) AS s
            WHERE prev_id IS NOT NULL),
          'IDs are strictly increasing in the order minted');
SELECT ok((SELECT bool_and(id > 0) FROM million), 'IDs are positive');
SELECT ok((SELECT bool_and(id_to_shard(id) = current_setting('idgen.shard_id')::integer)
             FROM million),
          'every ID carries the shard of idgen.shard_id');
SELECT ok((SELECT max(c) <= 1024
             FROM (SELECT count(*) AS c FROM million GROUP BY id >> 22) AS s),
          'no millisecond holds more IDs than the sequence field');
SELECT ok((SELECT max(id_to_timestamp(id)) < clock_timestamp() + interval '3 seconds'
             FROM million),
          'the newest ID is not far ahead of the clock');
SELECT ok((SELECT min(idgen_next()) > (SELECT max(id) FROM million)
             FROM generate_series(1, 1000)),
          'a later statement mints larger IDs');

SELECT * FROM finish();
ROLLBACK;
