/*-------------------------------------------------------------------------
 *
 * idgen_compat.h
 *		Shims over the PostgreSQL versions idgen builds against.
 *
 * idgen needs PostgreSQL 15 or later: shmem_request_hook and custom WAL
 * resource managers both arrived in 15.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/idgen_compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_COMPAT_H
#define IDGEN_COMPAT_H

#if PG_VERSION_NUM < 150000
#error "idgen requires PostgreSQL 15 or later"
#endif

/* PostgreSQL 17 renamed a process's index into the PGPROC array. */
#if PG_VERSION_NUM >= 170000
#define IDGEN_MY_PROC_NUMBER	MyProcNumber
#else
#define IDGEN_MY_PROC_NUMBER	(MyProc->pgprocno)
#endif

/* 16 moved the varlena macros (VARDATA_ANY...) out of postgres.h. */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * Since 16 a GUC check hook must allocate its extra with guc_malloc(), which
 * the GUC machinery then frees with guc_free(); before, with malloc() and
 * free().  An extra the hook rejects is never the machinery's: the hook
 * frees it itself.
 */
#if PG_VERSION_NUM >= 160000
#define idgen_guc_malloc(size)	guc_malloc(LOG, (size))
#define idgen_guc_free(ptr)		guc_free(ptr)
#else
#define idgen_guc_malloc(size)	malloc(size)
#define idgen_guc_free(ptr)		free(ptr)
#endif

/*
 * Globals read on every mint.  Hidden, they are addressed directly rather
 * than through the GOT (PostgreSQL 16 builds modules with
 * -fvisibility=hidden; 15 does not).
 */
#if defined(__GNUC__) || defined(__clang__)
#define IDGEN_HOT_GLOBAL	__attribute__((visibility("hidden")))
#else
#define IDGEN_HOT_GLOBAL
#endif

/*
 * A function that never returns: every path raises ERROR (or worse).  Said
 * so, the compiler and the analysers know the code after a call to it is
 * never reached.  PostgreSQL 18 spells it pg_noreturn, before the
 * declaration; 15 to 17 pg_attribute_noreturn(), which is
 * __attribute__((noreturn)) and may stand there too.  Write it first:
 * idgen_noreturn static void f(void).
 */
#if defined(pg_noreturn)
#define idgen_noreturn	pg_noreturn
#else
#define idgen_noreturn	pg_attribute_noreturn()
#endif

/* c.h's Abs() is gone from PostgreSQL 17 */
static inline int64
idgen_abs64(int64 x)
{
	return x < 0 ? -x : x;
}

/* From PostgreSQL 19 a handler takes two arguments; SIG_IGN is PG_SIG_IGN */
#ifndef PG_SIG_IGN
#define PG_SIG_IGN	SIG_IGN
#endif

#endif							/* IDGEN_COMPAT_H */
