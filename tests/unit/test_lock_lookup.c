/* SPDX-License-Identifier: MIT */
/*
 * test_lock_lookup.c - bakery_lock_lookup(): opens a lock that exists, as
 * bakery_lock_open would, and creates none: a missing name is ENOENT and
 * leaves the lock table as it was; bad names and arguments are refused.
 */
#include "config.h"

#include <errno.h>

#include "unit.h"

static unsigned locks_used(bakery_t *b)
{
	struct bakery_region_info ri;

	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	return ri.locks_used;
}

START_TEST(lookup_finds_and_never_creates)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "lookup", 4, 2);
	bakery_lock_t *made = unit_lock(b, "there", (enum bakery_algo)_i), *l = NULL;
	unsigned a, c;

	ck_assert_int_eq(bakery_lock_lookup(b, "missing", BAKERY_ALGO_DEFAULT, &l), ENOENT);
	ck_assert_ptr_null(l);
	ck_assert_uint_eq(locks_used(b), 1);
	ck_assert_int_eq(bakery_lock_lookup(b, "there", BAKERY_ALGO_DEFAULT, &l), 0);
	ck_assert_int_eq(bakery_lock_index(l, &a), 0);
	ck_assert_int_eq(bakery_lock_index(made, &c), 0);
	ck_assert_uint_eq(a, c);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_trylock(made), EDEADLK);     /* the same lock */
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_lock_close(made), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

START_TEST(lookup_bad_arguments)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "lookupbad", 4, 2);
	bakery_lock_t *l = NULL;

	ck_assert_int_eq(bakery_lock_lookup(NULL, "x", BAKERY_ALGO_DEFAULT, &l), EINVAL);
	ck_assert_int_eq(bakery_lock_lookup(b, NULL, BAKERY_ALGO_DEFAULT, &l), EINVAL);
	ck_assert_int_eq(bakery_lock_lookup(b, "x", BAKERY_ALGO_DEFAULT, NULL), EINVAL);
	ck_assert_int_eq(bakery_lock_lookup(b, "", BAKERY_ALGO_DEFAULT, &l), EINVAL);
	ck_assert_int_eq(bakery_lock_lookup(b, "a/b", BAKERY_ALGO_DEFAULT, &l), EINVAL);
	ck_assert_int_eq(bakery_lock_lookup(b, "0123456789012345678901234567890123456789"
	                                        "012345678901234567890123", BAKERY_ALGO_DEFAULT, &l),
	                 ENAMETOOLONG);
	ck_assert_ptr_null(l);
	ck_assert_uint_eq(locks_used(b), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

static Suite *lock_lookup_suite(void)
{
	Suite *s = suite_create("lock-lookup");
	TCase *tc = tcase_create("lock-lookup");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, lookup_finds_and_never_creates, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_test(tc, lookup_bad_arguments);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(lock_lookup_suite());
}
