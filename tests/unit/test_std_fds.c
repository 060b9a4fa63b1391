/* SPDX-License-Identifier: MIT */
/*
 * test_std_fds.c - a program started with its standard streams closed
 * (`cmd <&- >&- 2>&-`, as cron wrappers and daemons leave them) does not
 * get a region on descriptor 0, 1 or 2: the library's descriptors are
 * never below 3, and close-on-exec.  Otherwise the program's next message
 * to stderr (or stdout) is written over the region's header, and every
 * later open of the region finds it corrupted.
 *
 *   a child with 0, 1 and 2 closed creates one region and opens another
 *   (that exists), takes a lock in each, then writes a message to 0, 1
 *   and 2              both regions open again, their headers intact;
 *                      none of 0-2 was taken; every descriptor the child
 *                      has is close-on-exec
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

struct names {
	char created[TK_NAME_SIZE];
	char existing[TK_NAME_SIZE];
};

static int lock_once(bakery_t *b)
{
	bakery_lock_t *l;
	int err = bakery_lock_open(b, "std", BAKERY_ALGO_DEFAULT, &l);

	if (err)
		return err;
	if (!(err = bakery_lock(l)))
		err = bakery_unlock(l);
	bakery_lock_close(l);
	return err;
}

/* Child: with 0-2 closed (and nothing above them open), open both regions
 * and use them, then write to 0-2 as a program printing messages would.
 * 0, or the step that went wrong. */
static int closed_streams(void *arg)
{
	static const char junk[] = "bakery: run /jobs nightly: lock is busy (--nonblock)\n";
	const struct names *n = arg;
	bakery_t *a, *b;

	for (int fd = 0; fd < 1024; fd++)
		close(fd);
	if (bakery_open(n->created, BAKERY_CREATE | BAKERY_EXCL, NULL, &a))
		return 1;
	if (bakery_open(n->existing, 0, NULL, &b))
		return 2;
	if (lock_once(a) || lock_once(b))
		return 3;
	/* what the program prints next: none of it may land in a region */
	for (int fd = 0; fd <= 2; fd++)
		if (write(fd, junk, sizeof(junk) - 1) < 0 && errno != EBADF)
			return 8;
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			return 4 + fd;          /* the library took 0, 1 or 2 */
	for (int fd = 3; fd < 1024; fd++) {
		int flags = fcntl(fd, F_GETFD);

		if (flags != -1 && !(flags & FD_CLOEXEC))
			return 7;               /* would leak into exec'd programs */
	}
	bakery_close(a);
	bakery_close(b);
	return 0;
}

START_TEST(closed_standard_streams)
{
	struct names *n = tk_shared(sizeof(*n));
	bakery_t *b = unit_region(n->existing, "stdexist", 4, 4);
	bakery_t *again;

	tk_name(n->created, sizeof(n->created), "stdnew");
	ck_assert_int_eq(tk_reap(tk_fork(closed_streams, n), 10), 0);
	ck_assert_int_eq(bakery_open(n->created, 0, NULL, &again), 0);
	ck_assert_int_eq(lock_once(again), 0);
	ck_assert_int_eq(bakery_close(again), 0);
	ck_assert_int_eq(bakery_open(n->existing, 0, NULL, &again), 0);
	ck_assert_int_eq(bakery_close(again), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(n->created), 0);
}
END_TEST

static Suite *std_fds_suite(void)
{
	Suite *s = suite_create("std-fds");
	TCase *tc = tcase_create("closed");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, closed_standard_streams);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(std_fds_suite());
}
