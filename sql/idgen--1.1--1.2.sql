/* idgen--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.2'" to load this file. \quit

-- A row as JSON with its bigint columns (IDs) as strings, which JSON.parse
-- keeps exactly.  STABLE as row_to_json: output functions read settings.
CREATE FUNCTION idgen_row_to_json(record)
RETURNS json
AS 'MODULE_PATHNAME', 'idgen_row_to_json'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_row_to_json(record) IS
'row_to_json of the row, with each bigint column (and bigint array element) as a JSON string';

CREATE FUNCTION idgen_row_to_jsonb(record)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'idgen_row_to_jsonb'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_row_to_jsonb(record) IS
'to_jsonb of the row, with each bigint column (and bigint array element) as a JSON string';

-- idgen_convert_column: a serial's sequence that another column's default
-- still uses stays (it was dropped, and the DROP failed with 2BP01); a NULL
-- table or column is refused by name; and search_path is pinned, as the
-- names the caller gives arrive resolved (regclass) or as identifiers.
CREATE OR REPLACE FUNCTION idgen_convert_column(tbl regclass, col name, shard integer DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
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
	seq_users text;
BEGIN
	-- not STRICT: shard's default is NULL, and STRICT would skip every
	-- two-argument call; nor NULL for a NULL table, which would look done
	IF tbl IS NULL OR col IS NULL THEN
		RAISE EXCEPTION '% must not be null', CASE WHEN tbl IS NULL THEN 'table' ELSE 'column name' END
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
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
			-- a sequence something else still uses (another table's default)
			-- stays, freed from the column so that it outlives the table
			SELECT pg_catalog.string_agg(DISTINCT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid), ', ')
			  INTO seq_users
			  FROM pg_catalog.pg_depend AS d
			 WHERE d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
			   AND d.refobjid = seq::pg_catalog.regclass AND d.deptype = 'n';
			IF seq_users IS NULL THEN
				EXECUTE pg_catalog.format('DROP SEQUENCE %s', seq);
			ELSE
				EXECUTE pg_catalog.format('ALTER SEQUENCE %s OWNED BY NONE', seq);
			END IF;
		END IF;
	END IF;
	EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, col, call);

	RETURN pg_catalog.format('%s.%I: DEFAULT %s%s%s; new IDs start at %s, above %s',
		tbl, col, call,
		CASE WHEN pg_catalog.cardinality(widened) > 0
			 THEN '; widened to bigint: ' || pg_catalog.array_to_string(widened, ', ') ELSE '' END,
		CASE WHEN att.attidentity <> '' THEN '; identity dropped'
			 WHEN owned AND seq_users IS NOT NULL
			 THEN '; sequence ' || seq || ' kept, still used by ' || seq_users
			 WHEN owned THEN '; sequence ' || seq || ' dropped' ELSE '' END,
		first_new, COALESCE(max_value::text, 'no rows'));
END
$convert$;

-- idgen_stats gains layout_ends: when the layout runs out.  The view is
-- made again over the new function; 1.1's function with one column fewer
-- keeps working with this library.
DROP VIEW idgen_stats;
DROP FUNCTION idgen_stats();

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
	OUT fence_waits bigint,
	OUT layout_ends timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_stats'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_stats() IS
'what the generator has done since the server started';

CREATE VIEW idgen_stats AS
	SELECT * FROM idgen_stats();

COMMENT ON VIEW idgen_stats IS
'what the generator has done since the server started';

GRANT SELECT ON idgen_stats TO PUBLIC;
