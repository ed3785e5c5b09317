/*-------------------------------------------------------------------------
 *
 * lease_set.h
 *		The lease worker's state: this server's leases, what lives for the
 *		worker and what lives for one round, and the rhythm of its rounds.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lease_set.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LEASE_SET_H
#define IDGEN_LEASE_SET_H

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

/* What lives as long as the worker. */
typedef struct LeaseWorker
{
	ShardLease *leases;			/* ascending by shard, in TopMemoryContext */
	int			nleases;
	char	   *owner_name;		/* this server, for people reading the rows */
	bool		registry_failing;	/* the last round failed: logged once */
	int32		pool_shard;		/* with a pool: the shard held (published),
								 * or -1 */
	bool		pool_warned;	/* "no shard of the pool is free" was logged */
} LeaseWorker;

/* What lives for one round, passed down from lease_round(). */
typedef struct LeaseRound
{
	bool		giving_back_all;	/* the round at shut down */
	LeaseRhythm rhythm;
	int64		start_us;		/* monotonic */
	int64		deadline;		/* monotonic, for the registry's calls */
	int64		last_ms;		/* stamped last, for the leases stopped */
	bool		claiming;		/* with a pool and none held: claim one */
	int32		claimed_shard;	/* the one claimed, or -1 */
	bool		clocks_disagree;	/* why the live part failed */
	char	   *clocks_error;	/* its words, when the lanes went on */
	char	   *error;			/* why the round failed */
} LeaseRound;

extern LeaseRhythm idgen_lease_rhythm(void);
extern int64 idgen_lease_now(void);
extern int64 idgen_lease_ms_to_unix_us(int64 ms);
extern int64 idgen_lease_unix_us_to_ms(int64 unix_us);
extern void idgen_lease_publish_end(ShardLease *lease, uint64 end);
extern void idgen_leases_refresh(LeaseWorker *w);
extern void idgen_leases_want(LeaseWorker *w, int32 shard);

#endif							/* IDGEN_LEASE_SET_H */
