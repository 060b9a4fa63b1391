/* SPDX-License-Identifier: MIT */
/*
 * testhooks.c - crash points and assertions of the test build
 * (libbakery-test.la, compiled with BAKERY_TESTING).  Not in the installed
 * library.
 *
 * BAKERY_CRASH_AT=name[:n] makes the process SIGKILL itself the n-th time
 * (default 1st) it reaches crash point `name`: a real, unannounced death at
 * an exact step of the protocol.  BAKERY_STOP_AT=name[:n] makes it SIGSTOP
 * itself there instead (a participant descheduled at that step, for as long
 * as the test wants: it goes on at SIGCONT).
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "private.h"

#ifdef BAKERY_TESTING
/* Is this the n-th passage at point NAME that the variable ENV names? */
static bool point_hit(const char *env, const char *name, unsigned long *hits)
{
	const char *want = getenv(env);
	size_t len;
	unsigned long nth = 1;

	if (!want)
		return false;
	len = strcspn(want, ":");
	if (strlen(name) != len || strncmp(want, name, len))
		return false;
	if (want[len] == ':')
		nth = strtoul(want + len + 1, NULL, 10);
	return uatomic_add_return(hits, 1) == nth;
}

void bakery__crash_point(const char *name)
{
	static unsigned long crash_hits, stop_hits;

	if (point_hit("BAKERY_CRASH_AT", name, &crash_hits))
		kill(getpid(), SIGKILL);
	if (point_hit("BAKERY_STOP_AT", name, &stop_hits))
		kill(getpid(), SIGSTOP);
}

void bakery__assert_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "libbakery: assertion failed: %s (%s:%d)\n", what, file, line);
	abort();
}
#endif
