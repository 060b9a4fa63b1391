/* SPDX-License-Identifier: MIT */
/*
 * chaos-cancel.c - pthread_cancel at random moments, for every algorithm:
 * no leaked descriptor, mapping, slot or shm object, no lost exclusion.
 *
 * CANCEL_THREADS threads of this process loop over three kinds of passage
 * through one lock L of a region of CANCEL_SLOTS slots:
 *   - shared: bakery_lock (or a 0-1 ms bakery_clocklock) on the process's
 *     shared handle; the critical section holds a cancellation point, so a
 *     cancel requested while the thread waits (waiting is no cancellation
 *     point) acts in the critical section: the thread dies holding the lock
 *     (a cleanup handler leaves the occupancy object and counts it);
 *   - own: bakery_open (CREATE, the region exists) and bakery_lock_open of
 *     its own handles, a passage, bakery_lock_close and bakery_close; a
 *     cleanup handler unlocks and closes what is open, as an application
 *     would;
 *   - private: bakery_open(CREATE | EXCL) of a fresh region of its own, a
 *     passage there, close and unlink; the cleanup handler closes and
 *     unlinks it.
 * Every 0.5-5 ms the main thread cancels one at random (noting in which
 * phase it was: opening, waiting for the lock, critical section, closing),
 * joins it and starts a fresh one.  Then:
 *   - exclusion: no overlap seen by the occupancy object, no lost update;
 *   - progress (no hang): after the last cancel, every live thread makes
 *     passages within WAIT seconds;
 *   - owner deaths: exactly one per thread that died holding the lock, and
 *     as many EOWNERDEAD reported (a last passage takes the pending one);
 *     the lock ends consistent;
 *   - no leak: once every thread is joined and bakery_recover ran, no slot
 *     in use, as many descriptors and mappings as before the round, no
 *     private region or temporary object left in /dev/shm, and another
 *     process can create a region at once (no /dev/shm lock left held).
 * Thread stacks come from a pool the test allocates before it counts, and
 * malloc keeps one arena, so that thread churn does not move the counts.
 *
 *   chaos-cancel [SECONDS]      (default 1.5 per algorithm)
 *   BAKERY_CHAOS_SECONDS=N chaos-cancel
 *                               soak: rounds of every algorithm (at most
 *                               ROUND_MAX seconds each) for N seconds in all
 *
 * Exit status: 0 pass, 1 fail, 77 skip (under AddressSanitizer, which
 * misreports cleanup handlers run by cancellation), 99 hard error.
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#include "crashkit.h"

#define CANCEL_THREADS 6
#define CANCEL_SLOTS 32
#define STACK_SIZE (256 * 1024)
#define DEFAULT_SECONDS 1.5
#define ROUND_MAX 30.0
#define PROGRESS_PASSES 20
#define WAIT 20.0

enum phase { PH_IDLE, PH_OPEN, PH_LOCK, PH_CS, PH_CLOSE, PH_COUNT };

struct thread {
	pthread_t th;
	void *stack;
	uint64_t id;               /* occupancy ID, > 0, never reused */
	volatile int phase;
	uint64_t passes;
	struct occupancy private_occ;   /* of its private regions' lock */
	unsigned seed;
};

struct round {
	struct occupancy occ;
	char region[TK_NAME_SIZE];
	char private_prefix[TK_NAME_SIZE + 8];
	bakery_t *b;
	bakery_lock_t *l;
	volatile int stop;
	int err;                   /* first unexpected return of a call */
	uint64_t died_holding, owner_dead, passes;
	unsigned cancels, at[PH_COUNT];
};

static struct round *rd;
static struct thread pool[CANCEL_THREADS];
static uint64_t next_id = 1;
static int failed;

static void fail(const char *what, long long a, long long b)
{
	fprintf(stderr, "FAIL %s: %s (%lld, %lld)\n", rd->region, what, a, b);
	failed = 1;
}

static void note_error(int rc)
{
	uatomic_cmpxchg(&rd->err, 0, rc ? rc : -1);
}

/* ------------------------------------------------------------ passages -- */

static int take(bakery_lock_t *l, unsigned *seed)
{
	struct timespec at;
	int rc;

	for (;;) {
		if (rand_r(seed) % 4) {
			rc = bakery_lock(l);
		} else {
			at = tk_in(CLOCK_MONOTONIC, (double)(rand_r(seed) % 1000) / 1e6);
			rc = bakery_clocklock(l, CLOCK_MONOTONIC, &at);
		}
		if (rc != ETIMEDOUT && rc != BAKERY_ESLOTS && rc != EAGAIN)
			return rc;
		usleep(100);    /* a cancellation point; dead slots are being recovered */
	}
}

/* Inside the critical section (checked by OCC), with a cancellation point
 * in the middle. */
static void critical(struct occupancy *occ, struct thread *t, volatile int *holding)
{
	occupancy_in(occ, t->id, CRASH_OCC_PAUSE);
	pthread_testcancel();
	*holding = 0;
	occupancy_out(occ, t->id);
}

/* Acquire L as thread T, repair an owner death: false on an error. */
static bool enter(struct thread *t, bakery_lock_t *l, volatile int *holding)
{
	int rc;

	t->phase = PH_LOCK;
	rc = take(l, &t->seed);
	if (rc != 0 && rc != EOWNERDEAD) {
		note_error(rc);
		return false;
	}
	*holding = 1;
	t->phase = PH_CS;
	if (rc == EOWNERDEAD) {
		uatomic_inc(&rd->owner_dead);
		if (bakery_consistent(l))
			note_error(EINVAL);
	}
	return true;
}

struct shared_pass {
	struct thread *t;
	volatile int holding;
};

/* Cleanup of a shared passage: a thread cancelled inside dies holding. */
static void shared_cleanup(void *arg)
{
	struct shared_pass *s = arg;

	if (s->holding) {
		occupancy_out(&rd->occ, s->t->id);
		uatomic_inc(&rd->died_holding);
	}
}

static void shared_passage(struct thread *t)
{
	struct shared_pass s = { t, 0 };

	pthread_cleanup_push(shared_cleanup, &s);
	if (enter(t, rd->l, &s.holding)) {
		critical(&rd->occ, t, &s.holding);
		if (bakery_unlock(rd->l))
			note_error(EPERM);
		uatomic_inc(&t->passes);
	}
	pthread_cleanup_pop(0);
}

/* Handles a thread opened itself, closed by it or by its cleanup.  A
 * private region's lock has an occupancy object of its own. */
struct own {
	struct thread *t;
	struct occupancy *occ;
	bakery_t *b;
	bakery_lock_t *l;
	volatile int holding;
	char name[TK_NAME_SIZE + 32];   /* a private region to unlink, or "" */
};

static void own_cleanup(void *arg)
{
	struct own *o = arg;

	if (o->holding) {
		occupancy_out(o->occ, o->t->id);
		if (bakery_unlock(o->l))
			note_error(EPERM);
	}
	if (o->l && bakery_lock_close(o->l))
		note_error(EBUSY);
	if (o->b && bakery_close(o->b))
		note_error(EBUSY);
	if (o->name[0])
		bakery_unlink(o->name);
}

/* Open the shared region, or create O's private one. */
static int own_open(struct own *o)
{
	static const struct bakery_config cfg = { .slots = 4, .locks = 2 };

	if (!o->name[0])
		return bakery_open(rd->region, BAKERY_CREATE, NULL, &o->b);
	return bakery_open(o->name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &o->b);
}

/* A passage through handles of its own: of the shared region, or (PRIVATE)
 * of a region it creates and removes. */
static void own_passage(struct thread *t, bool private)
{
	struct own o = { .t = t, .occ = private ? &t->private_occ : &rd->occ };
	int rc;

	if (private)
		snprintf(o.name, sizeof(o.name), "%s%llu", rd->private_prefix,
		         (unsigned long long)t->id);
	pthread_cleanup_push(own_cleanup, &o);
	t->phase = PH_OPEN;
	rc = own_open(&o);
	if (!rc)
		rc = bakery_lock_open(o.b, CRASH_LOCK, BAKERY_ALGO_DEFAULT, &o.l);
	if (rc) {
		note_error(rc);
	} else {
		pthread_testcancel();
		if (enter(t, o.l, &o.holding)) {
			critical(o.occ, t, &o.holding);
			if (bakery_unlock(o.l))
				note_error(EPERM);
			uatomic_inc(&t->passes);
		}
		t->phase = PH_CLOSE;
		if (bakery_lock_close(o.l))
			note_error(EBUSY);
		o.l = NULL;
		if (bakery_close(o.b))
			note_error(EBUSY);
		o.b = NULL;
		if (o.name[0])
			bakery_unlink(o.name);
		o.name[0] = 0;
		pthread_testcancel();
	}
	pthread_cleanup_pop(0);
}

static void *thread_main(void *arg)
{
	struct thread *t = arg;

	while (!CMM_LOAD_SHARED(rd->stop) && !CMM_LOAD_SHARED(rd->err)) {
		unsigned r = (unsigned)rand_r(&t->seed) % 8;

		if (r == 0)
			own_passage(t, false);
		else if (r == 1)
			own_passage(t, true);
		else
			shared_passage(t);
		t->phase = PH_IDLE;
		for (unsigned i = rand_r(&t->seed) % 400; i; i--)
			caa_cpu_relax();
	}
	return NULL;
}

/* ------------------------------------------------------------- threads -- */

static void start_fn(struct thread *t, void *(*fn)(void *))
{
	pthread_attr_t a;

	t->id = next_id++;
	t->phase = PH_IDLE;
	t->passes = 0;
	t->seed = (unsigned)t->id * 2654435761u;
	if (pthread_attr_init(&a) || pthread_attr_setstack(&a, t->stack, STACK_SIZE) ||
	    pthread_create(&t->th, &a, fn, t)) {
		fprintf(stderr, "cannot start a thread\n");
		exit(99);
	}
	pthread_attr_destroy(&a);
}

static void start(struct thread *t)
{
	start_fn(t, thread_main);
}

static void cancel_one(struct thread *t)
{
	int ph = t->phase;

	pthread_cancel(t->th);
	pthread_join(t->th, NULL);
	rd->cancels++;
	rd->at[ph < PH_COUNT ? ph : PH_IDLE]++;
	uatomic_add(&rd->passes, t->passes);
	start(t);
}

/* Every thread makes PROGRESS_PASSES passages from now on. */
static bool progress(void)
{
	uint64_t from[CANCEL_THREADS], end = tk_ns() + (uint64_t)(WAIT * 1e9);
	int k;

	for (k = 0; k < CANCEL_THREADS; k++)
		from[k] = uatomic_read(&pool[k].passes);
	for (k = 0; k < CANCEL_THREADS && tk_ns() < end && !CMM_LOAD_SHARED(rd->err);)
		if (uatomic_read(&pool[k].passes) >= from[k] + PROGRESS_PASSES)
			k++;
		else
			usleep(1000);
	return k == CANCEL_THREADS;
}

static void *one_passage(void *arg)
{
	shared_passage(arg);
	return NULL;
}

/* One passage by a fresh thread (on a stack of the pool, whose threads are
 * joined): takes an EOWNERDEAD still pending. */
static void last_passage(void)
{
	start_fn(&pool[0], one_passage);
	pthread_join(pool[0].th, NULL);
	rd->passes += pool[0].passes;
}

/* ---------------------------------------------------------------- checks -- */

static int create_run(void *arg)
{
	bakery_t *b;
	int rc = bakery_open(arg, BAKERY_CREATE | BAKERY_EXCL, NULL, &b);

	if (!rc)
		bakery_close(b);
	bakery_unlink(arg);
	return rc ? 1 : 0;
}

/* Another process can create a region at once: no /dev/shm lock held. */
static void check_create_elsewhere(void)
{
	char name[TK_NAME_SIZE];

	tk_name(name, sizeof(name), "elsewhere");
	if (tk_reap(crash_fork(create_run, name, NULL), WAIT) != 0)
		fail("another process could not create a region", 0, 0);
}

/* Once every thread is joined and recovery ran, no slot is in use. */
static void check_slots(void)
{
	unsigned reclaimed = 0, n;

	if (crash_recover_in_child(rd->region, &reclaimed))
		fail("bakery_recover failed", 0, 0);
	if ((n = crash_slots_used(rd->b)) != 0)
		fail("slots left in use", n, reclaimed);
}

/* Once the region's handle is closed: as many descriptors and mappings as
 * before it was opened, nothing left in /dev/shm. */
static void check_leaks(unsigned fds, unsigned maps)
{
	unsigned n;

	if ((n = crash_count_fds()) != fds)
		fail("descriptors leaked (after, before)", n, fds);
	if (CRASH_MAPS_COMPARABLE && (n = crash_count_maps()) != maps)
		fail("mappings leaked (after, before)", n, maps);
	if ((n = crash_shm_objects(rd->private_prefix)) != 0)
		fail("private regions left in /dev/shm", n, 0);
	if ((n = crash_orphans(rd->region)) != 0)
		fail("temporary objects left in /dev/shm", n, 0);
	check_create_elsewhere();
}

static void check_lock(void)
{
	struct bakery_lock_info li = crash_lock_info(rd->b, rd->l);

	if (rd->occ.violations)
		fail("overlaps in the critical section", (long long)rd->occ.violations, 0);
	if (rd->occ.counter != rd->occ.entries)
		fail("lost updates", (long long)rd->occ.counter, (long long)rd->occ.entries);
	if (li.owner_deaths != rd->died_holding)
		fail("owner deaths != threads that died holding", (long long)li.owner_deaths,
		     (long long)rd->died_holding);
	if (rd->owner_dead != rd->died_holding)
		fail("EOWNERDEAD != threads that died holding", (long long)rd->owner_dead,
		     (long long)rd->died_holding);
	if (li.owner_dead || li.not_recoverable)
		fail("the lock ended inconsistent", li.owner_dead, li.not_recoverable);
}

/* -------------------------------------------------------------- rounds -- */

static struct {
	unsigned rounds, cancels, at[PH_COUNT];
	uint64_t passes, died_holding, violations;
} sum;

static void open_round(enum bakery_algo algo)
{
	int err;

	memset(rd, 0, sizeof(*rd));
	tk_name(rd->region, TK_NAME_SIZE, "cancel");
	snprintf(rd->private_prefix, sizeof(rd->private_prefix), "%s-p", rd->region);
	err = crash_create(rd->region, CANCEL_SLOTS, &rd->b);
	if (!err)
		err = bakery_lock_open(rd->b, CRASH_LOCK, algo, &rd->l);
	if (err) {
		fprintf(stderr, "%s: %s\n", rd->region, bakery_strerror(err));
		exit(99);
	}
}

static void *pause_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* The library's first-use state (its SIGBUS handler, its thread key) and
 * the C library's (the unwinder a first cancellation loads), before any
 * count is taken. */
static void warm_up(void)
{
	start_fn(&pool[0], pause_forever);
	pthread_cancel(pool[0].th);
	pthread_join(pool[0].th, NULL);
	open_round(BAKERY_ALGO_DEFAULT);
	last_passage();
	bakery_lock_close(rd->l);
	bakery_close(rd->b);
	bakery_unlink(rd->region);
}

static void run_algo(enum bakery_algo algo, double seconds)
{
	unsigned fds, maps;
	uint64_t end;

	/* before the region: its handle keeps token windows for reuse until
	 * it is closed */
	fds = crash_count_fds();
	maps = crash_count_maps();
	open_round(algo);
	for (int k = 0; k < CANCEL_THREADS; k++)
		start(&pool[k]);
	end = tk_ns() + (uint64_t)(seconds * 1e9);
	while (tk_ns() < end && !rd->err) {
		tk_sleep_ms(0.5 + (rand() % 45) / 10.0);
		cancel_one(&pool[rand() % CANCEL_THREADS]);
	}
	if (!progress()) {
		/* the threads cannot be joined: waiting for a lock is no
		 * cancellation point */
		fail("no progress after the last cancel", rd->cancels, rd->err);
		tk_run_end();
		exit(1);
	}
	CMM_STORE_SHARED(rd->stop, 1);
	for (int k = 0; k < CANCEL_THREADS; k++) {
		pthread_join(pool[k].th, NULL);
		rd->passes += pool[k].passes;
	}
	if (rd->err)
		fail("a call failed", rd->err, 0);
	last_passage();
	check_lock();
	check_slots();
	printf("%-12s %4.1f s  cancels %5u (between %u, open %u, lock %u, cs %u, close %u)  died "
	       "holding %4llu  acquisitions %7llu  EOWNERDEAD %4llu  violations %llu\n",
	       bakery_algo_name(algo), seconds, rd->cancels, rd->at[PH_IDLE], rd->at[PH_OPEN],
	       rd->at[PH_LOCK], rd->at[PH_CS], rd->at[PH_CLOSE],
	       (unsigned long long)rd->died_holding, (unsigned long long)rd->passes,
	       (unsigned long long)rd->owner_dead, (unsigned long long)rd->occ.violations);
	sum.rounds++;
	sum.cancels += rd->cancels;
	for (int p = 0; p < PH_COUNT; p++)
		sum.at[p] += rd->at[p];
	sum.passes += rd->passes;
	sum.died_holding += rd->died_holding;
	sum.violations += rd->occ.violations;
	if (bakery_lock_close(rd->l) || bakery_close(rd->b))
		fail("the test's handles did not close", 0, 0);
	check_leaks(fds, maps);
	bakery_unlink(rd->region);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : DEFAULT_SECONDS;
	uint64_t end;

	if (seconds <= 0 || seconds > 600) {
		fprintf(stderr, "usage: %s [SECONDS per algorithm]\n", argv[0]);
		return 99;
	}
#if defined(__SANITIZE_ADDRESS__)
	/* a known false report of AddressSanitizer: when a cancelled thread
	 * runs its pthread_cleanup_push handlers, it finds a "stack buffer
	 * overflow" in its own sigaltstack call (google/sanitizers issue
	 * 1399) */
	printf("SKIP: AddressSanitizer misreports cancellation cleanup handlers\n");
	return 77;
#endif
	srand((unsigned)getpid());
	tk_run_begin();
	mallopt(M_ARENA_MAX, 1);        /* no per-thread arenas: stable mappings */
	rd = calloc(1, sizeof(*rd));
	for (int k = 0; k < CANCEL_THREADS; k++)
		pool[k].stack = aligned_alloc(4096, STACK_SIZE);
	if (!rd || !pool[CANCEL_THREADS - 1].stack)
		return 99;
	if (crash_chaos_soak())
		seconds = crash_chaos_seconds(0) / CRASH_NALGOS < ROUND_MAX ?
		          crash_chaos_seconds(0) / CRASH_NALGOS : ROUND_MAX;
	end = tk_ns() + (uint64_t)(crash_chaos_seconds(0) * 1e9);
	warm_up();
	printf("chaos-cancel: %d threads, %d slots, a pthread_cancel every 0.5-5 ms\n",
	       CANCEL_THREADS, CANCEL_SLOTS);
	do
		for (unsigned i = 0; i < CRASH_NALGOS && !failed; i++)
			run_algo(crash_algos[i], seconds);
	while (crash_chaos_soak() && tk_ns() < end && !failed);
	printf("chaos-cancel total: %u configurations, %u cancels (between %u, open %u, lock %u, "
	       "cs %u, close %u), %llu died holding, %llu acquisitions, %llu violations: %s\n",
	       sum.rounds, sum.cancels, sum.at[PH_IDLE], sum.at[PH_OPEN], sum.at[PH_LOCK],
	       sum.at[PH_CS], sum.at[PH_CLOSE], (unsigned long long)sum.died_holding,
	       (unsigned long long)sum.passes, (unsigned long long)sum.violations,
	       failed ? "FAIL" : "ok");
	tk_run_end();
	return failed ? 1 : 0;
}
