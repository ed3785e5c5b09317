--
-- idgen_convert_column: existing tables onto DEFAULT idgen_next().
-- Values and defaults are shown; IDs minted after are checked by their
-- properties only.
--

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

\set SHOW_CONTEXT never

-- serial with a foreign key that references it, both integer
CREATE TABLE customers (id serial PRIMARY KEY, name text);
CREATE TABLE orders (
    id serial PRIMARY KEY,
    customer_id integer REFERENCES customers (id),
    note text
);
INSERT INTO customers (name) SELECT 'c' || g FROM generate_series(1, 3) AS g;
INSERT INTO orders (customer_id, note) VALUES (1, 'a'), (2, 'b'), (2, 'c');

SELECT idgen_convert_column('customers', 'id') ~ '^public\.customers\.id: DEFAULT public\.idgen_next\(\); widened to bigint: public\.customers\.id, public\.orders\.customer_id; sequence public\.customers_id_seq dropped; new IDs start at [0-9]+, above 3$'
       AS summary_as_expected;
SELECT a.attrelid::regclass AS "table", a.attname AS "column",
       format_type(a.atttypid, a.atttypmod) AS type,
       pg_get_expr(d.adbin, d.adrelid) AS "default"
  FROM pg_attribute AS a
  LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE a.attrelid IN ('customers'::regclass, 'orders'::regclass)
   AND a.attname IN ('id', 'customer_id')
 ORDER BY 1, 2;
SELECT to_regclass('customers_id_seq') IS NULL AS sequence_dropped;
SELECT id, name FROM customers ORDER BY id;
INSERT INTO customers (name) VALUES ('new') RETURNING id > 3 AS new_id_above_old,
    id_to_shard(id) = 0 AS shard_0;
INSERT INTO orders (customer_id, note)
SELECT id, 'for new' FROM customers WHERE name = 'new';
SELECT count(*) AS orders_of_new_customer
  FROM orders JOIN customers ON customers.id = orders.customer_id
 WHERE customers.name = 'new';

-- bigint identity, GENERATED ALWAYS: the identity goes
CREATE TABLE events (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text);
INSERT INTO events (body) VALUES ('x'), ('y');
SELECT idgen_convert_column('events', 'id', 7) ~ '^public\.events\.id: DEFAULT public\.idgen_next\(7\); identity dropped; new IDs start at [0-9]+, above 2$'
       AS summary_as_expected;
SELECT attidentity = '' AS identity_dropped,
       pg_get_expr(d.adbin, d.adrelid) AS "default"
  FROM pg_attribute AS a JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE a.attrelid = 'events'::regclass AND a.attname = 'id';
INSERT INTO events (body) VALUES ('z');
SELECT count(*) AS rows, bool_and(id <= 2 OR id_to_shard(id) = 7) AS new_row_on_shard_7
  FROM events;

-- DEFAULT nextval() of a sequence the column does not own: the sequence stays
CREATE SEQUENCE shared_seq;
CREATE TABLE tickets (id bigint DEFAULT nextval('shared_seq') PRIMARY KEY);
INSERT INTO tickets DEFAULT VALUES;
SELECT idgen_convert_column('tickets', 'id') LIKE 'public.tickets.id: DEFAULT public.idgen_next(); new IDs start at %'
       AS summary_as_expected;
SELECT to_regclass('shared_seq') IS NOT NULL AS shared_sequence_kept;

-- a serial's own sequence that another table's default also uses: it stays,
-- no longer owned by the column, so that it outlives the table
CREATE TABLE invoices (id serial PRIMARY KEY);
CREATE TABLE credit_notes (id integer DEFAULT nextval('invoices_id_seq') PRIMARY KEY);
INSERT INTO invoices DEFAULT VALUES;
INSERT INTO credit_notes DEFAULT VALUES;
SELECT regexp_replace(idgen_convert_column('invoices', 'id'), 'start at [0-9]+', 'start at N') AS summary;
SELECT pg_get_serial_sequence('invoices', 'id') IS NULL AS no_longer_owned;
DROP TABLE invoices;
INSERT INTO credit_notes DEFAULT VALUES RETURNING id AS from_the_kept_sequence;
DROP TABLE credit_notes;
DROP SEQUENCE invoices_id_seq;

-- a partitioned table
CREATE TABLE measurements (id serial, at date NOT NULL, v int) PARTITION BY RANGE (at);
CREATE TABLE measurements_2025 PARTITION OF measurements FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
CREATE TABLE measurements_2026 PARTITION OF measurements FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
INSERT INTO measurements (at, v) VALUES ('2025-06-01', 1), ('2026-06-01', 2);
SELECT idgen_convert_column('measurements', 'id') IS NOT NULL AS converted;
SELECT c.relname, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_class AS c JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attname = 'id'
 WHERE c.relname LIKE 'measurements%' ORDER BY 1;
INSERT INTO measurements (at, v) VALUES ('2025-07-01', 3), ('2026-07-01', 4);
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       count(*) FILTER (WHERE id > 2) AS new_ids_above_old
  FROM measurements;

-- refused, each with its reason
SELECT idgen_convert_column('customers', 'name');
SELECT idgen_convert_column('customers', 'nope');
SELECT idgen_convert_column('customers', NULL);
SELECT idgen_convert_column(NULL, 'id', 7);
SELECT idgen_convert_column('customers', 'id');
CREATE TABLE plain (id integer PRIMARY KEY);
SELECT idgen_convert_column('plain', 'id');
CREATE TABLE ahead (id bigserial PRIMARY KEY);
INSERT INTO ahead VALUES (9000000000000000000);
\set VERBOSITY terse
SELECT idgen_convert_column('ahead', 'id');
\set VERBOSITY default
CREATE TABLE elsewhere (id serial PRIMARY KEY);
SELECT idgen_convert_column('elsewhere', 'id', 5);
SELECT pg_get_expr(d.adbin, d.adrelid) AS default_kept_after_refusal
  FROM pg_attrdef AS d WHERE d.adrelid = 'elsewhere'::regclass;

-- it runs with a fixed search_path: the caller's names arrive resolved
SELECT proconfig FROM pg_proc WHERE oid = 'idgen_convert_column'::regproc;

DROP TABLE orders, customers, events, tickets, measurements, plain, ahead, elsewhere;
DROP SEQUENCE shared_seq;
\set SHOW_CONTEXT errors

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
