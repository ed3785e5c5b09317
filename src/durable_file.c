/*-------------------------------------------------------------------------
 *
 * durable_file.c
 *		Small files in the data directory (the state file, the layout
 *		history, the lanes, the history stamped everywhere), and idgen's
 *		WAL records made durable.
 *
 * A file is written to a temporary name, fsync'd and durable_rename'd, so a
 * crash leaves either the old file or the new one, whole.  A record is
 * flushed and received by the synchronous standbys before what it records
 * is published.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/durable_file.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"

#include "durable_file.h"
#include "wal_records.h"

/* The bytes to a temporary file, then renamed over path. */
static void
write_durably(const char *path, const char *tmp_path,
			  const void *data, size_t len)
{
	int			fd;

	/*
	 * A temporary file left by a crash, or planted, that this process cannot
	 * open would stop every later write for good: remove it first.  What
	 * cannot be removed (a directory with something in it, say) stops with
	 * a message that says what to remove; minting only waits.
	 */
	if (unlink(tmp_path) != 0 && errno != ENOENT &&
		!(errno == EISDIR && rmdir(tmp_path) == 0))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not remove stale file \"%s\": %m", tmp_path),
				 errdetail("The idgen fence cannot move while it is there; minting stops where the fence stands."),
				 errhint("Remove \"%s\" from the data directory; the fence moves again within a second.",
						 tmp_path)));
	fd = OpenTransientFile(tmp_path, O_WRONLY | O_CREAT | O_EXCL | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp_path)));
	errno = 0;
	if (write(fd, data, len) != (ssize_t) len)
	{
		if (errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp_path)));
	}
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmp_path)));

	/* fsyncs the file, renames it, fsyncs the directory */
	(void) durable_rename(tmp_path, path, ERROR);
}

/*
 * Read up to bufsize bytes of a file; the number read, or -1 when it does
 * not exist.  One byte more than the largest expected file tells a longer
 * file from one of the expected size.
 */
int
idgen_read_whole(const char *path, void *buf, size_t bufsize)
{
	int			fd;
	int			r;

	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ENOENT)
			return -1;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", path)));
	}
	r = read(fd, buf, bufsize);
	if (r < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read file \"%s\": %m", path)));
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", path)));
	return r;
}

/*
 * Insert a record, flush it and wait for the synchronous standbys, with the
 * writer's lock held; what it records is published only after this returns
 * true.  SyncRepWaitForLSN gives up without error when we are told to die:
 * then false, and the caller, having released its lock, exits without
 * publishing a record the standbys may not have.  Only the fence worker
 * calls this: it takes no cancel, which would end the wait unreceived.
 */
bool
idgen_log_durably(uint8 info, const void *data, uint32 len)
{
	XLogRecPtr	lsn;

	XLogBeginInsert();
	XLogRegisterData((char *) data, len);
	lsn = XLogInsert(RM_IDGEN_ID, info);
	XLogFlush(lsn);
	SyncRepWaitForLSN(lsn, false);
	return !ProcDiePending;
}

/* ---- the files' frame ---- */

static pg_crc32c
crc_of(const void *file, size_t crc_at)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, file, crc_at);
	FIN_CRC32C(crc);
	return crc;
}

/* The file sealed (its CRC stored at crc_at), then written durably. */
void
idgen_file_write(const char *path, const char *tmp_path, void *file,
				 size_t len, size_t crc_at)
{
	pg_crc32c	crc = crc_of(file, crc_at);

	Assert(crc_at + sizeof(crc) <= len);
	memcpy((char *) file + crc_at, &crc, sizeof(crc));
	write_durably(path, tmp_path, file, len);
}

/* Whether the CRC stored at crc_at is that of the bytes before it. */
bool
idgen_file_intact(const void *file, size_t crc_at)
{
	pg_crc32c	stored;
	pg_crc32c	crc = crc_of(file, crc_at);

	memcpy(&stored, (const char *) file + crc_at, sizeof(stored));
	return EQ_CRC32C(crc, stored);
}
