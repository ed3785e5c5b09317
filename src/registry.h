/*-------------------------------------------------------------------------
 *
 * registry.h
 *		The lease worker's client of the lease registry: one libpq session,
 *		non-blocking, every wait bounded by a deadline.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/registry.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_REGISTRY_H
#define IDGEN_REGISTRY_H

#include "libpq-fe.h"
#include "portability/instr_time.h"

/* Deadlines are microseconds of the monotonic clock. */
static inline int64
idgen_monotonic_us(void)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	return (int64) INSTR_TIME_GET_MICROSEC(now);
}

/* Milliseconds left before deadline, at least 0. */
static inline long
idgen_ms_left(int64 deadline)
{
	int64		left = deadline - idgen_monotonic_us();

	return left <= 0 ? 0 : (long) ((left + 999) / 1000);
}

/*
 * Each call that fails sets *error to a message (the connection string's
 * secrets not yet masked) and closes the session, which rolls back an open
 * transaction.
 */
extern void idgen_registry_init(const char *conninfo);
extern bool idgen_registry_ready(int64 deadline, int timeout_ms, char **error);
extern bool idgen_registry_begin(int64 deadline, char **error);
extern PGresult *idgen_registry_exec(const char *sql, int nparams,
									 const char *const *params,
									 int64 deadline, char **error);
extern bool idgen_registry_command(const char *sql, int nparams,
								   const char *const *params,
								   int64 deadline, char **error);
extern bool idgen_registry_commit(int64 deadline, char **error);
extern void idgen_registry_close(void);
extern void idgen_registry_set_stoppable(bool stoppable);
extern char *idgen_registry_mask(const char *message);
extern const char *idgen_registry_hint(void);

#endif							/* IDGEN_REGISTRY_H */
