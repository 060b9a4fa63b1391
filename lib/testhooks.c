/* SPDX-License-Identifier: MIT */
/*
 * testhooks.c - crash points and assertions of the test build
 * (libbakery-test.la, compiled with BAKERY_TESTING).  Not in the installed
 * library.
 *
 * BAKERY_CRASH_AT=name[:n] makes the process SIGKILL itself the n-th time
 * (default 1st) it reaches crash point `name`: a real, unannounced death at
 * an exact step of the protocol.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "private.h"

#ifdef BAKERY_TESTING
void bakery__crash_point(const char *name)
{
	static unsigned long hits;
	const char *want = getenv("BAKERY_CRASH_AT");
	size_t len;
	unsigned long nth = 1;

	if (!want)
		return;
	len = strcspn(want, ":");
	if (strlen(name) != len || strncmp(want, name, len))
		return;
	if (want[len] == ':')
		nth = strtoul(want + len + 1, NULL, 10);
	if (uatomic_add_return(&hits, 1) == nth)
		kill(getpid(), SIGKILL);
}

void bakery__assert_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "libbakery: assertion failed: %s (%s:%d)\n", what, file, line);
	abort();
}
#endif
