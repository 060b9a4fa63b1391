/* SPDX-License-Identifier: MIT */
/*
 * lock.h - lock.c's hidden half, for the layers above it (pathlock.c).
 */
#ifndef BAKERY_LOCK_H
#define BAKERY_LOCK_H

#include "handle.h"

/* Does the calling thread hold L (in either mode)?  bakery_lock_close's
 * test (EBUSY). */
BAKERY_HIDDEN bool bakery__lock_held_by_caller(const struct bakery_lock *l);

#endif /* BAKERY_LOCK_H */
