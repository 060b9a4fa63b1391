/* SPDX-License-Identifier: MIT */
/*
 * test_shared.c - the shared (reader) mode and locks of k holders, from the
 * API: which algorithms support what (ENOTSUP), bad configurations
 * (EINVAL), joining with another capacity (BAKERY_EALGO), EDEADLK, EBUSY
 * and ETIMEDOUT for readers, the introspection fields (capacity, holding,
 * readers, reader_deaths, a slot's `shared`), owner death as a reader sees
 * it, a SIGKILLed reader's share given back without owner-died, a
 * SIGKILLed k-holder's unit given back with owner-died, and what a waiter
 * stopped in line (SIGSTOP) holds up in each mode: for less than the grace
 * G, then it is passed (a reader by a writer, a k-holder taker by a taker
 * behind it) and, continued, takes a new place in line.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/uatomic.h>

#include "unit.h"

/* the algorithms with a shared mode, and those that count k holders */
static const enum bakery_algo shared_algos[] = {
	BAKERY_ALGO_LAMPORT, BAKERY_ALGO_BOULANGERIE, BAKERY_ALGO_BLACK_WHITE,
};
static const enum bakery_algo holder_algos[] = {
	BAKERY_ALGO_LAMPORT, BAKERY_ALGO_BOULANGERIE,
};
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void fixture_open(struct unit_fixture *f, enum bakery_algo algo, unsigned holders)
{
	const struct bakery_lock_config cfg = { .algo = algo, .holders = holders };

	unit_fixture_open_config(f, "shared", 8, 8, "shared", &cfg);
}

/* ---------------------------------------------- a holder in either mode -- */

struct mode_holder {
	pthread_t thread;
	bakery_lock_t *lock;
	bool shared;
	int lock_rc, unlock_rc, slot;
	bakery_t *b;
	struct tk_gate held, release;
};

static void *mode_holder_main(void *arg)
{
	struct mode_holder *h = arg;

	h->lock_rc = h->shared ? bakery_rdlock(h->lock) : bakery_lock(h->lock);
	h->slot = tk_self_slot(h->b);
	tk_gate_open(&h->held);
	tk_gate_wait(&h->release, 60);
	h->unlock_rc = bakery_unlock(h->lock);
	return NULL;
}

/* A thread that holds F's lock (shared or not) until mode_holder_stop;
 * returns once it holds it, the rc it got is WANT. */
static void mode_holder_start(struct mode_holder *h, struct unit_fixture *f, bool shared, int want)
{
	h->lock = f->l;
	h->b = f->b;
	h->shared = shared;
	h->lock_rc = h->unlock_rc = -1;
	tk_gate_init(&h->held);
	tk_gate_init(&h->release);
	ck_assert_int_eq(pthread_create(&h->thread, NULL, mode_holder_main, h), 0);
	ck_assert_msg(tk_gate_wait(&h->held, 10), "holder thread never got the lock");
	ck_assert_msg(h->lock_rc == want, "holder's %s: %s", shared ? "rdlock" : "lock",
	              bakery_strerror(h->lock_rc));
}

static void mode_holder_stop(struct mode_holder *h)
{
	tk_gate_open(&h->release);
	ck_assert_int_eq(pthread_join(h->thread, NULL), 0);
	ck_assert_msg(h->unlock_rc == 0, "holder's unlock: %s", bakery_strerror(h->unlock_rc));
	tk_gate_close(&h->held);
	tk_gate_close(&h->release);
}

/* A process of its own holding F's lock (shared or not) until killed. */
struct holder_process {
	const char *region;
	enum bakery_algo algo;
	bool shared;
	struct tk_gate held;
};

static int holder_process_main(void *arg)
{
	struct holder_process *h = arg;
	struct bakery_lock_config cfg = { .algo = h->algo };
	bakery_lock_t *l;
	bakery_t *b;
	int rc;

	if (bakery_open(h->region, 0, NULL, &b) || bakery_lock_open_config(b, "shared", &cfg, &l))
		return 1;
	rc = h->shared ? bakery_rdlock(l) : bakery_lock(l);
	if (rc != 0 && rc != EOWNERDEAD)
		return 2;
	tk_gate_open(&h->held);
	sleep(60);
	return 3;
}

static pid_t holder_process(struct unit_fixture *f, bool shared)
{
	struct holder_process h = { f->name, f->algo, shared, { { -1, -1 } } };
	pid_t pid;
	bool held;

	tk_gate_init(&h.held);
	pid = tk_fork(holder_process_main, &h);
	held = tk_gate_wait(&h.held, 10);
	tk_gate_close(&h.held);
	if (!held)
		tk_kill(pid);
	ck_assert_msg(held, "the holder process never took the lock");
	return pid;
}

/* ------------------------------------------------------ what is refused -- */

START_TEST(jayanti_has_no_shared_mode)
{
	struct unit_fixture f;
	struct timespec at = tk_in(CLOCK_REALTIME, 1);
	struct timespec mono = tk_in(CLOCK_MONOTONIC, 1);

	fixture_open(&f, BAKERY_ALGO_JAYANTI, 0);
	ck_assert_int_eq(bakery_rdlock(f.l), ENOTSUP);
	ck_assert_int_eq(bakery_tryrdlock(f.l), ENOTSUP);
	ck_assert_int_eq(bakery_timedrdlock(f.l, &at), ENOTSUP);
	ck_assert_int_eq(bakery_clockrdlock(f.l, CLOCK_MONOTONIC, &mono), ENOTSUP);
	/* the exclusive calls still work, and nothing was left behind */
	ck_assert_int_eq(bakery_lock(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_uint_eq(unit_fixture_info(&f).waiters, 0);
	unit_fixture_close(&f);
}
END_TEST

/* Black-White and Jayanti cannot count holders; a k-holder lock has no
 * shared mode */
START_TEST(what_cannot_count_holders)
{
	const struct bakery_lock_config bw = { .algo = BAKERY_ALGO_BLACK_WHITE, .holders = 2 };
	const struct bakery_lock_config jy = { .algo = BAKERY_ALGO_JAYANTI, .holders = 3 };
	struct unit_fixture f;
	bakery_lock_t *l = NULL;

	fixture_open(&f, BAKERY_ALGO_LAMPORT, 2);
	ck_assert_int_eq(bakery_lock_open_config(f.b, "bw", &bw, &l), ENOTSUP);
	ck_assert_int_eq(bakery_lock_open_config(f.b, "jy", &jy, &l), ENOTSUP);
	ck_assert_ptr_null(l);
	ck_assert_int_eq(bakery_rdlock(f.l), ENOTSUP);
	ck_assert_int_eq(bakery_tryrdlock(f.l), ENOTSUP);
	/* holders 1 is a mutex: every algorithm */
	for (int a = TK_ALGO_FIRST; a < TK_ALGO_END; a++) {
		const struct bakery_lock_config one = { .algo = (enum bakery_algo)a, .holders = 1 };
		char name[32];

		snprintf(name, sizeof(name), "one-%d", a);
		ck_assert_int_eq(bakery_lock_open_config(f.b, name, &one, &l), 0);
		ck_assert_int_eq(bakery_lock_close(l), 0);
	}
	unit_fixture_close(&f);
}
END_TEST

START_TEST(bad_configurations)
{
	struct bakery_lock_config cfg = { .algo = BAKERY_ALGO_LAMPORT };
	struct timespec bad = { 0, 1000000000L };
	struct timespec at = tk_in(CLOCK_REALTIME, 1);
	struct unit_fixture f;
	bakery_lock_t *l = NULL;
	unsigned k;

	fixture_open(&f, BAKERY_ALGO_LAMPORT, 0);
	ck_assert_int_eq(bakery_lock_open_config(f.b, "x", NULL, &l), EINVAL);
	ck_assert_int_eq(bakery_lock_open_config(NULL, "x", &cfg, &l), EINVAL);
	ck_assert_int_eq(bakery_lock_open_config(f.b, "x", &cfg, NULL), EINVAL);
	cfg.holders = BAKERY_MAX_HOLDERS + 1;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "x", &cfg, &l), EINVAL);
	cfg.holders = 2;
	cfg.reserved[4] = 1;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "x", &cfg, &l), EINVAL);
	cfg.reserved[4] = 0;
	cfg.algo = BAKERY_ALGO_COUNT;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "x", &cfg, &l), EINVAL);
	ck_assert_ptr_null(l);
	/* none of these created the lock */
	ck_assert_int_eq(bakery_lock_lookup(f.b, "x", BAKERY_ALGO_DEFAULT, &l), ENOENT);

	ck_assert_int_eq(bakery_lock_holders(NULL, &k), EINVAL);
	ck_assert_int_eq(bakery_lock_holders(f.l, NULL), EINVAL);
	ck_assert_int_eq(bakery_rdlock(NULL), EINVAL);
	ck_assert_int_eq(bakery_tryrdlock(NULL), EINVAL);
	ck_assert_int_eq(bakery_timedrdlock(NULL, &at), EINVAL);
	ck_assert_int_eq(bakery_timedrdlock(f.l, NULL), EINVAL);
	ck_assert_int_eq(bakery_timedrdlock(f.l, &bad), EINVAL);
	ck_assert_int_eq(bakery_clockrdlock(f.l, CLOCK_PROCESS_CPUTIME_ID, &at), EINVAL);
	ck_assert_int_eq(bakery_clockrdlock(f.l, CLOCK_MONOTONIC, NULL), EINVAL);
	ck_assert_uint_eq(unit_fixture_info(&f).waiters, 0);
	unit_fixture_close(&f);
}
END_TEST

/* Joining: 0 takes the lock's capacity, another value is BAKERY_EALGO;
 * DEFAULT creates a k-holder lock with Lamport's algorithm. */
START_TEST(joining_with_another_capacity)
{
	struct bakery_lock_config cfg = { .algo = BAKERY_ALGO_DEFAULT, .holders = 3 };
	struct bakery_lock_info li;
	struct unit_fixture f;
	bakery_lock_t *l = NULL;
	unsigned k = 0;

	fixture_open(&f, BAKERY_ALGO_DEFAULT, 3);
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.algo, BAKERY_ALGO_LAMPORT);
	ck_assert_uint_eq(li.capacity, 3);
	ck_assert_int_eq(bakery_lock_holders(f.l, &k), 0);
	ck_assert_uint_eq(k, 3);
	cfg.holders = 2;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "shared", &cfg, &l), BAKERY_EALGO);
	cfg.holders = 1;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "shared", &cfg, &l), BAKERY_EALGO);
	cfg.holders = 0;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "shared", &cfg, &l), 0);
	ck_assert_int_eq(bakery_lock_holders(l, &k), 0);
	ck_assert_uint_eq(k, 3);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	/* bakery_lock_open joins any capacity too */
	ck_assert_int_eq(bakery_lock_open(f.b, "shared", BAKERY_ALGO_DEFAULT, &l), 0);
	ck_assert_int_eq(bakery_lock_holders(l, &k), 0);
	ck_assert_uint_eq(k, 3);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	/* a mutex created by bakery_lock_open has capacity 1 */
	ck_assert_int_eq(bakery_lock_open(f.b, "mutex", BAKERY_ALGO_LAMPORT, &l), 0);
	ck_assert_int_eq(bakery_lock_holders(l, &k), 0);
	ck_assert_uint_eq(k, 1);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	cfg.holders = 2;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "mutex", &cfg, &l), BAKERY_EALGO);
	unit_fixture_close(&f);
}
END_TEST

START_TEST(no_recursion)
{
	struct unit_fixture f;
	struct timespec at = tk_in(CLOCK_MONOTONIC, 0.01);

	fixture_open(&f, shared_algos[_i], 0);
	ck_assert_int_eq(bakery_rdlock(f.l), 0);
	ck_assert_int_eq(bakery_rdlock(f.l), EDEADLK);
	ck_assert_int_eq(bakery_tryrdlock(f.l), EDEADLK);
	ck_assert_int_eq(bakery_clockrdlock(f.l, CLOCK_MONOTONIC, &at), EDEADLK);
	ck_assert_int_eq(bakery_lock(f.l), EDEADLK);
	ck_assert_int_eq(bakery_trylock(f.l), EDEADLK);
	ck_assert_int_eq(bakery_consistent(f.l), EINVAL);   /* not owner-died */
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), EPERM);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	ck_assert_int_eq(bakery_rdlock(f.l), EDEADLK);
	ck_assert_int_eq(bakery_tryrdlock(f.l), EDEADLK);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(unit_fixture_info(&f).holding, 0);
	unit_fixture_close(&f);
}
END_TEST

/* A writer inside: readers are refused (EBUSY) or time out; readers
 * inside: more readers get in, a writer does not. */
START_TEST(readers_and_a_writer)
{
	struct unit_fixture f;
	struct mode_holder w, r;
	struct timespec at;
	double t0;

	fixture_open(&f, shared_algos[_i], 0);
	mode_holder_start(&w, &f, false, 0);
	ck_assert_int_eq(bakery_tryrdlock(f.l), EBUSY);
	t0 = tk_now(CLOCK_MONOTONIC);
	at = tk_in(CLOCK_MONOTONIC, 0.05);
	ck_assert_int_eq(bakery_clockrdlock(f.l, CLOCK_MONOTONIC, &at), ETIMEDOUT);
	ck_assert(tk_now(CLOCK_MONOTONIC) - t0 >= 0.05);
	at = tk_in(CLOCK_REALTIME, 0.05);
	ck_assert_int_eq(bakery_timedrdlock(f.l, &at), ETIMEDOUT);
	mode_holder_stop(&w);

	mode_holder_start(&r, &f, true, 0);
	ck_assert_int_eq(bakery_trylock(f.l), EBUSY);
	at = tk_in(CLOCK_MONOTONIC, 0.05);
	ck_assert_int_eq(bakery_clocklock(f.l, CLOCK_MONOTONIC, &at), ETIMEDOUT);
	/* readers overlap */
	at = tk_in(CLOCK_REALTIME, 5);
	ck_assert_int_eq(bakery_timedrdlock(f.l, &at), 0);
	ck_assert_uint_eq(unit_fixture_info(&f).readers, 2);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	mode_holder_stop(&r);
	ck_assert_int_eq(bakery_trylock(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_fixture_close(&f);
}
END_TEST

START_TEST(introspection_of_readers)
{
	struct unit_fixture f;
	struct mode_holder r1, r2, w;
	struct bakery_lock_info li;
	struct bakery_slot_info si;

	fixture_open(&f, shared_algos[_i], 0);
	li = unit_fixture_info(&f);
	ck_assert_uint_eq(li.capacity, 1);
	ck_assert_uint_eq(li.holding, 0);
	ck_assert_int_eq(li.holder, -1);
	mode_holder_start(&r1, &f, true, 0);
	mode_holder_start(&r2, &f, true, 0);
	li = unit_fixture_info(&f);
	ck_assert_uint_eq(li.holding, 2);
	ck_assert_uint_eq(li.readers, 2);
	ck_assert(li.holder == r1.slot || li.holder == r2.slot);
	si = unit_slot_info(f.b, r1.slot);
	ck_assert_int_eq(si.pass, BAKERY_PASS_CRITICAL);
	ck_assert_int_eq(si.shared, 1);
	ck_assert_int_eq(unit_slot_info(f.b, r2.slot).shared, 1);
	mode_holder_stop(&r1);
	mode_holder_stop(&r2);
	li = unit_fixture_info(&f);
	ck_assert_uint_eq(li.holding, 0);
	ck_assert_uint_eq(li.readers, 0);
	ck_assert_uint_eq(li.acquisitions, 2);

	mode_holder_start(&w, &f, false, 0);
	li = unit_fixture_info(&f);
	ck_assert_uint_eq(li.holding, 1);
	ck_assert_uint_eq(li.readers, 0);
	ck_assert_int_eq(li.holder, w.slot);
	si = unit_slot_info(f.b, w.slot);
	ck_assert_int_eq(si.pass, BAKERY_PASS_CRITICAL);
	ck_assert_int_eq(si.shared, 0);
	mode_holder_stop(&w);
	ck_assert_uint_eq(unit_fixture_info(&f).reader_deaths, 0);
	unit_fixture_close(&f);
}
END_TEST

START_TEST(introspection_of_holders)
{
	struct unit_fixture f;
	struct mode_holder h1, h2;
	struct bakery_lock_info li;

	fixture_open(&f, holder_algos[_i], 3);
	mode_holder_start(&h1, &f, false, 0);
	mode_holder_start(&h2, &f, false, 0);
	li = unit_fixture_info(&f);
	ck_assert_uint_eq(li.capacity, 3);
	ck_assert_uint_eq(li.holding, 2);
	ck_assert_uint_eq(li.readers, 0);
	ck_assert_int_eq(unit_slot_info(f.b, h1.slot).shared, 0);
	ck_assert_int_eq(unit_slot_info(f.b, h2.slot).pass, BAKERY_PASS_CRITICAL);
	/* the third unit is free, the fourth is not */
	ck_assert_int_eq(bakery_trylock(f.l), 0);
	ck_assert_uint_eq(unit_fixture_info(&f).holding, 3);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	mode_holder_stop(&h1);
	mode_holder_stop(&h2);
	ck_assert_uint_eq(unit_fixture_info(&f).holding, 0);
	unit_fixture_close(&f);
}
END_TEST

START_TEST(k_holders_then_busy)
{
	struct unit_fixture f;
	struct mode_holder h[4];
	struct timespec at;
	const unsigned k = 4;

	fixture_open(&f, holder_algos[_i], k);
	for (unsigned i = 0; i < k; i++)
		mode_holder_start(&h[i], &f, false, 0);
	ck_assert_int_eq(bakery_trylock(f.l), EBUSY);
	at = tk_in(CLOCK_MONOTONIC, 0.05);
	ck_assert_int_eq(bakery_clocklock(f.l, CLOCK_MONOTONIC, &at), ETIMEDOUT);
	mode_holder_stop(&h[2]);
	ck_assert_int_eq(bakery_trylock(f.l), 0);
	ck_assert_uint_eq(unit_fixture_info(&f).holding, k);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	for (unsigned i = 0; i < k; i++)
		if (i != 2)
			mode_holder_stop(&h[i]);
	unit_fixture_close(&f);
}
END_TEST

/* ------------------------------------------------------------- death -- */

/* A writer dies inside: readers are told EOWNERDEAD, cannot repair, and
 * leave the lock owner-died for a writer to repair. */
START_TEST(readers_after_a_dead_writer)
{
	struct unit_fixture f;
	struct mode_holder r;
	struct bakery_lock_info li;

	fixture_open(&f, shared_algos[_i], 0);
	ck_assert(tk_kill(holder_process(&f, false)));
	/* proven dead, not recovered yet: the state says so already */
	li = unit_fixture_info(&f);
	ck_assert(li.owner_dead == 0 && li.state == BAKERY_LOCK_OWNER_DIED);
	ck_assert_int_eq(bakery_rdlock(f.l), EOWNERDEAD);
	ck_assert_int_eq(bakery_consistent(f.l), EPERM);
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.owner_dead, 1);
	ck_assert_uint_eq(li.owner_deaths, 1);
	ck_assert_uint_eq(li.reader_deaths, 0);
	mode_holder_start(&r, &f, true, EOWNERDEAD);   /* another reader too */
	ck_assert_uint_eq(unit_fixture_info(&f).readers, 2);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	mode_holder_stop(&r);
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.owner_dead, 1);            /* nobody repaired */
	ck_assert_int_eq(li.not_recoverable, 0);       /* nor gave up */
	ck_assert_int_eq(bakery_tryrdlock(f.l), EOWNERDEAD);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	/* the writer repairs */
	ck_assert_int_eq(bakery_lock(f.l), EOWNERDEAD);
	ck_assert_int_eq(bakery_consistent(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(bakery_rdlock(f.l), 0);
	ck_assert_int_eq(bakery_consistent(f.l), EINVAL);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(unit_fixture_info(&f).owner_dead, 0);
	unit_fixture_close(&f);
}
END_TEST

/* A writer waits behind a reader; the reader is SIGKILLed: the writer gets
 * in with 0, the death is counted as a reader's. */
struct waiting_writer {
	bakery_lock_t *l;
	int rc, unlock_rc;
	struct tk_gate done, release;
};

static void *waiting_writer_main(void *arg)
{
	struct waiting_writer *w = arg;
	struct timespec at = tk_in(CLOCK_MONOTONIC, 30);

	w->rc = bakery_clocklock(w->l, CLOCK_MONOTONIC, &at);
	tk_gate_open(&w->done);
	tk_gate_wait(&w->release, 60);
	w->unlock_rc = bakery_unlock(w->l);
	return NULL;
}

START_TEST(a_dead_reader_gives_its_share_back)
{
	struct waiting_writer w = { .rc = -1, .unlock_rc = -1 };
	struct bakery_lock_info li;
	struct unit_fixture f;
	pthread_t t;
	pid_t reader;

	fixture_open(&f, shared_algos[_i], 0);
	reader = holder_process(&f, true);
	w.l = f.l;
	tk_gate_init(&w.done);
	tk_gate_init(&w.release);
	ck_assert_int_eq(pthread_create(&t, NULL, waiting_writer_main, &w), 0);
	ck_assert(!tk_gate_wait(&w.done, 0.1));        /* it waits */
	ck_assert(tk_kill(reader));
	ck_assert(tk_gate_wait(&w.done, 30));
	ck_assert_msg(w.rc == 0, "writer after a dead reader: %s", bakery_strerror(w.rc));
	li = unit_fixture_info(&f);
	ck_assert_uint_eq(li.reader_deaths, 1);
	ck_assert_uint_eq(li.owner_deaths, 0);
	ck_assert_int_eq(li.owner_dead, 0);
	ck_assert_uint_eq(li.holding, 1);
	ck_assert_uint_eq(li.readers, 0);
	ck_assert_int_eq(bakery_unlock(f.l), EPERM);   /* the thread holds it */
	tk_gate_open(&w.release);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(w.unlock_rc, 0);
	tk_gate_close(&w.done);
	tk_gate_close(&w.release);
	ck_assert_int_eq(bakery_rdlock(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_fixture_close(&f);
}
END_TEST

/* The same with nobody waiting: the next writer, later, gets 0. */
START_TEST(a_dead_reader_alone)
{
	struct bakery_lock_info li;
	struct unit_fixture f;

	fixture_open(&f, shared_algos[_i], 0);
	ck_assert(tk_kill(holder_process(&f, true)));
	/* a reader dead inside changed nothing */
	ck_assert_int_eq(unit_fixture_info(&f).state, BAKERY_LOCK_OK);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	li = unit_fixture_info(&f);
	ck_assert_uint_eq(li.reader_deaths, 1);
	ck_assert_uint_eq(li.owner_deaths, 0);
	ck_assert_uint_eq(li.recoveries, 1);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_fixture_close(&f);
}
END_TEST

/* k = 2: two holder processes; one is SIGKILLed: its unit comes back and
 * the next taker, who needed it, is told EOWNERDEAD; the survivor keeps its
 * unit.  Then the other dies while a unit is free: the next taker is told
 * too, though it did not have to wait for the dead. */
START_TEST(a_dead_holder_gives_its_unit_back)
{
	struct bakery_lock_info li;
	struct unit_fixture f;
	unsigned reclaimed = 0;
	pid_t h1, h2;

	fixture_open(&f, holder_algos[_i], 2);
	h1 = holder_process(&f, false);
	h2 = holder_process(&f, false);
	ck_assert_int_eq(bakery_trylock(f.l), EBUSY);
	ck_assert(tk_kill(h1));
	ck_assert_int_eq(unit_fixture_info(&f).state, BAKERY_LOCK_OWNER_DIED);
	ck_assert_int_eq(bakery_lock(f.l), EOWNERDEAD);
	li = unit_fixture_info(&f);
	ck_assert_uint_eq(li.owner_deaths, 1);
	ck_assert_uint_eq(li.reader_deaths, 0);
	ck_assert_int_eq(li.owner_dead, 1);
	ck_assert_uint_eq(li.holding, 2);              /* us and h2 */
	ck_assert_int_eq(bakery_consistent(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(bakery_trylock(f.l), 0);      /* the unit is ours again */
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	/* a unit is free: the next taker does not need the dead one's, and
	 * is told all the same (and the unit comes back) */
	ck_assert(tk_kill(h2));
	ck_assert_int_eq(bakery_lock(f.l), EOWNERDEAD);
	ck_assert_uint_eq(unit_fixture_info(&f).holding, 1);
	ck_assert_int_eq(bakery_recover(f.b, &reclaimed), 0);
	ck_assert_uint_eq(reclaimed, 0);               /* already done */
	ck_assert_int_eq(bakery_consistent(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	li = unit_fixture_info(&f);
	ck_assert_uint_eq(li.owner_deaths, 2);
	ck_assert_uint_eq(li.holding, 0);
	unit_fixture_close(&f);
}
END_TEST

/* ---------------------------------------------------- stopped in line -- */

/* A process that takes F's lock once (shared or not), lets go and exits 0. */
struct passer {
	const char *region;
	enum bakery_algo algo;
	bool shared;
};

static int passer_main(void *arg)
{
	struct passer *p = arg;
	struct bakery_lock_config cfg = { .algo = p->algo };
	bakery_lock_t *l;
	bakery_t *b;
	int rc;

	if (bakery_open(p->region, 0, NULL, &b) || bakery_lock_open_config(b, "shared", &cfg, &l))
		return 1;
	rc = p->shared ? bakery_rdlock(l) : bakery_lock(l);
	if (rc)
		return 2;
	return bakery_unlock(l) ? 3 : 0;
}

struct waiting_pid {
	bakery_t *b;
	pid_t pid;
};

static bool pid_waits(void *arg)
{
	struct waiting_pid *w = arg;
	struct bakery_slot_info si;

	for (unsigned i = 0; i < 8; i++)
		if (bakery_slot_info(w->b, i, &si) == 0 && si.state == BAKERY_SLOT_ACTIVE &&
		    si.pid == w->pid && si.pass == BAKERY_PASS_WAITING)
			return true;
	return false;
}

/* Start a passer; return once it waits in line. */
static pid_t passer_waiting(struct unit_fixture *f, bool shared)
{
	struct passer p = { f->name, f->algo, shared };
	struct waiting_pid w = { f->b, tk_fork(passer_main, &p) };

	ck_assert_msg(tk_wait_until(pid_waits, &w, 10), "the passer never waited");
	return w.pid;
}

/* A reader stopped in line (SIGSTOP) holds up a writer behind it, as a
 * holder would, but not a reader: readers wait only for writers.  (The
 * writer's wait here is shorter than the grace G: nobody passes it yet.) */
START_TEST(a_stopped_reader_holds_up_writers_only)
{
	struct unit_fixture f;
	struct timespec at;
	pid_t stopped, reader;

	fixture_open(&f, shared_algos[_i], 0);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	stopped = passer_waiting(&f, true);
	ck_assert_int_eq(kill(stopped, SIGSTOP), 0);
	reader = passer_waiting(&f, true);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(tk_reap(reader, 30), 0);      /* past the stopped one */
	at = tk_in(CLOCK_MONOTONIC, 0.2);
	ck_assert_int_eq(bakery_clocklock(f.l, CLOCK_MONOTONIC, &at), ETIMEDOUT);
	ck_assert_int_eq(bakery_tryrdlock(f.l), 0);           /* readers still pass */
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(kill(stopped, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(stopped, 30), 0);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_fixture_close(&f);
}
END_TEST

/* k = 2: a taker stopped in line once a unit is its own holds up the
 * takers behind it for the grace G (here they give up sooner; a trylock
 * never passes a k-holder taker): a_stopped_taker_is_passed shows what
 * happens after G. */
START_TEST(a_stopped_holder_keeps_its_unit)
{
	struct unit_fixture f;
	struct mode_holder h1, h2;
	struct timespec at;
	pid_t stopped;

	fixture_open(&f, holder_algos[_i], 2);
	mode_holder_start(&h1, &f, false, 0);
	mode_holder_start(&h2, &f, false, 0);
	stopped = passer_waiting(&f, false);
	ck_assert_int_eq(kill(stopped, SIGSTOP), 0);
	mode_holder_stop(&h1);                         /* its unit goes to the stopped one */
	at = tk_in(CLOCK_MONOTONIC, 0.2);
	ck_assert_int_eq(bakery_clocklock(f.l, CLOCK_MONOTONIC, &at), ETIMEDOUT);
	ck_assert_int_eq(bakery_trylock(f.l), EBUSY);
	ck_assert_int_eq(kill(stopped, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(stopped, 30), 0);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	mode_holder_stop(&h2);
	unit_fixture_close(&f);
}
END_TEST

/* ------------------------------------------------------ passed in line -- */

/* A short grace for the tests of passing: the margins below are multiples
 * of it.  Set before this process reads it (it does once, at its first
 * wait); children inherit it. */
#define SHORT_GRACE_MS 200
#define SHORT_GRACE_S (SHORT_GRACE_MS / 1000.0)
/* how long past the grace a passer may take: one hand-over, very late */
#define PASS_MARGIN_S (20 * SHORT_GRACE_S)

static void short_grace(void)
{
	char ms[16];

	snprintf(ms, sizeof(ms), "%d", SHORT_GRACE_MS);
	ck_assert_int_eq(setenv("BAKERY_PASS_GRACE_MS", ms, 1), 0);
}

/* Occupancy of a k-holder lock, counted apart from the library: every
 * taker adds itself on entry and takes itself off before it lets go. */
struct occupancy {
	unsigned inside, most;
	uint64_t got_ns[2];             /* when taker i got in, 0 = not yet */
};

static void occupancy_enter(struct occupancy *o)
{
	unsigned now = uatomic_add_return(&o->inside, 1), most;

	while ((most = uatomic_read(&o->most)) < now &&
	       uatomic_cmpxchg(&o->most, most, now) != most)
		;
}

static void occupancy_leave(struct occupancy *o)
{
	uatomic_dec(&o->inside);
}

/* A process taking F's k-lock once: within TIMEOUT_S if > 0. */
struct taker {
	struct unit_fixture *f;
	struct occupancy *o;
	unsigned id;
	double timeout_s;
};

static int taker_main(void *arg)
{
	struct taker *t = arg;
	struct timespec at = tk_in(CLOCK_MONOTONIC, t->timeout_s);
	bakery_lock_t *l;
	bakery_t *b;
	int rc;

	if (bakery_open(t->f->name, 0, NULL, &b))
		return 1;
	if (bakery_lock_open_config(b, "shared", &(struct bakery_lock_config){
	                                .algo = t->f->algo, .holders = t->f->holders }, &l))
		return 2;
	rc = t->timeout_s > 0 ? bakery_clocklock(l, CLOCK_MONOTONIC, &at) : bakery_lock(l);
	if (rc)
		return rc == ETIMEDOUT ? 3 : 4;
	t->o->got_ns[t->id] = tk_ns();
	occupancy_enter(t->o);
	tk_sleep_ms(20);
	occupancy_leave(t->o);
	return bakery_unlock(l) ? 5 : 0;
}

static void stop_stopped(pid_t pid)
{
	int st;

	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
	ck_assert(WIFSTOPPED(st));
}

/* k = 2, two holders inside, a taker W asleep in line and stopped; one
 * holder leaves, so W's turn comes (one ticket ahead of it) and W does not
 * take it.  A later taker X (two tickets ahead: the holder and W) passes W
 * after the grace G and gets in within G plus a generous margin, not before
 * G; the pass is counted.  Continued, W takes a new place and gets in.
 * Never more than k inside by the independent count.  Without passing, X
 * would wait as long as W stays stopped (and time out). */
START_TEST(a_stopped_taker_is_passed)
{
	struct unit_fixture f;
	struct mode_holder h1, h2;
	struct occupancy *o = tk_shared(sizeof(*o));
	struct taker tw = { &f, o, 0, 0 }, tx = { &f, o, 1, SHORT_GRACE_S + PASS_MARGIN_S };
	struct unit_queued q = { NULL, 0, 1 };
	uint64_t start;
	double took;
	pid_t x;

	short_grace();
	fixture_open(&f, holder_algos[_i], 2);
	ck_assert_uint_eq(f.index, 0);                 /* unit_queued_asleep's lock */
	mode_holder_start(&h1, &f, false, 0);
	occupancy_enter(o);
	mode_holder_start(&h2, &f, false, 0);
	occupancy_enter(o);
	q.b = f.b;
	q.pid = tk_fork(taker_main, &tw);
	ck_assert_msg(tk_wait_until(unit_queued_asleep, &q, 30), "W never slept in line");
	stop_stopped(q.pid);
	occupancy_leave(o);
	mode_holder_stop(&h1);                 /* W's turn comes, unused */
	start = tk_ns();
	x = tk_fork(taker_main, &tx);
	ck_assert_int_eq(tk_reap(x, SHORT_GRACE_S + PASS_MARGIN_S + 30), 0);
	took = (double)(o->got_ns[1] - start) / 1e9;
	ck_assert_msg(took >= SHORT_GRACE_S, "X passed W after %.3f s, before the grace", took);
	ck_assert_uint_eq(unit_fixture_info(&f).passes, 1);
	ck_assert_uint_eq(o->got_ns[0], 0);
	ck_assert_int_eq(kill(q.pid, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(q.pid, 30), 0);
	ck_assert(o->got_ns[0] > o->got_ns[1]);
	occupancy_leave(o);
	mode_holder_stop(&h2);
	ck_assert_uint_le(o->most, 2);
	ck_assert_uint_eq(o->inside, 0);
	fprintf(stderr, "%s, k = 2: X passed the stopped taker in %.3f s (grace %.3f s)\n",
	        bakery_algo_name(f.algo), took, SHORT_GRACE_S);
	unit_fixture_close(&f);
}
END_TEST

/* A reader asleep in line, stopped, whose turn then comes (the writer ahead
 * leaves) is passed by a writer behind it after the grace, as a writer
 * would be. */
START_TEST(a_stopped_reader_is_passed)
{
	struct unit_fixture f;
	struct timespec at;
	struct unit_queued q = { NULL, 0, 1 };
	uint64_t start;
	double took;
	pid_t stopped;

	short_grace();
	fixture_open(&f, shared_algos[_i], 0);
	ck_assert_uint_eq(f.index, 0);                 /* unit_queued_asleep's lock */
	ck_assert_int_eq(bakery_lock(f.l), 0);
	q.b = f.b;
	q.pid = stopped = passer_waiting(&f, true);
	/* asleep in its wait, not in the instructions before it (there it is
	 * not passable yet) */
	ck_assert_msg(tk_wait_until(unit_queued_asleep, &q, 30), "the reader never slept in line");
	stop_stopped(stopped);
	ck_assert_int_eq(bakery_unlock(f.l), 0);       /* its turn comes, unused */
	start = tk_ns();
	at = tk_in(CLOCK_MONOTONIC, SHORT_GRACE_S + PASS_MARGIN_S);
	ck_assert_int_eq(bakery_clocklock(f.l, CLOCK_MONOTONIC, &at), 0);
	took = (double)(tk_ns() - start) / 1e9;
	ck_assert_msg(took >= SHORT_GRACE_S, "passed after %.3f s, before the grace", took);
	ck_assert_uint_eq(unit_fixture_info(&f).passes, 1);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(kill(stopped, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(stopped, 30), 0);
	unit_fixture_close(&f);
}
END_TEST

static Suite *shared_suite(void)
{
	Suite *s = suite_create("shared");
	TCase *api = tcase_create("api");
	TCase *info = tcase_create("introspection");
	TCase *death = tcase_create("death");
	TCase *stop = tcase_create("stopped");

	tcase_set_timeout(api, 60);
	tcase_set_timeout(info, 60);
	tcase_set_timeout(death, 120);
	tcase_add_test(api, jayanti_has_no_shared_mode);
	tcase_add_test(api, what_cannot_count_holders);
	tcase_add_test(api, bad_configurations);
	tcase_add_test(api, joining_with_another_capacity);
	tcase_add_loop_test(api, no_recursion, 0, NELEM(shared_algos));
	tcase_add_loop_test(api, readers_and_a_writer, 0, NELEM(shared_algos));
	tcase_add_loop_test(api, k_holders_then_busy, 0, NELEM(holder_algos));
	tcase_add_loop_test(info, introspection_of_readers, 0, NELEM(shared_algos));
	tcase_add_loop_test(info, introspection_of_holders, 0, NELEM(holder_algos));
	tcase_add_loop_test(death, readers_after_a_dead_writer, 0, NELEM(shared_algos));
	tcase_add_loop_test(death, a_dead_reader_gives_its_share_back, 0, NELEM(shared_algos));
	tcase_add_loop_test(death, a_dead_reader_alone, 0, NELEM(shared_algos));
	tcase_add_loop_test(death, a_dead_holder_gives_its_unit_back, 0, NELEM(holder_algos));
	tcase_set_timeout(stop, 120);
	tcase_add_loop_test(stop, a_stopped_reader_holds_up_writers_only, 0, NELEM(shared_algos));
	tcase_add_loop_test(stop, a_stopped_holder_keeps_its_unit, 0, NELEM(holder_algos));
	tcase_add_loop_test(stop, a_stopped_taker_is_passed, 0, NELEM(holder_algos));
	tcase_add_loop_test(stop, a_stopped_reader_is_passed, 0, NELEM(shared_algos));
	suite_add_tcase(s, api);
	suite_add_tcase(s, info);
	suite_add_tcase(s, death);
	suite_add_tcase(s, stop);
	return s;
}

int main(void)
{
	return unit_run(shared_suite());
}
