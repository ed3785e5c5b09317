-- Versions: a fresh install is the default version, and updating 1.0 or
-- 1.1 to it gives exactly the same objects, definitions and privileges.
-- (There is no full script for 1.2: a fresh install runs 1.1's, then
-- idgen--1.1--1.2.sql, as contrib's extensions do.)

-- every object of the extension, with what defines it
CREATE FUNCTION pg_temp.idgen_objects()
RETURNS TABLE (object text, definition text)
LANGUAGE sql AS $$
SELECT pg_describe_object(d.classid, d.objid, d.objsubid),
       coalesce(
           (SELECT pg_get_functiondef(p.oid) || ' acl ' || coalesce(p.proacl::text, '-')
                   || ' comment ' || coalesce(obj_description(p.oid, 'pg_proc'), '-')
              FROM pg_proc AS p
             WHERE d.classid = 'pg_proc'::regclass AND p.oid = d.objid),
           (SELECT pg_get_viewdef(c.oid) || ' acl ' || coalesce(c.relacl::text, '-')
                   || ' comment ' || coalesce(obj_description(c.oid, 'pg_class'), '-')
              FROM pg_class AS c
             WHERE d.classid = 'pg_class'::regclass AND c.oid = d.objid),
           '')
  FROM pg_depend AS d
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
SELECT extversion FROM pg_extension WHERE extname = 'idgen';

-- 1.0, then the update
DROP EXTENSION idgen;
CREATE EXTENSION idgen VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'idgen';
-- a database at 1.0 keeps working with the new library
SELECT id_to_shard(4194309127) AS shard, idgen_next() > 0 AS mints;
ALTER EXTENSION idgen UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'idgen';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.idgen_objects();

-- (the objects themselves are idgen_catalog's to list)
SELECT (SELECT count(*) FROM fresh) = (SELECT count(*) FROM updated) AS same_number_of_objects;
SELECT 'only in the fresh install' AS where_, object FROM
  (SELECT * FROM fresh EXCEPT SELECT * FROM updated) AS f
UNION ALL
SELECT 'only after the update', object FROM
  (SELECT * FROM updated EXCEPT SELECT * FROM fresh) AS u
ORDER BY 1, 2;

-- 1.1, then the update
DROP TABLE updated;
DROP EXTENSION idgen;
CREATE EXTENSION idgen VERSION '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'idgen';
ALTER EXTENSION idgen UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'idgen';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.idgen_objects();
SELECT (SELECT count(*) FROM fresh) = (SELECT count(*) FROM updated) AS same_number_of_objects;
SELECT 'only in the fresh install' AS where_, object FROM
  (SELECT * FROM fresh EXCEPT SELECT * FROM updated) AS f
UNION ALL
SELECT 'only after the update', object FROM
  (SELECT * FROM updated EXCEPT SELECT * FROM fresh) AS u
ORDER BY 1, 2;

DROP TABLE fresh, updated;
