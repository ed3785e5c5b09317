--
-- idgen_errors: every error a user can meet, with its message
--
-- The messages are part of what users see, so this file pins their text
-- (default verbosity: message, detail, hint); the SQLSTATEs, which are API,
-- are listed together at the end.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

-- a shard outside the shard field (12 bits: 0..4095)
SELECT idgen_next(4096);
SELECT idgen_next(-1);
SELECT idgen_next(2147483647);
-- a shard inside the field that this node does not own: test/idgen.conf
-- gives it idgen.shard_id 0 (the default) and idgen.shard_ids '7, 100-163'
SHOW idgen.shard_id;
SHOW idgen.shard_ids;
SELECT idgen_next(5);
SELECT idgen_next(99);
SELECT idgen_next(164);
SELECT idgen_next(4095);

-- min_id_at before the epoch, by a microsecond and by far
SELECT min_id_at('2025-12-31 23:59:59.999999+00');
SELECT min_id_at('2026-01-01 00:00:00+01');
SELECT min_id_at('1970-01-01 00:00:00+00');
SELECT min_id_at('-infinity');
-- past the end of the layout: 2^41 ms after the epoch
SELECT min_id_at('2095-09-07 15:47:35.552+00');
SELECT min_id_at('294276-12-31 23:59:59+00');
SELECT min_id_at('infinity');
-- the last microsecond of the layout is still fine
SELECT min_id_at('2095-09-07 15:47:35.551999+00');

-- a negative ID in every decoding function
SELECT id_to_timestamp(-1);
SELECT id_to_shard(-1);
SELECT id_to_sequence(-1);
SELECT idgen_decode(-1);
SELECT * FROM idgen_decode(-9223372036854775808);

-- the SQLSTATEs
CREATE FUNCTION pg_temp.sqlstate_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE query;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END
$$;
SELECT query, pg_temp.sqlstate_of(query) AS sqlstate
  FROM (VALUES (1, 'SELECT idgen_next(4096)'),
               (2, 'SELECT idgen_next(-1)'),
               (3, 'SELECT idgen_next(5)'),
               (4, 'SELECT min_id_at(''2025-12-31 23:59:59.999999+00'')'),
               (5, 'SELECT min_id_at(''-infinity'')'),
               (6, 'SELECT min_id_at(''2095-09-07 15:47:35.552+00'')'),
               (7, 'SELECT min_id_at(''infinity'')'),
               (8, 'SELECT id_to_timestamp(-1)'),
               (9, 'SELECT id_to_shard(-1)'),
               (10, 'SELECT id_to_sequence(-1)'),
               (11, 'SELECT idgen_decode(-1)'),
               (12, 'SELECT idgen_next(0)'),
               (13, 'SELECT min_id_at(''2026-01-01 00:00:00+00'')'),
               (14, 'SELECT id_to_timestamp(0)'),
               (15, 'SET idgen.shard_bits = 4'),
               (16, 'SET idgen.shard_id = 1'),
               (17, 'SET idgen.nonexistent = 1')) AS q(n, query)
 ORDER BY n;
-- the same, as psql shows them with VERBOSITY sqlstate
\set VERBOSITY sqlstate
SELECT idgen_next(4096);
SELECT idgen_next(5);
SELECT min_id_at('infinity');
SELECT id_to_shard(-42);
\set VERBOSITY default

-- the layout settings are fixed at server start
SET idgen.epoch = '2020-01-01 00:00:00+00';
SET idgen.shard_bits = 4;
SET idgen.sequence_bits = 20;
SET idgen.allow_layout_change = on;
-- so are the reload-time ones: they come from the configuration file
SET idgen.shard_id = 1;
SET idgen.shard_ids = '5,7';
SET idgen.max_lead = 0;
SET idgen.fence_horizon = 5000;
SELECT set_config('idgen.shard_id', '1', false);
-- idgen.max_wait is a user setting, with bounds
SET idgen.max_wait = 500;
SHOW idgen.max_wait;
-- (PostgreSQL's own message, whose bounds carry units since 17: the
-- SQLSTATE alone)
\set VERBOSITY sqlstate
SET idgen.max_wait = -1;
\set VERBOSITY default
RESET idgen.max_wait;

-- the "idgen" prefix is reserved: no placeholder settings under it
SET idgen.nonexistent = 1;
SHOW idgen.nonexistent;
SELECT current_setting('idgen.nonexistent', true) IS NULL AS missing_ok;
-- other prefixes still take placeholders
SET idgen_app.anything = 1;
SHOW idgen_app.anything;
RESET idgen_app.anything;

-- a failed call leaves the session usable
SELECT id_to_shard(4194309127) AS shard_after_errors;

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
