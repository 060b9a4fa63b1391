/* SPDX-License-Identifier: MIT */
/*
 * test_region_crash.c - a creator killed in the middle of building a region
 * (test build: BAKERY_CRASH_AT=create-format or create-link) leaves nothing
 * an opener could take for a region: the name does not exist (ENOENT), and
 * the next creator succeeds and removes the dead creator's temporary object
 * (but never the temporary object of a creator that is still alive).
 * A lock creator stopped while it holds the region's lock table
 * (BAKERY_STOP_AT=lock-create) makes other lock creations give up after 2 s
 * with EAGAIN, not BAKERY_EBADREGION: the region is sound, and once the
 * creator goes on every creation succeeds.
 * A creator whose temporary object is cut short under its format (by a
 * process of the same user: the object has a name in /dev/shm) fails with
 * BAKERY_EBADREGION, neither dies of SIGBUS nor links the object.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

static const char *const crash_points[] = { "create-format", "create-link" };

/* Temporary objects of NAME's creators (NAME DEL "new." ...) under /dev/shm
 * (lib/region.c: TMP_TAG). */
#define TMP_TAG "\x7f" "new."
static unsigned temporaries(const char *name)
{
	char prefix[TK_NAME_SIZE + 8];
	struct dirent *e;
	unsigned n = 0;
	DIR *d = opendir("/dev/shm");

	snprintf(prefix, sizeof(prefix), "%s" TMP_TAG, name + 1);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

struct doomed {
	const char *name;
	const char *point;
};

/* Create the region with the crash point armed; never gets to return 0. */
static int doomed_creator(void *arg)
{
	const struct doomed *d = arg;
	bakery_t *b;

	setenv("BAKERY_CRASH_AT", d->point, 1);
	return bakery_open(d->name, BAKERY_CREATE, NULL, &b) == 0 ? 1 : 2;
}

START_TEST(killed_creator_leaves_no_region)
{
	char name[TK_NAME_SIZE];
	struct doomed d = { name, crash_points[_i] };
	struct bakery_region_info ri;
	bakery_t *b = NULL;
	bakery_lock_t *l;

	tk_name(name, sizeof(name), "crashcreate");
	ck_assert_int_eq(tk_reap(tk_fork(doomed_creator, &d), 10), 128 + SIGKILL);

	/* the creator really died half-way: its temporary object is there */
	ck_assert_uint_eq(temporaries(name), 1);
	ck_assert_int_eq(bakery_open(name, 0, NULL, &b), ENOENT);
	ck_assert_ptr_null(b);

	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, NULL, &b), 0);
	ck_assert_uint_eq(temporaries(name), 0);
	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	ck_assert_uint_eq(ri.slots, BAKERY_DEFAULT_SLOTS);
	l = unit_lock(b, "after-crash", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* Each creator removes the orphans of the dead ones before it: after two
 * dead creators only the second's temporary is left, and a live creator
 * then removes that one. */
START_TEST(orphans_of_earlier_creators_removed)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = NULL;

	tk_name(name, sizeof(name), "orphans");
	for (unsigned i = 0; i < 2; i++) {
		struct doomed d = { name, crash_points[i] };
		ck_assert_int_eq(tk_reap(tk_fork(doomed_creator, &d), 10), 128 + SIGKILL);
		ck_assert_uint_eq(temporaries(name), 1);
	}
	ck_assert_int_eq(bakery_open(name, 0, NULL, &b), ENOENT);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE, NULL, &b), 0);
	ck_assert_uint_eq(temporaries(name), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* A temporary object whose creator is alive (it holds the object's flock)
 * is not an orphan: another creator must leave it alone. */
START_TEST(live_creators_temporary_is_kept)
{
	char name[TK_NAME_SIZE], path[TK_NAME_SIZE + 64];
	bakery_t *b = NULL;
	int fd;

	tk_name(name, sizeof(name), "livetmp");
	snprintf(path, sizeof(path), "/dev/shm/%s" TMP_TAG "%d.999", name + 1, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE, NULL, &b), 0);
	ck_assert_uint_eq(temporaries(name), 1);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
	close(fd);
	ck_assert_int_eq(unlink(path), 0);
}
END_TEST

/* Child: create region ARG, stopping (SIGSTOP) in the middle of its
 * format; exit 0 if the creation failed with BAKERY_EBADREGION. */
static int stopped_region_creator(void *arg)
{
	bakery_t *b = NULL;
	int err;

	if (setenv("BAKERY_STOP_AT", "create-format", 1))
		return 1;
	err = bakery_open(arg, BAKERY_CREATE, NULL, &b);
	if (err != BAKERY_EBADREGION)
		fprintf(stderr, "creator: %s, expected BAKERY_EBADREGION\n", bakery_strerror(err));
	return err == BAKERY_EBADREGION ? 0 : 2;
}

/* Cut NAME's one temporary object to 0 bytes. */
static void temporary_cut(const char *name)
{
	char prefix[TK_NAME_SIZE + 8], path[TK_NAME_SIZE + 300];
	struct dirent *e;
	unsigned n = 0;
	DIR *d = opendir("/dev/shm");

	snprintf(prefix, sizeof(prefix), "%s" TMP_TAG, name + 1);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
		ck_assert_int_eq(truncate(path, 0), 0);
		n++;
	}
	closedir(d);
	ck_assert_uint_eq(n, 1);
}

START_TEST(temporary_cut_short_under_format)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = NULL;
	pid_t creator;
	int st;

	tk_name(name, sizeof(name), "cutformat");
	creator = tk_fork(stopped_region_creator, name);
	ck_assert_int_eq(waitpid(creator, &st, WUNTRACED), creator);
	ck_assert_msg(WIFSTOPPED(st), "the creator did not stop at create-format");
	temporary_cut(name);
	ck_assert_int_eq(kill(creator, SIGCONT), 0);
	/* without the guard: killed by SIGBUS (128 + 7) */
	ck_assert_int_eq(tk_reap(creator, 10), 0);
	ck_assert_uint_eq(temporaries(name), 0);
	ck_assert_int_eq(bakery_open(name, 0, NULL, &b), ENOENT);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, NULL, &b), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* Child: create lock "first" in region ARG, stopping (SIGSTOP) with the
 * lock table held. */
static int stopped_lock_creator(void *arg)
{
	bakery_t *b = NULL;
	bakery_lock_t *l = NULL;

	if (setenv("BAKERY_STOP_AT", "lock-create", 1) || bakery_open(arg, 0, NULL, &b) ||
	    bakery_lock_open(b, "first", BAKERY_ALGO_DEFAULT, &l))
		return 1;
	return 0;
}

START_TEST(stopped_lock_creator_is_not_corruption)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "stoplock", 4, 4);
	bakery_lock_t *l = NULL;
	pid_t creator = tk_fork(stopped_lock_creator, name);
	int st;

	ck_assert_int_eq(waitpid(creator, &st, WUNTRACED), creator);
	ck_assert_msg(WIFSTOPPED(st), "the creator did not stop at lock-create");
	ck_assert_int_eq(bakery_lock_open(b, "second", BAKERY_ALGO_DEFAULT, &l), EAGAIN);
	ck_assert_int_eq(kill(creator, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(creator, 10), 0);
	ck_assert_int_eq(bakery_lock_open(b, "second", BAKERY_ALGO_DEFAULT, &l), 0);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_lock_open(b, "first", BAKERY_ALGO_DEFAULT, &l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

static Suite *region_crash_suite(void)
{
	Suite *s = suite_create("region-crash");
	TCase *tc = tcase_create("killed-creator");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, killed_creator_leaves_no_region, 0,
	                    (int)(sizeof(crash_points) / sizeof(crash_points[0])));
	tcase_add_test(tc, orphans_of_earlier_creators_removed);
	tcase_add_test(tc, live_creators_temporary_is_kept);
	tcase_add_test(tc, stopped_lock_creator_is_not_corruption);
	tcase_add_test(tc, temporary_cut_short_under_format);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(region_crash_suite());
}
