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
 *   membarrier(2) refused       a biased lock (BAKERY_LOCK_BIASED) is
 *   (EPERM), from the start     neither created (ENOTSUP, and no lock is
 *                               left behind) nor joined (ENOTSUP) by a
 *                               process that cannot revoke its bias; an
 *                               ordinary lock of the region opens
 *   membarrier(2) refused       a thread whose revocation of another
 *   after the lock was opened   slot's bias is refused its membarrier gets
 *                               ENOTSUP from bakery_lock, without the lock;
 *                               the lock then works for the others
 *
 * Skips (77) where no seccomp filter can be installed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

#define NOTHING_REFUSED (-1L)

/* In a child: refuse NR with EPERM (unless NOTHING_REFUSED), run CHECK;
 * its verdict (SKIP where no filter can be had). */
static int refused(long nr, int (*check)(const char *arg), const char *arg)
{
	pid_t child;
	int st;

	fflush(NULL);
	child = fork();
	if (child == 0) {
		int err = nr == NOTHING_REFUSED ? 0 : seccomp_refuse(nr, EPERM);

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

/* ------------------------------------------------------- biased locks -- */

#define BIAS_PASSAGES 200       /* enough for a grant (after 64 lone ones) */

static int biased_lock_open(bakery_t *b, const char *name, bakery_lock_t **l)
{
	const struct bakery_lock_config cfg = { .flags = BAKERY_LOCK_BIASED };

	return bakery_lock_open_config(b, name, &cfg, l);
}

/* In a child without a filter: REGION with the biased lock "biased". */
static int make_biased(const char *region)
{
	bakery_lock_t *l;
	bakery_t *b;
	int err = bakery_open(region, BAKERY_CREATE, NULL, &b);

	if (!err)
		err = biased_lock_open(b, "biased", &l);
	if (err) {
		fprintf(stderr, "refused-calls: making a biased lock: %s\n", bakery_strerror(err));
		return 1;
	}
	bakery_lock_close(l);
	bakery_close(b);
	return 0;
}

/* membarrier refused before our first bakery_open: no biased lock. */
static int biased_without_membarrier(const char *region)
{
	bakery_lock_t *l = NULL;
	bakery_t *b = NULL;
	int err = bakery_open(region, 0, NULL, &b);

	if (err) {
		fprintf(stderr, "refused-calls: bakery_open: %s\n", bakery_strerror(err));
		return 1;
	}
	if ((err = biased_lock_open(b, "new-biased", &l)) != ENOTSUP) {
		fprintf(stderr, "refused-calls: membarrier refused: creating a biased lock: %s, "
		        "expected ENOTSUP\n", bakery_strerror(err));
		return 1;
	}
	if ((err = bakery_lock_lookup(b, "new-biased", BAKERY_ALGO_DEFAULT, &l)) != ENOENT) {
		fprintf(stderr, "refused-calls: membarrier refused: the refused biased lock was "
		        "made all the same (%s)\n", bakery_strerror(err));
		return 1;
	}
	if ((err = bakery_lock_open(b, "biased", BAKERY_ALGO_DEFAULT, &l)) != ENOTSUP) {
		fprintf(stderr, "refused-calls: membarrier refused: joining a biased lock: %s, "
		        "expected ENOTSUP\n", bakery_strerror(err));
		return 1;
	}
	if ((err = bakery_lock_open(b, "plain", BAKERY_ALGO_DEFAULT, &l)) ||
	    (err = bakery_lock(l)) || (err = bakery_unlock(l))) {
		fprintf(stderr, "refused-calls: membarrier refused: an ordinary lock: %s\n",
		        bakery_strerror(err));
		return 1;
	}
	bakery_lock_close(l);
	bakery_close(b);
	return 0;
}

/* The thread that takes the bias, and keeps its slot until told. */
struct bias_owner {
	bakery_lock_t *l;
	int err;
	int biased;
	bakery_t *b;
	struct tk_gate done, release;
};

static void *bias_owner_main(void *arg)
{
	struct bias_owner *o = arg;
	struct bakery_lock_info li;
	unsigned index;

	for (unsigned i = 0; i < BIAS_PASSAGES && !o->err; i++)
		if (!(o->err = bakery_lock(o->l)))
			o->err = bakery_unlock(o->l);
	if (!o->err && !bakery_lock_index(o->l, &index) && !bakery_lock_info(o->b, index, &li))
		o->biased = li.bias_slot >= 0 && li.bias_slot == tk_self_slot(o->b);
	tk_gate_open(&o->done);
	tk_gate_wait(&o->release, 60);
	return NULL;
}

/* Registered at open, then membarrier refused to this thread: another
 * slot's bias cannot be revoked. */
static int revocation_refused(const char *region)
{
	struct bias_owner o = { 0 };
	bakery_lock_t *plain;
	pthread_t t;
	int err, status = 1;

	if ((err = bakery_open(region, 0, NULL, &o.b)) ||
	    (err = bakery_lock_open(o.b, "biased", BAKERY_ALGO_DEFAULT, &o.l)) ||
	    (err = bakery_lock_open(o.b, "plain", BAKERY_ALGO_DEFAULT, &plain))) {
		fprintf(stderr, "refused-calls: opening: %s\n", bakery_strerror(err));
		return 1;
	}
	/* our own slot first (a passage in another lock), then the owner's */
	if ((err = bakery_lock(plain)) || (err = bakery_unlock(plain)))
		return 1;
	tk_gate_init(&o.done);
	tk_gate_init(&o.release);
	if (pthread_create(&t, NULL, bias_owner_main, &o))
		return 1;
	tk_gate_wait(&o.done, 60);
	if (o.err || !o.biased) {
		fprintf(stderr, "refused-calls: the owner thread: %s, biased %d\n",
		        bakery_strerror(o.err), o.biased);
	} else if ((err = seccomp_refuse(SYS_membarrier, EPERM))) {
		printf("SKIP: no seccomp filter here: %s\n", strerror(err));
		status = SKIP;
	} else if ((err = bakery_trylock(o.l)) != ENOTSUP) {
		fprintf(stderr, "refused-calls: membarrier refused after open: a revoking "
		        "trylock: %s, expected ENOTSUP\n", bakery_strerror(err));
	} else if ((err = bakery_lock(o.l)) != ENOTSUP) {
		fprintf(stderr, "refused-calls: membarrier refused after open: a revoking "
		        "lock: %s, expected ENOTSUP\n", bakery_strerror(err));
	} else {
		status = 0;
	}
	tk_gate_open(&o.release);
	pthread_join(t, NULL);
	return status;
}

/* After the refusals: the lock works for a process that can revoke. */
static int biased_still_works(const char *region)
{
	bakery_lock_t *l;
	bakery_t *b;
	int err;

	if ((err = bakery_open(region, 0, NULL, &b)) ||
	    (err = bakery_lock_open(b, "biased", BAKERY_ALGO_DEFAULT, &l)) ||
	    (err = bakery_lock(l)) || (err = bakery_unlock(l))) {
		fprintf(stderr, "refused-calls: the biased lock after the refusals: %s\n",
		        bakery_strerror(err));
		return 1;
	}
	bakery_lock_close(l);
	bakery_close(b);
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

	/* biased locks; this process never opens a region, so that each child
	 * registers (or is refused) for itself */
	tk_name(region, sizeof(region), "nomembarrier");
	if (refused(NOTHING_REFUSED, make_biased, region) == 0) {
		status |= refused(SYS_membarrier, biased_without_membarrier, region);
		r = refused(NOTHING_REFUSED, revocation_refused, region);
		status |= r == SKIP ? 0 : r;
		status |= refused(NOTHING_REFUSED, biased_still_works, region);
	} else {
		status = 1;
	}
	bakery_unlink(region);

	if (status == 0)
		printf("refused-calls: flock, statx and membarrier refused: documented errors\n");
	return status ? 1 : 0;
}
