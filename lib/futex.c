/* SPDX-License-Identifier: MIT */
/*
 * futex.c - the futex system calls the other files share: waking every
 * sleeper on a word (the test build counts the threads woken).  The lowest
 * layer with token.c's words above it.
 */
#include "config.h"

#include <limits.h>
#include <linux/futex.h>
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

void bakery__futex_wake_all(uint32_t *word)
{
	long n = syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);

#ifdef BAKERY_TESTING
	if (n > 0)
		uatomic_add(&woken, (unsigned long)n);
#else
	(void)n;
#endif
}
