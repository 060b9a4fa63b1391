/* SPDX-License-Identifier: MIT */
/*
 * fork-robust.c - a child forked where set_robust_list(2) is refused (a
 * seccomp profile that denies it: the kernel drops the robust list at
 * fork and the C library's registration in the child fails) has no robust
 * list, so the kernel could never mark its death: its lock calls must
 * answer ENOTSUP, as bakery_open does in a process that never had a list,
 * and never take a lock whose holder's death would go unseen.
 *
 * The parent opens the region and locks once (the library has looked at
 * its list by then), installs the filter, forks.  The child locks: ENOTSUP
 * passes; if it got the lock it dies holding it (SIGKILL), and the parent's
 * lock then times out, since nobody can prove that death: the hang this
 * test was written for.  Skips (77) where no seccomp filter can be
 * installed.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bakery.h"
#include "seccomp-filter.h"
#include "../common/tk.h"

#define SKIP 77
#define PARENT_WAIT_S 10

/* The child: 0 for ENOTSUP; dies holding the lock if it got it. */
static int child_locks(bakery_lock_t *l)
{
	int err = bakery_lock(l);

	if (err == 0 || err == EOWNERDEAD)
		raise(SIGKILL);
	if (err != ENOTSUP)
		fprintf(stderr, "fork-robust: the child's lock: %s, expected ENOTSUP\n",
		        bakery_strerror(err));
	return err == ENOTSUP ? 0 : 2;
}

static int parent_locks_within(bakery_lock_t *l, time_t seconds)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += seconds;
	return bakery_clocklock(l, CLOCK_MONOTONIC, &until);
}

int main(void)
{
	char name[TK_NAME_SIZE];
	bakery_t *b;
	bakery_lock_t *l;
	pid_t child;
	int err, st, status = 0;

	tk_name(name, sizeof(name), "forkrobust");
	if ((err = bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, NULL, &b)) ||
	    (err = bakery_lock_open(b, "l", BAKERY_ALGO_DEFAULT, &l)) || (err = bakery_lock(l)) ||
	    (err = bakery_unlock(l))) {
		fprintf(stderr, "fork-robust: setup: %s\n", bakery_strerror(err));
		return 99;
	}
	if ((err = seccomp_refuse(SYS_set_robust_list, EPERM))) {
		printf("SKIP: no seccomp filter here: %s\n", strerror(err));
		bakery_unlink(name);
		return SKIP;
	}
	fflush(NULL);
	child = fork();
	if (child == 0)
		_exit(child_locks(l));
	if (child < 0 || waitpid(child, &st, 0) != child) {
		perror("fork-robust: fork");
		return 99;
	}
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "fork-robust: a child without a robust list took the lock\n");
		status = 1;
	} else if (WEXITSTATUS(st) != 0) {
		status = 1;
	}
	/* whatever the child did, the lock is to be had */
	err = parent_locks_within(l, PARENT_WAIT_S);
	if (err != 0) {
		fprintf(stderr, "fork-robust: the parent's lock after the child: %s\n",
		        bakery_strerror(err));
		status = 1;
	} else {
		bakery_unlock(l);
	}
	bakery_lock_close(l);
	bakery_close(b);
	bakery_unlink(name);
	if (status == 0)
		printf("fork-robust: a child without a robust list is refused (ENOTSUP)\n");
	return status;
}
