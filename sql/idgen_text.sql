--
-- idgen_text: IDs as 13 characters of Crockford's base32, with or without
-- a type prefix.  Fixed IDs, errors, and properties over millions of
-- pseudo-random IDs (hashint8extended: the same values on every run).
--

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

-- fixed IDs: 0, the worked example (ms 1000, shard 5, sequence 7), the
-- largest ID, and powers of 32 around the digit boundaries
SELECT id, idgen_to_text(id) AS text, length(idgen_to_text(id)) AS len,
       idgen_from_text(idgen_to_text(id)) = id AS round_trip
  FROM (VALUES (0::bigint), (1), (31), (32), (1023), (1024),
               (4194309127), (9223372036854775807)) AS v(id);

SELECT idgen_to_text(4194309127, 'evt') AS prefixed,
       idgen_from_text('evt_0000003x00507', 'evt') AS read_back,
       idgen_to_text(4194309127, 'user_account') AS longer_prefix;

-- reading: either case, Crockford's aliases (i, l for 1; o for 0)
SELECT idgen_from_text('0000003X00507') AS upper,
       idgen_from_text('0000000OOOOO1') = 1 AS o_is_0,
       idgen_from_text('000000000000i') = 1 AS i_is_1,
       idgen_from_text('000000000000L') = 1 AS l_is_1;

-- NULL in, NULL out
SELECT idgen_to_text(NULL) IS NULL AS a, idgen_from_text(NULL) IS NULL AS b,
       idgen_to_text(1, NULL) IS NULL AS c, idgen_from_text(NULL, 'evt') IS NULL AS d;

-- refused: wrong length, a letter outside the alphabet, past the largest ID,
-- a prefix where none is expected, another prefix, a bad prefix, a
-- negative ID
SELECT idgen_from_text('00000003x00507');
SELECT idgen_from_text('0000003x0050u');
SELECT idgen_from_text('80000000000000');
SELECT idgen_from_text('8000000000000');
SELECT idgen_from_text('evt_0000003x00507');
SELECT idgen_from_text('usr_0000003x00507', 'evt');
SELECT idgen_from_text('0000003x00507', 'evt');
SELECT idgen_to_text(1, 'Evt');
SELECT idgen_to_text(1, '_evt');
SELECT idgen_to_text(1, '');
SELECT idgen_to_text(-1);
-- a character outside ASCII is quoted whole, and lengths count characters
-- (13 characters in 14 bytes, then 12 in 13)
SELECT idgen_from_text('000000' || chr(233) || '000000');
SELECT idgen_from_text('0000003x005' || chr(233));
SELECT idgen_from_text('evt_000000' || chr(8364) || '000000', 'evt');
-- a right prefix before a body of the wrong length: the length is the fault
SELECT idgen_from_text('evt_0000003x0050', 'evt');
SELECT idgen_from_text('evt_0000003x005070', 'evt');
-- the SQLSTATEs: 22P02 for text that is not an ID, as for a malformed number
\set VERBOSITY sqlstate
SELECT idgen_from_text('0000003x0050u');
SELECT idgen_from_text('usr_0000003x00507', 'evt');
SELECT idgen_to_text(1, 'Evt');
-- a LATIN1 client too, though the detail quotes a character outside ASCII
SET client_encoding = 'LATIN1';
SELECT idgen_from_text('0000003x005' || chr(233));
SELECT idgen_from_text('000000' || chr(233) || '000000');
RESET client_encoding;
\set VERBOSITY default

-- 2,000,000 pseudo-random IDs: the round trip gives each back (so no two
-- texts are alike), every text is 13 characters, and sorting the texts in
-- "C" sorts the IDs
CREATE TEMP TABLE sample AS
SELECT hashint8extended(g, 0) & 9223372036854775807 AS id
  FROM generate_series(1, 2000000) AS g;
SELECT count(*) AS ids,
       count(*) FILTER (WHERE idgen_from_text(idgen_to_text(id)) <> id) AS round_trip_failures,
       count(*) FILTER (WHERE idgen_from_text(upper(idgen_to_text(id))) <> id) AS upper_case_failures,
       count(*) FILTER (WHERE idgen_from_text(idgen_to_text(id, 'ord'), 'ord') <> id) AS prefixed_failures,
       min(length(idgen_to_text(id))) = 13 AND max(length(idgen_to_text(id))) = 13 AS fixed_width
  FROM sample;
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE (prev_id < id) <> (prev_text < text COLLATE "C")) AS order_disagreements
  FROM (SELECT id, idgen_to_text(id) AS text,
               lag(id) OVER (ORDER BY id) AS prev_id,
               lag(idgen_to_text(id)) OVER (ORDER BY id) AS prev_text
          FROM sample) AS s
 WHERE prev_id IS NOT NULL AND prev_id <> id;
DROP TABLE sample;

-- minted IDs too, and the JSON use: a text survives where a number above
-- 2^53 would not in a JavaScript client
SELECT idgen_from_text(idgen_to_text(id)) = id AS minted_round_trip
  FROM (SELECT idgen_next() AS id) AS s;
SELECT json_build_object('id', idgen_to_text(4194309127, 'evt')) AS json;
-- a long argument is quoted in part in a message, never whole
SELECT idgen_from_text(repeat('x', 100000));
SELECT idgen_to_text(1, repeat('a', 100000));
SELECT idgen_from_text('evt_0000003x00507', repeat('b', 200));
SELECT idgen_from_text(repeat('b', 200) || '_0000003x00507', 'evt');

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
