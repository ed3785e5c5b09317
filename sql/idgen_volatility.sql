--
-- idgen_volatility: what the IMMUTABLE labels of idgen's pure functions
-- protect, and that nothing a session may change moves their answers
-- (src/decode.c gives the reasoning for each label).  Plan folding of
-- min_id_at() and the partition bounds are shown in idgen_decode and
-- idgen_partitions.
--
SET client_min_messages = warning;
CREATE EXTENSION idgen;
RESET client_min_messages;
SET idgen.public_key = '000102030405060708090a0b0c0d0e0f';

-- Every IMMUTABLE function of idgen, on fixed arguments, as the baseline
-- (IDs of the configured layout: 22 low bits, epoch 2026-01-01).
CREATE TEMP TABLE answers (call text PRIMARY KEY, answer text);
CREATE FUNCTION pg_temp.answer_now() RETURNS TABLE (call text, answer text)
LANGUAGE sql AS $$
    -- each answer as text of a fixed form, so that no output setting shows
    SELECT 'id_to_timestamp', (extract(epoch FROM id_to_timestamp(4194309127)) * 1000000)::bigint::text
    UNION ALL SELECT 'id_to_timestamp layout', (extract(epoch FROM id_to_timestamp(4194309127, 'epoch=2020-01-01')) * 1000000)::bigint::text
    UNION ALL SELECT 'id_to_shard', id_to_shard(4194309127)::text
    UNION ALL SELECT 'id_to_sequence', id_to_sequence(4194309127)::text
    UNION ALL SELECT 'id_to_layout_version', id_to_layout_version(4194309127)::text
    UNION ALL SELECT 'idgen_decode', (SELECT shard || '/' || sequence || '/' ||
        (extract(epoch FROM created_at) * 1000000)::bigint FROM idgen_decode(4194309127))
    UNION ALL SELECT 'idgen_decode layout', (SELECT shard || '/' || sequence FROM idgen_decode(4194309127, 'epoch=2020-01-01'))
    UNION ALL SELECT 'min_id_at', min_id_at('2026-10-27 12:00:00+02')::text
    UNION ALL SELECT 'min_id_at text', min_id_at('2026-10-27 12:00:00+02'::timestamptz, 'epoch=2020-01-01')::text
    UNION ALL SELECT 'idgen_span', idgen_span(interval '1 hour')::text
    UNION ALL SELECT 'idgen_to_text', idgen_to_text(4194309127)
    UNION ALL SELECT 'idgen_to_text prefix', idgen_to_text(4194309127, 'evt')
    UNION ALL SELECT 'idgen_from_text', idgen_from_text('000000fa01507')::text
    UNION ALL SELECT 'idgen_from_text prefix', idgen_from_text('evt_000000fa01507', 'evt')::text
    UNION ALL SELECT 'idgen_to_public', idgen_to_public(4194309127)::text
    UNION ALL SELECT 'idgen_from_public', idgen_from_public(4194309127)::text
$$;
INSERT INTO answers SELECT * FROM pg_temp.answer_now();
-- every IMMUTABLE function of the extension is called above
SELECT p.oid::regprocedure AS not_checked
  FROM pg_proc AS p
  JOIN pg_depend AS d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
   AND d.deptype = 'e' AND p.provolatile = 'i'
   AND p.proname NOT IN (SELECT split_part(call, ' ', 1) FROM answers);

-- Every setting a session may change, changed: the answers stay.
SET TimeZone = 'Pacific/Chatham';
SET DateStyle = 'SQL, DMY';
SET IntervalStyle = 'iso_8601';
SET extra_float_digits = -15;
SET lc_monetary = 'C';
SET idgen.max_wait = '1s';
CREATE SCHEMA elsewhere;
SET search_path = elsewhere, public;
SELECT a.call, a.answer AS before, n.answer AS now
  FROM answers AS a JOIN pg_temp.answer_now() AS n USING (call)
 WHERE a.answer IS DISTINCT FROM n.answer;
RESET ALL;
SET idgen.public_key = '000102030405060708090a0b0c0d0e0f';

-- What could move them is not a session's to change: the layout takes a
-- restart, the key file a reload, 1.1's key setting a superuser.
SELECT name, context FROM pg_settings
 WHERE name IN ('idgen.epoch', 'idgen.shard_bits', 'idgen.sequence_bits',
                'idgen.public_key_file', 'idgen.public_key')
 ORDER BY name;
CREATE ROLE regress_idgen_volatility;
GRANT USAGE, CREATE ON SCHEMA elsewhere TO regress_idgen_volatility;
GRANT SELECT ON answers TO regress_idgen_volatility;
SET ROLE regress_idgen_volatility;
SET idgen.public_key = 'f0e0d0c0b0a090807060504030201000';
SET idgen.public_key_file = 'elsewhere.key';
SET idgen.epoch = '2020-01-01';
SELECT a.call, a.answer AS before, n.answer AS now
  FROM answers AS a JOIN pg_temp.answer_now() AS n USING (call)
 WHERE a.answer IS DISTINCT FROM n.answer;

-- What the labels protect: an index on a decoded time or a public ID, and
-- a generated column, which PostgreSQL allows on IMMUTABLE functions only,
-- and a plan that uses the index.
CREATE TABLE elsewhere.orders (id bigint PRIMARY KEY, total numeric,
    created_at timestamptz GENERATED ALWAYS AS (id_to_timestamp(id)) STORED);
INSERT INTO elsewhere.orders (id, total)
SELECT min_id_at('2026-10-27+00'::timestamptz + g * interval '1 minute') | 7, g
  FROM generate_series(0, 999) AS g;
CREATE INDEX orders_public ON elsewhere.orders (idgen_to_public(id));
CREATE INDEX orders_time ON elsewhere.orders (id_to_timestamp(id));
ANALYZE elsewhere.orders;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT total FROM elsewhere.orders WHERE idgen_to_public(id) = 8339014216452651838;
SELECT total FROM elsewhere.orders WHERE idgen_to_public(id) = idgen_to_public(min_id_at('2026-10-27 08:20+00') | 7);
EXPLAIN (COSTS OFF)
SELECT count(*) FROM elsewhere.orders
 WHERE id_to_timestamp(id) >= '2026-10-27 05:00+00' AND id_to_timestamp(id) < '2026-10-27 06:00+00';
SELECT count(*) AS in_hour FROM elsewhere.orders
 WHERE id_to_timestamp(id) >= '2026-10-27 05:00+00' AND id_to_timestamp(id) < '2026-10-27 06:00+00';
SELECT count(*) AS generated_matches FROM elsewhere.orders
 WHERE created_at = id_to_timestamp(id);
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET ROLE;

DROP SCHEMA elsewhere CASCADE;
REVOKE SELECT ON answers FROM regress_idgen_volatility;
DROP ROLE regress_idgen_volatility;

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
