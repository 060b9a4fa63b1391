/* SPDX-License-Identifier: MIT */
/* hello.c - the smallest libbakery program: every process that runs it
 * takes turns, first come first served, on one named lock. */
#include <bakery.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *region = argc > 1 ? argv[1] : "/hello-bakery";
	bakery_t *b;
	bakery_lock_t *l;
	int err;

	if ((err = bakery_open(region, BAKERY_CREATE, NULL, &b)) ||
	    (err = bakery_lock_open(b, "greeting", BAKERY_ALGO_DEFAULT, &l)))
		goto fail;
	err = bakery_lock(l);
	if (err == EOWNERDEAD)          /* the last holder died inside: repair, then */
		err = bakery_consistent(l);
	if (err)
		goto fail;
	printf("pid %d: my turn\n", (int)getpid());
	fflush(stdout);
	sleep(1);                       /* meanwhile the others queue up */
	printf("pid %d: done\n", (int)getpid());
	fflush(stdout);                 /* inside the lock, so the lines keep its order */
	bakery_unlock(l);
	bakery_lock_close(l);
	bakery_close(b);
	return 0;
fail:
	fprintf(stderr, "hello: %s\n", bakery_strerror(err));
	return 1;
}
