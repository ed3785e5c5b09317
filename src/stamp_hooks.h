/*-------------------------------------------------------------------------
 *
 * stamp_hooks.h
 *		The statements that write a database's stamp of the layout history.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/stamp_hooks.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_STAMP_HOOKS_H
#define IDGEN_STAMP_HOOKS_H

extern void idgen_stamp_hook_install(void);
extern void idgen_stamp_name_shard(int32 shard);

#endif							/* IDGEN_STAMP_HOOKS_H */
