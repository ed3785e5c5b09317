/*-------------------------------------------------------------------------
 *
 * layout_stamp.h
 *		Each database's stamp of the layout history: the versions its IDs
 *		were minted under, at the end of the extension's comment, which
 *		pg_dump carries.  A database decodes and mints only when its stamp is
 *		the server's history.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/layout_stamp.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LAYOUT_STAMP_H
#define IDGEN_LAYOUT_STAMP_H

#include "lib/stringinfo.h"

#include "layout_history.h"
#include "stamp_shards.h"

/* What the decoders use in this database, while it agrees: see layout_stamp.c. */
extern const IdgenLayoutHistory *idgen_decoding_effective;	/* NULL: check */
extern uint32 idgen_decoding_server_changes;

extern const IdgenLayoutHistory *idgen_decoding_history_slow(void);

/* The server's history, or an error where this database's stamp differs. */
static inline const IdgenLayoutHistory *
idgen_decoding_history(void)
{
	if (likely(idgen_decoding_effective != NULL &&
			   !idgen_server_history_changed(idgen_decoding_server_changes)))
		return idgen_decoding_effective;
	return idgen_decoding_history_slow();
}

/* This database's stamp, or NULL where it has none (idgen_layout_history()). */
extern const IdgenLayoutHistory *idgen_database_stamp_if_any(void);

/* Minting in this database: its stamp is the history, and every database's is. */
extern bool idgen_database_mints;
extern uint32 idgen_database_mints_changes;
extern void idgen_check_database_mints_slow(void);

static inline void
idgen_check_database_mints(void)
{
	if (unlikely(!idgen_database_mints ||
				 idgen_server_history_changed(idgen_database_mints_changes)))
		idgen_check_database_mints_slow();
}

/* The stamp's text, and reading it back. */
extern void idgen_stamp_format(StringInfo buf, const IdgenLayoutHistory *h);
extern bool idgen_stamp_parse(const char *text, IdgenLayoutHistory *h);

/* Comparing a stamp with the server's history. */
typedef enum IdgenStampMatch
{
	IDGEN_STAMP_SAME,			/* version for version */
	IDGEN_STAMP_PREFIX,			/* the history's first versions, or none */
	IDGEN_STAMP_OTHER			/* another history */
} IdgenStampMatch;

extern IdgenStampMatch idgen_stamp_match(const IdgenLayoutHistory *stamp,
										 const IdgenLayoutHistory *server);
extern bool idgen_stamp_is_own(const IdgenLayoutHistory *stamp,
							   const IdgenLayoutHistory *server);

/*
 * Every stamp names this server's shards: the stamps worker's visits, after
 * each start, a reload that changed them, or a database's ask.  Minting for
 * a given time waits for the first visit since the start.
 */
extern bool idgen_stamps_shards_pending(void);
extern uint64 idgen_stamps_shards_ask(void);
extern void idgen_stamps_shards_changed(void);
extern uint64 idgen_stamps_shards_visit_begins(void);
extern void idgen_stamps_shards_visited(uint64 begun);
extern bool idgen_stamps_lanes_pending(void);
extern bool idgen_database_names_lanes;
extern void idgen_check_lanes_named_slow(void);

static inline void
idgen_check_lanes_named(void)
{
	if (unlikely(!idgen_database_names_lanes || idgen_stamps_lanes_pending()))
		idgen_check_lanes_named_slow();
}

/* The pieces the hooks and the SQL functions (stamp_hooks.c) build on. */
#define IDGEN_STAMP_OPEN	" [layout history: "
#define IDGEN_COPY_TABLE	"idgen_layout_versions"	/* idgen 1.3's */

typedef struct IdgenExtensionHere
{
	Oid			oid;
	Oid			schema;
	int			minor;			/* of 1.x */
} IdgenExtensionHere;

extern bool idgen_extension_here(IdgenExtensionHere *ext);
extern bool idgen_comment_stamp(const char *comment, IdgenLayoutHistory *stamp,
								bool *malformed);
extern char *idgen_comment_text(const char *comment);
extern void idgen_comment_shards(const char *comment, IdgenStampShards *shards);
extern void idgen_stamp_changed(void);
extern void idgen_read_copy(Oid relid, IdgenLayoutHistory *copy);

/*
 * Whether every database has been stamped with the history: "idgen stamps"
 * in shared memory holds the key of the last history stamped everywhere.
 */
extern Size idgen_stamps_shmem_size(void);
extern void idgen_stamps_shmem_attach(void);
extern uint64 idgen_history_key(const IdgenLayoutHistory *h);
extern bool idgen_stamps_pending(const IdgenLayoutHistory *h);
extern void idgen_stamps_done(const IdgenLayoutHistory *h);
extern bool idgen_stamps_done_history(IdgenLayoutHistory *h);
extern void idgen_stamps_begun(void);
extern void idgen_stamps_set_last_database(Oid dboid);
extern Oid	idgen_stamps_last_database(void);

#endif							/* IDGEN_LAYOUT_STAMP_H */
