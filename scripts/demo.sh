#!/usr/bin/env bash
# scripts/demo.sh -- build, install and show idgen on a throwaway server
#
#	bash scripts/demo.sh
#
# Runs scripts/setup.sh with IDGEN_SETUP=demo (as root, it apt-gets only
# what building and running idgen needs: the compiler, the server's headers,
# the server and psql; no test package), starts a private cluster
# (scripts/lib.sh) with idgen in shared_preload_libraries, and walks through
# the extension with psql, echoing each query.  The cluster is stopped and
# removed at the end.  Everything it shows needs only the server and psql:
# keep it so, or add what it needs to setup.sh's demo packages.

set -euo pipefail

IDGEN_PROG="demo"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

[ "${IDGEN_SKIP_SETUP:-0}" = 1 ] || IDGEN_SETUP=demo bash "$here/setup.sh"

idgen_cluster_start ""
idgen_log "server $("$PG_BINDIR/postgres" --version) on socket $PGHOST port $PGPORT"
echo

idgen_psql --echo-queries <<'SQL'
SET timezone = 'UTC';

\echo
\echo '== 1. Install the extension (the server preloads the library) =='
SHOW shared_preload_libraries;
CREATE EXTENSION idgen;

\echo
\echo '== 2. Mint a few IDs: 64-bit, time-sorted, no sequence, no lock =='
SELECT idgen_next() AS id FROM generate_series(1, 3);

\echo
\echo '== 3. A table whose primary key comes from idgen =='
CREATE TABLE events (
	id   bigint PRIMARY KEY DEFAULT idgen_next(),
	body text
);

\echo
\echo '== 4. Insert 100000 rows, then 1000 rows between two timestamps, then 100000 more =='
\set QUIET on
\timing on
\set QUIET off
INSERT INTO events (body) SELECT 'before' FROM generate_series(1, 100000);
\set QUIET on
\timing off
\set ECHO none
SELECT pg_sleep(0.2) \g /dev/null
\set ECHO queries
\set QUIET off
SELECT clock_timestamp() AS t_a \gset
INSERT INTO events (body) SELECT 'between' FROM generate_series(1, 1000);
SELECT clock_timestamp() AS t_b \gset
\set QUIET on
\set ECHO none
SELECT pg_sleep(0.2) \g /dev/null
\set ECHO queries
\timing on
\set QUIET off
INSERT INTO events (body) SELECT 'after' FROM generate_series(1, 100000);
\set QUIET on
\timing off
\set QUIET off
\echo 't_a =' :'t_a'
\echo 't_b =' :'t_b'
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids FROM events;

\echo
\echo '== 5. Every ID carries its creation time, shard and sequence =='
SELECT id, (idgen_decode(id)).*, body FROM events ORDER BY id LIMIT 5;
SELECT id, id_to_timestamp(id), id_to_shard(id), id_to_sequence(id)
  FROM events ORDER BY id DESC LIMIT 3;

\echo
\echo '== 6. The layout: (ms since 2026-01-01 << 22) | (shard << 10) | sequence =='
SELECT * FROM idgen_decode(4194309127);
SELECT min_id_at('2026-01-01 00:00:01+00'), 1000::bigint << 22 AS "1000 << 22";

\echo
\echo '== 7. What the generator has done =='
\set QUIET on
\x on
\set QUIET off
SELECT * FROM idgen_stats;
\set QUIET on
\x off
\set QUIET off

\echo
\echo '== 8. A time range is an ID range: no created_at column, no extra index =='
VACUUM ANALYZE events;
SELECT body, count(*)
  FROM events
 WHERE id >= min_id_at(:'t_a') AND id < min_id_at(:'t_b')
 GROUP BY body;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*)
  FROM events
 WHERE id >= min_id_at(:'t_a') AND id < min_id_at(:'t_b');
SQL

echo
idgen_cluster_stop
idgen_log "done: the demo cluster is stopped and removed"
