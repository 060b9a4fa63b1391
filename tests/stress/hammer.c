/*
 * hammer.c - one participant of the multi-process stress tests.
 *
 *   bakery-hammer REGION LOCK ALGO ITERATIONS [MODE]
 *
 * Takes LOCK of REGION ITERATIONS times (MODE: "lock" (default), "try":
 * bakery_trylock, retried; "timed": bakery_timedlock with 0-2 ms deadlines,
 * retried; "mixed": all three) and, inside the critical section, checks
 * mutual exclusion independently of the lock: a separate shm object
 * REGION-occ holds an occupancy word each holder swaps its pid into on entry
 * and 0 out of on exit (any other value seen = two holders at once), and a
 * plain counter incremented with a read-pause-write that loses updates when
 * two holders overlap.  Prints "acquired N owner_dead N violations N" and
 * exits 0, or 2 on a library error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#include "bakery.h"
#include "occupancy.h"

static int acquire(bakery_lock_t *l, const char *mode, unsigned i)
{
	int err;

	if (!strcmp(mode, "mixed"))
		mode = i % 3 == 0 ? "lock" : i % 3 == 1 ? "try" : "timed";
	if (!strcmp(mode, "lock"))
		return bakery_lock(l);
	do {
		if (!strcmp(mode, "try")) {
			err = bakery_trylock(l);
		} else {
			struct timespec t;
			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_nsec += (long)(rand() % 2000000);
			if (t.tv_nsec >= 1000000000L) {
				t.tv_nsec -= 1000000000L;
				t.tv_sec++;
			}
			err = bakery_timedlock(l, &t);
		}
		if (err == EBUSY)
			sched_yield();   /* a FIFO lock: let the ticket ahead of us run */
	} while (err == EBUSY || err == ETIMEDOUT);
	return err;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 5 ? argv[5] : "lock";
	struct occupancy *occ;
	enum bakery_algo algo;
	bakery_t *b;
	bakery_lock_t *l;
	unsigned long n, owner_dead = 0;
	int err;

	if (argc < 5 || bakery_algo_parse(argv[3], &algo)) {
		fprintf(stderr, "usage: %s REGION LOCK ALGO ITERATIONS [lock|try|timed|mixed]\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[4], NULL, 10);
	srand((unsigned)getpid());
	occ = occupancy_map(argv[1]);
	if (!occ)
		return 2;
	err = bakery_open(argv[1], BAKERY_CREATE, NULL, &b);
	if (!err)
		err = bakery_lock_open(b, argv[2], algo, &l);
	if (err) {
		fprintf(stderr, "hammer: %s\n", bakery_strerror(err));
		return 2;
	}
	for (unsigned long i = 0; i < n; i++) {
		err = acquire(l, mode, (unsigned)i);
		if (err == EOWNERDEAD) {
			owner_dead++;
			bakery_consistent(l);
		} else if (err) {
			fprintf(stderr, "hammer: lock: %s\n", bakery_strerror(err));
			return 2;
		}
		occupancy_enter(occ);
		err = bakery_unlock(l);
		if (err) {
			fprintf(stderr, "hammer: unlock: %s\n", bakery_strerror(err));
			return 2;
		}
	}
	printf("acquired %lu owner_dead %lu violations %lu\n", n, owner_dead,
	       (unsigned long)uatomic_read(&occ->violations));
	bakery_lock_close(l);
	bakery_close(b);
	return 0;
}
