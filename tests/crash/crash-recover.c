/* SPDX-License-Identifier: MIT */
/*
 * crash-recover.c - recovery is idempotent and done exactly once, for every
 * algorithm.
 *
 *   - A recoverer killed half-way (crash point recover-cleared: the dead
 *     slot's registers cleared, the slot not yet released), once as a waiter
 *     that found the death inside bakery_lock, once inside bakery_recover:
 *     the next recoverer finishes the work, the owner death is counted once,
 *     the next acquirer is told EOWNERDEAD exactly once, and every dead slot
 *     ends FREE.
 *   - Two processes calling bakery_recover at the same moment on a region
 *     with three dead slots (one died inside the critical section, two
 *     while waiting): each slot is cleared exactly once (the lock's
 *     recoveries counter), the owner death is recorded once, and the next
 *     acquirer alone is told EOWNERDEAD.
 *   - Two waiters woken by the same holder's death: one recovery, one
 *     EOWNERDEAD.
 *   - One bakery_recover, with nobody left, completes every pending
 *     passage (Jayanti: proxy passages blocked by one another) and frees
 *     every slot.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>

#include "scene.h"

enum { V, R, W1, W2, V2 };     /* V2 + k: more victims */

static void expect_slot(struct scene *s, unsigned slot, enum bakery_slot_state state, int alive)
{
	struct bakery_slot_info si;

	ck_assert_int_eq(bakery_slot_info(s->b, slot, &si), 0);
	ck_assert_msg(si.state == state && si.alive == alive,
	              "%s: slot %u: state %d alive %d, expected %d and %d",
	              bakery_algo_name(s->algo), slot, si.state, si.alive, state, alive);
}

static void expect_lock(struct scene *s, uint64_t recoveries, uint64_t owner_deaths, int owner_dead)
{
	struct bakery_lock_info li = crash_lock_info(s->b, s->l);

	ck_assert_msg(li.recoveries == recoveries && li.owner_deaths == owner_deaths &&
	              li.owner_dead == owner_dead && !li.not_recoverable,
	              "%s: recoveries %llu owner_deaths %llu owner_dead %d not_recoverable %d, "
	              "expected %llu %llu %d 0", bakery_algo_name(s->algo),
	              (unsigned long long)li.recoveries, (unsigned long long)li.owner_deaths,
	              li.owner_dead, li.not_recoverable, (unsigned long long)recoveries,
	              (unsigned long long)owner_deaths, owner_dead);
}

/* W1 then W2 take the lock: W1 is told EOWNERDEAD, W2 is not. */
static void next_two_acquire(struct scene *s)
{
	scene_start(s, W1, NULL, 0);
	scene_expect_exit(s, W1, 0);
	scene_start(s, W2, NULL, 0);
	scene_expect_exit(s, W2, 0);
	ck_assert_msg(s->sh->part[W1].rc == EOWNERDEAD && s->sh->part[W2].rc == 0,
	              "%s: W1 got %s, W2 got %s", bakery_algo_name(s->algo),
	              bakery_strerror(s->sh->part[W1].rc), bakery_strerror(s->sh->part[W2].rc));
}

/* V takes the free lock and dies inside; returns its slot. */
static unsigned holder_dies(struct scene *s, unsigned k)
{
	scene_start(s, k, "critical", 0);
	scene_expect_exit(s, k, CRASH_SIGKILLED);
	return scene_slot(s, k).index;
}

/*
 * R, waiting behind the dead V, proves the death, clears V's registers and
 * dies before releasing V's slot.  V's token is then owner-died again (R
 * held it), the lock is owner-dead, and R itself is a dead waiter.
 */
START_TEST(test_killed_recoverer_in_lock)
{
	struct scene s;
	unsigned vs, rs, reclaimed;

	scene_open(&s, "rcv-lock", SCENE_ALGO(_i), 8);
	vs = holder_dies(&s, V);
	scene_start(&s, R, "recover-cleared", 0);
	scene_expect_exit(&s, R, CRASH_SIGKILLED);
	rs = scene_slot(&s, R).index;
	expect_slot(&s, vs, BAKERY_SLOT_ACTIVE, 0);
	expect_slot(&s, rs, BAKERY_SLOT_ACTIVE, 0);
	expect_lock(&s, 1, 1, 1);

	next_two_acquire(&s);
	/* R was recovered by W1 (it waited on R's ticket); V's part in the
	 * lock was cleared already, so nobody had to wait on V: its slot is
	 * released by the next recovery, with no second count */
	expect_slot(&s, rs, BAKERY_SLOT_FREE, -1);
	ck_assert_int_eq(crash_recover_in_child(s.region, &reclaimed), 0);
	ck_assert_uint_eq(reclaimed, 1);
	expect_slot(&s, vs, BAKERY_SLOT_FREE, -1);
	expect_lock(&s, 2, 1, 0);
	scene_expect_exclusion(&s, 2);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
}
END_TEST

struct recoverer {
	char region[TK_NAME_SIZE];
	int preclaim;              /* take a slot before getting ready */
	volatile int ready, go;
	unsigned reclaimed;
	int err;
};

static int recover_run(void *arg)
{
	struct recoverer *r = arg;
	bakery_t *b;

	if (bakery_open(r->region, BAKERY_NORECOVER, NULL, &b))
		return 1;
	/* bakery_recover takes a slot first; taken beforehand, that part of
	 * the call does not decide which of two racers gets the work */
	if (r->preclaim && bakery_recover(b, NULL))
		return 4;
	CMM_STORE_SHARED(r->ready, 1);
	while (!CMM_LOAD_SHARED(r->go))
		caa_cpu_relax();        /* both start at the same moment */
	r->err = bakery_recover(b, &r->reclaimed);
	if (r->err)
		return 2;
	return bakery_close(b) ? 3 : 0;
}

/* The same, the recoverer being bakery_recover(): its own slot (taken by
 * bakery_recover) never joined the lock. */
START_TEST(test_killed_recoverer_in_recover)
{
	struct recoverer *r = tk_shared(sizeof(*r));
	struct scene s;
	unsigned vs, rs, reclaimed;
	pid_t pid;

	scene_open(&s, "rcv-recover", SCENE_ALGO(_i), 8);
	vs = holder_dies(&s, V);
	snprintf(r->region, sizeof(r->region), "%s", s.region);
	r->go = 1;
	pid = crash_fork(recover_run, r, "recover-cleared");
	ck_assert_int_eq(tk_reap(pid, 10), CRASH_SIGKILLED);
	rs = (unsigned)crash_slot_of(s.b, pid);
	expect_slot(&s, vs, BAKERY_SLOT_ACTIVE, 0);
	expect_slot(&s, rs, BAKERY_SLOT_ACTIVE, 0);
	expect_lock(&s, 1, 1, 1);

	ck_assert_int_eq(crash_recover_in_child(s.region, &reclaimed), 0);
	ck_assert_uint_eq(reclaimed, 2);
	expect_slot(&s, vs, BAKERY_SLOT_FREE, -1);
	expect_slot(&s, rs, BAKERY_SLOT_FREE, -1);
	expect_lock(&s, 1, 1, 1);
	next_two_acquire(&s);
	expect_lock(&s, 1, 1, 0);
	scene_expect_exclusion(&s, 2);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
	munmap(r, sizeof(*r));
}
END_TEST

/* How many of the N slots in DEAD are not FREE yet. */
static unsigned still_recovering(struct scene *s, const unsigned *dead, unsigned n)
{
	struct bakery_slot_info si;
	unsigned left = 0;

	for (unsigned k = 0; k < n; k++)
		left += bakery_slot_info(s->b, dead[k], &si) == 0 && si.state != BAKERY_SLOT_FREE;
	return left;
}

#define RACE_ROUNDS 6
#define RACE_DEAD 6             /* one dead inside, the others waiting */

/* One race: RACE_DEAD dead slots, two bakery_recover() at once. */
static void race_round(enum bakery_algo algo, unsigned round)
{
	struct recoverer *r = tk_shared(2 * sizeof(*r));
	unsigned dead[RACE_DEAD], total;
	pid_t pid[2];
	struct scene s;

	scene_open(&s, "race", algo, 16);
	for (int k = 0; k < 2; k++) {
		snprintf(r[k].region, sizeof(r[k].region), "%s", s.region);
		r[k].preclaim = 1;
		pid[k] = crash_fork(recover_run, &r[k], NULL);
		ck_assert(tk_wait_flag(&r[k].ready, 1, 10));
	}
	dead[0] = holder_dies(&s, V);
	for (unsigned k = 1; k < RACE_DEAD; k++) {
		scene_start(&s, V2 + k, "waiting", 0);
		scene_expect_exit(&s, V2 + k, CRASH_SIGKILLED);
		dead[k] = scene_slot(&s, V2 + k).index;
	}
	expect_lock(&s, 0, 0, 0);

	CMM_STORE_SHARED(r[0].go, 1);
	CMM_STORE_SHARED(r[1].go, 1);
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(tk_reap(pid[k], 10), 0);
	total = r[0].reclaimed + r[1].reclaimed;
	fprintf(stderr, "%s race %u: reclaimed %u + %u, still recovering %u\n",
	        bakery_algo_name(algo), round, r[0].reclaimed, r[1].reclaimed,
	        still_recovering(&s, dead, RACE_DEAD));
	/* each dead slot cleared exactly once, the owner death once */
	expect_lock(&s, RACE_DEAD, 1, 1);
	if (algo != BAKERY_ALGO_JAYANTI) {
		/* a plain reset frees the slot at once: counted by its recoverer */
		ck_assert_uint_eq(total, RACE_DEAD);
		for (int k = 0; k < RACE_DEAD; k++)
			expect_slot(&s, dead[k], BAKERY_SLOT_FREE, -1);
	} else {
		/* a proxy passage still blocked by a live participant's
		 * earlier ticket is completed later, by whoever waits behind
		 * it, so not every slot is freed (and counted) by these two
		 * calls; a slot is never counted twice */
		ck_assert_uint_le(total, RACE_DEAD);
	}
	next_two_acquire(&s);
	for (int k = 0; k < RACE_DEAD; k++)
		expect_slot(&s, dead[k], BAKERY_SLOT_FREE, -1);
	expect_lock(&s, RACE_DEAD, 1, 0);
	scene_expect_exclusion(&s, 2);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
	munmap(r, 2 * sizeof(*r));
}

START_TEST(test_racing_recoverers)
{
	for (unsigned round = 0; round < RACE_ROUNDS; round++)
		race_round(SCENE_ALGO(_i), round);
}
END_TEST

/* V holds; W1 and W2 wait; V is killed: both wake, one recovers, one is
 * told EOWNERDEAD (the first in doorway order). */
START_TEST(test_racing_waiters)
{
	struct scene s;
	unsigned vs;

	scene_open(&s, "waiters", SCENE_ALGO(_i), 8);
	scene_start(&s, V, NULL, 1);
	scene_wait_holding(&s, V);
	vs = scene_slot(&s, V).index;
	scene_start(&s, W1, NULL, 0);
	scene_wait_waiting(&s, W1);
	scene_start(&s, W2, NULL, 0);
	scene_wait_waiting(&s, W2);
	occupancy_doom(&s.sh->occ, s.sh->part[V].serial);
	kill(s.pid[V], SIGKILL);
	scene_expect_exit(&s, V, CRASH_SIGKILLED);
	scene_expect_exit(&s, W1, 0);
	scene_expect_exit(&s, W2, 0);
	ck_assert_msg(s.sh->part[W1].rc == EOWNERDEAD && s.sh->part[W2].rc == 0,
	              "%s: W1 got %s, W2 got %s", bakery_algo_name(s.algo),
	              bakery_strerror(s.sh->part[W1].rc), bakery_strerror(s.sh->part[W2].rc));
	ck_assert(s.sh->part[W1].order < s.sh->part[W2].order);
	expect_lock(&s, 1, 1, 0);
	expect_slot(&s, vs, BAKERY_SLOT_FREE, -1);
	scene_expect_exclusion(&s, 3);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
}
END_TEST

/* P of test_recover_completes_all: a first passage alone (its slot is the
 * lowest), then, when told, a clocklock with a deadline behind the holder. */
struct late_aborter {
	struct crash_part part;
	volatile int ready, go;
};

static int late_abort_run(void *arg)
{
	struct late_aborter *a = arg;
	struct crash_part *p = &a->part;
	struct timespec at;
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(p->region, BAKERY_NORECOVER, NULL, &b) || bakery_lock_open(b, CRASH_LOCK, p->algo, &l))
		return 1;
	if (bakery_lock(l) || bakery_unlock(l))
		return 2;
	CMM_STORE_SHARED(a->ready, 1);
	if (!tk_wait_flag(&a->go, 1, 20))
		return 3;
	at = tk_in(CLOCK_MONOTONIC, p->timeout);
	p->rc = bakery_clocklock(l, CLOCK_MONOTONIC, &at);
	CMM_STORE_SHARED(p->gave_up, 1);
	return bakery_lock_close(l) || bakery_close(b) ? 4 : 0;
}

/*
 * Two participants give up behind a holder and leave (Jayanti: their
 * passages await completion by proxy), the one with the lower slot holding
 * the later token, so that its passage can only be completed after the
 * other's.  One bakery_recover, with nobody else left, must complete both
 * and free every slot.
 */
START_TEST(test_recover_completes_all)
{
	struct late_aborter *a = tk_shared(sizeof(*a));
	struct scene s;
	unsigned reclaimed;
	pid_t p;

	scene_open(&s, "complete", SCENE_ALGO(_i), 8);
	snprintf(a->part.region, sizeof(a->part.region), "%s", s.region);
	a->part.algo = s.algo;
	a->part.timeout = 0.05;
	p = crash_fork(late_abort_run, a, NULL);
	ck_assert(tk_wait_flag(&a->ready, 1, 10));
	scene_start(&s, V, NULL, 1);            /* the holder */
	scene_wait_holding(&s, V);
	/* W1's deadline outlasts the test's look at it: under load, a 0.1 s
	 * wait could end before the test saw it queued */
	scene_start_mode(&s, W1, NULL, 0, CRASH_MODE_CLOCK_MONO, 2.0);
	scene_wait_waiting(&s, W1);
	a->go = 1;
	ck_assert_int_eq(tk_reap(p, 10), 0);
	ck_assert_int_eq(a->part.rc, ETIMEDOUT);
	ck_assert(tk_wait_flag(&s.sh->part[W1].gave_up, 1, 10));
	ck_assert_int_eq(s.sh->part[W1].rc, ETIMEDOUT);
	scene_release(&s, V);
	scene_release(&s, W1);
	scene_expect_exit(&s, V, 0);
	scene_expect_exit(&s, W1, 0);
	ck_assert_int_eq(crash_recover_in_child(s.region, &reclaimed), 0);
	ck_assert_msg(crash_slots_used(s.b) == 0, "%s: %u slots still in use after bakery_recover",
	              bakery_algo_name(s.algo), crash_slots_used(s.b));
	scene_close(&s);
	munmap(a, sizeof(*a));
}
END_TEST

static Suite *suite(void)
{
	Suite *su = suite_create("crash-recover");
	TCase *tc = tcase_create("recover");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_killed_recoverer_in_lock, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_killed_recoverer_in_recover, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_racing_recoverers, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_racing_waiters, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_recover_completes_all, 0, CRASH_NALGOS);
	suite_add_tcase(su, tc);
	return su;
}

int main(void)
{
	return scene_run(suite());
}
