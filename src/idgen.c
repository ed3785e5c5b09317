/*-------------------------------------------------------------------------
 *
 * idgen.c
 *		Time-sorted, unique 64-bit IDs minted in shared memory.
 *
 * This file holds what PostgreSQL calls into: _PG_init (settings, shared
 * memory hooks, the WAL resource manager and the fence worker) and the
 * SQL-callable functions.  The work lives beside it:
 *
 *	layout.c	the bit layout: validation, encoding, decoding
 *	shard.c		the shards this node owns
 *	generator.c	the shared state and the lock-free minting loop
 *	fence.c		the durable fence: state file, WAL, background worker
 *	stats.c		idgen_stats and idgen_stats_backends
 *	wait_event.c	the wait events idgen's sleeps show in pg_stat_activity
 *
 * The library must be loaded through shared_preload_libraries: the layout
 * settings are fixed at server start and the generator lives in shared
 * memory.  Every SQL function checks for that and says how to fix it.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/idgen.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "fence.h"
#include "generator.h"
#include "idgen_compat.h"
#include "layout.h"
#include "shard.h"

PG_MODULE_MAGIC;

#if PG_VERSION_NUM < 160000
void		_PG_init(void);
#endif

PG_FUNCTION_INFO_V1(idgen_next);
PG_FUNCTION_INFO_V1(idgen_next_shard);
PG_FUNCTION_INFO_V1(id_to_timestamp);
PG_FUNCTION_INFO_V1(min_id_at);
PG_FUNCTION_INFO_V1(id_to_shard);
PG_FUNCTION_INFO_V1(id_to_sequence);
PG_FUNCTION_INFO_V1(idgen_decode);

/* Layout settings: PGC_POSTMASTER, checked as a whole by idgen_layout_init */
static char *idgen_epoch_setting = NULL;
static int	idgen_shard_bits = IDGEN_DEFAULT_SHARD_BITS;
static int	idgen_sequence_bits = IDGEN_DEFAULT_SEQUENCE_BITS;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void idgen_shmem_request(void);
static void idgen_shmem_startup(void);

/*
 * PostgreSQL applies a preloaded library's settings from postgresql.conf
 * with a WARNING for a bad value, and keeps the default.  For idgen a
 * default silently standing in for a layout or a shard is wrong, so the
 * values given are captured before the settings are defined and checked
 * again afterwards, with ERROR: the server does not start.
 */
static const char *const idgen_setting_names[] = {
	"idgen.shard_id", "idgen.shard_ids", "idgen.max_lead", "idgen.max_wait",
	"idgen.fence_horizon", "idgen.epoch", "idgen.shard_bits",
	"idgen.sequence_bits", "idgen.allow_layout_change",
	"idgen.allow_foreign_state"
};
#define IDGEN_NUM_SETTINGS lengthof(idgen_setting_names)

static void
capture_given_settings(char **given)
{
	for (int i = 0; i < IDGEN_NUM_SETTINGS; i++)
	{
		const char *v = GetConfigOption(idgen_setting_names[i], true, false);

		given[i] = v ? pstrdup(v) : NULL;
	}
}

static void
check_given_settings(char **given)
{
	for (int i = 0; i < IDGEN_NUM_SETTINGS; i++)
	{
		/* changeVal = false: validate only, whatever the value's source */
		if (given[i] != NULL)
			(void) set_config_option(idgen_setting_names[i], given[i],
									 PGC_POSTMASTER, PGC_S_FILE,
									 GUC_ACTION_SET, false, ERROR, false);
	}
}

static bool
idgen_epoch_check_hook(char **newval, void **extra, GucSource source)
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

static TimestampTz idgen_epoch_value;

static void
idgen_epoch_assign_hook(const char *newval, void *extra)
{
	idgen_epoch_value = *(TimestampTz *) extra;
}

void
_PG_init(void)
{
	char	   *given[IDGEN_NUM_SETTINGS];

	capture_given_settings(given);

	/* Settings that may change at reload come first: any backend has them. */
	DefineCustomIntVariable("idgen.shard_id",
							"Shard that idgen_next() mints for.",
							NULL,
							&idgen_shard_id,
							0, 0, INT_MAX,
							PGC_SIGHUP,
							0,
							idgen_shard_id_check_hook, NULL, NULL);

	DefineCustomStringVariable("idgen.shard_ids",
							   "Further shards this node owns, as a list of numbers and ranges such as '5,7,100-163'.",
							   "idgen_next(shard) refuses a shard that is neither this nor idgen.shard_id.",
							   &idgen_shard_ids,
							   "",
							   PGC_SIGHUP,
							   0,
							   idgen_shard_ids_check_hook,
							   idgen_shard_ids_assign_hook, NULL);

	DefineCustomIntVariable("idgen.max_lead",
							"How far the generator's clock may run ahead of the wall clock before callers wait.",
							"It runs ahead when a millisecond's sequence fills or the wall clock steps back.",
							&idgen_max_lead,
							1000, 0, INT_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("idgen.max_wait",
							"Longest a caller waits for the wall clock or the fence before an error.",
							NULL,
							&idgen_max_wait,
							10000, 0, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("idgen.fence_horizon",
							"How far ahead of the generator the durable fence is moved.",
							"Each move writes the state file and a WAL record; a restart may make callers wait up to this long.",
							&idgen_fence_horizon,
							1000, 10, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomStringVariable("idgen.epoch",
							   "The custom epoch that IDs count milliseconds from.",
							   "Fixed for the life of the cluster.",
							   &idgen_epoch_setting,
							   IDGEN_DEFAULT_EPOCH,
							   PGC_POSTMASTER,
							   0,
							   idgen_epoch_check_hook,
							   idgen_epoch_assign_hook, NULL);

	DefineCustomIntVariable("idgen.shard_bits",
							"Width of the shard field of an ID.",
							"Fixed for the life of the cluster.",
							&idgen_shard_bits,
							IDGEN_DEFAULT_SHARD_BITS, 0, 31,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("idgen.sequence_bits",
							"Width of the per-millisecond sequence field of an ID.",
							"Fixed for the life of the cluster.",
							&idgen_sequence_bits,
							IDGEN_DEFAULT_SEQUENCE_BITS, 1, 31,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("idgen.allow_layout_change",
							 "Accept a layout that differs from the one recorded in the data directory.",
							 "New IDs then start above every ID minted under the old layout.",
							 &idgen_allow_layout_change,
							 false,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("idgen.allow_foreign_state",
							 "Accept a state file written by another cluster.",
							 "New IDs then start above its fence and above this cluster's last checkpoint.",
							 &idgen_allow_foreign_state,
							 false,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("idgen");

	/*
	 * In the postmaster an ERROR here stops the start, with the message.
	 * The shard hooks can hold shards to the field only once the layout is
	 * fixed, so the values given are checked again after it.
	 */
	check_given_settings(given);
	idgen_layout_init(idgen_epoch_value, idgen_shard_bits, idgen_sequence_bits);
	check_given_settings(given);

	idgen_fence_register();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = idgen_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = idgen_shmem_startup;
}

static void
idgen_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(idgen_shmem_size());
	RequestNamedLWLockTranche("idgen", 1);
}

static void
idgen_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	/* reset in case this is a restart within the postmaster */
	idgen_shared = NULL;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	idgen_shared = ShmemInitStruct("idgen", idgen_shmem_size(), &found);
	if (!found)
	{
		int64		fence_ms = idgen_fence_recover();	/* reads the file once */

		idgen_shmem_init(Min(fence_ms, idgen_max_ms()));
	}
	LWLockRelease(AddinShmemInitLock);

	/* the postmaster records the last millisecond minted when it exits */
	if (!IsUnderPostmaster)
		on_shmem_exit(idgen_fence_shutdown, (Datum) 0);
}

/* ---- SQL-callable functions ---- */

Datum
idgen_next(PG_FUNCTION_ARGS)
{
	/* idgen.shard_id was checked against the layout when it was set */
	PG_RETURN_INT64(idgen_mint(idgen_shard_id));
}

Datum
idgen_next_shard(PG_FUNCTION_ARGS)
{
	int32		shard = PG_GETARG_INT32(0);

	idgen_check_preloaded();
	idgen_shard_check_owned(shard);
	PG_RETURN_INT64(idgen_mint(shard));
}

static TimestampTz
id_timestamp(int64 id)
{
	TimestampTz ts = idgen_ms_to_timestamptz(idgen_id_ms(id));

	if (!IS_VALID_TIMESTAMP(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range"),
				 errdetail("ID " INT64_FORMAT " encodes a time past the end of PostgreSQL's timestamps.", id)));
	return ts;
}

Datum
id_to_timestamp(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(id_timestamp(PG_GETARG_INT64(0)));
}

Datum
min_id_at(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(idgen_min_id_at(PG_GETARG_TIMESTAMPTZ(0)));
}

Datum
id_to_shard(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(idgen_id_shard(PG_GETARG_INT64(0)));
}

Datum
id_to_sequence(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(idgen_id_sequence(PG_GETARG_INT64(0)));
}

Datum
idgen_decode(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {0};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	values[0] = TimestampTzGetDatum(id_timestamp(id));
	values[1] = Int32GetDatum(idgen_id_shard(id));
	values[2] = Int32GetDatum(idgen_id_sequence(id));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
