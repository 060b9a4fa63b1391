/* SPDX-License-Identifier: MIT */
/*
 * test_rdonly.c - BAKERY_RDONLY: a region opened read-only answers the
 * introspection calls (for a reader that may only read the object, as a
 * monitoring user of a 0644 region) and refuses every call that would
 * write (EPERM) without touching the region; it never reaps (a dead slot
 * stays for the inspector to see); it cannot be combined with CREATE.
 */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

START_TEST(rdonly_sees_and_refuses_writes)
{
	char name[TK_NAME_SIZE];
	struct bakery_region_info ri;
	struct bakery_lock_info li;
	struct unit_holder h;
	bakery_t *b = unit_region(name, "rdonly", 4, 2), *ro;
	bakery_lock_t *l = unit_lock(b, "watched", BAKERY_ALGO_DEFAULT), *rl;
	unsigned index, n;

	ck_assert_int_eq(bakery_lock_index(l, &index), 0);
	unit_holder_start(&h, l);
	ck_assert_int_eq(bakery_open(name, BAKERY_RDONLY, NULL, &ro), 0);
	ck_assert_int_eq(bakery_region_info(ro, &ri), 0);
	ck_assert_uint_eq(ri.locks_used, 1);
	ck_assert_int_eq(bakery_lock_info(ro, index, &li), 0);
	ck_assert_str_eq(li.name, "watched");
	ck_assert_int_ge(li.holder, 0);
	ck_assert_int_eq(bakery_lock_open(ro, "watched", BAKERY_ALGO_DEFAULT, &rl), EPERM);
	ck_assert_int_eq(bakery_lock_open(ro, "new", BAKERY_ALGO_DEFAULT, &rl), EPERM);
	ck_assert_int_eq(bakery_recover(ro, &n), EPERM);
	ck_assert_int_eq(bakery_close(ro), 0);
	unit_holder_stop(&h);
	ck_assert_int_eq(bakery_open(name, BAKERY_RDONLY | BAKERY_CREATE, NULL, &ro), EINVAL);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

START_TEST(rdonly_does_not_reap)
{
	char name[TK_NAME_SIZE];
	struct bakery_region_info ri;
	bakery_t *b = unit_region(name, "rdreap", 4, 2), *ro;
	pid_t doomed = unit_holder_process(name, "precious", BAKERY_ALGO_DEFAULT);

	ck_assert(tk_kill(doomed));
	ck_assert_int_eq(bakery_open(name, BAKERY_RDONLY, NULL, &ro), 0);
	ck_assert_int_eq(bakery_region_info(ro, &ri), 0);
	ck_assert_uint_eq(ri.slots_used, 1);        /* the dead one, still there */
	ck_assert_int_eq(bakery_close(ro), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

#define CANNOT_DROP_PRIVILEGES 77

/* Another user, with read permission only. */
static int reader(void *arg)
{
	const char *name = arg;
	struct bakery_region_info ri;
	bakery_t *b;

	if (setgid(65534) || setuid(65534))
		return CANNOT_DROP_PRIVILEGES;
	if (bakery_open(name, BAKERY_NORECOVER, NULL, &b) != EACCES)
		return 1;
	if (bakery_open(name, BAKERY_RDONLY, NULL, &b))
		return 2;
	if (bakery_region_info(b, &ri) || ri.mode != 0644)
		return 3;
	return bakery_close(b) ? 4 : 0;
}

START_TEST(rdonly_needs_read_permission_only)
{
	char name[TK_NAME_SIZE], path[TK_NAME_SIZE + 16];
	bakery_t *b;
	int rc;

	if (geteuid() != 0)
		return;         /* needs root to become another user */
	b = unit_region(name, "rdperm", 4, 2);
	unit_shm_path(path, sizeof(path), name);
	ck_assert_int_eq(chmod(path, 0644), 0);
	rc = tk_reap(tk_fork(reader, name), 20);
	ck_assert_msg(rc == 0 || rc == CANNOT_DROP_PRIVILEGES, "reader: step %d", rc);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

static Suite *rdonly_suite(void)
{
	Suite *s = suite_create("rdonly");
	TCase *tc = tcase_create("rdonly");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, rdonly_sees_and_refuses_writes);
	tcase_add_test(tc, rdonly_does_not_reap);
	tcase_add_test(tc, rdonly_needs_read_permission_only);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(rdonly_suite());
}
