/* SPDX-License-Identifier: MIT */
/*
 * test_lock_api.c - the lock calls' error codes (as bakery.h lists them): NULL
 * handles, lock names, a full lock table, algorithm joining rules, relock by
 * the holder (through the same handle or a second handle of the region, by
 * its name or another: a hard link, a rename), unlock and consistent by a non-holder, trylock on a held lock,
 * closing a region or lock handle while holding, for every algorithm.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

/* ------------------------------------------------------- NULL handles -- */

START_TEST(null_handles_and_out_pointers)
{
	char name[TK_NAME_SIZE];
	struct timespec ts = tk_in(CLOCK_REALTIME, 1);
	struct bakery_region_info ri;
	struct bakery_slot_info si;
	struct bakery_lock_info li;
	bakery_lock_t *l = NULL;
	unsigned u;
	bakery_t *b = unit_region(name, "null", 2, 2);

	ck_assert_int_eq(bakery_close(NULL), EINVAL);
	ck_assert_int_eq(bakery_recover(NULL, &u), EINVAL);
	ck_assert_int_eq(bakery_lock_open(NULL, "x", BAKERY_ALGO_DEFAULT, &l), EINVAL);
	ck_assert_int_eq(bakery_lock_open(b, NULL, BAKERY_ALGO_DEFAULT, &l), EINVAL);
	ck_assert_int_eq(bakery_lock_open(b, "x", BAKERY_ALGO_DEFAULT, NULL), EINVAL);
	ck_assert_int_eq(bakery_lock_open(b, "x", (enum bakery_algo)BAKERY_ALGO_COUNT, &l), EINVAL);
	ck_assert_int_eq(bakery_lock_open(b, "x", (enum bakery_algo)-1, &l), EINVAL);
	ck_assert_ptr_null(l);
	ck_assert_int_eq(bakery_lock_close(NULL), EINVAL);
	ck_assert_int_eq(bakery_lock(NULL), EINVAL);
	ck_assert_int_eq(bakery_trylock(NULL), EINVAL);
	ck_assert_int_eq(bakery_timedlock(NULL, &ts), EINVAL);
	ck_assert_int_eq(bakery_clocklock(NULL, CLOCK_MONOTONIC, &ts), EINVAL);
	ck_assert_int_eq(bakery_unlock(NULL), EINVAL);
	ck_assert_int_eq(bakery_consistent(NULL), EINVAL);
	ck_assert_int_eq(bakery_lock_index(NULL, &u), EINVAL);
	ck_assert_int_eq(bakery_region_info(NULL, &ri), EINVAL);
	ck_assert_int_eq(bakery_region_info(b, NULL), EINVAL);
	ck_assert_int_eq(bakery_slot_info(NULL, 0, &si), EINVAL);
	ck_assert_int_eq(bakery_slot_info(b, 0, NULL), EINVAL);
	ck_assert_int_eq(bakery_slot_info(b, 2, &si), EINVAL);
	ck_assert_int_eq(bakery_lock_info(NULL, 0, &li), EINVAL);
	ck_assert_int_eq(bakery_lock_info(b, 0, NULL), EINVAL);
	ck_assert_int_eq(bakery_lock_info(b, 2, &li), EINVAL);
	ck_assert_int_eq(bakery_lock_info(b, 0, &li), ENOENT);   /* no lock there yet */

	l = unit_lock(b, "x", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_lock_index(l, NULL), EINVAL);
	ck_assert_int_eq(bakery_timedlock(l, NULL), EINVAL);
	ck_assert_int_eq(bakery_clocklock(l, CLOCK_MONOTONIC, NULL), EINVAL);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* ---------------------------------------------------------- lock names -- */

START_TEST(lock_names)
{
	static const char *const bad[] = { "", "/", "a/b", "/lead", "ctl\x02", "nl\n", "hi\x80" };
	char name[TK_NAME_SIZE], longest[BAKERY_LOCK_NAME_MAX + 2];
	struct bakery_lock_info li;
	bakery_lock_t *l = NULL;
	unsigned index;
	bakery_t *b = unit_region(name, "lname", 2, 4);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(bakery_lock_open(b, bad[i], BAKERY_ALGO_DEFAULT, &l) == EINVAL,
		              "lock name \"%s\" accepted", bad[i]);
	ck_assert_ptr_null(l);

	memset(longest, 'n', BAKERY_LOCK_NAME_MAX + 1);
	longest[BAKERY_LOCK_NAME_MAX + 1] = '\0';
	ck_assert_int_eq(bakery_lock_open(b, longest, BAKERY_ALGO_DEFAULT, &l), ENAMETOOLONG);
	ck_assert_ptr_null(l);
	longest[BAKERY_LOCK_NAME_MAX] = '\0';
	l = unit_lock(b, longest, BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_lock_index(l, &index), 0);
	ck_assert_int_eq(bakery_lock_info(b, index, &li), 0);
	ck_assert_str_eq(li.name, longest);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	/* printable punctuation and spaces are fine */
	l = unit_lock(b, "queue #1 (jobs) ~x", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

START_TEST(full_lock_table)
{
	char name[TK_NAME_SIZE];
	bakery_lock_t *a, *c, *again, *l = NULL;
	bakery_t *b = unit_region(name, "elocks", 2, 2);

	a = unit_lock(b, "first", BAKERY_ALGO_DEFAULT);
	c = unit_lock(b, "second", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_lock_open(b, "third", BAKERY_ALGO_DEFAULT, &l), BAKERY_ELOCKS);
	ck_assert_ptr_null(l);
	/* existing locks can still be joined */
	again = unit_lock(b, "first", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_lock(again), 0);
	ck_assert_int_eq(bakery_unlock(again), 0);
	bakery_lock_close(a);
	bakery_lock_close(c);
	bakery_lock_close(again);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* ---------------------------------------------------------- algorithms -- */

static bool number_family(enum bakery_algo a)
{
	return a == BAKERY_ALGO_LAMPORT || a == BAKERY_ALGO_BOULANGERIE;
}

/* Lock created with algorithm _i, joined with every algorithm. */
START_TEST(algorithm_join_rules)
{
	enum bakery_algo have = (enum bakery_algo)_i;
	char name[TK_NAME_SIZE];
	struct bakery_lock_info li;
	bakery_t *b = unit_region(name, "ealgo", 2, 2);
	bakery_lock_t *creator = unit_lock(b, "fixed", have);
	unsigned index;

	for (int w = BAKERY_ALGO_DEFAULT; w < BAKERY_ALGO_COUNT; w++) {
		enum bakery_algo want = (enum bakery_algo)w;
		int expect = want == BAKERY_ALGO_DEFAULT || want == have ||
		             (number_family(have) && number_family(want)) ? 0 : BAKERY_EALGO;
		bakery_lock_t *l = NULL;
		int rc = bakery_lock_open(b, "fixed", want, &l);

		ck_assert_msg(rc == expect, "%s lock joined as %s: %s", bakery_algo_name(have),
		              bakery_algo_name(want), bakery_strerror(rc));
		if (rc == 0)
			ck_assert_int_eq(bakery_lock_close(l), 0);
		else
			ck_assert_ptr_null(l);
	}
	/* the lock keeps the algorithm it was created with */
	ck_assert_int_eq(bakery_lock_index(creator, &index), 0);
	ck_assert_int_eq(bakery_lock_info(b, index, &li), 0);
	ck_assert_int_eq(li.algo, have);
	bakery_lock_close(creator);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

START_TEST(default_creates_a_real_algorithm)
{
	char name[TK_NAME_SIZE];
	struct bakery_lock_info li;
	bakery_t *b = unit_region(name, "dflt", 2, 2);
	bakery_lock_t *l = unit_lock(b, "dflt", BAKERY_ALGO_DEFAULT);
	bakery_lock_t *l2 = NULL;
	unsigned index;

	ck_assert_int_eq(bakery_lock_index(l, &index), 0);
	ck_assert_int_eq(bakery_lock_info(b, index, &li), 0);
	ck_assert_int_eq(li.algo, BAKERY_ALGO_BLACK_WHITE);   /* bakery.h: the default */
	ck_assert_int_eq(bakery_lock_open(b, "dflt", BAKERY_ALGO_JAYANTI, &l2), BAKERY_EALGO);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* bakery_algo_features says what the library then accepts of the algorithm,
 * and refuses (ENOTSUP) what it lacks: shared passages, k > 1 holders, a
 * bias (which a process refused the expedited membarrier is refused for
 * every algorithm: then only the refusal's sameness is checked). */
static int open_with(bakery_t *b, const char *lock, enum bakery_algo algo, unsigned holders,
                     unsigned flags)
{
	const struct bakery_lock_config cfg = { .algo = algo, .holders = holders, .flags = flags };
	bakery_lock_t *l = NULL;
	int rc = bakery_lock_open_config(b, lock, &cfg, &l);

	if (rc == 0)
		ck_assert_int_eq(bakery_lock_close(l), 0);
	else
		ck_assert_ptr_null(l);
	return rc;
}

START_TEST(algorithm_features_are_what_is_accepted)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	unsigned has = bakery_algo_features(algo);
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "feat", 2, 4);
	bakery_lock_t *l = unit_lock(b, "plain", algo);
	int rc, bias_anywhere;

	ck_assert_uint_eq(has & ~(BAKERY_ALGO_HAS_SHARED | BAKERY_ALGO_HAS_HOLDERS |
	                          BAKERY_ALGO_HAS_BIAS), 0);
	rc = bakery_tryrdlock(l);
	ck_assert_msg(rc == ((has & BAKERY_ALGO_HAS_SHARED) ? 0 : ENOTSUP), "%s rdlock: %s",
	              bakery_algo_name(algo), bakery_strerror(rc));
	if (rc == 0)
		ck_assert_int_eq(bakery_unlock(l), 0);
	rc = open_with(b, "k2", algo, 2, 0);
	ck_assert_msg(rc == ((has & BAKERY_ALGO_HAS_HOLDERS) ? 0 : ENOTSUP), "%s k = 2: %s",
	              bakery_algo_name(algo), bakery_strerror(rc));
	bias_anywhere = open_with(b, "biased-default", BAKERY_ALGO_DEFAULT, 0, BAKERY_LOCK_BIASED);
	ck_assert_msg(bias_anywhere == 0 || bias_anywhere == ENOTSUP, "%s",
	              bakery_strerror(bias_anywhere));
	rc = open_with(b, "biased", algo, 0, BAKERY_LOCK_BIASED);
	ck_assert_msg(rc == ((has & BAKERY_ALGO_HAS_BIAS) ? bias_anywhere : ENOTSUP),
	              "%s biased: %s (the default's: %s)", bakery_algo_name(algo),
	              bakery_strerror(rc), bakery_strerror(bias_anywhere));
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

START_TEST(no_features_without_an_algorithm)
{
	/* the default names no algorithm; unknown values have nothing */
	ck_assert_uint_eq(bakery_algo_features(BAKERY_ALGO_DEFAULT), 0);
	ck_assert_uint_eq(bakery_algo_features((enum bakery_algo)BAKERY_ALGO_COUNT), 0);
	ck_assert_uint_eq(bakery_algo_features((enum bakery_algo)-1), 0);
	/* and the algorithm that has all three exists (bakery.h's own) */
	ck_assert_uint_eq(bakery_algo_features(BAKERY_ALGO_LAMPORT),
	                  BAKERY_ALGO_HAS_SHARED | BAKERY_ALGO_HAS_HOLDERS | BAKERY_ALGO_HAS_BIAS);
}
END_TEST

/* A Lamport handle and a Boulangerie handle on one lock exclude each other. */
START_TEST(lamport_and_boulangerie_share_a_lock)
{
	char name[TK_NAME_SIZE];
	struct unit_holder h;
	bakery_t *b = unit_region(name, "mix", 4, 2);
	bakery_lock_t *lam = unit_lock(b, "mixed", BAKERY_ALGO_LAMPORT);
	bakery_lock_t *bou = unit_lock(b, "mixed", BAKERY_ALGO_BOULANGERIE);

	unit_holder_start(&h, lam);
	ck_assert_int_eq(bakery_trylock(bou), EBUSY);
	unit_holder_stop(&h);
	unit_holder_start(&h, bou);
	ck_assert_int_eq(bakery_trylock(lam), EBUSY);
	unit_holder_stop(&h);
	ck_assert_int_eq(bakery_trylock(bou), 0);
	ck_assert_int_eq(bakery_unlock(bou), 0);
	bakery_lock_close(lam);
	bakery_lock_close(bou);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* ------------------------------------------------------- owner errors -- */

struct intruder {
	bakery_lock_t *lock;
	bool take_slot_first;      /* fail a trylock first, so the thread has a slot */
	int trylock_rc, unlock_rc, consistent_rc;
};

static void *intruder_main(void *arg)
{
	struct intruder *t = arg;

	t->trylock_rc = t->take_slot_first ? bakery_trylock(t->lock) : -1;
	t->unlock_rc = bakery_unlock(t->lock);
	t->consistent_rc = bakery_consistent(t->lock);
	return NULL;
}

static void intrude(struct intruder *t)
{
	pthread_t th;

	ck_assert_int_eq(pthread_create(&th, NULL, intruder_main, t), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
}

START_TEST(holder_errors)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	char name[TK_NAME_SIZE];
	struct timespec ts = tk_in(CLOCK_REALTIME, 0.05);
	struct intruder t = { 0 };
	bakery_t *b = unit_region(name, "owner", 4, 2);
	bakery_lock_t *l = unit_lock(b, "owned", algo);

	ck_assert_int_eq(bakery_unlock(l), EPERM);          /* never locked */
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_lock(l), EDEADLK);
	ck_assert_int_eq(bakery_trylock(l), EDEADLK);
	ck_assert_int_eq(bakery_timedlock(l, &ts), EDEADLK);
	ck_assert_int_eq(bakery_clocklock(l, CLOCK_MONOTONIC, &ts), EDEADLK);
	ck_assert_int_eq(bakery_consistent(l), EINVAL);     /* not owner-died */

	/* another thread, without a slot and with one */
	t.lock = l;
	intrude(&t);
	ck_assert_int_eq(t.unlock_rc, EPERM);
	ck_assert_int_eq(t.consistent_rc, EPERM);
	t.take_slot_first = true;
	intrude(&t);
	ck_assert_int_eq(t.trylock_rc, EBUSY);
	ck_assert_int_eq(t.unlock_rc, EPERM);
	ck_assert_int_eq(t.consistent_rc, EPERM);

	/* the relocks and intruders changed nothing: still ours, once */
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), EPERM);          /* double unlock */
	ck_assert_int_eq(bakery_consistent(l), EPERM);
	ck_assert_int_eq(bakery_trylock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* Child: take LOCK through one handle of region NAME, then through a second
 * handle of the same region, blocking.  Exits with bakery_lock's answer (a
 * hang is the parent's timeout). */
struct two_handles {
	char name[TK_NAME_SIZE];
	enum bakery_algo algo;
};

static int relock_through_second_handle(void *arg)
{
	const struct two_handles *h = arg;
	bakery_t *b1 = NULL, *b2 = NULL;
	bakery_lock_t *l1 = NULL, *l2 = NULL;

	if (bakery_open(h->name, 0, NULL, &b1) || bakery_open(h->name, 0, NULL, &b2) ||
	    bakery_lock_open(b1, "owned", h->algo, &l1) ||
	    bakery_lock_open(b2, "owned", h->algo, &l2) || bakery_lock(l1))
		return 100;
	return bakery_lock(l2);
}

/* The holder relocking through a second handle of the same region (its own
 * second slot) is told EDEADLK too, not left waiting on itself. */
START_TEST(holder_relock_through_second_handle)
{
	struct two_handles h = { .algo = (enum bakery_algo)_i };
	struct timespec ts = tk_in(CLOCK_REALTIME, 0.05);
	bakery_t *b = unit_region(h.name, "twohandles", 4, 2), *b2 = NULL;
	bakery_lock_t *l = unit_lock(b, "owned", h.algo), *l2;

	ck_assert_int_eq(bakery_open(h.name, 0, NULL, &b2), 0);
	l2 = unit_lock(b2, "owned", h.algo);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_trylock(l2), EDEADLK);
	ck_assert_int_eq(bakery_timedlock(l2, &ts), EDEADLK);
	ck_assert_int_eq(bakery_unlock(l2), EPERM);
	ck_assert_int_eq(bakery_unlock(l), 0);
	/* released: the other handle takes it like any other */
	ck_assert_int_eq(bakery_trylock(l2), 0);
	ck_assert_int_eq(bakery_trylock(l), EDEADLK);
	ck_assert_int_eq(bakery_unlock(l2), 0);
	ck_assert_int_eq(tk_reap(tk_fork(relock_through_second_handle, &h), 10), EDEADLK);
	bakery_lock_close(l2);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b2), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(h.name), 0);
}
END_TEST

/* Child: take the lock through L[0], then through L[1], blocking (handles
 * inherited from the parent).  Exits with the second bakery_lock's answer
 * (a hang is the parent's timeout). */
static int relock_inherited(void *arg)
{
	bakery_lock_t **l = arg;

	if (bakery_lock(l[0]))
		return 100;
	return bakery_lock(l[1]);
}

/* The same through another name of the region's object: a hard link to it,
 * or its name after a rename.  The handles' names differ, the object is
 * one: every way of locking is EDEADLK, the blocking one included. */
static void relock_through_other_name(enum bakery_algo algo, bool renamed)
{
	char name[TK_NAME_SIZE], other[TK_NAME_SIZE], path[256], other_path[256];
	struct timespec ts = tk_in(CLOCK_REALTIME, 0.05), mono = tk_in(CLOCK_MONOTONIC, 0.05);
	bakery_t *b = unit_region(name, renamed ? "renamed" : "linked", 4, 2), *b2 = NULL;
	bakery_lock_t *l[2] = { unit_lock(b, "owned", algo), NULL };

	tk_name(other, sizeof(other), "othername");
	unit_shm_path(path, sizeof(path), name);
	unit_shm_path(other_path, sizeof(other_path), other);
	ck_assert_int_eq(renamed ? rename(path, other_path) : link(path, other_path), 0);
	ck_assert_int_eq(bakery_open(other, 0, NULL, &b2), 0);
	l[1] = unit_lock(b2, "owned", algo);
	ck_assert_int_eq(bakery_lock(l[0]), 0);
	ck_assert_int_eq(bakery_trylock(l[1]), EDEADLK);
	ck_assert_int_eq(bakery_timedlock(l[1], &ts), EDEADLK);
	ck_assert_int_eq(bakery_clocklock(l[1], CLOCK_MONOTONIC, &mono), EDEADLK);
	ck_assert_int_eq(bakery_unlock(l[0]), 0);
	ck_assert_int_eq(bakery_lock(l[1]), 0);
	ck_assert_int_eq(bakery_timedlock(l[0], &ts), EDEADLK);
	ck_assert_int_eq(bakery_unlock(l[1]), 0);
	ck_assert_int_eq(tk_reap(tk_fork(relock_inherited, l), 10), EDEADLK);
	bakery_lock_close(l[1]);
	bakery_lock_close(l[0]);
	ck_assert_int_eq(bakery_close(b2), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	if (!renamed)
		ck_assert_int_eq(bakery_unlink(name), 0);
	ck_assert_int_eq(bakery_unlink(other), 0);
}

START_TEST(holder_relock_through_a_hard_link)
{
	relock_through_other_name((enum bakery_algo)_i, false);
}
END_TEST

START_TEST(holder_relock_through_a_new_name)
{
	relock_through_other_name((enum bakery_algo)_i, true);
}
END_TEST

START_TEST(trylock_busy_while_another_thread_holds)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	char name[TK_NAME_SIZE];
	struct unit_holder h;
	bakery_t *b = unit_region(name, "busy", 4, 2);
	bakery_lock_t *l = unit_lock(b, "busy", algo);

	unit_holder_start(&h, l);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(bakery_trylock(l), EBUSY);
	unit_holder_stop(&h);
	ck_assert_int_eq(bakery_trylock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

START_TEST(close_while_holding_is_busy)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	char name[TK_NAME_SIZE];
	struct unit_holder h;
	bakery_t *b = unit_region(name, "closebusy", 4, 2);
	bakery_lock_t *l = unit_lock(b, "held", algo);

	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_close(b), EBUSY);
	ck_assert_int_eq(bakery_lock_close(l), EBUSY);
	ck_assert_int_eq(bakery_unlock(l), 0);            /* both handles still work */

	/* another thread of this process holding counts too */
	unit_holder_start(&h, l);
	ck_assert_int_eq(bakery_close(b), EBUSY);
	unit_holder_stop(&h);

	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

static Suite *lock_api_suite(void)
{
	Suite *s = suite_create("lock-api");
	TCase *tc = tcase_create("errors");
	TCase *per_algo = tcase_create("per-algorithm");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, null_handles_and_out_pointers);
	tcase_add_test(tc, lock_names);
	tcase_add_test(tc, full_lock_table);
	tcase_add_test(tc, no_features_without_an_algorithm);
	tcase_add_test(tc, default_creates_a_real_algorithm);
	tcase_add_test(tc, lamport_and_boulangerie_share_a_lock);
	suite_add_tcase(s, tc);

	tcase_set_timeout(per_algo, 30);
	tcase_add_loop_test(per_algo, algorithm_join_rules, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(per_algo, algorithm_features_are_what_is_accepted, TK_ALGO_FIRST,
	                    TK_ALGO_END);
	tcase_add_loop_test(per_algo, holder_errors, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(per_algo, holder_relock_through_second_handle, TK_ALGO_FIRST,
	                    TK_ALGO_END);
	tcase_add_loop_test(per_algo, holder_relock_through_a_hard_link, TK_ALGO_FIRST,
	                    TK_ALGO_END);
	tcase_add_loop_test(per_algo, holder_relock_through_a_new_name, TK_ALGO_FIRST,
	                    TK_ALGO_END);
	tcase_add_loop_test(per_algo, trylock_busy_while_another_thread_holds,
	                    TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(per_algo, close_while_holding_is_busy, TK_ALGO_FIRST, TK_ALGO_END);
	suite_add_tcase(s, per_algo);
	return s;
}

int main(void)
{
	return unit_run(lock_api_suite());
}
