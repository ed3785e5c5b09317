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

-- idgen_layout_dependents: matched the decoders by name, so it listed what
-- uses the overloads with a layout argument (which do not depend on the
-- server's) and missed idgen_span (which does); now the exact overloads.
-- search_path is pinned, as the body resolves operators (IN, CASE ...
-- WHEN, oid = regclass): objects earlier on the caller's path would
-- otherwise run in its place.
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
-- the exact overloads that decode by the server's layout; those that take
-- the layout as an argument share their names but not the dependence
decoders AS (
	SELECT pg_catalog.to_regprocedure(pg_catalog.format('%I.%s', idgen.nspname, f))::pg_catalog.oid AS oid
	  FROM idgen,
		   pg_catalog.unnest(ARRAY['id_to_timestamp(bigint)',
								   'min_id_at(timestamptz)',
								   'id_to_shard(bigint)',
								   'id_to_sequence(bigint)',
								   'idgen_decode(bigint)',
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

-- idgen_stats gains layout_ends: when the layout runs out; and shard and
-- shard_since: the shard idgen_next() mints for (with idgen.shard_pool, the
-- one claimed) and since when its lease is held.  The view is made again
-- over the new function; 1.1's function with fewer columns keeps working
-- with this library.
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
	OUT layout_ends timestamptz,
	OUT shard integer,
	OUT shard_since timestamptz)
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

-- The kernel's view of the system clock, which every ID's time comes from.
CREATE FUNCTION idgen_clock(
	OUT synchronized boolean,
	OUT estimated_error_ms double precision,
	OUT maximum_error_ms double precision,
	OUT registry_offset_ms double precision,
	OUT registry_offset_error_ms double precision,
	OUT registry_largest_offset_ms double precision,
	OUT registry_measured_at timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_clock'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_clock() IS
'whether the kernel counts the system clock synchronised, its estimated and maximum error, and how far it is from the lease registry''s';
-- idgen on Citus.  Every node of a Citus cluster mints the IDs of the
-- statements that enter it, so every node must preload idgen, with one
-- layout and shards of its own (or one lease registry for them all); Citus
-- itself checks none of it.  idgen_citus_check() compares every active
-- primary node that Citus lists in pg_dist_node, from where it runs (the
-- coordinator), and returns one row per problem: none when they agree.
-- Another node is asked over Citus's own connections (master_run_on_worker)
-- with a query that needs only idgen's settings, not the extension.
CREATE FUNCTION idgen_citus_check(OUT nodeid integer, OUT node text,
								  OUT problem text, OUT detail text)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $check$
DECLARE
	-- what a node says of itself, as one JSON object
	probe CONSTANT text := $probe$
SELECT pg_catalog.json_build_object(
	'preloaded', EXISTS (SELECT FROM pg_catalog.pg_settings
						  WHERE name OPERATOR(pg_catalog.=) 'idgen.epoch'),
	'preload_libraries', pg_catalog.current_setting('shared_preload_libraries'),
	'extversion', (SELECT extversion FROM pg_catalog.pg_extension
					WHERE extname OPERATOR(pg_catalog.=) 'idgen'),
	'extschema', (SELECT n.nspname FROM pg_catalog.pg_extension AS e
					JOIN pg_catalog.pg_namespace AS n
					  ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
				   WHERE e.extname OPERATOR(pg_catalog.=) 'idgen'),
	'epoch', pg_catalog.current_setting('idgen.epoch', true),
	'epoch_ms', pg_catalog.floor(pg_catalog.date_part('epoch',
		pg_catalog.current_setting('idgen.epoch', true)::pg_catalog.timestamptz)
		OPERATOR(pg_catalog.*) 1000),
	'shard_bits', pg_catalog.current_setting('idgen.shard_bits', true),
	'sequence_bits', pg_catalog.current_setting('idgen.sequence_bits', true),
	'shard_id', pg_catalog.current_setting('idgen.shard_id', true),
	'shard_ids', pg_catalog.current_setting('idgen.shard_ids', true),
	'leases', (SELECT setting OPERATOR(pg_catalog.<>) '' FROM pg_catalog.pg_settings
				WHERE name OPERATOR(pg_catalog.=) 'idgen.lease_registry'))::text
$probe$;
	local_group integer;
	local_id integer;
	names text[];
	ports integer[];
	probes text[];
	facts jsonb := '[]';
	r record;
	f jsonb;
BEGIN
	IF to_regclass('pg_catalog.pg_dist_node') IS NULL OR
		to_regclass('pg_catalog.pg_dist_local_group') IS NULL OR
		to_regprocedure('pg_catalog.master_run_on_worker(text[],integer[],text[],boolean)') IS NULL THEN
		RAISE EXCEPTION 'Citus is not installed in this database'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'idgen_citus_check() compares the nodes that Citus lists in pg_dist_node.',
				  HINT = 'Run it on the Citus coordinator, in the database where the extension citus is created.';
	END IF;

	-- this node: its own settings, read here (no connection to itself)
	EXECUTE 'SELECT groupid FROM pg_catalog.pg_dist_local_group' INTO local_group;
	EXECUTE 'SELECT nodeid FROM pg_catalog.pg_dist_node WHERE groupid = $1 AND noderole = ''primary'''
		INTO local_id USING local_group;
	EXECUTE probe INTO f;
	facts := facts || jsonb_build_array(jsonb_build_object(
		'nodeid', COALESCE(local_id, 0),
		'node', COALESCE((SELECT nodename || ':' || nodeport FROM pg_catalog.pg_dist_node AS n
						   WHERE n.nodeid = local_id),
						 'this node (not in pg_dist_node)'),
		'here', true, 'coordinator', local_group = 0, 'ok', true, 'facts', f));

	-- every other active primary, all at once
	FOR r IN EXECUTE
		'SELECT nodeid, nodename, nodeport FROM pg_catalog.pg_dist_node
		  WHERE isactive AND noderole = ''primary'' AND groupid <> $1
		  ORDER BY nodeid' USING local_group
	LOOP
		names := names || r.nodename;
		ports := ports || r.nodeport;
		probes := probes || probe;
	END LOOP;
	IF names IS NOT NULL THEN
		FOR r IN EXECUTE
			'SELECT n.nodeid, n.groupid, w.node_name, w.node_port, w.success, w.result
			   FROM pg_catalog.master_run_on_worker($1, $2, $3, true) AS w
			   JOIN pg_catalog.pg_dist_node AS n
				 ON n.nodename = w.node_name AND n.nodeport = w.node_port
				AND n.isactive AND n.noderole = ''primary'''
			USING names, ports, probes
		LOOP
			facts := facts || jsonb_build_array(jsonb_build_object(
				'nodeid', r.nodeid, 'node', r.node_name || ':' || r.node_port,
				'here', false, 'coordinator', r.groupid = 0, 'ok', r.success,
				'facts', CASE WHEN r.success THEN r.result::jsonb END,
				'error', CASE WHEN NOT r.success THEN r.result END));
		END LOOP;
	END IF;

	RETURN QUERY
	WITH n AS (
		SELECT (x->>'nodeid')::integer AS nodeid, x->>'node' AS node,
			   (x->>'here')::boolean AS here, (x->>'coordinator')::boolean AS coordinator,
			   (x->>'ok')::boolean AS ok,
			   x->>'error' AS error, x->'facts' AS f
		  FROM jsonb_array_elements(facts) AS x),
	-- the nodes that run idgen, with the shards each mints for
	minting AS (
		SELECT n.nodeid, n.node, n.here,
			   COALESCE((n.f->>'leases')::boolean, false) AS leases,
			   n.f->>'extschema' AS extschema,
			   ARRAY(SELECT DISTINCT s
					   FROM regexp_split_to_table(
							  concat_ws(',', n.f->>'shard_id', n.f->>'shard_ids'), '\s*,\s*') AS e,
							LATERAL generate_series(
							  btrim(split_part(e, '-', 1))::integer,
							  COALESCE(NULLIF(btrim(split_part(e, '-', 2)), ''),
									   btrim(split_part(e, '-', 1)))::integer) AS s
					  WHERE btrim(e) <> ''
					  ORDER BY s) AS shards
		  FROM n
		 WHERE n.ok AND (n.f->>'preloaded')::boolean),
	-- what the others are compared with: the coordinator, else this node
	ref AS (
		SELECT * FROM n WHERE n.ok AND (n.f->>'preloaded')::boolean
		   AND (n.coordinator OR n.here)
		 ORDER BY n.coordinator DESC LIMIT 1),
	layout(setting, key, shown) AS (
		VALUES ('idgen.epoch', 'epoch_ms', 'epoch'),
			   ('idgen.shard_bits', 'shard_bits', 'shard_bits'),
			   ('idgen.sequence_bits', 'sequence_bits', 'sequence_bits')),
	problems AS (
		SELECT n.nodeid, n.node, 'unreachable'::text AS problem,
			   format('The check could not ask this node: %s', n.error) AS detail
		  FROM n WHERE NOT n.ok
		UNION ALL
		SELECT n.nodeid, n.node, 'idgen not preloaded',
			   format('shared_preload_libraries is %L here: every statement that mints or decodes an ID on this node fails.  Add idgen to it and restart the node.',
					  n.f->>'preload_libraries')
		  FROM n WHERE n.ok AND NOT (n.f->>'preloaded')::boolean
		UNION ALL
		SELECT n.nodeid, n.node, 'extension missing',
			   format('The extension idgen is not created here (version %s on %s).',
					  ref.f->>'extversion', ref.node)
		  FROM n, ref
		 WHERE n.ok AND n.nodeid <> ref.nodeid AND ref.f->>'extversion' IS NOT NULL
		   AND n.f->>'extversion' IS NULL
		UNION ALL
		SELECT n.nodeid, n.node, 'layout differs',
			   format('%s is %s here, %s on %s: the IDs of two layouts collide and do not sort together, and min_id_at() evaluated here bounds other IDs than on %s.',
					  l.setting, n.f->>l.shown, ref.f->>l.shown, ref.node, ref.node)
		  FROM n, ref, layout AS l
		 WHERE n.ok AND n.nodeid <> ref.nodeid AND (n.f->>'preloaded')::boolean
		   AND (n.f->>l.key) IS DISTINCT FROM (ref.f->>l.key)
		UNION ALL
		SELECT a.nodeid, a.node, 'shard repeated',
			   format('%s also minted for by node %s (%s): the two nodes mint the same IDs.  Give each node shards of its own (idgen.shard_id, idgen.shard_ids), or one lease registry to all.',
					  CASE WHEN cardinality(common) = 1 THEN 'shard ' || common[1] || ' is'
						   ELSE 'shards ' || array_to_string(common, ', ') || ' are' END,
					  b.nodeid, b.node)
		  FROM minting AS a
		  JOIN minting AS b ON a.nodeid <> b.nodeid,
			   LATERAL (SELECT ARRAY(SELECT unnest(a.shards) INTERSECT SELECT unnest(b.shards)
									  ORDER BY 1) AS common) AS c
		 WHERE cardinality(common) > 0 AND NOT (a.leases AND b.leases))
	SELECT p.nodeid, p.node, p.problem, p.detail
	  FROM problems AS p
	 ORDER BY p.nodeid, p.problem, p.detail;
END
$check$;

COMMENT ON FUNCTION idgen_citus_check() IS
'on a Citus coordinator: every node that preloads idgen differently, with another layout, or with a shard another node mints for';

-- Citus creates the extension on every node, on a node citus_add_node adds
-- too, before it places a shard there or lets a statement in (and with
-- node metadata already copied to it).  There this script refuses a node
-- that disagrees with the others, and citus_add_node fails with the
-- reason: the node never mints, never stores a row.  Problems of other
-- nodes are only warned about.  Without Citus, nothing happens.
DO $guard$
DECLARE
	here integer;
	mine text;
	others text;
BEGIN
	IF pg_catalog.to_regclass('pg_catalog.pg_dist_node') IS NULL OR
		pg_catalog.to_regprocedure('pg_catalog.master_run_on_worker(text[],integer[],text[],boolean)') IS NULL THEN
		RETURN;
	END IF;
	EXECUTE 'SELECT n.nodeid FROM pg_catalog.pg_dist_node AS n, pg_catalog.pg_dist_local_group AS g
			  WHERE n.groupid = g.groupid AND n.noderole = ''primary'''
		INTO here;
	SELECT pg_catalog.string_agg(c.problem || ': ' || c.detail, E'\n' ORDER BY c.problem, c.detail)
			 FILTER (WHERE c.nodeid = COALESCE(here, 0)),
		   pg_catalog.string_agg(c.node || ': ' || c.problem || ': ' || c.detail, E'\n' ORDER BY c.nodeid)
			 FILTER (WHERE c.nodeid <> COALESCE(here, 0))
	  INTO mine, others
	  FROM idgen_citus_check() AS c
	 WHERE c.problem <> 'extension missing';	-- not yet, while Citus creates it
	IF others IS NOT NULL THEN
		RAISE WARNING 'other nodes of this Citus cluster disagree with this one about idgen'
			USING DETAIL = others,
				  HINT = 'SELECT * FROM idgen_citus_check() on the coordinator lists them.';
	END IF;
	IF mine IS NOT NULL THEN
		RAISE EXCEPTION 'this node disagrees with the other nodes of its Citus cluster about idgen'
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = mine,
				  HINT = 'Give this node the others'' idgen settings (the same layout, shards of its own) and restart it, then create the extension (or add the node) again.';
	END IF;
END
$guard$;

-- idgen_leases gains since: when this server's lease on the shard began
-- (a take, a claim from idgen.shard_pool, or the first renewal after a
-- restart).  1.1's function with one column fewer keeps working.
DROP FUNCTION idgen_leases();

CREATE FUNCTION idgen_leases(OUT shard integer, OUT state text,
                             OUT valid_until timestamptz,
                             OUT since timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_leases'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_leases() IS
'this server''s lease on each shard it owns, or with idgen.shard_pool on the shard it claimed: held, expired, pending, not held or claiming, the last millisecond it may stamp, and since when it holds the lease';
