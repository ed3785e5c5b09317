--
-- idgen_search_path: idgen's SQL and PL/pgSQL functions run with
-- search_path = pg_catalog, pg_temp, so that objects in a schema earlier
-- on the caller's path cannot take over an operator or a function they
-- use ("Security Considerations for Extensions" in PostgreSQL's manual).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

-- every function of idgen not written in C fixes its search_path, and so
-- does the one in C that runs a query (through SPI)
SELECT p.oid::regprocedure AS function, l.lanname AS language, p.proconfig
  FROM pg_proc AS p
  JOIN pg_language AS l ON l.oid = p.prolang
  JOIN pg_depend AS d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
   AND d.deptype = 'e'
   AND (l.lanname <> 'c' OR p.prosrc = 'idgen_layout_dependents')
 ORDER BY 1;

-- A schema anyone could have written to, first on the path, with
-- operators that pg_catalog has only in a more general form (or not at all), so that they
-- win even with pg_catalog searched first: oid = regclass (pg_catalog's
-- is oid = oid, through a cast) and text[] || text (pg_catalog's takes
-- anycompatiblearray).  Each records that it ran, and then answers right.
CREATE SCHEMA regress_hostile;
CREATE FUNCTION regress_hostile.oid_eq(oid, regclass) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_catalog.set_config('regress.hostile_ran', 'oid = regclass', false);
    RETURN $1 OPERATOR(pg_catalog.=) $2::oid;
END
$$;
CREATE OPERATOR regress_hostile.= (
    LEFTARG = oid, RIGHTARG = regclass, FUNCTION = regress_hostile.oid_eq);
CREATE FUNCTION regress_hostile.append(text[], text) RETURNS text[]
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_catalog.set_config('regress.hostile_ran', 'text[] || text', false);
    RETURN pg_catalog.array_append($1, $2);
END
$$;
CREATE OPERATOR regress_hostile.|| (
    LEFTARG = text[], RIGHTARG = text, FUNCTION = regress_hostile.append);

-- they would be used: a query of the caller's own picks them up
SET search_path = regress_hostile, public;
SELECT '{}'::text[] || 'x'::text AS appended;
SELECT current_setting('regress.hostile_ran') AS ran;
SET regress.hostile_ran = '';

-- idgen_layout_dependents: pg_depend's classid against a regclass
CREATE TABLE public.events (id bigint PRIMARY KEY, at timestamptz);
CREATE INDEX events_since ON public.events (id) WHERE id >= public.min_id_at('2026-01-01+00');
SELECT * FROM idgen_layout_dependents();
SELECT nullif(current_setting('regress.hostile_ran'), '') AS hostile_ran;
SET regress.hostile_ran = '';

-- idgen_convert_column: the list of widened columns (text[] || text)
CREATE TABLE public.legacy (id serial PRIMARY KEY);
SELECT idgen_convert_column('legacy', 'id') LIKE 'public.legacy.id: DEFAULT public.idgen_next(); widened to bigint: public.legacy.id; sequence public.legacy_id_seq dropped; %'
       AS converted;
SELECT nullif(current_setting('regress.hostile_ran'), '') AS hostile_ran;
SET regress.hostile_ran = '';
RESET search_path;

DROP TABLE events, legacy;
DROP SCHEMA regress_hostile CASCADE;

-- leave no extension behind: each test starts from a database without it
SET client_min_messages = warning;
DROP EXTENSION idgen CASCADE;
RESET client_min_messages;
