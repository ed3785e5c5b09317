-- Who may read the statistics: anyone reads the views and the functions
-- behind them; a process's own figures in idgen_stats_backends are shown
-- to roles with the privileges of its session user or of
-- pg_read_all_stats, and are NULL for everyone else (as in
-- pg_stat_activity).

SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

CREATE ROLE regress_idgen_plain LOGIN;		-- only what PUBLIC has
CREATE ROLE regress_idgen_monitor LOGIN IN ROLE pg_read_all_stats;

SELECT count(*) > 0 AS minted FROM (SELECT idgen_next() FROM generate_series(1, 10)) AS s;
SELECT pg_backend_pid() AS superuser_pid, current_user AS superuser \gset

-- a role with only CONNECT reads both views and both functions
SET ROLE regress_idgen_plain;
SELECT count(*) AS rows, bool_and(minted >= 10) AS totals_shown FROM idgen_stats;
SELECT count(*) AS rows FROM idgen_stats();
-- this session's own row: its session user is the superuser
SELECT pid = :superuser_pid AS own_pid, minted IS NULL AS minted_hidden,
       last_id IS NULL AS last_id_hidden, waits IS NULL AS waits_hidden
  FROM idgen_stats_backends WHERE pid = :superuser_pid;
SELECT count(*) AS rows FROM idgen_stats_backends() WHERE pid = :superuser_pid;
-- pg_read_all_stats sees every process's figures
SET ROLE regress_idgen_monitor;
SELECT minted >= 10 AS minted_shown, last_id > 0 AS last_id_shown
  FROM idgen_stats_backends WHERE pid = :superuser_pid;
RESET ROLE;

-- minting for a given time uses up the backfill lanes for good: a role
-- does it once a superuser grants it (1.8), not by PUBLIC's right
SELECT has_function_privilege('regress_idgen_plain', 'idgen_next_at(timestamptz)', 'EXECUTE') AS next_at,
       has_function_privilege('regress_idgen_plain', 'idgen_next_at_n(timestamptz, integer)', 'EXECUTE') AS next_at_n;
SET ROLE regress_idgen_plain;
SELECT idgen_next_at('2026-06-01 00:00:00+00');
RESET ROLE;
GRANT EXECUTE ON FUNCTION idgen_next_at(timestamptz), idgen_next_at_n(timestamptz, integer) TO regress_idgen_plain;
SELECT has_function_privilege('regress_idgen_plain', 'idgen_next_at(timestamptz)', 'EXECUTE') AS next_at,
       has_function_privilege('regress_idgen_plain', 'idgen_next_at_n(timestamptz, integer)', 'EXECUTE') AS next_at_n;
REVOKE EXECUTE ON FUNCTION idgen_next_at(timestamptz), idgen_next_at_n(timestamptz, integer) FROM regress_idgen_plain;
-- the database's owner may adopt the server's history (as its restore
-- applies one); a role that does not own it may not
SELECT has_function_privilege('regress_idgen_plain', 'idgen_layout_adopt()', 'EXECUTE') AS plain_adopts,
       has_function_privilege('pg_database_owner', 'idgen_layout_adopt()', 'EXECUTE') AS owner_adopts;

-- a session of the plain role sees its own figures
\c - regress_idgen_plain
SELECT count(*) AS minted FROM (SELECT idgen_next() FROM generate_series(1, 5)) AS s;
SELECT minted = 5 AS own_minted_shown, last_id > 0 AS own_last_id_shown
  FROM idgen_stats_backends WHERE pid = pg_backend_pid();
\c - :superuser

DROP ROLE regress_idgen_plain;
DROP ROLE regress_idgen_monitor;

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
