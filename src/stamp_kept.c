/*-------------------------------------------------------------------------
 *
 * stamp_kept.c
 *		A database's stamp kept while the database has no extension to
 *		carry it.  A restore run before CREATE EXTENSION (by a role that may
 *		not create it) brings its stamp to a database without the extension,
 *		and DROP EXTENSION takes the comment that held a stamp away; either
 *		way the rows stay.  The stamp is kept as a security label of
 *		provider "idgen" on the database, in the catalog and so in the
 *		transaction that wrote it, and the next CREATE EXTENSION idgen takes
 *		it instead of the server's history.  A label is invisible to schema
 *		tools, and no user text shares it, so nothing else rewrites it.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/stamp_kept.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/objectaddress.h"
#include "catalog/pg_database.h"
#include "commands/seclabel.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"

#include "layout_stamp.h"
#include "stamp_kept.h"

#define KEPT_PROVIDER "idgen"

/*
 * SECURITY LABEL FOR idgen: on a database only, and a stamp as idgen
 * writes it; core has checked that the role owns the database.
 */
static void
check_kept_label(const ObjectAddress *object, const char *label)
{
	IdgenLayoutHistory h;

	if (object->classId != DatabaseRelationId)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("security labels of provider \"%s\" are kept on databases only", KEPT_PROVIDER)));
	if (label != NULL && !idgen_stamp_parse(label, &h))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a security label of provider \"%s\" must be a layout history", KEPT_PROVIDER),
				 errhint("Leave it as idgen wrote it, or remove it with SECURITY LABEL FOR %s ON DATABASE ... IS NULL.", KEPT_PROVIDER)));
}

void
idgen_stamp_kept_register(void)
{
	register_label_provider(KEPT_PROVIDER, check_kept_label);
}

static void
this_database(ObjectAddress *object)
{
	ObjectAddressSet(*object, DatabaseRelationId, MyDatabaseId);
}

/* The stamp kept for this database; false where there is none. */
bool
idgen_stamp_kept_read(IdgenLayoutHistory *h)
{
	ObjectAddress object;
	char	   *label;

	memset(h, 0, sizeof(*h));
	this_database(&object);
	label = GetSecurityLabel(&object, KEPT_PROVIDER);
	if (label == NULL)
		return false;
	if (!idgen_stamp_parse(label, h))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the layout history kept for this database does not parse"),
				 errdetail("Its security label of provider \"%s\" is \"%s\".", KEPT_PROVIDER, label),
				 errhint("Remove it with SECURITY LABEL FOR %s ON DATABASE ... IS NULL only if every ID in this database was minted under this server's layouts.", KEPT_PROVIDER)));
	return true;
}

void
idgen_stamp_kept_write(const IdgenLayoutHistory *h)
{
	ObjectAddress object;
	StringInfoData buf;

	this_database(&object);
	initStringInfo(&buf);
	idgen_stamp_format(&buf, h);
	SetSecurityLabel(&object, KEPT_PROVIDER, buf.data);
}

void
idgen_stamp_kept_clear(void)
{
	ObjectAddress object;

	this_database(&object);
	SetSecurityLabel(&object, KEPT_PROVIDER, NULL);
}
