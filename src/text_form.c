/*-------------------------------------------------------------------------
 *
 * text_form.c
 *		IDs as short, sortable text: idgen_to_text and idgen_from_text.
 *
 * An ID is written as 13 characters of Crockford's base32 (digits and
 * lower-case letters without i, l, o and u), most significant first and
 * zero-padded, so that the text sorts like the number in the "C" collation
 * and survives JSON, where a number above 2^53 loses digits.  An optional
 * type prefix, as Stripe's and TypeID's IDs have, goes before it with an
 * underscore: 'evt_' || the 13 characters.
 *
 * Reading accepts upper and lower case and Crockford's aliases (i and l for
 * 1, o for 0) and refuses anything else with SQLSTATE 22P02, as PostgreSQL
 * refuses a malformed number.  Neither direction needs the layout: these
 * functions work without the preload.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/text_form.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"

#include "idgen_compat.h"
#include "layout.h"

PG_FUNCTION_INFO_V1(idgen_to_text);
PG_FUNCTION_INFO_V1(idgen_to_text_prefixed);
PG_FUNCTION_INFO_V1(idgen_from_text);
PG_FUNCTION_INFO_V1(idgen_from_text_prefixed);

#define TEXT_FORM_LEN	13		/* 65 bits, for 63 */
#define MAX_PREFIX_LEN	63

static const char encode_symbols[] = "0123456789abcdefghjkmnpqrstvwxyz";

/* The value of a symbol, or -1; aliases included, either case. */
static int
decode_symbol(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'Z')
		c = c - 'A' + 'a';
	switch (c)
	{
		case 'o':
			return 0;
		case 'i':
		case 'l':
			return 1;
		case 'u':
			return -1;
	}
	for (int v = 10; v < 32; v++)
		if (encode_symbols[v] == c)
			return v;
	return -1;
}

/*
 * How much of an argument a message quotes: enough to recognise it, never a
 * whole 100 kB argument in the server log.  Whole characters, then "...".
 */
#define SHOWN_BYTES 100

static int
shown(const char *s, int len)
{
	return len <= SHOWN_BYTES ? len : pg_mbcliplen(s, len, SHOWN_BYTES);
}

#define MORE(len) ((len) > SHOWN_BYTES ? "..." : "")

/* A prefix is 1 to 63 lower-case letters and underscores, letters at both ends. */
static void
check_prefix(const char *prefix, int len)
{
	bool		ok = len >= 1 && len <= MAX_PREFIX_LEN &&
		prefix[0] != '_' && prefix[len - 1] != '_';

	for (int i = 0; ok && i < len; i++)
		ok = (prefix[i] >= 'a' && prefix[i] <= 'z') || prefix[i] == '_';
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid ID prefix \"%.*s%s\"", shown(prefix, len), prefix, MORE(len)),
				 errdetail("A prefix is 1 to %d lower-case letters and underscores, beginning and ending with a letter.",
						   MAX_PREFIX_LEN)));
}

static void
encode(int64 id, char *out)
{
	uint64		v = (uint64) id;

	for (int i = TEXT_FORM_LEN - 1; i >= 0; i--)
	{
		out[i] = encode_symbols[v & 31];
		v >>= 5;
	}
}

static pg_noinline void
invalid_text(const char *text, int len, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for an ID: \"%.*s%s\"", shown(text, len), text, MORE(len)),
			 errdetail_internal("%s", detail)));
}

/*
 * Read the 13 characters at body; the whole text is quoted in errors.
 * Lengths are told in characters and a wrong character is quoted whole: a
 * byte of a multibyte character is not valid text in any encoding.
 */
static int64
decode(const char *text, int len, const char *body, int body_len)
{
	uint64		v = 0;
	int			nchars = pg_mbstrlen_with_len(body, body_len);

	if (nchars != TEXT_FORM_LEN)
		invalid_text(text, len,
					 psprintf("An ID is written in %d characters of base32, not %d.",
							  TEXT_FORM_LEN, nchars));
	/* a valid digit is one byte: a wider body stops at its first wide character */
	for (int i = 0; i < body_len; i++)
	{
		int			d = decode_symbol((unsigned char) body[i]);

		if (d < 0)
			invalid_text(text, len,
						 psprintf("\"%.*s\" is not a base32 digit (0-9 and a-z but i, l, o and u; i and l read as 1, o as 0).",
								  pg_mblen(body + i), body + i));
		v = (v << 5) | (uint64) d;
	}
	/* 13 digits hold 65 bits; an ID has 63, so the first digit is 0 to 7 */
	if (decode_symbol((unsigned char) body[0]) > 7)
		invalid_text(text, len, "The value is past the largest ID.");
	return (int64) v;
}

Datum
idgen_to_text(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	char		out[TEXT_FORM_LEN];

	idgen_refuse_negative(id, IDGEN_NEGATIVE_ID_HINT);
	encode(id, out);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out, TEXT_FORM_LEN));
}

Datum
idgen_to_text_prefixed(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	text	   *prefix = PG_GETARG_TEXT_PP(1);
	int			plen = VARSIZE_ANY_EXHDR(prefix);
	char	   *out;

	idgen_refuse_negative(id, IDGEN_NEGATIVE_ID_HINT);
	check_prefix(VARDATA_ANY(prefix), plen);
	out = palloc(plen + 1 + TEXT_FORM_LEN);
	memcpy(out, VARDATA_ANY(prefix), plen);
	out[plen] = '_';
	encode(id, out + plen + 1);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out, plen + 1 + TEXT_FORM_LEN));
}

Datum
idgen_from_text(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	const char *s = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t);

	if (memchr(s, '_', len) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for an ID: \"%.*s%s\"", shown(s, len), s, MORE(len)),
				 errdetail("The text has a type prefix."),
				 errhint("Read it with idgen_from_text(text, prefix), which checks the prefix.")));
	PG_RETURN_INT64(decode(s, len, s, len));
}

Datum
idgen_from_text_prefixed(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	text	   *prefix = PG_GETARG_TEXT_PP(1);
	const char *s = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t);
	const char *p = VARDATA_ANY(prefix);
	int			plen = VARSIZE_ANY_EXHDR(prefix);
	const char *sep = NULL;

	check_prefix(p, plen);
	/* the body has no underscore, so the last one ends the prefix */
	for (int i = len - 1; i >= 0 && sep == NULL; i--)
		if (s[i] == '_')
			sep = s + i;
	if (sep == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for an ID: \"%.*s%s\"", shown(s, len), s, MORE(len)),
				 errdetail("The text has no prefix; \"%.*s%s\" was expected.",
						   shown(p, plen), p, MORE(plen))));
	if (sep - s != plen || memcmp(s, p, plen) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for an ID: \"%.*s%s\"", shown(s, len), s, MORE(len)),
				 errdetail("The prefix is \"%.*s%s\", not \"%.*s%s\".",
						   shown(s, (int) (sep - s)), s, MORE(sep - s),
						   shown(p, plen), p, MORE(plen))));
	/* a right prefix before a wrong body: the body's fault is the one told */
	PG_RETURN_INT64(decode(s, len, sep + 1, len - (int) (sep + 1 - s)));
}
