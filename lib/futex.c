/* SPDX-License-Identifier: MIT */
/*
 * futex.c - the futex system calls the other files share: waking every
 * sleeper on a word.  The lowest layer with token.c's words above it.
 */
#include "config.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "futex.h"

void bakery__futex_wake_all(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}
