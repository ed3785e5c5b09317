--
-- idgen_public: public IDs, a keyed permutation of the non-negative IDs.
-- The cipher checks itself against Speck64/128's published test vector
-- before its first use (public_id.c); here: fixed values under a fixed key,
-- the properties over 2,000,000 pseudo-random IDs, and who may read or
-- change the key.  The key file (idgen.public_key_file) is tested in
-- t/018_public_key.pl; here 1.1's idgen.public_key, set in the session.
--

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

-- without a key: a clear error, naming the key file
SELECT idgen_to_public(1);
-- the key file is named in postgresql.conf, never in a session
SET idgen.public_key_file = 'idgen_public.key';

SET idgen.public_key = '000102030405060708090a0b0c0d0e0f';
SELECT id, idgen_to_public(id) AS public_id,
       idgen_from_public(idgen_to_public(id)) = id AS round_trip
  FROM (VALUES (0::bigint), (1), (2), (4194309127), (9223372036854775807)) AS v(id);

-- with the text form, for a URL
SELECT idgen_to_text(idgen_to_public(4194309127), 'ord') AS url_id,
       idgen_from_public(idgen_from_text(idgen_to_text(idgen_to_public(4194309127), 'ord'), 'ord')) AS id;

CREATE TEMP TABLE sample AS
SELECT g, hashint8extended(g, 0) & 9223372036854775807 AS id
  FROM generate_series(1, 2000000) AS g;
CREATE TEMP TABLE mapped AS
SELECT g, id, idgen_to_public(id) AS pub FROM sample;

-- a permutation of the non-negative IDs: every ID comes back, no output is
-- negative, no two IDs share an output
SELECT count(*) AS ids,
       count(*) FILTER (WHERE idgen_from_public(pub) <> id) AS round_trip_failures,
       count(*) FILTER (WHERE pub < 0) AS negative_outputs,
       count(DISTINCT pub) = count(DISTINCT id) AS one_to_one
  FROM mapped;

-- consecutive IDs (as a node mints them) look unrelated: in the order of
-- their public forms, the IDs go up about as often as down, and the
-- public forms do not follow the IDs
CREATE TEMP TABLE consecutive AS
SELECT n, idgen_to_public(120000000000000000 + n) AS pub
  FROM generate_series(1, 200000) AS n;
SELECT round(avg((n > prev)::int), 2) BETWEEN 0.49 AND 0.51 AS ups_about_half,
       abs(corr(n, pub)) < 0.01 AS uncorrelated
  FROM (SELECT n, pub, lag(n) OVER (ORDER BY pub) AS prev FROM consecutive) AS s
 WHERE prev IS NOT NULL;

-- another key, other outputs
SET idgen.public_key = 'F0E0D0C0B0A090807060504030201000';
SELECT count(*) FILTER (WHERE idgen_to_public(id) = pub) AS same_under_another_key,
       count(*) FILTER (WHERE idgen_from_public(idgen_to_public(id)) <> id) AS round_trip_failures
  FROM mapped;

-- refused: a key that is not 32 hex digits (the value is never echoed), a
-- negative ID or public ID
SET idgen.public_key = 'not a key at all';
SELECT idgen_to_public(-1);
SELECT idgen_from_public(-1);

-- the key is the superuser's: others can use it, not read or change it
CREATE ROLE regress_idgen_web;
SET ROLE regress_idgen_web;
SELECT idgen_from_public(idgen_to_public(42)) AS usable;
-- (PostgreSQL's own messages, worded differently from 16 on: the SQLSTATE)
\set VERBOSITY sqlstate
SHOW idgen.public_key;
SELECT current_setting('idgen.public_key');
SHOW idgen.public_key_file;
SET idgen.public_key = '000102030405060708090a0b0c0d0e0f';
\set VERBOSITY default
SELECT count(*) AS visible FROM pg_settings WHERE name = 'idgen.public_key';
RESET ROLE;
DROP ROLE regress_idgen_web;
RESET idgen.public_key;
DROP TABLE sample, mapped, consecutive;

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
