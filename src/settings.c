/*-------------------------------------------------------------------------
 *
 * settings.c
 *		The idgen.* settings, each defined once in one table.
 *
 * The table drives both the definitions (DefineCustom*Variable) and the
 * start-up re-check.  PostgreSQL applies a preloaded library's settings
 * from postgresql.conf with a WARNING for a bad value, and keeps the
 * default.  For idgen a default silently standing in for a layout or a
 * shard is wrong, so the values given are captured before the settings are
 * defined and checked again afterwards with ERROR: the server does not
 * start.  The shard settings can be held to the shard field only once the
 * layout is fixed, so _PG_init re-checks after idgen_layout_init too.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/settings.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "miscadmin.h"
#include "utils/guc.h"

#include "idgen_compat.h"
#include "layout.h"
#include "public_id.h"
#include "settings.h"
#include "shard.h"

TimestampTz idgen_epoch_setting;
int			idgen_shard_bits_setting = IDGEN_DEFAULT_SHARD_BITS;
int			idgen_sequence_bits_setting = IDGEN_DEFAULT_SEQUENCE_BITS;
bool		idgen_allow_layout_change = false;
bool		idgen_allow_foreign_state = false;
TimestampTz idgen_layout_change_at = DT_NOBEGIN;
int			idgen_max_lead = IDGEN_DEFAULT_MAX_LEAD_MS;
int			idgen_max_wait = IDGEN_DEFAULT_MAX_WAIT_MS;
int			idgen_max_advance = IDGEN_DEFAULT_MAX_ADVANCE_MS;
int			idgen_fence_horizon = IDGEN_DEFAULT_FENCE_HORIZON_MS;
int			idgen_layout_end_warning = IDGEN_DEFAULT_LAYOUT_END_WARNING_MIN;
char	   *idgen_public_key_file = NULL;
char	   *idgen_public_key = NULL;
char	   *idgen_lease_registry = NULL;
int			idgen_lease_duration = IDGEN_DEFAULT_LEASE_DURATION_MS;
int			idgen_max_clock_offset = IDGEN_DEFAULT_MAX_CLOCK_OFFSET_MS;
int			idgen_backfill_max_shift = 0;
int			idgen_backfill_counters = IDGEN_DEFAULT_BACKFILL_COUNTERS;

/* idgen.epoch as written; idgen_epoch_setting is what it means */
static char *epoch_text = NULL;

static bool
epoch_check_hook(char **newval, void **extra, GucSource source)
{
	TimestampTz *epoch;
	TimestampTz parsed;
	bool		relative;

	if (!idgen_parse_epoch(*newval, &parsed, &relative))
	{
		if (relative)
			GUC_check_errdetail("\"%s\" must be a fixed instant, not a time relative to now, such as '%s'.",
								"idgen.epoch", IDGEN_DEFAULT_EPOCH);
		else
			GUC_check_errdetail("\"%s\" must be a timestamp with time zone, such as '%s'.",
								"idgen.epoch", IDGEN_DEFAULT_EPOCH);
		return false;
	}
	epoch = idgen_guc_malloc(sizeof(TimestampTz));
	if (epoch == NULL)
		return false;
	*epoch = parsed;
	*extra = epoch;
	return true;
}

static void
epoch_assign_hook(const char *newval, void *extra)
{
	idgen_epoch_setting = *(TimestampTz *) extra;
}

/* idgen.layout_change_at as written: empty, or an instant */
static char *layout_change_at_text = NULL;

static bool
layout_change_at_check_hook(char **newval, void **extra, GucSource source)
{
	TimestampTz *at;
	TimestampTz parsed = DT_NOBEGIN;
	bool		relative;

	if (*newval != NULL && (*newval)[0] != '\0' &&
		!idgen_parse_epoch(*newval, &parsed, &relative))
	{
		GUC_check_errdetail("\"%s\" must be empty or a fixed instant, a timestamp with time zone such as '%s'.",
							"idgen.layout_change_at", "2026-12-02 03:00:00+00");
		return false;
	}
	at = idgen_guc_malloc(sizeof(TimestampTz));
	if (at == NULL)
		return false;
	*at = parsed;
	*extra = at;
	return true;
}

static void
layout_change_at_assign_hook(const char *newval, void *extra)
{
	idgen_layout_change_at = *(TimestampTz *) extra;
}

typedef enum SettingType
{
	SETTING_INT,
	SETTING_BOOL,
	SETTING_STRING
} SettingType;

typedef struct IdgenSetting
{
	const char *name;
	const char *short_desc;
	const char *long_desc;
	GucContext	context;
	int			flags;
	SettingType type;
	union						/* by type */
	{
		int		   *i;
		bool	   *b;
		char	  **s;
	}			var;
	int			int_boot;		/* SETTING_INT: default and bounds */
	int			int_min;
	int			int_max;
	bool		bool_boot;
	const char *string_boot;
	union
	{
		GucIntCheckHook i;
		GucStringCheckHook s;
	}			check;
	GucStringAssignHook string_assign;
} IdgenSetting;

/*
 * Settings that may change at reload come first: any backend defines them.
 * The PGC_POSTMASTER ones exist only where the library is preloaded.
 */
static const IdgenSetting settings[] = {
	{
		.name = "idgen.shard_id",
		.short_desc = "Shard that idgen_next() mints for.",
		.context = PGC_SIGHUP,
		.type = SETTING_INT, .var.i = &idgen_shard_id,
		.int_boot = 0, .int_min = 0, .int_max = INT_MAX,
		.check.i = idgen_shard_id_check_hook,
	},
	{
		.name = "idgen.shard_ids",
		.short_desc = "Further shards this node owns, as a list of numbers and ranges such as '5,7,100-163'.",
		.long_desc = "idgen_next(shard) refuses a shard that is neither this nor idgen.shard_id.",
		.context = PGC_SIGHUP,
		.type = SETTING_STRING, .var.s = &idgen_shard_ids,
		.string_boot = "",
		.check.s = idgen_shard_ids_check_hook,
		.string_assign = idgen_shard_ids_assign_hook,
	},
	{
		.name = "idgen.max_lead",
		.short_desc = "How far the generator's clock may run ahead of the wall clock before callers wait.",
		.long_desc = "It runs ahead when a millisecond's sequence fills or the wall clock steps back.",
		.context = PGC_SIGHUP, .flags = GUC_UNIT_MS,
		.type = SETTING_INT, .var.i = &idgen_max_lead,
		.int_boot = IDGEN_DEFAULT_MAX_LEAD_MS, .int_min = 0, .int_max = INT_MAX,
	},
	{
		.name = "idgen.max_wait",
		.short_desc = "Longest a caller waits for the wall clock or the fence before an error.",
		.context = PGC_USERSET, .flags = GUC_UNIT_MS,
		.type = SETTING_INT, .var.i = &idgen_max_wait,
		.int_boot = IDGEN_DEFAULT_MAX_WAIT_MS, .int_min = 0, .int_max = INT_MAX,
	},
	{
		.name = "idgen.backfill_max_shift",
		.short_desc = "How many milliseconds later than asked idgen_next_at() may mint when the lanes are full at the millisecond asked.",
		.long_desc = "0: exactly the millisecond asked, or an error.",
		.context = PGC_USERSET, .flags = GUC_UNIT_MS,
		.type = SETTING_INT, .var.i = &idgen_backfill_max_shift,
		.int_boot = 0, .int_min = 0, .int_max = 3600 * 1000,
	},
	{
		.name = "idgen.max_advance",
		.short_desc = "How far ahead of the wall clock idgen_advance_past() may move the generator.",
		.long_desc = "Minting waits or fails until the wall clock catches up with an advance, and nothing undoes it: an ID further ahead is refused as a likely mistake.",
		.context = PGC_SUSET, .flags = GUC_UNIT_MS,
		.type = SETTING_INT, .var.i = &idgen_max_advance,
		.int_boot = IDGEN_DEFAULT_MAX_ADVANCE_MS, .int_min = 0, .int_max = INT_MAX,
	},
	{
		.name = "idgen.fence_horizon",
		.short_desc = "How far ahead of the generator the durable fence is moved.",
		.long_desc = "Each move writes the state file and a WAL record; a restart may make callers wait up to this long.",
		.context = PGC_SIGHUP, .flags = GUC_UNIT_MS,
		.type = SETTING_INT, .var.i = &idgen_fence_horizon,
		.int_boot = IDGEN_DEFAULT_FENCE_HORIZON_MS, .int_min = 10, .int_max = 3600 * 1000,
	},
	{
		.name = "idgen.layout_end_warning",
		.short_desc = "How long before the layout runs out the server log warns of it, at start and once a day; 0 never.",
		.long_desc = "After the layout's last millisecond no ID can be minted.",
		.context = PGC_SIGHUP, .flags = GUC_UNIT_MIN,
		.type = SETTING_INT, .var.i = &idgen_layout_end_warning,
		.int_boot = IDGEN_DEFAULT_LAYOUT_END_WARNING_MIN, .int_min = 0, .int_max = INT_MAX,
	},
	{
		.name = "idgen.public_key_file",
		.short_desc = "File holding the key of the permutation behind idgen_to_public(): 32 hexadecimal digits.",
		.long_desc = "Relative to the data directory; read again at each reload.  Changing the key changes every public ID ever shown.",
		.context = PGC_SIGHUP, .flags = GUC_SUPERUSER_ONLY,
		.type = SETTING_STRING, .var.s = &idgen_public_key_file,
		.string_boot = "",
		.check.s = idgen_public_key_file_check_hook,
		.string_assign = idgen_public_key_file_assign_hook,
	},
	{
		/* 1.1's: readable by pg_read_all_settings, logged at reload */
		.name = "idgen.public_key",
		.short_desc = "Key of the permutation behind idgen_to_public(), 32 hexadecimal digits; use idgen.public_key_file instead.",
		.long_desc = "Ignored while idgen.public_key_file is set.",
		.context = PGC_SUSET, .flags = GUC_SUPERUSER_ONLY | GUC_NOT_IN_SAMPLE,
		.type = SETTING_STRING, .var.s = &idgen_public_key,
		.string_boot = "",
		.check.s = idgen_public_key_check_hook,
		.string_assign = idgen_public_key_assign_hook,
	},
	{
		.name = "idgen.lease_duration",
		.short_desc = "How long a shard's lease lasts from each renewal.",
		.long_desc = "The lease worker renews every third of it; a registry unreachable for longer stops minting.",
		.context = PGC_SIGHUP, .flags = GUC_UNIT_MS,
		.type = SETTING_INT, .var.i = &idgen_lease_duration,
		.int_boot = IDGEN_DEFAULT_LEASE_DURATION_MS, .int_min = 1000, .int_max = 3600 * 1000,
	},
	{
		.name = "idgen.max_clock_offset",
		.short_desc = "How far this server's clock may be from the lease registry's before it stops taking and renewing leases; 0 does not compare them.",
		.long_desc = "Measured at every registry round, give or take half its round trip.",
		.context = PGC_SIGHUP, .flags = GUC_UNIT_MS,
		.type = SETTING_INT, .var.i = &idgen_max_clock_offset,
		.int_boot = IDGEN_DEFAULT_MAX_CLOCK_OFFSET_MS, .int_min = 0, .int_max = INT_MAX,
	},
	{
		.name = "idgen.lease_registry",
		.short_desc = "Connection string of the database that leases shards to servers; empty for no leases.",
		.long_desc = "With it set, this server mints for a shard only while it holds the shard's lease there.",
		.context = PGC_POSTMASTER, .flags = GUC_SUPERUSER_ONLY,
		.type = SETTING_STRING, .var.s = &idgen_lease_registry,
		.string_boot = "",
	},
	{
		.name = "idgen.shard_pool",
		.short_desc = "Shards this server claims one of in the lease registry, as a list such as '1-1023'; empty to name its shards.",
		.long_desc = "Needs idgen.lease_registry; idgen_next() then mints for the claimed shard, and idgen.shard_id and idgen.shard_ids are not used.",
		.context = PGC_POSTMASTER,
		.type = SETTING_STRING, .var.s = &idgen_shard_pool,
		.string_boot = "",
		.check.s = idgen_shard_pool_check_hook,
		.string_assign = idgen_shard_pool_assign_hook,
	},
	{
		.name = "idgen.backfill_shards",
		.short_desc = "Shards reserved for minting at a given time (idgen_next_at), as a list such as '4000-4015'; never minted live.",
		.long_desc = "Each is a backfill lane; at most 64.",
		.context = PGC_POSTMASTER,
		.type = SETTING_STRING, .var.s = &idgen_backfill_shards,
		.string_boot = "",
		.check.s = idgen_backfill_shards_check_hook,
		.string_assign = idgen_backfill_shards_assign_hook,
	},
	{
		.name = "idgen.backfill_counters",
		.short_desc = "How many milliseconds the backfill lanes count IDs at, for times that come out of order.",
		.long_desc = "Shared memory, 16 bytes each, only with idgen.backfill_shards set; when they are all taken, every lane's window ends and opens again.",
		.context = PGC_POSTMASTER,
		.type = SETTING_INT, .var.i = &idgen_backfill_counters,
		.int_boot = IDGEN_DEFAULT_BACKFILL_COUNTERS, .int_min = 1024, .int_max = 1 << 26,
	},
	{
		.name = "idgen.epoch",
		.short_desc = "The custom epoch that IDs count milliseconds from.",
		.long_desc = "Fixed for the life of the cluster.",
		.context = PGC_POSTMASTER,
		.type = SETTING_STRING, .var.s = &epoch_text,
		.string_boot = IDGEN_DEFAULT_EPOCH,
		.check.s = epoch_check_hook,
		.string_assign = epoch_assign_hook,
	},
	{
		.name = "idgen.shard_bits",
		.short_desc = "Width of the shard field of an ID.",
		.long_desc = "Fixed for the life of the cluster.",
		.context = PGC_POSTMASTER,
		.type = SETTING_INT, .var.i = &idgen_shard_bits_setting,
		.int_boot = IDGEN_DEFAULT_SHARD_BITS, .int_min = 0, .int_max = 31,
	},
	{
		.name = "idgen.sequence_bits",
		.short_desc = "Width of the per-millisecond sequence field of an ID.",
		.long_desc = "Fixed for the life of the cluster.",
		.context = PGC_POSTMASTER,
		.type = SETTING_INT, .var.i = &idgen_sequence_bits_setting,
		.int_boot = IDGEN_DEFAULT_SEQUENCE_BITS, .int_min = 1, .int_max = 31,
	},
	{
		.name = "idgen.allow_layout_change",
		.short_desc = "Accept a layout that differs from the one recorded in the data directory.",
		.long_desc = "New IDs then start above every ID minted under the old layout.",
		.context = PGC_POSTMASTER,
		.type = SETTING_BOOL, .var.b = &idgen_allow_layout_change,
		.bool_boot = false,
	},
	{
		.name = "idgen.layout_change_at",
		.short_desc = "Where a layout change begins its version: at this instant, empty for the start.",
		.long_desc = "With idgen.allow_layout_change, the new version's first ID is this instant's under the new layout; nodes that share tables, given the same instant, get the same history.",
		.context = PGC_POSTMASTER,
		.type = SETTING_STRING, .var.s = &layout_change_at_text,
		.string_boot = "",
		.check.s = layout_change_at_check_hook,
		.string_assign = layout_change_at_assign_hook,
	},
	{
		.name = "idgen.allow_foreign_state",
		.short_desc = "Accept a state file written by another cluster.",
		.long_desc = "New IDs then start above its fence and above this cluster's last checkpoint.",
		.context = PGC_POSTMASTER,
		.type = SETTING_BOOL, .var.b = &idgen_allow_foreign_state,
		.bool_boot = false,
	},
};

#define NUM_SETTINGS ((int) lengthof(settings))

/* The values postgresql.conf and the command line gave, before defining. */
static char *given[NUM_SETTINGS];

static void
define_setting(const IdgenSetting *s)
{
	switch (s->type)
	{
		case SETTING_INT:
			DefineCustomIntVariable(s->name, s->short_desc, s->long_desc,
									s->var.i, s->int_boot, s->int_min,
									s->int_max, s->context, s->flags,
									s->check.i, NULL, NULL);
			break;
		case SETTING_BOOL:
			DefineCustomBoolVariable(s->name, s->short_desc, s->long_desc,
									 s->var.b, s->bool_boot, s->context,
									 s->flags, NULL, NULL, NULL);
			break;
		case SETTING_STRING:
			DefineCustomStringVariable(s->name, s->short_desc, s->long_desc,
									   s->var.s, s->string_boot, s->context,
									   s->flags, s->check.s, s->string_assign,
									   NULL);
			break;
	}
}

/*
 * Define every setting; the PGC_POSTMASTER ones only while preloading.
 * Returns with the given values captured for idgen_settings_recheck.
 */
void
idgen_settings_define(void)
{
	for (int i = 0; i < NUM_SETTINGS; i++)
	{
		const char *v = GetConfigOption(settings[i].name, true, false);

		given[i] = v ? pstrdup(v) : NULL;
	}
	for (int i = 0; i < NUM_SETTINGS; i++)
	{
		if (settings[i].context == PGC_POSTMASTER &&
			!process_shared_preload_libraries_in_progress)
			continue;
		define_setting(&settings[i]);
	}
	if (process_shared_preload_libraries_in_progress)
		MarkGUCPrefixReserved("idgen");
}

/*
 * Check every value given again, with ERROR whatever its source; in the
 * postmaster that stops the start, with the message.
 */
void
idgen_settings_recheck(void)
{
	for (int i = 0; i < NUM_SETTINGS; i++)
	{
		/* changeVal = false: validate only */
		if (given[i] != NULL)
			(void) set_config_option(settings[i].name, given[i],
									 PGC_POSTMASTER, PGC_S_FILE,
									 GUC_ACTION_SET, false, ERROR, false);
	}
}
