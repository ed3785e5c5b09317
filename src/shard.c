/*-------------------------------------------------------------------------
 *
 * shard.c
 *		Parsing and checking the shards this node owns.
 *
 * A node mints for idgen.shard_id and for every shard listed in
 * idgen.shard_ids ('5,7,100-163').  The list is parsed once per reload into
 * sorted, merged ranges, so the check on the minting path is a short binary
 * search.  Shards must fit the shard field of the layout; before the layout
 * is fixed (early in postmaster start) the hooks can check only the syntax,
 * so _PG_init runs them again once it is.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/shard.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <limits.h>

#include "lib/stringinfo.h"

#include "idgen_compat.h"
#include "layout.h"
#include "shard.h"

/* idgen.shard_id and idgen.shard_ids (PGC_SIGHUP), defined in settings.c */
int			idgen_shard_id = 0;
char	   *idgen_shard_ids = NULL;

/* idgen.shard_pool (PGC_POSTMASTER): shards to claim one of, with leases */
char	   *idgen_shard_pool = NULL;

/* idgen.backfill_shards (PGC_POSTMASTER): the lanes, never minted live */
char	   *idgen_backfill_shards = NULL;

typedef struct ShardRange
{
	int32		lo;
	int32		hi;
} ShardRange;

typedef struct ShardSet
{
	int			nranges;
	ShardRange	ranges[FLEXIBLE_ARRAY_MEMBER];
} ShardSet;


static ShardSet *owned_extra = NULL;
static ShardSet *pool = NULL;
static ShardSet *lanes = NULL;

static int64
max_shard(void)
{
	if (!idgen_layout_ready)
		return INT_MAX;
	return (INT64CONST(1) << idgen_layout.shard_bits) - 1;
}

static int
range_cmp(const void *a, const void *b)
{
	const ShardRange *ra = a;
	const ShardRange *rb = b;

	return (ra->lo > rb->lo) - (ra->lo < rb->lo);
}

/*
 * Read a non-negative number.  Sets the GUC error detail and returns false if
 * there is none or it is too large.
 */
static bool
parse_shard(const char **p, int64 *result)
{
	int64		v = 0;

	while (isspace((unsigned char) **p))
		(*p)++;
	if (!isdigit((unsigned char) **p))
	{
		if (**p == '\0')
			GUC_check_errdetail("Expected a shard number at the end of the list.");
		else
			GUC_check_errdetail("Expected a shard number at \"%s\".", *p);
		return false;
	}
	while (isdigit((unsigned char) **p))
	{
		v = v * 10 + (**p - '0');
		if (v > max_shard())
		{
			if (!idgen_layout_ready)
				GUC_check_errdetail("The largest shard number is %d.", INT_MAX);
			else
				GUC_check_errdetail("Shard numbers fit in \"%s\" = %d bits; the largest shard is " INT64_FORMAT ".",
								"idgen.shard_bits", idgen_layout.shard_bits,
									max_shard());
			return false;
		}
		(*p)++;
	}
	while (isspace((unsigned char) **p))
		(*p)++;
	*result = v;
	return true;
}

/*
 * Parse a list such as '5, 7, 100-163' into sorted, merged ranges, in
 * memory from idgen_guc_malloc() as GUC extras must be.  On failure, sets
 * the GUC error detail and returns NULL.
 *
 * Check hooks run in their caller's memory context, which may live as long
 * as the process (the postmaster's while libraries are preloaded): what is
 * palloc'd here is freed here.  The set is the GUC machinery's to free
 * only once a hook accepts it: a hook that rejects it frees it
 * (idgen_guc_free), or every refused reload would leak it, in the
 * postmaster and in every backend.
 */
static ShardSet *
parse_shard_list(const char *str)
{
	const char *p = str;
	int			cap = 8;
	int			n = 0;
	ShardRange *ranges = palloc(cap * sizeof(ShardRange));
	ShardSet   *set;
	int			out;

	while (isspace((unsigned char) *p))
		p++;
	while (*p != '\0')
	{
		int64		lo,
					hi;

		if (!parse_shard(&p, &lo))
			goto fail;
		hi = lo;
		if (*p == '-')
		{
			p++;
			if (!parse_shard(&p, &hi))
				goto fail;
			if (hi < lo)
			{
				GUC_check_errdetail("Range " INT64_FORMAT "-" INT64_FORMAT " runs backwards.",
									lo, hi);
				goto fail;
			}
		}
		if (*p == ',')
		{
			p++;
			while (isspace((unsigned char) *p))
				p++;
			if (*p == '\0')
			{
				GUC_check_errdetail("The list ends with a comma.");
				goto fail;
			}
		}
		else if (*p != '\0')
		{
			GUC_check_errdetail("Expected \",\" or \"-\" at \"%s\".", p);
			goto fail;
		}
		if (n == cap)
		{
			cap *= 2;
			ranges = repalloc(ranges, cap * sizeof(ShardRange));
		}
		ranges[n].lo = (int32) lo;
		ranges[n].hi = (int32) hi;
		n++;
	}

	qsort(ranges, n, sizeof(ShardRange), range_cmp);
	set = idgen_guc_malloc(offsetof(ShardSet, ranges) + Max(n, 1) * sizeof(ShardRange));
	if (set == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		goto fail;
	}
	out = 0;
	for (int i = 0; i < n; i++)
	{
		if (out > 0 && (int64) ranges[i].lo <= (int64) set->ranges[out - 1].hi + 1)
			set->ranges[out - 1].hi = Max(set->ranges[out - 1].hi, ranges[i].hi);
		else
			set->ranges[out++] = ranges[i];
	}
	set->nranges = out;
	pfree(ranges);
	return set;

fail:
	pfree(ranges);
	return NULL;
}

static bool
set_has(const ShardSet *set, int64 shard)
{
	for (int i = 0; set && i < set->nranges; i++)
		if (shard >= set->ranges[i].lo && shard <= set->ranges[i].hi)
			return true;
	return false;
}

static int64
set_size(const ShardSet *set)
{
	int64		n = 0;

	for (int i = 0; set && i < set->nranges; i++)
		n += (int64) set->ranges[i].hi - set->ranges[i].lo + 1;
	return n;
}

/* A live shard may not be a lane: at reload, the new value is refused. */
static bool
clear_of_lanes(const ShardSet *set, int64 single)
{
	if (lanes == NULL)
		return true;
	if (single >= 0 && set_has(lanes, single))
	{
		GUC_check_errdetail("Shard " INT64_FORMAT " is a backfill lane (\"%s\"); a lane is never minted live.",
							single, "idgen.backfill_shards");
		return false;
	}
	for (int i = 0; set && i < set->nranges; i++)
		for (int64 s = set->ranges[i].lo; s <= set->ranges[i].hi; s++)
			if (set_has(lanes, s))
			{
				GUC_check_errdetail("Shard " INT64_FORMAT " is a backfill lane (\"%s\"); a lane is never minted live.",
									s, "idgen.backfill_shards");
				return false;
			}
	return true;
}

bool
idgen_shard_id_check_hook(int *newval, void **extra, GucSource source)
{
	if (*newval > max_shard())
	{
		GUC_check_errdetail("Shard %d does not fit in \"%s\" = %d bits; the largest shard is " INT64_FORMAT ".",
							*newval, "idgen.shard_bits",
							idgen_layout.shard_bits, max_shard());
		return false;
	}
	return clear_of_lanes(NULL, *newval);
}

bool
idgen_shard_ids_check_hook(char **newval, void **extra, GucSource source)
{
	ShardSet   *set = parse_shard_list(*newval ? *newval : "");

	if (set == NULL)
		return false;
	if (!clear_of_lanes(set, -1))
	{
		idgen_guc_free(set);
		return false;
	}
	*extra = set;
	return true;
}

void
idgen_shard_ids_assign_hook(const char *newval, void *extra)
{
	owned_extra = (ShardSet *) extra;
}

bool
idgen_shard_pool_check_hook(char **newval, void **extra, GucSource source)
{
	return idgen_shard_ids_check_hook(newval, extra, source);
}

void
idgen_shard_pool_assign_hook(const char *newval, void *extra)
{
	pool = (ShardSet *) extra;
}

/* A pool is set: this server claims its shard instead of naming it. */
bool
idgen_shard_pool_set(void)
{
	return pool != NULL && pool->nranges > 0;
}

/*
 * The pool's ranges as two palloc'd arrays of their first and last shards,
 * ascending; returns how many.
 */
int
idgen_shard_pool_ranges(int32 **lo, int32 **hi)
{
	int			n = pool ? pool->nranges : 0;

	*lo = palloc(sizeof(int32) * Max(n, 1));
	*hi = palloc(sizeof(int32) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		(*lo)[i] = pool->ranges[i].lo;
		(*hi)[i] = pool->ranges[i].hi;
	}
	return n;
}

static bool
shard_owned(int32 shard)
{
	int			lo = 0;
	int			hi;

	if (shard == idgen_shard_id)
		return true;
	if (owned_extra == NULL)
		return false;
	hi = owned_extra->nranges - 1;
	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;
		ShardRange *r = &owned_extra->ranges[mid];

		if (shard < r->lo)
			hi = mid - 1;
		else if (shard > r->hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* Whether this node mints the shard live (idgen.shard_id, idgen.shard_ids). */
bool
idgen_shard_owned(int32 shard)
{
	return shard_owned(shard);
}

/* "shards 0, 5, 100-163": the shards this node owns, for error details. */
static char *
owned_shards_str(void)
{
	StringInfoData buf;
	bool		listed_shard_id = false;

	initStringInfo(&buf);
	for (int i = 0; owned_extra && i < owned_extra->nranges; i++)
	{
		ShardRange *r = &owned_extra->ranges[i];

		if (!listed_shard_id && idgen_shard_id < r->lo)
		{
			appendStringInfo(&buf, "%s%d", buf.len ? ", " : "", idgen_shard_id);
			listed_shard_id = true;
		}
		if (idgen_shard_id >= r->lo && idgen_shard_id <= r->hi)
			listed_shard_id = true;
		if (r->lo == r->hi)
			appendStringInfo(&buf, "%s%d", buf.len ? ", " : "", r->lo);
		else
			appendStringInfo(&buf, "%s%d-%d", buf.len ? ", " : "", r->lo, r->hi);
	}
	if (!listed_shard_id)
		appendStringInfo(&buf, "%s%d", buf.len ? ", " : "", idgen_shard_id);
	if (strpbrk(buf.data, ",-") == NULL)
		return psprintf("shard %s", buf.data);
	return psprintf("shards %s", buf.data);
}

void
idgen_shard_check_owned(int32 shard)
{
	if (shard < 0 || shard > max_shard())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shard %d is out of range", shard),
				 errdetail("With \"%s\" = %d, shards run from 0 to " INT64_FORMAT "; this node owns %s.",
						   "idgen.shard_bits", idgen_layout.shard_bits,
						   max_shard(), owned_shards_str()),
				 errhint("Mint for a shard this node owns, listed in \"%s\" or \"%s\".",
						 "idgen.shard_id", "idgen.shard_ids")));
	if (!shard_owned(shard))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shard %d is not owned by this node", shard),
				 errdetail("This node owns %s.", owned_shards_str()),
				 errhint("Add the shard to \"%s\" and reload the configuration, or mint on the node that owns it.",
						 "idgen.shard_ids")));
}

static int
shard_cmp(const void *a, const void *b)
{
	int32		sa = *(const int32 *) a;
	int32		sb = *(const int32 *) b;

	return (sa > sb) - (sa < sb);
}

/*
 * Every shard this node owns, ascending and without repeats, in a palloc'd
 * array: the shards whose leases the lease worker holds.
 */
int
idgen_owned_shards(int32 **shards)
{
	int64		n = 1;
	int			count = 0;
	int32	   *out;

	for (int i = 0; owned_extra && i < owned_extra->nranges; i++)
		n += (int64) owned_extra->ranges[i].hi - owned_extra->ranges[i].lo + 1;
	out = palloc_extended(n * sizeof(int32), MCXT_ALLOC_HUGE);

	out[count++] = idgen_shard_id;
	for (int i = 0; owned_extra && i < owned_extra->nranges; i++)
		for (int64 s = owned_extra->ranges[i].lo; s <= owned_extra->ranges[i].hi; s++)
			out[count++] = (int32) s;
	qsort(out, count, sizeof(int32), shard_cmp);

	n = count;
	count = 0;
	for (int64 i = 0; i < n; i++)
		if (count == 0 || out[count - 1] != out[i])
			out[count++] = out[i];
	*shards = out;
	return count;
}

/* ---- the backfill lanes' shards (lane.c) ---- */

bool
idgen_backfill_shards_check_hook(char **newval, void **extra, GucSource source)
{
	ShardSet   *set = parse_shard_list(*newval ? *newval : "");

	if (set == NULL)
		return false;
	if (set_size(set) > IDGEN_MAX_LANES)
	{
		GUC_check_errdetail("It names " INT64_FORMAT " shards; at most %d lanes are kept.",
							set_size(set), IDGEN_MAX_LANES);
		idgen_guc_free(set);
		return false;
	}
	*extra = set;
	return true;
}

void
idgen_backfill_shards_assign_hook(const char *newval, void *extra)
{
	lanes = (ShardSet *) extra;
}

bool
idgen_shard_is_lane(int32 shard)
{
	return set_has(lanes, shard);
}

/* The lanes' shards, ascending, into shards[IDGEN_MAX_LANES]. */
int
idgen_lane_shards(int32 *shards)
{
	int			n = 0;

	for (int i = 0; lanes && i < lanes->nranges; i++)
		for (int64 s = lanes->ranges[i].lo; s <= lanes->ranges[i].hi; s++)
			shards[n++] = (int32) s;
	return n;
}

/*
 * At start, when the layout is fixed: lanes among this server's live
 * shards are refused, with the server's start (the pool's check hook
 * refuses a lane in the pool).  Other servers' shards are the registry's
 * to keep apart (lane_lease.c).
 */
void
idgen_lane_shards_check(void)
{
	int32		shards[IDGEN_MAX_LANES];
	int			n = idgen_lane_shards(shards);

	for (int i = 0; i < n; i++)
	{
		if (shards[i] > max_shard())
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("backfill lane %d is out of range", shards[i]),
					 errdetail("With \"%s\" = %d, shards run from 0 to " INT64_FORMAT ".",
							   "idgen.shard_bits", idgen_layout.shard_bits, max_shard()),
					 errhint("Correct \"%s\".", "idgen.backfill_shards")));
		if (shards[i] == idgen_shard_id || set_has(owned_extra, shards[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("shard %d is both a live shard and a backfill lane", shards[i]),
					 errdetail("A lane mints at past milliseconds; the live IDs of its shard sit there."),
					 errhint("Name shards in \"%s\" that this node never mints live.",
							 "idgen.backfill_shards")));
	}
}
