/* SPDX-License-Identifier: MIT */
/*
 * slots.c - bakery-slotbench: how long a newcomer waits for a slot that a
 * busy thread holds.  A thread of this process locks and unlocks one lock
 * in a loop; one child process after another opens the region and locks
 * the lock once (fork to exit, timed by the parent).
 *
 *   free slot   the region has a slot to spare: the child claims it at
 *               once (the floor: fork, open, one passage beside the busy
 *               thread, exit)
 *   one slot    the region has one slot, the busy thread's: the child
 *               waits until the busy thread gives it back at an unlock
 *               (slotwait.c) and takes it before the busy thread's next
 *               claim
 *
 * Each case reports the median, the 99th percentile and the worst of N
 * children, and the ratio of its median to the free-slot median of the
 * same run.  The cases take turns, a child each, so that a busy machine
 * costs both alike; the busy thread of the case not running naps (100 us
 * at a time), so that it takes no CPU from the other.  With two CPUs or
 * more, the busy threads run on one and the children on another: a child
 * forked onto the busy thread's CPU would otherwise wait for the
 * scheduler's tick before it runs at all, in either case, and the figures
 * would be the scheduler's.
 *
 * Usage: bakery-slotbench [N] (default 500 children per case).
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <urcu/uatomic.h>

#include "bakery.h"

enum { FREE_SLOT, ONE_SLOT, NCASES };
static const char *const case_name[NCASES] = { "free slot", "one slot" };

struct busy {
	bakery_lock_t *l;
	pthread_t thread;
	int run, stop, err;
	unsigned long passages;
};

struct bench_case {
	char name[64];
	bakery_t *b;
	struct busy busy;
	double *ms;             /* each child's time */
};

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bakery-slotbench: %s: %s\n", what, bakery_strerror(err));
	exit(1);
}

static void *busy_main(void *arg)
{
	struct busy *u = arg;

	while (!uatomic_read(&u->stop)) {
		int err;

		if (!uatomic_read(&u->run)) {
			usleep(100);
			continue;
		}
		err = bakery_lock(u->l);

		if (!err)
			err = bakery_unlock(u->l);
		if (err) {
			u->err = err;
			break;
		}
		uatomic_inc(&u->passages);
	}
	return NULL;
}

/* The first two CPUs this process may use (the second -1 if none). */
static void two_cpus(int cpu[2])
{
	cpu_set_t set;
	int found = 0;

	cpu[0] = cpu[1] = -1;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (int i = 0; i < CPU_SETSIZE && found < 2; i++)
		if (CPU_ISSET(i, &set))
			cpu[found++] = i;
}

static void pin(pthread_t thread, int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(thread, sizeof(set), &set);
}

static void case_open(struct bench_case *c, int which, unsigned n, int busy_cpu)
{
	struct bakery_config cfg = { .slots = which == FREE_SLOT ? 2 : 1, .locks = 1 };
	int err;

	snprintf(c->name, sizeof(c->name), "/bakery-slotbench-%d-%d", (int)getpid(), which);
	if ((err = bakery_open(c->name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &c->b)))
		die("creating a region", err);
	if ((err = bakery_lock_open(c->b, "l", BAKERY_ALGO_DEFAULT, &c->busy.l)))
		die("opening the lock", err);
	c->ms = calloc(n, sizeof(*c->ms));
	if (!c->ms || pthread_create(&c->busy.thread, NULL, busy_main, &c->busy)) {
		fprintf(stderr, "bakery-slotbench: no memory or no thread\n");
		exit(1);
	}
	pin(c->busy.thread, busy_cpu);
}

/* Let C's busy thread run (the others nap) and see it pass, so that it
 * holds its slot and locks in its loop when the child comes. */
static void case_run(struct bench_case *c, int which)
{
	unsigned long seen;

	for (int k = 0; k < NCASES; k++)
		uatomic_set(&c[k].busy.run, k == which);
	seen = uatomic_read(&c[which].busy.passages);
	while (uatomic_read(&c[which].busy.passages) == seen && !uatomic_read(&c[which].busy.err))
		sched_yield();
}

static void case_close(struct bench_case *c)
{
	uatomic_set(&c->busy.stop, 1);
	pthread_join(c->busy.thread, NULL);
	if (c->busy.err)
		die("the busy thread", c->busy.err);
	bakery_lock_close(c->busy.l);
	bakery_close(c->b);
	bakery_unlink(c->name);
	free(c->ms);
}

/* One child: open the region, lock once, exit.  Its time in ms. */
static double child_time(const struct bench_case *c)
{
	double t0 = now_ms();
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("bakery-slotbench: fork");
		exit(1);
	}
	if (pid == 0) {
		bakery_t *b;
		bakery_lock_t *l;

		if (bakery_open(c->name, 0, NULL, &b) || bakery_lock_open(b, "l", BAKERY_ALGO_DEFAULT, &l))
			_exit(2);
		_exit(bakery_lock(l) == 0 && bakery_unlock(l) == 0 ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bakery-slotbench: a child failed (status %d)\n", status);
		exit(1);
	}
	return now_ms() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double pick(const double *sorted, unsigned n, double q)
{
	unsigned i = (unsigned)(q * (n - 1) + 0.5);

	return sorted[i < n ? i : n - 1];
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 500;
	struct bench_case c[NCASES];
	double floor_ms;
	int cpu[2];

	if (n < 1 || n > 1000000) {
		fprintf(stderr, "usage: bakery-slotbench [N]   (1 <= N <= 1000000)\n");
		return 2;
	}
	memset(c, 0, sizeof(c));
	two_cpus(cpu);
	if (cpu[1] < 0)
		cpu[0] = -1;    /* one CPU: nothing to pin */
	for (int k = 0; k < NCASES; k++)
		case_open(&c[k], k, n, cpu[0]);
	pin(pthread_self(), cpu[1]);    /* and the children, forked from here */
	for (unsigned i = 0; i < n; i++)
		for (int k = 0; k < NCASES; k++) {
			case_run(c, k);
			c[k].ms[i] = child_time(&c[k]);
		}
	printf("# a child process locks once beside a thread locking in a loop: %u children a case\n", n);
	if (cpu[1] >= 0)
		printf("# busy threads on CPU %d, children on CPU %d\n", cpu[0], cpu[1]);
	printf("%-10s %10s %10s %10s %10s %12s\n", "case", "median", "p99", "worst", "vs free",
	       "busy passes");
	for (int k = 0; k < NCASES; k++)
		qsort(c[k].ms, n, sizeof(*c[k].ms), cmp_double);
	floor_ms = pick(c[FREE_SLOT].ms, n, 0.5);
	for (int k = 0; k < NCASES; k++)
		printf("%-10s %7.3f ms %7.3f ms %7.3f ms %9.2fx %12lu\n", case_name[k],
		       pick(c[k].ms, n, 0.5), pick(c[k].ms, n, 0.99), c[k].ms[n - 1],
		       pick(c[k].ms, n, 0.5) / floor_ms, uatomic_read(&c[k].busy.passages));
	for (int k = 0; k < NCASES; k++)
		case_close(&c[k]);
	return 0;
}
