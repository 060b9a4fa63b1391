/* SPDX-License-Identifier: MIT */
/*
 * chaos-nested.c - nested locks across regions, random SIGKILLs: exclusion
 * per lock, no deadlock, no leaked slot.
 *
 * NEST_REGIONS regions of NEST_LOCKS locks each; lock g (in the global
 * order region by region) runs algorithm (g + round) mod 4, so that a round
 * mixes all four and consecutive rounds move them around.  NEST_WORKERS
 * processes each take, per passage, a random non-empty subset of the
 * locks in the global order (nested: all held at once at the innermost
 * point), each with bakery_lock or one time in four a bakery_clocklock of
 * 0-1 ms; a give-up releases what is held, in reverse, and starts over.
 * Each lock has its own kill-tolerant occupancy object, entered once the
 * lock is taken and left before it is released.  Every 2-20 ms one worker
 * is SIGKILLed (possibly holding several locks) and a fresh one started.
 * Then:
 *   - exclusion per lock: no overlap, no lost update;
 *   - no deadlock: after the last kill every live worker makes passages
 *     within WAIT seconds;
 *   - no slot leak: once the workers have left and bakery_recover ran in
 *     every region, no slot is in use;
 *   - per lock, kills holding it <= owner deaths <= kills, EOWNERDEAD
 *     reported <= owner deaths, and the lock ends consistent.
 *
 *   chaos-nested [SECONDS]      (default 1.5 per round, 4 rounds)
 *   BAKERY_CHAOS_SECONDS=N chaos-nested
 *                               soak: rounds (at most ROUND_MAX seconds each)
 *                               for N seconds in all
 *
 * Exit status: 0 pass, 1 fail, 99 hard error.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#include "crashkit.h"

#define NEST_REGIONS 3
#define NEST_LOCKS 2                          /* per region */
#define NLOCKS (NEST_REGIONS * NEST_LOCKS)    /* in the global order */
#define NEST_WORKERS 4
#define NEST_SLOTS 8
#define DEFAULT_SECONDS 1.5
#define DEFAULT_ROUNDS 4
#define ROUND_MAX 30.0
#define PROGRESS_PASSES 20
#define WAIT 20.0

struct worker {
	unsigned serial;
	volatile unsigned held;    /* bit g: inside lock g */
	uint64_t passes, gave_up, owner_dead[NLOCKS];
	int err;
};

struct nest {
	struct occupancy occ[NLOCKS];
	char region[NEST_REGIONS][TK_NAME_SIZE];
	enum bakery_algo algo[NLOCKS];
	volatile int stop;
	struct worker w[CRASH_SERIALS];
};

static struct nest *ns;
static int failed;

static void lock_name(unsigned g, char *buf, size_t size)
{
	snprintf(buf, size, "L%u", g % NEST_LOCKS);
}

/* ------------------------------------------------------------- workers -- */

static int take(bakery_lock_t *l, unsigned *seed)
{
	struct timespec at;

	if (rand_r(seed) % 4)
		return bakery_lock(l);
	at = tk_in(CLOCK_MONOTONIC, (double)(rand_r(seed) % 1000) / 1e6);
	return bakery_clocklock(l, CLOCK_MONOTONIC, &at);
}

/* Leave and release the locks of SET, in reverse order. */
static int release(bakery_lock_t **l, struct worker *w, unsigned set)
{
	for (int g = NLOCKS - 1; g >= 0; g--)
		if (set & (1u << g)) {
			if (w->held & (1u << g)) {
				CMM_STORE_SHARED(w->held, w->held & ~(1u << g));
				occupancy_out(&ns->occ[g], w->serial);
			}
			if (bakery_unlock(l[g]))
				return 4;
		}
	return 0;
}

/* Take lock G of a nested passage: 0, 1 (gave up: start over) or an error. */
static int take_one(bakery_lock_t **l, struct worker *w, unsigned g, unsigned *seed)
{
	int rc = take(l[g], seed);

	if (rc == ETIMEDOUT || rc == BAKERY_ESLOTS || rc == EAGAIN) {
		uatomic_inc(&w->gave_up);
		return 1;
	}
	if (rc != 0 && rc != EOWNERDEAD) {
		w->err = rc;
		return 2;
	}
	if (rc == EOWNERDEAD) {
		uatomic_inc(&w->owner_dead[g]);
		if (bakery_consistent(l[g]))
			return 3;
	}
	occupancy_in(&ns->occ[g], w->serial, CRASH_OCC_PAUSE);
	CMM_STORE_SHARED(w->held, w->held | (1u << g));
	return 0;
}

/* One nested passage through SET (retried from the start on a give-up). */
static int passage(bakery_lock_t **l, struct worker *w, unsigned set, unsigned *seed)
{
	for (;;) {
		unsigned taken = 0;
		int rc = 0;

		for (unsigned g = 0; g < NLOCKS && rc == 0; g++)
			if (set & (1u << g) && (rc = take_one(l, w, g, seed)) == 0)
				taken |= 1u << g;
		if (rc > 1)
			return rc;
		for (unsigned i = 0; i < 200; i++)
			caa_cpu_relax();
		if ((rc = release(l, w, taken)) != 0)
			return rc;
		if (taken == set) {
			uatomic_inc(&w->passes);
			return 0;
		}
		if (CMM_LOAD_SHARED(ns->stop))
			return -1;
		usleep(100);    /* gave up: dead slots are being recovered */
	}
}

static int worker_run(void *arg)
{
	struct worker *w = arg;
	unsigned seed = (unsigned)getpid();
	bakery_lock_t *l[NLOCKS];
	bakery_t *b[NEST_REGIONS];
	char name[8];
	int rc = 0;

	for (unsigned r = 0; r < NEST_REGIONS; r++)
		if (bakery_open(ns->region[r], BAKERY_NORECOVER, NULL, &b[r]))
			return 1;
	for (unsigned g = 0; g < NLOCKS; g++) {
		lock_name(g, name, sizeof(name));
		if (bakery_lock_open(b[g / NEST_LOCKS], name, ns->algo[g], &l[g]))
			return 1;
	}
	while (!CMM_LOAD_SHARED(ns->stop) && rc == 0) {
		unsigned set = 1u + (unsigned)rand_r(&seed) % ((1u << NLOCKS) - 1);
		rc = passage(l, w, set, &seed);
		for (unsigned i = (unsigned)rand_r(&seed) % 400; i; i--)
			caa_cpu_relax();
	}
	if (rc > 0)
		return rc;
	for (unsigned g = 0; g < NLOCKS; g++)
		if (bakery_lock_close(l[g]))
			return 5;
	for (unsigned r = 0; r < NEST_REGIONS; r++)
		if (bakery_close(b[r]))
			return 5;
	return 0;
}

/* -------------------------------------------------------------- rounds -- */

struct live {
	pid_t pid;
	unsigned serial;
};

struct tally {
	unsigned kills, holding_some, inside[NLOCKS];
};

static void fail(const char *what, long long a, long long c)
{
	fprintf(stderr, "FAIL nested: %s (%lld, %lld)\n", what, a, c);
	failed = 1;
}

static void spawn(struct live *lv, unsigned *next_serial)
{
	lv->serial = (*next_serial)++;
	ns->w[lv->serial].serial = lv->serial;
	lv->pid = crash_fork(worker_run, &ns->w[lv->serial], NULL);
}

static bool kill_one(struct live *lv, unsigned *next_serial, struct tally *t)
{
	struct live *v = &lv[rand() % NEST_WORKERS];
	unsigned held;
	int st;

	if (*next_serial >= CRASH_SERIALS)
		return false;
	for (unsigned g = 0; g < NLOCKS; g++)
		occupancy_doom(&ns->occ[g], v->serial);
	kill(v->pid, SIGKILL);
	st = tk_reap(v->pid, WAIT);
	if (st != CRASH_SIGKILLED)
		fail("a worker ended otherwise than by the kill", st, ns->w[v->serial].err);
	held = ns->w[v->serial].held;
	t->kills++;
	t->holding_some += held != 0;
	for (unsigned g = 0; g < NLOCKS; g++)
		t->inside[g] += (held >> g) & 1;
	spawn(v, next_serial);
	return true;
}

static bool progress(const struct live *lv)
{
	uint64_t from[NEST_WORKERS], end = tk_ns() + (uint64_t)(WAIT * 1e9);
	int k;

	for (k = 0; k < NEST_WORKERS; k++)
		from[k] = uatomic_read(&ns->w[lv[k].serial].passes);
	for (k = 0; k < NEST_WORKERS && tk_ns() < end;)
		if (uatomic_read(&ns->w[lv[k].serial].passes) >= from[k] + PROGRESS_PASSES)
			k++;
		else
			usleep(1000);
	return k == NEST_WORKERS;
}

static struct {
	unsigned rounds, kills, holding_some, locks_held;
	uint64_t passes, gave_up, owner_dead, violations;
} sum;

static void open_all(bakery_t **b, bakery_lock_t **l)
{
	char name[8];
	int err = 0;

	for (unsigned r = 0; r < NEST_REGIONS && !err; r++) {
		tk_name(ns->region[r], TK_NAME_SIZE, "nested");
		err = crash_create(ns->region[r], NEST_SLOTS, &b[r]);
	}
	for (unsigned g = 0; g < NLOCKS && !err; g++) {
		lock_name(g, name, sizeof(name));
		err = bakery_lock_open(b[g / NEST_LOCKS], name, ns->algo[g], &l[g]);
	}
	if (err) {
		fprintf(stderr, "nested: %s\n", bakery_strerror(err));
		exit(99);
	}
}

/* The checks of one lock once the workers are gone. */
static void check_lock(bakery_t *b, bakery_lock_t *l, unsigned g, const struct tally *t,
                       unsigned serials)
{
	struct bakery_lock_info li = crash_lock_info(b, l);
	struct occupancy *o = &ns->occ[g];
	uint64_t owner_dead = 0;

	for (unsigned s = 1; s < serials; s++)
		owner_dead += ns->w[s].owner_dead[g];
	sum.owner_dead += owner_dead;
	sum.violations += o->violations;
	if (o->violations)
		fail("overlaps in the critical section of lock", g, (long long)o->violations);
	if (o->counter < o->entries || o->counter > o->entries + t->kills)
		fail("lost updates", (long long)o->counter, (long long)o->entries);
	if (t->inside[g] > li.owner_deaths || li.owner_deaths > t->kills)
		fail("owner deaths out of bounds", (long long)li.owner_deaths, t->inside[g]);
	if (owner_dead > li.owner_deaths)
		fail("more EOWNERDEAD than owner deaths", (long long)owner_dead,
		     (long long)li.owner_deaths);
	if (li.owner_dead || li.not_recoverable)
		fail("a lock ended inconsistent", g, li.owner_dead);
}

static void run_round(unsigned round, double seconds)
{
	struct live lv[NEST_WORKERS];
	struct tally t = { 0 };
	unsigned next_serial = 1, reclaimed;
	bakery_t *b[NEST_REGIONS];
	bakery_lock_t *l[NLOCKS];
	uint64_t end, passes = 0, gave_up = 0;

	memset(ns, 0, sizeof(*ns));
	for (unsigned g = 0; g < NLOCKS; g++)
		ns->algo[g] = crash_algos[(g + round) % CRASH_NALGOS];
	open_all(b, l);
	for (int k = 0; k < NEST_WORKERS; k++)
		spawn(&lv[k], &next_serial);
	end = tk_ns() + (uint64_t)(seconds * 1e9);
	while (tk_ns() < end && !failed) {
		tk_sleep_ms(2 + rand() % 18);
		if (!kill_one(lv, &next_serial, &t))
			break;
	}
	if (!progress(lv))
		fail("no progress after the last kill (deadlock?)", t.kills, 0);
	CMM_STORE_SHARED(ns->stop, 1);
	for (int k = 0; k < NEST_WORKERS; k++) {
		int st = tk_reap(lv[k].pid, WAIT);
		if (st != 0)
			fail("a worker did not leave cleanly", st, ns->w[lv[k].serial].err);
	}
	for (unsigned r = 0; r < NEST_REGIONS; r++) {
		if (crash_recover_in_child(ns->region[r], &reclaimed))
			fail("bakery_recover failed", r, 0);
		if (crash_slots_used(b[r]) != 0)
			fail("slots left in use after recovery", r, crash_slots_used(b[r]));
	}
	for (unsigned g = 0; g < NLOCKS; g++)
		check_lock(b[g / NEST_LOCKS], l[g], g, &t, next_serial);
	for (unsigned s = 1; s < next_serial; s++) {
		passes += ns->w[s].passes;
		gave_up += ns->w[s].gave_up;
	}
	printf("round %u (%s first) %4.1f s  kills %4u (holding %3u)  nested passages %6llu  "
	       "give-ups %5llu: %s\n", round + 1, bakery_algo_name(ns->algo[0]), seconds, t.kills,
	       t.holding_some, (unsigned long long)passes, (unsigned long long)gave_up,
	       failed ? "FAIL" : "ok");
	sum.rounds++;
	sum.kills += t.kills;
	sum.holding_some += t.holding_some;
	for (unsigned g = 0; g < NLOCKS; g++)
		sum.locks_held += t.inside[g];
	sum.passes += passes;
	sum.gave_up += gave_up;
	for (unsigned g = 0; g < NLOCKS; g++)
		bakery_lock_close(l[g]);
	for (unsigned r = 0; r < NEST_REGIONS; r++) {
		bakery_close(b[r]);
		bakery_unlink(ns->region[r]);
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : DEFAULT_SECONDS;
	uint64_t end;

	if (seconds <= 0 || seconds > 600) {
		fprintf(stderr, "usage: %s [SECONDS per round]\n", argv[0]);
		return 99;
	}
	srand((unsigned)getpid());
	ns = tk_shared(sizeof(*ns));
	if (crash_chaos_soak())
		seconds = crash_chaos_seconds(0) / DEFAULT_ROUNDS < ROUND_MAX ?
		          crash_chaos_seconds(0) / DEFAULT_ROUNDS : ROUND_MAX;
	end = tk_ns() + (uint64_t)(crash_chaos_seconds(0) * 1e9);
	printf("chaos-nested: %d workers, %d regions of %d locks taken in a global order, a "
	       "SIGKILL every 2-20 ms\n", NEST_WORKERS, NEST_REGIONS, NEST_LOCKS);
	for (unsigned r = 0; !failed && (r < DEFAULT_ROUNDS || (crash_chaos_soak() && tk_ns() < end));
	     r++)
		run_round(r, seconds);
	printf("chaos-nested total: %u configurations, %u SIGKILLs (%u holding, %u locks held), "
	       "%llu nested passages, %llu give-ups, %llu EOWNERDEAD, %llu violations: %s\n",
	       sum.rounds, sum.kills, sum.holding_some, sum.locks_held, (unsigned long long)sum.passes,
	       (unsigned long long)sum.gave_up, (unsigned long long)sum.owner_dead,
	       (unsigned long long)sum.violations, failed ? "FAIL" : "ok");
	return failed ? 1 : 0;
}
