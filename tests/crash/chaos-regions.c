/* SPDX-License-Identifier: MIT */
/*
 * chaos-regions.c - thousands of regions per process: the documented limit
 * of regions per thread, a death holding locks in all of them, and no leak.
 *
 * Each round, with region i's lock of algorithm i mod 4:
 *   1. a thread creates BAKERY_MAX_THREAD_REGIONS + 1 regions and takes
 *      and releases the lock of each: the last lock call must say
 *      BAKERY_EREGIONS, and leave no slot in that region; once the thread
 *      closes one region the same call succeeds (the limit is met cleanly);
 *   2. a child process opens the BAKERY_MAX_THREAD_REGIONS regions the
 *      thread is in and holds every lock (one liveness token per region on
 *      its robust list); the thread's trylock of each says EBUSY;
 *   3. the child is SIGKILLed: the thread must acquire every lock with
 *      EOWNERDEAD (the kernel walked the whole list: the death is proven in
 *      every region), within a generous deadline;
 *   4. the thread unlocks and closes every region in random order and
 *      exits; then the process has as many descriptors and mappings as
 *      before the round, and once unlinked no region of the round, and no
 *      temporary object, is left in /dev/shm.
 * The soft descriptor limit is raised for the round (one descriptor per
 * mapped region); if the hard limit is too low the test is skipped.
 *
 *   chaos-regions [ROUNDS]      (default 2)
 *   BAKERY_CHAOS_SECONDS=N chaos-regions
 *                               soak: rounds for N seconds
 *
 * Exit status: 0 pass, 1 fail, 77 skip, 99 hard error.
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <urcu/system.h>

#include "crashkit.h"

#define NREG BAKERY_MAX_THREAD_REGIONS
#define WAIT 20.0
#define FD_MARGIN 64u

struct regions {
	char base[TK_NAME_SIZE];
	char name[NREG + 1][TK_NAME_SIZE + 16];
	/* the child's progress (shared) */
	volatile int child_holding;
	int child_err;
};

static struct regions *rg;
static bakery_t *b[NREG + 1];
static bakery_lock_t *l[NREG + 1];
static int failed;

static void fail(const char *what, long long a, long long c)
{
	fprintf(stderr, "FAIL %s: %s (%lld, %lld)\n", rg->base, what, a, c);
	failed = 1;
}

static enum bakery_algo algo_of(unsigned i)
{
	return crash_algos[i % CRASH_NALGOS];
}

/* ---------------------------------------------------------- the child -- */

/* Hold the lock of regions 1..NREG, then wait to be killed. */
static int child_run(void *arg)
{
	bakery_t *cb;
	bakery_lock_t *cl;
	int rc;

	(void)arg;
	for (unsigned i = 1; i <= NREG; i++) {
		rc = bakery_open(rg->name[i], 0, NULL, &cb);
		if (!rc)
			rc = bakery_lock_open(cb, CRASH_LOCK, BAKERY_ALGO_DEFAULT, &cl);
		if (!rc)
			rc = bakery_lock(cl);
		if (rc) {
			rg->child_err = rc;
			return 1;
		}
	}
	CMM_STORE_SHARED(rg->child_holding, 1);
	for (;;)
		pause();
}

/* ------------------------------------------------------- the thread's -- */

static int open_one(unsigned i)
{
	struct bakery_config cfg = { .slots = 2, .locks = 1 };
	int rc = bakery_open(rg->name[i], BAKERY_CREATE | BAKERY_EXCL, &cfg, &b[i]);

	if (!rc)
		rc = bakery_lock_open(b[i], CRASH_LOCK, algo_of(i), &l[i]);
	return rc;
}

static int pass_one(unsigned i)
{
	int rc = bakery_lock(l[i]);

	return rc ? rc : bakery_unlock(l[i]);
}

static int close_one(unsigned i)
{
	int rc = bakery_lock_close(l[i]);

	if (!rc)
		rc = bakery_close(b[i]);
	b[i] = NULL;
	l[i] = NULL;
	return rc;
}

/* Step 1: the limit.  Leaves the thread in regions 1..NREG. */
static void step_limit(void)
{
	struct bakery_region_info ri;
	int rc;

	for (unsigned i = 0; i <= NREG && !failed; i++)
		if ((rc = open_one(i)) || (i < NREG && (rc = pass_one(i))))
			fail("open or passage", i, rc);
	if (failed)
		return;
	if ((rc = bakery_lock(l[NREG])) != BAKERY_EREGIONS)
		fail("one region past the limit: not BAKERY_EREGIONS", NREG, rc);
	if (bakery_region_info(b[NREG], &ri) || ri.slots_used != 0)
		fail("the refused lock call left a slot", ri.slots_used, 0);
	if ((rc = close_one(0)))
		fail("close", 0, rc);
	if ((rc = pass_one(NREG)))
		fail("the lock call after a close", NREG, rc);
}

static bool child_holds(void *arg)
{
	(void)arg;
	return CMM_LOAD_SHARED(rg->child_holding) != 0;
}

/* Steps 2 and 3: a death holding NREG locks. */
static void step_death(unsigned *owner_dead)
{
	pid_t pid = crash_fork(child_run, NULL, NULL);
	struct timespec until;
	int rc;

	if (!tk_wait_until(child_holds, NULL, 10 * WAIT)) {
		fail("the child did not take every lock", rg->child_err, 0);
		tk_kill(pid);
		return;
	}
	for (unsigned i = 1; i <= NREG; i++)
		if ((rc = bakery_trylock(l[i])) != EBUSY)
			fail("trylock of a lock the child holds: not EBUSY", i, rc);
	if (!tk_kill(pid))
		fail("the child did not die of the kill", pid, 0);
	until = tk_in(CLOCK_MONOTONIC, WAIT);
	for (unsigned i = 1; i <= NREG && !failed; i++) {
		rc = bakery_clocklock(l[i], CLOCK_MONOTONIC, &until);
		if (rc == EOWNERDEAD) {
			++*owner_dead;
			rc = bakery_consistent(l[i]);
		} else {
			fail("after the death: not EOWNERDEAD", i, rc);
		}
		if (rc == 0 && (rc = bakery_unlock(l[i])))
			fail("unlock", i, rc);
	}
}

/* Step 4: close the rest in random order. */
static void step_close(unsigned seed)
{
	unsigned order[NREG + 1], n = 0;
	int rc;

	for (unsigned i = 0; i <= NREG; i++)
		if (b[i])
			order[n++] = i;
	for (unsigned i = n; i > 1; i--) {
		unsigned j = (unsigned)rand_r(&seed) % i, t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
	for (unsigned i = 0; i < n; i++)
		if ((rc = close_one(order[i])))
			fail("close", order[i], rc);
}

static unsigned round_owner_dead;

static void *thread_main(void *arg)
{
	(void)arg;
	step_limit();
	if (!failed)
		step_death(&round_owner_dead);
	step_close((unsigned)getpid());
	return NULL;
}

/* --------------------------------------------------------------- rounds -- */

static struct {
	unsigned rounds, owner_dead;
	uint64_t regions;
} sum;

static void run_round(void)
{
	unsigned fds = crash_count_fds(), maps = crash_count_maps(), n;
	char base[TK_NAME_SIZE];
	pthread_t th;

	tk_name(base, TK_NAME_SIZE, "regions");
	snprintf(rg->base, sizeof(rg->base), "%s", base);
	for (unsigned i = 0; i <= NREG; i++)
		snprintf(rg->name[i], sizeof(rg->name[i]), "%s-%u", base, i);
	rg->child_holding = 0;
	round_owner_dead = 0;
	if (pthread_create(&th, NULL, thread_main, NULL) || pthread_join(th, NULL)) {
		fprintf(stderr, "cannot run the round's thread\n");
		exit(99);
	}
	if ((n = crash_count_fds()) != fds)
		fail("descriptors leaked (after, before)", n, fds);
	if (CRASH_MAPS_COMPARABLE && (n = crash_count_maps()) != maps)
		fail("mappings leaked (after, before)", n, maps);
	for (unsigned i = 0; i <= NREG; i++)
		bakery_unlink(rg->name[i]);
	if ((n = crash_shm_objects(rg->base)) != 0)
		fail("objects left in /dev/shm", n, 0);
	printf("round %u: %u regions opened (%u by the child), BAKERY_EREGIONS at region %u, "
	       "%u EOWNERDEAD after the child's death: %s\n", sum.rounds + 1, 2 * NREG + 1, NREG,
	       NREG + 1, round_owner_dead, failed ? "FAIL" : "ok");
	sum.rounds++;
	sum.regions += 2 * NREG + 1;
	sum.owner_dead += round_owner_dead;
}

/* Room for every region's descriptor, or false. */
static bool raise_fd_limit(void)
{
	struct rlimit r;
	rlim_t want = NREG + FD_MARGIN + crash_count_fds();

	if (getrlimit(RLIMIT_NOFILE, &r))
		return false;
	if (r.rlim_cur >= want)
		return true;
	if (r.rlim_max != RLIM_INFINITY && r.rlim_max < want)
		return false;
	r.rlim_cur = want;
	return setrlimit(RLIMIT_NOFILE, &r) == 0;
}

static void *warm_thread(void *arg)
{
	(void)arg;
	if (open_one(0) || pass_one(0) || close_one(0)) {
		fprintf(stderr, "warm-up failed\n");
		exit(99);
	}
	return NULL;
}

/* The library's and the C library's first-use state (and a thread stack
 * in the C library's cache), before any count. */
static void warm_up(void)
{
	pthread_t th;

	tk_name(rg->name[0], TK_NAME_SIZE, "warm");
	if (pthread_create(&th, NULL, warm_thread, NULL) || pthread_join(th, NULL))
		exit(99);
	bakery_unlink(rg->name[0]);
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 2;
	uint64_t end = tk_ns() + (uint64_t)(crash_chaos_seconds(0) * 1e9);

	if (rounds == 0) {
		fprintf(stderr, "usage: %s [ROUNDS]\n", argv[0]);
		return 99;
	}
	if (!raise_fd_limit()) {
		printf("SKIP: cannot raise the descriptor limit to %u\n", NREG + FD_MARGIN);
		return 77;
	}
	tk_run_begin();
	mallopt(M_ARENA_MAX, 1);        /* no per-thread arenas: stable mappings */
	rg = tk_shared(sizeof(*rg));
	warm_up();
	for (unsigned r = 0; !failed && (crash_chaos_soak() ? tk_ns() < end : r < rounds); r++)
		run_round();
	printf("chaos-regions total: %u rounds, %llu regions opened, %u EOWNERDEAD: %s\n",
	       sum.rounds, (unsigned long long)sum.regions, sum.owner_dead,
	       failed ? "FAIL" : "ok");
	tk_run_end();
	return failed ? 1 : 0;
}
