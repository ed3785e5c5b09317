/*-------------------------------------------------------------------------
 *
 * history_recovery.h
 *		The layout history's durability: what fence.c calls, under its
 *		lock, to recover, extend and replay the history.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/history_recovery.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_HISTORY_RECOVERY_H
#define IDGEN_HISTORY_RECOVERY_H

#include "layout_history.h"

extern void idgen_history_recover(IdgenLayoutHistory *history,
								  const IdgenLayoutHistory *from_state,
								  bool state_has_history, uint64 state_system,
								  uint64 system_identifier);
extern void idgen_history_check_change_at(const IdgenLayoutHistory *history,
										  int64 start_ms);
extern const IdgenLayoutVersion *idgen_history_append_configured(IdgenLayoutHistory *history,
																 int64 generator_ms);
extern void idgen_history_log_added(const IdgenLayoutHistory *history);
extern bool idgen_history_take_replayed(const IdgenLayoutHistory *replayed);

#endif							/* IDGEN_HISTORY_RECOVERY_H */
