/*-------------------------------------------------------------------------
 *
 * lane_lease.c
 *		The backfill lanes' rows in the lease registry, kept by the lease
 *		worker beside the live shards' leases.
 *
 * A lane mints at past milliseconds, so the wall clock fences nothing and
 * a lease's end cannot say what its holder minted.  The row says it
 * instead: lane_ranges, the milliseconds the lane has used, which only
 * grow (the registry's guard unites every update with what was there).  A
 * lane's fence is published only once the registry holds its open range
 * up to that fence, in a transaction that finds the row still this
 * server's; a server taking the row adds its ranges to the lane's used
 * ranges before the lane mints.  So a holder deposed while paused or cut
 * off mints only below fences its row held when it was taken, and the
 * next holder mints only outside them; clocks decide only when a row may
 * pass on (its valid_until, by the registry's clock, as a live lease).
 *
 * A lane's row is marked lane, which it stays; a row ever leased live
 * never becomes one, and a live server refuses a lane's row.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lane_lease.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "libpq-fe.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "lane.h"
#include "lane_lease.h"
#include "lease_gate.h"
#include "lease_sql.h"
#include "registry.h"
#include "settings.h"
#include "shard.h"

/* What a round does with one lane's row. */
typedef enum LaneAction
{
	LANE_NONE,					/* its row locked by another round */
	LANE_HOLD,					/* ours, or free: take or renew it */
	LANE_GIVE_BACK,				/* at a clean stop */
	LANE_REFUSED				/* another server's, or a live row */
} LaneAction;

typedef struct LaneLease
{
	int32		shard;
	bool		held;			/* its row is ours, and its ranges merged */
	bool		take;			/* this round: its row was not ours, or not
								 * held here: merge its ranges */
	int64		renewed_us;		/* monotonic, the last round that held it */
	bool		warned;			/* a refusal was logged */

	/* this round's */
	LaneAction	action;
	int			nranges;		/* its row's ranges, in the layout's ms */
	int64	   *lo;
	int64	   *hi;
} LaneLease;

/* The lease worker's, for its life. */
static struct
{
	LaneLease  *lanes;			/* in TopMemoryContext, ascending */
	int			n;
	bool		failing;		/* the last round failed: logged once */
	int64		last_round_us;
} lane_leases;

/* The lanes named now; a lane no longer named is given up. */
void
idgen_lane_leases_refresh(void)
{
	int32		shards[IDGEN_MAX_LANES];
	int			n = idgen_lane_shards(shards);
	LaneLease  *lanes = MemoryContextAllocZero(TopMemoryContext,
											   sizeof(LaneLease) * Max(n, 1));

	for (int i = 0; i < n; i++)
	{
		lanes[i].shard = shards[i];
		for (int j = 0; j < lane_leases.n; j++)
			if (lane_leases.lanes[j].shard == shards[i])
				lanes[i] = lane_leases.lanes[j];
	}
	for (int j = 0; j < lane_leases.n; j++)
	{
		bool		kept = false;

		for (int i = 0; i < n; i++)
			kept |= lanes[i].shard == lane_leases.lanes[j].shard;
		if (!kept && lane_leases.lanes[j].held)
			idgen_lanes_lease_lost(lane_leases.lanes[j].shard);
	}
	if (lane_leases.lanes)
		pfree(lane_leases.lanes);
	lane_leases.lanes = lanes;
	lane_leases.n = n;
}

/* When the next round is due, monotonic; now when fences wait for one. */
static int64
next_round_us(const LeaseRhythm *rhythm)
{
	int64		next = PG_INT64_MAX;
	bool		waiting;

	if (lane_leases.n == 0)
		return next;
	waiting = idgen_lanes_pending(NULL);
	if (waiting || lane_leases.failing)
		return lane_leases.last_round_us +
			(waiting && !lane_leases.failing ? 0 : rhythm->retry_us);
	for (int i = 0; i < lane_leases.n; i++)
		next = Min(next, lane_leases.lanes[i].held ?
				   lane_leases.lanes[i].renewed_us + rhythm->renew_every_us :
				   lane_leases.last_round_us + rhythm->retry_us);
	return next;
}

/* "lo:hi,..." in Unix microseconds, as the layout's milliseconds. */
static void
parse_ranges(LaneLease *lane, const char *text)
{
	int			cap = 1;
	const char *p = text;
	int64		reach = idgen_max_ms(&idgen_layout) + 1;

	for (const char *c = text; *c; c++)
		cap += *c == ',';
	lane->lo = palloc(sizeof(int64) * cap);
	lane->hi = palloc(sizeof(int64) * cap);
	lane->nranges = 0;
	while (*p != '\0')
	{
		char	   *end;
		int64		lo_us = strtoi64(p, &end, 10);
		int64		hi_us;

		if (*end != ':')
			elog(ERROR, "malformed lane ranges from the lease registry: \"%s\"", text);
		hi_us = strtoi64(end + 1, &end, 10);
		/*
		 * Rounded outwards (an inclusive end, a range written by hand), and
		 * kept whole, whatever this server's clock and settings: another
		 * holder's fences may lie past where this one would put its own.
		 * What a far end would do to the live generator is capped where the
		 * floor is taken (idgen_lanes_floor_ms).
		 */
		lane->lo[lane->nranges] = Max(idgen_lease_unix_us_to_ms(Max(lo_us, PG_INT64_MIN / 2)), 0);
		lane->hi[lane->nranges] = Min(idgen_lease_unix_us_to_ms(Min(hi_us, PG_INT64_MAX / 2)) + 1,
									  reach);
		if (lane->lo[lane->nranges] < lane->hi[lane->nranges])
			lane->nranges++;
		if (*end == ',')
			end++;
		else if (*end != '\0')
			elog(ERROR, "malformed lane ranges from the lease registry: \"%s\"", text);
		p = end;
	}
}

static void
plan_lane(LaneLease *lane, PGresult *rows, int r, bool giving_back_all)
{
	const char *owner = PQgetisnull(rows, r, 1) ? NULL : PQgetvalue(rows, r, 1);
	bool		mine = owner != NULL && strcmp(owner, idgen_lease_owner()) == 0;
	bool		is_lane = strcmp(PQgetvalue(rows, r, 3), "t") == 0;
	bool		used_live = strcmp(PQgetvalue(rows, r, 4), "t") == 0;
	bool		ended = strcmp(PQgetvalue(rows, r, 5), "t") == 0;

	/*
	 * A lane that cannot mint here (not attested, its past unknown) takes
	 * no row, and gives back its own, for a server that can.
	 */
	if (giving_back_all || !idgen_lanes_usable(lane->shard))
	{
		lane->action = mine && is_lane ? LANE_GIVE_BACK : LANE_NONE;
		return;
	}
	if (!is_lane && used_live)
	{
		if (!lane->warned)
			ereport(WARNING,
					(errmsg("shard %d was leased live and cannot be a backfill lane", lane->shard),
					 errdetail("Its live IDs sit at the past milliseconds a lane would mint at."),
					 errhint("Name in \"%s\" shards that no server has leased live.",
							 "idgen.backfill_shards")));
		lane->warned = true;
		lane->action = LANE_REFUSED;
		return;
	}
	if (mine || owner == NULL || (is_lane && ended))
	{
		/*
		 * A row not ours was another server's since, however briefly: what
		 * it used is merged, and the open range closes, though this server
		 * never noticed it lost the row.
		 */
		lane->action = LANE_HOLD;
		lane->take = !mine || !lane->held;
		parse_ranges(lane, PQgetvalue(rows, r, 6));
		return;
	}
	if (!lane->warned)
		ereport(WARNING,
				(errmsg("backfill lane %d is leased to another server; this server does not mint on it",
						lane->shard),
				 errdetail("The lease registry names its owner \"%s\".", PQgetvalue(rows, r, 2)),
				 errhint("Give each server lanes of its own in \"%s\"; a lane passes on when its holder's lease ends.",
						 "idgen.backfill_shards")));
	lane->warned = true;
	lane->action = LANE_REFUSED;
}

/* Append a lane's ranges in a written table to the commit's arrays. */
static void
append_ranges(const IdgenLanesPending *pending, int32 shard, StringInfo shards,
			  StringInfo los, StringInfo his)
{
	const IdgenLaneTable *table = &pending->table;

	for (int i = 0; i < table->nlanes; i++)
	{
		const IdgenLaneEntry *entry = &table->lanes[i];

		if (entry->shard != shard)
			continue;
		for (int j = 0; j < entry->nranges; j++)
		{
			const char *sep = shards->len ? "," : "";

			appendStringInfo(shards, "%s%d", sep, shard);
			appendStringInfo(los, "%s" INT64_FORMAT, sep,
							 idgen_lease_ms_to_unix_us(entry->ranges[j].lo));
			appendStringInfo(his, "%s" INT64_FORMAT, sep,
							 idgen_lease_ms_to_unix_us(entry->ranges[j].hi));
		}
	}
}

/* This round's part, from idgen_lane_leases_begin to _end. */
static struct
{
	bool		giving_back_all;
	bool		has_pending;
	IdgenLanesPending *pending;
	int64		start_us;
	int32	   *committed;
	int			ncommitted;
} part;

/*
 * Whether the lanes' rows go into the round the lease worker is about to
 * run: when due, or a fence waits for them, or at a stop.  Sets up their
 * part, in the round's memory.
 */
bool
idgen_lane_leases_begin(const LeaseRhythm *rhythm, bool giving_back_all)
{
	if (lane_leases.n == 0 ||
		(!giving_back_all && idgen_monotonic_us() < next_round_us(rhythm)))
		return false;
	memset(&part, 0, sizeof(part));
	part.giving_back_all = giving_back_all;
	part.pending = palloc(sizeof(IdgenLanesPending));
	part.has_pending = !giving_back_all && idgen_lanes_pending(part.pending);
	part.start_us = idgen_monotonic_us();
	lane_leases.last_round_us = part.start_us;
	for (int i = 0; i < lane_leases.n; i++)
	{
		lane_leases.lanes[i].action = LANE_NONE;
		lane_leases.lanes[i].take = false;
	}
	return true;
}

/*
 * The lanes' statements, in the round's registry transaction (after the
 * live shards', since the session then says it takes lanes): lock the
 * lanes' rows, take or renew those this server may hold (give them back at
 * a clean stop), and add the ranges of the table written last.  False,
 * with *error, if one failed.
 */
bool
idgen_lane_leases_exchange(int64 deadline, const char *owner_name, char **error)
{
	StringInfoData all;
	StringInfoData upd_shards;
	StringInfoData upd_owners;
	StringInfoData c_shards;
	StringInfoData c_lo;
	StringInfoData c_hi;
	const char *params[4];
	PGresult   *rows;

	initStringInfo(&all);
	for (int i = 0; i < lane_leases.n; i++)
		appendStringInfo(&all, "%s%d", i ? "," : "", lane_leases.lanes[i].shard);
	if (!idgen_registry_command(idgen_lease_sql_lane_session, 0, NULL, deadline, error))
		return false;
	params[0] = psprintf("{%s}", all.data);
	if (!part.giving_back_all &&
		!idgen_registry_command(idgen_lease_sql_add_rows, 1, params, deadline, error))
		return false;
	rows = idgen_registry_exec(idgen_lease_sql_lane_lock_rows, 1, params, deadline, error);
	if (rows == NULL)
		return false;
	for (int r = 0; r < PQntuples(rows); r++)
	{
		int32		shard = pg_strtoint32(PQgetvalue(rows, r, 0));

		for (int i = 0; i < lane_leases.n; i++)
			if (lane_leases.lanes[i].shard == shard)
				plan_lane(&lane_leases.lanes[i], rows, r, part.giving_back_all);
	}
	PQclear(rows);

	initStringInfo(&upd_shards);
	initStringInfo(&upd_owners);
	initStringInfo(&c_shards);
	initStringInfo(&c_lo);
	initStringInfo(&c_hi);
	for (int i = 0; i < lane_leases.n; i++)
	{
		LaneLease  *lane = &lane_leases.lanes[i];
		const char *sep = upd_shards.len ? "," : "";

		if (lane->action != LANE_HOLD && lane->action != LANE_GIVE_BACK)
			continue;
		appendStringInfo(&upd_shards, "%s%d", sep, lane->shard);
		appendStringInfo(&upd_owners, "%s%s", sep,
						 lane->action == LANE_HOLD ? idgen_lease_owner() : "NULL");
		if (lane->action == LANE_HOLD && part.has_pending)
			append_ranges(part.pending, lane->shard, &c_shards, &c_lo, &c_hi);
	}
	if (upd_shards.len > 0)
	{
		params[0] = psprintf("{%s}", upd_shards.data);
		params[1] = psprintf("{%s}", upd_owners.data);
		params[2] = owner_name;
		params[3] = psprintf("%d", idgen_lease_duration);
		if (!idgen_registry_command(idgen_lease_sql_lane_update_rows, 4, params,
									deadline, error))
			return false;
	}
	if (c_shards.len > 0)
	{
		params[0] = psprintf("{%s}", c_shards.data);
		params[1] = psprintf("{%s}", c_lo.data);
		params[2] = psprintf("{%s}", c_hi.data);
		params[3] = idgen_lease_owner();
		rows = idgen_registry_exec(idgen_lease_sql_lane_commit_ranges, 4, params,
								   deadline, error);
		if (rows == NULL)
			return false;
		part.committed = palloc(sizeof(int32) * Max(PQntuples(rows), 1));
		for (int r = 0; r < PQntuples(rows); r++)
			part.committed[part.ncommitted++] = pg_strtoint32(PQgetvalue(rows, r, 0));
		PQclear(rows);
	}
	return true;
}

/*
 * The round is over; committed says whether the registry committed its
 * transaction.  Nothing changes in shared memory before it did, except
 * that a lane found another server's stops at once.
 */
void
idgen_lane_leases_end(bool committed, const char *error)
{
	/* stopping is always safe */
	for (int i = 0; i < lane_leases.n; i++)
	{
		LaneLease  *lane = &lane_leases.lanes[i];

		if (lane->action == LANE_REFUSED && lane->held)
		{
			idgen_lanes_lease_lost(lane->shard);
			lane->held = false;
		}
	}
	if (!committed)
	{
		/* a failed give-back is always worth a line: the leases now expire */
		if (!lane_leases.failing || part.giving_back_all)
			ereport(WARNING,
					(errmsg(part.giving_back_all ?
							"could not give back the backfill lanes' leases in the idgen lease registry: %s" :
							"could not renew the backfill lanes' leases in the idgen lease registry: %s",
							idgen_registry_mask(error ? error : "")),
					 errdetail("A lane opens no range and moves no fence until the registry holds it; what its open range gives below its fence goes on."),
					 errhint("Check \"%s\" and the registry server.", "idgen.lease_registry")));
		lane_leases.failing = true;
		return;
	}
	if (lane_leases.failing)
		ereport(LOG, (errmsg("reached the idgen lease registry again for the backfill lanes")));
	lane_leases.failing = false;

	for (int i = 0; i < lane_leases.n; i++)
	{
		LaneLease  *lane = &lane_leases.lanes[i];

		if (lane->action == LANE_HOLD)
		{
			if (lane->take)
			{
				idgen_lanes_lease_taken(lane->shard, lane->lo, lane->hi, lane->nranges);
				ereport(LOG,
						(errmsg("idgen holds the lease on backfill lane %d", lane->shard),
						 errdetail("The lane mints outside the %d range(s) of milliseconds its registry row holds.",
								   lane->nranges)));
			}
			lane->held = true;
			lane->warned = false;
			lane->renewed_us = part.start_us;
		}
		else if (lane->action == LANE_GIVE_BACK)
		{
			idgen_lanes_lease_lost(lane->shard);
			lane->held = false;
			ereport(LOG,
					(errmsg("idgen gave back the lease on backfill lane %d", lane->shard)));
		}
	}
	if (part.has_pending)
		idgen_lanes_publish_pending(part.pending, part.committed, part.ncommitted);
}

/* When the lanes' next round is due, monotonic. */
int64
idgen_lane_leases_next_us(void)
{
	LeaseRhythm rhythm = idgen_lease_rhythm();

	return next_round_us(&rhythm);
}
