/*-------------------------------------------------------------------------
 *
 * layout_history.c
 *		The layout history: every layout this node has minted under, each
 *		from its cut-over.
 *
 * A layout change starts the new layout above every ID of the old one (see
 * fence.c), so the versions' first IDs rise, and the version that minted
 * an ID is the last whose first ID is at or below it.  The decoders use
 * that instead of the layout the server runs with, and old IDs decode as
 * they were minted.
 *
 * The history is durable as the fence is: it is kept in its own file
 * ($PGDATA/idgen.layouts), in the state file beside the fence, and in WAL
 * (logged by the fence worker each time it starts), so it survives the loss
 * of either file, and standbys replay it.  It only ever grows, and only at
 * a start or a promotion, before the first ID of the new version is minted;
 * so appending a version changes the decoding of no ID minted before.
 *
 * In shared memory it is written under a spinlock and counted; each process
 * decodes from its own copy, taken again when the count has moved.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/layout_history.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "port/atomics.h"
#include "port/pg_crc32c.h"
#include "storage/shmem.h"
#include "storage/spin.h"

#include "durable_file.h"
#include "layout_history.h"

#define IDGEN_LAYOUTS_TMP_FILE	IDGEN_LAYOUTS_FILE ".tmp"
#define IDGEN_HISTORY_FILE_VERSION	1

/*
 * A history in a file: the layouts' (idgen.layouts), and the one stamped
 * in every database (idgen.stamped, stamp_worker.c), each with its magic.
 */
typedef struct IdgenHistoryFile
{
	uint32		magic;
	uint32		version;
	uint64		system_identifier;	/* pg_control's, of the writer */
	IdgenLayoutHistory history;
	pg_crc32c	crc;			/* of everything above */
} IdgenHistoryFile;

typedef struct IdgenHistoryShared
{
	slock_t		mutex;
	pg_atomic_uint32 changes;	/* moved by every publish */
	IdgenLayoutHistory history;
} IdgenHistoryShared;

static IdgenHistoryShared *history_shared = NULL;
pg_atomic_uint32 *idgen_history_changes = NULL;

/* this process's copy, and the count it was taken at */
static IdgenLayoutHistory local_history;
static uint32 local_changes;
static bool local_taken = false;

Size
idgen_history_shmem_size(void)
{
	return MAXALIGN(sizeof(IdgenHistoryShared));
}

bool
idgen_history_shmem_attach(void)
{
	bool		found;

	history_shared = ShmemInitStruct("idgen layouts", sizeof(IdgenHistoryShared),
									 &found);
	if (!found)
	{
		SpinLockInit(&history_shared->mutex);
		pg_atomic_init_u32(&history_shared->changes, 0);
		memset(&history_shared->history, 0, sizeof(IdgenLayoutHistory));
	}
	idgen_history_changes = &history_shared->changes;
	return found;
}

void
idgen_history_copy(IdgenLayoutHistory *history)
{
	SpinLockAcquire(&history_shared->mutex);
	*history = history_shared->history;
	SpinLockRelease(&history_shared->mutex);
}

void
idgen_history_publish(const IdgenLayoutHistory *history)
{
	Assert(idgen_history_check(history));
	SpinLockAcquire(&history_shared->mutex);
	history_shared->history = *history;
	pg_atomic_fetch_add_u32(&history_shared->changes, 1);
	SpinLockRelease(&history_shared->mutex);
}

/*
 * This process's copy of the server's history, taken again when it has
 * changed since.
 */
const IdgenLayoutHistory *
idgen_server_history(uint32 *changes_out)
{
	uint32		changes = pg_atomic_read_u32(&history_shared->changes);

	if (unlikely(!local_taken || changes != local_changes))
	{
		SpinLockAcquire(&history_shared->mutex);
		local_history = history_shared->history;
		local_changes = pg_atomic_read_u32(&history_shared->changes);
		SpinLockRelease(&history_shared->mutex);
		if (local_history.nversions < 1)
			elog(ERROR, "idgen layout history is empty");
		local_taken = true;
	}
	if (changes_out)
		*changes_out = local_changes;
	return &local_history;
}

/* The instant a version's first ID is from. */
TimestampTz
idgen_version_start(const IdgenLayoutVersion *v)
{
	return idgen_ms_to_timestamptz(&v->layout,
								   idgen_ms_of_id(&v->layout, v->first_id));
}

/*
 * The version in force at ts: the last that had begun by then.  *below is
 * the first ID of the next version (UINT64_MAX for the last): no ID of this
 * one reaches it.
 */
const IdgenLayoutVersion *
idgen_history_version_at(const IdgenLayoutHistory *h, TimestampTz ts,
						 int *version, uint64 *below)
{
	int			i = h->nversions - 1;

	while (i > 0 && ts < idgen_version_start(&h->versions[i]))
		i--;
	*version = i + 1;
	*below = i + 1 < h->nversions ? h->versions[i + 1].first_id : PG_UINT64_MAX;
	return &h->versions[i];
}

/* Every version of a is b's, in the same place, in one history. */
bool
idgen_history_is_prefix(const IdgenLayoutHistory *a, const IdgenLayoutHistory *b)
{
	if (a->id != b->id || a->nversions > b->nversions)
		return false;
	for (int i = 0; i < a->nversions; i++)
		if (!idgen_version_equal(&a->versions[i], &b->versions[i]))
			return false;
	return true;
}

/* What a history read from a file or WAL must be before it is believed. */
bool
idgen_history_check(const IdgenLayoutHistory *history)
{
	if (history->nversions < 1 || history->nversions > IDGEN_MAX_LAYOUT_VERSIONS)
		return false;
	for (int i = 0; i < history->nversions; i++)
	{
		const IdgenLayoutVersion *v = &history->versions[i];

		/* each width first: their sum must not overflow */
		if (v->layout.shard_bits < 0 || v->layout.sequence_bits < 0 ||
			v->layout.shard_bits > 63 || v->layout.sequence_bits > 63 ||
			idgen_time_bits(&v->layout) < IDGEN_MIN_TIME_BITS ||
			!IS_VALID_TIMESTAMP(v->layout.epoch) || v->first_id > (uint64) PG_INT64_MAX)
			return false;
		if (i == 0 ? v->first_id != 0 : v->first_id <= history->versions[i - 1].first_id)
			return false;
	}
	return true;
}

/*
 * 0, with the history and the writer's system identifier; -1 when there is
 * no file; 1 when it is not a whole history with this magic.
 */
int
idgen_history_file_read(const char *path, uint32 magic,
						IdgenLayoutHistory *history, uint64 *system_identifier)
{
	IdgenHistoryFile file;
	char		buf[sizeof(IdgenHistoryFile) + 1];
	int			r;

	r = idgen_read_whole(path, buf, sizeof(buf));
	if (r < 0)
		return -1;
	memcpy(&file, buf, Min(r, (int) sizeof(file)));
	if (r != sizeof(file) || file.magic != magic ||
		file.version != IDGEN_HISTORY_FILE_VERSION ||
		!idgen_file_intact(&file, offsetof(IdgenHistoryFile, crc)) ||
		!idgen_history_check(&file.history))
		return 1;
	*history = file.history;
	*system_identifier = file.system_identifier;
	return 0;
}

void
idgen_history_file_write(const char *path, const char *tmp_path, uint32 magic,
						 const IdgenLayoutHistory *history)
{
	IdgenHistoryFile file;

	memset(&file, 0, sizeof(file));
	file.magic = magic;
	file.version = IDGEN_HISTORY_FILE_VERSION;
	file.system_identifier = GetSystemIdentifier();
	file.history = *history;
	idgen_file_write(path, tmp_path, &file, sizeof(file),
					 offsetof(IdgenHistoryFile, crc));
}

/* 0, or -1 when there is no file; ERROR when it is not a history. */
int
idgen_history_read_file(IdgenLayoutHistory *history, uint64 *system_identifier)
{
	int			r = idgen_history_file_read(IDGEN_LAYOUTS_FILE, IDGEN_LAYOUTS_MAGIC,
											history, system_identifier);

	if (r <= 0)
		return r;
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("idgen layout history \"%s\" is corrupt", IDGEN_LAYOUTS_FILE),
			 errhint("Move the file out of the data directory: the server then takes the history from \"%s\" and writes the file again.",
					 "idgen.state")));
	return -1;					/* not reached */
}

void
idgen_history_write_file(const IdgenLayoutHistory *history)
{
	idgen_history_file_write(IDGEN_LAYOUTS_FILE, IDGEN_LAYOUTS_TMP_FILE,
							 IDGEN_LAYOUTS_MAGIC, history);
}

/*
 * A history of one version from 0, assumed: a layout the settings or an
 * older state file name, under a new history id.
 */
void
idgen_history_assume(IdgenLayoutHistory *history, const IdgenLayout *layout)
{
	memset(history, 0, sizeof(*history));
	if (!pg_strong_random(&history->id, sizeof(history->id)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random idgen layout history id")));
	history->nversions = 1;
	history->flags = IDGEN_HISTORY_ASSUMED;
	history->versions[0].layout = *layout;
}
