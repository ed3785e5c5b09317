/*-------------------------------------------------------------------------
 *
 * stats.h
 *		What the generator has done since start.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/stats.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_STATS_H
#define IDGEN_STATS_H

#include "fmgr.h"

extern Datum idgen_stats(PG_FUNCTION_ARGS);
extern Datum idgen_stats_backends(PG_FUNCTION_ARGS);

#endif							/* IDGEN_STATS_H */
