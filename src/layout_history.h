/*-------------------------------------------------------------------------
 *
 * layout_history.h
 *		Every layout this node has minted under, each from its cut-over: the
 *		first ID of a version is above every ID of the versions before, so
 *		comparing an ID with the cut-overs tells which layout minted it.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/layout_history.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LAYOUT_HISTORY_H
#define IDGEN_LAYOUT_HISTORY_H

#include "datatype/timestamp.h"
#include "port/atomics.h"

#include "layout.h"

/* Each version takes a restart; a full history refuses one more. */
#define IDGEN_MAX_LAYOUT_VERSIONS	32

#define IDGEN_LAYOUTS_FILE			"idgen.layouts"

typedef struct IdgenLayoutVersion
{
	uint64		first_id;		/* above every ID of the versions before */
	IdgenLayout layout;
} IdgenLayoutVersion;

/*
 * The bytes versions had before the layout was a struct of its own, as
 * servers wrote them to the files and WAL and hashed them for the stamps'
 * key (idgen_history_key): they must not change.
 */
StaticAssertDecl(sizeof(IdgenLayoutVersion) == 24,
				 "IdgenLayoutVersion is in state files and WAL");
StaticAssertDecl(offsetof(IdgenLayoutVersion, first_id) == 0 &&
				 offsetof(IdgenLayoutVersion, layout.epoch) == 8 &&
				 offsetof(IdgenLayoutVersion, layout.shard_bits) == 16 &&
				 offsetof(IdgenLayoutVersion, layout.sequence_bits) == 20,
				 "IdgenLayoutVersion is in state files and WAL");

/* As the files and WAL carry it: versions in order, version 1 first. */
typedef struct IdgenLayoutHistory
{
	uint64		id;				/* drawn when version 1 is recorded */
	int32		nversions;
	int32		flags;			/* IDGEN_HISTORY_* */
	IdgenLayoutVersion versions[IDGEN_MAX_LAYOUT_VERSIONS];
} IdgenLayoutHistory;

StaticAssertDecl(sizeof(IdgenLayoutHistory) ==
				 16 + IDGEN_MAX_LAYOUT_VERSIONS * 24,
				 "IdgenLayoutHistory is in state files and WAL");

/*
 * No history was found; version 1 was assumed to be the configured layout.
 * The id tells one server's history (its standbys', a pg_upgrade's that
 * carried the files) from another's, whose versions may look the same.
 */
#define IDGEN_HISTORY_ASSUMED		0x1

/* Shared memory, from idgen.c's hooks. */
extern Size idgen_history_shmem_size(void);
extern bool idgen_history_shmem_attach(void);

/* The history as recorded, and changing it (fence.c). */
extern void idgen_history_copy(IdgenLayoutHistory *history);
extern void idgen_history_publish(const IdgenLayoutHistory *history);
extern bool idgen_history_is_prefix(const IdgenLayoutHistory *a,
									const IdgenLayoutHistory *b);
extern bool idgen_history_check(const IdgenLayoutHistory *history);
extern int	idgen_history_read_file(IdgenLayoutHistory *history,
									uint64 *system_identifier);
extern void idgen_history_write_file(const IdgenLayoutHistory *history);

/* One frame for a history in a file, whichever file (magics below). */
#define IDGEN_LAYOUTS_MAGIC		0x6964676c	/* "idgl": idgen.layouts */
#define IDGEN_STAMPED_MAGIC		0x69647331	/* "ids1": idgen.stamped */
extern int	idgen_history_file_read(const char *path, uint32 magic,
									IdgenLayoutHistory *history,
									uint64 *system_identifier);
extern void idgen_history_file_write(const char *path, const char *tmp_path,
									 uint32 magic,
									 const IdgenLayoutHistory *history);
extern void idgen_history_assume(IdgenLayoutHistory *history,
								 const IdgenLayout *layout);

/* The server's history, as this process last took it, and its versions. */
extern const IdgenLayoutHistory *idgen_server_history(uint32 *changes);

/* Moved by every change of the server's history; in shared memory. */
extern pg_atomic_uint32 *idgen_history_changes;

static inline bool
idgen_server_history_changed(uint32 changes)
{
	return pg_atomic_read_u32(idgen_history_changes) != changes;
}
extern TimestampTz idgen_version_start(const IdgenLayoutVersion *v);

/* The same version: the same layout, from the same first ID. */
static inline bool
idgen_version_equal(const IdgenLayoutVersion *a, const IdgenLayoutVersion *b)
{
	return a->first_id == b->first_id && idgen_layout_equal(&a->layout, &b->layout);
}

/* The version (numbered from 1) of a history whose IDs include id >= 0. */
static inline const IdgenLayoutVersion *
idgen_history_version_of_id(const IdgenLayoutHistory *h, int64 id, int *version)
{
	int			i = h->nversions - 1;

	while (i > 0 && (uint64) id < h->versions[i].first_id)
		i--;
	*version = i + 1;
	return &h->versions[i];
}

extern const IdgenLayoutVersion *idgen_history_version_at(const IdgenLayoutHistory *h,
														  TimestampTz ts, int *version,
														  uint64 *below);

#endif							/* IDGEN_LAYOUT_HISTORY_H */
