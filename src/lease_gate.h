/*-------------------------------------------------------------------------
 *
 * lease_gate.h
 *		The lease gate: with idgen.lease_registry set, a server mints for a
 *		shard only below the end of the lease it holds on it.
 *
 * The minting path reads one word of shared memory per mint, the lease's
 * end (lease_gate.c).  The gate sits below the generator and knows nothing
 * of the registry: the lease worker (lease_worker.c) publishes the ends it
 * won there (doc/design/leases.md, "Shard leases").
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lease_gate.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LEASE_GATE_H
#define IDGEN_LEASE_GATE_H

#include "datatype/timestamp.h"
#include "port/atomics.h"
#include "storage/latch.h"

#include "idgen_compat.h"

/*
 * A shard's word: the first millisecond (of the layout) this server may not
 * stamp, or one of these, below any real end.
 */
#define IDGEN_LEASE_PENDING		UINT64CONST(0)	/* not yet asked for */
#define IDGEN_LEASE_NOT_HELD	UINT64CONST(1)	/* another server holds it */

/* Leases are on: fixed at server start, as idgen.lease_registry is. */
extern IDGEN_HOT_GLOBAL bool idgen_leases_on;
extern IDGEN_HOT_GLOBAL pg_atomic_uint64 *idgen_lease_ends;

/*
 * idgen.shard_pool is set (leases are then on): idgen_next() mints for the
 * shard the lease worker claimed, published in one word, or IDGEN_POOL_NONE.
 */
#define IDGEN_POOL_NONE			PG_UINT32_MAX
extern IDGEN_HOT_GLOBAL bool idgen_pool_on;
extern IDGEN_HOT_GLOBAL pg_atomic_uint32 *idgen_pool_word;

/*
 * The end of this server's lease on shard.  The read barrier orders it
 * after the caller's read of the generator's state: a lease given back
 * after that state was read is seen (lease_worker.c, stop_minting).
 */
static inline uint64
idgen_lease_end(int32 shard)
{
	pg_read_barrier();
	return pg_atomic_read_u64(&idgen_lease_ends[shard]);
}

/* For minting (generator.c). */
extern bool idgen_lease_wait(int32 shard, int64 ms, int64 timeout_us);
idgen_noreturn extern void idgen_lease_error(int32 shard);

/* For minting with a pool (idgen.c). */
extern int32 idgen_pool_wait(void);

/*
 * The shard claimed from the pool, waiting for one up to idgen.max_wait.
 * Its lease's end was published before it (lease_gate.c); the read barrier
 * of idgen_lease_end orders the mint's read of that end after this one.
 */
static inline int32
idgen_pool_shard(void)
{
	uint32		shard = pg_atomic_read_u32(idgen_pool_word);

	if (unlikely(shard == IDGEN_POOL_NONE))
		return idgen_pool_wait();
	return (int32) shard;
}

extern int32 idgen_pool_held(void);
extern void idgen_pool_check_shard(int32 shard);
extern TimestampTz idgen_lease_since(int32 shard);

/* For _PG_init (through idgen_lease_register) and the shared memory hooks. */
extern void idgen_lease_gate_init(void);
extern Size idgen_lease_shmem_size(void);
extern void idgen_lease_shmem_startup(void);

/*
 * This server's clock against the lease registry's, as the lease worker
 * last measured it: offset is this server's minus the registry's, give or
 * take error (half the round trip); largest the largest offset seen.
 */
typedef struct IdgenRegistryClock
{
	int64		offset_us;
	int64		error_us;
	int64		largest_us;
	TimestampTz measured_at;
} IdgenRegistryClock;

extern bool idgen_lease_registry_clock(IdgenRegistryClock *clock);

/* For the lease worker. */
extern void idgen_lease_note_registry_clock(int64 offset_us, int64 error_us);
extern const char *idgen_lease_owner(void);
extern void idgen_lease_publish(int32 shard, uint64 end);
extern void idgen_lease_close(int32 shard);
extern void idgen_lease_set_pool_shard(int32 shard);
extern void idgen_lease_set_worker_latch(Latch *latch);
extern bool idgen_lease_asked(void);
extern void idgen_lease_poke(void);
extern void idgen_lease_clear_asked(void);

#endif							/* IDGEN_LEASE_GATE_H */
