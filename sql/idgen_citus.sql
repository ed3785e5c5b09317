--
-- idgen_citus: idgen_citus_check() without Citus.
--
-- The check compares the nodes Citus lists; where Citus is not installed
-- it has nothing to compare and says so, with an error, rather than an
-- empty answer that would read as "every node agrees".  The extension's
-- guard, run by CREATE EXTENSION on a Citus node, does nothing here.
-- t/citus/ runs both against a Citus cluster.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- its labels: it opens connections and reads the catalog by name
SELECT p.provolatile AS volatility, p.proparallel AS parallel,
       p.prosecdef AS security_definer, p.proconfig AS config
  FROM pg_proc AS p
 WHERE p.oid = 'idgen_citus_check()'::regprocedure;

SELECT * FROM idgen_citus_check();

-- the SQLSTATE a caller can catch
DO $$
BEGIN
	PERFORM idgen_citus_check();
EXCEPTION WHEN object_not_in_prerequisite_state THEN
	RAISE NOTICE 'idgen_citus_check() failed with SQLSTATE %', SQLSTATE;
END
$$;

-- a table of that name in another schema is not Citus's node list
CREATE SCHEMA fake;
CREATE TABLE fake.pg_dist_node (nodeid integer);
SET search_path = fake, public;
SELECT count(*) FROM idgen_citus_check();
RESET search_path;
DROP SCHEMA fake CASCADE;


-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
