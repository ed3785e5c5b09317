/*-------------------------------------------------------------------------
 *
 * stamp_shards.c
 *		The shards a database's stamp names: every shard whose IDs idgen
 *		minted into the database (the live ones, the pool's, the backfill
 *		lanes') or a restore brought, as ranges, " [shards: 1, 100-115]",
 *		just before " [layout history: ...]".  A restore stops a server's
 *		lanes only when its stamp names one of them.
 *
 * A stamp without the part (idgen 1.7 and older wrote none) names any
 * shard, as does " [shards: any]": absent stays absent, since such a
 * database may hold any shard's IDs.  A part only grows, by union; one
 * that does not parse names any shard too.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/stamp_shards.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <limits.h>

#include "shard.h"
#include "stamp_shards.h"

#define SHARDS_NONE		"none"
#define SHARDS_ANY		"any"
#define SHARDS_CLOSE	']'

void
idgen_stamp_shards_any(IdgenStampShards *l)
{
	memset(l, 0, sizeof(*l));
	l->any = true;
}

static void
add_range(IdgenStampShards *l, int32 lo, int32 hi)
{
	int			i = 0;

	if (l->any)
		return;
	/* the first range that reaches lo, or ends after it */
	while (i < l->nranges && (int64) l->hi[i] + 1 < lo)
		i++;
	if (i < l->nranges && (int64) hi + 1 >= l->lo[i])
	{
		/* touches range i: grow it, and swallow those it reaches */
		int			j = i;

		l->lo[i] = Min(l->lo[i], lo);
		while (j + 1 < l->nranges && (int64) Max(hi, l->hi[i]) + 1 >= l->lo[j + 1])
			j++;
		l->hi[i] = Max(hi, l->hi[j]);
		if (j > i)
		{
			memmove(&l->lo[i + 1], &l->lo[j + 1], (l->nranges - j - 1) * sizeof(int32));
			memmove(&l->hi[i + 1], &l->hi[j + 1], (l->nranges - j - 1) * sizeof(int32));
			l->nranges -= j - i;
		}
		return;
	}
	if (l->nranges == IDGEN_STAMP_SHARDS_MAX)
	{
		/* naming more than it must is safe; naming fewer never is */
		idgen_stamp_shards_any(l);
		return;
	}
	memmove(&l->lo[i + 1], &l->lo[i], (l->nranges - i) * sizeof(int32));
	memmove(&l->hi[i + 1], &l->hi[i], (l->nranges - i) * sizeof(int32));
	l->lo[i] = lo;
	l->hi[i] = hi;
	l->nranges++;
}

/* The lanes this server mints on: idgen.backfill_shards. */
void
idgen_stamp_shards_lanes(IdgenStampShards *l)
{
	int32		shards[IDGEN_MAX_LANES];
	int			n = idgen_lane_shards(shards);

	memset(l, 0, sizeof(*l));
	for (int i = 0; i < n; i++)
		add_range(l, shards[i], shards[i]);
}

/* Every shard this server mints on: live, its pool's, its lanes. */
void
idgen_stamp_shards_server(IdgenStampShards *l)
{
	int32	   *owned;
	int32	   *lo;
	int32	   *hi;
	int			n;

	idgen_stamp_shards_lanes(l);
	n = idgen_owned_shards(&owned);
	for (int i = 0; i < n; i++)
		add_range(l, owned[i], owned[i]);
	pfree(owned);
	n = idgen_shard_pool_ranges(&lo, &hi);
	for (int i = 0; i < n; i++)
		add_range(l, lo[i], hi[i]);
	pfree(lo);
	pfree(hi);
}

void
idgen_stamp_shards_add(IdgenStampShards *into, const IdgenStampShards *from)
{
	if (from->any)
	{
		idgen_stamp_shards_any(into);
		return;
	}
	for (int i = 0; i < from->nranges; i++)
		add_range(into, from->lo[i], from->hi[i]);
}

/* Every shard s names is named by l. */
bool
idgen_stamp_shards_covers(const IdgenStampShards *l, const IdgenStampShards *s)
{
	if (l->any)
		return true;
	if (s->any)
		return false;
	for (int i = 0; i < s->nranges; i++)
	{
		bool		in = false;

		for (int j = 0; j < l->nranges && !in; j++)
			in = l->lo[j] <= s->lo[i] && s->hi[i] <= l->hi[j];
		if (!in)
			return false;
	}
	return true;
}

/* The part names the shard. */
bool
idgen_stamp_shards_names(const IdgenStampShards *l, int32 shard)
{
	if (l->any)
		return true;
	for (int i = 0; i < l->nranges; i++)
		if (l->lo[i] <= shard && shard <= l->hi[i])
			return true;
	return false;
}

bool
idgen_stamp_shards_equal(const IdgenStampShards *a, const IdgenStampShards *b)
{
	return idgen_stamp_shards_covers(a, b) && idgen_stamp_shards_covers(b, a);
}

/* The part; nothing for any shard, unless asked to say so. */
void
idgen_stamp_shards_format(StringInfo buf, const IdgenStampShards *l, bool any_explicit)
{
	if (l->any && !any_explicit)
		return;
	appendStringInfoString(buf, IDGEN_STAMP_SHARDS_OPEN);
	if (l->any)
		appendStringInfoString(buf, SHARDS_ANY);
	else if (l->nranges == 0)
		appendStringInfoString(buf, SHARDS_NONE);
	for (int i = 0; i < l->nranges && !l->any; i++)
	{
		if (i > 0)
			appendStringInfoString(buf, ", ");
		if (l->lo[i] == l->hi[i])
			appendStringInfo(buf, "%d", l->lo[i]);
		else
			appendStringInfo(buf, "%d-%d", l->lo[i], l->hi[i]);
	}
	appendStringInfoChar(buf, SHARDS_CLOSE);
}

static bool
parse_shard(const char **p, int32 *shard)
{
	long		v;
	char	   *end;

	if (!isdigit((unsigned char) **p))
		return false;
	errno = 0;
	v = strtol(*p, &end, 10);
	if (errno != 0 || v > INT_MAX)
		return false;
	*shard = (int32) v;
	*p = end;
	return true;
}

/* The part's text, from after its opening to its closing bracket. */
static bool
parse_part(const char *p, const char *close, IdgenStampShards *l)
{
	memset(l, 0, sizeof(*l));
	if ((size_t) (close - p) == strlen(SHARDS_NONE) && strncmp(p, SHARDS_NONE, close - p) == 0)
		return true;
	if ((size_t) (close - p) == strlen(SHARDS_ANY) && strncmp(p, SHARDS_ANY, close - p) == 0)
	{
		l->any = true;
		return true;
	}
	while (p < close)
	{
		int32		lo;
		int32		hi;

		if (!parse_shard(&p, &lo))
			return false;
		hi = lo;
		if (*p == '-')
		{
			p++;
			if (!parse_shard(&p, &hi) || hi < lo)
				return false;
		}
		add_range(l, lo, hi);
		if (p < close && (p[0] != ',' || p[1] != ' '))
			return false;
		if (p < close)
			p += 2;
	}
	return p == close && l->nranges > 0 && !l->any;
}

/*
 * The part just before the history's, which begins at open in comment:
 * where the description ends, and *l what the part names (any shard where
 * there is none, or it does not parse).
 */
const char *
idgen_stamp_shards_in(const char *comment, const char *open, IdgenStampShards *l)
{
	const char *start = NULL;
	const char *p = comment;
	size_t		len = strlen(IDGEN_STAMP_SHARDS_OPEN);

	idgen_stamp_shards_any(l);
	while ((p = strstr(p, IDGEN_STAMP_SHARDS_OPEN)) != NULL && p < open)
		start = p++;
	if (start == NULL || open == comment || open[-1] != SHARDS_CLOSE ||
		memchr(start + len, SHARDS_CLOSE, open - 1 - (start + len)) != NULL)
		return open;
	if (!parse_part(start + len, open - 1, l))
	{
		idgen_stamp_shards_any(l);
		return open;
	}
	return start;
}
