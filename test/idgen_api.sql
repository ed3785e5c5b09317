--
-- pgTAP: the SQL API contract of idgen
--
-- Run by pg_prove in a database where "CREATE EXTENSION pgtap" and
-- "CREATE EXTENSION idgen" were run, on a server with idgen preloaded.
-- SQLSTATEs, NULL handling and fixed decodings; nothing is kept.
--
\unset ECHO
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off
\set ON_ERROR_ROLLBACK 1
\set ON_ERROR_STOP true

BEGIN;
SET LOCAL TimeZone = 'UTC';

SELECT plan(32);

-- Signatures, labels, members and view columns are the pg_regress test
-- idgen_catalog's expected output, the one place that lists them.
SELECT is((SELECT count(*) FROM idgen_stats), 1::bigint,
          'idgen_stats has one row');

-- errors and their SQLSTATEs
SELECT throws_ok('SELECT idgen_next(4096)', '22023', NULL,
                 'a shard past the shard field is refused');
SELECT throws_ok('SELECT idgen_next(-1)', '22023', NULL,
                 'a negative shard is refused');
SELECT throws_ok('SELECT idgen_next(5)', '22023', NULL,
                 'a shard this node does not own is refused');
SELECT throws_ok($$SELECT min_id_at('2025-12-31 23:59:59.999999+00')$$, '22008', NULL,
                 'min_id_at before the epoch is refused');
SELECT throws_ok($$SELECT min_id_at('-infinity')$$, '22008', NULL,
                 'min_id_at(-infinity) is refused');
SELECT throws_ok($$SELECT min_id_at('2095-09-07 15:47:35.552+00')$$, '22008', NULL,
                 'min_id_at past the end of the layout is refused');
SELECT throws_ok($$SELECT min_id_at('infinity')$$, '22008', NULL,
                 'min_id_at(infinity) is refused');
SELECT throws_ok('SELECT id_to_timestamp(-1)', '22003', NULL,
                 'id_to_timestamp refuses a negative ID');
SELECT throws_ok('SELECT id_to_shard(-1)', '22003', NULL,
                 'id_to_shard refuses a negative ID');
SELECT throws_ok('SELECT id_to_sequence(-1)', '22003', NULL,
                 'id_to_sequence refuses a negative ID');
SELECT throws_ok('SELECT idgen_decode(-1)', '22003', NULL,
                 'idgen_decode refuses a negative ID');
SELECT throws_ok('SET idgen.shard_bits = 4', '55P02', NULL,
                 'idgen.shard_bits cannot be set in a session');
SELECT throws_ok('SET idgen.shard_id = 1', '55P02', NULL,
                 'idgen.shard_id cannot be set in a session');
SELECT throws_ok('SET idgen.nonexistent = 1', '42602', NULL,
                 'the idgen prefix is reserved');
SELECT lives_ok('SELECT min_id_at(''2095-09-07 15:47:35.551999+00'')',
                'the last microsecond of the layout is accepted');

-- NULL in, NULL out
SELECT is(idgen_next(NULL::integer), NULL, 'idgen_next(NULL) is NULL');
SELECT is(id_to_timestamp(NULL), NULL, 'id_to_timestamp(NULL) is NULL');
SELECT is(min_id_at(NULL), NULL, 'min_id_at(NULL) is NULL');
SELECT is(id_to_shard(NULL), NULL, 'id_to_shard(NULL) is NULL');
SELECT is(id_to_sequence(NULL), NULL, 'id_to_sequence(NULL) is NULL');
SELECT ok(idgen_decode(NULL) IS NULL, 'idgen_decode(NULL) is NULL');

-- fixed decodings (epoch 2026-01-01 00:00:00+00, 12 shard bits, 10
-- sequence bits): 4194309127 = (1000 << 22) | (5 << 10) | 7
SELECT is(id_to_timestamp(4194309127), '2026-01-01 00:00:01+00'::timestamptz,
          'id_to_timestamp of a fixed ID');
SELECT is(id_to_shard(4194309127), 5, 'id_to_shard of a fixed ID');
SELECT is(id_to_sequence(4194309127), 7, 'id_to_sequence of a fixed ID');
SELECT results_eq('SELECT * FROM idgen_decode(4194309127)',
                  $$VALUES ('2026-01-01 00:00:01+00'::timestamptz, 5, 7)$$,
                  'idgen_decode of a fixed ID');
SELECT is(id_to_timestamp(0), '2026-01-01 00:00:00+00'::timestamptz,
          'ID 0 is the epoch');
SELECT results_eq('SELECT * FROM idgen_decode(9223372036854775807)',
                  $$VALUES ('2095-09-07 15:47:35.551+00'::timestamptz, 4095, 1023)$$,
                  'the largest ID decodes to the last millisecond, full fields');
SELECT is(min_id_at('2026-01-01 00:00:00+00'), 0::bigint,
          'min_id_at of the epoch is 0');
SELECT is(min_id_at('2026-01-01 00:00:00.001999+00'), 4194304::bigint,
          'min_id_at rounds down to the millisecond');
SELECT is(min_id_at('2095-09-07 15:47:35.551999+00'), 9223372036850581504::bigint,
          'min_id_at of the last millisecond');
SELECT ok(min_id_at(id_to_timestamp(108543960321884159)) <= 108543960321884159
          AND 108543960321884159 < min_id_at(id_to_timestamp(108543960321884159)
                                             + interval '1 millisecond'),
          'an ID lies in [min_id_at(its time), min_id_at(its time + 1 ms))');

SELECT * FROM finish();
ROLLBACK;
