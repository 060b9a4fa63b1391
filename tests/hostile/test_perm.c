/* SPDX-License-Identifier: MIT */
/*
 * test_perm.c - permissions of the region's shm object.  Needs root, to run
 * children as another user (setuid(65534)); exits 77 (skipped) otherwise.
 *
 *   default mode                      0600, whatever the umask
 *   another user, mode 0600 or 0644   bakery_open: EACCES (also with
 *                                     BAKERY_CREATE: the region exists);
 *                                     bakery_unlink: EACCES, name kept
 *   another user, mode 0666           opens, locks, unlocks
 *   cfg.mode when opening an existing region (with or without CREATE)
 *                                     changes nothing; region_info.mode
 *                                     reports the object's bits
 *   `bakery create --mode`            same rule through the tool: the mode
 *                                     of a new region; an existing region is
 *                                     refused and keeps its mode
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "hostile.h"

#define NOBODY 65534

static mode_t object_mode(const char *name)
{
	char path[TK_NAME_SIZE + 16];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/shm%s", name);
	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static bakery_t *region_with_mode(char *name, mode_t mode)
{
	struct bakery_config cfg = { .slots = 4, .locks = 2, .mode = mode };
	bakery_t *b;

	tk_name(name, TK_NAME_SIZE, "perm");
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b), 0);
	return b;
}

/* As another user: opening must fail with EACCES. */
static int stranger_refused(void *arg)
{
	const char *name = arg;
	bakery_t *b;

	if (setgid(NOBODY) || setuid(NOBODY))
		return 10;
	if (bakery_open(name, 0, NULL, &b) != EACCES)
		return 11;
	if (bakery_open(name, BAKERY_CREATE, NULL, &b) != EACCES)
		return 12;
	if (bakery_unlink(name) != EACCES)
		return 13;
	return 0;
}

/* As another user: a world-writable region is usable. */
static int stranger_allowed(void *arg)
{
	const char *name = arg;
	bakery_t *b;
	bakery_lock_t *l;

	if (setgid(NOBODY) || setuid(NOBODY))
		return 10;
	if (bakery_open(name, 0, NULL, &b) || bakery_lock_open(b, "p", 0, &l))
		return 11;
	if (bakery_lock(l) || bakery_unlock(l) || bakery_close(b))
		return 12;
	return 0;
}

START_TEST(default_mode_is_0600)
{
	char *name = tk_shared(TK_NAME_SIZE);
	struct bakery_region_info ri;
	bakery_t *b;

	umask(0);
	b = region_with_mode(name, 0);
	ck_assert_uint_eq(object_mode(name), 0600);
	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	ck_assert_uint_eq(ri.mode, 0600);
	ck_assert_int_eq(tk_reap(tk_fork(stranger_refused, name), 10), 0);
	ck_assert_uint_eq(object_mode(name), 0600);    /* still there */
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

START_TEST(read_only_for_others_is_refused)
{
	char *name = tk_shared(TK_NAME_SIZE);
	bakery_t *b = region_with_mode(name, 0644);

	ck_assert_uint_eq(object_mode(name), 0644);
	ck_assert_int_eq(tk_reap(tk_fork(stranger_refused, name), 10), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

START_TEST(world_writable_is_shared)
{
	char *name = tk_shared(TK_NAME_SIZE);
	bakery_t *b;

	umask(077);             /* the mode is exact, not masked */
	b = region_with_mode(name, 0666);
	ck_assert_uint_eq(object_mode(name), 0666);
	ck_assert_int_eq(tk_reap(tk_fork(stranger_allowed, name), 10), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

START_TEST(mode_applies_on_creation_only)
{
	char name[TK_NAME_SIZE];
	struct bakery_config wide = { .mode = 0666 }, narrow = { .mode = 0600 };
	struct bakery_region_info ri;
	bakery_t *b = region_with_mode(name, 0640), *b2;

	ck_assert_uint_eq(object_mode(name), 0640);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE, &wide, &b2), 0);
	ck_assert_uint_eq(object_mode(name), 0640);
	ck_assert_int_eq(bakery_region_info(b2, &ri), 0);
	ck_assert_uint_eq(ri.mode, 0640);
	ck_assert_int_eq(bakery_close(b2), 0);
	ck_assert_int_eq(bakery_open(name, 0, &narrow, &b2), 0);
	ck_assert_uint_eq(object_mode(name), 0640);
	ck_assert_int_eq(bakery_close(b2), 0);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &wide, &b2), EEXIST);
	ck_assert_uint_eq(object_mode(name), 0640);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* Run the tool; its exit status. */
static int tool(const char *bin, const char *name, const char *mode)
{
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 1);
		dup2(devnull, 2);
		execl(bin, bin, "create", name, "--slots", "2", "--locks", "1", "--mode", mode,
		      (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

START_TEST(tool_mode_applies_on_creation_only)
{
	const char *top = getenv("top_builddir");
	char bin[4096], name[TK_NAME_SIZE];

	if (!top)
		return;         /* run outside `make check`: no tool to find */
	snprintf(bin, sizeof(bin), "%s/tools/bakery", top);
	tk_name(name, sizeof(name), "permtool");
	ck_assert_int_eq(tool(bin, name, "0640"), 0);
	ck_assert_uint_eq(object_mode(name), 0640);
	ck_assert_int_ne(tool(bin, name, "0666"), 0);
	ck_assert_uint_eq(object_mode(name), 0640);
}
END_TEST

static Suite *perm_suite(void)
{
	Suite *s = suite_create("permissions");
	TCase *tc = tcase_create("mode");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, default_mode_is_0600);
	tcase_add_test(tc, read_only_for_others_is_refused);
	tcase_add_test(tc, world_writable_is_shared);
	tcase_add_test(tc, mode_applies_on_creation_only);
	tcase_add_test(tc, tool_mode_applies_on_creation_only);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (geteuid() != 0) {
		printf("skipped: running children as another user needs root\n");
		return 77;
	}
	return h_run_suite(perm_suite());
}
