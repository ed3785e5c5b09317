/*-------------------------------------------------------------------------
 *
 * generator.h
 *		The generator: minting, and the functions through which the fence,
 *		the leases and the statistics reach its shared state.
 *
 * The shared state itself is private to generator.c, which states how it
 * is read and written without a lock (see doc/design/minting.md,
 * "Minting").
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/generator.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_GENERATOR_H
#define IDGEN_GENERATOR_H

#include "idgen_compat.h"

/* What each process counts; summed by idgen_stats. */
typedef enum IdgenCounter
{
	IDGEN_MINTED,
	IDGEN_BORROWED_MS,			/* a full sequence carried into a later ms */
	IDGEN_CLOCK_BEHIND,			/* mints that found the wall clock behind */
	IDGEN_CLOCK_STEPS_BACK,		/* wall clock read earlier than the last read */
	IDGEN_WAITS,				/* sleeps for the wall clock or the fence */
	IDGEN_WAIT_US,
	IDGEN_MAX_WAIT_ERRORS,
	IDGEN_FENCE_WAITS,
	IDGEN_NUM_COUNTERS
} IdgenCounter;

/* The node's figures, for idgen_stats. */
typedef struct IdgenNodeFigures
{
	uint64		counters[IDGEN_NUM_COUNTERS];	/* every process since start */
	int64		last_id;		/* the latest ID minted, 0 before the first */
	int64		generator_ms;	/* the generator's millisecond */
	int64		fence_ms;		/* the published fence */
	uint64		fence_advances; /* fence moves since start */
} IdgenNodeFigures;

/* One live process's figures, for idgen_stats_backends. */
typedef struct IdgenProcessFigures
{
	int			pid;
	Oid			userid;			/* its session user */
	uint64		counters[IDGEN_NUM_COUNTERS];	/* since it took its slot */
	int64		last_id;
} IdgenProcessFigures;

/* Shared memory, from idgen.c's hooks. */
extern Size idgen_shmem_size(void);
extern bool idgen_shmem_attach(void);
extern void idgen_shmem_init(int64 start_ms);

/* Minting, one ID or a block of them. */
#define IDGEN_MAX_BLOCK		1000000

extern int64 idgen_mint(int32 shard);
extern uint64 idgen_mint_block(int32 shard, int64 n);
extern int64 idgen_block_id(uint64 first, int64 i, int32 shard);
extern void idgen_check_block_size(int32 n);
extern void idgen_check_not_in_recovery(void);
extern int64 idgen_raise_past(int64 id);

/* For the fence (fence.c) and the leases (lease_worker.c). */
extern bool idgen_generator_attached(void);
extern int64 idgen_generator_ms(void);
extern void idgen_raise_generator(int64 ms);
extern int64 idgen_step_generator(void);	/* for lease_worker.c */

/* For the statistics (stats.c). */
extern void idgen_read_node_figures(IdgenNodeFigures *figures);
extern int	idgen_process_slots(void);
extern bool idgen_read_process_figures(int slotno, IdgenProcessFigures *figures);

#endif							/* IDGEN_GENERATOR_H */
