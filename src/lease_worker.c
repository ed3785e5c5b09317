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

#include "generator.h"
#include "idgen_compat.h"
#include "layout.h"
#include "lane_lease.h"
#include "lease_gate.h"
#include "lease_pool.h"
#include "lease_set.h"
#include "lease_sql.h"
#include "lease_worker.h"
#include "registry.h"
#include "settings.h"
#include "shard.h"
#include "wait_event.h"
#include "worker.h"

/* A minter waiting for a lease brings a round at once, but not more often. */
#define ASKED_ROUND_GAP_US		(100 * 1000)

/* ---- this server's leases ---- */

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
	bool		lane;			/* a backfill lane's row */
} LeaseRow;

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
stop_minting(LeaseWorker *w, bool all)
{
	bool		any = false;

	for (int i = 0; i < w->nleases; i++)
	{
		if ((all || !w->leases[i].wanted) && w->leases[i].end > IDGEN_LEASE_NOT_HELD)
		{
			idgen_lease_close(w->leases[i].shard);
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
	row->until_ms = row->never ? -1 : idgen_lease_unix_us_to_ms(row->until_us);
	row->previous_ms = PQgetisnull(rows, r, 4) ? -1 :
		idgen_lease_unix_us_to_ms(pg_strtoint64(PQgetvalue(rows, r, 4)));
	row->registry_now_us = pg_strtoint64(PQgetvalue(rows, r, 5));
	row->registry_now_ms = idgen_lease_unix_us_to_ms(row->registry_now_us);
	row->stamped_ms = PQgetisnull(rows, r, 6) ? -1 :
		idgen_lease_unix_us_to_ms(pg_strtoint64(PQgetvalue(rows, r, 6)));
	row->lane = strcmp(PQgetvalue(rows, r, 7), "t") == 0;
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

	if (row->lane)
	{
		/* a lane's IDs sit at past milliseconds: never minted live */
		if (!lease->warned)
			ereport(WARNING,
					(errmsg("shard %d is a backfill lane in the lease registry; this server does not mint for it",
							row->shard),
					 errdetail("A lane's IDs sit at past milliseconds, which live IDs of the shard would reach."),
					 errhint("Name in \"%s\" and \"%s\" shards that no server uses as a backfill lane.",
							 "idgen.shard_id", "idgen.shard_ids")));
		lease->warned = true;
		lease->action = LEASE_REFUSED;
		return;
	}

	if (mine)
	{
		if (lease->end > IDGEN_LEASE_NOT_HELD && row->until_ms < (int64) lease->end - 1)
			ereport(WARNING,
					(errmsg("the lease registry row of shard %d ends before what this server was granted",
							row->shard),
					 errdetail("Its valid_until was moved back by hand; this server renews it, and the next owner still starts above %s.",
							   timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, Max(row->stamped_ms, (int64) lease->end - 1))))));
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
								timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, Min(floor_ms, idgen_max_ms(&idgen_layout)))))));
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
	lease->new_end = Min(lease->new_end, idgen_max_ms(&idgen_layout));
	lease->row_until = lease->new_end - 1;
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
compare_clocks(LeaseRound *round, bool refuse)
{
	int64		local_us = GetCurrentTimestamp() + IDGEN_POSTGRES_EPOCH_UNIX_US;
	int64		sent_us = idgen_monotonic_us();
	int64		error_us;
	int64		registry_us;
	int64		offset_us;
	PGresult   *res;

	res = idgen_registry_exec(idgen_lease_sql_clock, 0, NULL, round->deadline,
							  &round->error);
	if (res == NULL)
		return false;
	error_us = (idgen_monotonic_us() - sent_us) / 2;
	registry_us = pg_strtoint64(PQgetvalue(res, 0, 0));
	PQclear(res);
	local_us += error_us;
	offset_us = local_us - registry_us;
	idgen_lease_note_registry_clock(offset_us, error_us);

	round->clocks_disagree = refuse && idgen_max_clock_offset > 0 &&
		idgen_abs64(offset_us) - error_us > (int64) idgen_max_clock_offset * 1000;
	if (round->clocks_disagree)
	{
		/*
		 * timestamptz_to_str() returns a static buffer: copy each, one
		 * statement apiece (arguments are evaluated in no set order)
		 */
		char	   *ours = pstrdup(timestamptz_to_str((TimestampTz) (local_us - IDGEN_POSTGRES_EPOCH_UNIX_US)));
		char	   *theirs = pstrdup(timestamptz_to_str((TimestampTz) (registry_us - IDGEN_POSTGRES_EPOCH_UNIX_US)));

		round->error = psprintf("this server's clock reads %s when the registry server's reads %s (%.1f ms %s, give or take %.1f ms), further apart than \"%s\" (%d ms); this server neither takes nor renews leases until they agree",
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
stop_lost_leases(LeaseWorker *w, int64 deadline)
{
	StringInfoData held;
	const char *params[2];
	PGresult   *rows;
	char	   *ignored = NULL;

	initStringInfo(&held);
	for (int i = 0; i < w->nleases; i++)
		if (w->leases[i].end > IDGEN_LEASE_NOT_HELD)
			appendStringInfo(&held, "%s%d", held.len ? "," : "", w->leases[i].shard);
	if (held.len == 0)
		return;
	params[0] = psprintf("{%s}", held.data);
	params[1] = idgen_lease_owner();
	rows = idgen_registry_exec(idgen_lease_sql_lost_rows, 2, params, deadline, &ignored);
	if (rows == NULL)
		return;
	for (int r = 0; r < PQntuples(rows); r++)
	{
		int32		shard = pg_strtoint32(PQgetvalue(rows, r, 0));

		for (int i = 0; i < w->nleases; i++)
			if (w->leases[i].shard == shard && w->leases[i].end > IDGEN_LEASE_NOT_HELD)
			{
				idgen_lease_publish_end(&w->leases[i], IDGEN_LEASE_NOT_HELD);
				ereport(WARNING,
						(errmsg("shard %d is leased to another server; this server does not mint for it",
								shard),
						 errdetail("The lease registry names its owner \"%s\"; this server's clock disagrees with the registry's, so it takes and renews no lease until they agree.",
								   PQgetvalue(rows, r, 1))));
				w->leases[i].warned = true;
			}
	}
	PQclear(rows);
}

/*
 * The live shards' statements in the round's transaction: lock and read
 * the rows of the due shards, plan each due lease from its row, and write
 * the plans back.  False, with round->error, if one failed.
 */
static bool
live_statements(LeaseWorker *w, LeaseRound *round, const char *due_shards)
{
	const char *params[5];
	PGresult   *rows;
	int64		now_ms;
	StringInfoData upd_shards;
	StringInfoData upd_owners;
	StringInfoData upd_until;
	StringInfoData upd_take;
	bool		gives_back = false;

	/* with a pool and no shard held: claim one, its row locked until COMMIT */
	if (round->claiming && !idgen_pool_claim(w, round, &due_shards))
		return false;
	params[0] = due_shards;
	if (!idgen_registry_command(idgen_lease_sql_add_rows, 1, params,
									round->deadline, &round->error))
		return false;
	/* rows another round holds are skipped: their turn comes next round */
	rows = idgen_registry_exec(idgen_lease_sql_lock_rows, 1, params,
							   round->deadline, &round->error);
	if (rows == NULL)
		return false;

	/* plan, row by row (both lists are ascending) */
	now_ms = idgen_lease_now();
	for (int r = 0, i = 0; r < PQntuples(rows); r++)
	{
		LeaseRow	row;

		read_row(rows, r, &row);
		while (i < w->nleases && w->leases[i].shard < row.shard)
			i++;
		if (i >= w->nleases || w->leases[i].shard != row.shard ||
			!lease_due(&w->leases[i], round->giving_back_all, now_ms, &round->rhythm))
			continue;
		w->leases[i].seen = true;
		plan_lease(&w->leases[i], &row, round->giving_back_all, now_ms, round->last_ms);
	}
	PQclear(rows);

	/* stopping is always safe: it does not wait for the commit */
	for (int i = 0; i < w->nleases; i++)
		if (w->leases[i].action == LEASE_REFUSED)
			idgen_lease_publish_end(&w->leases[i], IDGEN_LEASE_NOT_HELD);

	initStringInfo(&upd_shards);
	initStringInfo(&upd_owners);
	initStringInfo(&upd_until);
	initStringInfo(&upd_take);
	for (int i = 0; i < w->nleases; i++)
	{
		ShardLease *lease = &w->leases[i];
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
						 idgen_lease_ms_to_unix_us(lease->row_until));
		appendStringInfo(&upd_take, "%s%s", sep,
						 lease->action == LEASE_TAKE ? "t" : "f");
	}
	if (upd_shards.len == 0)
		return true;
	/* lets the guard trigger lower stamped_until to what this server stamped */
	params[0] = idgen_lease_owner();
	if (gives_back &&
		!idgen_registry_command(idgen_lease_sql_giving_back, 1, params,
								round->deadline, &round->error))
		return false;
	params[0] = psprintf("{%s}", upd_shards.data);
	params[1] = psprintf("{%s}", upd_owners.data);
	params[2] = psprintf("{%s}", upd_until.data);
	params[3] = w->owner_name;
	params[4] = psprintf("{%s}", upd_take.data);
	return idgen_registry_command(idgen_lease_sql_update_rows, 5, params,
								  round->deadline, &round->error);
}

/*
 * The exchange: one registry transaction for the live shards due (when
 * due_shards is not NULL) and the lanes' rows (when lanes).  True once it
 * committed; on failure, round->error says why, and the session is closed,
 * which rolls the transaction back.  Clocks that disagree fail the live
 * part alone (round->clocks_disagree): the lanes' rows go on, since no
 * clock says what a lane minted.
 */
static bool
exchange(LeaseWorker *w, LeaseRound *round, const char *due_shards, bool lanes)
{
	round->clocks_disagree = false;
	if (!idgen_registry_ready(round->deadline, round->rhythm.registry_ms,
							  &round->error))
		return false;
	/* giving back is safe whatever the clocks say */
	if (due_shards != NULL && !compare_clocks(round, !round->giving_back_all))
	{
		if (!round->clocks_disagree)
			return false;
		stop_lost_leases(w, round->deadline);
		if (!lanes)
			return false;
		/* the live part's failure is the clocks', whatever the lanes meet */
		round->clocks_error = round->error;
		round->error = NULL;
		due_shards = NULL;
		if (!idgen_registry_ready(round->deadline, round->rhythm.registry_ms,
								  &round->error))
			return false;
	}
	if (!idgen_registry_begin(round->deadline, &round->error))
		return false;
	if (due_shards != NULL && !live_statements(w, round, due_shards))
		return false;
	if (lanes && !idgen_lane_leases_exchange(round->deadline, w->owner_name,
											 &round->error))
		return false;
	return idgen_registry_commit(round->deadline, &round->error);
}

/*
 * The apply, once the registry committed: establish, then minters may use
 * what was taken or renewed; forget the leases no longer wanted that are
 * settled.
 */
static void
apply_round(LeaseWorker *w, LeaseRound *round)
{
	int			n = 0;

	for (int i = 0; i < w->nleases; i++)
	{
		ShardLease *lease = &w->leases[i];

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
										   timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, lease->floor)))));
					else if (first)
						ereport(LOG,
								(errmsg("idgen holds the lease on shard %d", lease->shard)));
					idgen_lease_publish_end(lease, (uint64) lease->new_end);
					lease->renewed_us = round->start_us;
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

	for (int i = 0; i < w->nleases; i++)
		if (w->leases[i].wanted || !w->leases[i].seen)
			w->leases[n++] = w->leases[i];
	w->nleases = n;
}

/* A failed round is logged once until the registry is reached again. */
static void
report_round(LeaseWorker *w, const LeaseRound *round, bool ok)
{
	if (!ok)
	{
		const char *hint = round->clocks_disagree ?
			"Check the time synchronisation (chrony, ntpd) of both servers; idgen_clock() shows what this server's kernel says of its clock." :
			idgen_registry_hint();

		/* a failed give-back is always worth a line: the lease now expires */
		if (!w->registry_failing || round->giving_back_all)
			ereport(WARNING,
					(errmsg("could not renew shard leases in the idgen lease registry: %s",
							idgen_registry_mask(round->clocks_error ?
												round->clocks_error : round->error)),
					 round->giving_back_all ?
					 errdetail("The leases of this server were not given back; other servers take them once they end.") :
					 errdetail("Minting for a shard stops when its lease ends, %d ms after its last renewal, unless the registry is reached before.",
							   idgen_lease_duration),
					 hint ? errhint("%s", hint) :
					 errhint("Check \"%s\" and the registry server.",
							 "idgen.lease_registry")));
		w->registry_failing = true;
	}
	else
	{
		if (w->registry_failing)
			ereport(LOG,
					(errmsg("reached the idgen lease registry again, and the clocks agree")));
		w->registry_failing = false;
	}
}

/*
 * One round, one registry transaction: when live is set, take or renew
 * the leases due and give back those no longer wanted (all of them, at
 * shut down); the lanes' rows too when theirs is due (lane_lease.c).
 * Shared memory changes only after the registry committed, except that
 * minting stops first for a lease given back, or one found another's.
 * False if the live part failed.
 */
static bool
lease_round(LeaseWorker *w, bool giving_back_all, bool live)
{
	LeaseRound	round = {
		.giving_back_all = giving_back_all,
		.rhythm = idgen_lease_rhythm(),
		.claimed_shard = -1,
	};
	int64		now_ms = idgen_lease_now();
	StringInfoData due;
	int			ndue = 0;
	bool		lanes;
	bool		ok;

	/* a fresh plan for every lease; which are due */
	initStringInfo(&due);
	appendStringInfoChar(&due, '{');
	for (int i = 0; live && i < w->nleases; i++)
	{
		ShardLease *lease = &w->leases[i];

		lease->seen = false;
		lease->action = LEASE_NONE;
		lease->new_end = 0;
		lease->floor = -1;
		lease->row_until = 0;
		if (lease_due(lease, giving_back_all, now_ms, &round.rhythm))
			appendStringInfo(&due, "%s%d", ndue++ ? "," : "", lease->shard);
	}
	appendStringInfoChar(&due, '}');
	round.claiming = live && idgen_pool_on && w->pool_shard < 0 && !giving_back_all;
	live = ndue > 0 || round.claiming;
	lanes = idgen_lane_leases_begin(&round.rhythm, giving_back_all);
	if (!live && !lanes)
		return true;

	/* at a stop, minters wait for a shard instead of failing on this one */
	if (idgen_pool_on && giving_back_all)
		idgen_lease_set_pool_shard(-1);

	round.start_us = idgen_monotonic_us();
	round.deadline = round.start_us + (int64) round.rhythm.round_ms * 1000;
	if (live)
		round.last_ms = stop_minting(w, giving_back_all);

	/* a stop does not cut the round that gives the leases back short */
	idgen_registry_set_stoppable(!giving_back_all);
	ok = exchange(w, &round, live ? due.data : NULL, lanes);
	idgen_registry_set_stoppable(true);

	if (lanes)
		idgen_lane_leases_end(ok, round.error);
	if (!live)
		return true;
	ok &= !round.clocks_disagree;
	if (ok)
		apply_round(w, &round);
	if (idgen_pool_on)
		idgen_pool_settle(w, &round, ok);
	report_round(w, &round, ok);
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
next_round_us(const LeaseWorker *w, bool last_ok)
{
	LeaseRhythm rhythm = idgen_lease_rhythm();
	int64		now = idgen_lease_now();
	int64		mono = idgen_monotonic_us();
	int64		next = rhythm.renew_every_us;

	if (!last_ok)
		return mono + rhythm.retry_us;
	/* a pool's shard is claimed as soon as one is free */
	if (idgen_pool_on && w->pool_shard < 0)
		next = rhythm.retry_us;
	for (int i = 0; i < w->nleases; i++)
	{
		/* given back soon; not at once again while its row is locked */
		if (!w->leases[i].wanted)
			next = Min(next, ASKED_ROUND_GAP_US);
		if (w->leases[i].end <= IDGEN_LEASE_NOT_HELD)
			next = Min(next, rhythm.retry_us);
		else
		{
			/* when it is due (lease_due); retry if that passed */
			int64		renew = ((int64) w->leases[i].end -
								 rhythm.renew_left_ms - now) * 1000;

			renew = Min(renew, w->leases[i].renewed_us + rhythm.renew_every_us - mono);
			next = Min(next, renew > 0 ? renew : rhythm.retry_us);
		}
	}
	return mono + next;
}

/* The worker's state, for its life; each round's is lease_round's. */
static LeaseWorker worker = {.pool_shard = -1};

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
		worker.owner_name = MemoryContextStrdup(TopMemoryContext,
										 psprintf("%s port %d, system %llu, postmaster %d",
												  host, PostPortNumber,
												  (unsigned long long) GetSystemIdentifier(),
												  (int) getppid()));
	}
	round_context = AllocSetContextCreate(TopMemoryContext, "idgen lease round",
										  ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(TopMemoryContext);
	idgen_registry_init(idgen_lease_registry);
	idgen_leases_refresh(&worker);
	idgen_lane_leases_refresh();
	next_us = idgen_monotonic_us();

	for (;;)
	{
		int64		now;
		bool		asked = false;
		bool		live;
		MemoryContext old;

		if (ShutdownRequestPending)
		{
			/* a clean stop hands every lease back with its last ms */
			MemoryContextSwitchTo(round_context);
			(void) lease_round(&worker, true, true);
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
			idgen_leases_refresh(&worker);
			idgen_lane_leases_refresh();
			next_us = idgen_monotonic_us();
		}

		/*
		 * The live leases when due, and a minter waiting brings them at
		 * once, but not more than every 100 ms; the lanes' rows when due,
		 * or a fence waits for them.  Both in one round when both are.
		 */
		asked = idgen_lease_asked();
		now = idgen_monotonic_us();
		live = now >= next_us || (asked && now - last_round_us >= ASKED_ROUND_GAP_US);
		if (live)
			idgen_lease_clear_asked();
		old = MemoryContextSwitchTo(round_context);
		if (live)
		{
			last_ok = lease_round(&worker, false, true);
			last_round_us = now;
			next_us = next_round_us(&worker, last_ok);
		}
		else
		{
			(void) lease_round(&worker, false, false);
			if (asked)
				next_us = Min(next_us, last_round_us + ASKED_ROUND_GAP_US);
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(round_context);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(Min(idgen_ms_left(Min(next_us, idgen_lane_leases_next_us())),
								 idgen_lease_rhythm().sleep_max_ms), 1),
						 idgen_wait_event_info(IDGEN_WAIT_LEASE_WORKER_MAIN));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
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
