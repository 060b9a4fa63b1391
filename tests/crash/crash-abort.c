/* SPDX-License-Identifier: MIT */
/*
 * crash-abort.c - trylock, timedlock and clocklock leave the protocol
 * cleanly when they give up, for every algorithm.
 *
 *   - Registers idle after an abort: A holds; B gives up (bakery_trylock,
 *     bakery_timedlock on CLOCK_REALTIME, bakery_clocklock on CLOCK_MONOTONIC
 *     and on CLOCK_REALTIME) and stays alive, idle.  Its stage is IDLE at
 *     once and its choosing/number registers are zero (Jayanti: its token
 *     stays published with a proxy completion pending, by design); C queues
 *     and A lets go: C gets in without waiting for B; then every register of
 *     B is zero for every algorithm (the Jayanti passage completed by
 *     proxy), nobody was recovered (B is alive), and B can take the lock
 *     again.  The deadline is respected.
 *   - The abort form of a sequence the model checker found against Jayanti
 *     with a plain withdrawal of the token: nobody gets in while the
 *     holder holds (see test_abort_drift).
 *   - A waiter queued behind an aborted one is not delayed: A holds, B waits
 *     with a short deadline, C waits without; A releases after B gave up; C
 *     must get the lock at once.  The delay from A's unlock to C's
 *     acquisition is measured and printed (median and worst per algorithm).
 *   - A storm of trylocks and short deadlines from several processes, with
 *     one more process holding the lock 2 ms at a time so that deadlines
 *     do expire, never breaks mutual exclusion (occupancy object), always
 *     completes, and leaves every register idle.
 *
 * The register checks read the region through lib/shm_layout.h and
 * lib/handle.h (white box):
 * the public introspection shows stages, not register contents.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <urcu/system.h>
#include <urcu/uatomic.h>

#include "shm_layout.h"
#include "handle.h"
#include "scene.h"

enum { A, B, C };

#define NUMBER_BITS (~(UINT64_C(1) << 63))   /* Black-White keeps its colour in bit 63 */

static const enum crash_mode abort_modes[] = {
	CRASH_MODE_TRY, CRASH_MODE_TIMED_RT, CRASH_MODE_CLOCK_MONO, CRASH_MODE_CLOCK_RT,
};
static const char *const mode_names[] = {
	[CRASH_MODE_LOCK] = "lock", [CRASH_MODE_TRY] = "trylock", [CRASH_MODE_TIMED_RT] = "timedlock",
	[CRASH_MODE_CLOCK_MONO] = "clocklock(MONOTONIC)", [CRASH_MODE_CLOCK_RT] = "clocklock(REALTIME)",
};

static struct bakery_shm_reg *regs_of(struct scene *s, int slot)
{
	unsigned lock;

	ck_assert(slot >= 0);
	ck_assert_int_eq(bakery_lock_index(s->l, &lock), 0);
	return reg_of((struct bakery *)s->b, lock, (unsigned)slot);
}

/* choosing, number and proxy of SLOT all zero (the colour bit aside) */
static bool regs_idle(struct scene *s, int slot)
{
	struct bakery_shm_reg *r = regs_of(s, slot);

	return (CMM_LOAD_SHARED(r->choosing) & 1) == 0 &&
	       (CMM_LOAD_SHARED(r->number) & NUMBER_BITS) == 0 &&
	       CMM_LOAD_SHARED(r->proxy) == 0;
}

static void expect_gave_up(struct scene *s, unsigned k, enum crash_mode mode, double timeout)
{
	struct crash_part *p = &s->sh->part[k];
	double took;

	ck_assert_msg(tk_wait_flag(&p->gave_up, 1, 10), "%s %s: never gave up",
	              bakery_algo_name(s->algo), mode_names[mode]);
	ck_assert_int_eq(p->rc, mode == CRASH_MODE_TRY ? EBUSY : ETIMEDOUT);
	took = (double)(p->t_gave_up - p->t_call) / 1e9;
	if (mode != CRASH_MODE_TRY)
		/* not before the deadline (a little slack for the clocks'
		 * granularity), nor long after it */
		ck_assert_msg(took >= timeout - 0.001 && took < timeout + 2.0,
		              "%s %s: gave up after %.4f s, deadline %.3f s",
		              bakery_algo_name(s->algo), mode_names[mode], took, timeout);
}

/* ------------------------------------------------------ registers idle -- */

#define ABORT_TIMEOUT 0.02

START_TEST(test_abort_idle)
{
	enum bakery_algo algo = crash_algos[_i / 4];
	enum crash_mode mode = abort_modes[_i % 4];
	struct bakery_slot_info si;
	struct bakery_lock_info li;
	struct crash_part *a;          /* the aborter, B */
	struct scene s;

	scene_open(&s, "abort", algo, 8);
	a = &s.sh->part[B];
	scene_start(&s, A, NULL, 1);
	scene_wait_holding(&s, A);
	scene_start_mode(&s, B, NULL, 0, mode, ABORT_TIMEOUT);
	s.sh->part[B].retry = 1;
	expect_gave_up(&s, B, mode, ABORT_TIMEOUT);

	/* at once: stage idle, not a waiter any more, the abort counted */
	ck_assert_int_eq(bakery_slot_info(s.b, (unsigned)a->slot, &si), 0);
	ck_assert_msg(si.state == BAKERY_SLOT_ACTIVE && si.alive == 1 && si.pass == BAKERY_PASS_IDLE,
	              "%s %s: aborted slot state %d alive %d pass %d", bakery_algo_name(algo),
	              mode_names[mode], si.state, si.alive, si.pass);
	li = crash_lock_info(s.b, s.l);
	ck_assert_uint_eq(li.waiters, 0);
	ck_assert_uint_eq(li.aborts, 1);
	ck_assert_int_eq(CMM_LOAD_SHARED(regs_of(&s, a->slot)->choosing) & 1, 0);
	if (algo == BAKERY_ALGO_JAYANTI)
		/* the token stays until its passage is completed by proxy, which
		 * cannot happen while A, ahead of it, holds */
		ck_assert_msg(CMM_LOAD_SHARED(regs_of(&s, a->slot)->proxy) != 0 &&
		              CMM_LOAD_SHARED(regs_of(&s, a->slot)->number) != 0,
		              "jayanti %s: the aborted token was withdrawn", mode_names[mode]);
	else
		ck_assert_msg(regs_idle(&s, a->slot), "%s %s: ticket left after the abort",
		              bakery_algo_name(algo), mode_names[mode]);

	/* C queues behind; A lets go; C must not wait for the live,
	 * idle aborter, and nobody may be recovered */
	scene_start(&s, C, NULL, 0);
	scene_wait_waiting(&s, C);
	scene_release(&s, A);
	scene_expect_exit(&s, A, 0);
	scene_expect_exit(&s, C, 0);
	ck_assert_int_eq(s.sh->part[C].rc, 0);
	ck_assert_msg(regs_idle(&s, a->slot), "%s %s: registers of the aborted slot not idle",
	              bakery_algo_name(algo), mode_names[mode]);

	/* the aborter takes the lock again */
	scene_release(&s, B);
	scene_expect_exit(&s, B, 0);
	ck_assert_int_eq(a->rc_retry, 0);
	scene_expect_exclusion(&s, 3);
	li = crash_lock_info(s.b, s.l);
	ck_assert_uint_eq(li.recoveries, 0);
	ck_assert_uint_eq(li.owner_deaths, 0);
	ck_assert_uint_eq(li.aborts, 1);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
}
END_TEST

/* ---------------------------------------------------------- drift -- */

/*
 * The abort form of the sequence the model checker found against Jayanti's
 * algorithm when an abort simply withdraws its token (tests/model), in a
 * region of three slots (tokens mod 5): A holds with token 1 (X = 1); B
 * takes token 2 and waits with a deadline; C takes token 3 and waits with a
 * later one; B gives up and at once calls bakery_lock again; C gives up.
 * (C must queue before B gives up: on a loaded machine the deadlines are
 * doubled until it does.)
 * Had B's and C's tokens simply vanished, B's new token 4 would compare
 * "before" A's 1 and B would get in while A holds.  Run for every
 * algorithm: the others' number := 0 must pass it too.
 */
#define DRIFT_B_TIMEOUT 0.3     /* doubled while C fails to queue in time */
#define DRIFT_ATTEMPTS 4

/* One attempt: false if C could not queue before B gave up (a loaded
 * machine); then the sequence did not happen and nothing is checked. */
static bool drift_attempt(enum bakery_algo algo, double timeout)
{
	struct crash_part *b;
	struct scene s;
	bool queued;

	scene_open(&s, "abort-drift", algo, 3);
	b = &s.sh->part[B];
	scene_start(&s, A, NULL, 1);
	scene_wait_holding(&s, A);
	scene_start_mode(&s, B, NULL, 0, CRASH_MODE_CLOCK_MONO, timeout);
	b->retry = 1;
	b->release = 1;         /* retry with bakery_lock as soon as it gives up */
	scene_wait_waiting(&s, B);
	scene_start_mode(&s, C, NULL, 0, CRASH_MODE_CLOCK_MONO, 2 * timeout);
	scene_wait_waiting(&s, C);
	queued = !b->gave_up;
	expect_gave_up(&s, B, CRASH_MODE_CLOCK_MONO, timeout);
	expect_gave_up(&s, C, CRASH_MODE_CLOCK_MONO, 2 * timeout);
	tk_sleep_ms(50);
	ck_assert_msg(!b->holding && s.sh->occ.violations == 0,
	              "%s: B got in again while A holds", bakery_algo_name(s.algo));
	scene_release(&s, A);
	scene_release(&s, C);
	scene_expect_exit(&s, A, 0);
	scene_expect_exit(&s, B, 0);
	scene_expect_exit(&s, C, 0);
	ck_assert_int_eq(b->rc_retry, 0);
	scene_expect_exclusion(&s, 2);
	ck_assert_uint_eq(crash_lock_info(s.b, s.l).aborts, 2);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
	return queued;
}

START_TEST(test_abort_drift)
{
	double timeout = DRIFT_B_TIMEOUT;
	int attempt = 0;

	while (!drift_attempt(SCENE_ALGO(_i), timeout)) {
		ck_assert_msg(++attempt < DRIFT_ATTEMPTS, "%s: C never queued in time",
		              bakery_algo_name(SCENE_ALGO(_i)));
		timeout *= 2;
	}
}
END_TEST

/* ------------------------------------------------------------ hand-off -- */

#define HANDOFF_TRIALS 10
#define HANDOFF_TIMEOUT 0.1     /* B's deadline: long enough for C to queue */
/* The hand-off past an aborted waiter must cost no more than
 * HANDOFF_FACTOR plain hand-overs (median, measured in the same run), or
 * HANDOFF_FLOOR_NS, whichever is larger: a hand-off that waited for the
 * aborted waiter's sleep cap or a poll would cost hundreds of ms. */
#define HANDOFF_FACTOR 50
#define HANDOFF_FLOOR_NS 50000000ull

/* One trial: the delay from A's unlock to C's acquisition, in ns; 0 if C
 * could not queue before B gave up (a loaded machine: not a hand-off past
 * an aborted waiter, so not measured). */
static uint64_t handoff_trial(struct scene *s, unsigned t, double timeout)
{
	enum crash_mode mode = abort_modes[1 + t % 3];
	struct crash_part *c = &s->sh->part[C];
	bool queued;

	scene_start(s, A, NULL, 1);
	scene_wait_holding(s, A);
	scene_start_mode(s, B, NULL, 0, mode, timeout);
	scene_wait_waiting(s, B);
	scene_start(s, C, NULL, 0);
	scene_wait_waiting(s, C);
	queued = !s->sh->part[B].gave_up;
	expect_gave_up(s, B, mode, timeout);
	scene_release(s, A);
	scene_expect_exit(s, A, 0);
	scene_expect_exit(s, C, 0);
	ck_assert_int_eq(c->rc, 0);
	scene_release(s, B);
	scene_expect_exit(s, B, 0);
	return queued ? c->t_acq - s->sh->part[A].t_release : 0;
}

/* One baseline trial: the delay from A's unlock to C's acquisition with no
 * aborted waiter between them, in ns. */
static uint64_t handover_trial(struct scene *s)
{
	struct crash_part *c = &s->sh->part[C];

	scene_start(s, A, NULL, 1);
	scene_wait_holding(s, A);
	scene_start(s, C, NULL, 0);
	scene_wait_waiting(s, C);
	scene_release(s, A);
	scene_expect_exit(s, A, 0);
	scene_expect_exit(s, C, 0);
	ck_assert_int_eq(c->rc, 0);
	return c->t_acq - s->sh->part[A].t_release;
}

START_TEST(test_abort_handoff)
{
	uint64_t delay[HANDOFF_TRIALS], base[HANDOFF_TRIALS], median, worst, base_median, bound;
	struct bakery_lock_info li;
	unsigned t = 0, misses = 0, aborts = 0;
	struct scene s;

	scene_open(&s, "handoff", SCENE_ALGO(_i), 8);
	while (t < HANDOFF_TRIALS) {
		/* B's deadline doubles with every trial where C failed to
		 * queue in time */
		double timeout = HANDOFF_TIMEOUT * (1 << (misses < 4 ? misses : 4));
		uint64_t d = handoff_trial(&s, t, timeout);

		aborts++;
		if (d)
			delay[t++] = d;
		else
			ck_assert_msg(++misses < HANDOFF_TRIALS, "%s: C never queued in time",
			              bakery_algo_name(s.algo));
	}
	for (t = 0; t < HANDOFF_TRIALS; t++)
		base[t] = handover_trial(&s);
	crash_stats(delay, HANDOFF_TRIALS, &median, &worst);
	fprintf(stderr, "%s: hand-off past an aborted waiter: median %.1f us, worst %.1f us "
	        "(%u trials)\n", bakery_algo_name(s.algo), (double)median / 1e3,
	        (double)worst / 1e3, HANDOFF_TRIALS);
	crash_stats(base, HANDOFF_TRIALS, &base_median, &worst);
	bound = HANDOFF_FACTOR * base_median > HANDOFF_FLOOR_NS ? HANDOFF_FACTOR * base_median
	                                                        : HANDOFF_FLOOR_NS;
	fprintf(stderr, "%s: plain hand-over: median %.1f us, worst %.1f us; bound %.1f ms\n",
	        bakery_algo_name(s.algo), (double)base_median / 1e3, (double)worst / 1e3,
	        (double)bound / 1e6);
	ck_assert_msg(median < bound, "%s: hand-off median %.1f ms, over %.1f ms",
	              bakery_algo_name(s.algo), (double)median / 1e6, (double)bound / 1e6);
	scene_expect_exclusion(&s, 2 * aborts + 2 * HANDOFF_TRIALS);
	li = crash_lock_info(s.b, s.l);
	ck_assert_uint_eq(li.aborts, aborts);
	ck_assert_uint_eq(li.recoveries, 0);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
}
END_TEST

/* --------------------------------------------------------------- storm -- */

#define STORM_PROCS 4
#define STORM_PASSES 1500       /* at least, per stormer */
#define STORM_BLOCKS 20         /* at least, blocker's passages */

struct stormer {
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	struct occupancy *occ;
	unsigned serial;
	int blocker;               /* holds for 2 ms at a time until `stop` */
	uint64_t passes, gave_up;
	int err;
};

struct storm {
	volatile int go;           /* all start together, so that they contend */
	volatile int stop;
	struct stormer w[STORM_PROCS + 1];      /* the last one is the blocker */
};

static struct storm *storm;

/* A deadline 0..2 ms away on CLOCK, or already past one time in eight. */
static struct timespec soon(clockid_t clock, unsigned *seed)
{
	unsigned r = (unsigned)rand_r(seed);

	return tk_in(clock, r % 8 == 0 ? -0.001 : (double)(r % 2000) / 1e6);
}

static int storm_acquire(bakery_lock_t *l, unsigned *seed)
{
	struct timespec at;

	switch (rand_r(seed) % 8) {
	case 0:
		return bakery_lock(l);
	case 1: case 2:
		at = soon(CLOCK_REALTIME, seed);
		return bakery_timedlock(l, &at);
	case 3: case 4:
		at = soon(CLOCK_MONOTONIC, seed);
		return bakery_clocklock(l, CLOCK_MONOTONIC, &at);
	case 5:
		at = soon(CLOCK_REALTIME, seed);
		return bakery_clocklock(l, CLOCK_REALTIME, &at);
	default:
		return bakery_trylock(l);
	}
}

/* The blocker's passages: long enough that short deadlines expire behind
 * them, whatever the machine's load does to the others. */
static int block_run(bakery_lock_t *l, struct stormer *w)
{
	while (!CMM_LOAD_SHARED(storm->stop)) {
		int rc = bakery_lock(l);

		if (rc) {
			w->err = rc;
			return 2;
		}
		occupancy_in(w->occ, w->serial, CRASH_OCC_PAUSE);
		tk_sleep_ms(2);
		occupancy_out(w->occ, w->serial);
		uatomic_inc(&w->passes);
		if (bakery_unlock(l))
			return 3;
		tk_sleep_ms(1);
	}
	return 0;
}

static int storm_passes(bakery_lock_t *l, struct stormer *w)
{
	unsigned seed = (unsigned)getpid();

	while (!CMM_LOAD_SHARED(storm->stop)) {
		int rc = storm_acquire(l, &seed);

		if (rc == EBUSY || rc == ETIMEDOUT) {
			w->gave_up++;
			sched_yield();  /* let the ticket ahead of us run */
			continue;
		}
		if (rc) {
			w->err = rc;
			return 2;
		}
		occupancy_pass(w->occ, w->serial, CRASH_OCC_PAUSE);
		uatomic_inc(&w->passes);
		if (bakery_unlock(l))
			return 3;
	}
	return 0;
}

/* Every stormer made STORM_PASSES passages and the blocker STORM_BLOCKS. */
static bool storm_done(void *unused)
{
	for (int k = 0; k <= STORM_PROCS; k++)
		if (uatomic_read(&storm->w[k].passes) < (k < STORM_PROCS ? STORM_PASSES : STORM_BLOCKS))
			return false;
	return true;
}

static int storm_run(void *arg)
{
	struct stormer *w = arg;
	bakery_t *b;
	bakery_lock_t *l;
	int rc;

	if (bakery_open(w->region, BAKERY_NORECOVER, NULL, &b) || bakery_lock_open(b, CRASH_LOCK, w->algo, &l))
		return 1;
	while (!CMM_LOAD_SHARED(storm->go))
		usleep(100);
	rc = w->blocker ? block_run(l, w) : storm_passes(l, w);
	if (rc)
		return rc;
	return bakery_lock_close(l) || bakery_close(b) ? 4 : 0;
}

static void storm_reap(struct scene *s, pid_t pid, const struct stormer *w)
{
	int st = tk_reap(pid, 50);

	ck_assert_msg(st == 0, "%s: stormer %u ended with %d after %llu passes (%s)",
	              bakery_algo_name(s->algo), w->serial, st, (unsigned long long)w->passes,
	              bakery_strerror(w->err));
}

START_TEST(test_abort_storm)
{
	struct bakery_lock_info li;
	struct scene s;
	pid_t pid[STORM_PROCS + 1];
	uint64_t gave_up = 0, passes = 0, t0;

	scene_open(&s, "storm", SCENE_ALGO(_i), 8);
	storm = tk_shared(sizeof(*storm));
	for (int k = 0; k <= STORM_PROCS; k++) {
		struct stormer *w = &storm->w[k];

		snprintf(w->region, sizeof(w->region), "%s", s.region);
		w->algo = s.algo;
		w->occ = &s.sh->occ;
		w->serial = (unsigned)k + 1;
		w->blocker = k == STORM_PROCS;
		pid[k] = crash_fork(storm_run, w, NULL);
	}
	t0 = tk_ns();
	storm->go = 1;
	/* progress: everyone gets through, time and again */
	ck_assert_msg(tk_wait_until(storm_done, NULL, 40), "%s: the storm stalled",
	              bakery_algo_name(s.algo));
	storm->stop = 1;
	for (int k = 0; k <= STORM_PROCS; k++)
		storm_reap(&s, pid[k], &storm->w[k]);
	for (int k = 0; k <= STORM_PROCS; k++) {
		gave_up += storm->w[k].gave_up;
		passes += storm->w[k].passes;
	}
	li = crash_lock_info(s.b, s.l);
	fprintf(stderr, "%s: storm of %d processes, %llu passages (%llu of the blocker) in "
	        "%.2f s, %llu give-ups, %llu aborts after the doorway\n",
	        bakery_algo_name(s.algo), STORM_PROCS, (unsigned long long)passes,
	        (unsigned long long)storm->w[STORM_PROCS].passes, (double)(tk_ns() - t0) / 1e9,
	        (unsigned long long)gave_up, (unsigned long long)li.aborts);
	scene_expect_exclusion(&s, passes);
	ck_assert_uint_eq(li.acquisitions, passes);
	ck_assert_uint_eq(li.recoveries, 0);
	/* the storm did exercise the abort paths */
	ck_assert_msg(li.aborts > 0, "%s: no abort after a doorway in the storm",
	              bakery_algo_name(s.algo));
	ck_assert(li.holder == -1 && li.waiters == 0);
	/* a stormer may have left right after a give-up: a Jayanti passage
	 * is then completed by proxy by the next one who needs its slot, or
	 * by a recovery */
	ck_assert_int_eq(crash_recover_in_child(s.region, NULL), 0);
	for (unsigned slot = 0; slot < 8; slot++) {
		struct bakery_shm_reg *r = regs_of(&s, (int)slot);
		struct bakery_slot_info si;

		bakery_slot_info(s.b, slot, &si);
		ck_assert_msg(regs_idle(&s, (int)slot), "%s: slot %u (state %d) registers not "
		              "idle: choosing %u number %llx proxy %llx", bakery_algo_name(s.algo),
		              slot, si.state, r->choosing, (unsigned long long)r->number,
		              (unsigned long long)r->proxy);
	}
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	munmap(storm, sizeof(*storm));
	scene_close(&s);
}
END_TEST

static Suite *suite(void)
{
	Suite *su = suite_create("crash-abort");
	TCase *tc = tcase_create("abort");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_abort_idle, 0, 4 * CRASH_NALGOS);
	tcase_add_loop_test(tc, test_abort_drift, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_abort_handoff, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_abort_storm, 0, CRASH_NALGOS);
	suite_add_tcase(su, tc);
	return su;
}

int main(void)
{
	return scene_run(suite());
}
