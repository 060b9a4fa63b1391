/* SPDX-License-Identifier: MIT */
/*
 * test_shm_dir.c - nothing another process puts in the world-writable
 * /dev/shm holds bakery_open up (it promises not to block).  Each call runs
 * in a child with a deadline of DEADLINE seconds (a creation takes
 * milliseconds): a hang is a failure, not a stuck suite.
 *
 *   an flock of /dev/shm itself, held by another process (and, as root,
 *   by another user, nobody)              creation succeeds
 *   a FIFO under a creator's temporary name (REGION DEL "new." PID ...,
 *   as the library names them), ours or (as root) nobody's
 *                                         creation succeeds; the FIFO is
 *                                         not removed (it is no temporary
 *                                         of a dead creator)
 *   a FIFO under the region's own name    every open, read-only too:
 *                                         BAKERY_EBADREGION (not a region)
 *   a symbolic link under the region's name, to a region of ours
 *                                         BAKERY_EBADREGION: never followed
 *   a socket under the region's name      BAKERY_EBADREGION (open(2) says
 *                                         ENXIO)
 *   a directory under the region's name   BAKERY_EBADREGION, from
 *                                         bakery_unlink too
 *
 * The tests of another user are left out (with a note) when the suite does
 * not run as root.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>

#include "hostile.h"

#define NOBODY 65534
#define DEADLINE 10.0

/* ------------------------------------------------------------- helpers -- */

static void shm_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "/dev/shm/%s", name + (name[0] == '/'));
}

/* Become NOBODY (in a child): 0, or -1. */
static int become_nobody(void)
{
	return setgid(NOBODY) == 0 && setuid(NOBODY) == 0 ? 0 : -1;
}

struct open_case {
	char name[TK_NAME_SIZE];
	unsigned flags;
	int expect;
	struct tk_gate go;          /* the child opens once this opens */
};

/* Child: bakery_open as asked, once the gate opens; 0 if it answered as
 * expected, 1 if not. */
static int open_child(void *arg)
{
	struct open_case *c = arg;
	bakery_t *b = NULL;
	int err;

	if (!tk_gate_wait(&c->go, DEADLINE))
		return 2;
	err = bakery_open(c->name, c->flags, NULL, &b);
	if (err != c->expect) {
		fprintf(stderr, "bakery_open(%s, %#x): %s, not %s\n", c->name, c->flags,
		        bakery_errname(err), bakery_errname(c->expect));
		return 1;
	}
	if (b)
		bakery_close(b);
	return 0;
}

/* Run bakery_open(C) in a child started (and told to go) now; its verdict
 * within DEADLINE seconds. */
static void open_within_deadline(struct open_case *c)
{
	pid_t pid;
	int rc;

	tk_gate_init(&c->go);
	pid = tk_fork(open_child, c);
	tk_gate_open(&c->go);
	rc = tk_reap(pid, DEADLINE);
	tk_gate_close(&c->go);
	ck_assert_msg(rc != TK_KILLED, "bakery_open(%s) still blocked after %.0f s", c->name,
	              DEADLINE);
	ck_assert_msg(rc == 0, "bakery_open(%s): child ended with %d", c->name, rc);
}

/* bakery_open of C->name with each of the N FLAGS: BAKERY_EBADREGION, in
 * time. */
static void each_open_not_a_region(struct open_case *c, const unsigned *flags, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		c->flags = flags[i];
		c->expect = BAKERY_EBADREGION;
		open_within_deadline(c);
	}
}

/* ---------------------------------------------------- directory flock -- */

struct locker_arg {
	struct tk_gate held;
	bool as_nobody;
};

/* Child: hold an exclusive flock on /dev/shm until killed (as `flock
 * /dev/shm sleep 30` would), as nobody if asked. */
static int dir_locker(void *arg)
{
	struct locker_arg *la = arg;
	int d;

	if (la->as_nobody && become_nobody())
		return 1;
	d = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d < 0 || flock(d, LOCK_EX) != 0)
		return 2;
	tk_gate_open(&la->held);
	for (;;)
		pause();
}

static void create_beside_dir_lock(bool as_nobody)
{
	struct locker_arg la = { .as_nobody = as_nobody };
	struct open_case *c = tk_shared(sizeof(*c));
	pid_t locker;

	tk_gate_init(&la.held);
	locker = tk_fork(dir_locker, &la);
	ck_assert_msg(tk_gate_wait(&la.held, DEADLINE), "the locker did not take the flock");
	tk_name(c->name, sizeof(c->name), "dirlock");
	c->flags = BAKERY_CREATE;
	open_within_deadline(c);
	ck_assert(tk_kill(locker));
	tk_gate_close(&la.held);
	ck_assert_int_eq(bakery_unlink(c->name), 0);
}

START_TEST(dir_flock_by_another_process)
{
	create_beside_dir_lock(false);
}
END_TEST

START_TEST(dir_flock_by_another_user)
{
	create_beside_dir_lock(true);
}
END_TEST

/* ------------------------------------------------- planted temporaries -- */

/* A FIFO at PATH, nobody's if asked. */
static void plant_fifo(const char *path, bool as_nobody)
{
	ck_assert_msg(mkfifo(path, 0666) == 0, "mkfifo %s: %s", path, strerror(errno));
	if (as_nobody)
		ck_assert_int_eq(chown(path, NOBODY, NOBODY), 0);
}

static void fifo_under_temporary_name(bool as_nobody)
{
	struct open_case *c = tk_shared(sizeof(*c));
	char fifo[3][TK_NAME_SIZE + 96];
	struct stat st;
	pid_t pid;
	int rc;

	tk_name(c->name, sizeof(c->name), "tmpfifo");
	c->flags = BAKERY_CREATE;
	tk_gate_init(&c->go);
	pid = tk_fork(open_child, c);
	/* the creator's first temporary by the name it would have had (guessed
	 * as lib/region.c makes them: REGION DEL "new." PID "." N, then a
	 * random part), and another name under the prefix the orphan sweep
	 * opens */
	snprintf(fifo[0], sizeof(fifo[0]), "/dev/shm/%s\x7fnew.%d.1", c->name + 1, (int)pid);
	snprintf(fifo[1], sizeof(fifo[1]), "/dev/shm/%s\x7fnew.%d.1.%016x", c->name + 1,
	         (int)pid, 0);
	snprintf(fifo[2], sizeof(fifo[2]), "/dev/shm/%s\x7fnew.1.1", c->name + 1);
	for (int i = 0; i < 3; i++)
		plant_fifo(fifo[i], as_nobody);
	tk_gate_open(&c->go);
	rc = tk_reap(pid, DEADLINE);
	tk_gate_close(&c->go);
	ck_assert_msg(rc != TK_KILLED, "creation blocked on a FIFO for %.0f s", DEADLINE);
	ck_assert_int_eq(rc, 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_msg(lstat(fifo[i], &st) == 0 && S_ISFIFO(st.st_mode),
		              "a planted FIFO was removed: %s", fifo[i]);
		ck_assert_int_eq(unlink(fifo[i]), 0);
	}
	ck_assert_int_eq(bakery_unlink(c->name), 0);
}

START_TEST(fifo_under_temporary_name_ours)
{
	fifo_under_temporary_name(false);
}
END_TEST

START_TEST(fifo_under_temporary_name_another_users)
{
	fifo_under_temporary_name(true);
}
END_TEST

/* ------------------------------------------------ planted region names -- */

START_TEST(fifo_under_region_name)
{
	static const unsigned flags[] = { BAKERY_RDONLY, 0, BAKERY_CREATE, BAKERY_NORECOVER };
	struct open_case *c = tk_shared(sizeof(*c));
	char path[TK_NAME_SIZE + 16];

	tk_name(c->name, sizeof(c->name), "namefifo");
	shm_path(path, sizeof(path), c->name);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	each_open_not_a_region(c, flags, sizeof(flags) / sizeof(flags[0]));
	ck_assert_int_eq(unlink(path), 0);
}
END_TEST

START_TEST(symlink_under_region_name)
{
	static const unsigned flags[] = { BAKERY_RDONLY, 0, BAKERY_CREATE };
	struct open_case *c = tk_shared(sizeof(*c));
	char target[TK_NAME_SIZE], path[TK_NAME_SIZE + 16], to[TK_NAME_SIZE + 16];
	bakery_t *b = h_region(target, "linked", 4, 4);

	tk_name(c->name, sizeof(c->name), "namelink");
	shm_path(path, sizeof(path), c->name);
	shm_path(to, sizeof(to), target);
	ck_assert_int_eq(symlink(to, path), 0);
	each_open_not_a_region(c, flags, sizeof(flags) / sizeof(flags[0]));
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

START_TEST(socket_under_region_name)
{
	static const unsigned flags[] = { BAKERY_RDONLY, 0, BAKERY_CREATE };
	struct open_case *c = tk_shared(sizeof(*c));
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(sock, 0);
	tk_name(c->name, sizeof(c->name), "namesock");
	shm_path(a.sun_path, sizeof(a.sun_path), c->name);
	ck_assert_int_eq(bind(sock, (struct sockaddr *)&a, sizeof(a)), 0);
	each_open_not_a_region(c, flags, sizeof(flags) / sizeof(flags[0]));
	ck_assert_int_eq(unlink(a.sun_path), 0);
	close(sock);
}
END_TEST

START_TEST(directory_under_region_name)
{
	static const unsigned flags[] = { BAKERY_RDONLY, 0, BAKERY_CREATE };
	struct open_case *c = tk_shared(sizeof(*c));
	char path[TK_NAME_SIZE + 16];

	tk_name(c->name, sizeof(c->name), "namedir");
	shm_path(path, sizeof(path), c->name);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	each_open_not_a_region(c, flags, sizeof(flags) / sizeof(flags[0]));
	ck_assert_int_eq(bakery_unlink(c->name), BAKERY_EBADREGION);
	ck_assert_int_eq(rmdir(path), 0);
}
END_TEST

static Suite *shm_dir_suite(void)
{
	Suite *s = suite_create("shm-dir");
	TCase *tc = tcase_create("planted");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, dir_flock_by_another_process);
	tcase_add_test(tc, fifo_under_temporary_name_ours);
	tcase_add_test(tc, fifo_under_region_name);
	tcase_add_test(tc, symlink_under_region_name);
	tcase_add_test(tc, socket_under_region_name);
	tcase_add_test(tc, directory_under_region_name);
	if (geteuid() == 0) {
		tcase_add_test(tc, dir_flock_by_another_user);
		tcase_add_test(tc, fifo_under_temporary_name_another_users);
	} else {
		printf("test_shm_dir: not checked: another user's flock and FIFO (needs root to "
		       "run a child as nobody)\n");
	}
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return h_run_suite(shm_dir_suite());
}
