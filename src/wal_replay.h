/*-------------------------------------------------------------------------
 *
 * wal_replay.h
 *		idgen's WAL resource manager, registered from _PG_init.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/wal_replay.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_WAL_REPLAY_H
#define IDGEN_WAL_REPLAY_H

extern void idgen_wal_register(void);

#endif							/* IDGEN_WAL_REPLAY_H */
