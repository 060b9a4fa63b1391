/* SPDX-License-Identifier: MIT */
/*
 * test_corrupt.c - opening a shm object that is not a sound region gives
 * BAKERY_EBADREGION (or BAKERY_EVERSION for another layout version), never
 * a crash: scribbled magic, truncated objects, an empty object, random bytes,
 * headers with plausible magic but altered capacities or offsets (with and
 * without a recomputed layout_check), a forged header whose layout is
 * consistent but larger than the object, and foreign objects; and
 * bakery_region_layout, which names the layout a header claims.
 *
 * The damage is done with plain open/pwrite/ftruncate on /dev/shm/NAME.
 * Field offsets come from lib/shm_layout.h, and bakery__layout_hash and
 * bakery__layout_compute
 * from the test build, so the forgeries follow the layout they attack.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm_layout.h"
#include "handle.h"
#include "unit.h"

/* ------------------------------------------------------------- helpers -- */

struct victim {
	char name[TK_NAME_SIZE];
	int fd;                    /* the object, opened behind the library's back */
	uint64_t size;
	struct bakery_shm_header h;
};

/* A fresh region (4 slots, 4 locks, one lock used), closed, then opened raw. */
static void victim_make(struct victim *v)
{
	char path[TK_NAME_SIZE + 16];
	struct bakery_region_info ri;
	bakery_t *b = unit_region(v->name, "corrupt", 4, 4);
	bakery_lock_t *l = unit_lock(b, "victim", BAKERY_ALGO_DEFAULT);

	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	v->size = ri.size;
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	unit_shm_path(path, sizeof(path), v->name);
	v->fd = open(path, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(v->fd, 0);
	ck_assert_int_eq(pread(v->fd, &v->h, sizeof(v->h), 0), (ssize_t)sizeof(v->h));
}

static void header_write(struct victim *v, bool rehash)
{
	unsigned char raw[sizeof(v->h)];

	if (rehash)
		v->h.layout_check = bakery__layout_hash(&v->h);
	/* through a byte copy: some GCC builds take &v->h for its first member */
	memcpy(raw, &v->h, sizeof(raw));
	ck_assert_int_eq(pwrite(v->fd, raw, sizeof(raw), 0), (ssize_t)sizeof(raw));
}

static void bytes_write(struct victim *v, const void *p, size_t n, off_t at)
{
	ck_assert_int_eq(pwrite(v->fd, p, n, at), (ssize_t)n);
}

static void size_set(struct victim *v, off_t size)
{
	ck_assert_int_eq(ftruncate(v->fd, size), 0);
}

/* Opening, with and without BAKERY_CREATE, gives EXPECT and no handle. */
static void expect_open(const char *name, int expect, const char *what)
{
	bakery_t *b = NULL;
	int rc = bakery_open(name, 0, NULL, &b);

	ck_assert_msg(rc == expect, "%s: open gave \"%s\", want \"%s\"", what,
	              bakery_strerror(rc), bakery_strerror(expect));
	if (rc == 0) {
		ck_assert_int_eq(bakery_close(b), 0);
	} else {
		ck_assert_ptr_null(b);
		rc = bakery_open(name, BAKERY_CREATE, NULL, &b);
		ck_assert_msg(rc == expect, "%s: open(CREATE) gave \"%s\"", what,
		              bakery_strerror(rc));
		ck_assert_ptr_null(b);
	}
}

/* --------------------------------------------------------- corruptions -- */

static void untouched(struct victim *v) { (void)v; }

static void magic_scribbled(struct victim *v) { bytes_write(v, "XXXXXXXX", 8, 0); }
static void magic_zeroed(struct victim *v) { bytes_write(v, "\0\0\0\0\0\0\0\0", 8, 0); }
static void magic_one_bit(struct victim *v) { v->h.magic ^= UINT64_C(1) << 40; header_write(v, true); }

static void truncated_half(struct victim *v) { size_set(v, (off_t)v->size / 2); }
static void truncated_last_byte(struct victim *v) { size_set(v, (off_t)v->size - 1); }
static void truncated_to_header(struct victim *v) { size_set(v, sizeof(v->h)); }
static void truncated_inside_header(struct victim *v) { size_set(v, 16); }
static void zero_length(struct victim *v) { size_set(v, 0); }

static void random_bytes(struct victim *v)
{
	unsigned char buf[4096];

	srand(12345);
	for (uint64_t at = 0; at < v->size; at += sizeof(buf)) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (unsigned char)rand();
		bytes_write(v, buf, sizeof(buf), (off_t)at);
	}
}

static void nslots_stale_check(struct victim *v) { v->h.nslots++; header_write(v, false); }
static void nslots_rehashed(struct victim *v) { v->h.nslots++; header_write(v, true); }
static void nslots_zero(struct victim *v) { v->h.nslots = 0; header_write(v, true); }
static void nslots_huge(struct victim *v) { v->h.nslots = 0xffffffffu; header_write(v, true); }
static void nlocks_huge(struct victim *v) { v->h.nlocks = BAKERY_MAX_LOCKS + 1; header_write(v, true); }
static void regs_off_moved(struct victim *v) { v->h.regs_off += 64; header_write(v, true); }
static void slots_off_wild(struct victim *v) { v->h.slots_off = UINT64_C(1) << 60; header_write(v, true); }
static void total_size_grown(struct victim *v) { v->h.total_size += 4096; header_write(v, true); }
static void slot_size_changed(struct victim *v) { v->h.slot_size += 64; header_write(v, true); }
static void active_words_changed(struct victim *v) { v->h.active_words = 1000; header_write(v, true); }
static void not_ready(struct victim *v) { v->h.init_state = REGION_CREATING; header_write(v, true); }
static void check_flipped(struct victim *v) { v->h.layout_check ^= 1; header_write(v, false); }
static void identity_changed(struct victim *v) { v->h.created_ns ^= 1; header_write(v, false); }

/* Every field consistent with 64 slots, hash right: only the object's size
 * (made for 4 slots) gives it away. */
static void forged_bigger_layout(struct victim *v)
{
	struct layout l;

	ck_assert_int_eq(bakery__layout_compute(64, v->h.nlocks, &l), 0);
	v->h.nslots = l.nslots;
	v->h.active_words = l.active_words;
	v->h.slots_off = l.slots_off;
	v->h.locks_off = l.locks_off;
	v->h.active_off = l.active_off;
	v->h.regs_off = l.regs_off;
	v->h.total_size = l.total_size;
	ck_assert_uint_gt(l.total_size, v->size);
	header_write(v, true);
}

static void version_bumped(struct victim *v) { v->h.version++; header_write(v, true); }
static void version_stale_check(struct victim *v)
{
	v->h.version = BAKERY_LAYOUT_VERSION - 1;       /* an older layout */
	header_write(v, false);
}
static void magic_version_byte(struct victim *v)
{
	v->h.magic = (BAKERY_MAGIC & ~UINT64_C(0xff)) | 0x02;
	header_write(v, true);
}

struct corruption {
	const char *what;
	void (*apply)(struct victim *v);
	int expect;
};

static const struct corruption corruptions[] = {
	{ "untouched",               untouched,               0 },
	{ "magic scribbled",         magic_scribbled,         BAKERY_EBADREGION },
	{ "magic zeroed",            magic_zeroed,            BAKERY_EBADREGION },
	{ "magic one bit",           magic_one_bit,           BAKERY_EBADREGION },
	{ "truncated to half",       truncated_half,          BAKERY_EBADREGION },
	{ "truncated by one byte",   truncated_last_byte,     BAKERY_EBADREGION },
	{ "truncated to the header", truncated_to_header,     BAKERY_EBADREGION },
	{ "truncated in the header", truncated_inside_header, BAKERY_EBADREGION },
	{ "zero length",             zero_length,             BAKERY_EBADREGION },
	{ "random bytes",            random_bytes,            BAKERY_EBADREGION },
	{ "nslots, stale check",     nslots_stale_check,      BAKERY_EBADREGION },
	{ "nslots, rehashed",        nslots_rehashed,         BAKERY_EBADREGION },
	{ "nslots zero",             nslots_zero,             BAKERY_EBADREGION },
	{ "nslots huge",             nslots_huge,             BAKERY_EBADREGION },
	{ "nlocks over the limit",   nlocks_huge,             BAKERY_EBADREGION },
	{ "regs_off moved",          regs_off_moved,          BAKERY_EBADREGION },
	{ "slots_off wild",          slots_off_wild,          BAKERY_EBADREGION },
	{ "total_size grown",        total_size_grown,        BAKERY_EBADREGION },
	{ "slot_size changed",       slot_size_changed,       BAKERY_EBADREGION },
	{ "active_words changed",    active_words_changed,    BAKERY_EBADREGION },
	{ "init state creating",     not_ready,               BAKERY_EBADREGION },
	{ "layout_check flipped",    check_flipped,           BAKERY_EBADREGION },
	{ "identity changed",        identity_changed,        BAKERY_EBADREGION },
	{ "forged bigger layout",    forged_bigger_layout,    BAKERY_EBADREGION },
	{ "version bumped",          version_bumped,          BAKERY_EVERSION },
	{ "version, stale check",    version_stale_check,     BAKERY_EVERSION },
	{ "magic's version byte",    magic_version_byte,      BAKERY_EVERSION },
};
#define NCORRUPTIONS ((int)(sizeof(corruptions) / sizeof(corruptions[0])))

START_TEST(damaged_region)
{
	const struct corruption *c = &corruptions[_i];
	struct victim v;

	victim_make(&v);
	c->apply(&v);
	close(v.fd);
	expect_open(v.name, c->expect, c->what);
	ck_assert_int_eq(bakery_unlink(v.name), 0);
}
END_TEST

/* ------------------------------------------------------ foreign objects -- */

/* An shm object NAME that some other program made, holding LEN bytes of P
 * repeated up to SIZE bytes. */
static void foreign_make(const char *name, const void *p, size_t len, size_t size)
{
	char path[TK_NAME_SIZE + 16];
	int fd;

	unit_shm_path(path, sizeof(path), name);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	for (size_t at = 0; len && at < size; at += len)
		ck_assert_int_eq(pwrite(fd, p, len, (off_t)at), (ssize_t)len);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

START_TEST(foreign_objects)
{
	static const char text[] = "This is a note some other program left in /dev/shm.\n";
	static const uint64_t almost = BAKERY_MAGIC ^ (UINT64_C(1) << 16);  /* "BAKERX" */
	const struct { const void *p; size_t len, size; } objects[] = {
		{ text, sizeof(text) - 1, sizeof(text) - 1 },   /* short text */
		{ text, sizeof(text) - 1, 1 << 20 },            /* a megabyte of text */
		{ NULL, 0, 1 << 20 },                           /* a megabyte of zeros */
		{ NULL, 0, 0 },                                 /* empty */
		{ &almost, sizeof(almost), 8192 },              /* near-magic words */
	};

	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		char name[TK_NAME_SIZE], what[32];

		tk_name(name, sizeof(name), "foreign");
		foreign_make(name, objects[i].p, objects[i].len, objects[i].size);
		snprintf(what, sizeof(what), "foreign object %zu", i);
		expect_open(name, BAKERY_EBADREGION, what);
		ck_assert_int_eq(bakery_unlink(name), 0);
	}
}
END_TEST

/* -------------------------------------------------------- layout version -- */

/* bakery_region_layout names the layout a header claims, BAKERY_EVERSION's
 * regions included, and nothing for an object that is no region. */
START_TEST(layout_version)
{
	const struct { void (*apply)(struct victim *v); int expect; unsigned version; } cases[] = {
		{ untouched,          0,                 BAKERY_LAYOUT_VERSION },
		{ version_bumped,     0,                 BAKERY_LAYOUT_VERSION + 1 },
		{ magic_version_byte, 0,                 0 },
		{ magic_scribbled,    BAKERY_EBADREGION, 0 },
		{ zero_length,        BAKERY_EBADREGION, 0 },
		{ truncated_inside_header, 0,            BAKERY_LAYOUT_VERSION },
	};
	char name[TK_NAME_SIZE];
	unsigned version;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct victim v;

		victim_make(&v);
		cases[i].apply(&v);
		close(v.fd);
		version = 12345;
		ck_assert_int_eq(bakery_region_layout(v.name, &version), cases[i].expect);
		if (cases[i].expect == 0)
			ck_assert_uint_eq(version, cases[i].version);
		ck_assert_int_eq(bakery_unlink(v.name), 0);
	}
	tk_name(name, sizeof(name), "nolayout");
	ck_assert_int_eq(bakery_region_layout(name, &version), ENOENT);
	ck_assert_int_eq(bakery_region_layout(name, NULL), EINVAL);
	ck_assert_int_eq(bakery_region_layout("bad/name", &version), EINVAL);
	ck_assert_int_eq(bakery_region_layout(NULL, &version), EINVAL);
	foreign_make(name, "BAKERY", 6, 6);      /* the magic's start, and no more */
	ck_assert_int_eq(bakery_region_layout(name, &version), BAKERY_EBADREGION);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

static Suite *corrupt_suite(void)
{
	Suite *s = suite_create("corrupt");
	TCase *tc = tcase_create("corrupt");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, damaged_region, 0, NCORRUPTIONS);
	tcase_add_test(tc, foreign_objects);
	tcase_add_test(tc, layout_version);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(corrupt_suite());
}
