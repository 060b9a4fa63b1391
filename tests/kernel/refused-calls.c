/* SPDX-License-Identifier: MIT */
/*
 * refused-calls.c - system calls a seccomp profile may refuse, other than
 * those of the matrix, answered with a documented error rather than a
 * misleading one.  Each case runs in a child that installs its filter:
 *
 *   flock(2) refused (EPERM)    bakery_open(CREATE) fails with EPERM, at
 *                               once, and leaves no temporary object (it
 *                               answered EAGAIN after trying every
 *                               temporary name, as if they were all taken)
 *   statx(2) refused (EPERM)    bakery_path_open fails with ENOTSUP (statx
 *                               has no EPERM of its own: EPERM read as
 *                               "not the holder, another user's region")
 *
 * Skips (77) where no seccomp filter can be installed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bakery.h"
#include "seccomp-filter.h"
#include "../common/tk.h"

#define SKIP 77

/* Objects in /dev/shm whose names start with NAME (without its '/'). */
static unsigned objects_named(const char *name)
{
	struct dirent *e;
	unsigned n = 0;
	DIR *d = opendir("/dev/shm");

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += strncmp(e->d_name, name + 1, strlen(name + 1)) == 0;
	closedir(d);
	return n;
}

/* In a child: refuse NR with EPERM, run CHECK; its verdict (SKIP where no
 * filter can be had). */
static int refused(long nr, int (*check)(const char *arg), const char *arg)
{
	pid_t child;
	int st;

	fflush(NULL);
	child = fork();
	if (child == 0) {
		int err = seccomp_refuse(nr, EPERM);

		if (err) {
			printf("SKIP: no seccomp filter here: %s\n", strerror(err));
			_exit(SKIP);
		}
		_exit(check(arg));
	}
	if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st))
		return 1;
	return WEXITSTATUS(st);
}

static int open_without_flock(const char *name)
{
	bakery_t *b = NULL;
	int err = bakery_open(name, BAKERY_CREATE, NULL, &b);

	if (err != EPERM) {
		fprintf(stderr, "refused-calls: flock refused: bakery_open: %s, expected EPERM\n",
		        bakery_strerror(err));
		return 1;
	}
	if (objects_named(name)) {
		fprintf(stderr, "refused-calls: flock refused: %u objects left under %s\n",
		        objects_named(name), name);
		return 1;
	}
	return 0;
}

static int path_without_statx(const char *path)
{
	bakery_path_t *p = NULL;
	int err = bakery_path_open(path, BAKERY_CREATE, &p);

	if (err != ENOTSUP) {
		fprintf(stderr, "refused-calls: statx refused: bakery_path_open: %s, expected "
		        "ENOTSUP\n", bakery_strerror(err));
		return 1;
	}
	return 0;
}

int main(void)
{
	char name[TK_NAME_SIZE], region[TK_NAME_SIZE], path[64];
	int r, status = 0;

	tk_name(name, sizeof(name), "noflock");
	r = refused(SYS_flock, open_without_flock, name);
	if (r == SKIP)
		return SKIP;
	status |= r;

	/* the path locks of this test in a region of its own */
	tk_name(region, sizeof(region), "nostatx");
	setenv(BAKERY_PATH_REGION_ENV, region, 1);
	snprintf(path, sizeof(path), "/tmp/bakery-nostatx.%d", (int)getpid());
	status |= refused(SYS_statx, path_without_statx, path);
	unlink(path);
	bakery_unlink(region);

	if (status == 0)
		printf("refused-calls: flock and statx refused: documented errors\n");
	return status ? 1 : 0;
}
