/* SPDX-License-Identifier: MIT */
/*
 * path.c - bakery-pathbench: what a lock per file costs, uncontended, with
 * path locks (bakery_path_*) and with flock(2) as file-lock packages use
 * it.  One process, one thread; every figure is the best of many rounds
 * of ROUND holds each, the variants taking turns, so that a busy machine
 * costs them all alike.
 *
 *   path-held       bakery_path_lock + unlock on a handle kept open
 *   lock-held       bakery_lock + unlock on the same lock, opened as an
 *                   ordinary lock (what the path layer adds: the line above
 *                   less this one)
 *   path-per-hold   bakery_path_open + lock + unlock + close each time, on
 *                   one file (its handle kept by the process's table)
 *   flock-held      flock(LOCK_EX) + flock(LOCK_UN) on a descriptor kept
 *   flock-per-hold  open(O_RDWR | O_CREAT) + flock + flock + close each
 *                   time: what a file-lock package does per hold
 *   stat            one statx(2) of the file, for reference (a path lock
 *                   makes one per open)
 *   path-distinct   bakery_path_open + lock + unlock + close of DISTINCT
 *                   files, each new to the lock table (which fills and is
 *                   reclaimed on the way)
 *   flock-distinct  open + flock + flock + close of the same files
 *
 * Usage: bakery-pathbench [DIR] (default: TMPDIR or /tmp).  The path
 * locks go to a region of their own, removed at the end.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bakery.h"

#define ROUND 200
#define ROUNDS 300
#define DISTINCT 10000

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bakery-pathbench: %s: %s\n", what, bakery_strerror(err));
	exit(1);
}

struct ctx {
	const char *file;
	bakery_t *b;
	bakery_path_t *p;
	bakery_lock_t *l;
	int fd;
};

static void path_held(struct ctx *c)
{
	bakery_path_lock(c->p);
	bakery_path_unlock(c->p);
}

static void lock_held(struct ctx *c)
{
	bakery_lock(c->l);
	bakery_unlock(c->l);
}

static void path_per_hold(struct ctx *c)
{
	bakery_path_t *p;
	int err = bakery_path_open(c->file, 0, &p);

	if (err)
		die("bakery_path_open", err);
	bakery_path_lock(p);
	bakery_path_unlock(p);
	bakery_path_close(p);
}

static void flock_held(struct ctx *c)
{
	flock(c->fd, LOCK_EX);
	flock(c->fd, LOCK_UN);
}

static void flock_per_hold(struct ctx *c)
{
	int fd = open(c->file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	flock(fd, LOCK_EX);
	flock(fd, LOCK_UN);
	close(fd);
}

static void stat_only(struct ctx *c)
{
	struct statx sx;

	statx(AT_FDCWD, c->file, 0, STATX_INO | STATX_BTIME, &sx);
}

static const struct variant {
	const char *name;
	void (*hold)(struct ctx *c);
} variants[] = {
	{ "path-held", path_held },
	{ "lock-held", lock_held },
	{ "path-per-hold", path_per_hold },
	{ "flock-held", flock_held },
	{ "flock-per-hold", flock_per_hold },
	{ "stat", stat_only },
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

static void distinct_name(char *buf, size_t size, const char *dir, unsigned i)
{
	if (snprintf(buf, size, "%s/d%u", dir, i) >= (int)size)
		die(dir, ENAMETOOLONG);
}

/* DISTINCT files created in DIR (not timed), then each locked once with a
 * path lock (every one new to the lock table, which fills and is
 * reclaimed on the way), then each with flock. */
static void distinct_files(const char *dir, double *path_ns, double *flock_ns)
{
	char name[4096];
	double t;

	for (unsigned i = 0; i < DISTINCT; i++) {
		distinct_name(name, sizeof(name), dir, i);
		close(open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0644));
	}
	t = now_ns();
	for (unsigned i = 0; i < DISTINCT; i++) {
		bakery_path_t *p;
		int err;

		distinct_name(name, sizeof(name), dir, i);
		if ((err = bakery_path_open(name, 0, &p)))
			die(name, err);
		bakery_path_lock(p);
		bakery_path_unlock(p);
		bakery_path_close(p);
	}
	*path_ns = (now_ns() - t) / DISTINCT;
	t = now_ns();
	for (unsigned i = 0; i < DISTINCT; i++) {
		int fd;

		distinct_name(name, sizeof(name), dir, i);
		fd = open(name, O_RDWR | O_CLOEXEC);
		flock(fd, LOCK_EX);
		flock(fd, LOCK_UN);
		close(fd);
	}
	*flock_ns = (now_ns() - t) / DISTINCT;
	for (unsigned i = 0; i < DISTINCT; i++) {
		distinct_name(name, sizeof(name), dir, i);
		unlink(name);
	}
}

static void setup(struct ctx *c)
{
	struct bakery_path_info info;
	int err;

	if ((c->fd = open(c->file, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
		die(c->file, errno);
	if ((err = bakery_path_open(c->file, 0, &c->p)) || (err = bakery_path_info(c->p, &info)))
		die("bakery_path_open", err);
	if ((err = bakery_open(info.region, 0, NULL, &c->b)) ||
	    (err = bakery_lock_open(c->b, info.lock, BAKERY_ALGO_DEFAULT, &c->l)))
		die("bakery_lock_open", err);
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096], file[4096], region[64];
	double best[NVARIANTS], path_ns, flock_ns;
	struct ctx c;

	snprintf(dir, sizeof(dir), "%s/bakery-pathbench.XXXXXX",
	         argc > 1 ? argv[1] : tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		die(dir, errno);
	if (snprintf(file, sizeof(file), "%s/lock", dir) >= (int)sizeof(file))
		die(dir, ENAMETOOLONG);
	snprintf(region, sizeof(region), "/bakery-pathbench-%d", (int)getpid());
	setenv(BAKERY_PATH_REGION_ENV, region, 1);
	c.file = file;
	setup(&c);
	for (unsigned v = 0; v < NVARIANTS; v++)
		best[v] = 1e18;
	for (unsigned r = 0; r < ROUNDS; r++)
		for (unsigned v = 0; v < NVARIANTS; v++) {
			double t = now_ns();

			for (unsigned i = 0; i < ROUND; i++)
				variants[v].hold(&c);
			t = (now_ns() - t) / ROUND;
			if (t < best[v])
				best[v] = t;
		}
	printf("%-16s %10s\n", "variant", "ns/hold");
	for (unsigned v = 0; v < NVARIANTS; v++)
		printf("%-16s %10.0f\n", variants[v].name, best[v]);
	distinct_files(dir, &path_ns, &flock_ns);
	printf("%-16s %10.0f   (%u distinct files, each new to the lock table)\n",
	       "path-distinct", path_ns, DISTINCT);
	printf("%-16s %10.0f   (the same files)\n", "flock-distinct", flock_ns);
	bakery_lock_close(c.l);
	bakery_close(c.b);
	bakery_path_close(c.p);
	close(c.fd);
	unlink(file);
	rmdir(dir);
	bakery_unlink(region);
	return 0;
}
