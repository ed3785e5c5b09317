/*-------------------------------------------------------------------------
 *
 * wait_event.c
 *		Named wait events for idgen's sleeps.
 *
 * From PostgreSQL 17 an extension can register wait events of its own, so
 * that pg_stat_activity says a session waits for idgen's clock or fence
 * rather than for a generic "Extension".  Before 17 every sleep reports
 * PG_WAIT_EXTENSION.  The names are registered on first use, in a process
 * that is about to sleep anyway, and cached for the life of the process.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/wait_event.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pgstat.h"
#include "utils/wait_event.h"

#include "wait_event.h"

#if PG_VERSION_NUM >= 170000

/* Shown in pg_stat_activity.wait_event; documented in the README. */
static const char *const wait_event_names[IDGEN_NUM_WAIT_EVENTS] = {
	[IDGEN_WAIT_WALL_CLOCK] = "IdgenWallClock",
	[IDGEN_WAIT_FENCE] = "IdgenFence",
	[IDGEN_WAIT_FENCE_WORKER_MAIN] = "IdgenFenceWorkerMain",
	[IDGEN_WAIT_LEASE] = "IdgenLease",
	[IDGEN_WAIT_LEASE_WORKER_MAIN] = "IdgenLeaseWorkerMain",
	[IDGEN_WAIT_LEASE_REGISTRY] = "IdgenLeaseRegistry",
	[IDGEN_WAIT_STAMPS] = "IdgenStamps",
};

static uint32 wait_event_infos[IDGEN_NUM_WAIT_EVENTS];

uint32
idgen_wait_event_info(IdgenWaitEvent event)
{
	Assert(event >= 0 && event < IDGEN_NUM_WAIT_EVENTS);
	if (wait_event_infos[event] == 0)
		wait_event_infos[event] = WaitEventExtensionNew(wait_event_names[event]);
	return wait_event_infos[event];
}

#else

uint32
idgen_wait_event_info(IdgenWaitEvent event)
{
	return PG_WAIT_EXTENSION;
}

#endif
