/* SPDX-License-Identifier: MIT */
/*
 * futex.h - futex.c: the futex system calls the other files share.
 */
#ifndef BAKERY_FUTEX_H
#define BAKERY_FUTEX_H

#include "private.h"

/* Wake every thread asleep on WORD. */
BAKERY_HIDDEN void bakery__futex_wake_all(uint32_t *word);

#ifdef BAKERY_TESTING
/* Threads woken so far by this process's bakery__futex_wake_all calls. */
BAKERY_HIDDEN unsigned long bakery__test_futex_woken(void);
#endif

#endif /* BAKERY_FUTEX_H */
