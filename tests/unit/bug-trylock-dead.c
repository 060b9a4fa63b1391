/* SPDX-License-Identifier: MIT */
/*
 * bug-trylock-dead.c - a holder dies while nobody waits on it, for every
 * algorithm, and the survivor only ever calls bakery_trylock, retrying on
 * EBUSY (as `bakery-hammer ... try` does).  Survivors must make progress
 * without any manual step (docs/design.md, "The recovery model": the dead
 * slot's registers must eventually read zero).  So within a second of
 * retries the trylock must find the dead holder and return EOWNERDEAD with
 * the lock.
 *
 * A regression test: a trylock used to give up with EBUSY without looking
 * at the awaited slot's liveness token.
 */
#include "config.h"

#include <errno.h>

#include "unit.h"

START_TEST(trylock_retries_find_the_dead_holder)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "trydead", 4, 2);
	bakery_lock_t *l = unit_lock(b, "precious", algo);
	double end;
	int rc;

	ck_assert(tk_kill(unit_holder_process(name, "precious", algo)));
	end = tk_now(CLOCK_MONOTONIC) + 1;
	do
		rc = bakery_trylock(l);
	while (rc == EBUSY && tk_now(CLOCK_MONOTONIC) < end);
	ck_assert_msg(rc == EOWNERDEAD, "trylock after the holder died: %s", bakery_strerror(rc));
	ck_assert_int_eq(bakery_consistent(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_trylock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

static Suite *trylock_dead_suite(void)
{
	Suite *s = suite_create("trylock-dead");
	TCase *tc = tcase_create("trylock-dead");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, trylock_retries_find_the_dead_holder, TK_ALGO_FIRST, TK_ALGO_END);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(trylock_dead_suite());
}
