/*-------------------------------------------------------------------------
 *
 * stamp_shards.h
 *		The part of a database's stamp that names the shards whose IDs it
 *		may hold, so that a restore of a dump that holds no ID of a server's
 *		backfill lanes leaves them minting.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/stamp_shards.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_STAMP_SHARDS_H
#define IDGEN_STAMP_SHARDS_H

#include "lib/stringinfo.h"

/* Just before the history's part: older libraries read it as description. */
#define IDGEN_STAMP_SHARDS_OPEN	" [shards: "

/* Ranges of shards a part may name; a union needing more names any shard. */
#define IDGEN_STAMP_SHARDS_MAX	64

typedef struct IdgenStampShards
{
	bool		any;			/* no part (older stamps), or "any" */
	int			nranges;		/* ascending, apart */
	int32		lo[IDGEN_STAMP_SHARDS_MAX];
	int32		hi[IDGEN_STAMP_SHARDS_MAX];
} IdgenStampShards;

extern void idgen_stamp_shards_any(IdgenStampShards *l);
extern void idgen_stamp_shards_lanes(IdgenStampShards *l);
extern void idgen_stamp_shards_server(IdgenStampShards *l);
extern void idgen_stamp_shards_add(IdgenStampShards *into, const IdgenStampShards *from);
extern bool idgen_stamp_shards_covers(const IdgenStampShards *l, const IdgenStampShards *s);
extern bool idgen_stamp_shards_names(const IdgenStampShards *l, int32 shard);
extern bool idgen_stamp_shards_equal(const IdgenStampShards *a, const IdgenStampShards *b);
extern void idgen_stamp_shards_format(StringInfo buf, const IdgenStampShards *l,
									  bool any_explicit);
extern const char *idgen_stamp_shards_in(const char *comment, const char *open,
										IdgenStampShards *l);

#endif							/* IDGEN_STAMP_SHARDS_H */
