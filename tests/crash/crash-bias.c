/* SPDX-License-Identifier: MIT */
/*
 * crash-bias.c - biased locks (BAKERY_LOCK_BIASED) against deaths and
 * stops at every step of the bias protocol (lib/algo/bias.h, the steps of
 * tests/model/bias.pml), for Lamport and Boulangerie.  Each participant is
 * a process of its own; every critical section goes through the occupancy
 * object, which does not trust the lock.
 *
 *   owner dies        the owner, holding the bias, is SIGKILLed after its
 *                     fast-path ticket (bias-ticket), inside (critical)
 *                     or in its exit (exit); the next taker revokes the
 *                     dead owner's bias and gets in, told EOWNERDEAD
 *                     exactly when the death was inside
 *   revoker dies      a revoker is SIGKILLed with the word REVOKING,
 *                     before its membarrier (bias-revoking) or after it
 *                     (bias-revoked); the owner and a later taker go on
 *   granter dies      a thread dies just after winning its grant
 *                     (bias-granted): the next taker revokes it
 *   owner stopped     the owner is SIGSTOPped after its fast-path ticket;
 *                     a taker waits for it (a ticket it cannot see past)
 *                     and, once the owner goes on and throws the fast
 *                     ticket away, gets in first
 *   churn             an owner loops while others come and go, the grant
 *                     after 8 lone passages (the test build's
 *                     BAKERY_TEST_BIAS_GRANT): thousands of grants and
 *                     revocations, no overlap
 *   churn with kills  the same while the owner is SIGKILLed at random
 *                     moments and started again
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "bakery.h"
#include "../common/occupancy.h"
#include "../common/tk.h"
#include "../unit/unit.h"
#include "scene.h"

#define PARTS 8
#define WARM 200                /* passages that make the owner biased */
#define CHURN_GRANT "8"

enum { O, R, W, W2 };           /* owner, revoker, takers */

struct part {
	const char *crash_at;      /* BAKERY_CRASH_AT for the last passage */
	const char *stop_at;       /* BAKERY_STOP_AT for the last passage */
	unsigned warm;             /* passages before the last one */
	unsigned more;             /* passages after "go" (the owner's) */
	int claim_first;           /* claim a slot (a passage in another lock),
	                              then wait for "go" before the rest */
	int claimed, slot;
	int biased;                /* the lock was biased to us before the last */
	int rc;                    /* the last lock call's answer */
	uint64_t order;            /* its place among the entries */
	int ready, go, done;
};

struct shared {
	struct occupancy occ;
	char region[TK_NAME_SIZE];
	struct part p[PARTS];
	int stop;                  /* churn: time is up */
	uint64_t churn_passages;
};

static struct shared *sh;
static enum bakery_algo algo_of[] = { BAKERY_ALGO_LAMPORT, BAKERY_ALGO_BOULANGERIE };

static struct bakery_lock_info info_of(bakery_t *b, bakery_lock_t *l)
{
	struct bakery_lock_info li;
	unsigned index;

	ck_assert_int_eq(bakery_lock_index(l, &index), 0);
	ck_assert_int_eq(bakery_lock_info(b, index, &li), 0);
	return li;
}

/* One passage through the occupancy object as ID; the lock call's answer. */
static int passage(bakery_lock_t *l, uint64_t id, uint64_t *order)
{
	int rc = bakery_lock(l);

	if (rc != 0 && rc != EOWNERDEAD)
		return rc;
	occupancy_in(&sh->occ, id, OCCUPANCY_PAUSE);
	if (order)
		*order = uatomic_add_return(&sh->occ.order, 1);
	occupancy_out(&sh->occ, id);
	if (rc == EOWNERDEAD && bakery_consistent(l))
		return -1;
	return bakery_unlock(l) ? -1 : rc;
}

static int open_lock(bakery_t **b, bakery_lock_t **l)
{
	/* flags 0: joins the biased lock the test made */
	if (bakery_open(sh->region, 0, NULL, b))
		return 10;
	return bakery_lock_open(*b, "bias", BAKERY_ALGO_DEFAULT, l) ? 11 : 0;
}

/* Participant K: WARM passages, then its last one (where it may die or
 * stop), then, told to go, MORE passages. */
static int part_main(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	struct part *p = &sh->p[k];
	uint64_t id = getpid();
	struct bakery_lock_info li;
	bakery_lock_t *l;
	unsigned index;
	bakery_t *b;
	int err = open_lock(&b, &l);

	if (err)
		return err;
	if (p->claim_first) {
		bakery_lock_t *other;

		if (bakery_lock_open(b, "other", BAKERY_ALGO_DEFAULT, &other) ||
		    bakery_lock(other) || bakery_unlock(other))
			return 16;
		uatomic_set(&p->claimed, 1);
		if (!tk_wait_flag(&p->go, 1, 60))
			return 14;
	}
	for (unsigned i = 0; i < p->warm; i++)
		if (passage(l, id, NULL))
			return 12;
	p->slot = tk_self_slot(b);      /* -1 before our first lock call */
	if (bakery_lock_index(l, &index) || bakery_lock_info(b, index, &li))
		return 13;
	p->biased = li.bias_slot >= 0 && li.bias_slot == tk_self_slot(b);
	if (p->crash_at)
		setenv("BAKERY_CRASH_AT", p->crash_at, 1);
	if (p->stop_at)
		setenv("BAKERY_STOP_AT", p->stop_at, 1);
	uatomic_set(&p->ready, 1);
	p->rc = passage(l, id, &p->order);
	p->slot = tk_self_slot(b);
	unsetenv("BAKERY_CRASH_AT");
	unsetenv("BAKERY_STOP_AT");
	if (p->more) {
		if (!tk_wait_flag(&p->go, 2, 60))
			return 14;
		for (unsigned i = 0; i < p->more; i++)
			if (passage(l, id, NULL))
				return 15;
	}
	uatomic_set(&p->done, 1);
	bakery_lock_close(l);
	bakery_close(b);
	return 0;
}

static pid_t start(unsigned k)
{
	pid_t pid = tk_fork(part_main, (void *)(uintptr_t)k);

	ck_assert_int_gt(pid, 0);
	return pid;
}

/* A fresh region with the biased lock of ALGO; the test's own handle. */
static void setup(enum bakery_algo algo, const char *tag, bakery_t **b, bakery_lock_t **l)
{
	const struct bakery_lock_config cfg = { .algo = algo, .flags = BAKERY_LOCK_BIASED };
	int err;

	sh = tk_shared(sizeof(*sh));
	tk_name(sh->region, sizeof(sh->region), tag);
	ck_assert_int_eq(bakery_open(sh->region, BAKERY_CREATE | BAKERY_EXCL, NULL, b), 0);
	err = bakery_lock_open_config(*b, "bias", &cfg, l);
	if (err == ENOTSUP) {
		/* no expedited membarrier here: the refusal is tested elsewhere
		 * (tests/kernel/refused-calls) */
		printf("crash-bias: biased locks refused here (ENOTSUP): nothing to test\n");
		bakery_close(*b);
		bakery_unlink(sh->region);
		exit(77);
	}
	ck_assert_int_eq(err, 0);
}

/* The occupancy object's verdict: no overlap seen; no update of the counter
 * lost (an overlap loses one); and at most one more than the entries per
 * holder the test killed (killed between its counter's write and its entry's
 * count: occupancy.h), none where it killed nobody inside. */
static void teardown_after(bakery_t *b, bakery_lock_t *l, unsigned kills)
{
	struct occupancy *o = &sh->occ;

	ck_assert_msg(o->violations == 0 && o->counter >= o->entries &&
	              o->counter <= o->entries + kills,
	              "MUTUAL EXCLUSION: violations %llu, counter %llu, entries %llu, kills %u",
	              (unsigned long long)o->violations, (unsigned long long)o->counter,
	              (unsigned long long)o->entries, kills);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(sh->region), 0);
}

static void teardown(bakery_t *b, bakery_lock_t *l)
{
	teardown_after(b, l, 0);
}

static void expect_exit(pid_t pid, int want, const char *who)
{
	int st = tk_reap(pid, 60);

	ck_assert_msg(st == want, "%s: exit %d, expected %d", who, st, want);
}

/* ---------------------------------------------------------- owner dies -- */

/* The owner killed at POINT; the taker, in a slot of its own (claimed
 * while the owner lived), revokes the dead owner's bias. */
static void owner_dies(enum bakery_algo algo, const char *point, int want_rc,
                       uint64_t owner_deaths)
{
	struct bakery_lock_info li;
	bakery_lock_t *l;
	bakery_t *b;
	pid_t taker;

	setup(algo, point, &b, &l);
	sh->p[W] = (struct part){ .warm = 0, .claim_first = 1 };
	taker = start(W);
	ck_assert(tk_wait_flag(&sh->p[W].claimed, 1, 60));
	sh->p[O] = (struct part){ .crash_at = point, .warm = WARM };
	expect_exit(start(O), 128 + SIGKILL, "owner");
	ck_assert_msg(sh->p[O].biased, "%s: the owner was not biased after %u passages",
	              bakery_algo_name(algo), WARM);
	li = info_of(b, l);
	ck_assert_int_eq(li.bias_slot, sh->p[O].slot);  /* the dead owner's bias */
	uatomic_set(&sh->p[W].go, 1);
	expect_exit(taker, 0, "taker");
	ck_assert_int_ne(sh->p[W].slot, sh->p[O].slot);
	ck_assert_msg(sh->p[W].rc == want_rc, "%s, owner killed at %s: the taker got %s, not %s",
	              bakery_algo_name(algo), point, bakery_strerror(sh->p[W].rc),
	              bakery_strerror(want_rc));
	li = info_of(b, l);
	ck_assert_int_eq(li.bias_slot, -1);
	ck_assert_uint_eq(li.bias_revocations, 1);
	ck_assert_uint_eq(li.recoveries, 1);
	ck_assert_uint_eq(li.owner_deaths, owner_deaths);
	ck_assert_msg(li.holder == -1 && li.waiters == 0 && !li.owner_dead,
	              "lock left holder %d waiters %u owner_dead %d", li.holder, li.waiters,
	              li.owner_dead);
	/* and the lock works on, for us too */
	ck_assert_int_eq(passage(l, 1, NULL), 0);
	teardown(b, l);
}

START_TEST(test_owner_dies_ticket)
{
	owner_dies(algo_of[_i], "bias-ticket", 0, 0);
}
END_TEST

START_TEST(test_owner_dies_critical)
{
	owner_dies(algo_of[_i], "critical", EOWNERDEAD, 1);
}
END_TEST

START_TEST(test_owner_dies_exit)
{
	owner_dies(algo_of[_i], "exit", 0, 0);
}
END_TEST

/* The owner killed inside; the taker claims the dead owner's slot once it
 * is recovered, and with it the bias: a thread in the slot is one more
 * passage of the owner (bias.pml).  It takes the fast path and is told
 * EOWNERDEAD all the same. */
START_TEST(test_owner_dies_slot_reused)
{
	struct bakery_lock_info li;
	bakery_lock_t *l;
	bakery_t *b;

	setup(algo_of[_i], "reused", &b, &l);
	sh->p[O] = (struct part){ .crash_at = "critical", .warm = WARM };
	expect_exit(start(O), 128 + SIGKILL, "owner");
	ck_assert(sh->p[O].biased);
	sh->p[W] = (struct part){ .warm = 0 };
	expect_exit(start(W), 0, "taker");
	ck_assert_int_eq(sh->p[W].slot, sh->p[O].slot);
	ck_assert_int_eq(sh->p[W].rc, EOWNERDEAD);
	li = info_of(b, l);
	ck_assert_int_eq(li.bias_slot, sh->p[O].slot);
	ck_assert_uint_eq(li.bias_revocations, 0);
	ck_assert_uint_eq(li.recoveries, 1);
	ck_assert_uint_eq(li.owner_deaths, 1);
	ck_assert_int_eq(passage(l, 1, NULL), 0);
	teardown(b, l);
}
END_TEST

/* -------------------------------------------------------- revoker dies -- */

static void revoker_dies(enum bakery_algo algo, const char *point)
{
	struct bakery_lock_info li;
	bakery_lock_t *l;
	bakery_t *b;
	pid_t owner;

	setup(algo, point, &b, &l);
	/* the owner takes the bias and stays, to go on afterwards */
	sh->p[O] = (struct part){ .warm = WARM, .more = WARM };
	owner = start(O);
	ck_assert(tk_wait_flag(&sh->p[O].ready, 1, 60));
	sh->p[R] = (struct part){ .crash_at = point };
	expect_exit(start(R), 128 + SIGKILL, "revoker");
	ck_assert_msg(sh->p[O].biased, "the owner was not biased");
	li = info_of(b, l);
	ck_assert_msg(li.bias_slot == -1, "%s: a revoker died at %s: biased to %d",
	              bakery_algo_name(algo), point, li.bias_slot);
	ck_assert_uint_eq(li.bias_revocations, 1);
	/* a later taker finishes the dead revoker's revocation */
	sh->p[W] = (struct part){ .warm = 0 };
	expect_exit(start(W), 0, "taker");
	ck_assert_int_eq(sh->p[W].rc, 0);
	uatomic_set(&sh->p[O].go, 2);
	expect_exit(owner, 0, "owner");
	ck_assert_int_eq(sh->p[O].rc, 0);
	li = info_of(b, l);
	ck_assert_uint_eq(li.recoveries, 1);
	ck_assert_uint_eq(li.owner_deaths, 0);
	/* the owner's 2 * WARM + 1, the taker's 1: the revoker died in the doorway */
	ck_assert_uint_eq(li.acquisitions, 2 * WARM + 2);
	teardown(b, l);
}

START_TEST(test_revoker_dies_before_membarrier)
{
	revoker_dies(algo_of[_i], "bias-revoking");
}
END_TEST

START_TEST(test_revoker_dies_after_membarrier)
{
	revoker_dies(algo_of[_i], "bias-revoked");
}
END_TEST

/* -------------------------------------------------------- granter dies -- */

/* The crash point armed from the owner's first passage (in the environment
 * it is forked with): it dies on its first grant, after G1 won. */
START_TEST(test_granter_dies)
{
	struct bakery_lock_info li;
	bakery_lock_t *l;
	bakery_t *b;
	pid_t owner, taker;

	setup(algo_of[_i], "granted", &b, &l);
	sh->p[W] = (struct part){ .warm = 0, .claim_first = 1 };
	taker = start(W);
	ck_assert(tk_wait_flag(&sh->p[W].claimed, 1, 60));
	sh->p[O] = (struct part){ .warm = WARM };
	setenv("BAKERY_CRASH_AT", "bias-granted", 1);
	owner = start(O);
	unsetenv("BAKERY_CRASH_AT");
	expect_exit(owner, 128 + SIGKILL, "granter");
	li = info_of(b, l);
	ck_assert_msg(li.bias_slot >= 0 && li.acquisitions == 64,
	              "%s: the granter died biased to %d after %llu passages, expected its "
	              "grant after 64", bakery_algo_name(algo_of[_i]), li.bias_slot,
	              (unsigned long long)li.acquisitions);
	uatomic_set(&sh->p[W].go, 1);
	expect_exit(taker, 0, "taker");
	ck_assert_int_eq(sh->p[W].rc, 0);
	li = info_of(b, l);
	ck_assert_int_eq(li.bias_slot, -1);
	ck_assert_uint_eq(li.bias_revocations, 1);
	ck_assert_uint_eq(li.owner_deaths, 0);
	teardown(b, l);
}
END_TEST

/* ------------------------------------------------------ owner stopped -- */

static bool stopped(void *arg)
{
	return unit_proc_state(*(pid_t *)arg) == 'T';
}

START_TEST(test_owner_stopped)
{
	struct bakery_lock_info li;
	bakery_lock_t *l;
	bakery_t *b;
	pid_t owner, taker;

	setup(algo_of[_i], "stopped", &b, &l);
	sh->p[O] = (struct part){ .stop_at = "bias-ticket", .warm = WARM };
	owner = start(O);
	ck_assert(tk_wait_until(stopped, &owner, 60));
	ck_assert_msg(sh->p[O].biased, "the owner was not biased");
	sh->p[W] = (struct part){ .warm = 0 };
	taker = start(W);
	ck_assert(tk_wait_flag(&sh->p[W].ready, 1, 60));
	/* the owner's fast ticket, drained by the revocation, is ahead of the
	 * taker's: no entry while the owner is stopped (the owner's were all
	 * made before it stopped) */
	tk_sleep_ms(300);
	ck_assert_msg(uatomic_read(&sh->occ.entries) == WARM,
	              "%s: the taker got in past the stopped owner's ticket",
	              bakery_algo_name(algo_of[_i]));
	ck_assert_int_eq(kill(owner, SIGCONT), 0);
	expect_exit(taker, 0, "taker");
	expect_exit(owner, 0, "owner");
	ck_assert_int_eq(sh->p[O].rc, 0);
	ck_assert_int_eq(sh->p[W].rc, 0);
	/* the owner found its bias revoked, threw its ticket away and took a
	 * new one, after the taker's */
	ck_assert_msg(sh->p[W].order < sh->p[O].order, "the owner (order %llu) before the "
	              "taker (%llu)", (unsigned long long)sh->p[O].order,
	              (unsigned long long)sh->p[W].order);
	li = info_of(b, l);
	ck_assert_uint_eq(li.bias_revocations, 1);
	ck_assert_uint_eq(li.acquisitions, WARM + 2);
	teardown(b, l);
}
END_TEST

/* --------------------------------------------------------------- churn -- */

#define CHURN_ARRIVALS 3
#define CHURN_REVOCATIONS 500
#define OWNER_ID0 100           /* occupancy IDs: owners 100..., arrivals 10... */

/* The owner: passages until told to stop (or killed). */
static int churn_owner(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg;
	bakery_lock_t *l;
	bakery_t *b;
	int rc = open_lock(&b, &l);

	if (rc)
		return rc;
	while (!uatomic_read(&sh->stop)) {
		rc = passage(l, id, NULL);
		if (rc != 0 && rc != EOWNERDEAD)
			return 20;
		uatomic_inc(&sh->churn_passages);
	}
	return 0;
}

/* An arrival: a pause of 50-500 us, one to three passages, again. */
static int churn_arrival(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg;
	unsigned seed = (unsigned)getpid();
	bakery_lock_t *l;
	bakery_t *b;
	int rc = open_lock(&b, &l);

	if (rc)
		return rc;
	while (!uatomic_read(&sh->stop)) {
		unsigned n = 1 + rand_r(&seed) % 3;

		usleep(50 + rand_r(&seed) % 450);
		for (unsigned i = 0; i < n; i++) {
			rc = passage(l, id, NULL);
			if (rc != 0 && rc != EOWNERDEAD)
				return 21;
		}
	}
	bakery_lock_close(l);
	bakery_close(b);
	return 0;
}

/* Until CHURN_REVOCATIONS revocations (60 s at most: a failure), and with
 * KILLS, the owner SIGKILLed and started again that many times on the way. */
static void churn(enum bakery_algo algo, unsigned kills)
{
	pid_t arrivals[CHURN_ARRIVALS], owner;
	struct bakery_lock_info li;
	unsigned owners = 0, killed = 0;
	double end = tk_now(CLOCK_MONOTONIC) + 60;
	bakery_lock_t *l;
	bakery_t *b;

	setup(algo, kills ? "churn-kills" : "churn", &b, &l);
	setenv("BAKERY_TEST_BIAS_GRANT", CHURN_GRANT, 1);
	owner = tk_fork(churn_owner, (void *)(uintptr_t)(OWNER_ID0 + owners++));
	for (unsigned k = 0; k < CHURN_ARRIVALS; k++)
		arrivals[k] = tk_fork(churn_arrival, (void *)(uintptr_t)(10 + k));
	unsetenv("BAKERY_TEST_BIAS_GRANT");
	for (;;) {
		li = info_of(b, l);
		ck_assert_msg(uatomic_read(&sh->occ.violations) == 0,
		              "MUTUAL EXCLUSION: %s churn, %llu overlaps after %u revocations",
		              bakery_algo_name(algo),
		              (unsigned long long)uatomic_read(&sh->occ.violations),
		              li.bias_revocations);
		if (li.bias_revocations >= CHURN_REVOCATIONS && killed == kills)
			break;
		ck_assert_msg(tk_now(CLOCK_MONOTONIC) < end, "%s: %u revocations in 60 s",
		              bakery_algo_name(algo), li.bias_revocations);
		tk_sleep_ms(5 + (killed < kills ? rand() % 20 : 0));
		if (killed < kills) {
			occupancy_doom(&sh->occ, OWNER_ID0 + owners - 1);
			ck_assert(tk_kill(owner));
			killed++;
			setenv("BAKERY_TEST_BIAS_GRANT", CHURN_GRANT, 1);
			owner = tk_fork(churn_owner, (void *)(uintptr_t)(OWNER_ID0 + owners++));
			unsetenv("BAKERY_TEST_BIAS_GRANT");
		}
	}
	uatomic_set(&sh->stop, 1);
	expect_exit(owner, 0, "owner");
	for (unsigned k = 0; k < CHURN_ARRIVALS; k++)
		expect_exit(arrivals[k], 0, "arrival");
	li = info_of(b, l);
	ck_assert_msg(li.holder == -1 && li.waiters == 0, "lock left holder %d waiters %u",
	              li.holder, li.waiters);
	printf("crash-bias: %s churn, %u kills: %u revocations, %llu owner passages, "
	       "%llu entries\n", bakery_algo_name(algo), kills, li.bias_revocations,
	       (unsigned long long)sh->churn_passages, (unsigned long long)sh->occ.entries);
	ck_assert_int_eq(passage(l, 1, NULL), 0);
	teardown_after(b, l, kills);
}

START_TEST(test_churn)
{
	churn(algo_of[_i], 0);
}
END_TEST

START_TEST(test_churn_kills)
{
	churn(algo_of[_i], 20);
}
END_TEST

static Suite *bias_suite(void)
{
	Suite *s = suite_create("crash-bias");
	TCase *tc = tcase_create("bias");
	int n = (int)(sizeof(algo_of) / sizeof(algo_of[0]));

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_owner_dies_ticket, 0, n);
	tcase_add_loop_test(tc, test_owner_dies_critical, 0, n);
	tcase_add_loop_test(tc, test_owner_dies_exit, 0, n);
	tcase_add_loop_test(tc, test_owner_dies_slot_reused, 0, n);
	tcase_add_loop_test(tc, test_revoker_dies_before_membarrier, 0, n);
	tcase_add_loop_test(tc, test_revoker_dies_after_membarrier, 0, n);
	tcase_add_loop_test(tc, test_granter_dies, 0, n);
	tcase_add_loop_test(tc, test_owner_stopped, 0, n);
	tcase_add_loop_test(tc, test_churn, 0, n);
	tcase_add_loop_test(tc, test_churn_kills, 0, n);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int rc;

	tk_run_begin();         /* a failed test's objects are removed too */
	rc = scene_run(bias_suite());
	tk_run_end();
	return rc;
}
