/* SPDX-License-Identifier: MIT */
/*
 * test_lock_reset.c - bakery_lock_reset(), for every algorithm: a lock left
 * ENOTRECOVERABLE (EOWNERDEAD, then unlock without bakery_consistent) is
 * made usable again by the region's owner; the next acquirer, in this or
 * another process, is told EOWNERDEAD; repaired, it works as before.  A
 * lock that is not ENOTRECOVERABLE is refused (EINVAL), and so is a caller
 * that does not own the region (EPERM).
 */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

static void fixture_open(struct unit_fixture *f, int algo)
{
	unit_fixture_open(f, "reset", 4, 2, "precious", (enum bakery_algo)algo);
}

/* Holder killed, EOWNERDEAD taken, unlocked unrepaired: not recoverable. */
static void make_not_recoverable(struct unit_fixture *f)
{
	pid_t doomed = unit_holder_process(f->name, "precious", f->algo);

	ck_assert(tk_kill(doomed));
	ck_assert_int_eq(bakery_lock(f->l), EOWNERDEAD);
	ck_assert_int_eq(bakery_unlock(f->l), 0);
	ck_assert_int_eq(bakery_lock(f->l), ENOTRECOVERABLE);
}

/* Another process, with its own open, is told the owner died. */
static int late_comer(void *arg)
{
	struct unit_fixture *f = arg;
	bakery_lock_t *l;
	bakery_t *b;

	if (bakery_open(f->name, 0, NULL, &b) || bakery_lock_open(b, "precious", f->algo, &l))
		return 1;
	if (bakery_lock(l) != EOWNERDEAD)
		return 2;
	if (bakery_consistent(l) || bakery_unlock(l))
		return 3;
	if (bakery_lock(l) || bakery_unlock(l))
		return 4;
	return 0;
}

START_TEST(reset_makes_the_lock_owner_died)
{
	struct unit_fixture f;
	struct bakery_lock_info li;

	fixture_open(&f, _i);
	ck_assert_int_eq(bakery_lock_reset(f.l), EINVAL);   /* nothing to reset */
	make_not_recoverable(&f);
	ck_assert_int_eq(unit_fixture_info(&f).state, BAKERY_LOCK_NOT_RECOVERABLE);
	ck_assert_int_eq(bakery_lock_reset(f.l), 0);
	ck_assert_int_eq(bakery_lock_reset(f.l), EINVAL);   /* once is enough */
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.not_recoverable, 0);
	ck_assert_int_eq(li.owner_dead, 1);
	ck_assert_int_eq(li.state, BAKERY_LOCK_OWNER_DIED);
	ck_assert_int_eq(tk_reap(tk_fork(late_comer, &f), 20), 0);
	ck_assert_int_eq(bakery_lock(f.l), 0);               /* repaired by the other */
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(unit_fixture_info(&f).state, BAKERY_LOCK_OK);
	unit_fixture_close(&f);
}
END_TEST

START_TEST(reset_bad_arguments)
{
	ck_assert_int_eq(bakery_lock_reset(NULL), EINVAL);
}
END_TEST

/* A user who may open the region (mode 0666) but does not own it. */
static int stranger(void *arg)
{
	struct unit_fixture *f = arg;
	bakery_lock_t *l;
	bakery_t *b;

	if (setgid(65534) || setuid(65534))
		return 1;
	if (bakery_open(f->name, 0, NULL, &b) || bakery_lock_open(b, "precious", f->algo, &l))
		return 2;
	return bakery_lock_reset(l) == EPERM ? 0 : 3;
}

START_TEST(reset_needs_the_owner)
{
	struct unit_fixture f;
	char path[256];

	if (geteuid() != 0)
		return;         /* needs root to become another user */
	fixture_open(&f, BAKERY_ALGO_DEFAULT);
	unit_shm_path(path, sizeof(path), f.name);
	ck_assert_int_eq(chmod(path, 0666), 0);
	make_not_recoverable(&f);
	ck_assert_int_eq(tk_reap(tk_fork(stranger, &f), 20), 0);
	ck_assert_int_eq(bakery_lock(f.l), ENOTRECOVERABLE);  /* still */
	ck_assert_int_eq(bakery_lock_reset(f.l), 0);
	unit_fixture_close(&f);
}
END_TEST

static Suite *lock_reset_suite(void)
{
	Suite *s = suite_create("lock-reset");
	TCase *tc = tcase_create("lock-reset");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, reset_makes_the_lock_owner_died, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_test(tc, reset_bad_arguments);
	tcase_add_test(tc, reset_needs_the_owner);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(lock_reset_suite());
}
