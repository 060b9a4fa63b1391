/* SPDX-License-Identifier: MIT */
/*
 * futex.c - the futex system calls the other files share: waking every
 * sleeper on a word (the test build counts the threads woken); and the
 * system-wide barrier (membarrier) of two handshakes.  The lowest
 * layer with token.c's words above it.
 */
#include "config.h"

#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "futex.h"

#ifdef BAKERY_TESTING
/* Threads this process's FUTEX_WAKEs woke (the kernel's count). */
static unsigned long woken;

unsigned long bakery__test_futex_woken(void)
{
	return uatomic_read(&woken);
}
#endif

static void futex_wake(uint32_t *word, int nr)
{
	long n = syscall(SYS_futex, word, FUTEX_WAKE, nr, NULL, NULL, 0);

#ifdef BAKERY_TESTING
	if (n > 0)
		uatomic_add(&woken, (unsigned long)n);
#else
	(void)n;
#endif
}

void bakery__futex_wake_all(uint32_t *word)
{
	futex_wake(word, INT_MAX);
}

void bakery__futex_wake_one(uint32_t *word)
{
	futex_wake(word, 1);
}

int bakery__futex_wait_until(uint32_t *word, uint32_t val, clockid_t clock,
                             const struct timespec *until)
{
	/* FUTEX_WAIT_BITSET takes an absolute time on either clock */
	return syscall(SYS_futex, word,
	               FUTEX_WAIT_BITSET | (clock == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0),
	               val, until, NULL, FUTEX_BITSET_MATCH_ANY) < 0 ? errno : 0;
}

int bakery__barrier_everywhere(void)
{
	return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0 ? 0 : ENOTSUP;
}
