/* SPDX-License-Identifier: MIT */
/*
 * test_shared_stress.c - readers, writers and k holders in processes of
 * their own, checked by an occupancy object that does not trust the lock
 * (tests/common/rw_occupancy.h):
 *   - mixed readers and writers hammering: a writer never overlaps anyone;
 *   - readers do overlap: R readers hold until all R are inside at once
 *     (a lock that admitted one reader at a time never gets there);
 *   - k holders: never more than k inside, and k inside at once when k
 *     want in (the same gate), the (k+1)th kept out meanwhile;
 *   - neither side starves, measured in entries, not time: while a writer
 *     is waiting (its doorway done, seen through its slot's stage), each
 *     reader gets in at most once (a reader that saw it waiting takes its
 *     next ticket after it), so a writer is bypassed by at most R reader
 *     entries per passage; the same for a reader among W writers.  A
 *     taker of a k-holder lock among N others hammering without end makes
 *     all its passages (an entry bound does not hold there: a later ticket
 *     may enter before an earlier one whose turn has come but that has not
 *     run yet).
 * Every wait here is for an event, with a generous limit that only a
 * broken lock reaches.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <check.h>

#include "../common/rw_occupancy.h"
#include "../common/tk.h"

#define LOCK "rw"
#define MAXP 8
#define LIMIT 60.0      /* seconds: only a broken lock waits this long */

static const enum bakery_algo shared_algos[] = {
	BAKERY_ALGO_LAMPORT, BAKERY_ALGO_BOULANGERIE, BAKERY_ALGO_BLACK_WHITE,
};
static const enum bakery_algo holder_algos[] = {
	BAKERY_ALGO_LAMPORT, BAKERY_ALGO_BOULANGERIE,
};
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* the test's memory, shared with its children */
struct arena {
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	unsigned holders;
	struct rw_occupancy occ;
	volatile int release;      /* holders at the gate may leave        */
	volatile int stop;         /* the hammering side may stop          */
	volatile int watched;      /* slot of the waiter measured, -1 none */
	uint64_t bypass;           /* entries while the watched one waited */
	uint64_t worst_bypass;     /* most bypass entries in one passage   */
	uint64_t watched_passages;
	uint64_t want_inside;      /* count_reached's target               */
	struct child {
		bool shared;
		unsigned passages;     /* 0: until `stop`                      */
		unsigned write_every;  /* mixed: every n-th passage writes     */
		bool gate;             /* hold until `release`                 */
		bool watch;            /* the measured waiter                  */
		int rc;                /* first unexpected return              */
	} child[MAXP];
};

struct run {
	struct arena *a;
	unsigned k;                /* the child's index */
	bakery_t *b;
	bakery_lock_t *l;
};

static struct arena *arena_new(enum bakery_algo algo, unsigned holders)
{
	struct bakery_config cfg = { .slots = 16, .locks = 2 };
	struct bakery_lock_config lc = { .algo = algo, .holders = holders };
	struct arena *a = tk_shared(sizeof(*a));
	bakery_lock_t *l;
	bakery_t *b;

	tk_name(a->region, sizeof(a->region), "rwstress");
	a->algo = algo;
	a->holders = holders;
	a->watched = -1;
	ck_assert_int_eq(bakery_open(a->region, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b), 0);
	ck_assert_int_eq(bakery_lock_open_config(b, LOCK, &lc, &l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	return a;
}

static void arena_free(struct arena *a)
{
	ck_assert_int_eq(bakery_unlink(a->region), 0);
	munmap(a, sizeof(*a));
}

/* ------------------------------------------------------------- children -- */

static int my_slot(bakery_t *b)
{
	struct bakery_slot_info si;

	for (unsigned i = 0; i < 16; i++)
		if (bakery_slot_info(b, i, &si) == 0 && si.state == BAKERY_SLOT_ACTIVE &&
		    si.pid == getpid() && si.tid == tk_gettid())
			return (int)i;
	return -1;
}

/* Inside, not the watched one: count an entry made while it waits. */
static void note_bypass(struct run *r)
{
	int w = CMM_LOAD_SHARED(r->a->watched);
	struct bakery_slot_info si;

	if (w >= 0 && bakery_slot_info(r->b, (unsigned)w, &si) == 0 &&
	    si.pass == BAKERY_PASS_WAITING)
		uatomic_inc(&r->a->bypass);
}

/* Inside, the watched one: the entries that bypassed this passage.  The
 * bypassers incremented before they unlocked, which happens-before our
 * entry. */
static void take_bypass(struct run *r)
{
	uint64_t n = uatomic_xchg(&r->a->bypass, 0);

	if (n > r->a->worst_bypass)
		r->a->worst_bypass = n;
	r->a->watched_passages++;
}

static void wait_release(struct arena *a)
{
	for (unsigned i = 0; !CMM_LOAD_SHARED(a->release) && i < LIMIT * 10000; i++)
		usleep(100);
}

static int passage(struct run *r, bool shared)
{
	struct child *c = &r->a->child[r->k];
	struct timespec at = tk_in(CLOCK_MONOTONIC, LIMIT);
	int rc = shared ? bakery_clockrdlock(r->l, CLOCK_MONOTONIC, &at)
	                : bakery_clocklock(r->l, CLOCK_MONOTONIC, &at);

	if (rc)
		return rc;
	rw_occupancy_in(&r->a->occ, shared, r->a->holders ? r->a->holders : 1);
	if (c->watch)
		take_bypass(r);
	else
		note_bypass(r);
	if (c->gate)
		wait_release(r->a);
	/* stay a while, letting the others run: arrivals meet us inside */
	for (unsigned i = 0; i < 3; i++)
		sched_yield();
	rw_occupancy_out(&r->a->occ, shared);
	return bakery_unlock(r->l);
}

static int child_main(void *arg)
{
	struct run *r = arg;
	struct child *c = &r->a->child[r->k];
	struct bakery_lock_config lc = { .algo = r->a->algo };
	int rc = 0;

	if (bakery_open(r->a->region, 0, NULL, &r->b) ||
	    bakery_lock_open_config(r->b, LOCK, &lc, &r->l))
		return 1;
	if (c->watch) {
		/* a first passage gives us our slot, to publish */
		if ((rc = passage(r, c->shared)))
			goto out;
		CMM_STORE_SHARED(r->a->watched, my_slot(r->b));
		r->a->worst_bypass = 0;
		r->a->watched_passages = 0;
	}
	for (unsigned n = 0; c->passages ? n < c->passages : !CMM_LOAD_SHARED(r->a->stop); n++) {
		bool shared = c->write_every ? (n + r->k) % c->write_every != 0 : c->shared;

		if ((rc = passage(r, shared)))
			break;
	}
out:
	if (c->watch)
		CMM_STORE_SHARED(r->a->stop, 1);
	c->rc = rc;
	return rc ? 2 : 0;
}

static pid_t start(struct arena *a, unsigned k)
{
	static struct run runs[MAXP];

	runs[k] = (struct run){ .a = a, .k = k };
	return tk_fork(child_main, &runs[k]);
}

static void expect_exit(struct arena *a, pid_t pid, unsigned k)
{
	int st = tk_reap(pid, LIMIT * 2);

	ck_assert_msg(st == 0, "%s: child %u ended %d (rc %s)", bakery_algo_name(a->algo), k, st,
	              bakery_strerror(a->child[k].rc));
}

static void expect_no_violation(struct arena *a)
{
	ck_assert_msg(a->occ.violations == 0, "%s: %llu overlaps (max readers %llu, holders %llu)",
	              bakery_algo_name(a->algo), (unsigned long long)a->occ.violations,
	              (unsigned long long)a->occ.max_readers, (unsigned long long)a->occ.max_holders);
	ck_assert_uint_eq(a->occ.state, 0);
}

static bool count_reached(void *arg)
{
	struct arena *a = arg;
	uint64_t s = uatomic_read(&a->occ.state);

	return rw_occ_readers(s) + rw_occ_holders(s) >= a->want_inside;
}

/* Inside now: readers + holders reached N, within LIMIT. */
static bool wait_inside(struct arena *a, unsigned n)
{
	a->want_inside = n;
	return tk_wait_until(count_reached, a, LIMIT);
}

/* ------------------------------------------------------------- the tests -- */

/* Four processes, one passage in five a write. */
START_TEST(mixed_readers_and_writers)
{
	struct arena *a = arena_new(shared_algos[_i], 0);
	pid_t pid[4];

	for (unsigned k = 0; k < 4; k++) {
		a->child[k] = (struct child){ .passages = 300, .write_every = 5 };
		pid[k] = start(a, k);
	}
	for (unsigned k = 0; k < 4; k++)
		expect_exit(a, pid[k], k);
	expect_no_violation(a);
	ck_assert_uint_eq(a->occ.reads + a->occ.writes, 4 * 300);
	ck_assert_uint_eq(a->occ.writes, 4 * 300 / 5);
	ck_assert_uint_eq(a->occ.max_holders, 1);
	arena_free(a);
}
END_TEST

/* Three readers hold at a gate until the test has seen all three inside;
 * a writer arriving meanwhile waits for them all. */
START_TEST(readers_overlap)
{
	enum { R = 3 };
	struct arena *a = arena_new(shared_algos[_i], 0);
	pid_t pid[R + 1];
	bakery_lock_t *l;
	bakery_t *b;

	for (unsigned k = 0; k < R; k++) {
		a->child[k] = (struct child){ .shared = true, .passages = 1, .gate = true };
		pid[k] = start(a, k);
	}
	ck_assert_msg(wait_inside(a, R), "%s: never %d readers inside at once (%llu)",
	              bakery_algo_name(a->algo), R, (unsigned long long)a->occ.max_readers);
	a->child[R] = (struct child){ .passages = 1 };
	pid[R] = start(a, R);
	/* a writer of our own is refused while they read */
	ck_assert_int_eq(bakery_open(a->region, 0, NULL, &b), 0);
	ck_assert_int_eq(bakery_lock_open(b, LOCK, BAKERY_ALGO_DEFAULT, &l), 0);
	ck_assert_int_eq(bakery_trylock(l), EBUSY);
	tk_sleep_ms(20);
	ck_assert_uint_eq(a->occ.writes, 0);
	CMM_STORE_SHARED(a->release, 1);
	for (unsigned k = 0; k <= R; k++)
		expect_exit(a, pid[k], k);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	expect_no_violation(a);
	ck_assert_uint_eq(a->occ.max_readers, R);
	ck_assert_uint_eq(a->occ.writes, 1);
	arena_free(a);
}
END_TEST

/* k = 3: k holders at a gate until all k are inside at once; a (k+1)th
 * waits meanwhile and gets in after. */
START_TEST(k_inside_at_once)
{
	enum { K = 3 };
	struct arena *a = arena_new(holder_algos[_i], K);
	pid_t pid[K + 1];

	for (unsigned k = 0; k < K; k++) {
		a->child[k] = (struct child){ .passages = 1, .gate = true };
		pid[k] = start(a, k);
	}
	ck_assert_msg(wait_inside(a, K), "%s: never %d holders inside at once (%llu)",
	              bakery_algo_name(a->algo), K, (unsigned long long)a->occ.max_holders);
	a->child[K] = (struct child){ .passages = 1 };
	pid[K] = start(a, K);
	tk_sleep_ms(50);
	ck_assert_uint_eq(a->occ.writes, K);           /* the last one waits */
	CMM_STORE_SHARED(a->release, 1);
	for (unsigned k = 0; k <= K; k++)
		expect_exit(a, pid[k], k);
	expect_no_violation(a);
	ck_assert_uint_eq(a->occ.max_holders, K);
	ck_assert_uint_eq(a->occ.writes, K + 1);
	arena_free(a);
}
END_TEST

/* k = 2, five processes hammering: never more than 2 inside. */
START_TEST(k_holders_hammering)
{
	struct arena *a = arena_new(holder_algos[_i], 2);
	pid_t pid[5];

	for (unsigned k = 0; k < 5; k++) {
		a->child[k] = (struct child){ .passages = 200 };
		pid[k] = start(a, k);
	}
	for (unsigned k = 0; k < 5; k++)
		expect_exit(a, pid[k], k);
	expect_no_violation(a);
	ck_assert_uint_eq(a->occ.writes, 5 * 200);
	ck_assert_uint_le(a->occ.max_holders, 2);
	arena_free(a);
}
END_TEST

/*
 * One watched waiter among N others of the opposite kind that hammer
 * until it is done: it makes PASSAGES passages, and no passage of it is
 * bypassed by more than N entries.
 */
static void bounded_bypass(enum bakery_algo algo, bool watched_shared, unsigned n,
                           unsigned holders)
{
	struct arena *a = arena_new(algo, holders);
	pid_t pid[MAXP];

	a->child[0] = (struct child){ .shared = watched_shared, .passages = 40, .watch = true };
	for (unsigned k = 1; k <= n; k++)
		a->child[k] = (struct child){ .shared = !watched_shared && !holders };
	for (unsigned k = 0; k <= n; k++)
		pid[k] = start(a, k);
	for (unsigned k = 0; k <= n; k++)
		expect_exit(a, pid[k], k);
	ck_assert_uint_eq(a->watched_passages, 40);
	/* With k > 1 holders a later ticket rightly enters before an earlier
	 * one whose turn has come (fewer than k ahead of it) but that has not
	 * run yet: nobody has to wait for it, so the entries it misses are
	 * bounded by its scheduling, not by the lock.  No starvation is the
	 * 40 passages above, made while the others hammer without end. */
	if (holders > 1) {
		printf("%s: a waiting k-holder was bypassed by at most %llu entries\n",
		       bakery_algo_name(algo), (unsigned long long)a->worst_bypass);
		expect_no_violation(a);
		arena_free(a);
		return;
	}
	ck_assert_msg(a->worst_bypass <= n,
	              "%s: a waiting %s was bypassed by %llu entries of the others (bound %u)",
	              bakery_algo_name(algo),
	              holders ? "k-holder" : watched_shared ? "reader" : "writer",
	              (unsigned long long)a->worst_bypass, n);
	expect_no_violation(a);
	arena_free(a);
}

START_TEST(a_reader_storm_does_not_starve_a_writer)
{
	bounded_bypass(shared_algos[_i], false, 3, 0);
}
END_TEST

START_TEST(a_writer_stream_does_not_starve_a_reader)
{
	bounded_bypass(shared_algos[_i], true, 3, 0);
}
END_TEST

/* k = 2, a taker among four hammering without end: it makes its 40
 * passages (the entry count is reported, not bounded: see bounded_bypass) */
START_TEST(k_holders_do_not_starve)
{
	bounded_bypass(holder_algos[_i], false, 4, 2);
}
END_TEST

static Suite *stress_suite(void)
{
	Suite *s = suite_create("shared-stress");
	TCase *ex = tcase_create("exclusion");
	TCase *st = tcase_create("starvation");

	tcase_set_timeout(ex, 240);
	tcase_set_timeout(st, 240);
	tcase_add_loop_test(ex, mixed_readers_and_writers, 0, NELEM(shared_algos));
	tcase_add_loop_test(ex, readers_overlap, 0, NELEM(shared_algos));
	tcase_add_loop_test(ex, k_inside_at_once, 0, NELEM(holder_algos));
	tcase_add_loop_test(ex, k_holders_hammering, 0, NELEM(holder_algos));
	tcase_add_loop_test(st, a_reader_storm_does_not_starve_a_writer, 0, NELEM(shared_algos));
	tcase_add_loop_test(st, a_writer_stream_does_not_starve_a_reader, 0, NELEM(shared_algos));
	tcase_add_loop_test(st, k_holders_do_not_starve, 0, NELEM(holder_algos));
	suite_add_tcase(s, ex);
	suite_add_tcase(s, st);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(stress_suite());
	int failed;

	tk_run_begin();
	srunner_run_all(sr, CK_NORMAL);
	tk_run_end();
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
