/* SPDX-License-Identifier: MIT */
/*
 * aligned.c - aligned trials: two threads, each pinned to its own CPU, meet
 * at a barrier before every trial and then run one thing each at the same
 * moment, so that every trial is a real collision.  Built twice: against
 * the library (bakery-aligned) and against the library without its
 * store->load barriers (bakery-aligned-mutant, BAKERY_NO_BARRIERS).
 *
 *   bakery-aligned[-mutant] litmus TRIALS
 *   bakery-aligned[-mutant] real   ALGO TRIALS [SECONDS]
 *   bakery-aligned[-mutant] mutant ALGO EVIDENCE MAX-TRIALS [SECONDS]
 *
 * litmus: the raw store-buffering test (x = 1; r0 = y  ||  y = 1; r1 = x;
 *   reordered when r0 = r1 = 0), TRIALS times; prints the count.  It needs
 *   no library and says how often this machine, now, shows the reordering
 *   that store_mb() forbids.
 * real: TRIALS passages per thread of one lock; inside, an occupancy check
 *   (each holder swaps its id into a word on entry and out on exit, and
 *   increments a counter with a read, pause, write).  Exit 0 only with no
 *   overlap and an exact counter; 1 otherwise.  Stops early, still
 *   checking everything, after SECONDS (default 120) of wall time, which
 *   only a machine far busier than a test run's can reach.
 * mutant: rounds of 256 lock trials, each followed by 256 litmus trials,
 *   until the lock's occupancy check sees an overlap (exit 0: caught), or
 *   the litmus trials have shown EVIDENCE reorderings while the lock showed
 *   none (exit 1: the hardware reorders, but the check did not catch the
 *   barrier-less build), or MAX-TRIALS lock trials or SECONDS pass with
 *   fewer than EVIDENCE reorderings (exit 77: the hardware does not show
 *   the reordering often enough to judge).  Interleaving the two halves
 *   makes the verdict independent of load: a busy machine slows both alike.
 *
 * Every mode prints one result line and exits 2 on a setup error.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#include "bakery.h"

#define ROUND 256               /* trials of one kind before switching */
#define CS_PAUSE 20             /* relaxations between the counter's read and write */
#define MAX_SKEW 16             /* a trial starts 0..MAX_SKEW-1 relaxations late */

/* ------------------------------------------------------------- barrier -- */

/*
 * A sense-reversing barrier for the two threads.  The last to arrive resets
 * the count and flips the sense; the uatomic_add_return (a full barrier)
 * orders each thread's trial before its arrival, and the other's load of
 * the new sense is followed by cmm_smp_mb() so that nothing of the next
 * trial is done before it: the barrier orders one trial entirely before the
 * next, in both threads.
 */
struct barrier {
	unsigned long count;
	unsigned long sense;
} __attribute__((aligned(64)));

static void barrier_wait(struct barrier *bar, unsigned long *local_sense)
{
	unsigned long spins = 0;

	*local_sense ^= 1;
	if (uatomic_add_return(&bar->count, 1) == 2) {
		CMM_STORE_SHARED(bar->count, 0);
		uatomic_set(&bar->sense, *local_sense);
		cmm_smp_mb();   /* the reset and flip before our next trial's stores */
		return;
	}
	while (CMM_LOAD_SHARED(bar->sense) != *local_sense)
		if (++spins % 4096 == 0)
			sched_yield();  /* the other is off its CPU: let others run */
		else
			caa_cpu_relax();
	cmm_smp_mb();           /* pairs with the arriver's barrier above */
}

/* ------------------------------------------------------- shared state -- */

enum trial_kind { TRIAL_LITMUS, TRIAL_LOCK, TRIAL_STOP };

struct shared {
	struct barrier bar;
	/* what the next round is; written by thread 0 between barriers */
	int kind __attribute__((aligned(64)));
	/* litmus registers, each on its own line */
	unsigned long x __attribute__((aligned(64)));
	unsigned long y __attribute__((aligned(64)));
	unsigned long r[2] __attribute__((aligned(64)));
	/* the occupancy check */
	unsigned long inside __attribute__((aligned(64)));
	unsigned long counter __attribute__((aligned(64)));
	unsigned long overlaps, entries;
	int lock_error;
	bakery_lock_t *lock;
	int cpu[2];
};

struct thread_arg {
	struct shared *sh;
	unsigned id;            /* 0 or 1 */
	unsigned long sense;
	unsigned seed;
};

static void skew(struct thread_arg *t)
{
	for (unsigned i = (unsigned)rand_r(&t->seed) % MAX_SKEW; i; i--)
		caa_cpu_relax();
}

/* One store-buffering trial: store our register, load the other's. */
static void litmus_trial(struct thread_arg *t)
{
	struct shared *sh = t->sh;
	unsigned long *mine = t->id ? &sh->y : &sh->x;
	unsigned long *theirs = t->id ? &sh->x : &sh->y;

	skew(t);
	CMM_STORE_SHARED(*mine, 1);
	/* no barrier, deliberately: this is the reordering being measured */
	CMM_STORE_SHARED(sh->r[t->id], CMM_LOAD_SHARED(*theirs));
}

/* Occupancy check: ID (1 or 2) in, counter read-pause-write, ID out.  The
 * exchanges are full barriers; any overlap makes one of them see the other's
 * id, and the plain counter loses an update. */
static void critical_section(struct shared *sh, unsigned long id)
{
	unsigned long c;

	if (uatomic_xchg(&sh->inside, id) != 0)
		uatomic_inc(&sh->overlaps);
	c = CMM_LOAD_SHARED(sh->counter);
	for (int i = 0; i < CS_PAUSE; i++)
		caa_cpu_relax();
	CMM_STORE_SHARED(sh->counter, c + 1);
	if (uatomic_xchg(&sh->inside, 0) != id)
		uatomic_inc(&sh->overlaps);
	uatomic_inc(&sh->entries);
}

static void lock_trial(struct thread_arg *t)
{
	struct shared *sh = t->sh;
	int err;

	skew(t);
	if ((err = bakery_lock(sh->lock))) {
		CMM_STORE_SHARED(sh->lock_error, err);
		return;
	}
	critical_section(sh, t->id + 1);
	if ((err = bakery_unlock(sh->lock)))
		CMM_STORE_SHARED(sh->lock_error, err);
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Thread 1's half of a round of KIND (thread 0's is round_from_driver()). */
static void run_round(struct thread_arg *t, int kind)
{
	for (unsigned i = 0; i < ROUND; i++) {
		barrier_wait(&t->sh->bar, &t->sense);
		if (kind == TRIAL_LITMUS)
			litmus_trial(t);
		else
			lock_trial(t);
		/* after this barrier thread 0 reads the litmus outcome and
		 * resets the registers while thread 1 waits at the next one */
		barrier_wait(&t->sh->bar, &t->sense);
	}
}

/* Thread 1's life: wait at the barrier, read the kind thread 0 chose, run a
 * round of it, repeat until TRIAL_STOP. */
static void *partner(void *arg)
{
	struct thread_arg *t = arg;
	int kind;

	if (pin(t->sh->cpu[1]))
		return NULL;
	for (;;) {
		barrier_wait(&t->sh->bar, &t->sense);   /* thread 0 has set kind */
		kind = CMM_LOAD_SHARED(t->sh->kind);
		if (kind == TRIAL_STOP)
			return NULL;
		run_round(t, kind);
	}
}

/* ------------------------------------------------------ thread 0's side -- */

struct driver {
	struct shared *sh;
	struct thread_arg t0, t1;
	pthread_t thread;
};

/* Thread 0's half of a round, counting the litmus reorderings. */
static unsigned long round_from_driver(struct driver *d, int kind)
{
	struct shared *sh = d->sh;
	unsigned long reordered = 0;

	CMM_STORE_SHARED(sh->kind, kind);
	barrier_wait(&sh->bar, &d->t0.sense);   /* publishes kind to thread 1 */
	for (unsigned i = 0; i < ROUND; i++) {
		barrier_wait(&sh->bar, &d->t0.sense);
		if (kind == TRIAL_LITMUS)
			litmus_trial(&d->t0);
		else
			lock_trial(&d->t0);
		barrier_wait(&sh->bar, &d->t0.sense);
		if (kind == TRIAL_LITMUS) {
			/* both threads are past their trial and waiting at
			 * the next barrier: the registers are quiet */
			reordered += !CMM_LOAD_SHARED(sh->r[0]) && !CMM_LOAD_SHARED(sh->r[1]);
			CMM_STORE_SHARED(sh->x, 0);
			CMM_STORE_SHARED(sh->y, 0);
		}
	}
	return reordered;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool pick_cpus(int cpu[2])
{
	cpu_set_t set;
	int found = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
		if (CPU_ISSET(c, &set))
			cpu[found++] = c;
	return found == 2;
}

/* SH is zeroed, except for the lock handle. */
static int driver_start(struct driver *d, struct shared *sh)
{
	d->sh = sh;
	d->t0 = (struct thread_arg){ sh, 0, 0, (unsigned)getpid() };
	d->t1 = (struct thread_arg){ sh, 1, 0, (unsigned)getpid() * 7919u + 1 };
	if (!pick_cpus(sh->cpu)) {
		printf("aligned: fewer than two CPUs: skipped\n");
		return 77;
	}
	if (pin(sh->cpu[0]) || pthread_create(&d->thread, NULL, partner, &d->t1)) {
		fprintf(stderr, "aligned: cannot pin or start the second thread\n");
		return 2;
	}
	return 0;
}

static void driver_stop(struct driver *d)
{
	CMM_STORE_SHARED(d->sh->kind, TRIAL_STOP);
	barrier_wait(&d->sh->bar, &d->t0.sense);
	pthread_join(d->thread, NULL);
}

/* ------------------------------------------------------------- the lock -- */

struct lock_env {
	char region[64];
	bakery_t *b;
};

static int lock_env_open(struct lock_env *e, struct shared *sh, const char *algo_name)
{
	enum bakery_algo algo;
	int err;

	if (bakery_algo_parse(algo_name, &algo)) {
		fprintf(stderr, "aligned: unknown algorithm %s\n", algo_name);
		return 2;
	}
	snprintf(e->region, sizeof(e->region), "/bkaligned-%d", (int)getpid());
	bakery_unlink(e->region);
	if ((err = bakery_open(e->region, BAKERY_CREATE | BAKERY_EXCL, NULL, &e->b)) ||
	    (err = bakery_lock_open(e->b, "aligned", algo, &sh->lock))) {
		fprintf(stderr, "aligned: %s: %s\n", e->region, bakery_strerror(err));
		return 2;
	}
	return 0;
}

static void lock_env_close(struct lock_env *e, struct shared *sh)
{
	bakery_lock_close(sh->lock);
	bakery_close(e->b);
	bakery_unlink(e->region);
}

/* -------------------------------------------------------------- modes -- */

static int mode_litmus(struct driver *d, unsigned long trials)
{
	unsigned long reordered = 0, done = 0;

	for (; done < trials; done += ROUND)
		reordered += round_from_driver(d, TRIAL_LITMUS);
	printf("litmus: %lu reordered in %lu aligned trials (%.4f %%)\n", reordered, done,
	       100.0 * (double)reordered / (double)done);
	return 0;
}

static int mode_real(struct driver *d, const char *algo, unsigned long trials, double seconds)
{
	struct shared *sh = d->sh;
	unsigned long done = 0;
	double t0 = now(), dt;
	bool ok;

	while (done < trials && !sh->lock_error && now() - t0 < seconds) {
		round_from_driver(d, TRIAL_LOCK);
		done += ROUND;
	}
	dt = now() - t0;
	ok = !sh->lock_error && sh->overlaps == 0 && sh->counter == sh->entries &&
	     sh->entries == 2 * done;
	printf("real %-12s %lu aligned trials (%lu passages) in %.2f s, overlaps %lu, "
	       "counter %s%s%s  %s\n", algo, done, sh->entries, dt, sh->overlaps,
	       sh->counter == sh->entries ? "exact" : "LOST UPDATES",
	       sh->lock_error ? ", lock error: " : "",
	       sh->lock_error ? bakery_strerror(sh->lock_error) : "", ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}

static int mode_mutant(struct driver *d, const char *algo, unsigned long evidence,
                       unsigned long max_trials, double seconds)
{
	struct shared *sh = d->sh;
	unsigned long done = 0, reordered = 0;
	double t0 = now(), dt;
	bool caught = false;

	while (!sh->lock_error && reordered < evidence && done < max_trials &&
	       now() - t0 < seconds) {
		round_from_driver(d, TRIAL_LOCK);
		done += ROUND;
		if ((caught = sh->overlaps || sh->counter != sh->entries))
			break;
		reordered += round_from_driver(d, TRIAL_LITMUS);
	}
	dt = now() - t0;
	if (sh->lock_error) {
		printf("mutant %-12s lock error after %lu trials: %s\n", algo, done,
		       bakery_strerror(sh->lock_error));
		return 2;
	}
	printf("mutant %-12s %s after %lu aligned lock trials in %.3f s; the litmus "
	       "trials between them reordered %lu times in %lu (%.4f %%)\n", algo,
	       caught ? "caught" : "NOT caught", done, dt, reordered, done - ROUND * caught,
	       done > ROUND ? 100.0 * (double)reordered / (double)(done - ROUND * caught) : 0.0);
	if (caught)
		return 0;
	return reordered >= evidence ? 1 : 77;
}

static int usage(const char *argv0)
{
	fprintf(stderr, "usage: %s litmus TRIALS\n"
	        "       %s real ALGO TRIALS [SECONDS]\n"
	        "       %s mutant ALGO EVIDENCE MAX-TRIALS [SECONDS]\n", argv0, argv0, argv0);
	return 2;
}

static bool number_arg(const char *s, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return !errno && end != s && !*end && *v > 0;
}

int main(int argc, char **argv)
{
	static struct shared sh;
	unsigned long n1 = 0, n2 = 0;
	struct lock_env env;
	struct driver d;
	double seconds = 120;
	int rc;

	if (argc == 3 && !strcmp(argv[1], "litmus") && number_arg(argv[2], &n1)) {
		if ((rc = driver_start(&d, &sh)))
			return rc;
		rc = mode_litmus(&d, n1);
		driver_stop(&d);
		return rc;
	}
	if (argc >= 4 && !strcmp(argv[1], "real") && number_arg(argv[3], &n1) &&
	    (argc == 4 || (argc == 5 && (seconds = strtod(argv[4], NULL)) > 0))) {
	} else if (argc >= 5 && !strcmp(argv[1], "mutant") && number_arg(argv[3], &n1) &&
	           number_arg(argv[4], &n2) &&
	           (argc == 5 || (argc == 6 && (seconds = strtod(argv[5], NULL)) > 0))) {
	} else {
		return usage(argv[0]);
	}
	if ((rc = lock_env_open(&env, &sh, argv[2])))
		return rc;
	if ((rc = driver_start(&d, &sh))) {
		lock_env_close(&env, &sh);
		return rc;
	}
	rc = argv[1][0] == 'r' ? mode_real(&d, argv[2], n1, seconds)
	                       : mode_mutant(&d, argv[2], n1, n2, seconds);
	driver_stop(&d);
	lock_env_close(&env, &sh);
	return rc;
}
