--
-- idgen_catalog: what the extension puts in the catalog, in one place.
--
-- Every object it owns, each function's signature and labels, and the
-- columns of its views.  This output is the SQL API's contract: a new SQL
-- function changes it here, and nowhere else but in its own tests.
--
CREATE EXTENSION idgen;

-- every object of the extension (PostgreSQL 17 also records a view's row
-- type and that type's array as members: they come with the view)
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS object
  FROM pg_depend AS d
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
   AND d.deptype = 'e'
   AND NOT EXISTS (
       SELECT FROM pg_type AS t
         LEFT JOIN pg_type AS elem ON elem.oid = t.typelem
        WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
          AND (t.typrelid <> 0 OR elem.typrelid <> 0))
 ORDER BY 1;

-- the labels the SQL script gives: decoders are IMMUTABLE STRICT PARALLEL
-- SAFE, minting and stats are VOLATILE PARALLEL SAFE (idgen_mint runs them
-- in parallel workers to back that claim), catalog readers STABLE, and so
-- are the JSON helpers (as row_to_json: output functions read settings)
SELECT p.oid::regprocedure AS function,
       p.provolatile AS volatility,
       p.proisstrict AS strict,
       p.proparallel AS parallel,
       pg_get_function_result(p.oid) AS returns
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
   AND d.deptype = 'e'
 ORDER BY p.oid::regprocedure::text;

-- the arguments, OUT parameters included
SELECT p.oid::regprocedure AS function,
       pg_get_function_arguments(p.oid) AS arguments
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
   AND d.deptype = 'e'
 ORDER BY p.oid::regprocedure::text;

-- the columns of the views
SELECT c.relname AS view, a.attnum, a.attname AS column_name,
       format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_class AS c
  JOIN pg_depend AS d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
  JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
   AND d.deptype = 'e'
 ORDER BY c.relname, a.attnum;

DROP EXTENSION idgen;
