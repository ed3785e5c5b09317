/*-------------------------------------------------------------------------
 *
 * wait_event.h
 *		The wait events idgen's sleeps report in pg_stat_activity.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/wait_event.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_WAIT_EVENT_H
#define IDGEN_WAIT_EVENT_H

typedef enum IdgenWaitEvent
{
	IDGEN_WAIT_WALL_CLOCK,		/* a mint waits for the wall clock */
	IDGEN_WAIT_FENCE,			/* a mint waits for the fence to move */
	IDGEN_WAIT_FENCE_WORKER_MAIN,	/* the fence worker between moves */
	IDGEN_WAIT_LEASE,			/* a mint waits for a shard's lease */
	IDGEN_WAIT_LEASE_WORKER_MAIN,	/* the lease worker between renewals */
	IDGEN_WAIT_LEASE_REGISTRY,	/* the lease worker waits for the registry */
	IDGEN_WAIT_STAMPS,			/* a mint waits for every database's stamp */
	IDGEN_NUM_WAIT_EVENTS
} IdgenWaitEvent;

extern uint32 idgen_wait_event_info(IdgenWaitEvent event);

#endif							/* IDGEN_WAIT_EVENT_H */
