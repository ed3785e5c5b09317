/*-------------------------------------------------------------------------
 *
 * layout_dependents.c
 *		idgen_layout_dependents(): what in this database holds values a
 *		new version of the layout history can make stale.
 *
 * The SQL script only declares the function; the functions whose results
 * a change can make stale, and the catalog walk that finds what holds
 * them, are here.  A release that adds such a function adds a line to a
 * list below, not a new body in an upgrade script (1.1 to 1.3 each wrote
 * the whole query again for that).
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/layout_dependents.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

/*
 * With the layout history every ID that exists decodes as it was minted,
 * after any change.  What a change can still make stale is what was
 * computed for times after it: min_id_at() of a future time and
 * idgen_span() follow the configured layout, as a collation's sort follows
 * its version.  The decoders of IDs are not listed: their answers never
 * move (decode.c says why).  Signatures as to_regprocedure() reads them,
 * in the extension's schema.
 */
static const char *const layout_dependent_functions[] = {
	"min_id_at(timestamptz)",
	"idgen_span(interval)",
};

/*
 * The minters: a partitioned table whose key column defaults to one of
 * them has bounds computed, usually with min_id_at(), under the layout of
 * their day.
 */
static const char *const layout_minters[] = {
	"idgen_next()",
	"idgen_next(integer)",
};

/* $1: the dependent functions, $2: the minters. */
static const char *const dependents_sql =
"WITH idgen AS ("			/* wherever the extension lives: it is relocatable */
"	SELECT n.nspname"
"	  FROM pg_catalog.pg_extension AS e"
"	  JOIN pg_catalog.pg_namespace AS n ON n.oid = e.extnamespace"
"	 WHERE e.extname = 'idgen'"
"), dependent AS ("
"	SELECT pg_catalog.to_regprocedure(pg_catalog.format('%I.%s', idgen.nspname, f))::pg_catalog.oid AS oid"
"	  FROM idgen, pg_catalog.unnest($1::pg_catalog.text[]) AS f"
"), minters AS ("
"	SELECT pg_catalog.to_regprocedure(pg_catalog.format('%I.%s', idgen.nspname, f))::pg_catalog.oid AS oid"
"	  FROM idgen, pg_catalog.unnest($2::pg_catalog.text[]) AS f"
"), uses AS ("
"	SELECT DISTINCT d.classid, d.objid"
"	  FROM pg_catalog.pg_depend AS d"
"	 WHERE d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass"
"	   AND d.refobjid IN (SELECT oid FROM dependent)"
"	   AND d.deptype = 'n'"
")"
/* expression and partial indexes, partition keys, materialized views */
" SELECT CASE c.relkind"
"		   WHEN 'p' THEN 'partition key'"
"		   WHEN 'm' THEN 'materialized view'"
"		   ELSE 'index' END,"
"	   pg_catalog.pg_describe_object(u.classid, u.objid, 0),"
"	   CASE c.relkind"
"		   WHEN 'p' THEN 'repartition: rows would fall in other partitions'"
"		   WHEN 'm' THEN 'REFRESH MATERIALIZED VIEW'"
"		   ELSE 'REINDEX' END"
"  FROM uses AS u"
"  JOIN pg_catalog.pg_class AS c ON c.oid = u.objid"
" WHERE u.classid = 'pg_catalog.pg_class'::pg_catalog.regclass"
"   AND c.relkind IN ('i', 'I', 'p', 'm')"
" UNION ALL"
" SELECT 'materialized view',"
"	   pg_catalog.pg_describe_object('pg_catalog.pg_class'::pg_catalog.regclass, r.ev_class, 0),"
"	   'REFRESH MATERIALIZED VIEW'"
"  FROM uses AS u"
"  JOIN pg_catalog.pg_rewrite AS r ON r.oid = u.objid"
"  JOIN pg_catalog.pg_class AS c ON c.oid = r.ev_class"
" WHERE u.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass"
"   AND c.relkind = 'm'"
" UNION ALL"
/* stored generated columns keep what was computed before the change */
" SELECT 'generated column',"
"	   pg_catalog.format('column %I of table %s', a.attname, a.attrelid::pg_catalog.regclass),"
"	   'recompute: UPDATE the table, or drop and add the column'"
"  FROM uses AS u"
"  JOIN pg_catalog.pg_attrdef AS ad ON ad.oid = u.objid"
"  JOIN pg_catalog.pg_attribute AS a"
"	ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum"
" WHERE u.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass"
"   AND a.attgenerated = 's'"
" UNION ALL"
" SELECT 'check constraint',"
"	   pg_catalog.pg_describe_object(u.classid, u.objid, 0),"
"	   'revalidate: drop and add the constraint'"
"  FROM uses AS u"
"  JOIN pg_catalog.pg_constraint AS con ON con.oid = u.objid"
" WHERE u.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass"
"   AND con.contype = 'c'"
" UNION ALL"
/* partitions of a table keyed on an ID column: their bounds are constants */
" SELECT 'partition bound',"
"	   pg_catalog.pg_describe_object('pg_catalog.pg_class'::pg_catalog.regclass, i.inhrelid, 0),"
"	   'check the bounds of times after the change against min_id_at()'"
"  FROM pg_catalog.pg_partitioned_table AS pt"
"  JOIN pg_catalog.pg_inherits AS i ON i.inhparent = pt.partrelid"
" WHERE EXISTS ("
"		SELECT FROM pg_catalog.pg_attrdef AS ad"
"		  JOIN pg_catalog.pg_depend AS d"
"			ON d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass"
"		   AND d.objid = ad.oid"
"		   AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass"
"		   AND d.refobjid IN (SELECT oid FROM minters)"
"		 WHERE ad.adrelid = pt.partrelid"
"		   AND ad.adnum = ANY (pt.partattrs::pg_catalog.int2[]))"
" ORDER BY 1, 2";

static Datum
text_array(const char *const *items, int n)
{
	Datum	   *elems = palloc(n * sizeof(Datum));

	for (int i = 0; i < n; i++)
		elems[i] = CStringGetTextDatum(items[i]);
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false,
										   TYPALIGN_INT));
}

PG_FUNCTION_INFO_V1(idgen_layout_dependents);

/* Needs no preload: it reads the catalogs only. */
Datum
idgen_layout_dependents(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			argtypes[2] = {TEXTARRAYOID, TEXTARRAYOID};
	Datum		args[2];
	int			ret;

	InitMaterializedSRF(fcinfo, 0);
	args[0] = text_array(layout_dependent_functions,
						 lengthof(layout_dependent_functions));
	args[1] = text_array(layout_minters, lengthof(layout_minters));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute_with_args(dependents_sql, 2, argtypes, args, NULL,
								true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args failed: %s",
			 SPI_result_code_string(ret));
	for (uint64 row = 0; row < SPI_processed; row++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[row];
		Datum		values[3];
		bool		nulls[3];

		for (int col = 0; col < 3; col++)
			values[col] = SPI_getbinval(tuple, SPI_tuptable->tupdesc,
										col + 1, &nulls[col]);
		/* copied into the tuplestore, which outlives SPI's memory */
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SPI_finish();
	return (Datum) 0;
}
