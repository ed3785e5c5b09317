--
-- idgen_json: rows as JSON with their bigint columns as strings
-- (idgen_row_to_json, idgen_row_to_jsonb), since 1.2.
--
-- A JSON number above 2^53 loses digits in JavaScript's JSON.parse; the
-- clients suite (test/clients) parses these outputs there.  Here: what
-- becomes a string, what stays as row_to_json writes it, and errors.
--

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

CREATE DOMAIN json_test_id AS bigint;
CREATE TABLE json_orders (
    id       bigint PRIMARY KEY DEFAULT idgen_next(),
    customer json_test_id,
    tags     bigint[],
    gone     integer,
    name     text,
    qty      integer,
    price    numeric,
    weight   float8,
    small    smallint,
    meta     json
);
ALTER TABLE json_orders DROP COLUMN gone;
INSERT INTO json_orders VALUES
    (9007199254740993, 9223372036854775807, '{1,NULL,9007199254740993}',
     'a "quoted" name', 3, 12.50, 1.5, 7, '{"n": 9007199254740993}'),
    (4194309127, NULL, '[0:1][1:2]={{1,2},{3,4}}', NULL, NULL, NULL, NULL, NULL, NULL),
    (1, -1, '{}', '', 0, 0, 0, 0, 'null');

-- bigint, a domain over bigint and bigint[] elements become strings; the
-- dropped column is left out; numeric, float8, smallint, integer, json
-- and NULLs are as row_to_json writes them
SELECT idgen_row_to_json(o) FROM json_orders o ORDER BY o.id;
SELECT row_to_json(o) FROM json_orders o ORDER BY o.id;
SELECT idgen_row_to_jsonb(o) FROM json_orders o ORDER BY o.id;

-- a text column after a bigint one: the copy's columns are laid out anew
-- (a table's row type caches the offsets of its own layout)
CREATE TABLE json_pairs (id bigint, name text, n bigint, tail text);
INSERT INTO json_pairs VALUES (9007199254740993, 'order 1', 5, 'end'), (1, NULL, NULL, 'last');
SELECT * FROM json_pairs ORDER BY id;
SELECT idgen_row_to_json(p) FROM json_pairs AS p ORDER BY id;
SELECT idgen_row_to_jsonb(p) FROM json_pairs AS p ORDER BY id;
DROP TABLE json_pairs;

-- the ID itself as a string, exactly, for minted IDs too
INSERT INTO json_orders (name) SELECT 'minted ' || g FROM generate_series(1, 100) g;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE json_typeof(idgen_row_to_json(o) -> 'id') = 'string'
                          AND (idgen_row_to_json(o) ->> 'id') = o.id::text) AS exact_strings,
       count(*) FILTER (WHERE jsonb_typeof(idgen_row_to_jsonb(o) -> 'id') = 'string'
                          AND (idgen_row_to_jsonb(o) ->> 'id') = o.id::text) AS exact_strings_jsonb,
       count(*) FILTER (WHERE json_typeof(row_to_json(o) -> 'id') = 'number') AS row_to_json_numbers,
       count(*) FILTER (WHERE jsonb_typeof(to_jsonb(o) -> 'id') = 'number') AS to_jsonb_numbers
  FROM json_orders o;
DELETE FROM json_orders WHERE name LIKE 'minted %';

-- everything but the bigints is row_to_json's and to_jsonb's: with the
-- bigint columns cast to text first, the outputs are equal
SELECT count(*) AS rows,
       bool_and(idgen_row_to_json(o)::text = row_to_json(t)::text) AS json_same,
       bool_and(idgen_row_to_jsonb(o) = to_jsonb(t)) AS jsonb_same
  FROM json_orders o,
       LATERAL (SELECT o.id::text AS id, o.customer::text AS customer,
                       o.tags::text[] AS tags, o.name, o.qty, o.price,
                       o.weight, o.small, o.meta) AS t;

-- a row without bigints is row_to_json's and to_jsonb's exactly
SELECT idgen_row_to_json(t) AS json, idgen_row_to_json(t)::text = row_to_json(t)::text AS same,
       idgen_row_to_jsonb(t) = to_jsonb(t) AS same_jsonb
  FROM (SELECT name, qty FROM json_orders WHERE id = 1) AS t;

-- anonymous records: a subquery, ROW(), an empty row
SELECT idgen_row_to_json(t) FROM (SELECT id, name FROM json_orders) AS t ORDER BY t.id;
SELECT idgen_row_to_json(ROW(9007199254740993, 'x')) AS row_constructor,
       idgen_row_to_json(ROW()) AS empty_row;

-- inside json_agg and jsonb_agg, and json_build_object
SELECT json_agg(idgen_row_to_json(t) ORDER BY t.id)
  FROM (SELECT id, name FROM json_orders) AS t;
SELECT jsonb_agg(idgen_row_to_jsonb(t) ORDER BY t.id)
  FROM (SELECT id, customer FROM json_orders) AS t;
SELECT json_build_object('order', idgen_row_to_json(o), 'count', 1)
  FROM json_orders o WHERE id = 4194309127;

-- a nested row is written as row_to_json writes it: its bigints stay numbers
SELECT idgen_row_to_json(t)
  FROM (SELECT o.id, (SELECT x FROM (SELECT o.id AS inner_id) AS x) AS nested
          FROM json_orders o WHERE id = 1) AS t;

-- NULL in, NULL out; a row of NULLs is an object of nulls
SELECT idgen_row_to_json(NULL::json_orders) IS NULL AS null_json,
       idgen_row_to_jsonb(NULL::json_orders) IS NULL AS null_jsonb,
       idgen_row_to_json(ROW(NULL::bigint, NULL::bigint[])) AS nulls;

-- a changed row type is noticed by an expression that outlives the change
CREATE FUNCTION pg_temp.order_json(o json_orders) RETURNS json
LANGUAGE plpgsql AS $$ BEGIN RETURN idgen_row_to_json(o); END $$;
BEGIN;
SELECT pg_temp.order_json(o) ->> 'qty' AS qty, json_typeof(pg_temp.order_json(o) -> 'qty') AS type
  FROM json_orders o WHERE id = 9007199254740993;
ALTER TABLE json_orders ALTER COLUMN qty TYPE bigint;
SELECT pg_temp.order_json(o) ->> 'qty' AS qty, json_typeof(pg_temp.order_json(o) -> 'qty') AS type
  FROM json_orders o WHERE id = 9007199254740993;
ROLLBACK;
DROP FUNCTION pg_temp.order_json(json_orders);

-- refused: anything but a row (terse: the hint's wording is the server's,
-- and changes in 19)
\set VERBOSITY terse
SELECT idgen_row_to_json(9007199254740993);
SELECT idgen_row_to_json(ARRAY[1::bigint]);
SELECT idgen_row_to_jsonb('{"id": 1}'::jsonb);
\set VERBOSITY default

DROP TABLE json_orders;
DROP DOMAIN json_test_id;

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
