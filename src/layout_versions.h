/*-------------------------------------------------------------------------
 *
 * layout_versions.h
 *		Each database's copy of the layout history: the table
 *		idgen_layout_versions, which pg_dump carries, and the history the
 *		decoders use in this database.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/layout_versions.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LAYOUT_VERSIONS_H
#define IDGEN_LAYOUT_VERSIONS_H

#include "layout_history.h"

#define IDGEN_VERSIONS_TABLE	"idgen_layout_versions"

extern const IdgenLayoutHistory *idgen_decoding_history_slow(void);

/* What this process decodes by, while valid: see layout_versions.c. */
extern const IdgenLayoutHistory *idgen_decoding_effective;	/* NULL: derive */
extern uint32 idgen_decoding_server_changes;

static inline const IdgenLayoutHistory *
idgen_decoding_history(void)
{
	if (likely(idgen_decoding_effective != NULL &&
			   !idgen_server_history_changed(idgen_decoding_server_changes)))
		return idgen_decoding_effective;
	return idgen_decoding_history_slow();
}
extern const IdgenLayoutHistory *idgen_decoding_history_if_any(void);
extern int	idgen_versions_record(bool quiet, const IdgenLayoutVersion *here);
extern int	idgen_versions_adopt(const IdgenLayoutVersion *current);
extern bool idgen_versions_after_write(Oid relid, bool insert,
									   const IdgenLayoutVersion *here);

/* The database's history and the server's agree, as last derived here. */
extern bool idgen_database_history_ok;

extern void idgen_versions_launch_sync(const IdgenLayoutVersion *here,
									   bool needed);

extern PGDLLEXPORT void idgen_layouts_worker_main(Datum main_arg);

#endif							/* IDGEN_LAYOUT_VERSIONS_H */
