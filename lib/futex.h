/* SPDX-License-Identifier: MIT */
/*
 * futex.h - futex.c: the futex system calls the other files share.
 */
#ifndef BAKERY_FUTEX_H
#define BAKERY_FUTEX_H

#include "private.h"

/* Wake every thread asleep on WORD. */
BAKERY_HIDDEN void bakery__futex_wake_all(uint32_t *word);

#endif /* BAKERY_FUTEX_H */
