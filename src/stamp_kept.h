/*-------------------------------------------------------------------------
 *
 * stamp_kept.h
 *		A database's stamp kept while the database has no extension to
 *		carry it: one a restore brought before CREATE EXTENSION, or one
 *		DROP EXTENSION took away.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/stamp_kept.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_STAMP_KEPT_H
#define IDGEN_STAMP_KEPT_H

#include "layout_history.h"

extern void idgen_stamp_kept_register(void);
extern bool idgen_stamp_kept_read(IdgenLayoutHistory *h);
extern void idgen_stamp_kept_write(const IdgenLayoutHistory *h);
extern void idgen_stamp_kept_clear(void);

#endif							/* IDGEN_STAMP_KEPT_H */
