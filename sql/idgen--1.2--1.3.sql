/* idgen--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.3'" to load this file. \quit

-- The layout history: every layout this server has minted under, each from
-- its first ID.  The decoders pick the version of an ID by comparing it
-- with the first IDs, so IDs minted before a layout change decode as they
-- were minted.  used_here: whether this database decodes by the version
-- (see idgen_layout_versions).  VOLATILE: a standby's history grows as it
-- replays.
CREATE FUNCTION idgen_layout_history(
	OUT version integer,
	OUT epoch timestamptz,
	OUT shard_bits integer,
	OUT sequence_bits integer,
	OUT time_bits integer,
	OUT first_id bigint,
	OUT first_at timestamptz,
	OUT layout_ends timestamptz,
	OUT assumed boolean,
	OUT used_here boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_layout_history'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_layout_history() IS
'every layout this server has minted under: its version, fields, first ID and that ID''s time, when it ends, whether it was assumed for want of a recorded history, and whether this database decodes by it';

-- The version of the layout history an ID was minted under.  IMMUTABLE as
-- the other decoders: a new version begins above every ID minted before.
CREATE FUNCTION id_to_layout_version(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'id_to_layout_version'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_to_layout_version(bigint) IS
'the version of the layout history an ID was minted under';

-- This database's copy of the layout history, which pg_dump carries: a
-- database restored into another server decodes its IDs by it.  Written by
-- idgen_layout_record() and idgen_layout_adopt(), never by hand.
-- history: the id of the server history that began the version (one
-- server's, its standbys', a pg_upgrade's that carried its files), which
-- tells two servers' histories apart where their versions look the same.
CREATE TABLE idgen_layout_versions (
	version integer PRIMARY KEY CHECK (version BETWEEN 1 AND 32),
	epoch timestamptz NOT NULL,
	shard_bits integer NOT NULL,
	sequence_bits integer NOT NULL,
	first_id bigint NOT NULL UNIQUE CHECK (first_id >= 0),
	history bigint NOT NULL
);

COMMENT ON TABLE idgen_layout_versions IS
'this database''s copy of the layout history, carried by pg_dump';

GRANT SELECT ON idgen_layout_versions TO PUBLIC;

-- A restore (pg_dump's COPY) brings rows of the history the dump was made
-- under: a row equal to one there is skipped; one that differs replaces
-- that version and every later one of another history (this server's, that
-- CREATE EXTENSION wrote); either is refused while rows whose stored values
-- came from the decoders are there.
CREATE FUNCTION idgen_layout_versions_restore()
RETURNS trigger
AS 'MODULE_PATHNAME', 'idgen_layout_versions_restore'
LANGUAGE C;

CREATE TRIGGER idgen_layout_versions_restore
	BEFORE INSERT ON idgen_layout_versions
	FOR EACH ROW EXECUTE FUNCTION idgen_layout_versions_restore();

-- Every process drops the history it decodes by when the table changes;
-- after a restore's rows, a marker where this server begins, when it mints
-- under the restored history's last layout.
CREATE FUNCTION idgen_layout_versions_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'idgen_layout_versions_changed'
LANGUAGE C;

CREATE TRIGGER idgen_layout_versions_changed
	AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON idgen_layout_versions
	FOR EACH STATEMENT EXECUTE FUNCTION idgen_layout_versions_changed();

-- Copy into idgen_layout_versions the versions this database decodes by
-- that it lacks; the number copied.  The "idgen layouts" worker runs it in
-- every database at each start of the server.
CREATE FUNCTION idgen_layout_record()
RETURNS integer
AS 'MODULE_PATHNAME', 'idgen_layout_record'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_layout_record() IS
'copy the layout versions this database decodes by into idgen_layout_versions';

-- A database restored from a server with another layout: its IDs decode by
-- the dumped history, and this server's begin above the given ID (the
-- database's largest) as a version of their own.
CREATE FUNCTION idgen_layout_adopt(above bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'idgen_layout_adopt'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_layout_adopt(bigint) IS
'raise the generator above an ID and begin this server''s layout there as a version of this database''s history';

REVOKE ALL ON FUNCTION idgen_layout_record() FROM PUBLIC;
REVOKE ALL ON FUNCTION idgen_layout_adopt(bigint) FROM PUBLIC;


-- idgen_layout_dependents: with the layout history, every ID that exists
-- decodes as it was minted, after any change; what a change can still make
-- stale is what was computed for times after it (min_id_at() of a future
-- time, idgen_span(), partition bounds), so only those are listed now.
CREATE OR REPLACE FUNCTION idgen_layout_dependents(
	OUT kind text,
	OUT object text,
	OUT action text)
RETURNS SETOF record
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
WITH idgen AS (			-- wherever the extension lives (it is relocatable)
	SELECT n.nspname
	  FROM pg_catalog.pg_extension AS e
	  JOIN pg_catalog.pg_namespace AS n ON n.oid = e.extnamespace
	 WHERE e.extname = 'idgen'
),
-- what a new version of the layout history can change: min_id_at() of a
-- time after its first ID, and idgen_span(); the decoders of IDs are not
-- here, as every ID that exists decodes as before
decoders AS (
	SELECT pg_catalog.to_regprocedure(pg_catalog.format('%I.%s', idgen.nspname, f))::pg_catalog.oid AS oid
	  FROM idgen,
		   pg_catalog.unnest(ARRAY['min_id_at(timestamptz)',
								   'idgen_span(interval)']) AS f
),
minters AS (
	SELECT pg_catalog.to_regprocedure(pg_catalog.format('%I.%s', idgen.nspname, f))::pg_catalog.oid AS oid
	  FROM idgen,
		   pg_catalog.unnest(ARRAY['idgen_next()', 'idgen_next(integer)']) AS f
),
uses AS (
	SELECT DISTINCT d.classid, d.objid
	  FROM pg_catalog.pg_depend AS d
	 WHERE d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
	   AND d.refobjid IN (SELECT oid FROM decoders)
	   AND d.deptype = 'n'
)
-- expression and partial indexes, partition keys, materialized views
SELECT CASE c.relkind
		   WHEN 'p' THEN 'partition key'
		   WHEN 'm' THEN 'materialized view'
		   ELSE 'index' END,
	   pg_catalog.pg_describe_object(u.classid, u.objid, 0),
	   CASE c.relkind
		   WHEN 'p' THEN 'repartition: rows would fall in other partitions'
		   WHEN 'm' THEN 'REFRESH MATERIALIZED VIEW'
		   ELSE 'REINDEX' END
  FROM uses AS u
  JOIN pg_catalog.pg_class AS c ON c.oid = u.objid
 WHERE u.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
   AND c.relkind IN ('i', 'I', 'p', 'm')
UNION ALL
SELECT 'materialized view',
	   pg_catalog.pg_describe_object('pg_catalog.pg_class'::pg_catalog.regclass, r.ev_class, 0),
	   'REFRESH MATERIALIZED VIEW'
  FROM uses AS u
  JOIN pg_catalog.pg_rewrite AS r ON r.oid = u.objid
  JOIN pg_catalog.pg_class AS c ON c.oid = r.ev_class
 WHERE u.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
   AND c.relkind = 'm'
UNION ALL
-- stored generated columns keep what was computed before the change
SELECT 'generated column',
	   pg_catalog.format('column %I of table %s', a.attname, a.attrelid::pg_catalog.regclass),
	   'recompute: UPDATE the table, or drop and add the column'
  FROM uses AS u
  JOIN pg_catalog.pg_attrdef AS ad ON ad.oid = u.objid
  JOIN pg_catalog.pg_attribute AS a
	ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
 WHERE u.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass
   AND a.attgenerated = 's'
UNION ALL
SELECT 'check constraint',
	   pg_catalog.pg_describe_object(u.classid, u.objid, 0),
	   'revalidate: drop and add the constraint'
  FROM uses AS u
  JOIN pg_catalog.pg_constraint AS con ON con.oid = u.objid
 WHERE u.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass
   AND con.contype = 'c'
UNION ALL
-- partitions of a table keyed on an ID column: their bounds are constants,
-- usually computed with min_id_at() under the layout of their day
SELECT 'partition bound',
	   pg_catalog.pg_describe_object('pg_catalog.pg_class'::pg_catalog.regclass, i.inhrelid, 0),
	   'check the bounds of times after the change against min_id_at()'
  FROM pg_catalog.pg_partitioned_table AS pt
  JOIN pg_catalog.pg_inherits AS i ON i.inhparent = pt.partrelid
 WHERE EXISTS (
		SELECT FROM pg_catalog.pg_attrdef AS ad
		  JOIN pg_catalog.pg_depend AS d
			ON d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass
		   AND d.objid = ad.oid
		   AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
		   AND d.refobjid IN (SELECT oid FROM minters)
		 WHERE ad.adrelid = pt.partrelid
		   AND ad.adnum = ANY (pt.partattrs::pg_catalog.int2[]))
ORDER BY 1, 2
$$;

SELECT pg_catalog.pg_extension_config_dump('idgen_layout_versions', '');

-- Without the preload there is no history to copy yet: the first start
-- that begins a version copies it, or idgen_layout_record() by hand.
DO $$
BEGIN
	PERFORM idgen_layout_record();
EXCEPTION WHEN object_not_in_prerequisite_state THEN
	NULL;
END
$$;
