/* SPDX-License-Identifier: MIT */
/*
 * test_squat.c - a region of another user is not joined unless asked.
 * Anyone may create any name in /dev/shm: a user who creates the name
 * another meant for its own region first (a squat) would own that region,
 * and could rewrite its registers, remove or reset its locks and let two
 * "exclusive" holders in together.  Needs root, to run children as other
 * users (setuid); exits 77 (skipped) otherwise.
 *
 *   nobody's region (0666 or 0600), opened by root
 *                          EPERM (with and without BAKERY_CREATE; the
 *                          message names the cause), unless
 *                          BAKERY_ANY_OWNER (then it locks) or
 *                          BAKERY_RDONLY (introspection)
 *   nobody's region, opened by another unprivileged user
 *                          EPERM, unless BAKERY_ANY_OWNER
 *   root's region (0666), opened by nobody
 *                          opens: root's regions are trusted
 *   `bakery run` on nobody's region, and `bakery run --file` whose
 *   path region (/bakery-paths-UID) nobody created first
 *                          refused (exit 125), the message names nobody
 *                          and the way out (--any-owner for a region,
 *                          BAKERY_PATH_REGION for the path region)
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
#define OTHER  65533            /* a second unprivileged user */

/* -------------------------------------------------------------- helpers -- */

struct squat {
	char name[TK_NAME_SIZE];
	mode_t mode;
};

/* Child: as nobody, create S->name (CREATE|EXCL, S->mode). */
static int squatter(void *arg)
{
	const struct squat *s = arg;
	struct bakery_config cfg = { .slots = 4, .locks = 4, .mode = s->mode };
	bakery_t *b;

	if (setgid(NOBODY) || setuid(NOBODY))
		return 10;
	if (bakery_open(s->name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b))
		return 11;
	return bakery_close(b) ? 12 : 0;
}

/* A region NAME of nobody's, with MODE (shared memory: the children see it). */
static struct squat *squatted(const char *tag, mode_t mode)
{
	struct squat *s = tk_shared(sizeof(*s));
	char path[TK_NAME_SIZE + 16];
	struct stat st;

	tk_name(s->name, sizeof(s->name), tag);
	s->mode = mode;
	ck_assert_int_eq(tk_reap(tk_fork(squatter, s), 10), 0);
	snprintf(path, sizeof(path), "/dev/shm%s", s->name);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_uid, NOBODY);
	return s;
}

/* Take and give back a lock of B: the handle works. */
static int lock_once(bakery_t *b)
{
	bakery_lock_t *l;
	int err = bakery_lock_open(b, "probe", BAKERY_ALGO_DEFAULT, &l);

	if (err)
		return err;
	err = bakery_lock(l);
	if (!err)
		err = bakery_unlock(l);
	bakery_lock_close(l);
	return err;
}

/* ------------------------------------------------------- the library -- */

static void refused_unless_asked(const char *name)
{
	bakery_t *b = NULL;
	struct bakery_region_info ri;

	ck_assert_int_eq(bakery_open(name, 0, NULL, &b), EPERM);
	ck_assert_ptr_null(b);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE, NULL, &b), EPERM);
	ck_assert_int_eq(bakery_open(name, BAKERY_NORECOVER, NULL, &b), EPERM);
	ck_assert_ptr_nonnull(strstr(bakery_strerror(EPERM), "another user"));

	ck_assert_int_eq(bakery_open(name, BAKERY_RDONLY, NULL, &b), 0);
	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	ck_assert_int_eq(bakery_close(b), 0);

	ck_assert_int_eq(bakery_open(name, BAKERY_ANY_OWNER, NULL, &b), 0);
	ck_assert_int_eq(lock_once(b), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_ANY_OWNER, NULL, &b), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}

START_TEST(world_writable_squat_refused)
{
	refused_unless_asked(squatted("squat", 0666)->name);
}
END_TEST

/* Root could open a 0600 object of anyone's: the owner decides, not the
 * mode. */
START_TEST(private_squat_refused_to_root)
{
	refused_unless_asked(squatted("squat600", 0600)->name);
}
END_TEST

/* Child: as OTHER, open ARG's region: EPERM plain, 0 with ANY_OWNER. */
static int other_user(void *arg)
{
	const struct squat *s = arg;
	bakery_t *b;

	if (setgid(OTHER) || setuid(OTHER))
		return 10;
	if (bakery_open(s->name, BAKERY_CREATE, NULL, &b) != EPERM)
		return 11;
	if (bakery_open(s->name, BAKERY_ANY_OWNER, NULL, &b) || lock_once(b))
		return 12;
	return bakery_close(b) ? 13 : 0;
}

START_TEST(squat_refused_between_users)
{
	struct squat *s = squatted("squatu", 0666);

	ck_assert_int_eq(tk_reap(tk_fork(other_user, s), 10), 0);
}
END_TEST

/* Child: as nobody, join root's region ARG. */
static int joins_roots(void *arg)
{
	bakery_t *b;

	if (setgid(NOBODY) || setuid(NOBODY))
		return 10;
	if (bakery_open(arg, 0, NULL, &b) || lock_once(b))
		return 11;
	return bakery_close(b) ? 12 : 0;
}

START_TEST(roots_region_trusted)
{
	struct bakery_config cfg = { .slots = 4, .locks = 4, .mode = 0666 };
	char *name = tk_shared(TK_NAME_SIZE);
	bakery_t *b;

	tk_name(name, TK_NAME_SIZE, "rootreg");
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b), 0);
	ck_assert_int_eq(tk_reap(tk_fork(joins_roots, name), 10), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* ------------------------------------------------------------ the tool -- */

/* Run `bakery ARGV...` with stderr into ERR (ERR_SIZE bytes); its exit
 * status (128 + signal if it died). */
static int tool(char *err, size_t err_size, char *const argv[])
{
	const char *top = getenv("top_builddir");
	char bin[4096], path[] = "/tmp/bktest-squat-XXXXXX";
	int fd = mkstemp(path), st;
	ssize_t n;
	pid_t pid;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	snprintf(bin, sizeof(bin), "%s/tools/bakery", top ? top : ".");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(fd, 2);
		execv(bin, argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	n = pread(fd, err, err_size - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

START_TEST(tool_refuses_squat)
{
	struct squat *s = squatted("squattool", 0666);
	char err[1024];
	char *plain[] = { "bakery", "run", s->name, "job", "--", "true", NULL };
	char *shared[] = { "bakery", "run", "--any-owner", s->name, "job", "--", "true", NULL };

	if (!getenv("top_builddir"))
		return;         /* run outside `make check`: no tool to find */
	ck_assert_int_eq(tool(err, sizeof(err), plain), 125);
	ck_assert_msg(strstr(err, "nobody") && strstr(err, "--any-owner"), "message: %s", err);
	ck_assert_int_eq(tool(err, sizeof(err), shared), 0);
}
END_TEST

/* `bakery run --file` keeps its lock in the caller's path region, named
 * after its user id (/bakery-paths-UID, or BAKERY_PATH_REGION): another user
 * can compute that name and create it first. */
START_TEST(tool_refuses_squatted_path_region)
{
	struct squat *s = squatted("squatpaths", 0666);
	char file[] = "/tmp/bktest-squatfile-XXXXXX", err[1024];
	char *plain[] = { "bakery", "run", "--file", file, "--", "true", NULL };
	int fd;

	if (!getenv("top_builddir"))
		return;
	fd = mkstemp(file);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(setenv(BAKERY_PATH_REGION_ENV, s->name, 1), 0);
	ck_assert_int_eq(tool(err, sizeof(err), plain), 125);
	ck_assert_msg(strstr(err, "nobody") && strstr(err, BAKERY_PATH_REGION_ENV),
	              "message: %s", err);
	unsetenv(BAKERY_PATH_REGION_ENV);
	ck_assert_int_eq(bakery_unlink(s->name), 0);
	unlink(file);
}
END_TEST

static Suite *squat_suite(void)
{
	Suite *s = suite_create("squat");
	TCase *tc = tcase_create("owner");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, world_writable_squat_refused);
	tcase_add_test(tc, private_squat_refused_to_root);
	tcase_add_test(tc, squat_refused_between_users);
	tcase_add_test(tc, roots_region_trusted);
	tcase_add_test(tc, tool_refuses_squat);
	tcase_add_test(tc, tool_refuses_squatted_path_region);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (geteuid() != 0) {
		printf("test_squat: not checked: a region of another user needs a second user "
		       "(run as root: children become nobody)\n");
		return 77;
	}
	return h_run_suite(squat_suite());
}
