/*-------------------------------------------------------------------------
 *
 * stamp_write.h
 *		Writing a database's stamp (stamp_write.c).
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/stamp_write.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_STAMP_WRITE_H
#define IDGEN_STAMP_WRITE_H

#include "layout_history.h"
#include "stamp_shards.h"

extern void idgen_stamp_lock(Oid extoid);
extern void idgen_stamp_write_on(Oid extoid, const char *text,
								 const IdgenLayoutHistory *h,
								 const IdgenStampShards *shards);

/*
 * This database's stamp, for the stamps worker: false where the database
 * has no stamp to keep (no extension, or one older than 1.4).  Writing
 * the server's history is idgen_stamp_write().
 */
extern bool idgen_stamp_read_here(IdgenLayoutHistory *stamp, bool *present,
								  IdgenStampShards *shards);
extern void idgen_stamp_write(const IdgenLayoutHistory *h);
extern bool idgen_stamp_add_shards(const IdgenStampShards *more);

#endif							/* IDGEN_STAMP_WRITE_H */
