/*-------------------------------------------------------------------------
 *
 * durable_file.h
 *		Small files in the data directory, written so that a crash leaves
 *		the old one or the new one whole.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/durable_file.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_DURABLE_FILE_H
#define IDGEN_DURABLE_FILE_H

/*
 * Every file idgen keeps is one struct: magic, version, the cluster's system
 * identifier, its contents, then a CRC-32C of every byte before the CRC,
 * at crc_at.  Sealed and written whole here; read whole and checked here;
 * each file says which magic and versions it takes.
 */
extern void idgen_file_write(const char *path, const char *tmp_path,
							 void *file, size_t len, size_t crc_at);
extern bool idgen_file_intact(const void *file, size_t crc_at);

extern int	idgen_read_whole(const char *path, void *buf, size_t bufsize);
extern bool idgen_log_durably(uint8 info, const void *data, uint32 len);

#endif							/* IDGEN_DURABLE_FILE_H */
