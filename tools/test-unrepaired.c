/* SPDX-License-Identifier: MIT */
/*
 * test-unrepaired.c - a helper of test-cli.sh: acquire LOCK of REGION,
 * which must be owner-died, and unlock it without bakery_consistent(), as
 * a library user that ignores EOWNERDEAD would: the lock is then not
 * recoverable, the state `bakery reset` is for.  Exit 0 if all went so.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include <bakery.h>

int main(int argc, char **argv)
{
	bakery_lock_t *l;
	bakery_t *b;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: test-unrepaired REGION LOCK\n");
		return 2;
	}
	if ((err = bakery_open(argv[1], 0, NULL, &b)) ||
	    (err = bakery_lock_open(b, argv[2], BAKERY_ALGO_DEFAULT, &l))) {
		fprintf(stderr, "test-unrepaired: %s\n", bakery_strerror(err));
		return 1;
	}
	if ((err = bakery_lock(l)) != EOWNERDEAD) {
		fprintf(stderr, "test-unrepaired: lock: %s, not EOWNERDEAD\n", bakery_strerror(err));
		return 1;
	}
	if ((err = bakery_unlock(l))) {
		fprintf(stderr, "test-unrepaired: unlock: %s\n", bakery_strerror(err));
		return 1;
	}
	bakery_lock_close(l);
	bakery_close(b);
	return 0;
}
