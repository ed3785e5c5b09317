-- Versions: a fresh install is the default version, and updating 1.0,
-- 1.1 or 1.2 to it gives exactly the same objects, definitions and privileges.
-- There is one base script, idgen--1.0.sql: a fresh install runs it and
-- then each upgrade script in turn, as contrib's extensions do, and
-- CREATE EXTENSION ... VERSION '1.1' stops along the same chain.  Should a
-- later release add a base script of its own, this test is what keeps it
-- equal to the chain.

SET client_min_messages = warning;
DROP EXTENSION IF EXISTS idgen;
RESET client_min_messages;
CREATE EXTENSION idgen;

-- every object of the extension, with what defines it: a function's
-- arguments, result, volatility, strictness, parallel safety, SET clauses
-- and body (pg_get_functiondef), a relation's definition and columns, a
-- type's and an operator's make-up; with the grants and the comment
CREATE FUNCTION pg_temp.idgen_objects()
RETURNS TABLE (object text, definition text)
LANGUAGE sql AS $$
SELECT pg_describe_object(d.classid, d.objid, d.objsubid),
       coalesce(
           (SELECT pg_get_functiondef(p.oid) || ' acl ' || coalesce(p.proacl::text, '-')
              FROM pg_proc AS p
             WHERE d.classid = 'pg_proc'::regclass AND p.oid = d.objid),
           (SELECT c.relkind::text || ' ' || coalesce(pg_get_viewdef(c.oid), '')
                   || ' columns ' || (SELECT string_agg(format('%I %s', a.attname,
                                                  format_type(a.atttypid, a.atttypmod)),
                                           ', ' ORDER BY a.attnum)
                                        FROM pg_attribute AS a
                                       WHERE a.attrelid = c.oid AND a.attnum > 0
                                         AND NOT a.attisdropped)
                   || ' acl ' || coalesce(c.relacl::text, '-')
              FROM pg_class AS c
             WHERE d.classid = 'pg_class'::regclass AND c.oid = d.objid),
           (SELECT format('%s %s in %s out %s rel %s elem %s acl %s',
                          format_type(t.oid, NULL), t.typtype, t.typinput, t.typoutput,
                          t.typrelid::regclass, format_type(t.typelem, NULL),
                          coalesce(t.typacl::text, '-'))
              FROM pg_type AS t
             WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid),
           (SELECT format('%s(%s, %s) %s %s com %s neg %s',
                          o.oprname, format_type(o.oprleft, NULL), format_type(o.oprright, NULL),
                          format_type(o.oprresult, NULL), o.oprcode::regprocedure,
                          o.oprcom::regoperator, o.oprnegate::regoperator)
              FROM pg_operator AS o
             WHERE d.classid = 'pg_operator'::regclass AND o.oid = d.objid),
           '')
       || ' comment ' || coalesce(obj_description(d.objid, catalog.relname), '-')
  FROM pg_depend AS d
  JOIN pg_class AS catalog ON catalog.oid = d.classid
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
   AND d.deptype = 'e'
$$;

SELECT default_version, installed_version
  FROM pg_available_extensions WHERE name = 'idgen';
SELECT version FROM pg_available_extension_versions
 WHERE name = 'idgen' ORDER BY version;
SELECT * FROM pg_extension_update_paths('idgen')
 WHERE path IS NOT NULL ORDER BY source, target;

-- the fresh install
CREATE TEMP TABLE fresh AS SELECT * FROM pg_temp.idgen_objects();

-- after an update: as many objects as the fresh install, and none that
-- differs in either direction
CREATE FUNCTION pg_temp.idgen_differences(OUT same_number_of_objects boolean,
                                          OUT where_ text, OUT object text)
RETURNS SETOF record
LANGUAGE sql AS $$
WITH updated AS (SELECT * FROM pg_temp.idgen_objects())
SELECT (SELECT count(*) FROM fresh) = (SELECT count(*) FROM updated), NULL::text, NULL::text
UNION ALL
(SELECT NULL::boolean, 'only in the fresh install', object FROM
   (SELECT * FROM fresh EXCEPT SELECT * FROM updated) AS f
 UNION ALL
 SELECT NULL::boolean, 'only after the update', object FROM
   (SELECT * FROM updated EXCEPT SELECT * FROM fresh) AS u
 ORDER BY 2, 3)
$$;
SELECT extversion FROM pg_extension WHERE extname = 'idgen';

-- 1.0, then the update
DROP EXTENSION idgen;
CREATE EXTENSION idgen VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'idgen';
-- a database at 1.0 keeps working with the new library
SELECT id_to_shard(4194309127) AS shard, idgen_next() > 0 AS mints;
ALTER EXTENSION idgen UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'idgen';
-- (the objects themselves are idgen_catalog's to list)
SELECT * FROM pg_temp.idgen_differences();

-- 1.1, which has no script of its own: the chain stops there
DROP EXTENSION idgen;
CREATE EXTENSION idgen VERSION '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'idgen';
SELECT idgen_to_text(4194309127, 'evt') AS a_1_1_function,
       to_regprocedure('idgen_row_to_json(record)') IS NULL AS no_1_2_function;
-- this library serves 1.1's idgen_stats and idgen_leases, with fewer columns
SELECT count(*) AS stats_rows FROM idgen_stats;
SELECT count(*) AS lease_rows FROM idgen_leases();
ALTER EXTENSION idgen UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'idgen';
SELECT * FROM pg_temp.idgen_differences();

-- 1.2: its objects work with this library, and the update adds 1.3's
DROP EXTENSION idgen;
CREATE EXTENSION idgen VERSION '1.2';
SELECT extversion FROM pg_extension WHERE extname = 'idgen';
SELECT idgen_row_to_json(row(4194309127::bigint)) AS a_1_2_function,
       to_regprocedure('idgen_layout_history()') IS NULL AS no_1_3_function;
SELECT count(*) AS stats_rows FROM idgen_stats;
ALTER EXTENSION idgen UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'idgen';
SELECT * FROM pg_temp.idgen_differences();

-- 1.3: its table holds the layout history, and this library decodes by the
-- server's history where the table is a prefix of it; the update stamps
-- the history on the extension's comment and drops the table
DROP EXTENSION idgen;
CREATE EXTENSION idgen VERSION '1.3';
INSERT INTO idgen_layout_versions
  SELECT version, epoch, shard_bits, sequence_bits, first_id, 1
    FROM idgen_layout_history();
SELECT id_to_shard(4194309127) AS decodes_under_1_3;
SELECT obj_description(oid, 'pg_extension') LIKE '%[layout history:%' AS stamped
  FROM pg_extension WHERE extname = 'idgen';
ALTER EXTENSION idgen UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'idgen';
SELECT * FROM pg_temp.idgen_differences();
SELECT obj_description(e.oid, 'pg_extension') =
       'time-sorted, unique 64-bit IDs minted in shared memory [layout history: ' ||
       (SELECT string_agg(first_id || ' ' || shard_bits || '/' || sequence_bits || ' ' ||
                          to_char(epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), ', '
                          ORDER BY version)
          FROM idgen_layout_history()) || ']' AS stamped_with_the_history
  FROM pg_extension AS e WHERE e.extname = 'idgen';
SELECT id_to_shard(4194309127) AS decodes_under_1_4;
-- a comment by hand keeps the stamp; a malformed stamp is refused
COMMENT ON EXTENSION idgen IS 'our IDs';
SELECT obj_description(oid, 'pg_extension') ~ '^our IDs \[layout history: 0 12/10 ' AS kept
  FROM pg_extension WHERE extname = 'idgen';
COMMENT ON EXTENSION idgen IS 'x [layout history: 0 12/10 yesterday]';
COMMENT ON EXTENSION idgen IS NULL;
SELECT obj_description(oid, 'pg_extension') ~ '^ \[layout history: 0 12/10 ' AS kept_on_null
  FROM pg_extension WHERE extname = 'idgen';

DROP TABLE fresh;

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
