/* SPDX-License-Identifier: MIT */
/*
 * hammer.c - one participant of the multi-process stress tests.
 *
 *   bakery-hammer REGION LOCK ALGO ITERATIONS [MODE [OPTION...]]
 *
 * Takes LOCK of REGION ITERATIONS times (MODE: "lock" (default), "try":
 * bakery_trylock, retried; "timed": bakery_timedlock with 0-2 ms deadlines,
 * retried; "mixed": all three) and, inside the critical section, checks
 * mutual exclusion independently of the lock: a separate shm object
 * REGION-occ holds an occupancy word each holder swaps its pid into on entry
 * and 0 out of on exit (any other value seen = two holders at once), and a
 * plain counter incremented with a read-pause-write that loses updates when
 * two holders overlap (occupancy.h).  Prints
 * "acquired N owner_dead N violations N" and exits 0, or 2 on a library or
 * usage error.
 *
 * OPTIONs (NAME=VALUE, all optional; the stress and mutant drivers use them):
 *   sync=N   wait at REGION-occ's start line until N hammers are there, so
 *            that all of them contend from the first passage on
 *   cpu=N    pin the process to CPU N (sched_setaffinity)
 *   pause=N  cpu_relax pauses inside the critical section (default 20)
 *   gap=N    0..N-1 pauses (random) between passages, so that doorways of
 *            different processes meet at varying offsets
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
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
#include "../common/occupancy.h"

struct options {
	unsigned long sync;     /* hammers to wait for at the start line; 0: none */
	long cpu;               /* CPU to pin to; -1: none */
	unsigned pause;         /* pauses inside the critical section */
	unsigned gap;           /* up to gap-1 pauses between passages */
};

static int parse_options(int argc, char **argv, struct options *o)
{
	*o = (struct options){ 0, -1, OCCUPANCY_PAUSE, 0 };
	for (int i = 6; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		char *end;
		unsigned long v;

		if (!eq)
			return -1;
		v = strtoul(eq + 1, &end, 10);
		if (end == eq + 1 || *end || v > 1000000000UL)
			return -1;
		if (!strncmp(argv[i], "sync=", 5))
			o->sync = v;
		else if (!strncmp(argv[i], "cpu=", 4))
			o->cpu = (long)v;
		else if (!strncmp(argv[i], "pause=", 6))
			o->pause = (unsigned)v;
		else if (!strncmp(argv[i], "gap=", 4))
			o->gap = (unsigned)v;
		else
			return -1;
	}
	return 0;
}

static int pin(long cpu)
{
	cpu_set_t set;

	if (cpu >= CPU_SETSIZE) {
		fprintf(stderr, "hammer: no CPU %ld\n", cpu);
		return -1;
	}
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("hammer: sched_setaffinity");
		return -1;
	}
	return 0;
}

/* A cheap per-process generator for the gaps (rand() costs a lock). */
static unsigned next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (unsigned)(*state >> 32);
}

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

static bool known_mode(const char *mode)
{
	return !strcmp(mode, "lock") || !strcmp(mode, "try") || !strcmp(mode, "timed") ||
	       !strcmp(mode, "mixed");
}

static int usage(const char *prog)
{
	fprintf(stderr, "usage: %s REGION LOCK ALGO ITERATIONS [lock|try|timed|mixed "
	        "[sync=N] [cpu=N] [pause=N] [gap=N]]\n", prog);
	return 2;
}

/* ITERATIONS passages through LOCK, each one checked by the occupancy object. */
static int hammer(bakery_lock_t *l, struct occupancy *occ, const char *mode,
                  const struct options *o, unsigned long n, unsigned long *owner_dead)
{
	uint64_t rnd = (uint64_t)getpid() * UINT64_C(0x9e3779b97f4a7c15) | 1;
	int err;

	for (unsigned long i = 0; i < n; i++) {
		err = acquire(l, mode, (unsigned)i);
		if (err == EOWNERDEAD) {
			(*owner_dead)++;
			bakery_consistent(l);
		} else if (err) {
			fprintf(stderr, "hammer: lock: %s\n", bakery_strerror(err));
			return 2;
		}
		occupancy_enter_pause(occ, o->pause);
		err = bakery_unlock(l);
		if (err) {
			fprintf(stderr, "hammer: unlock: %s\n", bakery_strerror(err));
			return 2;
		}
		for (unsigned k = o->gap ? next_random(&rnd) % o->gap : 0; k > 0; k--)
			caa_cpu_relax();
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 5 ? argv[5] : "lock";
	struct occupancy *occ;
	struct options o;
	enum bakery_algo algo;
	bakery_t *b;
	bakery_lock_t *l;
	unsigned long n, owner_dead = 0;
	int err;

	if (argc < 5 || bakery_algo_parse(argv[3], &algo) || !known_mode(mode) ||
	    parse_options(argc, argv, &o))
		return usage(argv[0]);
	n = strtoul(argv[4], NULL, 10);
	srand((unsigned)getpid());
	if (o.cpu >= 0 && pin(o.cpu))
		return 2;
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
	if (o.sync && occupancy_start_line(occ, o.sync, 60)) {
		fprintf(stderr, "hammer: start line: fewer than %lu hammers came\n", o.sync);
		return 2;
	}
	err = hammer(l, occ, mode, &o, n, &owner_dead);
	if (err)
		return err;
	printf("acquired %lu owner_dead %lu violations %lu\n", n, owner_dead,
	       (unsigned long)uatomic_read(&occ->violations));
	bakery_lock_close(l);
	bakery_close(b);
	return 0;
}
