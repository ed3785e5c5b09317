/*-------------------------------------------------------------------------
 *
 * wal_records.h
 *		idgen's WAL resource manager and the kinds of its records.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/wal_records.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_WAL_RECORDS_H
#define IDGEN_WAL_RECORDS_H

/*
 * idgen's own custom WAL resource manager ID (custom IDs run from 128 to
 * 255).  Not RM_EXPERIMENTAL_ID (128): every extension in development
 * shares that one.  163 was free in the community's list of custom resource
 * managers when it was chosen; the README says where to register it.  WAL
 * written under another ID cannot be replayed by this build, so the ID
 * never changes once released.  fence.c replays every record.
 */
#define RM_IDGEN_ID				163
#define XLOG_IDGEN_FENCE		0x00
#define XLOG_IDGEN_LAYOUTS		0x10	/* the layout history, whole */
#define XLOG_IDGEN_STAMPED		0x20	/* the history every database has */

#endif							/* IDGEN_WAL_RECORDS_H */
