/*-------------------------------------------------------------------------
 *
 * public_id.c
 *		Public IDs that leak nothing: a keyed permutation of the IDs.
 *
 * A time-sorted ID shown in a URL tells anyone when the row was made and,
 * from two of them, how many rows were made in between.
 * idgen_to_public(id) maps each ID to an unrelated-looking one with the
 * block cipher Speck64/128, keyed by idgen.public_key, and
 * idgen_from_public() maps it back: no lookup table, no second column.
 *
 * Speck works on 64 bits; IDs are the non-negative 63-bit values.  Cycle
 * walking keeps the result among them: encrypt, and while the top bit is
 * set, encrypt again.  That is a permutation of [0, 2^63), since the
 * cipher is one of [0, 2^64); decryption walks back the same way.  About
 * two encryptions on average.
 *
 * The key is read from a file that only the server's OS user can read,
 * named by idgen.public_key_file, as ssl_key_file names the TLS key: the
 * value of a setting is shown to pg_read_all_settings members and written
 * to the server log by each reload that changes it, so the key is never a
 * setting's value, nor an argument that would end up in logs or
 * pg_stat_statements.  1.1's idgen.public_key still works, with a WARNING;
 * the file wins when both are set.  The cipher checks itself against the
 * published test vector of Speck64/128 before its first use in a process.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/public_id.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "idgen_compat.h"
#include "layout.h"
#include "public_id.h"

PG_FUNCTION_INFO_V1(idgen_to_public);
PG_FUNCTION_INFO_V1(idgen_from_public);

#define SPECK_ROUNDS	27		/* Speck64/128 */

typedef struct SpeckKey
{
	uint32		round_keys[SPECK_ROUNDS];
} SpeckKey;

static const SpeckKey *public_key = NULL;	/* idgen.public_key, expanded */
static const SpeckKey *file_key = NULL; /* idgen.public_key_file's, expanded */

#define ROR32(x, r)	(((x) >> (r)) | ((x) << (32 - (r))))
#define ROL32(x, r)	(((x) << (r)) | ((x) >> (32 - (r))))

/* key[0] is the word the specification calls k0, key[3] l2. */
static void
speck_expand(const uint32 key[4], SpeckKey *ks)
{
	uint32		k = key[0];
	uint32		l[SPECK_ROUNDS + 2];

	l[0] = key[1];
	l[1] = key[2];
	l[2] = key[3];
	for (int i = 0; i < SPECK_ROUNDS; i++)
	{
		ks->round_keys[i] = k;
		if (i + 1 < SPECK_ROUNDS)
		{
			l[i + 3] = (k + ROR32(l[i], 8)) ^ (uint32) i;
			k = ROL32(k, 3) ^ l[i + 3];
		}
	}
}

/* A block is (x << 32) | y, x and y as the specification names them. */
static uint64
speck_encrypt(const SpeckKey *ks, uint64 block)
{
	uint32		x = (uint32) (block >> 32);
	uint32		y = (uint32) block;

	for (int i = 0; i < SPECK_ROUNDS; i++)
	{
		x = (ROR32(x, 8) + y) ^ ks->round_keys[i];
		y = ROL32(y, 3) ^ x;
	}
	return ((uint64) x << 32) | y;
}

static uint64
speck_decrypt(const SpeckKey *ks, uint64 block)
{
	uint32		x = (uint32) (block >> 32);
	uint32		y = (uint32) block;

	for (int i = SPECK_ROUNDS - 1; i >= 0; i--)
	{
		y = ROR32(y ^ x, 3);
		x = ROL32((x ^ ks->round_keys[i]) - y, 8);
	}
	return ((uint64) x << 32) | y;
}

/*
 * The test vector of Speck64/128 published with the cipher: key
 * 1b1a1918 13121110 0b0a0908 03020100, plaintext 3b726574 7475432d,
 * ciphertext 8c6fa548 454e028b.
 */
static void
speck_self_test(void)
{
	static bool passed = false;
	const uint32 key[4] = {0x03020100, 0x0b0a0908, 0x13121110, 0x1b1a1918};
	SpeckKey	ks;

	if (passed)
		return;
	speck_expand(key, &ks);
	if (speck_encrypt(&ks, UINT64CONST(0x3b7265747475432d)) != UINT64CONST(0x8c6fa548454e028b) ||
		speck_decrypt(&ks, UINT64CONST(0x8c6fa548454e028b)) != UINT64CONST(0x3b7265747475432d))
		elog(ERROR, "idgen: Speck64/128 does not give its published test vector");
	passed = true;
}

/* 32 hexadecimal digits, the key written as the specification writes it. */
static bool
parse_key(const char *s, uint32 key[4])
{
	if (strlen(s) != 32)
		return false;
	for (int w = 0; w < 4; w++)
	{
		uint32		v = 0;

		for (int i = 0; i < 8; i++)
		{
			char		c = s[w * 8 + i];

			if (!isxdigit((unsigned char) c))
				return false;
			v = (v << 4) | (uint32) (isdigit((unsigned char) c) ? c - '0' :
									 tolower((unsigned char) c) - 'a' + 10);
		}
		key[3 - w] = v;
	}
	return true;
}

bool
idgen_public_key_check_hook(char **newval, void **extra, GucSource source)
{
	uint32		key[4];
	SpeckKey   *ks;

	if (*newval == NULL || **newval == '\0')
		return true;			/* unset: the functions say so */
	if (!parse_key(*newval, key))
	{
		/* never echo a key, even a malformed one */
		GUC_check_errmsg("invalid value for parameter \"%s\"", "idgen.public_key");
		GUC_check_errdetail("\"%s\" must be 32 hexadecimal digits (128 bits).",
							"idgen.public_key");
		return false;
	}

	/*
	 * Warn where the postmaster reads it from the configuration at a reload;
	 * idgen_public_key_warn() does at start, once.
	 */
	if (source == PGC_S_FILE && !IsUnderPostmaster &&
		!process_shared_preload_libraries_in_progress)
		idgen_public_key_warn();
	ks = idgen_guc_malloc(sizeof(SpeckKey));
	if (ks == NULL)
		return false;
	speck_expand(key, ks);
	*extra = ks;
	return true;
}

void
idgen_public_key_assign_hook(const char *newval, void *extra)
{
	public_key = (const SpeckKey *) extra;
}

/* The migration from 1.1: the key as a setting shows. */
void
idgen_public_key_warn(void)
{
	ereport(WARNING,
			(errmsg("\"%s\" is readable by members of pg_read_all_settings and written to the server log when a reload changes it",
					"idgen.public_key"),
			 errhint("Move the key into a file only the server's operating system user can read, name the file in \"%s\", and remove \"%s\".",
					 "idgen.public_key_file", "idgen.public_key")));
}

/*
 * The key file holds the key as idgen.public_key takes it, with optional
 * white space around it.  It is read again at each reload, in every
 * process, so a changed file and a reload rotate the key with nothing but
 * the path in any message.  Like ssl_key_file, it must be the server's or
 * root's and closed to others.
 */
#define KEY_FILE_MAX	256

bool
idgen_public_key_file_check_hook(char **newval, void **extra, GucSource source)
{
	const char *path = *newval;
	char		buf[KEY_FILE_MAX + 1];
	char	   *start;
	char	   *end;
	struct stat st;
	ssize_t		len;
	uint32		key[4];
	bool		parsed;
	SpeckKey   *ks;
	int			fd;

	if (path == NULL || *path == '\0')
		return true;			/* none: idgen.public_key, if set */

	/* O_NONBLOCK: a FIFO must not hang the reload; it is refused below */
	fd = open(path, O_RDONLY | O_NONBLOCK | PG_BINARY, 0);
	if (fd < 0)
	{
		GUC_check_errmsg("could not open key file \"%s\" named by \"%s\": %m",
						 path, "idgen.public_key_file");
		return false;
	}
	if (fstat(fd, &st) != 0)
	{
		GUC_check_errmsg("could not stat key file \"%s\": %m", path);
		close(fd);
		return false;
	}
	if (!S_ISREG(st.st_mode))
	{
		GUC_check_errmsg("key file \"%s\" is not a regular file", path);
		close(fd);
		return false;
	}
	/* the rules PostgreSQL applies to ssl_key_file */
	if (st.st_uid != geteuid() && st.st_uid != 0)
	{
		GUC_check_errmsg("key file \"%s\" must be owned by the database user or root",
						 path);
		close(fd);
		return false;
	}
	if ((st.st_uid == geteuid() && (st.st_mode & (S_IRWXG | S_IRWXO))) ||
		(st.st_uid == 0 && (st.st_mode & (S_IWGRP | S_IXGRP | S_IRWXO))))
	{
		GUC_check_errmsg("key file \"%s\" has group or world access", path);
		GUC_check_errdetail("File must have permissions u=rw (0600) or less if owned by the database user, or permissions u=rw,g=r (0640) or less if owned by root.");
		GUC_check_errhint("Make it readable by its owner only, with \"chmod 600 %s\", and reload.",
						  path);
		close(fd);
		return false;
	}
	len = read(fd, buf, KEY_FILE_MAX + 1);
	if (len < 0)
	{
		GUC_check_errmsg("could not read key file \"%s\": %m", path);
		close(fd);
		return false;
	}
	close(fd);

	/* too long, or a NUL inside: refused, as not a key */
	parsed = len <= KEY_FILE_MAX && memchr(buf, '\0', len) == NULL;
	if (parsed)
	{
		buf[len] = '\0';
		start = buf;
		while (isspace((unsigned char) *start))
			start++;
		end = start + strlen(start);
		while (end > start && isspace((unsigned char) end[-1]))
			*--end = '\0';
		parsed = parse_key(start, key);
	}
	explicit_bzero(buf, sizeof(buf));
	if (!parsed)
	{
		/* never echo the file, even a malformed one */
		GUC_check_errmsg("key file \"%s\" does not hold a key", path);
		GUC_check_errdetail("It must hold 32 hexadecimal digits (128 bits) and nothing else but white space.");
		GUC_check_errhint("Write one from a random source, such as the output of \"openssl rand -hex 16\".");
		explicit_bzero(key, sizeof(key));
		return false;
	}
	ks = idgen_guc_malloc(sizeof(SpeckKey));
	if (ks == NULL)
	{
		explicit_bzero(key, sizeof(key));
		return false;
	}
	speck_expand(key, ks);
	explicit_bzero(key, sizeof(key));
	*extra = ks;
	return true;
}

void
idgen_public_key_file_assign_hook(const char *newval, void *extra)
{
	file_key = (const SpeckKey *) extra;
}

static const SpeckKey *
get_key(void)
{
	speck_self_test();
	if (file_key != NULL)
		return file_key;
	if (public_key == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("\"%s\" is not set", "idgen.public_key_file"),
				 errhint("Write 32 hexadecimal digits from a random source, such as the output of \"openssl rand -hex 16\", to a file only the server's operating system user can read, name it in \"idgen.public_key_file\" in postgresql.conf, and reload.")));
	return public_key;
}

#define PUBLIC_NEGATIVE_HINT \
	"IDs, and their public forms, are never negative; check where this value came from."

Datum
idgen_to_public(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	const SpeckKey *ks = get_key();
	uint64		v = (uint64) id;

	idgen_refuse_negative(id, PUBLIC_NEGATIVE_HINT);
	do
		v = speck_encrypt(ks, v);
	while (v >> 63);
	PG_RETURN_INT64((int64) v);
}

Datum
idgen_from_public(PG_FUNCTION_ARGS)
{
	int64		pub = PG_GETARG_INT64(0);
	const SpeckKey *ks = get_key();
	uint64		v = (uint64) pub;

	idgen_refuse_negative(pub, PUBLIC_NEGATIVE_HINT);
	do
		v = speck_decrypt(ks, v);
	while (v >> 63);
	PG_RETURN_INT64((int64) v);
}
