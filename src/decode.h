/*-------------------------------------------------------------------------
 *
 * decode.h
 *		Decoding IDs by the layout history, in this database.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/decode.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_DECODE_H
#define IDGEN_DECODE_H

#include "datatype/timestamp.h"

extern TimestampTz idgen_id_timestamp(int64 id, int *version);
extern int32 idgen_id_shard(int64 id);
extern int32 idgen_id_sequence(int64 id);
extern int64 idgen_min_id_at(TimestampTz ts);
extern int	idgen_id_layout_version(int64 id);

#endif							/* IDGEN_DECODE_H */
