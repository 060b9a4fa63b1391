/* SPDX-License-Identifier: MIT */
/*
 * test_bias.c - biased locks (BAKERY_LOCK_BIASED) from the API, in one
 * process: the configurations refused (EINVAL, ENOTSUP) and joined
 * (BAKERY_EALGO), the grant after exactly 64 lone passages, its
 * revocation by another thread and the doubled wait for the next grant,
 * what another thread sees while the owner holds the lock by its fast
 * path (EBUSY, then the lock), EDEADLK, shared passages, and a removed
 * biased lock whose entry is made again without the bias.  Deaths and
 * stops at every step of the protocol: tests/crash/crash-bias; a refused
 * membarrier: tests/kernel/refused-calls.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "unit.h"

#define GRANT 64                /* lone passages before the first grant */

static const struct bakery_lock_config biased = { .flags = BAKERY_LOCK_BIASED };

/* A fixture with a biased lock, or exit 77 where this process cannot have
 * one (no expedited membarrier: tests/kernel/refused-calls). */
static void fixture_biased(struct unit_fixture *f, const char *tag,
                           const struct bakery_lock_config *cfg)
{
	char name[TK_NAME_SIZE];
	bakery_lock_t *l;
	bakery_t *b = unit_region(name, "probe", 0, 0);
	int err = bakery_lock_open_config(b, "probe", &biased, &l);

	if (err == ENOTSUP) {
		printf("test_bias: biased locks refused here (ENOTSUP): skipped\n");
		bakery_close(b);
		bakery_unlink(name);
		exit(77);
	}
	ck_assert_int_eq(err, 0);
	bakery_lock_close(l);
	bakery_close(b);
	bakery_unlink(name);
	unit_fixture_open_config(f, tag, 0, 0, "biased", cfg);
}

static void passages(bakery_lock_t *l, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(bakery_lock(l), 0);
		ck_assert_int_eq(bakery_unlock(l), 0);
	}
}

/* A thread that makes N passages (or a trylock, TRY) through lock L. */
struct other {
	pthread_t thread;
	bakery_lock_t *l;
	unsigned n;
	bool try;
	int rc;
	int slot;
	bakery_t *b;
};

static void *other_main(void *arg)
{
	struct other *o = arg;

	o->rc = 0;
	if (o->try) {
		o->rc = bakery_trylock(o->l);
		if (o->rc == 0)
			o->rc = bakery_unlock(o->l) ? -1 : 0;
	} else {
		for (unsigned i = 0; i < o->n && !o->rc; i++)
			if (!(o->rc = bakery_lock(o->l)))
				o->rc = bakery_unlock(o->l);
	}
	o->slot = tk_self_slot(o->b);
	return NULL;
}

static int in_other_thread(bakery_t *b, bakery_lock_t *l, unsigned n, bool try, int *slot)
{
	struct other o = { .l = l, .n = n, .try = try, .b = b };

	ck_assert_int_eq(pthread_create(&o.thread, NULL, other_main, &o), 0);
	ck_assert_int_eq(pthread_join(o.thread, NULL), 0);
	if (slot)
		*slot = o.slot;
	return o.rc;
}

/* --------------------------------------------------------- configurations -- */

START_TEST(test_configurations)
{
	struct bakery_lock_config cfg = biased;
	struct bakery_lock_info li;
	struct unit_fixture f;
	bakery_lock_t *l = NULL;

	fixture_biased(&f, "configs", &biased);
	/* BAKERY_ALGO_DEFAULT makes a Lamport lock; nobody holds the bias */
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.algo, BAKERY_ALGO_LAMPORT);
	ck_assert_uint_eq(li.flags, BAKERY_LOCK_BIASED);
	ck_assert_int_eq(li.bias_slot, -1);
	ck_assert_uint_eq(li.bias_revocations, 0);

	cfg.flags = 2;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "x", &cfg, &l), EINVAL);
	cfg.flags = BAKERY_LOCK_BIASED;
	cfg.algo = BAKERY_ALGO_BLACK_WHITE;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "x", &cfg, &l), ENOTSUP);
	cfg.algo = BAKERY_ALGO_JAYANTI;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "x", &cfg, &l), ENOTSUP);
	cfg.algo = BAKERY_ALGO_LAMPORT;
	cfg.holders = 2;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "x", &cfg, &l), ENOTSUP);
	ck_assert_ptr_null(l);
	/* none of these created the lock */
	ck_assert_int_eq(bakery_lock_lookup(f.b, "x", BAKERY_ALGO_DEFAULT, &l), ENOENT);

	/* Boulangerie may be biased too */
	cfg.holders = 0;
	cfg.algo = BAKERY_ALGO_BOULANGERIE;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "boul", &cfg, &l), 0);
	li = unit_lock_info(f.b, 1);
	ck_assert_int_eq(li.algo, BAKERY_ALGO_BOULANGERIE);
	ck_assert_uint_eq(li.flags, BAKERY_LOCK_BIASED);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	/* an ordinary lock says so */
	ck_assert_int_eq(bakery_lock_open(f.b, "plain", BAKERY_ALGO_LAMPORT, &l), 0);
	li = unit_lock_info(f.b, 2);
	ck_assert_uint_eq(li.flags, 0);
	ck_assert_int_eq(li.bias_slot, -1);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	unit_fixture_close(&f);
}
END_TEST

START_TEST(test_joining)
{
	struct bakery_lock_config cfg = biased;
	struct unit_fixture f;
	bakery_lock_t *l;

	fixture_biased(&f, "join", &biased);
	/* flags 0 joins any lock, the biased one too */
	ck_assert_int_eq(bakery_lock_open(f.b, "biased", BAKERY_ALGO_DEFAULT, &l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	/* asking for the bias joins a biased lock, with Lamport's partner */
	cfg.algo = BAKERY_ALGO_BOULANGERIE;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "biased", &cfg, &l), 0);
	passages(l, 3);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	/* but not a lock without it */
	ck_assert_int_eq(bakery_lock_open(f.b, "plain", BAKERY_ALGO_LAMPORT, &l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	cfg.algo = BAKERY_ALGO_DEFAULT;
	ck_assert_int_eq(bakery_lock_open_config(f.b, "plain", &cfg, &l), BAKERY_EALGO);
	unit_fixture_close(&f);
}
END_TEST

/* ---------------------------------------------------- grant and revoke -- */

START_TEST(test_grant_and_revoke)
{
	struct bakery_lock_info li;
	struct unit_fixture f;
	int me, other;

	fixture_biased(&f, "grant", &biased);
	passages(f.l, GRANT - 1);
	ck_assert_int_eq(unit_fixture_info(&f).bias_slot, -1);
	passages(f.l, 1);
	me = tk_self_slot(f.b);
	ck_assert_int_eq(unit_fixture_info(&f).bias_slot, me);
	/* the biased passages count like any other */
	passages(f.l, 1000);
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.bias_slot, me);
	ck_assert_uint_eq(li.acquisitions, GRANT + 1000);

	/* another thread's lock call revokes the bias */
	ck_assert_int_eq(in_other_thread(f.b, f.l, 1, false, &other), 0);
	ck_assert_int_ne(other, me);
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.bias_slot, -1);
	ck_assert_uint_eq(li.bias_revocations, 1);
	/* one revocation: the next grant waits for twice as many */
	passages(f.l, 2 * GRANT - 1);
	ck_assert_int_eq(unit_fixture_info(&f).bias_slot, -1);
	passages(f.l, 1);
	ck_assert_int_eq(unit_fixture_info(&f).bias_slot, me);
	/* the other thread's slot can be granted it too */
	ck_assert_int_eq(in_other_thread(f.b, f.l, 4 * GRANT, false, &other), 0);
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.bias_slot, other);
	ck_assert_uint_eq(li.bias_revocations, 2);
	ck_assert_uint_eq(li.acquisitions, GRANT + 1000 + 1 + 2 * GRANT + 4 * GRANT);
	unit_fixture_close(&f);
}
END_TEST

/* A thread comes while the owner holds the lock by its fast path: its
 * trylock revokes the bias and is EBUSY (the owner's ticket is ahead);
 * once the owner lets go, it gets the lock. */
START_TEST(test_held_by_the_owner)
{
	struct unit_fixture f;
	int me;

	fixture_biased(&f, "held", &biased);
	passages(f.l, GRANT);
	me = tk_self_slot(f.b);
	ck_assert_int_eq(unit_fixture_info(&f).bias_slot, me);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	ck_assert_int_eq(unit_fixture_info(&f).holder, me);
	/* held: EDEADLK, as for any lock */
	ck_assert_int_eq(bakery_lock(f.l), EDEADLK);
	ck_assert_int_eq(bakery_trylock(f.l), EDEADLK);
	ck_assert_int_eq(in_other_thread(f.b, f.l, 0, true, NULL), EBUSY);
	ck_assert_int_eq(unit_fixture_info(&f).bias_slot, -1);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(in_other_thread(f.b, f.l, 0, true, NULL), 0);
	ck_assert_int_eq(in_other_thread(f.b, f.l, 10, false, NULL), 0);
	unit_fixture_close(&f);
}
END_TEST

/* Shared passages take the ordinary path, beside the bias. */
START_TEST(test_shared_passages)
{
	struct bakery_lock_info li;
	struct unit_fixture f;
	int me;

	fixture_biased(&f, "shared", &biased);
	passages(f.l, GRANT);
	me = tk_self_slot(f.b);
	ck_assert_int_eq(bakery_rdlock(f.l), 0);
	li = unit_fixture_info(&f);
	ck_assert_uint_eq(li.readers, 1);
	ck_assert_int_eq(li.bias_slot, me);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	passages(f.l, 1);
	ck_assert_int_eq(unit_fixture_info(&f).bias_slot, me);
	unit_fixture_close(&f);
}
END_TEST

/* A biased lock removed and its name made again without the bias: the new
 * lock has none, and the old handle is told the lock was removed. */
START_TEST(test_removed)
{
	struct unit_fixture f;
	bakery_lock_t *l;
	unsigned index;

	fixture_biased(&f, "removed", &biased);
	passages(f.l, GRANT);
	ck_assert_int_ge(unit_fixture_info(&f).bias_slot, 0);
	ck_assert_int_eq(bakery_lock_unlink(f.b, "biased"), 0);
	ck_assert_int_eq(bakery_lock_open(f.b, "biased", BAKERY_ALGO_LAMPORT, &l), 0);
	ck_assert_int_eq(bakery_lock_index(l, &index), 0);
	ck_assert_uint_eq(unit_lock_info(f.b, index).flags, 0);
	ck_assert_int_eq(unit_lock_info(f.b, index).bias_slot, -1);
	ck_assert_int_eq(bakery_lock(f.l), BAKERY_EREMOVED);
	passages(l, 2 * GRANT);
	ck_assert_int_eq(unit_lock_info(f.b, index).bias_slot, -1);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	unit_fixture_close(&f);
}
END_TEST

static Suite *bias_suite(void)
{
	Suite *s = suite_create("bias");
	TCase *tc = tcase_create("api");

	tcase_add_test(tc, test_configurations);
	tcase_add_test(tc, test_joining);
	tcase_add_test(tc, test_grant_and_revoke);
	tcase_add_test(tc, test_held_by_the_owner);
	tcase_add_test(tc, test_shared_passages);
	tcase_add_test(tc, test_removed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(bias_suite());
}
