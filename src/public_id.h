/*-------------------------------------------------------------------------
 *
 * public_id.h
 *		The key of idgen_to_public() and idgen_from_public(): its settings' hooks.
 *
 * Copyright (c) 2026, The idgen Authors
 *
 * IDENTIFICATION
 *		src/public_id.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_PUBLIC_ID_H
#define IDGEN_PUBLIC_ID_H

#include "utils/guc.h"

extern bool idgen_public_key_check_hook(char **newval, void **extra,
										GucSource source);
extern void idgen_public_key_assign_hook(const char *newval, void *extra);
extern void idgen_public_key_warn(void);
extern bool idgen_public_key_file_check_hook(char **newval, void **extra,
											 GucSource source);
extern void idgen_public_key_file_assign_hook(const char *newval, void *extra);

#endif							/* IDGEN_PUBLIC_ID_H */
