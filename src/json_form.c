/*-------------------------------------------------------------------------
 *
 * json_form.c
 *		Rows as JSON with their IDs as strings: idgen_row_to_json and
 *		idgen_row_to_jsonb.
 *
 * row_to_json, to_jsonb, json_agg and json_build_object write a bigint as a
 * JSON number, and every ID minted since 2026-01-25 is above 2^53: a
 * JavaScript JSON.parse, and any parser that reads numbers as doubles,
 * rounds it to another ID.  These functions write the row as row_to_json
 * does, except that each bigint column (a domain over bigint too) becomes
 * a JSON string of its digits, and each bigint array an array of strings.
 * Everything else, nested rows included, is written as row_to_json writes
 * it: a row's own columns are where IDs live.
 *
 * The row is copied into a row of the same column names in which those
 * columns are text and text[], and PostgreSQL's row_to_json writes that
 * one, so the output is row_to_json's in every other respect.  The shape
 * of the copy is worked out once per row type and kept in fn_extra.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/json_form.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(idgen_row_to_json);
PG_FUNCTION_INFO_V1(idgen_row_to_jsonb);

/* What becomes of a column */
typedef enum
{
	COLUMN_AS_IS,
	COLUMN_INT8,				/* bigint, or a domain over it: a string */
	COLUMN_INT8_ARRAY			/* an array of those: an array of strings */
} ColumnKind;

/* The shape of the copy, for one input row type */
typedef struct
{
	Oid			tuptype;
	int32		tuptypmod;
	int			natts;
	Oid		   *atttypids;		/* the input's, to notice a changed type */
	ColumnKind *kinds;
	bool		any_int8;		/* else the row is written as it is */
	TupleDesc	outdesc;		/* blessed; NULL when !any_int8 */
} RowShape;

static bool
is_int8(Oid typid)
{
	return getBaseType(typid) == INT8OID;
}

static ColumnKind
column_kind(Oid typid)
{
	Oid			base;
	Oid			elem;

	if (!OidIsValid(typid))
		return COLUMN_AS_IS;	/* a dropped column */
	base = getBaseType(typid);
	if (base == INT8OID)
		return COLUMN_INT8;
	elem = get_element_type(base);
	if (OidIsValid(elem) && is_int8(elem))
		return COLUMN_INT8_ARRAY;
	return COLUMN_AS_IS;
}

static bool
shape_matches(const RowShape *shape, Oid tuptype, int32 tuptypmod,
			  TupleDesc tupdesc)
{
	if (shape == NULL || shape->tuptype != tuptype ||
		shape->tuptypmod != tuptypmod || shape->natts != tupdesc->natts)
		return false;
	/* ALTER TABLE may change a table's row type under a cached expression */
	for (int i = 0; i < tupdesc->natts; i++)
		if (shape->atttypids[i] != TupleDescAttr(tupdesc, i)->atttypid)
			return false;
	return true;
}

static RowShape *
make_shape(MemoryContext mcxt, Oid tuptype, int32 tuptypmod, TupleDesc tupdesc)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(mcxt);
	RowShape   *shape = palloc0(sizeof(RowShape));
	int			natts = tupdesc->natts;

	shape->tuptype = tuptype;
	shape->tuptypmod = tuptypmod;
	shape->natts = natts;
	shape->atttypids = palloc(sizeof(Oid) * Max(natts, 1));
	shape->kinds = palloc(sizeof(ColumnKind) * Max(natts, 1));
	for (int i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);

		shape->atttypids[i] = att->atttypid;
		shape->kinds[i] = att->attisdropped ? COLUMN_AS_IS :
			column_kind(att->atttypid);
		if (shape->kinds[i] != COLUMN_AS_IS)
			shape->any_int8 = true;
	}

	if (shape->any_int8)
	{
		/* same names, same dropped columns; a record type of its own */
		TupleDesc	outdesc = CreateTupleDescCopy(tupdesc);

		outdesc->tdtypeid = RECORDOID;
		outdesc->tdtypmod = -1;
		for (int i = 0; i < natts; i++)
		{
#if PG_VERSION_NUM < 180000
			/*
			 * Offsets cached for the input's layout are wrong for the copy's;
			 * from 18 they live in CompactAttribute, which the copy resets.
			 */
			TupleDescAttr(outdesc, i)->attcacheoff = -1;
#endif
			if (shape->kinds[i] == COLUMN_AS_IS)
				continue;
			TupleDescInitEntry(outdesc, (AttrNumber) (i + 1),
							   NameStr(TupleDescAttr(tupdesc, i)->attname),
							   shape->kinds[i] == COLUMN_INT8 ? TEXTOID : TEXTARRAYOID,
							   -1, 0);
		}
		shape->outdesc = BlessTupleDesc(outdesc);
	}
	MemoryContextSwitchTo(oldcxt);
	return shape;
}

static Datum
int8_text(Datum d)
{
	char		buf[MAXINT8LEN + 1];

	pg_lltoa(DatumGetInt64(d), buf);
	return PointerGetDatum(cstring_to_text(buf));
}

/* A bigint array as a text array of the same dimensions and bounds */
static Datum
int8_array_text(Datum d)
{
	ArrayType  *arr = DatumGetArrayTypeP(d);
	int			ndim = ARR_NDIM(arr);
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	if (ndim == 0)
		return PointerGetDatum(construct_empty_array(TEXTOID));
	deconstruct_array(arr, ARR_ELEMTYPE(arr), sizeof(int64), FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
		if (!nulls[i])
			elems[i] = int8_text(elems[i]);
	return PointerGetDatum(construct_md_array(elems, nulls, ndim,
											  ARR_DIMS(arr), ARR_LBOUND(arr),
											  TEXTOID, -1, false, TYPALIGN_INT));
}

/* The row as row_to_json writes it, its IDs as strings */
static Datum
row_json(FunctionCallInfo fcinfo)
{
	HeapTupleHeader td = PG_GETARG_HEAPTUPLEHEADER(0);
	Oid			tuptype = HeapTupleHeaderGetTypeId(td);
	int32		tuptypmod = HeapTupleHeaderGetTypMod(td);
	TupleDesc	tupdesc = lookup_rowtype_tupdesc(tuptype, tuptypmod);
	RowShape   *shape = (RowShape *) fcinfo->flinfo->fn_extra;
	HeapTupleData tuple;
	Datum	   *values;
	bool	   *nulls;
	HeapTuple	out;

	if (!shape_matches(shape, tuptype, tuptypmod, tupdesc))
	{
		shape = make_shape(fcinfo->flinfo->fn_mcxt, tuptype, tuptypmod, tupdesc);
		fcinfo->flinfo->fn_extra = shape;
	}
	if (!shape->any_int8)
	{
		ReleaseTupleDesc(tupdesc);
		return DirectFunctionCall1(row_to_json, PointerGetDatum(td));
	}

	tuple.t_len = HeapTupleHeaderGetDatumLength(td);
	ItemPointerSetInvalid(&(tuple.t_self));
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = td;

	values = palloc(sizeof(Datum) * shape->natts);
	nulls = palloc(sizeof(bool) * shape->natts);
	heap_deform_tuple(&tuple, tupdesc, values, nulls);
	ReleaseTupleDesc(tupdesc);

	for (int i = 0; i < shape->natts; i++)
	{
		if (nulls[i])
			continue;
		if (shape->kinds[i] == COLUMN_INT8)
			values[i] = int8_text(values[i]);
		else if (shape->kinds[i] == COLUMN_INT8_ARRAY)
			values[i] = int8_array_text(values[i]);
	}
	out = heap_form_tuple(shape->outdesc, values, nulls);
	return DirectFunctionCall1(row_to_json, HeapTupleGetDatum(out));
}

Datum
idgen_row_to_json(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(row_json(fcinfo));
}

/*
 * jsonb reads the JSON text: to_jsonb needs its caller's expression to know
 * its argument's type, and the JSON text is what row_to_json made anyway.
 */
Datum
idgen_row_to_jsonb(PG_FUNCTION_ARGS)
{
	text	   *json = DatumGetTextPP(row_json(fcinfo));

	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in,
										CStringGetDatum(text_to_cstring(json))));
}
