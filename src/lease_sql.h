/*-------------------------------------------------------------------------
 *
 * lease_sql.h
 *		The lease registry's protocol as SQL text (lease_sql.c).
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/lease_sql.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LEASE_SQL_H
#define IDGEN_LEASE_SQL_H

/*
 * The registry's schema version: the table's columns and its guards, as
 * this idgen installs them.  The guard's body names it; a server finding
 * an older version (or none: 1.1's table, 1.3's guard) installs its own in
 * one transaction, and one finding a newer version leaves it, as a newer
 * idgen put it there, during a rolling upgrade.  A new version keeps every
 * column and every guarantee of the older ones, so that the servers not
 * yet upgraded work on it unchanged.
 *	1	1.3: the guard, which let anyone give a lease back
 *	2	1.4: a give-back only by the holder, as the table's owner
 *	3	1.7: backfill lanes' rows (lane, lane_ranges), which never become
 *		live rows nor live rows lanes, and whose ranges are never forgotten
 */
#define IDGEN_REGISTRY_SCHEMA_VERSION	3

extern const char *const idgen_lease_sql_lost_rows;
extern const char *const idgen_lease_sql_giving_back;
extern const char *const idgen_lease_sql_add_rows;
extern const char *const idgen_lease_sql_add_pool_rows;
extern const char *const idgen_lease_sql_claim;
extern const char *const idgen_lease_sql_lock_rows;
extern const char *const idgen_lease_sql_update_rows;
extern const char *const idgen_lease_sql_create_table;
extern const char *const idgen_lease_sql_table_owner;
extern const char *const idgen_lease_sql_guard[];
extern const char *const idgen_lease_sql_guards_present;
extern const char *const idgen_lease_sql_clock;
extern const char *const idgen_lease_sql_lane_session;
extern const char *const idgen_lease_sql_lane_lock_rows;
extern const char *const idgen_lease_sql_lane_update_rows;
extern const char *const idgen_lease_sql_lane_commit_ranges;

#endif							/* IDGEN_LEASE_SQL_H */
