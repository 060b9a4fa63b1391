/* SPDX-License-Identifier: MIT */
/*
 * test_region.c - regions: create, open, exclusive create, names ("/x" and
 * "x" alike; bad and too long ones refused), flags, configuration limits,
 * permission bits (0600 by default, cfg.mode exactly, EACCES for a user the
 * bits refuse), unlink while mapped, many processes racing to create one
 * region, a region named like another's creation temporary, and
 * bakery_region_size.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

/* Does the region exist under NAME? (an open without CREATE says) */
static int region_probe(const char *name)
{
	bakery_t *b = NULL;
	int rc = bakery_open(name, 0, NULL, &b);

	if (rc == 0)
		bakery_close(b);
	return rc;
}

START_TEST(create_then_open_same_region)
{
	char name[TK_NAME_SIZE];
	struct bakery_region_info ri;
	bakery_t *b1, *b2 = NULL;
	bakery_lock_t *l1, *l2;
	unsigned i1, i2;

	b1 = unit_region(name, "same", 0, 0);
	ck_assert_int_eq(bakery_region_info(b1, &ri), 0);
	ck_assert_uint_eq(ri.slots, BAKERY_DEFAULT_SLOTS);
	ck_assert_uint_eq(ri.locks, BAKERY_DEFAULT_LOCKS);
	ck_assert_uint_eq(ri.locks_used, 0);

	ck_assert_int_eq(bakery_open(name, 0, NULL, &b2), 0);
	l1 = unit_lock(b1, "shared", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_region_info(b2, &ri), 0);
	ck_assert_uint_eq(ri.locks_used, 1);     /* b1's lock seen through b2 */
	l2 = unit_lock(b2, "shared", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_lock_index(l1, &i1), 0);
	ck_assert_int_eq(bakery_lock_index(l2, &i2), 0);
	ck_assert_uint_eq(i1, i2);

	/* a plain CREATE of an existing region opens it, cfg ignored */
	{
		struct bakery_config cfg = { .slots = 3, .locks = 3 };
		bakery_t *b3 = NULL;
		ck_assert_int_eq(bakery_open(name, BAKERY_CREATE, &cfg, &b3), 0);
		ck_assert_int_eq(bakery_region_info(b3, &ri), 0);
		ck_assert_uint_eq(ri.slots, BAKERY_DEFAULT_SLOTS);
		ck_assert_uint_eq(ri.locks_used, 1);
		ck_assert_int_eq(bakery_close(b3), 0);
	}
	ck_assert_int_eq(bakery_lock_close(l1), 0);
	ck_assert_int_eq(bakery_lock_close(l2), 0);
	ck_assert_int_eq(bakery_close(b1), 0);
	ck_assert_int_eq(bakery_close(b2), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

START_TEST(exclusive_create_and_missing_region)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = NULL, *b2 = NULL;

	tk_name(name, sizeof(name), "excl");
	ck_assert_int_eq(bakery_open(name, 0, NULL, &b), ENOENT);
	ck_assert_int_eq(bakery_unlink(name), ENOENT);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, NULL, &b), 0);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, NULL, &b2), EEXIST);
	ck_assert_ptr_null(b2);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
	ck_assert_int_eq(region_probe(name), ENOENT);
}
END_TEST

START_TEST(slash_prefix_names_the_same_region)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = NULL;

	tk_name(name, sizeof(name), "slash");
	/* created without the slash, found with it, and the other way round */
	ck_assert_int_eq(bakery_open(name + 1, BAKERY_CREATE | BAKERY_EXCL, NULL, &b), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(region_probe(name), 0);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, NULL, &b), EEXIST);
	ck_assert_int_eq(bakery_unlink(name + 1), 0);
	ck_assert_int_eq(region_probe(name), ENOENT);
}
END_TEST

START_TEST(bad_names_are_refused)
{
	static const char *const bad[] = {
		"", "/", "a/b", "/a/b", "a\x01" "b", "tab\there", "del\x7f", "\xc3\xa9t\xc3\xa9",
		".", "/.", "..", "/..",
	};
	bakery_t *b = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(bakery_open(bad[i], BAKERY_CREATE, NULL, &b) == EINVAL,
		              "bakery_open(\"%s\") accepted", bad[i]);
		ck_assert_msg(bakery_unlink(bad[i]) == EINVAL, "bakery_unlink(\"%s\")", bad[i]);
	}
	ck_assert_int_eq(bakery_open(NULL, BAKERY_CREATE, NULL, &b), EINVAL);
	ck_assert_int_eq(bakery_unlink(NULL), EINVAL);
	ck_assert_ptr_null(b);
}
END_TEST

/* A name of exactly LEN characters (no slash), unique to this test. */
static void long_name(char *buf, size_t len)
{
	char base[TK_NAME_SIZE];
	size_t n;

	tk_name(base, sizeof(base), "long");
	n = strlen(base + 1);
	memcpy(buf, base + 1, n);
	memset(buf + n, 'x', len - n);
	buf[len] = '\0';
}

START_TEST(name_length_limit)
{
	char name[BAKERY_REGION_NAME_MAX + 2], slashed[BAKERY_REGION_NAME_MAX + 3];
	bakery_t *b = NULL;

	long_name(name, BAKERY_REGION_NAME_MAX);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, NULL, &b), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);

	b = NULL;
	long_name(name, BAKERY_REGION_NAME_MAX + 1);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE, NULL, &b), ENAMETOOLONG);
	ck_assert_int_eq(bakery_unlink(name), ENAMETOOLONG);
	/* the leading slash does not count */
	snprintf(slashed, sizeof(slashed), "/%s", name);
	ck_assert_int_eq(bakery_open(slashed, BAKERY_CREATE, NULL, &b), ENAMETOOLONG);
	ck_assert_ptr_null(b);
}
END_TEST

START_TEST(bad_flags_and_out_pointer)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = NULL;

	tk_name(name, sizeof(name), "flags");
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | 0x8u, NULL, &b), EINVAL);
	ck_assert_int_eq(bakery_open(name, 0x80000000u, NULL, &b), EINVAL);
	ck_assert_int_eq(bakery_open(name, BAKERY_EXCL, NULL, &b), EINVAL);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE, NULL, NULL), EINVAL);
	ck_assert_ptr_null(b);
	ck_assert_int_eq(region_probe(name), ENOENT);  /* nothing was created */
}
END_TEST

START_TEST(config_out_of_range)
{
	static const struct bakery_config bad[] = {
		{ .slots = BAKERY_MAX_SLOTS + 1 },
		{ .slots = ~0u },
		{ .locks = BAKERY_MAX_LOCKS + 1 },
		{ .mode = 010000 },
		{ .mode = 0600 | 0100000 },
		/* outside 0666: a setuid, setgid, sticky or executable region */
		{ .mode = 04777 },
		{ .mode = 02660 },
		{ .mode = 01666 },
		{ .mode = 0700 },
	};
	char name[TK_NAME_SIZE];
	bakery_t *b = NULL;

	tk_name(name, sizeof(name), "cfg");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(bakery_open(name, BAKERY_CREATE, &bad[i], &b) == EINVAL,
		              "config %zu accepted", i);
	ck_assert_ptr_null(b);
	ck_assert_int_eq(region_probe(name), ENOENT);
}
END_TEST

/* The limits themselves are accepted and reported. */
START_TEST(config_at_the_limits)
{
	const struct bakery_config cfgs[] = {
		{ .slots = BAKERY_MAX_SLOTS, .locks = 1 },
		{ .slots = 1, .locks = BAKERY_MAX_LOCKS },
	};

	for (size_t i = 0; i < 2; i++) {
		char name[TK_NAME_SIZE];
		struct bakery_region_info ri;
		bakery_t *b = NULL;

		tk_name(name, sizeof(name), "limits");
		ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfgs[i], &b), 0);
		ck_assert_int_eq(bakery_region_info(b, &ri), 0);
		ck_assert_uint_eq(ri.slots, cfgs[i].slots);
		ck_assert_uint_eq(ri.locks, cfgs[i].locks);
		ck_assert_int_eq(bakery_close(b), 0);
		ck_assert_int_eq(bakery_unlink(name), 0);
	}
}
END_TEST

/* bakery_region_size says what a region of that configuration maps, and
 * what its object holds; it refuses what bakery_open refuses. */
START_TEST(region_size_is_what_creation_takes)
{
	const struct bakery_config cfgs[] = {
		{ 0 }, { .slots = 1, .locks = 1 }, { .slots = 3, .locks = 2 },
		{ .slots = 256 }, { .locks = 300 }, { .slots = 513, .locks = 5, .mode = 0640 },
	};
	const struct bakery_config bad[] = {
		{ .slots = BAKERY_MAX_SLOTS + 1 }, { .locks = BAKERY_MAX_LOCKS + 1 },
		{ .mode = 0700 },
	};
	uint64_t size, dflt;

	ck_assert_int_eq(bakery_region_size(NULL, &dflt), 0);
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		char name[TK_NAME_SIZE], path[TK_NAME_SIZE + 16];
		struct bakery_region_info ri;
		struct stat st;
		bakery_t *b = NULL;

		ck_assert_int_eq(bakery_region_size(&cfgs[i], &size), 0);
		tk_name(name, sizeof(name), "size");
		ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfgs[i], &b), 0);
		ck_assert_int_eq(bakery_region_info(b, &ri), 0);
		ck_assert_uint_eq(ri.size, size);
		unit_shm_path(path, sizeof(path), name);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_uint_eq((uint64_t)st.st_size, size);
		if (i == 0)
			ck_assert_uint_eq(size, dflt);
		ck_assert_int_eq(bakery_close(b), 0);
		ck_assert_int_eq(bakery_unlink(name), 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(bakery_region_size(&bad[i], &size), EINVAL);
	ck_assert_int_eq(bakery_region_size(NULL, NULL), EINVAL);
}
END_TEST

/* Permission bits of the shm object as created with MODE (0 = default). */
static mode_t created_mode(mode_t mode, mode_t *reported)
{
	struct bakery_config cfg = { .mode = mode };
	struct bakery_region_info ri;
	char name[TK_NAME_SIZE], path[TK_NAME_SIZE + 16];
	struct stat st;
	bakery_t *b = NULL;

	tk_name(name, sizeof(name), "mode");
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b), 0);
	unit_shm_path(path, sizeof(path), name);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	*reported = ri.mode;
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
	return st.st_mode & 07777;
}

START_TEST(mode_default_and_exact)
{
	static const mode_t modes[] = { 0640, 0666, 0604, 0660, 0400 };
	mode_t reported;

	umask(022);     /* the mode is applied exactly, whatever the umask */
	ck_assert_uint_eq(created_mode(0, &reported), 0600);
	ck_assert_uint_eq(reported, 0600);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		ck_assert_uint_eq(created_mode(modes[i], &reported), modes[i]);
		ck_assert_uint_eq(reported, modes[i]);
	}
}
END_TEST

#define CANNOT_DROP_PRIVILEGES 77

/* Runs as an unprivileged user (root drops to nobody). */
static int open_refused(void *arg)
{
	bakery_t *b = NULL;

	if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
		return CANNOT_DROP_PRIVILEGES;     /* e.g. a user namespace without 65534 */
	return bakery_open(arg, 0, NULL, &b) == EACCES ? 0 : 1;
}

START_TEST(permission_refused)
{
	struct bakery_config cfg = { .mode = 0600 };
	char name[TK_NAME_SIZE];
	bakery_t *b = NULL;
	int rc;

	/* as root: a 0600 object of root's, opened by nobody; otherwise our
	 * own object made read-only for us */
	if (geteuid() != 0)
		cfg.mode = 0400;
	tk_name(name, sizeof(name), "perm");
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b), 0);
	rc = tk_reap(tk_fork(open_refused, name), 10);
	if (rc == CANNOT_DROP_PRIVILEGES)
		printf("permission_refused: not checked, cannot drop root privileges here\n");
	else
		ck_assert_msg(rc == 0, "another user's open was not refused with EACCES (%d)", rc);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

START_TEST(unlink_keeps_mapped_handles_working)
{
	char name[TK_NAME_SIZE];
	struct bakery_region_info ri;
	bakery_t *b, *fresh = NULL;
	bakery_lock_t *l;

	b = unit_region(name, "unlink", 4, 4);
	l = unit_lock(b, "kept", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_unlink(name), 0);
	ck_assert_int_eq(region_probe(name), ENOENT);
	ck_assert_int_eq(bakery_unlink(name), ENOENT);

	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	ck_assert_uint_eq(ri.locks_used, 1);

	/* the name is free again: a new, distinct region */
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, NULL, &fresh), 0);
	ck_assert_int_eq(bakery_region_info(fresh, &ri), 0);
	ck_assert_uint_eq(ri.locks_used, 0);
	ck_assert_int_eq(bakery_close(fresh), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);

	ck_assert_int_eq(bakery_trylock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* ------------------------------------------------- concurrent creators -- */

#define CREATORS 8

struct creator_report {
	int rc;                    /* bakery_open's */
	int lock_rc;               /* lock_open + lock + unlock */
	unsigned slots, lock_index;
	pid_t creator_pid;
	uint64_t created_ns;
};

struct race {
	char name[TK_NAME_SIZE];
	struct tk_gate start;
	unsigned me;
	struct creator_report *reports;
};

static int creator(void *arg)
{
	struct race *r = arg;
	struct creator_report *rep = &r->reports[r->me];
	/* each asks for a different capacity: only the winner's may count */
	struct bakery_config cfg = { .slots = 16 + r->me, .locks = 8 };
	struct bakery_region_info ri;
	bakery_lock_t *l;
	bakery_t *b;

	close(r->start.fd[1]);
	tk_gate_wait(&r->start, 30);     /* all released at once */
	rep->rc = bakery_open(r->name, BAKERY_CREATE, &cfg, &b);
	if (rep->rc)
		return 1;
	bakery_region_info(b, &ri);
	rep->slots = ri.slots;
	rep->creator_pid = ri.creator_pid;
	rep->created_ns = ri.created_ns;
	rep->lock_rc = bakery_lock_open(b, "meeting", BAKERY_ALGO_DEFAULT, &l);
	if (!rep->lock_rc)
		rep->lock_rc = bakery_lock_index(l, &rep->lock_index);
	if (!rep->lock_rc)
		rep->lock_rc = bakery_lock(l);
	if (!rep->lock_rc)
		rep->lock_rc = bakery_unlock(l);
	if (!rep->lock_rc) {
		bakery_lock_close(l);
		rep->lock_rc = bakery_close(b);
	}
	return rep->lock_rc ? 2 : 0;
}

/* Entries of /dev/shm that start with NAME's object name. */
static unsigned shm_entries(const char *name)
{
	const char *base = name[0] == '/' ? name + 1 : name;
	size_t len = strlen(base);
	unsigned n = 0;
	struct dirent *e;
	DIR *d = opendir("/dev/shm");

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strncmp(e->d_name, base, len) == 0 &&
		     (e->d_name[len] == '\0' || e->d_name[len] == '.');
	closedir(d);
	return n;
}

START_TEST(concurrent_creators_end_with_one_region)
{
	struct race r = { 0 };
	pid_t pids[CREATORS];
	struct bakery_region_info ri;
	struct bakery_lock_info li;
	bakery_t *b = NULL;

	tk_name(r.name, sizeof(r.name), "race");
	r.reports = tk_shared(sizeof(struct creator_report) * CREATORS);
	tk_gate_init(&r.start);
	for (r.me = 0; r.me < CREATORS; r.me++)
		pids[r.me] = tk_fork(creator, &r);
	tk_gate_close(&r.start);         /* EOF on the pipe: go */
	for (unsigned i = 0; i < CREATORS; i++)
		ck_assert_int_eq(tk_reap(pids[i], 30), 0);

	for (unsigned i = 0; i < CREATORS; i++) {
		struct creator_report *c = &r.reports[i];
		ck_assert_msg(c->rc == 0, "creator %u: %s", i, bakery_strerror(c->rc));
		ck_assert_msg(c->lock_rc == 0, "creator %u: %s", i, bakery_strerror(c->lock_rc));
		ck_assert_uint_eq(c->slots, r.reports[0].slots);
		ck_assert_uint_eq(c->lock_index, r.reports[0].lock_index);
		ck_assert_int_eq(c->creator_pid, r.reports[0].creator_pid);
		ck_assert(c->created_ns == r.reports[0].created_ns);
	}
	/* the capacity is one of the creators' own */
	ck_assert_uint_ge(r.reports[0].slots, 16);
	ck_assert_uint_lt(r.reports[0].slots, 16 + CREATORS);

	ck_assert_int_eq(bakery_open(r.name, 0, NULL, &b), 0);
	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	ck_assert_uint_eq(ri.locks_used, 1);
	ck_assert_uint_eq(ri.slots_used, 0);
	ck_assert_int_eq(bakery_lock_info(b, r.reports[0].lock_index, &li), 0);
	ck_assert_uint_eq(li.acquisitions, CREATORS);
	ck_assert_int_eq(bakery_close(b), 0);
	/* one object under the name, no temporary left behind */
	ck_assert_uint_eq(shm_entries(r.name), 1);
	ck_assert_int_eq(bakery_unlink(r.name), 0);
	ck_assert_uint_eq(shm_entries(r.name), 0);
}
END_TEST

/* Child: open TWIN (creating it if it is gone) and try its lock "L", which
 * the parent holds.  0 if it is busy, as it must be. */
static int try_twin_lock(void *arg)
{
	const char *twin = arg;
	bakery_t *b = NULL;
	bakery_lock_t *l = NULL;
	int rc;

	if (bakery_open(twin, BAKERY_CREATE, NULL, &b))
		return 1;
	if (bakery_lock_open(b, "L", BAKERY_ALGO_DEFAULT, &l))
		return 2;
	rc = bakery_trylock(l);
	if (rc == 0 || rc == EOWNERDEAD)
		return 3;       /* a second holder: the parent's region was lost */
	return rc == EBUSY ? 0 : 4;
}

/* A region whose name looks like a creator's temporary of another region
 * ("NAME.~new.data" next to "NAME") is a region like any other: creating
 * NAME must not sweep it away while it is in use. */
START_TEST(region_named_like_a_temporary_is_kept)
{
	char name[TK_NAME_SIZE], twin[TK_NAME_SIZE + 16];
	bakery_t *b = NULL, *t = NULL;
	bakery_lock_t *l;

	tk_name(name, sizeof(name), "twin");
	snprintf(twin, sizeof(twin), "%s.~new.data", name);
	ck_assert_int_eq(bakery_open(twin, BAKERY_CREATE | BAKERY_EXCL, NULL, &t), 0);
	l = unit_lock(t, "L", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, NULL, &b), 0);
	ck_assert_int_eq(region_probe(twin), 0);
	ck_assert_int_eq(tk_reap(tk_fork(try_twin_lock, twin), 30), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(t), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(twin), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

static Suite *region_suite(void)
{
	Suite *s = suite_create("region");
	TCase *tc = tcase_create("region");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, create_then_open_same_region);
	tcase_add_test(tc, exclusive_create_and_missing_region);
	tcase_add_test(tc, slash_prefix_names_the_same_region);
	tcase_add_test(tc, bad_names_are_refused);
	tcase_add_test(tc, name_length_limit);
	tcase_add_test(tc, bad_flags_and_out_pointer);
	tcase_add_test(tc, config_out_of_range);
	tcase_add_test(tc, config_at_the_limits);
	tcase_add_test(tc, region_size_is_what_creation_takes);
	tcase_add_test(tc, mode_default_and_exact);
	tcase_add_test(tc, permission_refused);
	tcase_add_test(tc, unlink_keeps_mapped_handles_working);
	tcase_add_test(tc, concurrent_creators_end_with_one_region);
	tcase_add_test(tc, region_named_like_a_temporary_is_kept);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(region_suite());
}
