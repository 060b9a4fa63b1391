/* SPDX-License-Identifier: MIT */
/*
 * test_threads.c - threads of one process contending on one lock, for every
 * algorithm: mutual exclusion (an atomic count of threads inside never goes
 * above 1; a plain counter loses no update) with lock, and with trylock and
 * timedlock mixed in; and a waiter blocked for a second on a held lock burns
 * almost no CPU (its own CLOCK_THREAD_CPUTIME_ID, measured from inside).
 * A thread cancelled while in libbakery calls is cancelled after them.
 * Threads with the smallest stack POSIX allows take a lock, in a crowd, in
 * a region of the most slots.  Slots in different words of a lock's active
 * set exclude one another.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <urcu/uatomic.h>

#include "unit.h"

#define THREADS 3
#define ITERATIONS 10000       /* per thread, at least */
#define YIELD_EVERY 32
#define MIN_HANDOFFS 100
/* A thread goes on past ITERATIONS until MIN_HANDOFFS hand-offs between
 * threads happened (a loaded machine may run the threads one after the
 * other for a while), up to this many passages: a lock that let so many
 * pass without ever admitting another thread starves its waiters. */
#define MAX_ITERATIONS (100 * ITERATIONS)

enum how { BY_LOCK, BY_MIXED };

struct arena {
	bakery_lock_t *l;
	enum how how;
	unsigned inside;           /* threads in the critical section now */
	unsigned long overlaps;    /* entries that found another thread inside */
	unsigned long counter;     /* plain: overlapping holders lose updates */
	unsigned last;             /* id of the previous holder */
	unsigned long handoffs;    /* entries right after another thread's */
	unsigned long entries;     /* atomic count of passages */
	int error;                 /* first unexpected return code */
	pthread_barrier_t start;   /* all begin together: real contention */
};

struct contender {
	pthread_t thread;
	struct arena *a;
	unsigned id;
};

/* lock, or (BY_MIXED) every third call a trylock or a short timedlock, retried */
static int acquire(struct arena *a, unsigned i)
{
	int rc;

	if (a->how == BY_LOCK || i % 3 == 0)
		return bakery_lock(a->l);
	do {
		if (i % 3 == 1) {
			rc = bakery_trylock(a->l);
		} else {
			struct timespec at = tk_in(CLOCK_MONOTONIC, 0.0002);
			rc = bakery_clocklock(a->l, CLOCK_MONOTONIC, &at);
		}
		if (rc == EBUSY)
			sched_yield();
	} while (rc == EBUSY || rc == ETIMEDOUT);
	return rc;
}

static void critical_section(struct arena *a, unsigned id, unsigned i)
{
	unsigned long c;

	if (uatomic_add_return(&a->inside, 1) != 1)
		uatomic_inc(&a->overlaps);
	c = CMM_LOAD_SHARED(a->counter);
	/* now and then give the CPU away while holding: even on one core the
	 * others then run into the held lock, and wait */
	if (i % YIELD_EVERY == 0)
		sched_yield();
	else
		caa_cpu_relax();
	CMM_STORE_SHARED(a->counter, c + 1);
	if (a->last != id)
		a->handoffs++;
	a->last = id;
	uatomic_inc(&a->entries);
	uatomic_dec(&a->inside);
}

static void *contender_main(void *arg)
{
	struct contender *c = arg;
	struct arena *a = c->a;

	pthread_barrier_wait(&a->start);
	for (unsigned i = 0; i < MAX_ITERATIONS; i++) {
		int rc = acquire(a, i + c->id);

		if (rc) {
			uatomic_cmpxchg(&a->error, 0, rc);
			break;
		}
		critical_section(a, c->id, i);
		rc = bakery_unlock(a->l);
		if (rc) {
			uatomic_cmpxchg(&a->error, 0, rc);
			break;
		}
		/* trylock and timedlock callers leave the line when they give up,
		 * so a releaser would take the lock straight back: step aside */
		if (a->how == BY_MIXED)
			sched_yield();
		if (i + 1 >= ITERATIONS && CMM_LOAD_SHARED(a->handoffs) >= MIN_HANDOFFS)
			break;
	}
	return NULL;
}

static void contend(int algo, enum how how)
{
	char name[TK_NAME_SIZE];
	struct arena a = { .how = how };
	struct contender c[THREADS];
	struct bakery_lock_info li;
	unsigned index;
	double t0;
	bakery_t *b = unit_region(name, "threads", THREADS + 1, 2);

	a.l = unit_lock(b, "contended", (enum bakery_algo)algo);
	pthread_barrier_init(&a.start, NULL, THREADS + 1);
	for (unsigned i = 0; i < THREADS; i++) {
		c[i] = (struct contender){ .a = &a, .id = i + 1 };
		ck_assert_int_eq(pthread_create(&c[i].thread, NULL, contender_main, &c[i]), 0);
	}
	t0 = tk_now(CLOCK_MONOTONIC);
	pthread_barrier_wait(&a.start);
	for (unsigned i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_join(c[i].thread, NULL), 0);
	pthread_barrier_destroy(&a.start);

	ck_assert_int_eq(bakery_lock_index(a.l, &index), 0);
	ck_assert_int_eq(bakery_lock_info(b, index, &li), 0);
	printf("%s (%s): %lu acquisitions, %lu hand-offs between threads, %llu give-ups, %.3f s\n",
	       bakery_algo_name((enum bakery_algo)algo), how == BY_LOCK ? "lock" : "mixed",
	       a.entries, a.handoffs, (unsigned long long)li.aborts,
	       tk_now(CLOCK_MONOTONIC) - t0);
	ck_assert_msg(a.error == 0, "a contender got %s", bakery_strerror(a.error));
	ck_assert_msg(a.overlaps == 0, "%lu entries found another thread inside", a.overlaps);
	ck_assert_uint_ge(a.entries, THREADS * ITERATIONS);
	ck_assert_uint_eq(a.counter, a.entries);
	/* the threads really took turns, not one after the other */
	ck_assert_uint_ge(a.handoffs, MIN_HANDOFFS);
	ck_assert(li.acquisitions == a.entries);
	ck_assert_int_eq(li.holder, -1);
	ck_assert_uint_eq(li.waiters, 0);
	bakery_lock_close(a.l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}

START_TEST(mutual_exclusion_by_lock)
{
	contend(_i, BY_LOCK);
}
END_TEST

START_TEST(mutual_exclusion_mixed_calls)
{
	contend(_i, BY_MIXED);
}
END_TEST

/* ---------------------------------------------------- waiting is cheap -- */

#define WAIT_S 1.0
#define CPU_LIMIT_S 0.05

struct sleeper {
	bakery_lock_t *l;
	int rc;
	double cpu, wall;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	double cpu0 = tk_now(CLOCK_THREAD_CPUTIME_ID), wall0 = tk_now(CLOCK_MONOTONIC);

	s->rc = bakery_lock(s->l);
	s->cpu = tk_now(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	s->wall = tk_now(CLOCK_MONOTONIC) - wall0;
	if (s->rc == 0)
		bakery_unlock(s->l);
	return NULL;
}

static bool sleeper_in_line(void *arg)
{
	struct bakery_lock_info li;

	return bakery_lock_info(arg, 0, &li) == 0 && li.waiters == 1;
}

START_TEST(blocked_waiter_burns_little_cpu)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	char name[TK_NAME_SIZE];
	struct sleeper s = { .rc = -1 };
	pthread_t th;
	bakery_t *b = unit_region(name, "cpu", 4, 1);

	s.l = unit_lock(b, "held", algo);   /* the only lock: index 0 */
	ck_assert_int_eq(bakery_lock(s.l), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, sleeper_main, &s), 0);
	ck_assert_msg(tk_wait_until(sleeper_in_line, b, 5), "the waiter never got in line");
	usleep((useconds_t)(WAIT_S * 1e6));
	ck_assert_int_eq(bakery_unlock(s.l), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);

	printf("%s: waiter blocked %.3f s used %.3f ms of CPU\n", bakery_algo_name(algo),
	       s.wall, s.cpu * 1e3);
	ck_assert_msg(s.rc == 0, "waiter: %s", bakery_strerror(s.rc));
	ck_assert_msg(s.wall > WAIT_S * 0.9, "waiter did not wait (%.3f s)", s.wall);
	ck_assert_msg(s.cpu < CPU_LIMIT_S, "waiter burned %.3f s of CPU in %.3f s",
	              s.cpu, s.wall);
	bakery_lock_close(s.l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* ------------------------------------------------------- cancellation -- */

struct cancelled {
	char name[TK_NAME_SIZE];
	bakery_t *b;
	bakery_lock_t *l;
	int open_rc, lock_open_rc, lock_rc, unlock_rc, info_rc;
	int done;
	/* here, not on the cancelled thread's stack: a forced unwind leaves
	 * AddressSanitizer's redzones of the unwound frame poisoned, and its
	 * own thread teardown then trips over them */
	struct bakery_slot_info si;
};

/* A thread with a cancellation pending before its calls: the calls complete
 * (cancellation is off inside them) and it is cancelled at its own next
 * cancellation point. */
static void *cancelled_main(void *arg)
{
	struct cancelled *c = arg;

	pthread_cancel(pthread_self());
	c->open_rc = bakery_open(c->name, BAKERY_CREATE | BAKERY_EXCL, NULL, &c->b);
	if (!c->open_rc)
		c->lock_open_rc = bakery_lock_open(c->b, "l", BAKERY_ALGO_DEFAULT, &c->l);
	if (!c->open_rc && !c->lock_open_rc) {
		c->lock_rc = bakery_lock(c->l);         /* claims a slot */
		c->unlock_rc = bakery_unlock(c->l);
		c->info_rc = bakery_slot_info(c->b, 0, &c->si);
	}
	c->done = 1;
	pthread_testcancel();
	return NULL;
}

START_TEST(cancellation_waits_for_the_call_to_end)
{
	struct cancelled c = { .open_rc = -1, .lock_open_rc = -1, .lock_rc = -1,
	                       .unlock_rc = -1, .info_rc = -1 };
	char other[TK_NAME_SIZE];
	pthread_t th;
	void *ret = NULL;
	bakery_t *b;

	tk_name(c.name, sizeof(c.name), "cancel");
	ck_assert_int_eq(pthread_create(&th, NULL, cancelled_main, &c), 0);
	ck_assert_int_eq(pthread_join(th, &ret), 0);
	ck_assert(ret == PTHREAD_CANCELED);
	ck_assert_msg(c.done, "cancelled inside a libbakery call (open %d, lock_open %d, "
	              "lock %d)", c.open_rc, c.lock_open_rc, c.lock_rc);
	ck_assert_int_eq(c.open_rc, 0);
	ck_assert_int_eq(c.lock_open_rc, 0);
	ck_assert_int_eq(c.lock_rc, 0);
	ck_assert_int_eq(c.unlock_rc, 0);
	ck_assert_int_eq(c.info_rc, 0);
	/* nothing left held: another creation goes through, the lock is free */
	b = unit_region(other, "aftercancel", 0, 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(other), 0);
	ck_assert_int_eq(bakery_lock(c.l), 0);
	ck_assert_int_eq(bakery_unlock(c.l), 0);
	ck_assert_int_eq(bakery_lock_close(c.l), 0);
	ck_assert_int_eq(bakery_close(c.b), 0);
	ck_assert_int_eq(bakery_unlink(c.name), 0);
}
END_TEST

/* -------------------------------------------------------- small stacks -- */

/*
 * Threads made with the smallest stack there is (PTHREAD_STACK_MIN, in a
 * mapping of our own with a guard page below it: an overflow is a SIGSEGV,
 * not a silent write into other memory) queue for a lock in a region of
 * BAKERY_MAX_SLOTS slots, all at once behind a holder, then take it in
 * turn a few times.  A doorway that kept an array of one entry per
 * possible slot on the stack (Jayanti's kept two, 16 KiB) overflows; the
 * crowd is large enough that the tokens a late doorway reads do not fit
 * in a small array on the stack either.
 */
#define SMALL_THREADS 40
#define SMALL_ROUNDS 10

struct small_stack {
	pthread_t thread;
	void *map;
	size_t size;
};

static void small_stack_start(struct small_stack *s, void *(*fn)(void *), void *arg)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_attr_t attr;

	s->size = PTHREAD_STACK_MIN + page;
	s->map = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
	              MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	ck_assert(s->map != MAP_FAILED);
	ck_assert_int_eq(mprotect(s->map, page, PROT_NONE), 0);         /* the guard page */
	ck_assert_int_eq(pthread_attr_init(&attr), 0);
	ck_assert_int_eq(pthread_attr_setstack(&attr, (char *)s->map + page, PTHREAD_STACK_MIN), 0);
	ck_assert_int_eq(pthread_create(&s->thread, &attr, fn, arg), 0);
	pthread_attr_destroy(&attr);
}

static void small_stack_join(struct small_stack *s)
{
	ck_assert_int_eq(pthread_join(s->thread, NULL), 0);
	munmap(s->map, s->size);
}

static void *small_stack_main(void *arg)
{
	struct arena *a = arg;

	for (unsigned r = 0; r < SMALL_ROUNDS; r++) {
		int rc = bakery_lock(a->l);

		if (rc) {
			uatomic_cmpxchg(&a->error, 0, rc);
			break;
		}
		if (uatomic_add_return(&a->inside, 1) != 1)
			uatomic_inc(&a->overlaps);
		uatomic_inc(&a->entries);
		uatomic_dec(&a->inside);
		if ((rc = bakery_unlock(a->l))) {
			uatomic_cmpxchg(&a->error, 0, rc);
			break;
		}
	}
	return NULL;
}

static bool crowd_in_line(void *arg)
{
	struct bakery_lock_info li;

	return bakery_lock_info(arg, 0, &li) == 0 && li.waiters == SMALL_THREADS;
}

START_TEST(small_stacks_in_the_largest_region)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "smallstack", BAKERY_MAX_SLOTS, 1);
	struct arena a = { .l = unit_lock(b, "crowd", (enum bakery_algo)_i) };
	struct small_stack s[SMALL_THREADS];

	ck_assert_int_eq(bakery_lock(a.l), 0);
	for (unsigned i = 0; i < SMALL_THREADS; i++)
		small_stack_start(&s[i], small_stack_main, &a);
	ck_assert_msg(tk_wait_until(crowd_in_line, b, 120), "the crowd never lined up");
	ck_assert_int_eq(bakery_unlock(a.l), 0);
	for (unsigned i = 0; i < SMALL_THREADS; i++)
		small_stack_join(&s[i]);
	ck_assert_msg(a.error == 0, "a small-stack thread got %s", bakery_strerror(a.error));
	ck_assert_uint_eq(a.overlaps, 0);
	ck_assert_uint_eq(a.entries, SMALL_THREADS * SMALL_ROUNDS);
	ck_assert_int_eq(bakery_lock_close(a.l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/*
 * A lock looked at by slots in different words of its active set, its only
 * members: the holder's slot in the second word and a trylock's in the
 * first, then the other way round.  The uncontended path skips its walks when the set has
 * nobody but the caller in it; a look that missed a member of another word,
 * or took its own bit for someone else's, would let the trylock in (or
 * keep it out of a free lock).
 */
#define FILLERS 69             /* slots 1-69: the far thread gets one >= 64 */

struct far_words {
	bakery_lock_t *l;
	bakery_lock_t *other;      /* the fillers' lock: slots, not members of l's set */
	pthread_barrier_t claimed, done;
	unsigned step;             /* main -> far: 1 take and hold, 2 release, 3 trylock */
	unsigned state;            /* far -> main: 1 holding, 2 released, 3 tried */
	int rc, try_rc;
};

static void *filler_main(void *arg)
{
	struct far_words *f = arg;

	/* a slot of its own, kept until the test ends, through another lock:
	 * not a member of f->l's active set */
	if (bakery_lock(f->other) == 0)
		bakery_unlock(f->other);
	pthread_barrier_wait(&f->claimed);
	pthread_barrier_wait(&f->done);
	return NULL;
}

static bool far_at(struct far_words *f, unsigned state)
{
	return uatomic_read(&f->state) == state;
}
static bool far_holding(void *arg) { return far_at(arg, 1); }
static bool far_released(void *arg) { return far_at(arg, 2); }
static bool far_tried(void *arg) { return far_at(arg, 3); }

static void far_wait_step(struct far_words *f, unsigned step)
{
	while (uatomic_read(&f->step) < step)
		usleep(1000);
}

static void *far_main(void *arg)
{
	struct far_words *f = arg;

	far_wait_step(f, 1);
	if ((f->rc = bakery_lock(f->l)) == 0) {
		uatomic_set(&f->state, 1);
		far_wait_step(f, 2);
		f->rc = bakery_unlock(f->l);
	}
	uatomic_set(&f->state, 2);
	far_wait_step(f, 3);
	if ((f->try_rc = bakery_trylock(f->l)) == 0)
		bakery_unlock(f->l);
	uatomic_set(&f->state, 3);
	return NULL;
}

START_TEST(slots_in_different_words_exclude)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "farwords", 128, 2);
	struct far_words f = { .l = unit_lock(b, "far", (enum bakery_algo)_i),
	                       .other = unit_lock(b, "fillers", (enum bakery_algo)_i) };
	pthread_t fill[FILLERS], far;
	struct bakery_lock_info li;

	ck_assert_int_eq(bakery_lock(f.l), 0);          /* slot 0: ours */
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(pthread_barrier_init(&f.claimed, NULL, FILLERS + 1), 0);
	ck_assert_int_eq(pthread_barrier_init(&f.done, NULL, FILLERS + 1), 0);
	for (unsigned i = 0; i < FILLERS; i++)
		ck_assert_int_eq(pthread_create(&fill[i], NULL, filler_main, &f), 0);
	pthread_barrier_wait(&f.claimed);
	ck_assert_int_eq(pthread_create(&far, NULL, far_main, &f), 0);

	/* the far slot holds; ours, in the first word, must not get in */
	uatomic_set(&f.step, 1);
	ck_assert_msg(tk_wait_until(far_holding, &f, 60), "the far thread never took the lock");
	li = unit_lock_info(b, 0);
	ck_assert_int_ge(li.holder, 64);
	ck_assert_int_eq(bakery_trylock(f.l), EBUSY);
	uatomic_set(&f.step, 2);
	ck_assert_msg(tk_wait_until(far_released, &f, 60), "the far thread never let go");
	ck_assert_int_eq(f.rc, 0);

	/* ours holds; the far slot's trylock must fail */
	ck_assert_int_eq(bakery_lock(f.l), 0);
	uatomic_set(&f.step, 3);
	ck_assert_msg(tk_wait_until(far_tried, &f, 60), "the far thread never tried");
	ck_assert_int_eq(f.try_rc, EBUSY);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	/* and nobody holds it now: the first word's slot gets it at once */
	ck_assert_int_eq(bakery_trylock(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);

	ck_assert_int_eq(pthread_join(far, NULL), 0);
	pthread_barrier_wait(&f.done);
	for (unsigned i = 0; i < FILLERS; i++)
		ck_assert_int_eq(pthread_join(fill[i], NULL), 0);
	pthread_barrier_destroy(&f.claimed);
	pthread_barrier_destroy(&f.done);
	ck_assert_int_eq(bakery_lock_close(f.l), 0);
	ck_assert_int_eq(bakery_lock_close(f.other), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

static Suite *threads_suite(void)
{
	Suite *s = suite_create("threads");
	TCase *tc = tcase_create("contention");
	TCase *cpu = tcase_create("waiting");

	/* a hang detector: a contended run takes 0.1-5 s here, and up to 50 s
	 * with the machine's load at 25 */
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, mutual_exclusion_by_lock, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, mutual_exclusion_mixed_calls, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, small_stacks_in_the_largest_region, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, slots_in_different_words_exclude, TK_ALGO_FIRST, TK_ALGO_END);
	suite_add_tcase(s, tc);

	tcase_set_timeout(cpu, 30);
	tcase_add_loop_test(cpu, blocked_waiter_burns_little_cpu, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_test(cpu, cancellation_waits_for_the_call_to_end);
	suite_add_tcase(s, cpu);
	return s;
}

int main(void)
{
	return unit_run(threads_suite());
}
