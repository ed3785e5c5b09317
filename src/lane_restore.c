/*-------------------------------------------------------------------------
 *
 * lane_restore.c
 *		A restore's stop of the backfill lanes its dump names: held while
 *		its transaction is open, durable as it commits.
 *
 * A dump restored into a database of this server (its COMMENT ON
 * EXTENSION idgen brought a stamp, stamp_hooks.c) may hold IDs of the
 * lanes whose shards the stamp names, at milliseconds they would mint at.
 * While the restore's transaction is open those lanes are held (a count
 * per lane in shared memory: minters pass them over, the other lanes mint
 * on); a savepoint or transaction rolled back lets its names go; the
 * commit sets each lane's RESTORED flag in the lanes table, which the
 * fence worker makes durable before the commit goes on, and
 * idgen_lanes_init() clears (lane_durable.c).
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lane_restore.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"

#include "lane.h"
#include "lane_shmem.h"
#include "settings.h"

/*
 * The lanes this backend's open restore names (restore_begins): each with
 * the nesting level that named it, so that a savepoint rolled back takes
 * its names with it, and whether it is held (a lane named in
 * idgen.backfill_shards, which minters pass over until the end).
 */
typedef struct RestoreName
{
	int32		shard;
	int			level;
	bool		held;
} RestoreName;

static RestoreName restore_names[IDGEN_LANE_TABLE_MAX];
static int	restore_nnames = 0;
static bool restore_counted = false;	/* in restores_open */

/* The shards of every lane kept, named now or once; returns how many. */
int
idgen_lanes_kept(int32 *shards)
{
	int			n = 0;

	if (idgen_lanes == NULL)
		return 0;
	LWLockAcquire(idgen_lanes->lock, LW_SHARED);
	for (int i = 0; i < idgen_lanes->nlanes; i++)
		shards[n++] = idgen_lanes->lanes[i].used.shard;
	LWLockRelease(idgen_lanes->lock);
	return n;
}

/*
 * A dump restored into a database of this server named these lanes' shards
 * (its stamp's part, or no part): its rows may hold their IDs at
 * milliseconds they would mint at, and nothing of their past says so.
 * Each refuses, durably and before the dump's rows commit, until the
 * operator raises it past the restored IDs and attests it; the other lanes
 * mint on.  A lane kept but not named in idgen.backfill_shards now is
 * marked too when it was attested once, so that naming it again does not
 * bring it back.  Lanes already refusing all (their past unknown) keep
 * that.  Once the flag is set here, a cancel or a failure later in the
 * commit leaves it: the safe side.
 */
static void
restored_into(void)
{
	int64		waited_us = 0;
	int			wait_ms = Max(idgen_max_wait, IDGEN_DEFAULT_MAX_WAIT_MS);
	int32		shards[IDGEN_LANE_TABLE_MAX];
	int			n = 0;
	int			marked = 0;
	char	   *named;

	if (RecoveryInProgress())
		return;
	for (int i = 0; i < restore_nnames; i++)
		if (restore_names[i].held)
			shards[n++] = restore_names[i].shard;
	named = idgen_shard_list(shards, n);
	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	if (idgen_lanes->unknown != LANES_KNOWN)
	{
		LWLockRelease(idgen_lanes->lock);
		return;
	}
	for (int i = 0; i < restore_nnames; i++)
	{
		IdgenLane  *lane = idgen_lane_of(restore_names[i].shard);

		/* ranges and windows open stop too: restored IDs may sit in them */
		if (lane != NULL && (lane->configured || lane_attested(lane)))
		{
			lane->used.flags |= IDGEN_LANE_RESTORED;
			idgen_lane_stop(lane);
			marked++;
		}
	}
	if (marked == 0)
	{
		LWLockRelease(idgen_lanes->lock);
		return;
	}
	idgen_lanes_set_mints();
	/*
	 * Never an ERROR: it would undo the restore's statement, not its rows.
	 * At least the default wait, whatever it is set to: a crash before the
	 * write forgets the stop.
	 */
	if (!idgen_lanes_ask_and_await_up_to(wait_ms, &waited_us))
		ereport(WARNING,
				(errmsg("the refusal of the backfill lanes this restore names is not durable yet"),
				 errdetail("The \"idgen fence\" worker did not write it within %d ms; the lanes refuse meanwhile, and a crash before it writes forgets it.",
						   wait_ms)));
	if (n > 0)
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg(n == 1 ? "backfill lane %s of this server refuses until attested again" :
						"backfill lanes %s of this server refuse until attested again", named),
				 errdetail("This restore's stamp names %s: its rows may hold IDs of %s at milliseconds %s would mint at.  The server's other lanes mint as before.",
						   n == 1 ? "that shard" : "those shards",
						   n == 1 ? "that lane" : "those lanes",
						   n == 1 ? "it" : "they"),
				 errhint("Once the rows are in, run SELECT idgen_advance_past(max(id)) on the restored tables' keys, one per shard; then SELECT idgen_lanes_init().")));
}

/* Whether this backend's transaction names a lane (a restore's). */
bool
idgen_lanes_restore_names(void)
{
	return restore_nnames > 0;
}

/* With the lock: one name's hold ends. */
static void
let_go(RestoreName *name)
{
	IdgenLane  *lane = idgen_lane_of(name->shard);

	if (name->held && lane != NULL && lane->restoring > 0)
		lane->restoring--;
	name->held = false;
}

/* The names kept are the first n; the count of open restores follows. */
static void
names_kept(int n)
{
	bool		holds = false;

	restore_nnames = n;
	for (int i = 0; i < n; i++)
		holds |= restore_names[i].held;
	if (holds && !restore_counted)
		pg_atomic_fetch_add_u32(&idgen_lanes->restores_open, 1);
	else if (!holds && restore_counted)
	{
		pg_atomic_fetch_sub_u32(&idgen_lanes->restores_open, 1);
		ConditionVariableBroadcast(&idgen_lanes->cv);
	}
	restore_counted = holds;
	idgen_lanes_restoring_here = holds;
}

/*
 * A restore's statement ran in a transaction still open, at this nesting
 * level, its dump naming these lanes: until it ends those named in
 * idgen.backfill_shards refuse (its rows may be arriving), and nothing is
 * durable, so that a transaction or savepoint rolled back leaves them as
 * they were.  Its commit makes the stop durable first (restored_into),
 * then lets go.  A crash forgets the holds with the transaction.  Returns
 * whether this backend's transaction names a lane.
 */
bool
idgen_lanes_restore_begins(const int32 *shards, int n, int level)
{
	if (idgen_lanes == NULL || RecoveryInProgress())
		return false;
	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	for (int i = 0; i < n; i++)
	{
		IdgenLane  *lane = idgen_lane_of(shards[i]);
		bool		known = false;

		for (int j = 0; j < restore_nnames && !known; j++)
			known = restore_names[j].shard == shards[i];
		if (lane == NULL || known || restore_nnames >= IDGEN_LANE_TABLE_MAX)
			continue;
		restore_names[restore_nnames].shard = shards[i];
		restore_names[restore_nnames].level = level;
		restore_names[restore_nnames].held = lane->configured;
		if (lane->configured)
			lane->restoring++;
		restore_nnames++;
	}
	idgen_lanes_set_mints();
	names_kept(restore_nnames);
	LWLockRelease(idgen_lanes->lock);
	return restore_nnames > 0;
}

/*
 * A savepoint at this level ends: committed, its names are its parent's;
 * rolled back, they are let go.
 */
void
idgen_lanes_restore_subxact(bool committed, int level)
{
	int			kept = 0;

	if (restore_nnames == 0)
		return;
	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	for (int i = 0; i < restore_nnames; i++)
	{
		RestoreName *name = &restore_names[i];

		if (name->level >= level && committed)
			name->level = level - 1;
		else if (name->level >= level)
		{
			let_go(name);
			continue;
		}
		restore_names[kept++] = *name;
	}
	idgen_lanes_set_mints();
	names_kept(kept);
	LWLockRelease(idgen_lanes->lock);
}

static void
restore_lets_go(void)
{
	LWLockAcquire(idgen_lanes->lock, LW_EXCLUSIVE);
	for (int i = 0; i < restore_nnames; i++)
		let_go(&restore_names[i]);
	idgen_lanes_set_mints();
	names_kept(0);
	LWLockRelease(idgen_lanes->lock);
}

/*
 * The restore's transaction ends.  The names stay recorded until they are
 * let go, so that an abort after a FATAL in the stop's wait (which skips
 * PG_CATCH) still lets them go.
 */
void
idgen_lanes_restore_ends(bool committed)
{
	if (restore_nnames == 0)
		return;
	/* an ERROR in the stop (a cancel while it waits) still lets go */
	PG_TRY();
	{
		if (committed)
			restored_into();
	}
	PG_CATCH();
	{
		restore_lets_go();
		PG_RE_THROW();
	}
	PG_END_TRY();
	restore_lets_go();
}
