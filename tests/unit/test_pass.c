/* SPDX-License-Identifier: MIT */
/*
 * test_pass.c - a waiter that does not take its turn is passed (lib/pass.c),
 * for every algorithm (Lamport, Boulangerie, Black-White, and Jayanti, whose
 * passed waiter's passage is aborted on its behalf and completed by proxy).
 *
 *   - a stopped waiter: a waiter (A) queues behind a holder, falls asleep
 *     and is stopped (SIGSTOP); a later waiter (B) queues; the holder lets
 *     go.  B must get the lock, not before the grace G (it waits for A's
 *     turn to pass unused) and within G plus a generous margin over the
 *     hand-over time measured in the same run without a stopped waiter.
 *     The pass is counted.  Continued (SIGCONT), A gets the lock too.
 *     Without passing, B would wait as long as A stays stopped.
 *   - the same with the waiter behind parked behind the stopped one (its
 *     predecessor): it passes it from its park.
 *   - a trylock is not told EBUSY for ever when the only one ahead of it is
 *     a stopped waiter: it passes it after G (by its own watch, kept
 *     between its calls), and its first call, before G, is EBUSY; a watch
 *     left unused for a while is not taken up again by a later trylock
 *     that meets another passage with the same slot and ticket.
 *   - a passer that dies right after winning the pass word, or after its
 *     step on the passed one's registers: a later waiter proves its death,
 *     the recovery finishes the pass (the test build's crash points), and
 *     the passed one, continued, gets the lock too.
 *   - BAKERY_PASS_GRACE_MS=0 turns passing off: B then times out.
 *   - a storm: workers loop lock/unlock while one at a time is stopped; each
 *     time the stopped one is passable (its pass word says WAITING) or out
 *     of the line, the others must go on acquiring while it stays stopped
 *     (elsewhere, e.g. holding the lock, it holds them up by contract);
 *     every third such stopped worker is killed instead of continued and
 *     replaced; at the end all finish, and at least one stop was of a
 *     passable worker.  Every holder swaps its id into an occupancy word on entry:
 *     never two holders.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/uatomic.h>

#include "shm_layout.h"
#include "handle.h"
#include "unit.h"

#define G_S (BAKERY_PASS_GRACE_DEFAULT_MS / 1000.0)
#define MAX_WORKERS 8

struct arena {
	char name[TK_NAME_SIZE];
	enum bakery_algo algo;
	unsigned holder;                /* occupancy: 1 + id of the holder, 0 = free */
	unsigned overlaps;
	uint64_t entries;               /* critical sections, all processes */
	uint64_t acquired_ns[MAX_WORKERS]; /* CLOCK_MONOTONIC, by id */
	int stop;                       /* storm: workers leave */
	int grace_off;                  /* children set BAKERY_PASS_GRACE_MS=0 */
	int grace_long;                 /* the next waiter never passes (10 min) */
	int park;                       /* waiters park behind their predecessor */
	char crash_at[32];              /* the next waiter's BAKERY_CRASH_AT */
	double timeout_s;               /* a waiter's deadline, 0 = none */
};

struct worker {
	struct arena *a;
	unsigned id;
};

static void occupy(struct arena *a, unsigned id)
{
	if (uatomic_xchg(&a->holder, id + 1) != 0)
		uatomic_inc(&a->overlaps);
	uatomic_inc(&a->entries);
	if (uatomic_xchg(&a->holder, 0) != id + 1)
		uatomic_inc(&a->overlaps);
}

static int open_line(struct arena *a, bakery_t **b, bakery_lock_t **l)
{
	if (a->grace_off)
		setenv("BAKERY_PASS_GRACE_MS", "0", 1);
	if (a->grace_long)
		setenv("BAKERY_PASS_GRACE_MS", "600000", 1);
	/* the test build parks a waiter with this many tickets ahead */
	if (a->park)
		setenv("BAKERY_TEST_PARK_AHEAD", "1", 1);
	return bakery_open(a->name, 0, NULL, b) || bakery_lock_open(*b, "line", a->algo, l);
}

/* Child: take the lock once (with the arena's deadline), note when. */
static int waiter_once(void *arg)
{
	struct worker *w = arg;
	struct arena *a = w->a;
	bakery_lock_t *l;
	bakery_t *b;
	int rc;

	if (a->crash_at[0])
		setenv("BAKERY_CRASH_AT", a->crash_at, 1);
	if (open_line(a, &b, &l))
		return 100;
	if (a->timeout_s > 0) {
		struct timespec at = tk_in(CLOCK_MONOTONIC, a->timeout_s);

		rc = bakery_clocklock(l, CLOCK_MONOTONIC, &at);
	} else {
		rc = bakery_lock(l);
	}
	if (rc)
		return rc == ETIMEDOUT ? 101 : 102;
	a->acquired_ns[w->id] = tk_ns();
	occupy(a, w->id);
	return bakery_unlock(l) ? 103 : 0;
}

/* Fork waiter ID and wait until it is asleep in line, COUNT waiting. */
static pid_t queue_waiter(struct arena *a, struct worker *w, unsigned id, bakery_t *b,
                          unsigned count)
{
	struct unit_queued q = { b, 0, count };

	*w = (struct worker){ a, id };
	q.pid = tk_fork(waiter_once, w);
	ck_assert_msg(tk_wait_until(unit_queued_asleep, &q, 30), "waiter %u never slept in line", id);
	tk_sleep_ms(50);
	return q.pid;
}

static void stop_and_check(pid_t pid)
{
	int st;

	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
	ck_assert(WIFSTOPPED(st));
}

static uint64_t lock_passes(bakery_t *b)
{
	struct bakery_lock_info li;

	ck_assert_int_eq(bakery_lock_info(b, 0, &li), 0);
	return li.passes;
}

static uint64_t lock_aborts(bakery_t *b)
{
	struct bakery_lock_info li;

	ck_assert_int_eq(bakery_lock_info(b, 0, &li), 0);
	return li.aborts;
}

struct scene {
	struct arena *a;
	bakery_t *b;
	bakery_lock_t *l;
	struct unit_holder h;
	struct worker w[MAX_WORKERS];
};

static void scene_open(struct scene *s, enum bakery_algo algo, const char *tag)
{
	s->a = tk_shared(sizeof(*s->a));
	s->a->algo = algo;
	s->b = unit_region(s->a->name, tag, 8, 2);
	s->l = unit_lock(s->b, "line", algo);
}

static void scene_close(struct scene *s)
{
	ck_assert_uint_eq(s->a->overlaps, 0);
	bakery_lock_close(s->l);
	bakery_close(s->b);
	bakery_unlink(s->a->name);
}

/* Seconds from the holder's release to waiter ID's acquisition. */
static double after_release(struct scene *s, uint64_t released, unsigned id)
{
	return (double)(s->a->acquired_ns[id] - released) / 1e9;
}

/* A holder; waiter A queues and is stopped in line; waiter B queues behind
 * it; the holder leaves.  B must pass A after the grace, within LIMIT_S
 * seconds: A has not entered, one pass is counted.  A's pid in *A (still
 * stopped); returns the time from the release to B's entry. */
static double stopped_one_passed(struct scene *s, pid_t *a, double limit_s)
{
	uint64_t released;
	double took;
	pid_t bw;

	unit_holder_start(&s->h, s->l);
	*a = queue_waiter(s->a, &s->w[1], 1, s->b, 1);
	stop_and_check(*a);
	bw = queue_waiter(s->a, &s->w[2], 2, s->b, 2);
	released = tk_ns();
	unit_holder_stop(&s->h);
	ck_assert_int_eq(tk_reap(bw, limit_s), 0);
	took = after_release(s, released, 2);
	ck_assert_msg(took >= G_S, "B passed the stopped waiter %.3f s after the release, "
	              "before the grace %.3f s", took, G_S);
	ck_assert_uint_eq(lock_passes(s->b), 1);
	ck_assert_uint_eq(s->a->acquired_ns[1], 0);
	return took;
}

START_TEST(stopped_waiter_is_passed)
{
	struct scene s;
	pid_t a, base;
	uint64_t released;
	double baseline, took;

	scene_open(&s, (enum bakery_algo)_i, "pass");
	/* the baseline: one hand-over to a sleeping waiter, in this run */
	unit_holder_start(&s.h, s.l);
	base = queue_waiter(s.a, &s.w[0], 0, s.b, 1);
	released = tk_ns();
	unit_holder_stop(&s.h);
	ck_assert_int_eq(tk_reap(base, 30), 0);
	baseline = after_release(&s, released, 0);

	took = stopped_one_passed(&s, &a, G_S + 30 + 100 * baseline);
	ck_assert_msg(took < G_S + 3 + 100 * baseline, "B got the lock %.3f s after the release "
	              "(grace %.3f s, hand-over baseline %.6f s)", took, G_S, baseline);
	/* continued, the passed waiter takes a new place and the lock */
	ck_assert_int_eq(kill(a, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(a, 30), 0);
	ck_assert(s.a->acquired_ns[1] > s.a->acquired_ns[2]);
	ck_assert_uint_eq(s.a->entries, 3);
	/* a pass is not a give-up of the passed one's */
	ck_assert_uint_eq(lock_aborts(s.b), 0);
	fprintf(stderr, "%s: B passed the stopped waiter %.3f s after the release "
	        "(grace %.3f s, hand-over %.6f s)\n", bakery_algo_name(s.a->algo), took, G_S, baseline);
	scene_close(&s);
}
END_TEST

/* The same with the waiter behind parked behind the stopped one, its
 * predecessor (one sleep on its line: wait.c's park_behind, where the
 * waiter behind watches and passes it too), instead of waiting on it in
 * its algorithm's loop. */
START_TEST(parked_waiter_passes_a_stopped_one)
{
	struct scene s;
	pid_t a;

	scene_open(&s, (enum bakery_algo)_i, "passpark");
	s.a->park = 1;
	(void)stopped_one_passed(&s, &a, G_S + 30);
	ck_assert_int_eq(kill(a, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(a, 30), 0);
	ck_assert_uint_eq(s.a->entries, 2);
	scene_close(&s);
}
END_TEST

/* A passer dies right after winning the pass word (the test build's crash
 * point pass-won): the passed, stopped waiter's ticket is still in place
 * and its word says PASSING.  A third waiter proves the passer's death and
 * the recovery finishes the pass: it gets the lock, and so does the passed
 * one once continued. */
static void passer_dies_at(enum bakery_algo algo, const char *point)
{
	struct scene s;
	pid_t a, passer, c;

	scene_open(&s, algo, "passdie");
	unit_holder_start(&s.h, s.l);
	a = queue_waiter(s.a, &s.w[1], 1, s.b, 1);
	stop_and_check(a);
	snprintf(s.a->crash_at, sizeof(s.a->crash_at), "%s", point);
	passer = queue_waiter(s.a, &s.w[2], 2, s.b, 2);
	s.a->crash_at[0] = '\0';
	s.a->grace_long = 1;            /* the passer must be the one that dies */
	c = queue_waiter(s.a, &s.w[3], 3, s.b, 3);
	unit_holder_stop(&s.h);
	ck_assert_int_eq(tk_reap(passer, G_S + 30), 128 + SIGKILL);
	ck_assert_int_eq(tk_reap(c, G_S + 30), 0);
	ck_assert_uint_eq(lock_passes(s.b), 1);
	ck_assert_uint_eq(s.a->acquired_ns[1], 0);
	ck_assert_int_eq(kill(a, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(a, 30), 0);
	ck_assert_uint_eq(s.a->entries, 2);
	scene_close(&s);
}

START_TEST(passer_dies_mid_pass)
{
	passer_dies_at((enum bakery_algo)_i, "pass-won");
}
END_TEST

/* The same, the passer dying after its step on the passed one's registers
 * and before CLEARED (crash point pass-cleared): the recovery redoes the
 * step (Jayanti: its abort on the waiter's behalf, whose proxy passage may
 * be under way or complete already), which must change nothing. */
START_TEST(passer_dies_before_cleared)
{
	passer_dies_at((enum bakery_algo)_i, "pass-cleared");
}
END_TEST

/* The only one ahead is a stopped waiter whose turn has come: the
 * trylocks of this thread, every 10 ms, are EBUSY (the first at once) until
 * they pass it, not before the grace G (seconds), and then get the lock. */
static void trylock_until_passed(struct scene *s, double g)
{
	double started = tk_now(CLOCK_MONOTONIC), took = -1;
	int rc;

	ck_assert_int_eq(bakery_trylock(s->l), EBUSY);
	while (tk_now(CLOCK_MONOTONIC) - started < g + 30) {
		rc = bakery_trylock(s->l);
		if (rc == 0) {
			took = tk_now(CLOCK_MONOTONIC) - started;
			occupy(s->a, 0);
			ck_assert_int_eq(bakery_unlock(s->l), 0);
			break;
		}
		ck_assert_int_eq(rc, EBUSY);
		tk_sleep_ms(10);
	}
	ck_assert_msg(took >= g, "the trylock got the lock after %.3f s (grace %.3f s)", took, g);
	ck_assert_uint_eq(lock_passes(s->b), 1);
}

START_TEST(trylock_passes_a_stopped_waiter)
{
	struct scene s;
	pid_t a;

	scene_open(&s, (enum bakery_algo)_i, "passtry");
	unit_holder_start(&s.h, s.l);
	a = queue_waiter(s.a, &s.w[1], 1, s.b, 1);
	stop_and_check(a);
	unit_holder_stop(&s.h);
	trylock_until_passed(&s, G_S);
	ck_assert_int_eq(kill(a, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(a, 30), 0);
	ck_assert_uint_eq(s.a->entries, 2);
	scene_close(&s);
}
END_TEST

/*
 * A trylock's watch does not outlive its use.  A trylock watches a stopped
 * Black-White waiter A whose turn came, long enough to note its ticket, not
 * long enough to pass it; A goes on.  Later a waiter in the same slot with
 * the same ticket (Black-White's numbers are small and come again) is
 * stopped as its turn comes.  The trylock, back more than the grace after
 * it noted A's ticket, must not take this turn for A's and pass it at once:
 * its first call is EBUSY, and it passes only after the grace.  (A longer
 * grace than the default, for margins on a loaded machine.)
 */
#define LATE_GRACE_MS 2000

/* The one waiter of the lock: its slot and its ticket register. */
static void waiter_ticket(bakery_t *b, unsigned *slot, uint64_t *ticket)
{
	for (unsigned k = 0; k < 8; k++) {
		struct bakery_shm_reg *r = reg_of(b, 0, k);

		if (CMM_LOAD_SHARED(r->stage) == BAKERY_PASS_WAITING) {
			*slot = k;
			*ticket = CMM_LOAD_SHARED(r->number);
			return;
		}
	}
	ck_abort_msg("no waiter in line");
}

START_TEST(trylock_watch_does_not_outlive_its_use)
{
	const double g = LATE_GRACE_MS / 1000.0;
	unsigned slot, again_slot;
	uint64_t ticket, again_ticket;
	struct scene s;
	double noted;
	pid_t a;

	setenv("BAKERY_PASS_GRACE_MS", "2000", 1);      /* LATE_GRACE_MS, here and in children */
	scene_open(&s, BAKERY_ALGO_BLACK_WHITE, "passlate");
	unit_holder_start(&s.h, s.l);
	a = queue_waiter(s.a, &s.w[1], 1, s.b, 1);
	stop_and_check(a);
	waiter_ticket(s.b, &slot, &ticket);
	unit_holder_stop(&s.h);
	/* half the grace: past the quarter after which the watch notes the
	 * ticket, well before it would pass */
	noted = tk_now(CLOCK_MONOTONIC);
	while (tk_now(CLOCK_MONOTONIC) - noted < g / 2) {
		ck_assert_int_eq(bakery_trylock(s.l), EBUSY);
		tk_sleep_ms(10);
	}
	ck_assert_uint_eq(lock_passes(s.b), 0);
	ck_assert_int_eq(kill(a, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(a, 30), 0);
	/* an exit sets the other colour than the leaver's: one more passage
	 * brings back A's */
	ck_assert_int_eq(bakery_lock(s.l), 0);
	ck_assert_int_eq(bakery_unlock(s.l), 0);
	tk_sleep_ms(1000 * g);

	/* the same scene again */
	unit_holder_start(&s.h, s.l);
	a = queue_waiter(s.a, &s.w[2], 2, s.b, 1);
	stop_and_check(a);
	waiter_ticket(s.b, &again_slot, &again_ticket);
	ck_assert_uint_eq(again_slot, slot);
	ck_assert_msg(again_ticket == ticket, "ticket %#llx, A's was %#llx",
	              (unsigned long long)again_ticket, (unsigned long long)ticket);
	unit_holder_stop(&s.h);
	trylock_until_passed(&s, g);    /* not at once, on A's account */
	ck_assert_int_eq(kill(a, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(a, 30), 0);
	scene_close(&s);
}
END_TEST

START_TEST(grace_zero_turns_passing_off)
{
	struct scene s;
	pid_t a, bw;

	scene_open(&s, (enum bakery_algo)_i, "passoff");
	s.a->grace_off = 1;
	unit_holder_start(&s.h, s.l);
	a = queue_waiter(s.a, &s.w[1], 1, s.b, 1);
	stop_and_check(a);
	s.a->timeout_s = 4 * G_S + 1;
	bw = queue_waiter(s.a, &s.w[2], 2, s.b, 2);
	unit_holder_stop(&s.h);
	ck_assert_int_eq(tk_reap(bw, 60), 101);                /* ETIMEDOUT */
	ck_assert_uint_eq(lock_passes(s.b), 0);
	ck_assert_int_eq(kill(a, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(a, 30), 0);
	scene_close(&s);
}
END_TEST

/* ---------------------------------------------------------------- storm -- */

#define STORM_WORKERS 4
#define STORM_ROUNDS 6

static int storm_worker(void *arg)
{
	struct worker *w = arg;
	struct arena *a = w->a;
	bakery_lock_t *l;
	bakery_t *b;

	if (open_line(a, &b, &l))
		return 100;
	for (unsigned n = 0; !uatomic_read(&a->stop); n++) {
		struct timespec at = tk_in(CLOCK_MONOTONIC, 120);
		int rc = n % 2 ? bakery_lock(l) : bakery_clocklock(l, CLOCK_MONOTONIC, &at);

		if (rc)
			return 101;
		occupy(a, w->id);
		if (bakery_unlock(l))
			return 102;
	}
	return 0;
}

/* Can the stopped worker PID hold up the others?  Not if it is passable
 * (its pass word says WAITING), out of the line (no ticket, not choosing),
 * or its passage is left to a proxy (Jayanti: the others complete it).
 * Otherwise it is where the contract says it is not passed (bakery.h): the
 * holder, from its entry to its release's clearing of its ticket, or a
 * waiter in its doorway or in the few instructions after it and after its
 * wait.  */
static bool cannot_block(bakery_t *b, pid_t pid)
{
	for (unsigned k = 0; k < 8; k++) {
		struct bakery_shm_reg *r = reg_of(b, 0, k);
		uint64_t ticket = CMM_LOAD_SHARED(r->number) & ~(UINT64_C(1) << 63);

		if (CMM_LOAD_SHARED(b->slots[k].pid) != pid)
			continue;
		return CMM_LOAD_SHARED(r->pass) == 1 /* WAITING */ ||
		       (!ticket && !(CMM_LOAD_SHARED(r->choosing) & 1)) ||
		       CMM_LOAD_SHARED(r->proxy);
	}
	return true;
}

/* What the line looks like (a failure's diagnosis). */
static void dump_line(bakery_t *b)
{
	fprintf(stderr, "color word %#x, passes %llu\n", CMM_LOAD_SHARED(b->locks[0].color),
	        (unsigned long long)CMM_LOAD_SHARED(b->locks[0].passes));
	for (unsigned k = 0; k < 8; k++) {
		struct bakery_shm_reg *r = reg_of(b, 0, k);

		fprintf(stderr, "slot %u pid %d: stage %u choosing %u number %#llx pass %#x\n", k,
		        (int)CMM_LOAD_SHARED(b->slots[k].pid), CMM_LOAD_SHARED(r->stage),
		        CMM_LOAD_SHARED(r->choosing), (unsigned long long)CMM_LOAD_SHARED(r->number),
		        CMM_LOAD_SHARED(r->pass));
	}
}

struct progress {
	struct arena *a;
	uint64_t target;
};

static bool progressed(void *arg)
{
	struct progress *p = arg;

	return uatomic_read(&p->a->entries) >= p->target;
}

START_TEST(storm_of_stops)
{
	struct scene s;
	struct worker w[STORM_WORKERS + STORM_ROUNDS];
	pid_t pid[STORM_WORKERS];
	unsigned waited = 0, killed = 0;

	scene_open(&s, (enum bakery_algo)_i, "storm");
	srand((unsigned)getpid());
	for (unsigned k = 0; k < STORM_WORKERS; k++) {
		w[k] = (struct worker){ s.a, k };
		pid[k] = tk_fork(storm_worker, &w[k]);
	}
	for (unsigned r = 0; r < STORM_ROUNDS; r++) {
		unsigned k = (unsigned)rand() % STORM_WORKERS;
		struct progress p = { s.a, 0 };

		tk_sleep_ms(20 + rand() % 80);
		stop_and_check(pid[k]);
		if (cannot_block(s.b, pid[k])) {
			bool went_on;

			p.target = uatomic_read(&s.a->entries) + 2 * STORM_WORKERS;
			went_on = tk_wait_until(progressed, &p, G_S + 60);
			if (!went_on) {
				fprintf(stderr, "stopped: pid %d\n", (int)pid[k]);
				dump_line(s.b);
			}
			ck_assert_msg(went_on, "round %u: no progress while worker %u was stopped",
			              r, k);
			waited++;
			/* every third such round it dies instead (not holding
			 * the lock, so the occupancy word stays exact): a
			 * waiter, maybe passed or passing, whose death the
			 * others prove and recover; a new worker takes over */
			if (r % 3 == 2) {
				ck_assert(tk_kill(pid[k]));
				w[STORM_WORKERS + r] = (struct worker){ s.a, STORM_WORKERS + r };
				pid[k] = tk_fork(storm_worker, &w[STORM_WORKERS + r]);
				killed++;
				continue;
			}
		}
		ck_assert_int_eq(kill(pid[k], SIGCONT), 0);
	}
	uatomic_set(&s.a->stop, 1);
	for (unsigned k = 0; k < STORM_WORKERS; k++)
		ck_assert_int_eq(tk_reap(pid[k], 60), 0);
	/* a storm whose every stop caught a worker where it may hold the
	 * line up tested nothing: a stopped worker is nearly always asleep
	 * in line, i.e. passable */
	ck_assert_msg(waited > 0, "none of the %u stopped workers was passable", STORM_ROUNDS);
	fprintf(stderr, "%s storm: %llu entries, %llu passes, %u of %u stops waited out, "
	        "%u of them killed\n", bakery_algo_name(s.a->algo),
	        (unsigned long long)s.a->entries, (unsigned long long)lock_passes(s.b), waited,
	        STORM_ROUNDS, killed);
	scene_close(&s);
}
END_TEST

static Suite *pass_suite(void)
{
	Suite *s = suite_create("pass");
	TCase *tc = tcase_create("pass");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, stopped_waiter_is_passed, BAKERY_ALGO_LAMPORT, BAKERY_ALGO_COUNT);
	tcase_add_loop_test(tc, parked_waiter_passes_a_stopped_one, BAKERY_ALGO_LAMPORT,
	                    BAKERY_ALGO_COUNT);
	tcase_add_loop_test(tc, passer_dies_mid_pass, BAKERY_ALGO_LAMPORT, BAKERY_ALGO_COUNT);
	tcase_add_loop_test(tc, passer_dies_before_cleared, BAKERY_ALGO_LAMPORT, BAKERY_ALGO_COUNT);
	tcase_add_loop_test(tc, trylock_passes_a_stopped_waiter, BAKERY_ALGO_LAMPORT,
	                    BAKERY_ALGO_COUNT);
	tcase_add_test(tc, trylock_watch_does_not_outlive_its_use);
	tcase_add_loop_test(tc, grace_zero_turns_passing_off, BAKERY_ALGO_LAMPORT,
	                    BAKERY_ALGO_LAMPORT + 1);
	tcase_add_loop_test(tc, storm_of_stops, BAKERY_ALGO_LAMPORT, BAKERY_ALGO_COUNT);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(pass_suite());
}
