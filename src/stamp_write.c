/*-------------------------------------------------------------------------
 *
 * stamp_write.c
 *		Writing a database's stamp: the layout history and the shards it
 *		names, one writer at a time, each naming every shard this server
 *		mints on.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/stamp_write.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_extension.h"
#include "commands/comment.h"
#include "storage/lmgr.h"
#include "utils/inval.h"

#include "layout_stamp.h"
#include "stamp_shards.h"
#include "stamp_write.h"

#define STAMP_CLOSE		"]"

/*
 * Serializes the stamp's writers (COMMENT takes the same lock): each reads
 * the stamp after the last one committed, so none loses a shard another
 * named.
 */
void
idgen_stamp_lock(Oid extoid)
{
	LockDatabaseObject(ExtensionRelationId, extoid, 0, ShareUpdateExclusiveLock);
}

static void
stamp_text(StringInfo buf, const char *text, const IdgenLayoutHistory *h,
		   const IdgenStampShards *shards, bool any_explicit)
{
	resetStringInfo(buf);
	appendStringInfoString(buf, text);
	idgen_stamp_shards_format(buf, shards, any_explicit);
	appendStringInfoString(buf, IDGEN_STAMP_OPEN);
	idgen_stamp_format(buf, h);
	appendStringInfoString(buf, STAMP_CLOSE);
}

/* The stamp, naming shards and every shard this server mints on. */
void
idgen_stamp_write_on(Oid extoid, const char *text, const IdgenLayoutHistory *h,
					 const IdgenStampShards *shards)
{
	StringInfoData buf;
	IdgenStampShards named = *shards;
	IdgenStampShards server;
	IdgenStampShards read_back;

	idgen_stamp_shards_server(&server);
	idgen_stamp_shards_add(&named, &server);
	initStringInfo(&buf);
	stamp_text(&buf, text, h, &named, false);
	/* a description ending as a part would otherwise be read as one */
	idgen_comment_shards(buf.data, &read_back);
	if (named.any && !read_back.any)
		stamp_text(&buf, text, h, &named, true);
	CreateComments(extoid, ExtensionRelationId, 0, buf.data);
	CommandCounterIncrement();
	idgen_stamp_changed();
}


/* For the stamps worker: this database's stamp, if it should have one. */
bool
idgen_stamp_read_here(IdgenLayoutHistory *stamp, bool *present,
					  IdgenStampShards *shards)
{
	IdgenExtensionHere ext;
	bool		malformed;
	char	   *comment;

	memset(stamp, 0, sizeof(*stamp));
	idgen_stamp_shards_any(shards);
	*present = false;
	/* 1.3's table is not the worker's to read, nor older versions' nothing */
	if (!idgen_extension_here(&ext) || ext.minor < 4)
		return false;
	comment = GetComment(ext.oid, ExtensionRelationId, 0);
	*present = idgen_comment_stamp(comment, stamp, &malformed);
	if (!*present)
		memset(stamp, 0, sizeof(*stamp));
	else
		idgen_comment_shards(comment, shards);
	return true;
}

/*
 * The history h on this database's stamp, which goes on naming the shards
 * it named (any, where it had no stamp).
 */
void
idgen_stamp_write(const IdgenLayoutHistory *h)
{
	IdgenExtensionHere ext;
	IdgenStampShards shards;
	char	   *comment;

	if (!idgen_extension_here(&ext))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"idgen\" is not installed in this database")));
	idgen_stamp_lock(ext.oid);
	comment = GetComment(ext.oid, ExtensionRelationId, 0);
	idgen_comment_shards(comment, &shards);
	idgen_stamp_write_on(ext.oid, idgen_comment_text(comment), h, &shards);
}

/*
 * This database's stamp, whatever its history, naming more shards too, and
 * this server's; false where it has no stamp.
 */
bool
idgen_stamp_add_shards(const IdgenStampShards *more)
{
	IdgenExtensionHere ext;
	IdgenLayoutHistory stamp;
	IdgenStampShards shards;
	IdgenStampShards want;
	IdgenStampShards server;
	bool		malformed;
	char	   *comment;

	if (!idgen_extension_here(&ext) || ext.minor < 4)
		return false;
	idgen_stamp_shards_server(&server);
	/* read, then, where it must change, locked and read again */
	for (int locked = 0; locked < 2; locked++)
	{
		if (locked)
		{
			idgen_stamp_lock(ext.oid);
			AcceptInvalidationMessages();
		}
		comment = GetComment(ext.oid, ExtensionRelationId, 0);
		if (!idgen_comment_stamp(comment, &stamp, &malformed))
			return false;
		idgen_comment_shards(comment, &shards);
		want = shards;
		idgen_stamp_shards_add(&want, more);
		idgen_stamp_shards_add(&want, &server);
		if (idgen_stamp_shards_equal(&want, &shards))
			return true;
	}
	idgen_stamp_write_on(ext.oid, idgen_comment_text(comment), &stamp, &want);
	return true;
}
