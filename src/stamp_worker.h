/*-------------------------------------------------------------------------
 *
 * stamp_worker.h
 *		The "idgen stamps" worker: after the layout history changed, it
 *		stamps every database with it before minting goes on.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/stamp_worker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_STAMP_WORKER_H
#define IDGEN_STAMP_WORKER_H

#include "layout_history.h"

#define IDGEN_STAMPED_FILE		"idgen.stamped"

/* The postmaster, at start; replay, for the primary's record. */
extern void idgen_stamps_load_file(void);
extern void idgen_stamps_replayed(const IdgenLayoutHistory *h);

/* The fence worker, once it has published the history of this start. */
extern void idgen_stamps_begin(const IdgenLayoutHistory *h);

/* The fence worker, at each wake-up: start the worker again if it could not. */
extern void idgen_stamps_retry(void);

extern PGDLLEXPORT void idgen_stamps_worker_main(Datum main_arg);

#endif							/* IDGEN_STAMP_WORKER_H */
