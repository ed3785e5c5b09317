/*-------------------------------------------------------------------------
 *
 * lease_gate.c
 *		The lease gate: the shared memory where this server's lease ends
 *		are published, and what a mint does when it reaches one.
 *
 * A shard's end is one word, written only by the lease worker
 * (lease_worker.c) after the registry committed it, and read by every mint
 * (the inline idgen_lease_end in lease_gate.h).  A minter that reaches the end
 * sleeps here on a condition variable, waking the worker, or fails with a
 * message saying why.  The gate is below the generator: it calls nothing
 * in generator.c, and nothing that talks to the registry.
 *
 * With idgen.shard_pool, one more word says which shard the worker claimed
 * from the pool.  The worker publishes the shard's end first, then, after
 * a write barrier, the shard; a minter reads the shard, then (the read
 * barrier of idgen_lease_end) its end.  So a minter never sees the shard
 * without the end the registry committed for it.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lease_gate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "portability/instr_time.h"
#include "storage/condition_variable.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "idgen_compat.h"
#include "layout.h"
#include "lease_gate.h"
#include "settings.h"
#include "shard.h"
#include "wait_event.h"
#include "worker.h"

/* A lease array indexed by shard: 2^16 shards take 512 kB. */
#define MAX_LEASE_SHARD_BITS	16

bool		idgen_leases_on = false;
pg_atomic_uint64 *idgen_lease_ends = NULL;
bool		idgen_pool_on = false;
pg_atomic_uint32 *idgen_pool_word = NULL;

typedef struct IdgenLeaseShared
{
	char		owner[33];		/* this start's token, hexadecimal */
	slock_t		mutex;			/* protects clock */
	IdgenWorkerLatch worker;	/* the lease worker's, as the fence gate's */
	IdgenRegistryClock clock;	/* measured_at 0: not yet */
	ConditionVariable cv;		/* broadcast when a lease's end moves */
	pg_atomic_uint32 wanted;	/* a minter waits for a lease */
	pg_atomic_uint32 pool_shard;	/* claimed from the pool, or
									 * IDGEN_POOL_NONE */
	int			nshards;
	pg_atomic_uint64 ends[FLEXIBLE_ARRAY_MEMBER];	/* by shard, then since */
} IdgenLeaseShared;

static IdgenLeaseShared *lease_shared = NULL;

/*
 * By shard, after the ends: when this server's lease began, as a
 * TimestampTz; 0 while it holds none.  Read by SQL only.
 */
static pg_atomic_uint64 *lease_since = NULL;

/* Made by the postmaster once, so a crash restart keeps it. */
static char owner_token[33];

/* ---- start ---- */

/* In _PG_init: are leases on, and this start's owner token. */
void
idgen_lease_gate_init(void)
{
	uint8		token[16];

	idgen_leases_on = idgen_lease_registry != NULL && idgen_lease_registry[0] != '\0';
	idgen_pool_on = idgen_shard_pool_set();
	if (idgen_pool_on && !idgen_leases_on)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" needs \"%s\"",
						"idgen.shard_pool", "idgen.lease_registry"),
				 errdetail("A server claims its shard of the pool in the lease registry, which hands each shard to one server at a time."),
				 errhint("Set \"%s\", or name this server's shard in \"%s\" and leave \"%s\" empty.",
						 "idgen.lease_registry", "idgen.shard_id",
						 "idgen.shard_pool")));
	if (!idgen_leases_on)
		return;
	if (idgen_layout.shard_bits > MAX_LEASE_SHARD_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" needs \"%s\" of %d or fewer",
						"idgen.lease_registry", "idgen.shard_bits",
						MAX_LEASE_SHARD_BITS),
				 errhint("Leave \"%s\" empty, or use fewer shard bits.",
						 "idgen.lease_registry")));

	/* new at every start of the server, so a copy of it is another owner */
	if (!pg_strong_random(token, sizeof(token)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random lease owner token")));
	hex_encode((char *) token, sizeof(token), owner_token);
	owner_token[32] = '\0';
}

/* ---- shared memory ---- */

Size
idgen_lease_shmem_size(void)
{
	if (!idgen_leases_on)
		return 0;
	return add_size(offsetof(IdgenLeaseShared, ends),
					mul_size(2 * sizeof(pg_atomic_uint64),
							 (Size) 1 << idgen_layout.shard_bits));
}

/* With AddinShmemInitLock held. */
void
idgen_lease_shmem_startup(void)
{
	bool		found;

	if (!idgen_leases_on)
		return;
	lease_shared = ShmemInitStruct("idgen lease", idgen_lease_shmem_size(),
								   &found);
	if (!found)
	{
		strlcpy(lease_shared->owner, owner_token, sizeof(lease_shared->owner));
		SpinLockInit(&lease_shared->mutex);
		idgen_worker_latch_init(&lease_shared->worker);
		memset(&lease_shared->clock, 0, sizeof(lease_shared->clock));
		ConditionVariableInit(&lease_shared->cv);
		pg_atomic_init_u32(&lease_shared->wanted, 0);
		pg_atomic_init_u32(&lease_shared->pool_shard, IDGEN_POOL_NONE);
		lease_shared->nshards = 1 << idgen_layout.shard_bits;
		for (int i = 0; i < 2 * lease_shared->nshards; i++)
			pg_atomic_init_u64(&lease_shared->ends[i], IDGEN_LEASE_PENDING);
	}
	idgen_lease_ends = lease_shared->ends;
	lease_since = lease_shared->ends + lease_shared->nshards;
	idgen_pool_word = &lease_shared->pool_shard;
}

/* ---- minting ---- */

static void
wake_lease_worker(void)
{
	if (pg_atomic_read_u32(&lease_shared->wanted) != 0)
		return;
	pg_atomic_write_u32(&lease_shared->wanted, 1);
	idgen_worker_wake(&lease_shared->worker);
}

typedef struct LeaseNeed
{
	int32		shard;
	uint64		ms;
} LeaseNeed;

static IdgenAwait
lease_reaches(void *arg)
{
	LeaseNeed  *need = arg;
	uint64		end = idgen_lease_end(need->shard);

	if (end > need->ms)
		return IDGEN_AWAIT_DONE;
	if (end == IDGEN_LEASE_NOT_HELD)
		return IDGEN_AWAIT_NEVER;
	return IDGEN_AWAIT_MORE;
}

/*
 * Wait until this server's lease on shard reaches past ms: true when it
 * does, false when it is held elsewhere or timeout_us passes first.
 */
bool
idgen_lease_wait(int32 shard, int64 ms, int64 timeout_us)
{
	LeaseNeed	need = {shard, (uint64) ms};

	return idgen_worker_await(&lease_shared->cv, lease_reaches, &need,
							  wake_lease_worker, timeout_us,
							  IDGEN_WAIT_LEASE);
}

/* Why a mint for shard cannot go on. */
void
idgen_lease_error(int32 shard)
{
	uint64		end = idgen_lease_end(shard);

	if (end == IDGEN_LEASE_NOT_HELD)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this server holds no lease on shard %d", shard),
				 errdetail("The lease registry of \"%s\" has not given this server the shard's lease: another server holds it, or this server gave it back.",
						   "idgen.lease_registry"),
				 errhint("Give each server shards of its own; a shard moves to another server once its owner drops it from \"%s\" or \"%s\", or stops.",
						 "idgen.shard_id", "idgen.shard_ids")));
	if (end == IDGEN_LEASE_PENDING)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not take the lease on shard %d within \"%s\" (%d ms)",
						shard, "idgen.max_wait", idgen_max_wait),
				 errdetail("With \"%s\" set, a server mints for a shard only while it holds the shard's lease.",
						   "idgen.lease_registry"),
				 errhint("Check the server log for messages of the \"idgen lease\" worker, and that the lease registry is reachable.")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("could not renew the lease on shard %d within \"%s\" (%d ms)",
					shard, "idgen.max_wait", idgen_max_wait),
			 errdetail("This server's lease on the shard ended at %s, and the lease registry has not renewed it.",
					   timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, (int64) end))),
			 errhint("Check the server log for messages of the \"idgen lease\" worker, and that the lease registry is reachable.")));
}

/* The registry's clock as last measured; false before the first time. */
bool
idgen_lease_registry_clock(IdgenRegistryClock *clock)
{
	if (lease_shared == NULL)
		return false;
	SpinLockAcquire(&lease_shared->mutex);
	*clock = lease_shared->clock;
	SpinLockRelease(&lease_shared->mutex);
	return clock->measured_at != 0;
}

/* ---- minting with a pool ---- */

static IdgenAwait
pool_claimed(void *arg)
{
	uint32	   *shard = arg;

	*shard = pg_atomic_read_u32(&lease_shared->pool_shard);
	return *shard != IDGEN_POOL_NONE ? IDGEN_AWAIT_DONE : IDGEN_AWAIT_MORE;
}

/*
 * Wait for the lease worker to claim a shard of the pool, up to
 * idgen.max_wait, as a mint waits for its lease; the shard, or an error.
 */
int32
idgen_pool_wait(void)
{
	uint32		shard = IDGEN_POOL_NONE;

	(void) idgen_worker_await(&lease_shared->cv, pool_claimed, &shard,
							  wake_lease_worker,
							  (int64) idgen_max_wait * 1000,
							  IDGEN_WAIT_LEASE);
	if (shard == IDGEN_POOL_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not claim a shard of \"%s\" within \"%s\" (%d ms)",
						"idgen.shard_pool", "idgen.max_wait", idgen_max_wait),
				 errdetail("With \"%s\" set, this server mints only for a shard of the pool whose lease it holds, and it holds none.",
						   "idgen.shard_pool"),
				 errhint("Check the server log for messages of the \"idgen lease\" worker, that the lease registry is reachable, and that some shard of the pool is free.")));
	return (int32) shard;
}

/* The shard claimed from the pool now, or -1: no wait. */
int32
idgen_pool_held(void)
{
	uint32		shard = pg_atomic_read_u32(&lease_shared->pool_shard);

	return shard == IDGEN_POOL_NONE ? -1 : (int32) shard;
}

/* With a pool, the one shard a caller may name is the claimed one. */
void
idgen_pool_check_shard(int32 shard)
{
	int32		held = idgen_pool_shard();

	if (shard != held)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shard %d is not the shard this server claimed", shard),
				 errdetail("With \"%s\" set, this server mints only for the shard it claimed from the pool, now %d.",
						   "idgen.shard_pool", held),
				 errhint("Call idgen_next() without a shard, or mint on the server that holds shard %d.",
						 shard)));
}

/* When this server's lease on shard began; 0 while it holds none. */
TimestampTz
idgen_lease_since(int32 shard)
{
	return (TimestampTz) pg_atomic_read_u64(&lease_since[shard]);
}

/* ---- for the lease worker ---- */

void
idgen_lease_note_registry_clock(int64 offset_us, int64 error_us)
{
	TimestampTz now = GetCurrentTimestamp();

	SpinLockAcquire(&lease_shared->mutex);
	lease_shared->clock.offset_us = offset_us;
	lease_shared->clock.error_us = error_us;
	if (lease_shared->clock.measured_at == 0 ||
		idgen_abs64(offset_us) > idgen_abs64(lease_shared->clock.largest_us))
		lease_shared->clock.largest_us = offset_us;
	lease_shared->clock.measured_at = now;
	SpinLockRelease(&lease_shared->mutex);
}

/* The token this server's rows in the registry carry as their owner. */
const char *
idgen_lease_owner(void)
{
	return lease_shared->owner;
}

/* A new end for shard, committed in the registry; waiting minters wake. */
void
idgen_lease_publish(int32 shard, uint64 end)
{
	uint64		old = pg_atomic_read_u64(&lease_shared->ends[shard]);

	if (end <= IDGEN_LEASE_NOT_HELD)
		pg_atomic_write_u64(&lease_since[shard], 0);
	else if (old <= IDGEN_LEASE_NOT_HELD)
		pg_atomic_write_u64(&lease_since[shard], (uint64) GetCurrentTimestamp());
	pg_atomic_write_u64(&lease_shared->ends[shard], end);
	ConditionVariableBroadcast(&lease_shared->cv);
}

/*
 * The shard claimed from the pool, whose end the worker published first;
 * -1 for none, after which minters wait for the next claim.
 */
void
idgen_lease_set_pool_shard(int32 shard)
{
	pg_write_barrier();
	pg_atomic_write_u32(&lease_shared->pool_shard,
						shard < 0 ? IDGEN_POOL_NONE : (uint32) shard);
	ConditionVariableBroadcast(&lease_shared->cv);
}

/*
 * No more mints for shard.  The caller puts a full barrier after its last
 * close and before it reads the generator's state (lease_worker.c).
 */
void
idgen_lease_close(int32 shard)
{
	pg_atomic_write_u64(&lease_shared->ends[shard], IDGEN_LEASE_NOT_HELD);
	pg_atomic_write_u64(&lease_since[shard], 0);
}

/* The latch minters set when they wait for a lease; NULL when it exits. */
void
idgen_lease_set_worker_latch(Latch *latch)
{
	idgen_worker_latch_set(&lease_shared->worker, latch);
}

/*
 * The backfill lanes wait for the registry to hold their ranges: the latch
 * alone, every time.  Not the minters' flag, which is cleared only by a live
 * round, at most every 100 ms, and would hold back every later wake.
 */
void
idgen_lease_poke(void)
{
	idgen_worker_wake(&lease_shared->worker);
}

/* A minter waits for a lease. */
bool
idgen_lease_asked(void)
{
	return pg_atomic_read_u32(&lease_shared->wanted) != 0;
}

void
idgen_lease_clear_asked(void)
{
	pg_atomic_write_u32(&lease_shared->wanted, 0);
}
