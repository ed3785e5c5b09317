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

#endif							/* IDGEN_LEASE_SQL_H */
