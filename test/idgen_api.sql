--
-- pgTAP: the SQL API contract of idgen
--
-- Run by pg_prove in a database where "CREATE EXTENSION pgtap" and
-- "CREATE EXTENSION idgen" were run, on a server with idgen preloaded.
-- Signatures, labels, SQLSTATEs and fixed decodings; nothing is kept.
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

SELECT plan(87);

-- Signatures and labels: name, argument types, return type, volatility,
-- strictness, parallel safety.  Decoders are IMMUTABLE STRICT PARALLEL SAFE;
-- minting and stats read shared memory, VOLATILE PARALLEL SAFE; the
-- catalog reader idgen_layout_dependents is STABLE PARALLEL SAFE.
CREATE TEMP TABLE api (
    fname name,
    args name[],
    returns text,
    volatility text,
    strict boolean
) ON COMMIT DROP;
INSERT INTO api VALUES
    ('idgen_next', '{}', 'bigint', 'volatile', false),
    ('idgen_next', '{integer}', 'bigint', 'volatile', true),
    ('id_to_timestamp', '{bigint}', 'timestamp with time zone', 'immutable', true),
    ('min_id_at', '{timestamp with time zone}', 'bigint', 'immutable', true),
    ('id_to_shard', '{bigint}', 'integer', 'immutable', true),
    ('id_to_sequence', '{bigint}', 'integer', 'immutable', true),
    ('idgen_decode', '{bigint}', 'record', 'immutable', true),
    ('idgen_stats', '{}', 'record', 'volatile', true),
    ('idgen_stats_backends', '{}', 'setof record', 'volatile', true),
    ('idgen_layout_dependents', '{}', 'setof record', 'stable', false);

SELECT has_function(fname, args) FROM api ORDER BY fname, args;
SELECT function_returns(fname, args, returns) FROM api ORDER BY fname, args;
SELECT volatility_is(fname, args, volatility) FROM api ORDER BY fname, args;
SELECT CASE WHEN strict THEN is_strict(fname, args)
            ELSE isnt_strict(fname, args) END
  FROM api ORDER BY fname, args;
SELECT is(p.proparallel, 's',
          format('Function %s should be parallel safe', p.oid::regprocedure))
  FROM api
  JOIN pg_proc p
    ON p.oid = to_regprocedure(format('%I(%s)', fname, array_to_string(args, ',')))
 ORDER BY fname, args;

-- nothing else belongs to the extension (PostgreSQL 17 also records a
-- view's row type and that type's array as members: they come with the view)
SELECT bag_eq(
    $$SELECT pg_describe_object(d.classid, d.objid, d.objsubid)
        FROM pg_depend AS d
       WHERE d.refclassid = 'pg_extension'::regclass
         AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
         AND d.deptype = 'e'
         AND NOT EXISTS (
             SELECT FROM pg_type AS t
               LEFT JOIN pg_type AS elem ON elem.oid = t.typelem
              WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
                AND (t.typrelid <> 0 OR elem.typrelid <> 0)
                AND EXISTS (SELECT FROM pg_depend AS v
                             WHERE v.classid = 'pg_class'::regclass
                               AND v.objid IN (t.typrelid, elem.typrelid)
                               AND v.refobjid = d.refobjid
                               AND v.deptype = 'e'))$$,
    $$VALUES ('function idgen_next()'),
             ('function idgen_next(integer)'),
             ('function id_to_timestamp(bigint)'),
             ('function min_id_at(timestamp with time zone)'),
             ('function id_to_shard(bigint)'),
             ('function id_to_sequence(bigint)'),
             ('function idgen_decode(bigint)'),
             ('function idgen_stats()'),
             ('view idgen_stats'),
             ('function idgen_stats_backends()'),
             ('view idgen_stats_backends'),
             ('function idgen_layout_dependents()')$$,
    'the extension has exactly its documented objects');

-- the views
SELECT has_view('idgen_stats');
SELECT has_view('idgen_stats_backends');
SELECT results_eq(
    $$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod)
        FROM pg_attribute
       WHERE attrelid = 'idgen_stats'::regclass AND attnum > 0
       ORDER BY attnum$$,
    $$VALUES ('minted', 'bigint'),
             ('borrowed_ms', 'bigint'),
             ('clock_behind', 'bigint'),
             ('clock_steps_back', 'bigint'),
             ('waits', 'bigint'),
             ('wait_time_ms', 'double precision'),
             ('max_wait_errors', 'bigint'),
             ('lead_ms', 'bigint'),
             ('last_id', 'bigint'),
             ('fence', 'timestamp with time zone'),
             ('fence_ahead_ms', 'bigint'),
             ('fence_advances', 'bigint'),
             ('fence_waits', 'bigint')$$,
    'idgen_stats has its documented columns');
SELECT results_eq(
    $$SELECT attname::text COLLATE "default", format_type(atttypid, atttypmod)
        FROM pg_attribute
       WHERE attrelid = 'idgen_stats_backends'::regclass AND attnum > 0
       ORDER BY attnum$$,
    $$VALUES ('pid', 'integer'),
             ('minted', 'bigint'),
             ('borrowed_ms', 'bigint'),
             ('clock_behind', 'bigint'),
             ('clock_steps_back', 'bigint'),
             ('waits', 'bigint'),
             ('wait_time_ms', 'double precision'),
             ('max_wait_errors', 'bigint'),
             ('last_id', 'bigint')$$,
    'idgen_stats_backends has its documented columns');
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
