/*-------------------------------------------------------------------------
 *
 * lease_worker.c
 *		The "idgen lease" worker: takes, renews and gives back this server's
 *		shard leases in the registry database.
 *
 * With idgen.lease_registry set, the registry's table public.idgen_lease
 * holds a row per shard: its owner, a token new at every server start (a
 * cloned data directory is another owner), and valid_until, no later than
 * which the owner stamps no ID of the shard.  This worker alone talks to
 * the registry (through registry.c); minters only compare the millisecond
 * they stamp with the lease's end it publishes in the gate (lease_gate.c).
 *
 * Why two servers' IDs never collide: an owner stamps only milliseconds
 * below its lease's end, and publishes an end only after the registry
 * committed it; a new owner takes a lease only when it has ended by the
 * registry's clock, or was given back, and raises the generator strictly
 * above the previous valid_until before it mints.  The two servers' IDs of
 * the shard are then in disjoint ranges of milliseconds, whatever their
 * clocks say and however long either was paused: clocks decide only when a
 * lease may pass on, never whether IDs can repeat.
 *
 * A round is plan, exchange, apply: in one registry transaction the rows
 * of the leases due are locked and read, each lease's action is planned
 * from its row, and the rows are written back; only once that committed
 * are the new ends established and published.  Stopping a shard's minting
 * never waits for the registry: it is always safe.
 *
 * With idgen.shard_pool, the server names no shard: a round that finds it
 * holding none claims one.  In the round's transaction, one statement
 * picks and locks a row of the pool that is this server's own (a crash
 * restart keeps the token), free or ended, skipping rows another round has
 * locked; the shard then goes through the same plan as any lease due
 * (a take above the previous owner's valid_until, or this server's own row
 * renewed and established above its previous_until), and is published
 * only once that committed.  Two servers can never both take one row: the
 * second either skips it while it is locked, or reads it, under the lock,
 * already owned and not ended.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lease_worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "common/int.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "generator.h"
#include "idgen_compat.h"
#include "layout.h"
#include "lease.h"
#include "lease_worker.h"
#include "registry.h"
#include "settings.h"
#include "shard.h"
#include "wait_event.h"
#include "worker.h"

/* A minter waiting for a lease brings a round at once, but not more often. */
#define ASKED_ROUND_GAP_US		(100 * 1000)

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
static const char *const lost_rows_sql =
"SELECT shard, coalesce(owner_name, '') FROM public.idgen_lease "
"WHERE shard = ANY ($1::pg_catalog.int4[]) AND owner IS DISTINCT FROM $2";

static const char *const giving_back_sql =
"SELECT pg_catalog.set_config('idgen_lease.giving_back', $1, true)";

static const char *const add_rows_sql =
"INSERT INTO public.idgen_lease (shard) SELECT unnest($1::integer[]) "
"ON CONFLICT (shard) DO NOTHING";

/* A pool's rows not yet there, ascending, so that two claims cannot deadlock. */
static const char *const add_pool_rows_sql =
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
 * plan_lease would refuse.  In READ COMMITTED a row another claim changed
 * meanwhile is checked again, as it is now, once locked.
 */
static const char *const claim_sql =
"SELECT l.shard FROM public.idgen_lease AS l "
"WHERE l.shard IN (SELECT s FROM unnest($1::integer[], $2::integer[]) AS r (lo, hi), "
"generate_series(r.lo, r.hi) AS s) "
"AND (l.owner = $3 OR ((l.owner IS NULL OR l.valid_until IS NULL "
"OR l.valid_until < clock_timestamp()) "
"AND coalesce(GREATEST(l.valid_until, l.stamped_until), '-infinity') <= "
"clock_timestamp() + $4::bigint * interval '1 millisecond')) "
"ORDER BY l.owner IS NOT DISTINCT FROM $3 DESC, "
"GREATEST(l.valid_until, l.stamped_until) NULLS FIRST, l.shard "
"LIMIT 1 FOR UPDATE OF l SKIP LOCKED";

static const char *const lock_rows_sql =
"SELECT shard, owner, owner_name, "
TIMESTAMPTZ_TO_UNIX_US("valid_until") ", "
TIMESTAMPTZ_TO_UNIX_US("previous_until") ", "
TIMESTAMPTZ_TO_UNIX_US("clock_timestamp()") ", "
TIMESTAMPTZ_TO_UNIX_US("stamped_until") " "
"FROM public.idgen_lease WHERE shard = ANY ($1::integer[]) ORDER BY shard "
"FOR UPDATE SKIP LOCKED";

static const char *const update_rows_sql =
"UPDATE public.idgen_lease AS l SET owner = n.owner, "
"owner_name = CASE WHEN n.owner IS NULL THEN l.owner_name ELSE $4 END, "
"valid_until = " UNIX_US_TO_TIMESTAMPTZ("n.until") ", "
"previous_until = CASE WHEN n.take THEN GREATEST(l.valid_until, l.stamped_until) "
"ELSE l.previous_until END, "
"renewed_at = clock_timestamp() "
"FROM unnest($1::integer[], $2::text[], $3::bigint[], $5::boolean[]) "
"AS n (shard, owner, until, take) "
"WHERE l.shard = n.shard";

/* ---- the rhythm ---- */

/*
 * Every time the worker keeps, derived from idgen.lease_duration (which a
 * reload may change) in one place.
 */
typedef struct LeaseRhythm
{
	/*
	 * A held lease is renewed with two thirds of it left: a third into it,
	 * so that two thirds remain for retries before its minters stop.
	 */
	int64		renew_left_ms;

	/*
	 * And a third after its last renewal by the monotonic clock: after the
	 * wall clock stepped back the end looks further away than it is.
	 */
	int64		renew_every_us;

	/*
	 * A round's time limit: a third of the lease, so that a hung registry
	 * cannot delay the next renewal; no more than 5 s, the longest an
	 * exchange is worth waiting for, and no less than 100 ms.
	 */
	int			round_ms;

	/*
	 * The registry's own statement, lock and idle timeouts: three quarters
	 * of a round, so that the registry gives up first, its answer still
	 * comes back, and no lock outlives a round the worker abandoned.
	 */
	int			registry_ms;

	/*
	 * After a failed round, or for a lease not held: a tenth of the lease,
	 * several tries within what is left of it, and at least every second.
	 */
	int64		retry_us;

	/* The worker wakes at least once a lease. */
	int			sleep_max_ms;
} LeaseRhythm;

static LeaseRhythm
lease_rhythm(void)
{
	LeaseRhythm r;
	int			d = idgen_lease_duration;

	r.renew_left_ms = 2 * (int64) d / 3;
	r.renew_every_us = (int64) d / 3 * 1000;
	r.round_ms = Min(5000, Max(d / 3, 100));
	r.registry_ms = Max(r.round_ms * 3 / 4, 50);
	r.retry_us = (int64) Min(1000, d / 10) * 1000;
	r.sleep_max_ms = d;
	return r;
}

/* ---- this server's leases ---- */

/* What a round does with one lease. */
typedef enum LeaseAction
{
	LEASE_NONE,					/* not due, its row not read, or left alone */
	LEASE_RENEW,				/* its row is this server's: extend it */
	LEASE_TAKE,					/* its row is free or ended: make it ours */
	LEASE_GIVE_BACK,			/* no longer wanted: free it, naming the last
								 * millisecond stamped */
	LEASE_REFUSED				/* another server holds it, or it cannot be
								 * taken yet: minting stops at once */
} LeaseAction;

/* This server's view of one shard it owns, or owned. */
typedef struct ShardLease
{
	int32		shard;
	bool		wanted;			/* the shard is in this server's settings */
	uint64		end;			/* as published in shared memory */
	int64		renewed_us;		/* monotonic start of the round that last took
								 * or renewed it; 0 for none */
	bool		warned;			/* "held by another" was logged */

	/* this round's plan, from its row; applied once the registry committed */
	bool		seen;			/* its row was locked and read */
	LeaseAction action;
	int64		new_end;		/* to publish, for a renewal or a take */
	int64		floor;			/* the previous owner's last millisecond, to
								 * establish above; -1 for none */
	int64		row_until;		/* the row's new valid_until, in ms */
} ShardLease;

/* A locked row of public.idgen_lease, in the layout's milliseconds. */
typedef struct LeaseRow
{
	int32		shard;
	const char *owner;			/* NULL: none */
	const char *owner_name;
	bool		never;			/* valid_until is NULL */
	int64		until_us;		/* valid_until, Unix microseconds; PG_INT64_MAX
								 * for infinity */
	int64		until_ms;		/* -1 for never */
	int64		previous_ms;	/* previous_until; -1 for none */
	int64		stamped_ms;		/* stamped_until; -1 for none */
	int64		registry_now_us;	/* the registry's clock */
	int64		registry_now_ms;
} LeaseRow;

static ShardLease *leases = NULL;
static char *owner_name = NULL; /* this server, for people reading the rows */
static int	nleases = 0;
static bool registry_failing = false;
static bool clocks_disagree = false;	/* why the last round failed */

/* With a pool: the shard held (published), or -1. */
static int32 pool_shard = -1;
/* This round claims a shard of the pool; the one it found, or -1. */
static bool claiming = false;
static int32 claimed_shard = -1;
static bool pool_warned = false;	/* "no shard of the pool is free" */

/* The layout's milliseconds to Unix microseconds and back. */
static int64
ms_to_unix_us(int64 ms)
{
	return idgen_ms_to_timestamptz(ms) + IDGEN_POSTGRES_EPOCH_UNIX_US;
}

static int64
unix_us_to_ms(int64 unix_us)
{
	int64		us = unix_us - IDGEN_POSTGRES_EPOCH_UNIX_US - idgen_layout.epoch;

	/* rounded down */
	return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

/*
 * The millisecond leases are measured against: the wall clock's, or the
 * generator's when it runs ahead (after a burst, a clock step back, a
 * take), since that is what minters stamp.
 */
static int64
lease_now(void)
{
	return Max(idgen_wall_ms(), idgen_generator_ms());
}

static void
publish_end(ShardLease *lease, uint64 end)
{
	lease->end = end;
	idgen_lease_publish(lease->shard, end);
}

/*
 * The shards this server wants: those in its settings, or with a pool the
 * one it claimed.
 */
static int
wanted_shards(int32 **shards)
{
	if (!idgen_pool_on)
		return idgen_owned_shards(shards);
	*shards = palloc(sizeof(int32));
	(*shards)[0] = pool_shard;
	return pool_shard >= 0 ? 1 : 0;
}

/* The shards wanted now, merged into leases. */
static void
refresh_wanted(void)
{
	int32	   *owned;
	int			nowned = wanted_shards(&owned);
	ShardLease *merged = palloc(sizeof(ShardLease) * (nowned + nleases));
	int			n = 0;
	int			i = 0;
	int			j = 0;

	/* both ascending */
	while (i < nowned || j < nleases)
	{
		if (j >= nleases || (i < nowned && owned[i] < leases[j].shard))
		{
			merged[n] = (ShardLease)
			{
				.shard = owned[i],.wanted = true,
					.end = idgen_lease_end(owned[i])
			};
			n++, i++;
		}
		else if (i >= nowned || leases[j].shard < owned[i])
		{
			/* no longer wanted: kept until given back */
			leases[j].wanted = false;
			if (leases[j].end > IDGEN_LEASE_NOT_HELD)
				merged[n++] = leases[j];
			j++;
		}
		else
		{
			merged[n] = leases[j];
			merged[n].wanted = true;
			n++, i++, j++;
		}
	}
	pfree(owned);
	if (leases)
		pfree(leases);
	leases = merged;
	nleases = n;
}

/*
 * Stop minting for the shards not wanted (all of them when giving back at
 * shut down) and say up to which millisecond each was stamped.
 *
 * Order matters.  Their ends go to IDGEN_LEASE_NOT_HELD first; then the
 * generator's state moves one step, by compare-and-swap.  A minter whose
 * compare-and-swap comes after that step read the state after it, so (the
 * read barrier of idgen_lease_end) it reads the end after it too, and does
 * not mint; one whose compare-and-swap came first minted at or below the
 * state stepped from.  So nothing of these shards is ever stamped above
 * the returned millisecond.
 */
static int64
stop_minting(bool all)
{
	bool		any = false;

	for (int i = 0; i < nleases; i++)
	{
		if ((all || !leases[i].wanted) && leases[i].end > IDGEN_LEASE_NOT_HELD)
		{
			idgen_lease_close(leases[i].shard);
			any = true;
		}
	}
	if (!any)
		return 0;
	pg_memory_barrier();
	return idgen_step_generator();
}

/*
 * A shard's lease is due for a round: to take, renew or give back.  A held
 * one is due with two thirds of it left by the clock minters stamp with,
 * and also a renewal period after its last renewal by the monotonic clock:
 * after that clock stepped back, the end looks further away than it is
 * (the registry ends it by its own clock), and a round is what finds out
 * that another server took the shard meanwhile.
 */
static bool
lease_due(ShardLease *lease, bool all, int64 now_ms, const LeaseRhythm *rhythm)
{
	if (all || !lease->wanted)
		return lease->end > IDGEN_LEASE_NOT_HELD;
	return lease->end <= IDGEN_LEASE_NOT_HELD ||
		(int64) lease->end - now_ms <= rhythm->renew_left_ms ||
		idgen_monotonic_us() - lease->renewed_us >= rhythm->renew_every_us;
}

/*
 * Establish a lease before minters may use it: the generator, durably,
 * strictly above the previous owner's last millisecond, as any mint waits
 * for the fence.  The registry keeps that millisecond (previous_until) as
 * long as the lease is this server's, so a take whose commit was not seen,
 * or a crash restart (shared memory reset, token kept), is established
 * again at the next round.
 */
static void
establish(int64 previous_until)
{
	if (previous_until >= 0)
		(void) idgen_raise_past(idgen_encode(previous_until, 0, 0));
}

/* ---- a round: plan, exchange, apply ---- */

static void
read_row(PGresult *rows, int r, LeaseRow *row)
{
	row->shard = pg_strtoint32(PQgetvalue(rows, r, 0));
	row->owner = PQgetisnull(rows, r, 1) ? NULL : PQgetvalue(rows, r, 1);
	row->owner_name = PQgetisnull(rows, r, 2) ? "" : PQgetvalue(rows, r, 2);
	row->never = PQgetisnull(rows, r, 3);
	row->until_us = row->never ? 0 : pg_strtoint64(PQgetvalue(rows, r, 3));
	row->until_ms = row->never ? -1 : unix_us_to_ms(row->until_us);
	row->previous_ms = PQgetisnull(rows, r, 4) ? -1 :
		unix_us_to_ms(pg_strtoint64(PQgetvalue(rows, r, 4)));
	row->registry_now_us = pg_strtoint64(PQgetvalue(rows, r, 5));
	row->registry_now_ms = unix_us_to_ms(row->registry_now_us);
	row->stamped_ms = PQgetisnull(rows, r, 6) ? -1 :
		unix_us_to_ms(pg_strtoint64(PQgetvalue(rows, r, 6)));
}

/*
 * Plan what to do with a due lease, from its locked row.  last_ms is the
 * last millisecond stamped for the leases stop_minting stopped.
 */
static void
plan_lease(ShardLease *lease, const LeaseRow *row, bool giving_back_all,
		   int64 now_ms, int64 last_ms)
{
	bool		mine = row->owner != NULL &&
		strcmp(row->owner, idgen_lease_owner()) == 0;

	if (giving_back_all || !lease->wanted)
	{
		/* only a lease minters used: its end was published */
		if (mine)
		{
			lease->action = LEASE_GIVE_BACK;
			/* the last millisecond that can carry an ID of it */
			lease->row_until = Min(last_ms, (int64) lease->end - 1);
		}
		return;
	}

	if (mine)
	{
		if (lease->end > IDGEN_LEASE_NOT_HELD && row->until_ms < (int64) lease->end - 1)
			ereport(WARNING,
					(errmsg("the lease registry row of shard %d ends before what this server was granted",
							row->shard),
					 errdetail("Its valid_until was moved back by hand; this server renews it, and the next owner still starts above %s.",
							   timestamptz_to_str(idgen_ms_to_timestamptz(Max(row->stamped_ms, (int64) lease->end - 1))))));
		lease->action = LEASE_RENEW;

		/*
		 * Established again at every renewal, not only when nothing is
		 * published: a take whose commit answer was lost finds its row
		 * "mine" next round while an older end of this server's may still
		 * stand in memory.  Above the generator already, it costs nothing.
		 */
		lease->floor = row->previous_ms;
	}
	else if (row->owner == NULL || row->never ||
			 row->until_us < row->registry_now_us)
	{
		/* whatever valid_until now says, the previous owner stamped up to here */
		int64		floor_ms = Max(row->until_ms, row->stamped_ms);

		/*
		 * A previous owner whose clock ran ahead: taking now would move this
		 * server's whole generator (every shard) ahead of its clock.
		 */
		if (floor_ms > row->registry_now_ms + idgen_max_lead)
		{
			if (!lease->warned)
				ereport(WARNING,
						(errmsg("shard %d was stamped up to %s, ahead of the lease registry's clock; this server takes its lease when that time comes",
								row->shard,
								timestamptz_to_str(idgen_ms_to_timestamptz(Min(floor_ms, idgen_max_ms()))))));
			lease->warned = true;
			lease->action = LEASE_REFUSED;
			return;
		}
		lease->action = LEASE_TAKE;
		lease->floor = floor_ms;
	}
	else
	{
		if (!lease->warned)
			ereport(WARNING,
					(errmsg("shard %d is leased to another server until %s; this server does not mint for it",
							row->shard,
							row->until_us == PG_INT64_MAX ? "infinity" :
							timestamptz_to_str((TimestampTz) (row->until_us - IDGEN_POSTGRES_EPOCH_UNIX_US))),
					 errdetail("The lease registry names its owner \"%s\".",
							   row->owner_name),
					 errhint("Give each server shards of its own in \"%s\" and \"%s\".",
							 "idgen.shard_id", "idgen.shard_ids")));
		lease->warned = true;
		lease->action = LEASE_REFUSED;
		return;
	}

	lease->new_end = Max(now_ms, lease->floor + 1) + idgen_lease_duration;
	/* a renewal never shortens what minters were told */
	if (lease->end > IDGEN_LEASE_NOT_HELD)
		lease->new_end = Max(lease->new_end, (int64) lease->end);
	lease->new_end = Min(lease->new_end, idgen_max_ms());
	lease->row_until = lease->new_end - 1;
}

/* A lease for shard in leases (ascending), wanted, not yet planned. */
static void
want_lease(int32 shard)
{
	int			i = 0;

	while (i < nleases && leases[i].shard < shard)
		i++;
	if (i < nleases && leases[i].shard == shard)
	{
		leases[i].wanted = true;
		return;
	}
	leases = leases ? repalloc(leases, sizeof(ShardLease) * (nleases + 1)) :
		MemoryContextAlloc(TopMemoryContext, sizeof(ShardLease));
	memmove(&leases[i + 1], &leases[i], sizeof(ShardLease) * (nleases - i));
	leases[i] = (ShardLease)
	{
		.shard = shard,.wanted = true,.end = idgen_lease_end(shard),
			.action = LEASE_NONE,.floor = -1
	};
	nleases++;
}

/*
 * In the exchange's transaction, before the rows are locked: claim a shard
 * of the pool, its row locked until the commit, and add it to the leases
 * due.  Finding none free is not a failure: the next round looks again.
 */
static bool
claim_pool_shard(const char **due_shards, int64 deadline, char **error)
{
	int32	   *lo;
	int32	   *hi;
	int			n = idgen_shard_pool_ranges(&lo, &hi);
	StringInfoData los;
	StringInfoData his;
	const char *params[4];
	PGresult   *rows;

	claimed_shard = -1;
	initStringInfo(&los);
	initStringInfo(&his);
	for (int i = 0; i < n; i++)
	{
		appendStringInfo(&los, "%s%d", i ? "," : "{", lo[i]);
		appendStringInfo(&his, "%s%d", i ? "," : "{", hi[i]);
	}
	appendStringInfoChar(&los, '}');
	appendStringInfoChar(&his, '}');
	params[0] = los.data;
	params[1] = his.data;
	if (!idgen_registry_command(add_pool_rows_sql, 2, params, deadline, error))
		return false;
	params[2] = idgen_lease_owner();
	params[3] = psprintf("%d", idgen_max_lead);
	rows = idgen_registry_exec(claim_sql, 4, params, deadline, error);
	if (rows == NULL)
		return false;
	if (PQntuples(rows) == 0)
	{
		if (!pool_warned)
			ereport(WARNING,
					(errmsg("no shard of \"%s\" is free in the idgen lease registry",
							"idgen.shard_pool"),
					 errdetail("Every shard of the pool is leased to another server, or being claimed by one; this server looks again every %d ms meanwhile, and does not mint.",
							   (int) (lease_rhythm().retry_us / 1000)),
					 errhint("Make \"%s\" larger, or stop a server that uses it.",
							 "idgen.shard_pool")));
		pool_warned = true;
		PQclear(rows);
		return true;
	}
	claimed_shard = pg_strtoint32(PQgetvalue(rows, 0, 0));
	PQclear(rows);
	want_lease(claimed_shard);
	if (strcmp(*due_shards, "{}") == 0)
		*due_shards = psprintf("{%d}", claimed_shard);
	else
		*due_shards = psprintf("%.*s,%d}", (int) strlen(*due_shards) - 1,
							   *due_shards, claimed_shard);
	return true;
}

/*
 * After a round, with a pool: a claim becomes the shard minters use once
 * its end was published; a claim not known to have committed is forgotten
 * (the row, if it did commit, names this server and ends with its lease:
 * the next claim finds it first); a shard found another's is let go, and
 * the next round claims again.
 */
static void
settle_pool(bool round_ok)
{
	ShardLease *claimed = NULL;
	ShardLease *held = NULL;

	for (int i = 0; i < nleases; i++)
	{
		if (leases[i].shard == claimed_shard)
			claimed = &leases[i];
		if (leases[i].shard == pool_shard)
			held = &leases[i];
	}
	if (claiming && claimed != NULL)
	{
		/* an end left in memory from before is no claim of this round's */
		if (round_ok && claimed->end > IDGEN_LEASE_NOT_HELD)
		{
			pool_shard = claimed_shard;
			idgen_lease_set_pool_shard(pool_shard);
			pool_warned = false;
			ereport(LOG,
					(errmsg("idgen claimed shard %d of \"%s\"",
							pool_shard, "idgen.shard_pool")));
		}
		else
			claimed->wanted = false;
	}
	else if (held != NULL && held->end == IDGEN_LEASE_NOT_HELD)
	{
		/* minting stopped when the round found it another's */
		ereport(WARNING,
				(errmsg("idgen lost the lease on shard %d of \"%s\"; it claims another",
						pool_shard, "idgen.shard_pool"),
				 errdetail("Another server took the shard after this server's lease ended unrenewed.")));
		idgen_lease_set_pool_shard(-1);
		pool_shard = -1;
	}
	claiming = false;
	claimed_shard = -1;
	/* leases no longer wanted and not held go; leases outlive the round */
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		refresh_wanted();
		MemoryContextSwitchTo(old);
	}
}

/*
 * This server's clock against the registry's, NTP-style: the registry read
 * its clock somewhere within the round trip, taken to be halfway, give or
 * take half of it.  Recorded for idgen_clock().  False, with *error naming
 * both clocks, when they are surely further apart than
 * idgen.max_clock_offset and refuse is set: a server so far off stamps
 * IDs with times its peers' do not sort with, so it stops taking and
 * renewing leases (uniqueness does not rest on it: a take always starts
 * above the previous owner's end, whatever the clocks).
 */
static bool
compare_clocks(bool refuse, int64 deadline, char **error)
{
	static const char *const clock_sql =
		"SELECT " TIMESTAMPTZ_TO_UNIX_US("clock_timestamp()");
	int64		local_us = GetCurrentTimestamp() + IDGEN_POSTGRES_EPOCH_UNIX_US;
	int64		sent_us = idgen_monotonic_us();
	int64		error_us;
	int64		registry_us;
	int64		offset_us;
	PGresult   *res;

	res = idgen_registry_exec(clock_sql, 0, NULL, deadline, error);
	if (res == NULL)
		return false;
	error_us = (idgen_monotonic_us() - sent_us) / 2;
	registry_us = pg_strtoint64(PQgetvalue(res, 0, 0));
	PQclear(res);
	local_us += error_us;
	offset_us = local_us - registry_us;
	idgen_lease_note_registry_clock(offset_us, error_us);

	clocks_disagree = refuse && idgen_max_clock_offset > 0 &&
		idgen_abs64(offset_us) - error_us > (int64) idgen_max_clock_offset * 1000;
	if (clocks_disagree)
	{
		/*
		 * timestamptz_to_str() returns a static buffer: copy each, one
		 * statement apiece (arguments are evaluated in no set order)
		 */
		char	   *ours = pstrdup(timestamptz_to_str((TimestampTz) (local_us - IDGEN_POSTGRES_EPOCH_UNIX_US)));
		char	   *theirs = pstrdup(timestamptz_to_str((TimestampTz) (registry_us - IDGEN_POSTGRES_EPOCH_UNIX_US)));

		*error = psprintf("this server's clock reads %s when the registry server's reads %s (%.1f ms %s, give or take %.1f ms), further apart than \"%s\" (%d ms); this server neither takes nor renews leases until they agree",
						  ours, theirs,
						  idgen_abs64(offset_us) / 1000.0, offset_us > 0 ? "ahead" : "behind",
						  error_us / 1000.0, "idgen.max_clock_offset",
						  idgen_max_clock_offset);
		return false;
	}
	return true;
}

/*
 * While the clocks disagree, nothing is taken or renewed, but a lease
 * another server now holds is still found and stopped: after this
 * server's clock stepped back, its lease's end looks further away than the
 * registry, which ends it by its own clock, says it is, and idgen_leases()
 * would go on showing "held".  A plain read of the rows; stopping is always
 * safe, and a failure changes nothing (the round has failed already).
 */
static void
stop_lost_leases(int64 deadline)
{
	StringInfoData held;
	const char *params[2];
	PGresult   *rows;
	char	   *ignored = NULL;

	initStringInfo(&held);
	for (int i = 0; i < nleases; i++)
		if (leases[i].end > IDGEN_LEASE_NOT_HELD)
			appendStringInfo(&held, "%s%d", held.len ? "," : "", leases[i].shard);
	if (held.len == 0)
		return;
	params[0] = psprintf("{%s}", held.data);
	params[1] = idgen_lease_owner();
	rows = idgen_registry_exec(lost_rows_sql, 2, params, deadline, &ignored);
	if (rows == NULL)
		return;
	for (int r = 0; r < PQntuples(rows); r++)
	{
		int32		shard = pg_strtoint32(PQgetvalue(rows, r, 0));

		for (int i = 0; i < nleases; i++)
			if (leases[i].shard == shard && leases[i].end > IDGEN_LEASE_NOT_HELD)
			{
				publish_end(&leases[i], IDGEN_LEASE_NOT_HELD);
				ereport(WARNING,
						(errmsg("shard %d is leased to another server; this server does not mint for it",
								shard),
						 errdetail("The lease registry names its owner \"%s\"; this server's clock disagrees with the registry's, so it takes and renews no lease until they agree.",
								   PQgetvalue(rows, r, 1))));
				leases[i].warned = true;
			}
	}
	PQclear(rows);
}

/*
 * The exchange: one registry transaction that locks and reads the rows of
 * the due shards, plans each due lease from its row, and writes the plans
 * back.  True once it committed; on failure, *error says why, and the
 * session is closed, which rolls the transaction back.
 */
static bool
exchange(const char *due_shards, bool giving_back_all, int64 last_ms,
		 const LeaseRhythm *rhythm, int64 deadline, char **error)
{
	const char *params[5];
	PGresult   *rows;
	int64		now_ms;
	StringInfoData upd_shards;
	StringInfoData upd_owners;
	StringInfoData upd_until;
	StringInfoData upd_take;
	bool		gives_back = false;

	clocks_disagree = false;
	if (!idgen_registry_ready(deadline, rhythm->registry_ms, error))
		return false;
	/* giving back is safe whatever the clocks say */
	if (!compare_clocks(!giving_back_all, deadline, error))
	{
		if (clocks_disagree)
			stop_lost_leases(deadline);
		return false;
	}
	if (!idgen_registry_begin(deadline, error))
		return false;
	/* with a pool and no shard held: claim one, its row locked until COMMIT */
	if (claiming && !claim_pool_shard(&due_shards, deadline, error))
		return false;
	params[0] = due_shards;
	if (!idgen_registry_command(add_rows_sql, 1, params, deadline, error))
		return false;
	/* rows another round holds are skipped: their turn comes next round */
	rows = idgen_registry_exec(lock_rows_sql, 1, params, deadline, error);
	if (rows == NULL)
		return false;

	/* plan, row by row (both lists are ascending) */
	now_ms = lease_now();
	for (int r = 0, i = 0; r < PQntuples(rows); r++)
	{
		LeaseRow	row;

		read_row(rows, r, &row);
		while (i < nleases && leases[i].shard < row.shard)
			i++;
		if (i >= nleases || leases[i].shard != row.shard ||
			!lease_due(&leases[i], giving_back_all, now_ms, rhythm))
			continue;
		leases[i].seen = true;
		plan_lease(&leases[i], &row, giving_back_all, now_ms, last_ms);
	}
	PQclear(rows);

	/* stopping is always safe: it does not wait for the commit */
	for (int i = 0; i < nleases; i++)
		if (leases[i].action == LEASE_REFUSED)
			publish_end(&leases[i], IDGEN_LEASE_NOT_HELD);

	initStringInfo(&upd_shards);
	initStringInfo(&upd_owners);
	initStringInfo(&upd_until);
	initStringInfo(&upd_take);
	for (int i = 0; i < nleases; i++)
	{
		ShardLease *lease = &leases[i];
		const char *sep = upd_shards.len ? "," : "";

		if (lease->action != LEASE_RENEW && lease->action != LEASE_TAKE &&
			lease->action != LEASE_GIVE_BACK)
			continue;
		gives_back |= lease->action == LEASE_GIVE_BACK;
		appendStringInfo(&upd_shards, "%s%d", sep, lease->shard);
		appendStringInfo(&upd_owners, "%s%s", sep,
						 lease->action == LEASE_GIVE_BACK ? "NULL" :
						 idgen_lease_owner());
		appendStringInfo(&upd_until, "%s" INT64_FORMAT, sep,
						 ms_to_unix_us(lease->row_until));
		appendStringInfo(&upd_take, "%s%s", sep,
						 lease->action == LEASE_TAKE ? "t" : "f");
	}
	if (upd_shards.len > 0)
	{
		/* lets the guard trigger lower stamped_until to what this server stamped */
		params[0] = idgen_lease_owner();
		if (gives_back &&
			!idgen_registry_command(giving_back_sql, 1, params, deadline, error))
			return false;
		params[0] = psprintf("{%s}", upd_shards.data);
		params[1] = psprintf("{%s}", upd_owners.data);
		params[2] = psprintf("{%s}", upd_until.data);
		params[3] = owner_name;
		params[4] = psprintf("{%s}", upd_take.data);
		if (!idgen_registry_command(update_rows_sql, 5, params, deadline, error))
			return false;
	}

	rows = idgen_registry_exec("COMMIT", 0, NULL, deadline, error);
	if (rows == NULL)
		return false;
	if (strcmp(PQcmdStatus(rows), "COMMIT") != 0)
	{
		*error = psprintf("the transaction ended in %s", PQcmdStatus(rows));
		PQclear(rows);
		idgen_registry_close();
		return false;
	}
	PQclear(rows);
	return true;
}

/*
 * The apply, once the registry committed: establish, then minters may use
 * what was taken or renewed; forget the leases no longer wanted that are
 * settled.
 */
static void
apply_round(int64 round_start_us)
{
	int			n = 0;

	for (int i = 0; i < nleases; i++)
	{
		ShardLease *lease = &leases[i];

		switch (lease->action)
		{
			case LEASE_RENEW:
			case LEASE_TAKE:
				{
					bool		first = lease->end <= IDGEN_LEASE_NOT_HELD;

					establish(lease->floor);
					if (lease->action == LEASE_TAKE && lease->floor >= 0)
						ereport(LOG,
								(errmsg("idgen took the lease on shard %d", lease->shard),
								 errdetail("IDs of the shard start after %s, where the previous lease ended.",
										   timestamptz_to_str(idgen_ms_to_timestamptz(lease->floor)))));
					else if (first)
						ereport(LOG,
								(errmsg("idgen holds the lease on shard %d", lease->shard)));
					publish_end(lease, (uint64) lease->new_end);
					lease->renewed_us = round_start_us;
					lease->warned = false;
					break;
				}
			case LEASE_GIVE_BACK:
				ereport(LOG,
						(errmsg("idgen gave back the lease on shard %d", lease->shard)));
				break;
			case LEASE_NONE:
			case LEASE_REFUSED:
				break;
		}
	}

	for (int i = 0; i < nleases; i++)
		if (leases[i].wanted || !leases[i].seen)
			leases[n++] = leases[i];
	nleases = n;
}

/* A failed round is logged once until the registry is reached again. */
static void
report_round(bool ok, bool giving_back_all, const char *error)
{
	if (!ok)
	{
		const char *hint = clocks_disagree ?
			"Check the time synchronisation (chrony, ntpd) of both servers; idgen_clock() shows what this server's kernel says of its clock." :
			idgen_registry_hint();

		/* a failed give-back is always worth a line: the lease now expires */
		if (!registry_failing || giving_back_all)
			ereport(WARNING,
					(errmsg("could not renew shard leases in the idgen lease registry: %s",
							idgen_registry_mask(error)),
					 giving_back_all ?
					 errdetail("The leases of this server were not given back; other servers take them once they end.") :
					 errdetail("Minting for a shard stops when its lease ends, %d ms after its last renewal, unless the registry is reached before.",
							   idgen_lease_duration),
					 hint ? errhint("%s", hint) :
					 errhint("Check \"%s\" and the registry server.",
							 "idgen.lease_registry")));
		registry_failing = true;
	}
	else
	{
		if (registry_failing)
			ereport(LOG,
					(errmsg("reached the idgen lease registry again, and the clocks agree")));
		registry_failing = false;
	}
}

/*
 * One round: take or renew the leases due, give back those no longer
 * wanted (all of them, at shut down).  Shared memory changes only after
 * the registry committed, except that minting stops first for a lease
 * given back, or one found another's.  False if it failed.
 */
static bool
lease_round(bool giving_back_all)
{
	LeaseRhythm rhythm = lease_rhythm();
	int64		now_ms = lease_now();
	StringInfoData due;
	int			ndue = 0;
	int64		round_start_us;
	int64		deadline;
	int64		last_ms;
	char	   *error = NULL;
	bool		ok;

	/* a fresh plan for every lease; which are due */
	initStringInfo(&due);
	appendStringInfoChar(&due, '{');
	for (int i = 0; i < nleases; i++)
	{
		ShardLease *lease = &leases[i];

		lease->seen = false;
		lease->action = LEASE_NONE;
		lease->new_end = 0;
		lease->floor = -1;
		lease->row_until = 0;
		if (lease_due(lease, giving_back_all, now_ms, &rhythm))
			appendStringInfo(&due, "%s%d", ndue++ ? "," : "", lease->shard);
	}
	appendStringInfoChar(&due, '}');
	claiming = idgen_pool_on && pool_shard < 0 && !giving_back_all;
	if (ndue == 0 && !claiming)
		return true;

	/* at a stop, minters wait for a shard instead of failing on this one */
	if (idgen_pool_on && giving_back_all)
		idgen_lease_set_pool_shard(-1);

	round_start_us = idgen_monotonic_us();
	deadline = round_start_us + (int64) rhythm.round_ms * 1000;
	last_ms = stop_minting(giving_back_all);

	/* a stop does not cut the round that gives the leases back short */
	idgen_registry_set_stoppable(!giving_back_all);
	ok = exchange(due.data, giving_back_all, last_ms, &rhythm, deadline, &error);
	idgen_registry_set_stoppable(true);

	if (ok)
		apply_round(round_start_us);
	if (idgen_pool_on)
		settle_pool(ok);
	report_round(ok, giving_back_all, error);
	return ok;
}

/* ---- the worker ---- */

static void
lease_worker_detach(int code, Datum arg)
{
	idgen_lease_set_worker_latch(NULL);
	idgen_registry_close();
}

/*
 * When the next round is due, in monotonic microseconds: the wall clock's
 * steps neither stretch nor shrink the rhythm.
 */
static int64
next_round_us(bool last_ok)
{
	LeaseRhythm rhythm = lease_rhythm();
	int64		now = lease_now();
	int64		mono = idgen_monotonic_us();
	int64		next = rhythm.renew_every_us;

	if (!last_ok)
		return mono + rhythm.retry_us;
	/* a pool's shard is claimed as soon as one is free */
	if (idgen_pool_on && pool_shard < 0)
		next = rhythm.retry_us;
	for (int i = 0; i < nleases; i++)
	{
		/* given back soon; not at once again while its row is locked */
		if (!leases[i].wanted)
			next = Min(next, ASKED_ROUND_GAP_US);
		if (leases[i].end <= IDGEN_LEASE_NOT_HELD)
			next = Min(next, rhythm.retry_us);
		else
		{
			/* when it is due (lease_due); retry if that passed */
			int64		renew = ((int64) leases[i].end -
								 rhythm.renew_left_ms - now) * 1000;

			renew = Min(renew, leases[i].renewed_us + rhythm.renew_every_us - mono);
			next = Min(next, renew > 0 ? renew : rhythm.retry_us);
		}
	}
	return mono + next;
}

void
idgen_lease_worker_main(Datum main_arg)
{
	bool		last_ok = true;
	int64		next_us;		/* monotonic, as every time below */
	int64		last_round_us = PG_INT64_MIN / 2;
	MemoryContext round_context;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	idgen_lease_set_worker_latch(MyLatch);
	before_shmem_exit(lease_worker_detach, 0);

	{
		char		host[256];

		if (gethostname(host, sizeof(host)) != 0)
			strlcpy(host, "?", sizeof(host));
		host[sizeof(host) - 1] = '\0';
		owner_name = MemoryContextStrdup(TopMemoryContext,
										 psprintf("%s port %d, system %llu, postmaster %d",
												  host, PostPortNumber,
												  (unsigned long long) GetSystemIdentifier(),
												  (int) getppid()));
	}
	round_context = AllocSetContextCreate(TopMemoryContext, "idgen lease round",
										  ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(TopMemoryContext);
	idgen_registry_init(idgen_lease_registry);
	refresh_wanted();
	next_us = idgen_monotonic_us();

	for (;;)
	{
		int64		now;
		bool		asked = false;

		if (ShutdownRequestPending)
		{
			/* a clean stop hands every lease back with its last ms */
			MemoryContextSwitchTo(round_context);
			(void) lease_round(true);
			MemoryContextSwitchTo(TopMemoryContext);

			/*
			 * Not 0: a worker stopped alone (pg_terminate_backend) must be
			 * started again; at shutdown the postmaster starts none.
			 */
			proc_exit(1);
		}
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			MemoryContextSwitchTo(TopMemoryContext);
			refresh_wanted();
			next_us = idgen_monotonic_us();
		}

		/* a minter waits: at once, but not more than every 100 ms */
		asked = idgen_lease_asked();
		now = idgen_monotonic_us();
		if (now >= next_us || (asked && now - last_round_us >= ASKED_ROUND_GAP_US))
		{
			MemoryContext old = MemoryContextSwitchTo(round_context);

			idgen_lease_clear_asked();
			last_ok = lease_round(false);
			MemoryContextSwitchTo(old);
			MemoryContextReset(round_context);
			last_round_us = now;
			next_us = next_round_us(last_ok);
		}
		else if (asked)
			next_us = Min(next_us, last_round_us + ASKED_ROUND_GAP_US);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(Min(idgen_ms_left(next_us), lease_rhythm().sleep_max_ms), 1),
						 idgen_wait_event_info(IDGEN_WAIT_LEASE_WORKER_MAIN));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* ---- SQL ---- */

PG_FUNCTION_INFO_V1(idgen_leases);

#define IDGEN_LEASES_COLS		4
#define IDGEN_LEASES_COLS_1_1	3	/* before since */

/*
 * This server's lease on each shard it owns: no rows without a registry.
 * valid_until is the last millisecond this server may stamp, since when
 * it holds the lease.  With a pool, the one row of the shard it claimed,
 * or a row without a shard, "claiming", while it holds none.
 */
Datum
idgen_leases(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int32	   *shards;
	int			nshards;
	int64		now;

	idgen_check_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	/* a database still at 1.1 declares every column but the last */
	if (rsinfo->setDesc->natts != IDGEN_LEASES_COLS &&
		rsinfo->setDesc->natts != IDGEN_LEASES_COLS_1_1)
		elog(ERROR, "idgen_leases() is declared with %d columns, expected %d",
			 rsinfo->setDesc->natts, IDGEN_LEASES_COLS);
	if (!idgen_leases_on)
		PG_RETURN_VOID();

	if (idgen_pool_on)
	{
		int32		held = idgen_pool_held();

		shards = palloc(sizeof(int32));
		shards[0] = held;
		nshards = held >= 0 ? 1 : 0;
		if (held < 0)
		{
			Datum		values[IDGEN_LEASES_COLS] = {0};
			bool		nulls[IDGEN_LEASES_COLS] = {true, false, true, true};

			values[1] = CStringGetTextDatum("claiming");
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	else
		nshards = idgen_owned_shards(&shards);
	now = lease_now();
	for (int i = 0; i < nshards; i++)
	{
		uint64		end = idgen_lease_end(shards[i]);
		TimestampTz since = idgen_lease_since(shards[i]);
		Datum		values[IDGEN_LEASES_COLS];
		bool		nulls[IDGEN_LEASES_COLS] = {false, false, false, false};

		values[0] = Int32GetDatum(shards[i]);
		if (end == IDGEN_LEASE_PENDING)
			values[1] = CStringGetTextDatum("pending");
		else if (end == IDGEN_LEASE_NOT_HELD)
			values[1] = CStringGetTextDatum("not held");
		else if ((int64) end <= now)
			values[1] = CStringGetTextDatum("expired");
		else
			values[1] = CStringGetTextDatum("held");
		if (end > IDGEN_LEASE_NOT_HELD)
			values[2] = TimestampTzGetDatum(idgen_ms_to_timestamptz((int64) end - 1));
		else
			nulls[2] = true;
		values[3] = TimestampTzGetDatum(since);
		nulls[3] = since == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/* ---- start ---- */

/* In _PG_init: the gate, and with leases on, the worker. */
void
idgen_lease_register(void)
{
	idgen_lease_gate_init();
	if (!idgen_leases_on)
		return;
	/* only a primary mints, so only a primary holds leases */
	idgen_register_worker("idgen lease", "idgen_lease_worker_main");
}
