/* SPDX-License-Identifier: MIT */
/*
 * wait-cost.c - what a blocked waiter costs, and that the death of the
 * holder still reaches it, whatever the kernel lets the library use
 * (tests/kernel/matrix.sh runs it plain and under seccomp-run).
 *
 * A holder process takes one lock of each kind and keeps it: a mutex of
 * each algorithm, a lock of k = 2 holders (both units held, by two
 * threads), and a line of two waiters on one more mutex, the first timed
 * (far deadline), the second parked behind it (the test build's
 * BAKERY_TEST_PARK_AHEAD=1).  One thread of this process waits on each.
 * Once all are asleep, each waiter thread's CPU time is read from its own
 * clock, and its sleeps (voluntary context switches, from /proc) counted,
 * over MEASURE_S of wall time; then the holder is SIGKILLed, and every
 * waiter must get in (EOWNERDEAD, or 0 behind another waiter) within
 * DEATH_BOUND_S: that is a death wake-up (or its fallback) arriving, not the
 * one-second cap of a sleep that missed it.
 *
 * Prints one line per waiter (CPU microseconds and sleeps per second
 * blocked, the kill-to-acquire time) and, last, "max_us_per_s N" and
 * "max_sleeps_per_s N", which the matrix compares with the same figures of
 * a run without a filter.  The CPU time of a few sleeps a second varies
 * with the machine's load (each wake-up's checks are cache misses and
 * system calls); their number does not: a sleep cut short only by a
 * wake-up that load can delay but never bring forward.
 * Exit status 0 when every waiter got in as it should, 1 if not.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/tk.h"

#define MEASURE_S 1.0
#define SETTLE_S 0.2
#define DEATH_BOUND_S 0.5       /* half a sleep's one-second cap */
#define READY_S 20.0

enum kind { MUTEX, HOLDERS2, LINE_TIMED, LINE_PARKED };

struct waiter {
	const char *lock;
	enum bakery_algo algo;
	enum kind kind;
	pthread_t thread;
	clockid_t cpu;
	pid_t tid;
	bakery_lock_t *l;
	int rc;
	uint64_t t_in;             /* tk_ns() once in */
	struct tk_gate started;
	uint64_t cpu0, cpu1;
	long sleeps0, sleeps1;
};

static struct waiter waiters[] = {
	{ .lock = "lamport", .algo = BAKERY_ALGO_LAMPORT, .kind = MUTEX },
	{ .lock = "boulangerie", .algo = BAKERY_ALGO_BOULANGERIE, .kind = MUTEX },
	{ .lock = "black-white", .algo = BAKERY_ALGO_BLACK_WHITE, .kind = MUTEX },
	{ .lock = "jayanti", .algo = BAKERY_ALGO_JAYANTI, .kind = MUTEX },
	{ .lock = "k2", .algo = BAKERY_ALGO_LAMPORT, .kind = HOLDERS2 },
	{ .lock = "line", .algo = BAKERY_ALGO_LAMPORT, .kind = LINE_TIMED },
	{ .lock = "line", .algo = BAKERY_ALGO_LAMPORT, .kind = LINE_PARKED },
};
#define NWAITERS (sizeof(waiters) / sizeof(waiters[0]))

struct shared {
	char region[TK_NAME_SIZE];
	int ready;                 /* holder threads holding their locks */
};

static struct shared *sh;
static bakery_t *region;

static int lock_open(bakery_t *b, const struct waiter *w, bakery_lock_t **l)
{
	struct bakery_lock_config cfg = { .algo = w->algo, .holders = w->kind == HOLDERS2 ? 2 : 0 };

	return bakery_lock_open_config(b, w->lock, &cfg, l);
}

/* ------------------------------------------------------------- holder -- */

static void *second_unit(void *arg)
{
	bakery_lock_t *l = arg;

	if (bakery_lock(l) == 0)
		__atomic_fetch_add(&sh->ready, 1, __ATOMIC_SEQ_CST);
	pause();
	return NULL;
}

/* Holds every lock (both units of k2) until killed. */
static int holder(void *unused)
{
	bakery_t *b;
	pthread_t t;

	(void)unused;
	if (bakery_open(sh->region, 0, NULL, &b))
		return 2;
	for (size_t i = 0; i < NWAITERS; i++) {
		bakery_lock_t *l;

		if (i > 0 && !strcmp(waiters[i].lock, waiters[i - 1].lock))
			continue;
		if (lock_open(b, &waiters[i], &l) || bakery_lock(l))
			return 3;
		if (waiters[i].kind == HOLDERS2 && pthread_create(&t, NULL, second_unit, l))
			return 4;
	}
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
}

/* ------------------------------------------------------------ waiters -- */

static void *waiter_run(void *arg)
{
	struct waiter *w = arg;
	struct timespec far = tk_in(CLOCK_MONOTONIC, 60);

	pthread_getcpuclockid(pthread_self(), &w->cpu);
	w->tid = (pid_t)syscall(SYS_gettid);
	tk_gate_open(&w->started);
	w->rc = w->kind == LINE_TIMED ? bakery_clocklock(w->l, CLOCK_MONOTONIC, &far)
	                              : bakery_lock(w->l);
	w->t_in = tk_ns();
	if (w->rc == EOWNERDEAD)
		bakery_consistent(w->l);
	if (w->rc == 0 || w->rc == EOWNERDEAD)
		bakery_unlock(w->l);
	return NULL;
}

static uint64_t cpu_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* How many times thread TID went to sleep (its voluntary context
 * switches); -1 if /proc does not say. */
static long sleeps_of(pid_t tid)
{
	char path[64], line[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* How many slots wait on W's lock. */
static unsigned queued(const struct waiter *w)
{
	struct bakery_lock_info li;
	unsigned index;

	if (bakery_lock_index(w->l, &index) || bakery_lock_info(region, index, &li))
		return 0;
	return li.waiters;
}

/* Start W and see it in line (behind as many as WANT in all). */
static int waiter_start(struct waiter *w, unsigned want)
{
	uint64_t end = tk_ns() + (uint64_t)(READY_S * 1e9);

	tk_gate_init(&w->started);
	if (lock_open(region, w, &w->l) || pthread_create(&w->thread, NULL, waiter_run, w))
		return -1;
	tk_gate_wait(&w->started, READY_S);
	while (queued(w) < want)
		if (tk_ns() > end)
			return -1;
		else
			tk_sleep_ms(1);
	return 0;
}

static bool holder_ready(void *unused)
{
	(void)unused;
	/* the holder's main thread, and k2's second unit */
	return __atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST) == 2;
}

int main(void)
{
	double worst = 0, most_sleeps = 0;
	bool ok = true;
	pid_t h;
	uint64_t t0, t1, t_kill;

	/* the second waiter of "line" parks behind the first */
	setenv("BAKERY_TEST_PARK_AHEAD", "1", 1);
	sh = tk_shared(sizeof(*sh));
	tk_name(sh->region, sizeof(sh->region), "waitcost");
	{
		struct bakery_config cfg = { .slots = 16, .locks = 8 };

		if (bakery_open(sh->region, BAKERY_CREATE | BAKERY_EXCL, &cfg, &region)) {
			fprintf(stderr, "wait-cost: cannot create %s\n", sh->region);
			return TK_SETUP_FAILED;
		}
	}
	h = tk_fork(holder, NULL);
	if (!tk_wait_until(holder_ready, NULL, READY_S)) {
		fprintf(stderr, "wait-cost: the holder never took its locks\n");
		tk_kill(h);
		return TK_SETUP_FAILED;
	}
	for (size_t i = 0; i < NWAITERS; i++)
		if (waiter_start(&waiters[i], waiters[i].kind == LINE_PARKED ? 2 : 1)) {
			fprintf(stderr, "wait-cost: waiter %zu never queued\n", i);
			tk_kill(h);
			return TK_SETUP_FAILED;
		}
	tk_sleep_ms(SETTLE_S * 1e3);   /* past every spin, asleep */
	t0 = tk_ns();
	for (size_t i = 0; i < NWAITERS; i++) {
		waiters[i].cpu0 = cpu_ns(waiters[i].cpu);
		waiters[i].sleeps0 = sleeps_of(waiters[i].tid);
	}
	tk_sleep_ms(MEASURE_S * 1e3);
	for (size_t i = 0; i < NWAITERS; i++) {
		waiters[i].cpu1 = cpu_ns(waiters[i].cpu);
		waiters[i].sleeps1 = sleeps_of(waiters[i].tid);
	}
	t1 = tk_ns();
	t_kill = tk_ns();
	tk_kill(h);
	for (size_t i = 0; i < NWAITERS; i++) {
		struct waiter *w = &waiters[i];
		double secs = (double)(t1 - t0) / 1e9;
		double us_per_s = (double)(w->cpu1 - w->cpu0) / 1e3 / secs;
		double sleeps_per_s = (double)(w->sleeps1 - w->sleeps0) / secs;
		double death_ms;
		int want = w->kind == LINE_PARKED ? 0 : EOWNERDEAD;

		pthread_join(w->thread, NULL);
		death_ms = (double)(w->t_in - t_kill) / 1e6;
		printf("%-12s %-7s %8.1f us/s %6.1f sleeps/s blocked, holder killed -> in: %7.1f ms "
		       "(%s)\n", w->lock,
		       w->kind == LINE_TIMED ? "timed" : w->kind == LINE_PARKED ? "parked" : "",
		       us_per_s, sleeps_per_s, death_ms, bakery_errname(w->rc));
		if (us_per_s > worst)
			worst = us_per_s;
		if (w->sleeps0 < 0 || w->sleeps1 < 0)
			most_sleeps = -1;       /* no /proc: no figure */
		else if (most_sleeps >= 0 && sleeps_per_s > most_sleeps)
			most_sleeps = sleeps_per_s;
		if (w->rc != want && !(w->kind == HOLDERS2 && w->rc == 0)) {
			fprintf(stderr, "FAIL: %s: %s, not %s\n", w->lock, bakery_errname(w->rc),
			        bakery_errname(want));
			ok = false;
		}
		if (death_ms > DEATH_BOUND_S * 1e3) {
			fprintf(stderr, "FAIL: %s: in %.1f ms after the holder's death (bound %.0f ms)\n",
			        w->lock, death_ms, DEATH_BOUND_S * 1e3);
			ok = false;
		}
		bakery_lock_close(w->l);
	}
	printf("max_us_per_s %.0f\n", worst);
	if (most_sleeps >= 0)
		printf("max_sleeps_per_s %.0f\n", most_sleeps);
	bakery_close(region);
	bakery_unlink(sh->region);
	return ok ? 0 : 1;
}
