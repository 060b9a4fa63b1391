/* SPDX-License-Identifier: MIT */
/*
 * test-participant.c - a helper of test-cli.sh: a participant of REGION
 * (created if missing) that takes LOCK under the process name NAME (set
 * with prctl(PR_SET_NAME): what `bakery status` reads from /proc), says
 * "held" on stdout, and holds the lock until the file RELEASE exists.
 * Linked with the test build of the library: BAKERY_STOP_AT=lock-create
 * in its environment makes it stop while it creates LOCK, holding the
 * region's lock table.  With PASSES, it first takes and gives up the lock
 * that many times in a row (what biases a biased lock to its slot).
 *
 *   test-participant REGION LOCK NAME RELEASE [PASSES]
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <bakery.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "test-participant: %s: %s\n", what, bakery_strerror(err));
	return 1;
}

int main(int argc, char **argv)
{
	const struct timespec pause = { 0, 20000000L };
	bakery_lock_t *l;
	unsigned long passes;
	bakery_t *b;
	int err;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: test-participant REGION LOCK NAME RELEASE [PASSES]\n");
		return 2;
	}
	passes = argc == 6 ? strtoul(argv[5], NULL, 10) : 0;
	if (prctl(PR_SET_NAME, argv[3]) < 0)
		perror("test-participant: prctl");
	if ((err = bakery_open(argv[1], BAKERY_CREATE, NULL, &b)))
		return fail("open", err);
	if ((err = bakery_lock_open(b, argv[2], BAKERY_ALGO_DEFAULT, &l)))
		return fail("lock_open", err);
	for (unsigned long i = 0; i < passes; i++)
		if ((err = bakery_lock(l)) || (err = bakery_unlock(l)))
			return fail("passes", err);
	if ((err = bakery_lock(l)))
		return fail("lock", err);
	printf("held\n");
	fflush(stdout);
	while (access(argv[4], F_OK) != 0)
		nanosleep(&pause, NULL);
	bakery_unlock(l);
	bakery_lock_close(l);
	bakery_close(b);
	return 0;
}
