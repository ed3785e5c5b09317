/*-------------------------------------------------------------------------
 *
 * lease_set.c
 *		This server's leases as the lease worker keeps them: which shards it
 *		wants, their ends as published, and the rhythm of its rounds.
 *
 * The lease worker owns one LeaseWorker (lease_set.h) for its life and a
 * LeaseRound for each round, and passes them down; nothing here keeps
 * state of its own.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lease_set.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "generator.h"
#include "layout.h"
#include "lease_gate.h"
#include "lease_set.h"
#include "settings.h"
#include "shard.h"

LeaseRhythm
idgen_lease_rhythm(void)
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


/* The layout's milliseconds to Unix microseconds and back. */
int64
idgen_lease_ms_to_unix_us(int64 ms)
{
	return idgen_ms_to_timestamptz(&idgen_layout, ms) + IDGEN_POSTGRES_EPOCH_UNIX_US;
}

int64
idgen_lease_unix_us_to_ms(int64 unix_us)
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
int64
idgen_lease_now(void)
{
	return Max(idgen_wall_ms(), idgen_generator_ms());
}

void
idgen_lease_publish_end(ShardLease *lease, uint64 end)
{
	lease->end = end;
	idgen_lease_publish(lease->shard, end);
}

/*
 * The shards this server wants: those in its settings, or with a pool the
 * one it claimed.
 */
static int
wanted_shards(LeaseWorker *w, int32 **shards)
{
	if (!idgen_pool_on)
		return idgen_owned_shards(shards);
	*shards = palloc(sizeof(int32));
	(*shards)[0] = w->pool_shard;
	return w->pool_shard >= 0 ? 1 : 0;
}

/* The shards wanted now, merged into the leases. */
void
idgen_leases_refresh(LeaseWorker *w)
{
	int32	   *owned;
	int			nowned = wanted_shards(w, &owned);
	ShardLease *merged = palloc(sizeof(ShardLease) * (nowned + w->nleases));
	int			n = 0;
	int			i = 0;
	int			j = 0;

	/* both ascending */
	while (i < nowned || j < w->nleases)
	{
		if (j >= w->nleases || (i < nowned && owned[i] < w->leases[j].shard))
		{
			merged[n] = (ShardLease)
			{
				.shard = owned[i],.wanted = true,
					.end = idgen_lease_end(owned[i])
			};
			n++, i++;
		}
		else if (i >= nowned || w->leases[j].shard < owned[i])
		{
			/* no longer wanted: kept until given back */
			w->leases[j].wanted = false;
			if (w->leases[j].end > IDGEN_LEASE_NOT_HELD)
				merged[n++] = w->leases[j];
			j++;
		}
		else
		{
			merged[n] = w->leases[j];
			merged[n].wanted = true;
			n++, i++, j++;
		}
	}
	pfree(owned);
	if (w->leases)
		pfree(w->leases);
	w->leases = merged;
	w->nleases = n;
}

/* A lease for shard in the leases (ascending), wanted, not yet planned. */
void
idgen_leases_want(LeaseWorker *w, int32 shard)
{
	int			i = 0;

	while (i < w->nleases && w->leases[i].shard < shard)
		i++;
	if (i < w->nleases && w->leases[i].shard == shard)
	{
		w->leases[i].wanted = true;
		return;
	}
	w->leases = w->leases ? repalloc(w->leases, sizeof(ShardLease) * (w->nleases + 1)) :
		MemoryContextAlloc(TopMemoryContext, sizeof(ShardLease));
	memmove(&w->leases[i + 1], &w->leases[i], sizeof(ShardLease) * (w->nleases - i));
	w->leases[i] = (ShardLease)
	{
		.shard = shard,.wanted = true,.end = idgen_lease_end(shard),
			.action = LEASE_NONE,.floor = -1
	};
	w->nleases++;
}

