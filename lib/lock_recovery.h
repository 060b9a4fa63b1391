/* SPDX-License-Identifier: MIT */
/*
 * lock_recovery.h - lock_recovery.c: the per-lock half of recovery, the
 * struct recovery_ops bakery_open registers in each handle.
 */
#ifndef BAKERY_LOCK_RECOVERY_H
#define BAKERY_LOCK_RECOVERY_H

#include "registry.h"

BAKERY_HIDDEN extern const struct recovery_ops bakery__lock_recovery;

#endif /* BAKERY_LOCK_RECOVERY_H */
