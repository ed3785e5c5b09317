/*-------------------------------------------------------------------------
 *
 * shard.h
 *		The shards this node owns: idgen.shard_id and idgen.shard_ids, or
 *		the pool it claims one from, idgen.shard_pool.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/shard.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_SHARD_H
#define IDGEN_SHARD_H

#include "utils/guc.h"

/* The settings' variables, defined here; settings.c defines the settings. */
extern int	idgen_shard_id;
extern char *idgen_shard_ids;

extern bool idgen_shard_id_check_hook(int *newval, void **extra,
									  GucSource source);
extern bool idgen_shard_ids_check_hook(char **newval, void **extra,
									   GucSource source);
extern void idgen_shard_ids_assign_hook(const char *newval, void *extra);

/* idgen.shard_pool: the shards a server with leases claims one of. */
extern char *idgen_shard_pool;
extern bool idgen_shard_pool_check_hook(char **newval, void **extra,
										GucSource source);
extern void idgen_shard_pool_assign_hook(const char *newval, void *extra);
extern bool idgen_shard_pool_set(void);
extern int	idgen_shard_pool_ranges(int32 **lo, int32 **hi);

/* idgen.backfill_shards: the shards the backfill lanes mint on (lane.c). */
#define IDGEN_MAX_LANES	64
extern char *idgen_backfill_shards;
extern bool idgen_backfill_shards_check_hook(char **newval, void **extra,
											 GucSource source);
extern void idgen_backfill_shards_assign_hook(const char *newval, void *extra);
extern bool idgen_shard_is_lane(int32 shard);
extern int	idgen_lane_shards(int32 *shards);
extern void idgen_lane_shards_check(void);

extern void idgen_shard_check_owned(int32 shard);
extern int	idgen_owned_shards(int32 **shards);
extern bool idgen_shard_owned(int32 shard);

#endif							/* IDGEN_SHARD_H */
