/* SPDX-License-Identifier: MIT */
/*
 * crash-modes.c - SIGKILL of readers, writers and k-holders at every stage
 * of a passage (doorway, waiting, critical, exit: the test build's crash
 * points), then at random moments among mixed hammering processes.
 *
 * At the crash points, for each algorithm that supports the role:
 *   reader or writer victim: a writer H holds; a reader R queues; the
 *   victim V queues behind it and dies at the point (at `critical` and
 *   `exit` once H and R let it in); a writer W arrives behind V and a
 *   reader L last.  Everyone survives V and gets in; exclusion holds
 *   (tests/common/rw_occupancy.h); W alone is told EOWNERDEAD, and only if
 *   V was a writer that died inside; it repairs, so L is not told; a dead
 *   reader is counted in reader_deaths, never as an owner death.
 *   k-holder victim (k = 2): H1 and H2 hold; V queues and dies at the
 *   point (at `critical` and `exit` once H1 lets it in); W needs V's unit:
 *   it is told EOWNERDEAD exactly when V died inside.
 * Random moments: four processes hammer with mixed passages (one in three a
 * write); one at a time is SIGKILLed at a random moment and replaced.  The
 * exclusion check here is per participant (a word each, store then full
 * barrier then scan, so two overlapping participants see at least one
 * another), and a victim is marked doomed before its kill so that its
 * stale word does not count; every death is recovered and the survivors
 * run to the end.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <check.h>
#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#include "crashkit.h"
#include "../common/rw_occupancy.h"

enum role { READER, WRITER };

struct part {
	enum role role;
	int hold;                  /* stay inside until `release`            */
	volatile int release;
	volatile int holding;
	int rc;                    /* the acquisition's return               */
	int consistent_rc;
};

#define PARTS 6

struct stage {
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	unsigned holders;
	struct rw_occupancy occ;
	struct part part[PARTS];
};

struct run {
	struct stage *s;
	unsigned k;
};

static int part_main(void *arg)
{
	struct run *r = arg;
	struct stage *s = r->s;
	struct part *p = &s->part[r->k];
	struct bakery_lock_config cfg = { .algo = s->algo };
	bakery_lock_t *l;
	bakery_t *b;
	bool shared = p->role == READER;

	if (bakery_open(s->region, BAKERY_NORECOVER, NULL, &b) ||
	    bakery_lock_open_config(b, CRASH_LOCK, &cfg, &l))
		return 1;
	p->rc = shared ? bakery_rdlock(l) : bakery_lock(l);
	if (p->rc != 0 && p->rc != EOWNERDEAD)
		return 2;
	if (p->rc == EOWNERDEAD && !shared)
		p->consistent_rc = bakery_consistent(l);
	rw_occupancy_in(&s->occ, shared, s->holders);
	CMM_STORE_SHARED(p->holding, 1);
	while (p->hold && !CMM_LOAD_SHARED(p->release))
		usleep(100);
	rw_occupancy_out(&s->occ, shared);
	if (bakery_unlock(l))
		return 3;
	return bakery_lock_close(l) || bakery_close(b) ? 4 : 0;
}

struct scene {
	struct stage *s;
	bakery_t *b;
	bakery_lock_t *l;
	pid_t pid[PARTS];
	struct run run[PARTS];
};

static void scene_open(struct scene *c, enum bakery_algo algo, unsigned holders)
{
	struct bakery_lock_config cfg = { .algo = algo, .holders = holders };

	memset(c, 0, sizeof(*c));
	c->s = tk_shared(sizeof(*c->s));
	tk_name(c->s->region, sizeof(c->s->region), "modes");
	c->s->algo = algo;
	c->s->holders = holders ? holders : 1;
	ck_assert_int_eq(crash_create(c->s->region, 8, &c->b), 0);
	ck_assert_int_eq(bakery_lock_open_config(c->b, CRASH_LOCK, &cfg, &c->l), 0);
}

static void scene_close(struct scene *c)
{
	ck_assert_int_eq(bakery_lock_close(c->l), 0);
	ck_assert_int_eq(bakery_close(c->b), 0);
	ck_assert_int_eq(bakery_unlink(c->s->region), 0);
	munmap(c->s, sizeof(*c->s));
}

static void start(struct scene *c, unsigned k, enum role role, int hold, const char *crash_at)
{
	c->s->part[k] = (struct part){ .role = role, .hold = hold, .rc = -1 };
	c->run[k] = (struct run){ c->s, k };
	c->pid[k] = crash_fork(part_main, &c->run[k], crash_at);
}

static void wait_holding(struct scene *c, unsigned k)
{
	ck_assert_msg(tk_wait_flag(&c->s->part[k].holding, 1, 30), "participant %u never got in", k);
}

static void wait_waiting(struct scene *c, unsigned k)
{
	ck_assert_msg(crash_wait_pass(c->b, c->pid[k], BAKERY_PASS_WAITING, 30),
	              "participant %u never waited", k);
}

static void expect_exit(struct scene *c, unsigned k, int want)
{
	int st = tk_reap(c->pid[k], 60);

	ck_assert_msg(st == want, "%s: participant %u ended %d, expected %d",
	              bakery_algo_name(c->s->algo), k, st, want);
}

static void expect_rc(struct scene *c, unsigned k, int want)
{
	ck_assert_msg(c->s->part[k].rc == want, "%s: participant %u got %s, expected %s",
	              bakery_algo_name(c->s->algo), k, bakery_strerror(c->s->part[k].rc),
	              bakery_strerror(want));
	if (want == EOWNERDEAD && c->s->part[k].role == WRITER)
		ck_assert_int_eq(c->s->part[k].consistent_rc, 0);
}

static void expect_counts(struct scene *c, uint64_t owner_deaths, uint64_t reader_deaths)
{
	struct bakery_lock_info li = crash_lock_info(c->b, c->l);

	ck_assert_msg(c->s->occ.violations == 0 && c->s->occ.state == 0,
	              "%s: %llu overlaps", bakery_algo_name(c->s->algo),
	              (unsigned long long)c->s->occ.violations);
	ck_assert_msg(li.recoveries == 1 && li.owner_deaths == owner_deaths &&
	              li.reader_deaths == reader_deaths,
	              "%s: recoveries %llu owner_deaths %llu reader_deaths %llu, expected 1, %llu, %llu",
	              bakery_algo_name(c->s->algo), (unsigned long long)li.recoveries,
	              (unsigned long long)li.owner_deaths, (unsigned long long)li.reader_deaths,
	              (unsigned long long)owner_deaths, (unsigned long long)reader_deaths);
	ck_assert_msg(!li.owner_dead && !li.not_recoverable && li.holding == 0 && li.waiters == 0,
	              "%s: lock left owner_dead %d not_recoverable %d holding %u waiters %u",
	              bakery_algo_name(c->s->algo), li.owner_dead, li.not_recoverable,
	              li.holding, li.waiters);
	ck_assert_uint_eq(crash_slots_used(c->b), 0);
}

/* ------------------------------------------------------ the crash points -- */

static const char *const points[] = { "doorway", "waiting", "critical", "exit" };
#define NPOINTS 4

static const enum bakery_algo shared_algos[] = {
	BAKERY_ALGO_LAMPORT, BAKERY_ALGO_BOULANGERIE, BAKERY_ALGO_BLACK_WHITE,
};
static const enum bakery_algo holder_algos[] = {
	BAKERY_ALGO_LAMPORT, BAKERY_ALGO_BOULANGERIE,
};

/* participants of the reader-writer scenes */
enum { H, R, V, W, L };

static void reader_writer_death(enum bakery_algo algo, enum role victim, const char *point)
{
	bool inside = !strcmp(point, "critical"), late = inside || !strcmp(point, "exit");
	struct scene c;

	scene_open(&c, algo, 0);
	start(&c, H, WRITER, 1, NULL);
	wait_holding(&c, H);
	start(&c, R, READER, 0, NULL);
	wait_waiting(&c, R);
	start(&c, V, victim, 0, point);
	if (late) {
		/* V dies once let in: W queues behind it first */
		wait_waiting(&c, V);
		start(&c, W, WRITER, 0, NULL);
		wait_waiting(&c, W);
		CMM_STORE_SHARED(c.s->part[H].release, 1);
		expect_exit(&c, V, CRASH_SIGKILLED);
	} else {
		expect_exit(&c, V, CRASH_SIGKILLED);
		start(&c, W, WRITER, 0, NULL);
		wait_waiting(&c, W);
		CMM_STORE_SHARED(c.s->part[H].release, 1);
	}
	expect_exit(&c, H, 0);
	expect_exit(&c, R, 0);
	expect_exit(&c, W, 0);
	start(&c, L, READER, 0, NULL);
	expect_exit(&c, L, 0);
	expect_rc(&c, R, 0);
	expect_rc(&c, W, inside && victim == WRITER ? EOWNERDEAD : 0);
	expect_rc(&c, L, 0);
	expect_counts(&c, inside && victim == WRITER, inside && victim == READER);
	scene_close(&c);
}

START_TEST(reader_dies)
{
	reader_writer_death(shared_algos[_i / NPOINTS], READER, points[_i % NPOINTS]);
}
END_TEST

START_TEST(writer_dies)
{
	reader_writer_death(shared_algos[_i / NPOINTS], WRITER, points[_i % NPOINTS]);
}
END_TEST

/* participants of the k-holder scenes */
enum { H1, H2, KV, KW };

START_TEST(holder_dies)
{
	enum bakery_algo algo = holder_algos[_i / NPOINTS];
	const char *point = points[_i % NPOINTS];
	bool inside = !strcmp(point, "critical"), late = inside || !strcmp(point, "exit");
	struct scene c;

	scene_open(&c, algo, 2);
	start(&c, H1, WRITER, 1, NULL);
	start(&c, H2, WRITER, 1, NULL);
	wait_holding(&c, H1);
	wait_holding(&c, H2);
	start(&c, KV, WRITER, 0, point);
	if (late) {
		/* KV dies once H1 lets it in */
		wait_waiting(&c, KV);
		CMM_STORE_SHARED(c.s->part[H1].release, 1);
		expect_exit(&c, H1, 0);
		expect_exit(&c, KV, CRASH_SIGKILLED);
		start(&c, KW, WRITER, 0, NULL);
	} else {
		expect_exit(&c, KV, CRASH_SIGKILLED);
		start(&c, KW, WRITER, 0, NULL);
		wait_waiting(&c, KW);
		CMM_STORE_SHARED(c.s->part[H1].release, 1);
		expect_exit(&c, H1, 0);
	}
	/* H2 holds one unit and KV's ticket is ahead of KW's: KW needs
	 * KV's unit, so it recovers KV */
	expect_exit(&c, KW, 0);
	expect_rc(&c, KW, inside ? EOWNERDEAD : 0);
	CMM_STORE_SHARED(c.s->part[H2].release, 1);
	expect_exit(&c, H2, 0);
	expect_counts(&c, inside, 0);
	ck_assert_uint_eq(c.s->occ.max_holders, 2);
	scene_close(&c);
}
END_TEST

/* ------------------------------------------------------- random moments -- */

#define CHAOS_PARTS   4
#define CHAOS_SERIALS 64
#define CHAOS_KILLS   12

struct chaos {
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	volatile int stop;
	int word[CHAOS_SERIALS];   /* 0 out, 1 reading, 2 writing */
	int doomed[CHAOS_SERIALS];
	uint64_t violations;
	uint64_t passages[CHAOS_SERIALS];
	int rc[CHAOS_SERIALS];
};

struct chaos_run {
	struct chaos *c;
	unsigned serial;
};

/* Enter as SERIAL: our word, a full barrier, then the others' (store->load:
 * of two overlapping participants at least one sees the other's word). */
static void chaos_in(struct chaos *c, unsigned serial, bool shared)
{
	uatomic_set(&c->word[serial], shared ? 1 : 2);
	cmm_smp_mb();
	for (unsigned j = 0; j < CHAOS_SERIALS; j++) {
		int w = uatomic_read(&c->word[j]);

		if (j == serial || !w || uatomic_read(&c->doomed[j]))
			continue;
		if (!shared || w == 2)
			uatomic_inc(&c->violations);
	}
}

static int chaos_main(void *arg)
{
	struct chaos_run *r = arg;
	struct chaos *c = r->c;
	struct bakery_lock_config cfg = { .algo = c->algo };
	bakery_lock_t *l;
	bakery_t *b;

	if (bakery_open(c->region, 0, NULL, &b) || bakery_lock_open_config(b, CRASH_LOCK, &cfg, &l))
		return 1;
	for (unsigned n = 0; !CMM_LOAD_SHARED(c->stop); n++) {
		bool shared = (n + r->serial) % 3 != 0;
		int rc = shared ? bakery_rdlock(l) : bakery_lock(l);

		if (rc == EOWNERDEAD && !shared)
			rc = bakery_consistent(l);
		/* a reader told EOWNERDEAD reads on: a writer repairs later */
		if (rc && rc != EOWNERDEAD) {
			c->rc[r->serial] = rc;
			return 2;
		}
		chaos_in(c, r->serial, shared);
		for (unsigned i = 0; i < 3; i++)
			sched_yield();
		uatomic_set(&c->word[r->serial], 0);
		uatomic_inc(&c->passages[r->serial]);
		if (bakery_unlock(l))
			return 3;
	}
	return 0;
}

static bool has_passed(void *arg)
{
	return uatomic_read((uint64_t *)arg) > 0;
}

START_TEST(random_kills)
{
	struct chaos *c = tk_shared(sizeof(*c));
	struct chaos_run runs[CHAOS_SERIALS];
	pid_t pid[CHAOS_PARTS];
	unsigned serial[CHAOS_PARTS], next = 1;
	struct bakery_lock_info li;
	bakery_lock_t *l;
	bakery_t *b;
	uint64_t total = 0;

	c->algo = shared_algos[_i];
	tk_name(c->region, sizeof(c->region), "mchaos");
	ck_assert_int_eq(crash_create(c->region, 16, &b), 0);
	ck_assert_int_eq(bakery_lock_open(b, CRASH_LOCK, c->algo, &l), 0);
	srand(0x5eed + (unsigned)_i);
	for (unsigned k = 0; k < CHAOS_PARTS; k++) {
		serial[k] = next++;
		runs[serial[k]] = (struct chaos_run){ c, serial[k] };
		pid[k] = crash_fork(chaos_main, &runs[serial[k]], NULL);
	}
	for (unsigned kill_n = 0; kill_n < CHAOS_KILLS; kill_n++) {
		unsigned k = (unsigned)rand() % CHAOS_PARTS;

		tk_sleep_ms(5 + rand() % 20);
		/* a victim with a slot in the lock (one passage done), so that
		 * each kill is a death the lock must recover */
		ck_assert(tk_wait_until(has_passed, &c->passages[serial[k]], 30));
		uatomic_set(&c->doomed[serial[k]], 1);
		cmm_smp_mb();   /* the mark before the kill */
		ck_assert(tk_kill(pid[k]));
		serial[k] = next++;
		runs[serial[k]] = (struct chaos_run){ c, serial[k] };
		pid[k] = crash_fork(chaos_main, &runs[serial[k]], NULL);
	}
	tk_sleep_ms(50);
	CMM_STORE_SHARED(c->stop, 1);
	for (unsigned k = 0; k < CHAOS_PARTS; k++) {
		int st = tk_reap(pid[k], 60);

		ck_assert_msg(st == 0, "%s: survivor %u ended %d (rc %s)", bakery_algo_name(c->algo),
		              serial[k], st, bakery_strerror(c->rc[serial[k]]));
	}
	for (unsigned s = 0; s < next; s++)
		total += c->passages[s];
	ck_assert_msg(c->violations == 0, "%s: %llu overlaps in %llu passages",
	              bakery_algo_name(c->algo), (unsigned long long)c->violations,
	              (unsigned long long)total);
	/* every death recovered: no slot left in use, nobody inside */
	ck_assert_int_eq(crash_recover_in_child(c->region, NULL), 0);
	ck_assert_uint_eq(crash_slots_used(b), 0);
	li = crash_lock_info(b, l);
	ck_assert_uint_eq(li.holding, 0);
	ck_assert_uint_eq(li.waiters, 0);
	ck_assert_uint_ge(li.recoveries, CHAOS_KILLS);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(c->region), 0);
}
END_TEST

static Suite *modes_suite(void)
{
	Suite *s = suite_create("crash-modes");
	TCase *pts = tcase_create("points");
	TCase *rnd = tcase_create("random");

	tcase_set_timeout(pts, 120);
	tcase_set_timeout(rnd, 180);
	tcase_add_loop_test(pts, reader_dies, 0, 3 * NPOINTS);
	tcase_add_loop_test(pts, writer_dies, 0, 3 * NPOINTS);
	tcase_add_loop_test(pts, holder_dies, 0, 2 * NPOINTS);
	tcase_add_loop_test(rnd, random_kills, 0, 3);
	suite_add_tcase(s, pts);
	suite_add_tcase(s, rnd);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(modes_suite());
	int failed;

	tk_run_begin();
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	tk_run_end();
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
