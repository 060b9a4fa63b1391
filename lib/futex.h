/* SPDX-License-Identifier: MIT */
/*
 * futex.h - futex.c: the futex system calls the other files share.
 */
#ifndef BAKERY_FUTEX_H
#define BAKERY_FUTEX_H

#include "private.h"

/* Wake every thread asleep on WORD. */
BAKERY_HIDDEN void bakery__futex_wake_all(uint32_t *word);
/* Wake the thread asleep on WORD the longest (the kernel queues sleepers of
 * one priority in arrival order). */
BAKERY_HIDDEN void bakery__futex_wake_one(uint32_t *word);
/* Sleep while *WORD == VAL, until a wake-up or UNTIL on CLOCK (MONOTONIC
 * or REALTIME), whichever first; spurious returns are the caller's to
 * handle.  0, or the system call's errno (EINTR: a signal handler ran). */
BAKERY_HIDDEN int bakery__futex_wait_until(uint32_t *word, uint32_t val, clockid_t clock,
                                           const struct timespec *until);

/* A full barrier in every running thread of the system
 * (membarrier(MEMBARRIER_CMD_GLOBAL)): 0, or ENOTSUP where the kernel or a
 * seccomp filter refuses it.  The other half of a handshake whose hot side
 * has only a compiler barrier (lockadmin.c, registry.c). */
BAKERY_HIDDEN int bakery__barrier_everywhere(void);

#ifdef BAKERY_TESTING
/* Threads woken so far by this process's bakery__futex_wake_all calls. */
BAKERY_HIDDEN unsigned long bakery__test_futex_woken(void);
#endif

#endif /* BAKERY_FUTEX_H */
