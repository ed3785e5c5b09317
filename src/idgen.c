/*-------------------------------------------------------------------------
 *
 * idgen.c
 *		Time-sorted, unique 64-bit IDs minted in shared memory.
 *
 * This file holds what PostgreSQL calls into: _PG_init (settings, shared
 * memory hooks, the WAL resource manager and the workers) and the minting
 * functions.  doc/design.md ("Where things live") maps the other files.
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

#include "commands/extension.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "fence.h"
#include "fence_gate.h"
#include "generator.h"
#include "idgen_compat.h"
#include "lane.h"
#include "layout.h"
#include "layout_history.h"
#include "layout_stamp.h"
#include "lease_gate.h"
#include "lease_worker.h"
#include "public_id.h"
#include "settings.h"
#include "shard.h"
#include "stamp_hooks.h"
#include "stamp_worker.h"
#include "wal_replay.h"

PG_MODULE_MAGIC;

#if PG_VERSION_NUM < 160000
void		_PG_init(void);
#endif

PG_FUNCTION_INFO_V1(idgen_next);
PG_FUNCTION_INFO_V1(idgen_next_shard);
PG_FUNCTION_INFO_V1(idgen_next_n);
PG_FUNCTION_INFO_V1(idgen_next_n_shard);
PG_FUNCTION_INFO_V1(idgen_advance_past);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void idgen_shmem_request(void);
static void idgen_shmem_startup(void);

/*
 * CREATE EXTENSION loads the library to check its C functions: without the
 * preload, say so there, rather than at the application's first insert.
 * ALTER EXTENSION UPDATE says it too.  A backend that loaded the library
 * before (LOAD) runs no _PG_init again and says nothing; the first mint's
 * error still does.
 */
static void
warn_not_preloaded(void)
{
	if (!creating_extension ||
		CurrentExtensionObject != get_extension_oid("idgen", true))
		return;
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("idgen is not loaded via \"shared_preload_libraries\""),
			 errdetail("The extension is created, but idgen_next() and every function that decodes by the server's layout fail until the server starts with the library preloaded."),
			 errhint("Add idgen to \"shared_preload_libraries\" in postgresql.conf and restart the server.")));
}

void
_PG_init(void)
{
	/* Settings that may change at reload exist in any backend. */
	idgen_settings_define();
	if (!process_shared_preload_libraries_in_progress)
	{
		warn_not_preloaded();
		return;
	}

	/*
	 * In the postmaster an ERROR here stops the start, with the message.
	 * The shard settings can be held to the shard field only once the layout
	 * is fixed, so the values given are checked again after it.
	 */
	idgen_settings_recheck();
	idgen_layout_init(idgen_epoch_setting, idgen_shard_bits_setting,
					  idgen_sequence_bits_setting);
	idgen_settings_recheck();
	idgen_lane_shards_check();
	idgen_warn_layout_end((int64) idgen_layout_end_warning * 60 * 1000);
	if (idgen_public_key != NULL && idgen_public_key[0] != '\0')
		idgen_public_key_warn();

	idgen_wal_register();
	idgen_fence_register();
	idgen_lease_register();
	idgen_stamp_hook_install();

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
	RequestAddinShmemSpace(idgen_fence_gate_shmem_size());
	RequestAddinShmemSpace(idgen_history_shmem_size());
	RequestAddinShmemSpace(idgen_stamps_shmem_size());
	RequestAddinShmemSpace(idgen_lease_shmem_size());
	RequestAddinShmemSpace(idgen_lanes_shmem_size());
	/* the fence writers' lock, and the lanes' */
	RequestNamedLWLockTranche(IDGEN_FENCE_LOCK_TRANCHE, 2);
}

static void
idgen_shmem_startup(void)
{
	bool		generator_found;
	bool		gate_found PG_USED_FOR_ASSERTS_ONLY;
	bool		history_found PG_USED_FOR_ASSERTS_ONLY;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	generator_found = idgen_shmem_attach();
	gate_found = idgen_fence_gate_shmem_attach();
	history_found = idgen_history_shmem_attach();
	idgen_stamps_shmem_attach();
	/* one segment holds them all: they are new together */
	Assert(generator_found == gate_found && gate_found == history_found);
	if (!generator_found)
	{
		int64		fence_ms = idgen_fence_recover();	/* reads the file once */

		/* above every lane's IDs too: a new layout version starts there */
		idgen_lanes_shmem_startup();
		fence_ms = Max(fence_ms, idgen_lanes_floor_ms());
		fence_ms = Min(fence_ms, idgen_max_ms(&idgen_layout));
		idgen_shmem_init(fence_ms);
		idgen_fence_gate_shmem_init(fence_ms);
		idgen_stamps_load_file();
	}
	else
		idgen_lanes_shmem_startup();	/* attach */
	idgen_lease_shmem_startup();
	LWLockRelease(AddinShmemInitLock);

	/* the postmaster records the last millisecond minted when it exits */
	if (!IsUnderPostmaster)
		on_shmem_exit(idgen_fence_shutdown, (Datum) 0);
}

/* ---- SQL-callable functions ---- */

/*
 * The shard idgen_next() mints for: idgen.shard_id (checked against the
 * layout when it was set), or with a pool the claimed one.  Without a pool
 * this costs one predictable branch.
 */
static inline int32
default_shard(void)
{
	if (unlikely(idgen_pool_on))
		return idgen_pool_shard();
	return idgen_shard_id;
}

/* A shard a caller names: one this node owns, or with a pool the claimed one. */
static void
check_shard(int32 shard)
{
	if (idgen_pool_on)
		idgen_pool_check_shard(shard);
	else
		idgen_shard_check_owned(shard);
}

Datum
idgen_next(PG_FUNCTION_ARGS)
{
	idgen_check_database_mints();
	PG_RETURN_INT64(idgen_mint(default_shard()));
}

Datum
idgen_next_shard(PG_FUNCTION_ARGS)
{
	int32		shard = PG_GETARG_INT32(0);

	idgen_check_preloaded();
	idgen_check_database_mints();
	check_shard(shard);
	PG_RETURN_INT64(idgen_mint(shard));
}

/*
 * A block, reserved with one compare-and-swap and returned whole: one call,
 * the rows straight into the tuplestore (cheaper per row than a call each).
 */
static Datum
next_n(FunctionCallInfo fcinfo, int32 shard)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int32		n = PG_GETARG_INT32(0);
	uint64		first;
	bool		nulls[1] = {false};

	idgen_check_preloaded();
	idgen_check_database_mints();
	idgen_check_block_size(n);
	if (PG_NARGS() > 1)
		check_shard(shard);
	else
		shard = default_shard();

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	first = idgen_mint_block(shard, n);
	for (int64 i = 0; i < n; i++)
	{
		Datum		id = Int64GetDatum(idgen_block_id(first, i, shard));

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &id, nulls);
	}
	return (Datum) 0;
}

Datum
idgen_next_n(PG_FUNCTION_ARGS)
{
	return next_n(fcinfo, -1);		/* the default shard, chosen in next_n */
}

Datum
idgen_next_n_shard(PG_FUNCTION_ARGS)
{
	return next_n(fcinfo, PG_GETARG_INT32(1));
}

/* The shard of an ID, by the layout version that minted it. */
static int32
shard_of(int64 id)
{
	int			version;
	const IdgenLayoutVersion *v =
		idgen_history_version_of_id(idgen_server_history(NULL), id, &version);

	return idgen_shard_of_id(&v->layout, (uint64) id);
}

Datum
idgen_advance_past(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	int64		target_ms;
	int64		ahead_ms;
	int32		shard;

	idgen_check_preloaded();
	idgen_refuse_negative(id, IDGEN_NEGATIVE_ID_HINT);
	target_ms = idgen_id_ms(id) + 1;
	if (target_ms >= idgen_max_ms(&idgen_layout))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("no ID can be above " INT64_FORMAT, id),
				 errdetail("It is in the last millisecond of the ID layout.")));

	/*
	 * Nothing undoes an advance, and minting waits or fails until the wall
	 * clock catches up with it: one far ahead (a public ID, an ID of another
	 * layout) would stop minting for years.  One the generator has already
	 * passed changes nothing and is let through.
	 */
	ahead_ms = target_ms - idgen_wall_ms();
	if (ahead_ms > idgen_max_advance && target_ms > idgen_generator_ms())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ID " INT64_FORMAT " is too far ahead of the wall clock", id),
				 errdetail("It is from %s, " INT64_FORMAT " ms ahead of the wall clock; \"%s\" is %d ms.  Minting would stop until the wall clock got there.",
						   timestamptz_to_str(idgen_ms_to_timestamptz(&idgen_layout, target_ms - 1)),
						   ahead_ms, "idgen.max_advance", idgen_max_advance),
				 errhint("Check that the argument is an ID of this layout and not a public ID; to move the generator that far on purpose, raise \"%s\".",
						 "idgen.max_advance")));

	ahead_ms = idgen_raise_past(id);
	idgen_lanes_raise_past(id);
	shard = shard_of(id);
	if (!idgen_shard_owned(shard))
		idgen_stamp_name_shard(shard);
	if (ahead_ms > idgen_max_lead)
		ereport(WARNING,
				(errmsg("idgen's clock is now " INT64_FORMAT " ms ahead of the wall clock", ahead_ms),
				 errdetail("ID " INT64_FORMAT " is from a time the wall clock has not reached.  Until the wall clock is within \"%s\" (%d ms) of it, a mint waits for it, or fails at once where it would wait longer than \"%s\" (%d ms here).",
						   id, "idgen.max_lead", idgen_max_lead,
						   "idgen.max_wait", idgen_max_wait)));
	PG_RETURN_VOID();
}
