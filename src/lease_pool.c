/*-------------------------------------------------------------------------
 *
 * lease_pool.c
 *		With idgen.shard_pool: the lease worker's claim of a shard of the
 *		pool, in a round's registry transaction, and what the round's end
 *		makes of it.
 *
 * The claim picks and locks one row of the pool (lease_sql.c), this
 * server's own first; the shard then goes through the same plan as any
 * lease due, and minters use it only once the round committed and its end
 * was published.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lease_pool.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "lease_gate.h"
#include "lease_pool.h"
#include "lease_sql.h"
#include "registry.h"
#include "settings.h"
#include "shard.h"

/*
 * In the exchange's transaction, before the rows are locked: claim a shard
 * of the pool, its row locked until the commit, and add it to the leases
 * due.  Finding none free is not a failure: the next round looks again.
 */
bool
idgen_pool_claim(LeaseWorker *w, LeaseRound *round, const char **due_shards)
{
	int32	   *lo;
	int32	   *hi;
	int			n = idgen_shard_pool_ranges(&lo, &hi);
	StringInfoData los;
	StringInfoData his;
	const char *params[4];
	PGresult   *rows;

	round->claimed_shard = -1;
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
	if (!idgen_registry_command(idgen_lease_sql_add_pool_rows, 2, params,
								round->deadline, &round->error))
		return false;
	params[2] = idgen_lease_owner();
	params[3] = psprintf("%d", idgen_max_lead);
	rows = idgen_registry_exec(idgen_lease_sql_claim, 4, params,
							   round->deadline, &round->error);
	if (rows == NULL)
		return false;
	if (PQntuples(rows) == 0)
	{
		if (!w->pool_warned)
			ereport(WARNING,
					(errmsg("no shard of \"%s\" is free in the idgen lease registry",
							"idgen.shard_pool"),
					 errdetail("Every shard of the pool is leased to another server, or being claimed by one; this server looks again every %d ms meanwhile, and does not mint.",
							   (int) (idgen_lease_rhythm().retry_us / 1000)),
					 errhint("Make \"%s\" larger, or stop a server that uses it.",
							 "idgen.shard_pool")));
		w->pool_warned = true;
		PQclear(rows);
		return true;
	}
	round->claimed_shard = pg_strtoint32(PQgetvalue(rows, 0, 0));
	PQclear(rows);
	idgen_leases_want(w, round->claimed_shard);
	if (strcmp(*due_shards, "{}") == 0)
		*due_shards = psprintf("{%d}", round->claimed_shard);
	else
		*due_shards = psprintf("%.*s,%d}", (int) strlen(*due_shards) - 1,
							   *due_shards, round->claimed_shard);
	return true;
}

/*
 * After a round, with a pool: a claim becomes the shard minters use once
 * its end was published; a claim not known to have committed is forgotten
 * (the row, if it did commit, names this server and ends with its lease:
 * the next claim finds it first); a shard found another's is let go, and
 * the next round claims again.
 */
void
idgen_pool_settle(LeaseWorker *w, LeaseRound *round, bool round_ok)
{
	ShardLease *claimed = NULL;
	ShardLease *held = NULL;

	for (int i = 0; i < w->nleases; i++)
	{
		if (w->leases[i].shard == round->claimed_shard)
			claimed = &w->leases[i];
		if (w->leases[i].shard == w->pool_shard)
			held = &w->leases[i];
	}
	if (round->claiming && claimed != NULL)
	{
		/* an end left in memory from before is no claim of this round's */
		if (round_ok && claimed->end > IDGEN_LEASE_NOT_HELD)
		{
			w->pool_shard = round->claimed_shard;
			idgen_lease_set_pool_shard(w->pool_shard);
			w->pool_warned = false;
			ereport(LOG,
					(errmsg("idgen claimed shard %d of \"%s\"",
							w->pool_shard, "idgen.shard_pool")));
		}
		else
			claimed->wanted = false;
	}
	else if (held != NULL && held->end == IDGEN_LEASE_NOT_HELD)
	{
		/* minting stopped when the round found it another's */
		ereport(WARNING,
				(errmsg("idgen lost the lease on shard %d of \"%s\"; it claims another",
						w->pool_shard, "idgen.shard_pool"),
				 errdetail("Another server took the shard after this server's lease ended unrenewed.")));
		idgen_lease_set_pool_shard(-1);
		w->pool_shard = -1;
	}
	round->claiming = false;
	round->claimed_shard = -1;
	/* leases no longer wanted and not held go; leases outlive the round */
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		idgen_leases_refresh(w);
		MemoryContextSwitchTo(old);
	}
}

