--
-- pgTAP: several sessions minting into one primary key at once
--
-- pgTAP runs in one session, so four more come from dblink: each inserts
-- 100000 rows into one table, all at the same time; two take each id from
-- DEFAULT idgen_next(), two from blocks of 1000 reserved by idgen_next_n.
-- Their rows commit on their own, so the table is a real one, created
-- before the test transaction and dropped after it.  This is pgTAP's
-- because the sessions run at the same time: pg_regress has one session,
-- and isolationtester runs one step at a time.
--
-- Run by pg_prove in a database where "CREATE EXTENSION pgtap" and
-- "CREATE EXTENSION idgen" were run, on a server with idgen preloaded;
-- dblink (postgresql-contrib) must be installed on the server.
--
\unset ECHO
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off
\set ON_ERROR_ROLLBACK 1
\set ON_ERROR_STOP true

SET client_min_messages = warning;
DROP TABLE IF EXISTS idgen_tap_concurrent;
CREATE TABLE idgen_tap_concurrent (
    id bigint PRIMARY KEY DEFAULT idgen_next(),
    conn integer NOT NULL,
    n integer NOT NULL
);
RESET client_min_messages;

BEGIN;
SET LOCAL client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS dblink;
SET LOCAL client_min_messages = notice;

SELECT plan(12);

-- this server, through its first socket directory, as the current user
SELECT format('host=''%s'' port=%s dbname=''%s'' user=''%s''',
              replace(replace(split_part(current_setting('unix_socket_directories'), ',', 1),
                              '\', '\\'), '''', '\'''),
              current_setting('port'),
              replace(replace(current_database(), '\', '\\'), '''', '\'''),
              replace(replace(current_user, '\', '\\'), '''', '\'''))
       AS connstr \gset
SELECT idgen_next() AS id_before \gset

SELECT ok(bool_and(dblink_connect('idgen_tap_' || c, :'connstr') = 'OK'),
          'four sessions connected')
  FROM generate_series(1, 4) AS c;

-- (idgen_next_n's argument names k, so that each k calls it again)
SELECT ok(bool_and(dblink_send_query('idgen_tap_' || c,
                       CASE WHEN c <= 2 THEN
                           format('INSERT INTO idgen_tap_concurrent (conn, n) '
                                  'SELECT %s, n FROM generate_series(1, 100000) AS n', c)
                       ELSE
                           format('INSERT INTO idgen_tap_concurrent (id, conn, n) '
                                  'SELECT b.id, %s, (k - 1) * 1000 + b.i '
                                  'FROM generate_series(1, 100) AS k, '
                                  'LATERAL idgen_next_n(1000 + 0 * k) WITH ORDINALITY AS b(id, i)', c)
                       END) = 1),
          'four sessions started inserting 100000 rows each, two of them in blocks')
  FROM generate_series(1, 4) AS c;

-- wait for each, then read the empty result that ends its query
SELECT results_eq(
    $$SELECT c, r.status
        FROM generate_series(1, 4) AS c,
             LATERAL dblink_get_result('idgen_tap_' || c, false) AS r(status text)
       ORDER BY c$$,
    $$VALUES (1, 'INSERT 0 100000'), (2, 'INSERT 0 100000'),
             (3, 'INSERT 0 100000'), (4, 'INSERT 0 100000')$$,
    'every session inserted its 100000 rows without an error');
SELECT is(count(*), 0::bigint, 'no session has a result left')
  FROM generate_series(1, 4) AS c,
       LATERAL dblink_get_result('idgen_tap_' || c, false) AS r(status text);
SELECT ok(bool_and(dblink_disconnect('idgen_tap_' || c) = 'OK'),
          'four sessions disconnected')
  FROM generate_series(1, 4) AS c;

SELECT is(count(*), 400000::bigint, '400000 rows committed')
  FROM idgen_tap_concurrent;
SELECT is(count(DISTINCT id), 400000::bigint, '400000 distinct IDs')
  FROM idgen_tap_concurrent;
SELECT results_eq(
    'SELECT conn, count(*) FROM idgen_tap_concurrent GROUP BY conn ORDER BY conn',
    $$VALUES (1, 100000::bigint), (2, 100000::bigint),
             (3, 100000::bigint), (4, 100000::bigint)$$,
    '100000 rows from each session');
SELECT ok(bool_and(id > prev_id),
          'each session''s IDs are strictly increasing in its insert order')
  FROM (SELECT id, lag(id) OVER (PARTITION BY conn ORDER BY n) AS prev_id
          FROM idgen_tap_concurrent) AS s
 WHERE prev_id IS NOT NULL;
SELECT ok(bool_and(id_to_shard(id) = current_setting('idgen.shard_id')::integer),
          'every ID carries the shard of idgen.shard_id')
  FROM idgen_tap_concurrent;
SELECT ok(min(id) > :id_before, 'IDs minted by the sessions follow the ID minted before them')
  FROM idgen_tap_concurrent;
SELECT ok(max(id) < idgen_next(), 'an ID minted after them follows them')
  FROM idgen_tap_concurrent;

-- how much the sessions overlapped (informational: depends on the machine)
SELECT diag(format('sessions switched %s times along the ID order',
                   count(*) FILTER (WHERE conn <> prev_conn)))
  FROM (SELECT conn, lag(conn) OVER (ORDER BY id) AS prev_conn
          FROM idgen_tap_concurrent) AS s;

SELECT * FROM finish();
ROLLBACK;

DROP TABLE idgen_tap_concurrent;
