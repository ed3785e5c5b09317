/* idgen--1.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION idgen" to load this file. \quit

-- Minting reads and writes shared memory: VOLATILE, like nextval(), but the
-- state is shared by every process, so parallel workers may mint too.
CREATE FUNCTION idgen_next()
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next() IS
'mint a new ID for the shard in idgen.shard_id';

CREATE FUNCTION idgen_next(shard integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next_shard'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next(integer) IS
'mint a new ID for a shard this node owns (idgen.shard_id or idgen.shard_ids)';

-- The layout cannot change while the server runs (and a durable guard refuses
-- a start with another one), so decoding depends on its arguments alone.
CREATE FUNCTION id_to_timestamp(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'id_to_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_to_timestamp(bigint) IS
'the millisecond embedded in an ID';

CREATE FUNCTION min_id_at(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'min_id_at'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION min_id_at(timestamptz) IS
'the smallest ID any shard could mint in the millisecond containing ts';

CREATE FUNCTION id_to_shard(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'id_to_shard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_to_shard(bigint) IS
'the shard field of an ID';

CREATE FUNCTION id_to_sequence(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'id_to_sequence'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_to_sequence(bigint) IS
'the sequence field of an ID';

CREATE FUNCTION idgen_decode(id bigint,
	OUT created_at timestamptz,
	OUT shard integer,
	OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_decode(bigint) IS
'the time, shard and sequence of an ID';

-- Readers of shared counters: VOLATILE, and safe in parallel workers as
-- pg_stat_statements' readers are.
CREATE FUNCTION idgen_stats(
	OUT minted bigint,
	OUT borrowed_ms bigint,
	OUT clock_behind bigint,
	OUT clock_steps_back bigint,
	OUT waits bigint,
	OUT wait_time_ms double precision,
	OUT max_wait_errors bigint,
	OUT lead_ms bigint,
	OUT last_id bigint,
	OUT fence timestamptz,
	OUT fence_ahead_ms bigint,
	OUT fence_advances bigint,
	OUT fence_waits bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_stats'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_stats() IS
'what the generator has done since the server started';

CREATE VIEW idgen_stats AS
	SELECT * FROM idgen_stats();

COMMENT ON VIEW idgen_stats IS
'what the generator has done since the server started';

CREATE FUNCTION idgen_stats_backends(
	OUT pid integer,
	OUT minted bigint,
	OUT borrowed_ms bigint,
	OUT clock_behind bigint,
	OUT clock_steps_back bigint,
	OUT waits bigint,
	OUT wait_time_ms double precision,
	OUT max_wait_errors bigint,
	OUT last_id bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_stats_backends'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_stats_backends() IS
'the generator''s counters per backend that has minted since it started';

CREATE VIEW idgen_stats_backends AS
	SELECT * FROM idgen_stats_backends();

COMMENT ON VIEW idgen_stats_backends IS
'the generator''s counters per backend that has minted since it started';

-- The statistics: one model for the functions and the views, as
-- pg_stat_activity's.  Anyone may read them; a process's own figures in
-- idgen_stats_backends are NULL except for roles with the privileges of
-- its session user or of pg_read_all_stats (the library decides that).
GRANT SELECT ON idgen_stats TO PUBLIC;
GRANT SELECT ON idgen_stats_backends TO PUBLIC;

-- What a change of layout (idgen.allow_layout_change) would make wrong:
-- stored values and definitions computed with the decoders under the old
-- layout.  Reads the catalogs of the current database.
CREATE FUNCTION idgen_layout_dependents(
	OUT kind text,
	OUT object text,
	OUT action text)
RETURNS SETOF record
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
WITH functions AS (			-- idgen's own, wherever the extension lives
	SELECT p.oid, p.proname
	  FROM pg_catalog.pg_depend AS d
	  JOIN pg_catalog.pg_extension AS e
	    ON e.oid = d.refobjid AND e.extname = 'idgen'
	  JOIN pg_catalog.pg_proc AS p ON p.oid = d.objid
	 WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
	   AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
	   AND d.deptype = 'e'
),
decoders AS (
	SELECT oid FROM functions
	 WHERE proname IN ('id_to_timestamp', 'min_id_at', 'id_to_shard',
					   'id_to_sequence', 'idgen_decode')
),
minters AS (
	SELECT oid FROM functions WHERE proname = 'idgen_next'
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
-- stored generated columns keep values computed under the old layout
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
	   'check the bound against min_id_at() under the new layout'
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

COMMENT ON FUNCTION idgen_layout_dependents() IS
'objects of this database whose stored values or definitions use the ID layout';

-- IDs as text: 13 characters of Crockford's base32, fixed width, so that
-- the text sorts like the number (in the "C" collation) and survives JSON;
-- optionally after a type prefix, 'evt_...'.
CREATE FUNCTION idgen_to_text(id bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'idgen_to_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_to_text(bigint) IS
'an ID as 13 characters of Crockford''s base32, sorting like the number';

CREATE FUNCTION idgen_to_text(id bigint, prefix text)
RETURNS text
AS 'MODULE_PATHNAME', 'idgen_to_text_prefixed'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_to_text(bigint, text) IS
'an ID as prefix_ and 13 characters of Crockford''s base32';

CREATE FUNCTION idgen_from_text(text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_text(text) IS
'the ID written by idgen_to_text(id)';

CREATE FUNCTION idgen_from_text(text, prefix text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_text_prefixed'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_text(text, text) IS
'the ID written by idgen_to_text(id, prefix), refusing another prefix';

-- A block of IDs in one call, reserved with one compare-and-swap, in
-- increasing order: for ORMs and importers that allocate IDs ahead.
CREATE FUNCTION idgen_next_n(n integer)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'idgen_next_n'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next_n(integer) IS
'mint n IDs for idgen.shard_id as one block, in increasing order';

CREATE FUNCTION idgen_next_n(n integer, shard integer)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'idgen_next_n_shard'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next_n(integer, integer) IS
'mint n IDs for a shard this node owns as one block, in increasing order';

-- Move the generator and the durable fence above an ID: after pg_upgrade, a
-- restore into a new cluster, or an import of IDs minted elsewhere for this
-- node's shards.  Not for everyone: it can push minting far ahead.
CREATE FUNCTION idgen_advance_past(id bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_advance_past'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE EXECUTE ON FUNCTION idgen_advance_past(bigint) FROM PUBLIC;

COMMENT ON FUNCTION idgen_advance_past(bigint) IS
'durably move the generator so that every new ID is above this one';

-- Decoding under a layout given as an argument: IDs idgen did not mint
-- (presets twitter, discord, instagram, pgedge, sonyflake, idgen) or a
-- specification such as 'epoch=2015-01-01 00:00:00+00; shard_bits=10;
-- sequence_bits=12'.  IMMUTABLE: the layout is an argument; no preload
-- needed.
CREATE FUNCTION idgen_decode(id bigint, layout text,
	OUT created_at timestamptz,
	OUT shard integer,
	OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_decode_layout'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_decode(bigint, text) IS
'the time, shard and sequence of an ID under the given layout';

CREATE FUNCTION id_to_timestamp(id bigint, layout text)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'id_to_timestamp_layout'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_to_timestamp(bigint, text) IS
'the time embedded in an ID under the given layout';

CREATE FUNCTION min_id_at(ts timestamptz, layout text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'min_id_at_layout'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION min_id_at(timestamptz, text) IS
'the smallest ID of the given layout in the time unit containing ts';

-- Public IDs that leak nothing: a keyed permutation (Speck64/128 with
-- cycle walking) of the non-negative IDs, keyed by idgen.public_key.
-- IMMUTABLE within a key: changing the key changes every public ID.
CREATE FUNCTION idgen_to_public(id bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_to_public'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_to_public(bigint) IS
'the public form of an ID: a keyed permutation that hides its time and order';

CREATE FUNCTION idgen_from_public(public_id bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_public'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_public(bigint) IS
'the ID behind a public form made by idgen_to_public()';

-- Move a serial, bigserial, IDENTITY or DEFAULT nextval() column onto
-- DEFAULT idgen_next(): widen it to bigint with every foreign-key column
-- that references it, keep its values, drop its own sequence, in the
-- caller's transaction.  Plain DDL: pg_dump reproduces the result.  The
-- caller must own the tables, as for ALTER TABLE.
CREATE FUNCTION idgen_convert_column(tbl regclass, col name, shard integer DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $convert$
DECLARE
	att record;
	def text;
	seq text;
	owned boolean := false;
	ext_schema name;
	max_value bigint;
	first_new bigint;
	fk record;
	widened text[] := '{}';
	call text;
BEGIN
	SELECT a.attnum, a.atttypid::pg_catalog.regtype AS typ, a.attidentity
	  INTO att
	  FROM pg_catalog.pg_attribute AS a
	 WHERE a.attrelid = tbl AND a.attname = col AND NOT a.attisdropped AND a.attnum > 0;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'column "%" of relation % does not exist', col, tbl
			USING ERRCODE = 'undefined_column';
	END IF;
	IF att.typ NOT IN ('smallint'::pg_catalog.regtype, 'integer'::pg_catalog.regtype,
					   'bigint'::pg_catalog.regtype) THEN
		RAISE EXCEPTION 'column "%" of % is %, not an integer', col, tbl, att.typ
			USING ERRCODE = 'wrong_object_type',
				  HINT = 'Only integer columns hold IDs.';
	END IF;

	SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid) INTO def
	  FROM pg_catalog.pg_attrdef AS d
	 WHERE d.adrelid = tbl AND d.adnum = att.attnum;
	IF att.attidentity = '' AND (def IS NULL OR def NOT LIKE 'nextval(%') THEN
		RAISE EXCEPTION 'column "%" of % is not a serial, identity or nextval() column', col, tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = CASE WHEN def IS NULL THEN 'It has no default.'
								ELSE pg_catalog.format('Its default is %s.', def) END,
				  HINT = 'Set DEFAULT idgen_next() yourself if that is what you mean.';
	END IF;
	seq := pg_catalog.pg_get_serial_sequence(tbl::text, col);
	owned := seq IS NOT NULL;

	SELECT n.nspname INTO ext_schema
	  FROM pg_catalog.pg_extension AS e
	  JOIN pg_catalog.pg_namespace AS n ON n.oid = e.extnamespace
	 WHERE e.extname = 'idgen';

	IF shard IS NULL THEN
		call := pg_catalog.format('%I.idgen_next()', ext_schema);
	ELSE
		-- a shard this node does not own is refused now, not at the next insert
		EXECUTE pg_catalog.format('SELECT %I.idgen_next(%s)', ext_schema, shard);
		call := pg_catalog.format('%I.idgen_next(%s)', ext_schema, shard);
	END IF;

	-- no insert between the check and the change
	EXECUTE pg_catalog.format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
	EXECUTE pg_catalog.format('SELECT pg_catalog.max(%I)::bigint FROM %s', col, tbl) INTO max_value;
	EXECUTE pg_catalog.format('SELECT %I.min_id_at(pg_catalog.now())', ext_schema) INTO first_new;
	IF max_value >= first_new THEN
		RAISE EXCEPTION 'column "%" of % holds %, not below the IDs minted now', col, tbl, max_value
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = pg_catalog.format('New IDs start at %s; they must sort after every existing value.', first_new),
				  HINT = 'Renumber the values at or above it, or move to a layout whose IDs start higher.';
	END IF;

	-- the column, and every foreign-key column that references it
	IF att.typ <> 'bigint'::pg_catalog.regtype THEN
		EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I TYPE bigint', tbl, col);
		widened := widened || pg_catalog.format('%s.%I', tbl, col);
	END IF;
	FOR fk IN
		SELECT c.conrelid::pg_catalog.regclass AS rel, a.attname, a.atttypid::pg_catalog.regtype AS typ
		  FROM pg_catalog.pg_constraint AS c
		 CROSS JOIN LATERAL ROWS FROM (pg_catalog.unnest(c.conkey),
									  pg_catalog.unnest(c.confkey)) AS k(conkey, confkey)
		  JOIN pg_catalog.pg_attribute AS a
			ON a.attrelid = c.conrelid AND a.attnum = k.conkey
		 WHERE c.contype = 'f' AND c.confrelid = tbl AND k.confkey = att.attnum
		   AND c.conparentid = 0
	LOOP
		IF fk.typ IN ('smallint'::pg_catalog.regtype, 'integer'::pg_catalog.regtype) THEN
			EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I TYPE bigint', fk.rel, fk.attname);
			widened := widened || pg_catalog.format('%s.%I', fk.rel, fk.attname);
		END IF;
	END LOOP;

	-- the sequence goes, and idgen_next() takes its place
	IF att.attidentity <> '' THEN
		EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
	ELSE
		EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT', tbl, col);
		IF owned THEN
			EXECUTE pg_catalog.format('DROP SEQUENCE %s', seq);
		END IF;
	END IF;
	EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, col, call);

	RETURN pg_catalog.format('%s.%I: DEFAULT %s%s%s; new IDs start at %s, above %s',
		tbl, col, call,
		CASE WHEN pg_catalog.cardinality(widened) > 0
			 THEN '; widened to bigint: ' || pg_catalog.array_to_string(widened, ', ') ELSE '' END,
		CASE WHEN att.attidentity <> '' THEN '; identity dropped'
			 WHEN owned THEN '; sequence ' || seq || ' dropped' ELSE '' END,
		first_new, COALESCE(max_value::text, 'no rows'));
END
$convert$;

COMMENT ON FUNCTION idgen_convert_column(regclass, name, integer) IS
'move a serial, identity or nextval() column onto DEFAULT idgen_next()';

-- How many IDs an interval covers under the server's layout: the width of
-- a time partition of IDs (pg_partman's p_interval, retention).
CREATE FUNCTION idgen_span(span interval)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_span'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_span(interval) IS
'the number of IDs an interval of time covers under the server''s layout';

-- This server's lease on each shard it owns (idgen.lease_registry).
CREATE FUNCTION idgen_leases(OUT shard integer, OUT state text,
                             OUT valid_until timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_leases'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_leases() IS
'this server''s lease on each shard it owns: held, expired, pending or not held, and the last millisecond it may stamp';
