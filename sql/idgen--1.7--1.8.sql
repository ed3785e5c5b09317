/* idgen--1.7--1.8.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.8'" to load this file. \quit

-- A database's owner may say which layout history minted its rows, as the
-- restore it runs does (COMMENT ON EXTENSION idgen, applied by idgen for
-- the database's owner): so the owner may also adopt the server's history.
GRANT EXECUTE ON FUNCTION idgen_layout_adopt() TO pg_database_owner;

-- Minting for a given time uses the backfill lanes' capacity for good: an
-- ID a lane gave at a millisecond is never given again there.  So it is
-- a right the superuser grants to the roles that import, not PUBLIC's.
-- (idgen_rekey_column mints through idgen_next_at as its caller.)
REVOKE EXECUTE ON FUNCTION idgen_next_at(timestamptz) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION idgen_next_at_n(timestamptz, integer) FROM PUBLIC;

-- idgen_rekey_column: a followed column that is not bigint is widened by
-- ALTER TABLE, not by idgen_convert_column (which widens only the columns
-- whose foreign keys reference the key); the hint says so.  The body is
-- 1.7's otherwise.
CREATE OR REPLACE FUNCTION idgen_rekey_column(tbl regclass, col name, time_col name, below bigint,
								   follow text[] DEFAULT '{}', ignore text[] DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
-- a row a policy hides would keep its old key, or its old reference: with
-- row security off, a query a policy would filter fails instead
SET row_security = off
AS $rekey$
DECLARE
	key_att record;
	time_typ regtype;
	ext_schema name;
	cols jsonb := '[]';         -- the columns rewritten besides the key: {rel, att}
	cons jsonb := '[]';         -- the foreign keys dropped and made again: {oid, rel, con, def, note}
	ignored jsonb := '[]';      -- columns named like references that are not: {rel, att}
	todo jsonb;                 -- columns whose referencing foreign keys are still to find
	e jsonb;
	parts text[];
	r record;
	rel regclass;
	att name;
	found_list text;
	lanes integer[];
	keep text;
	n_keys bigint;
	n_kept bigint;
	n_rows bigint;
	clash bigint;
	n_shifted bigint;
	first_at timestamptz;
	last_at timestamptz;
	followed text[] := '{}';
BEGIN
	IF tbl IS NULL OR col IS NULL OR time_col IS NULL THEN
		RAISE EXCEPTION '% must not be null',
			CASE WHEN tbl IS NULL THEN 'table' WHEN col IS NULL THEN 'column name' ELSE 'time column name' END
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF below IS NULL THEN
		RAISE EXCEPTION 'below must not be null'
			USING ERRCODE = 'null_value_not_allowed',
				  DETAIL = 'Keys below it are rewritten; keys at or above it are kept.',
				  HINT = 'Pass the first ID idgen minted in this table (idgen_convert_column''s result says "new IDs start at"), or 9223372036854775807 to rewrite every key.';
	END IF;

	-- a snapshot older than the locks would miss a reference committed while
	-- it waited: a followed column has no constraint to catch it
	IF current_setting('transaction_isolation') <> 'read committed' THEN
		RAISE EXCEPTION 'idgen_rekey_column needs a READ COMMITTED transaction'
			USING ERRCODE = 'invalid_transaction_state',
				  DETAIL = pg_catalog.format('This transaction is %s: its snapshot may be older than the locks the rewrite takes.',
											 upper(current_setting('transaction_isolation'))),
				  HINT = 'Run it in a READ COMMITTED transaction, the default.';
	END IF;

	SELECT c.relkind, c.relispartition INTO r FROM pg_class AS c WHERE c.oid = tbl;
	IF r.relkind NOT IN ('r', 'p') THEN
		RAISE EXCEPTION '% is not a table', tbl
			USING ERRCODE = 'wrong_object_type',
				  HINT = 'Name the table that holds the keys.';
	END IF;
	IF r.relispartition THEN
		RAISE EXCEPTION 'cannot rekey %, a partition', tbl
			USING ERRCODE = 'wrong_object_type',
				  HINT = 'Rekey the partitioned table: its keys, and the foreign keys that reference them, span every partition.';
	END IF;
	SELECT a.attnum, a.atttypid::regtype AS typ INTO key_att
	  FROM pg_attribute AS a
	 WHERE a.attrelid = tbl AND a.attname = col AND NOT a.attisdropped AND a.attnum > 0;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'column "%" of relation % does not exist', col, tbl
			USING ERRCODE = 'undefined_column';
	END IF;
	IF key_att.typ <> 'bigint'::regtype THEN
		RAISE EXCEPTION 'column "%" of % is %, not bigint', col, tbl, key_att.typ
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'Run idgen_convert_column first: it widens the key and the columns that reference it.';
	END IF;
	SELECT a.atttypid::regtype INTO time_typ
	  FROM pg_attribute AS a
	 WHERE a.attrelid = tbl AND a.attname = time_col AND NOT a.attisdropped AND a.attnum > 0;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'column "%" of relation % does not exist', time_col, tbl
			USING ERRCODE = 'undefined_column';
	END IF;
	IF time_typ NOT IN ('timestamptz'::regtype, 'timestamp'::regtype, 'date'::regtype) THEN
		RAISE EXCEPTION 'column "%" of % is %, not a time', time_col, tbl, time_typ
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'The time column must be timestamptz, timestamp or date.';
	END IF;
	-- the key must not itself be a copy of another table's key
	SELECT string_agg(pg_describe_object('pg_constraint'::regclass, c.oid, 0), ', ') INTO found_list
	  FROM pg_constraint AS c
	 WHERE c.contype = 'f' AND c.conrelid = tbl AND key_att.attnum = ANY (c.conkey);
	IF found_list IS NOT NULL THEN
		RAISE EXCEPTION 'column "%" of % references another table', col, tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('Its values are another table''s keys: %s.', found_list),
				  HINT = 'Rekey the table it references; its foreign keys are followed.';
	END IF;
	IF to_regclass('pg_temp.idgen_rekey_map') IS NOT NULL THEN
		RAISE EXCEPTION 'a temporary table idgen_rekey_map exists'
			USING ERRCODE = 'duplicate_table',
				  HINT = 'The rekey keeps its map there; drop or rename yours first.';
	END IF;

	SELECT n.nspname INTO ext_schema
	  FROM pg_extension AS x JOIN pg_namespace AS n ON n.oid = x.extnamespace
	 WHERE x.extname = 'idgen';

	-- no insert, update or delete in the table while its keys change
	EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);

	-- keys already for their row's time, on a lane (a rekey run again, an
	-- import or a late event minted by idgen_next_at) are kept
	EXECUTE format('SELECT array_agg(shard) FROM %I.idgen_lanes()', ext_schema) INTO lanes;
	keep := format('COALESCE(CASE WHEN %1$I >= 0 AND %3$I.id_to_shard(%1$I) = ANY ($2)
								  THEN %3$I.id_to_timestamp(%1$I) - date_trunc(''milliseconds'', %2$I::timestamptz)
									   BETWEEN interval ''0'' AND interval ''1 hour'' END, false)',
				   col, time_col, ext_schema);

	EXECUTE format('SELECT count(*) FILTER (WHERE NOT %4$s) AS n, count(%2$I) FILTER (WHERE NOT %4$s) AS timed,
						   count(%1$I) AS every_key, count(DISTINCT %1$I) AS distinct_keys, count(*) FILTER (WHERE %4$s) AS kept,
						   min(%2$I) FILTER (WHERE NOT %4$s)::timestamptz AS first_at,
						   max(%2$I) FILTER (WHERE NOT %4$s)::timestamptz AS last_at
					  FROM %3$s WHERE %1$I < $1', col, time_col, tbl, keep)
		INTO STRICT r USING below, COALESCE(lanes, '{}');
	IF r.timed <> r.n THEN
		RAISE EXCEPTION '% of the % keys below % have no time in "%"', r.n - r.timed, r.n, below, time_col
			USING ERRCODE = 'null_value_not_allowed',
				  HINT = 'Give those rows a time, or leave them out with a lower below.';
	END IF;
	-- over every row below, kept or not: a kept row's key held by another
	-- row too would be rewritten with it
	IF r.distinct_keys <> r.every_key THEN
		RAISE EXCEPTION 'column "%" of % holds a key more than once', col, tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = 'A key that names two rows cannot be rewritten for one of them.';
	END IF;
	n_keys := r.n;
	n_kept := r.kept;
	first_at := r.first_at;
	last_at := r.last_at;

	IF n_keys = 0 THEN
		RETURN format('%s.%I: 0 keys below %s rewritten from %I%s', tbl, col, below, time_col,
					  CASE WHEN n_kept > 0 THEN format('; %s already for their time, kept', n_kept) ELSE '' END);
	END IF;

	-- the columns the caller names: holding the key's values without a
	-- foreign key (follow), or named like it and holding something else (ignore)
	todo := jsonb_build_array(jsonb_build_object('rel', tbl::oid, 'att', col));
	FOR r IN SELECT 'follow' AS kind, x FROM unnest(COALESCE(follow, '{}')) AS x
			 UNION ALL
			 SELECT 'ignore', x FROM unnest(COALESCE(ignore, '{}')) AS x
	LOOP
		parts := parse_ident(r.x);
		IF cardinality(parts) NOT IN (2, 3) THEN
			RAISE EXCEPTION '% entry "%" names no table and column', r.kind, r.x
				USING ERRCODE = 'invalid_parameter_value',
					  HINT = 'Name a column with its table, as ''orders.customer_id'' or ''sales.orders.customer_id''.';
		END IF;
		-- a table without its schema is in the key's table's schema (the
		-- caller's search_path is not in force here)
		att := parts[cardinality(parts)];
		IF cardinality(parts) = 2 THEN
			parts := ARRAY[(SELECT n.nspname::text FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
							 WHERE c.oid = tbl), parts[1], att];
		END IF;
		rel := to_regclass(format('%I.%I', parts[1], parts[2]));
		IF rel IS NULL OR NOT EXISTS (SELECT FROM pg_attribute AS a
									   WHERE a.attrelid = rel AND a.attname = att
										 AND NOT a.attisdropped AND a.attnum > 0) THEN
			RAISE EXCEPTION '% entry "%" is not a column', r.kind, r.x
				USING ERRCODE = 'undefined_column',
					  HINT = format('A table named without its schema is looked for in %s''s schema.', tbl);
		END IF;
		IF r.kind = 'ignore' THEN
			ignored := ignored || jsonb_build_array(jsonb_build_object('rel', rel::oid, 'att', att));
			CONTINUE;
		END IF;
		IF rel = tbl AND att = col THEN
			RAISE EXCEPTION 'follow entry "%" is the key itself', r.x
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF NOT cols @> jsonb_build_array(jsonb_build_object('rel', rel::oid, 'att', att)) THEN
			cols := cols || jsonb_build_array(jsonb_build_object('rel', rel::oid, 'att', att));
			todo := todo || jsonb_build_array(jsonb_build_object('rel', rel::oid, 'att', att));
		END IF;
	END LOOP;

	-- every column that holds the key's values through a foreign key, to any
	-- depth (a key of order_lines that includes order_id is referenced in
	-- turn); of each constraint the top one: a partition's copy goes and
	-- comes with it
	WHILE jsonb_array_length(todo) > 0 LOOP
		e := todo->0;
		todo := todo - 0;
		FOR r IN
			SELECT c.oid, c.conname, c.conrelid::regclass AS rel, a.attname,
				   pg_get_constraintdef(c.oid) AS def, obj_description(c.oid, 'pg_constraint') AS note
			  FROM pg_constraint AS c
			 CROSS JOIN LATERAL ROWS FROM (unnest(c.conkey), unnest(c.confkey)) AS k(conkey, confkey)
			  JOIN pg_attribute AS a ON a.attrelid = c.conrelid AND a.attnum = k.conkey
			  JOIN pg_attribute AS fa ON fa.attrelid = c.confrelid AND fa.attnum = k.confkey
			 WHERE c.contype = 'f' AND c.conparentid = 0 AND fa.attname = e->>'att'
			   AND c.confrelid IN (SELECT (e->>'rel')::oid
								   UNION SELECT relid FROM pg_partition_tree((e->>'rel')::oid::regclass))
			 ORDER BY c.conrelid::regclass::text, c.conname, a.attname
		LOOP
			IF NOT cons @> jsonb_build_array(jsonb_build_object('oid', r.oid)) THEN
				cons := cons || jsonb_build_array(jsonb_build_object(
					'oid', r.oid, 'rel', r.rel::oid, 'con', r.conname, 'def', r.def, 'note', r.note));
			END IF;
			IF NOT (r.rel = tbl AND r.attname = col)
			   AND NOT cols @> jsonb_build_array(jsonb_build_object('rel', r.rel::oid, 'att', r.attname)) THEN
				cols := cols || jsonb_build_array(jsonb_build_object('rel', r.rel::oid, 'att', r.attname));
				todo := todo || jsonb_build_array(jsonb_build_object('rel', r.rel::oid, 'att', r.attname));
			END IF;
		END LOOP;
	END LOOP;

	-- what each rewritten column must be: a bigint, stored, in a table the
	-- caller owns, without inheritance children (an UPDATE reaches them,
	-- their triggers and their columns unseen)
	FOR r IN SELECT (x->>'rel')::oid::regclass AS rel, x->>'att' AS att, c.relkind, c.relowner,
					a.atttypid::regtype AS typ, a.attgenerated
			   FROM jsonb_array_elements(jsonb_build_array(jsonb_build_object('rel', tbl::oid, 'att', col)) || cols) AS x
			   JOIN pg_class AS c ON c.oid = (x->>'rel')::oid
			   JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attname = x->>'att'
	LOOP
		IF r.relkind NOT IN ('r', 'p') THEN
			RAISE EXCEPTION '% is not a table', r.rel
				USING ERRCODE = 'wrong_object_type',
					  HINT = 'Follow the columns of the tables that hold the keys.';
		END IF;
		IF r.typ <> 'bigint'::regtype THEN
			RAISE EXCEPTION 'column "%" of % holds keys of %.% and is %, not bigint', r.att, r.rel, tbl, col, r.typ
				USING ERRCODE = 'datatype_mismatch',
					  HINT = format('Widen it first: ALTER TABLE %s ALTER COLUMN %I TYPE bigint.  idgen_convert_column widens only the key and the columns whose foreign keys reference it.', r.rel, r.att);
		END IF;
		IF r.attgenerated <> '' THEN
			RAISE EXCEPTION 'column "%" of % is generated', r.att, r.rel
				USING ERRCODE = 'wrong_object_type',
					  HINT = 'A generated column is computed from others; follow those.';
		END IF;
		IF NOT pg_has_role(r.relowner, 'MEMBER') THEN
			RAISE EXCEPTION 'must be owner of table %', r.rel
				USING ERRCODE = 'insufficient_privilege',
					  HINT = 'Its foreign keys are dropped and made again for the rewrite.';
		END IF;
		IF EXISTS (SELECT FROM pg_inherits AS i WHERE i.inhparent = r.rel AND r.relkind = 'r') THEN
			RAISE EXCEPTION 'cannot rekey through %, which has inheritance children', r.rel
				USING ERRCODE = 'feature_not_supported',
					  HINT = 'Rewrite tables with inheritance children by hand.';
		END IF;
	END LOOP;

	-- the tables that change with it, before looking at what they hold
	FOR r IN SELECT DISTINCT (x->>'rel')::oid::regclass AS rel FROM jsonb_array_elements(cols) AS x LOOP
		EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', r.rel);
	END LOOP;

	-- what it cannot see: a column elsewhere named for this table's key, of
	-- an integer type, with no foreign key, neither followed nor ignored
	WITH stem AS (
		SELECT DISTINCT x
		  FROM pg_class AS c,
			   LATERAL unnest(ARRAY[c.relname::text, regexp_replace(c.relname, 's$', ''),
									regexp_replace(c.relname, 'es$', ''), regexp_replace(c.relname, 'ies$', 'y')]) AS x
		 WHERE c.oid = tbl),
	named AS (
		SELECT x || '_' || col AS n FROM stem
		 UNION SELECT x || '_id' FROM stem
		 UNION SELECT col::text WHERE col LIKE '%\_id')
	SELECT string_agg(format('%s.%I', a.attrelid::regclass, a.attname), ', '
					  ORDER BY a.attrelid::regclass::text, a.attname) INTO found_list
	  FROM pg_class AS t
	  JOIN pg_attribute AS a ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
	 WHERE t.relkind IN ('r', 'p', 'f', 'm') AND NOT t.relispartition
	   AND t.relnamespace NOT IN (SELECT oid FROM pg_namespace
								   WHERE nspname IN ('pg_catalog', 'information_schema')
									  OR nspname LIKE 'pg\_temp\_%' OR nspname LIKE 'pg\_toast%')
	   AND a.atttypid IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype, 'numeric'::regtype)
	   AND a.attname IN (SELECT n FROM named)
	   AND NOT EXISTS (SELECT FROM pg_constraint AS c
						WHERE c.contype = 'f' AND c.conrelid = t.oid AND a.attnum = ANY (c.conkey))
	   AND NOT cols @> jsonb_build_array(jsonb_build_object('rel', t.oid::oid, 'att', a.attname))
	   AND NOT ignored @> jsonb_build_array(jsonb_build_object('rel', t.oid::oid, 'att', a.attname))
	   AND NOT (t.oid = tbl AND a.attname = col);
	IF found_list IS NOT NULL THEN
		RAISE EXCEPTION 'cannot tell whether % hold% keys of %', found_list,
			CASE WHEN found_list LIKE '%,%' THEN '' ELSE 's' END, tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('%s named for %s.%I and %s no foreign key; a reference without one is invisible to idgen, and would be left pointing at old keys.',
								  CASE WHEN found_list LIKE '%,%' THEN 'They are' ELSE 'It is' END, tbl, col,
								  CASE WHEN found_list LIKE '%,%' THEN 'have' ELSE 'has' END),
				  HINT = 'Name each in follow => ''{...}'' to rewrite it too, or in ignore => ''{...}'' if it holds something else (or if it is a materialized view or a foreign table, which you refresh or rewrite yourself).';
	END IF;

	-- user code would see the rewrite as an application's change: update
	-- triggers on a rewritten column, and insert and delete triggers where
	-- the column is in a partition key (the row moves)
	SELECT string_agg(DISTINCT format('%I on %s', g.tgname, g.tgrelid::regclass), ', ') INTO found_list
	  FROM (SELECT tbl::oid AS rel, col::text AS att
			 UNION SELECT (x->>'rel')::oid, x->>'att' FROM jsonb_array_elements(cols) AS x) AS w
	 CROSS JOIN LATERAL (SELECT w.rel AS relid UNION SELECT relid FROM pg_partition_tree(w.rel::regclass)) AS t
	  JOIN pg_trigger AS g ON g.tgrelid = t.relid
	 WHERE NOT g.tgisinternal AND g.tgenabled <> 'D'
	   AND (((g.tgtype & 16) <> 0
			 AND (cardinality(g.tgattr::int2[]) = 0
				  OR EXISTS (SELECT FROM pg_attribute AS a
							  WHERE a.attrelid = g.tgrelid AND a.attnum = ANY (g.tgattr::int2[]) AND a.attname = w.att)))
			OR ((g.tgtype & 12) <> 0
				AND EXISTS (SELECT FROM pg_partition_tree(w.rel::regclass) AS pt
							  JOIN pg_partitioned_table AS pp ON pp.partrelid = pt.relid
							  JOIN pg_attribute AS a ON a.attrelid = pp.partrelid AND a.attnum = ANY (pp.partattrs::int2[])
							 WHERE a.attname = w.att)));
	IF found_list IS NOT NULL THEN
		RAISE EXCEPTION 'triggers would fire on the rewritten rows: %', found_list
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'A trigger may copy keys where idgen cannot follow them, or stamp rows as changed.',
				  HINT = 'If the rewrite may skip them, disable them in the same transaction (ALTER TABLE ... DISABLE TRIGGER ...) and enable them after.';
	END IF;
	SELECT string_agg(DISTINCT format('%I on %s', w.rulename, w.ev_class::regclass), ', ') INTO found_list
	  FROM pg_rewrite AS w
	 WHERE w.ev_type = '2' AND w.ev_enabled <> 'D'
	   AND w.ev_class IN (SELECT tbl::oid UNION SELECT (x->>'rel')::oid FROM jsonb_array_elements(cols) AS x);
	IF found_list IS NOT NULL THEN
		RAISE EXCEPTION 'update rules are on the rewritten tables: %', found_list
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'A rule would turn the rewrite into other commands.',
				  HINT = 'Disable them in the same transaction (ALTER TABLE ... DISABLE RULE ...) and enable them after.';
	END IF;

	CREATE TEMP TABLE idgen_rekey_map (old bigint PRIMARY KEY, new bigint NOT NULL UNIQUE, at timestamptz NOT NULL)
		ON COMMIT DROP;
	-- in time order, so that each lane sweeps forward
	EXECUTE format('INSERT INTO pg_temp.idgen_rekey_map
					SELECT %1$I, %4$I.idgen_next_at(%2$I::timestamptz), %2$I::timestamptz
					  FROM %3$s WHERE %1$I < $1 AND NOT %5$s ORDER BY %2$I, %1$I',
				   col, time_col, tbl, ext_schema, keep)
		USING below, COALESCE(lanes, '{}');
	ANALYZE pg_temp.idgen_rekey_map;

	-- a new key that is already some row's key: an old one, which would
	-- collide halfway through the update, or one that stays
	EXECUTE format('SELECT min(m.new) FROM pg_temp.idgen_rekey_map AS m JOIN %s AS t ON t.%I = m.new', tbl, col)
		INTO clash;
	IF clash IS NOT NULL THEN
		RAISE EXCEPTION 'the new key % is already a key of %', clash, tbl
			USING ERRCODE = 'unique_violation',
				  DETAIL = 'Either an old key is as large as the new keys of the earliest times (which would collide halfway through the rewrite), or the table holds lane IDs the lanes do not know of (restored, or copied from another server).',
				  HINT = 'For restored lane IDs, raise the lanes past them with idgen_advance_past, as doc/backfill.md says for restores, and run it again; for old keys that large, rekey with a lower below first.';
	END IF;

	-- the foreign keys go while both sides change, and come back as they were
	FOR r IN SELECT x->>'con' AS con, (x->>'rel')::oid::regclass AS rel FROM jsonb_array_elements(cons) AS x LOOP
		EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.rel, r.con);
	END LOOP;

	EXECUTE format('UPDATE %1$s AS t SET %2$I = m.new FROM pg_temp.idgen_rekey_map AS m WHERE t.%2$I = m.old',
				   tbl, col);
	FOR r IN SELECT (x->>'rel')::oid::regclass AS rel, x->>'att' AS att FROM jsonb_array_elements(cols) AS x LOOP
		EXECUTE format('UPDATE %1$s AS t SET %2$I = m.new FROM pg_temp.idgen_rekey_map AS m WHERE t.%2$I = m.old',
					   r.rel, r.att);
		GET DIAGNOSTICS n_rows = ROW_COUNT;
		followed := followed || format('%s.%I (%s rows)', r.rel, r.att, n_rows);
	END LOOP;

	FOR r IN SELECT x->>'con' AS con, (x->>'rel')::oid::regclass AS rel, x->>'def' AS def, x->>'note' AS note
			   FROM jsonb_array_elements(cons) AS x LOOP
		EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s', r.rel, r.con, r.def);
		IF r.note IS NOT NULL THEN
			EXECUTE format('COMMENT ON CONSTRAINT %I ON %s IS %L', r.con, r.rel, r.note);
		END IF;
	END LOOP;

	EXECUTE format('SELECT count(*) FROM pg_temp.idgen_rekey_map
					 WHERE %I.id_to_timestamp(new) <> date_trunc(''milliseconds'', at)', ext_schema)
		INTO n_shifted;
	DROP TABLE pg_temp.idgen_rekey_map;

	RETURN format('%s.%I: %s keys below %s rewritten from %I%s%s%s%s',
		tbl, col, n_keys, below, time_col,
		CASE WHEN n_keys > 0 THEN format(', %s to %s', first_at, last_at) ELSE '' END,
		CASE WHEN n_kept > 0 THEN format('; %s already for their time, kept', n_kept) ELSE '' END,
		CASE WHEN cardinality(followed) > 0 THEN '; followed: ' || array_to_string(followed, ', ') ELSE '' END,
		CASE WHEN n_shifted > 0 THEN format('; %s shifted to a later millisecond (idgen.backfill_max_shift)', n_shifted)
			 ELSE '' END);
END
$rekey$;

-- idgen_lanes() says why a lane does not mint and what to run: a restore
-- now stops only the lanes its dump names, and ready alone did not say
-- which refusal a lane is in.  A view of a user's over idgen_lanes() makes
-- this update fail: drop it first, and create it again after.  A C function
-- of its own: a library older than 1.8 under this SQL fails to find it,
-- rather than filling eleven columns with ten.
DROP FUNCTION idgen_lanes();

CREATE FUNCTION idgen_lanes(
	OUT shard integer,
	OUT configured boolean,
	OUT ready boolean,
	OUT open_from timestamptz,
	OUT next_at timestamptz,
	OUT fence timestamptz,
	OUT used_ranges integer,
	OUT minted bigint,
	OUT spilled bigint,
	OUT largest_shift_ms bigint,
	OUT not_ready_reason text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_lanes_1_8'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_lanes() IS
'the backfill lanes: where each mints, what it minted since the server started, and why it does not';
