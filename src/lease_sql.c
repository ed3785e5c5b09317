/*-------------------------------------------------------------------------
 *
 * lease_sql.c
 *		The lease registry's protocol as SQL text, in one place: the table
 *		and its guards, which the servers install, and the statements of a
 *		round.
 *
 * Everything here runs in the registry database, through registry.c, in
 * the session whose settings registry.c forces.  The guard carries the
 * schema's version (IDGEN_REGISTRY_SCHEMA_VERSION) in its body, and
 * guards_present reads it back: a registry serves servers of several idgen
 * versions while they are upgraded one by one.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lease_sql.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lease_sql.h"

/*
 * Times cross the wire as microseconds since 1970; the registry turns them
 * into timestamptz, so that people read its rows.
 */
#define UNIX_US_TO_TIMESTAMPTZ(p) \
	"timestamptz 'epoch' + " p "::bigint * interval '1 microsecond'"
/* infinity is "forever", -infinity "never" (NULL) */
#define TIMESTAMPTZ_TO_UNIX_US(x) \
	"CASE WHEN isfinite(" x ") THEN (extract(epoch FROM " x ") * 1000000)::bigint " \
	"WHEN " x " > 'epoch' THEN 9223372036854775807 END"

/* Of the shards $1 this server holds, those the registry names another owner of. */
const char *const idgen_lease_sql_lost_rows =
"SELECT shard, coalesce(owner_name, '') FROM public.idgen_lease "
"WHERE shard = ANY ($1::pg_catalog.int4[]) AND owner IS DISTINCT FROM $2";

const char *const idgen_lease_sql_giving_back =
"SELECT pg_catalog.set_config('idgen_lease.giving_back', $1, true)";

const char *const idgen_lease_sql_add_rows =
"INSERT INTO public.idgen_lease (shard) SELECT unnest($1::integer[]) "
"ON CONFLICT (shard) DO NOTHING";

/* A pool's rows not yet there, ascending, so that two claims cannot deadlock. */
const char *const idgen_lease_sql_add_pool_rows =
"INSERT INTO public.idgen_lease (shard) "
"SELECT s FROM unnest($1::integer[], $2::integer[]) AS r (lo, hi), "
"generate_series(r.lo, r.hi) AS s "
"WHERE NOT EXISTS (SELECT FROM public.idgen_lease AS l WHERE l.shard = s) "
"ORDER BY s ON CONFLICT (shard) DO NOTHING";

/*
 * The claim: one row of the pool, locked, that plan_lease will take or
 * renew: this server's own first (a crash restart finds its row again),
 * then free or ended rows, the least recently stamped first, none stamped
 * further ahead of the registry's clock than idgen.max_lead ($4), which
 * plan_lease would refuse, and no backfill lane's.  In READ COMMITTED a row another claim changed
 * meanwhile is checked again, as it is now, once locked.
 */
const char *const idgen_lease_sql_claim =
"SELECT l.shard FROM public.idgen_lease AS l "
"WHERE l.shard IN (SELECT s FROM unnest($1::integer[], $2::integer[]) AS r (lo, hi), "
"generate_series(r.lo, r.hi) AS s) "
"AND NOT l.lane AND (l.owner = $3 OR ((l.owner IS NULL OR l.valid_until IS NULL "
"OR l.valid_until < clock_timestamp()) "
"AND coalesce(GREATEST(l.valid_until, l.stamped_until), '-infinity') <= "
"clock_timestamp() + $4::bigint * interval '1 millisecond')) "
"ORDER BY l.owner IS NOT DISTINCT FROM $3 DESC, "
"GREATEST(l.valid_until, l.stamped_until) NULLS FIRST, l.shard "
"LIMIT 1 FOR UPDATE OF l SKIP LOCKED";

const char *const idgen_lease_sql_lock_rows =
"SELECT shard, owner, owner_name, "
TIMESTAMPTZ_TO_UNIX_US("valid_until") ", "
TIMESTAMPTZ_TO_UNIX_US("previous_until") ", "
TIMESTAMPTZ_TO_UNIX_US("clock_timestamp()") ", "
TIMESTAMPTZ_TO_UNIX_US("stamped_until") ", lane "
"FROM public.idgen_lease WHERE shard = ANY ($1::integer[]) ORDER BY shard "
"FOR UPDATE SKIP LOCKED";

const char *const idgen_lease_sql_update_rows =
"UPDATE public.idgen_lease AS l SET owner = n.owner, "
"owner_name = CASE WHEN n.owner IS NULL THEN l.owner_name ELSE $4 END, "
"valid_until = " UNIX_US_TO_TIMESTAMPTZ("n.until") ", "
"previous_until = CASE WHEN n.take THEN GREATEST(l.valid_until, l.stamped_until) "
"ELSE l.previous_until END, "
"renewed_at = clock_timestamp() "
"FROM unnest($1::integer[], $2::text[], $3::bigint[], $5::boolean[]) "
"AS n (shard, owner, until, take) "
"WHERE l.shard = n.shard";

const char *const idgen_lease_sql_create_table =
"CREATE TABLE IF NOT EXISTS public.idgen_lease (\n"
"    shard integer PRIMARY KEY CHECK (shard >= 0),\n"
"    owner text,\n"
"    owner_name text,\n"
"    valid_until timestamptz,\n"
"    previous_until timestamptz,\n"
"    renewed_at timestamptz,\n"
"    stamped_until timestamptz,\n"
"    lane boolean NOT NULL DEFAULT false,\n"
"    lane_ranges tstzmultirange NOT NULL DEFAULT '{}'\n"
")";

/*
 * The table's owner can rewrite its rows behind the servers' backs (a
 * trigger): trusted only if it could as well have replaced the table, or
 * its rights are the registry role's.
 */
const char *const idgen_lease_sql_table_owner =
"SELECT pg_catalog.pg_get_userbyid(c.relowner), "
"r.rolsuper OR pg_catalog.pg_has_role(c.relowner, 'MEMBER') "
"OR pg_catalog.pg_has_role(c.relowner, n.nspowner, 'MEMBER') "
"FROM pg_catalog.pg_class AS c "
"JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
"JOIN pg_catalog.pg_roles AS r ON r.oid = c.relowner "
"WHERE c.oid = pg_catalog.to_regclass('public.idgen_lease')";

/*
 * Guards on the rows, installed by the servers (in one transaction, when
 * a session finds them missing or of an older version): whatever an UPDATE
 * by hand says, stamped_until never decreases below any valid_until the row
 * ever held, except in a give-back by the holder itself, which names the
 * last millisecond it stamped.  A give-back is a session that names the
 * holder in idgen_lease.giving_back and may act as the table's owner (the
 * servers' role, or a superuser): anyone may set a placeholder, and anyone
 * who can read the row knows the holder's token, so a role granted UPDATE
 * alone would otherwise move the bound under a live holder;
 * previous_until never decreases under one owner, and a new owner's is at
 * least the old row's valid_until and stamped_until; rows are never
 * deleted, nor the table truncated.  So a taker's floor,
 * GREATEST(valid_until, stamped_until), is never below what a previous
 * holder may have stamped.
 */
const char *const idgen_lease_sql_guard[] = {
	"ALTER TABLE public.idgen_lease ADD COLUMN IF NOT EXISTS stamped_until timestamptz",
	"ALTER TABLE public.idgen_lease ADD COLUMN IF NOT EXISTS lane boolean NOT NULL DEFAULT false, "
	"ADD COLUMN IF NOT EXISTS lane_ranges tstzmultirange NOT NULL DEFAULT '{}'",
	"CREATE OR REPLACE FUNCTION public.idgen_lease_guard() RETURNS trigger "
	"LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $f$\n"
	"BEGIN\n"
	"    IF NEW.shard IS DISTINCT FROM OLD.shard THEN\n"
	"        RAISE EXCEPTION USING ERRCODE = '55000',\n"
	"            MESSAGE = 'the shard of a row of public.idgen_lease never changes',\n"
	"            HINT = 'To free a shard, UPDATE public.idgen_lease SET owner = NULL WHERE shard = ...';\n"
	"    END IF;\n"
	"    -- idgen lease guard, version " CppAsString2(IDGEN_REGISTRY_SCHEMA_VERSION) "\n"
	"    -- a lane's IDs sit at past milliseconds: a lane row stays one, a\n"
	"    -- live row never becomes one, a lane's ranges are never forgotten\n"
	"    IF OLD.lane AND NOT NEW.lane THEN\n"
	"        RAISE EXCEPTION USING ERRCODE = '55000',\n"
	"            MESSAGE = format('shard %s is a backfill lane in public.idgen_lease and stays one', OLD.shard),\n"
	"            HINT = 'Its IDs sit at past milliseconds that a live server would mint at; name another shard.';\n"
	"    END IF;\n"
	"    IF NEW.lane AND NOT OLD.lane AND (OLD.valid_until IS NOT NULL OR OLD.stamped_until IS NOT NULL) THEN\n"
	"        RAISE EXCEPTION USING ERRCODE = '55000',\n"
	"            MESSAGE = format('shard %s was leased live and cannot become a backfill lane', OLD.shard),\n"
	"            HINT = 'Its live IDs sit at the past milliseconds a lane would mint at; name shards never leased live in idgen.backfill_shards.';\n"
	"    END IF;\n"
	"    IF OLD.lane AND NEW.owner IS NOT NULL AND NEW.owner IS DISTINCT FROM OLD.owner\n"
	"       AND current_setting('idgen_lease.lane', true) IS DISTINCT FROM 'on' THEN\n"
	"        RAISE EXCEPTION USING ERRCODE = '55000',\n"
	"            MESSAGE = format('shard %s is a backfill lane in public.idgen_lease', OLD.shard),\n"
	"            HINT = 'Only a server that names it in idgen.backfill_shards takes it.';\n"
	"    END IF;\n"
	"    NEW.lane_ranges := OLD.lane_ranges + coalesce(NEW.lane_ranges, '{}');\n"
	"    IF NEW.owner IS NULL AND OLD.owner IS NOT NULL\n"
	"       AND OLD.owner = current_setting('idgen_lease.giving_back', true)\n"
	"       AND pg_has_role((SELECT relowner FROM pg_class WHERE oid = TG_RELID),\n"
	"                       'MEMBER') THEN\n"
	"        -- its holder gives it back, up to the last millisecond it stamped,\n"
	"        -- above the floor it started from\n"
	"        NEW.stamped_until := GREATEST(NEW.valid_until, OLD.previous_until);\n"
	"    ELSE\n"
	"        NEW.stamped_until := GREATEST(OLD.stamped_until, OLD.valid_until,\n"
	"                                      NEW.valid_until, NEW.stamped_until);\n"
	"    END IF;\n"
	"    IF NEW.owner IS NOT DISTINCT FROM OLD.owner THEN\n"
	"        NEW.previous_until := GREATEST(OLD.previous_until, NEW.previous_until);\n"
	"    ELSIF NEW.owner IS NOT NULL THEN\n"
	"        NEW.previous_until := GREATEST(NEW.previous_until, OLD.valid_until,\n"
	"                                       OLD.stamped_until);\n"
	"    END IF;\n"
	"    RETURN NEW;\n"
	"END\n$f$",
	"CREATE OR REPLACE FUNCTION public.idgen_lease_refuse() RETURNS trigger "
	"LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $f$\n"
	"BEGIN\n"
	"    RAISE EXCEPTION USING ERRCODE = '55000',\n"
	"        MESSAGE = 'rows of public.idgen_lease are never deleted',\n"
	"        DETAIL = 'A shard whose row is gone would be taken below the IDs its last owner stamped.',\n"
	"        HINT = 'To free a shard, UPDATE public.idgen_lease SET owner = NULL WHERE shard = ...; its next owner starts above what the last one stamped.';\n"
	"END\n$f$",
	"CREATE OR REPLACE TRIGGER idgen_lease_guard BEFORE UPDATE ON public.idgen_lease "
	"FOR EACH ROW EXECUTE FUNCTION public.idgen_lease_guard()",
	"CREATE OR REPLACE TRIGGER idgen_lease_no_delete BEFORE DELETE ON public.idgen_lease "
	"FOR EACH ROW EXECUTE FUNCTION public.idgen_lease_refuse()",
	"CREATE OR REPLACE TRIGGER idgen_lease_no_truncate BEFORE TRUNCATE ON public.idgen_lease "
	"FOR EACH STATEMENT EXECUTE FUNCTION public.idgen_lease_refuse()",
	NULL
};

/*
 * Whether the guards are there and enabled with the column they keep, and
 * the schema version the guard's body names: 0 where it is missing, 1 for
 * 1.3's guard, which names none.
 */
const char *const idgen_lease_sql_guards_present =
"SELECT (SELECT count(*) FROM pg_catalog.pg_trigger AS t "
"JOIN pg_catalog.pg_proc AS p ON p.oid = t.tgfoid "
"JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace "
"WHERE t.tgrelid = pg_catalog.to_regclass('public.idgen_lease') "
"AND t.tgenabled = 'O' AND n.nspname = 'public' AND "
"(t.tgname, p.proname) IN (('idgen_lease_guard', 'idgen_lease_guard'), "
"('idgen_lease_no_delete', 'idgen_lease_refuse'), "
"('idgen_lease_no_truncate', 'idgen_lease_refuse'))) = 3 "
"AND EXISTS (SELECT FROM pg_catalog.pg_attribute "
"WHERE attrelid = pg_catalog.to_regclass('public.idgen_lease') "
"AND attname IN ('stamped_until', 'lane', 'lane_ranges') AND NOT attisdropped "
"HAVING count(*) = 3), "
"coalesce((SELECT coalesce(pg_catalog.substring(p.prosrc, "
"'idgen lease guard, version ([0-9]{1,9})\\M')::pg_catalog.int4, 1) "
"FROM pg_catalog.pg_proc AS p "
"JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace "
"WHERE n.nspname = 'public' AND p.proname = 'idgen_lease_guard' "
"AND p.pronargs = 0), 0)";

/* The registry's clock, as the rounds read it. */
const char *const idgen_lease_sql_clock =
"SELECT " TIMESTAMPTZ_TO_UNIX_US("clock_timestamp()");

/* ---- backfill lanes (lane_lease.c) ---- */

/*
 * Lets the guard see a lane's take (a live server never makes one), after
 * the live statements of the round's transaction; their give-back is not
 * the lanes'.
 */
const char *const idgen_lease_sql_lane_session =
"SELECT pg_catalog.set_config('idgen_lease.lane', 'on', true), "
"pg_catalog.set_config('idgen_lease.giving_back', '', true)";

/*
 * The lanes' rows, locked: whether each was ever used live (a row leased
 * live or stamped), whether its lease has ended by the registry's clock,
 * and its ranges as "lo:hi" Unix microseconds (an unbounded end, which
 * only a hand could write, as far as it goes).
 */
const char *const idgen_lease_sql_lane_lock_rows =
"SELECT shard, owner, coalesce(owner_name, ''), lane, "
"valid_until IS NOT NULL OR stamped_until IS NOT NULL, "
"coalesce(valid_until < clock_timestamp(), true), "
"coalesce((SELECT pg_catalog.string_agg(coalesce("
TIMESTAMPTZ_TO_UNIX_US("pg_catalog.lower(r)") ", -9223372036854775807) || ':' || coalesce("
TIMESTAMPTZ_TO_UNIX_US("pg_catalog.upper(r)") ", 9223372036854775807), ',') "
"FROM pg_catalog.unnest(lane_ranges) AS r), '') "
"FROM public.idgen_lease WHERE shard = ANY ($1::integer[]) ORDER BY shard "
"FOR UPDATE SKIP LOCKED";

/* Take, renew ($2 this server's token) or give back (NULL) lane rows. */
const char *const idgen_lease_sql_lane_update_rows =
"UPDATE public.idgen_lease AS l SET owner = n.owner, lane = true, "
"owner_name = CASE WHEN n.owner IS NULL THEN l.owner_name ELSE $3 END, "
"valid_until = clock_timestamp() + "
"CASE WHEN n.owner IS NULL THEN interval '0' ELSE $4::bigint * interval '1 millisecond' END, "
"renewed_at = clock_timestamp() "
"FROM unnest($1::integer[], $2::text[]) AS n (shard, owner) "
"WHERE l.shard = n.shard";

/*
 * A lane's ranges, before its fences are published: only where the row is
 * still this server's ($4), whatever its valid_until says, since a row
 * taken by another server was taken with the ranges it held.
 */
const char *const idgen_lease_sql_lane_commit_ranges =
"WITH n AS (SELECT u.shard, pg_catalog.range_agg(pg_catalog.tstzrange("
UNIX_US_TO_TIMESTAMPTZ("u.lo") ", " UNIX_US_TO_TIMESTAMPTZ("u.hi") ", '[)')) AS r "
"FROM unnest($1::integer[], $2::bigint[], $3::bigint[]) AS u (shard, lo, hi) "
"GROUP BY u.shard) "
"UPDATE public.idgen_lease AS l SET lane_ranges = l.lane_ranges + n.r "
"FROM n WHERE l.shard = n.shard AND l.owner = $4 AND l.lane "
"RETURNING l.shard";
