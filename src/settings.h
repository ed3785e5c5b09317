/*-------------------------------------------------------------------------
 *
 * settings.h
 *		Every idgen.* setting: its variable, its default and its bounds are
 *		defined once, in settings.c.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/settings.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_SETTINGS_H
#define IDGEN_SETTINGS_H

#include "datatype/timestamp.h"

#include "idgen_compat.h"

/* Defaults the README quotes. */
#define IDGEN_DEFAULT_EPOCH			"2026-01-01 00:00:00+00"
#define IDGEN_DEFAULT_SHARD_BITS	12
#define IDGEN_DEFAULT_SEQUENCE_BITS	10
#define IDGEN_DEFAULT_MAX_LEAD_MS	1000
#define IDGEN_DEFAULT_MAX_WAIT_MS	10000
/* a source clock a minute ahead is already far off; a wrong ID is years */
#define IDGEN_DEFAULT_MAX_ADVANCE_MS	60000
#define IDGEN_DEFAULT_BACKFILL_COUNTERS	1048576
#define IDGEN_DEFAULT_FENCE_HORIZON_MS	1000
#define IDGEN_DEFAULT_LEASE_DURATION_MS	30000
/* a clock further off than a mint may lead the wall clock is broken */
#define IDGEN_DEFAULT_MAX_CLOCK_OFFSET_MS	1000
/* changing a layout takes planning: warn years ahead (in minutes) */
#define IDGEN_DEFAULT_LAYOUT_END_WARNING_MIN	(5 * 365 * 24 * 60)

/* The layout: fixed at server start (PGC_POSTMASTER). */
extern TimestampTz idgen_epoch_setting;	/* idgen.epoch, parsed */
extern int	idgen_shard_bits_setting;
extern int	idgen_sequence_bits_setting;
extern bool idgen_allow_layout_change;
extern bool idgen_allow_foreign_state;
extern TimestampTz idgen_layout_change_at;	/* DT_NOBEGIN: at the start */

/* The generator's bounds, read on every mint. */
extern IDGEN_HOT_GLOBAL int idgen_max_lead;
extern IDGEN_HOT_GLOBAL int idgen_max_wait;
extern int	idgen_max_advance;
extern int	idgen_backfill_max_shift;	/* ms a backfill may spill */
extern int	idgen_backfill_counters;	/* late milliseconds counted */

/* The fence worker. */
extern int	idgen_fence_horizon;

/* How long before the layout runs out the log warns, in minutes. */
extern int	idgen_layout_end_warning;

/* Shard leases (lease_gate.c, lease_worker.c): off while the registry is empty. */
extern char *idgen_lease_registry;
extern int	idgen_lease_duration;
extern int	idgen_max_clock_offset;

/* The key of public IDs: its file (PGC_SIGHUP), or 1.1's setting. */
extern char *idgen_public_key_file;
extern char *idgen_public_key;

extern void idgen_settings_define(void);
extern void idgen_settings_recheck(void);

#endif							/* IDGEN_SETTINGS_H */
