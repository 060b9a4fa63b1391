/* SPDX-License-Identifier: MIT */
/*
 * crash-chaos.c - random SIGKILLs, SIGSTOPs and respawns against one lock,
 * for every algorithm, in a region with few slots (test build: its
 * assertions on the algorithms' bounds are on).
 *
 * CHAOS_WORKERS processes hammer one lock in a region of CHAOS_SLOTS slots
 * (bakery_lock, and one passage in four a bakery_clocklock with a deadline
 * of 0-1 ms, so that aborts meet deaths); every 2-20 ms the test either
 * SIGKILLs one at random and starts a fresh one, or (one time in three)
 * SIGSTOPs one that runs, for 1-150 ms.  A stopped worker is continued at
 * the first tick past its time, so within STOP_MAX_MS (bounded by the tick
 * and the reaping of a kill); a stopped holder stalls the line, which is
 * not a hang, and a stopped waiter is passed once its turn has come and
 * stayed untaken for the grace, CHAOS_GRACE_MS here (shorter than most
 * stops, so that passes, kills of passers and of the passed, and aborts
 * meet).  A stopped worker may also be killed.  A
 * fresh worker may find no free slot while dead ones still await recovery
 * (BAKERY_ESLOTS): it retries, and the retries are counted.  Then, once
 * every worker has been continued:
 *   - exclusion: no overlap seen by the kill-tolerant occupancy object, and
 *     no lost update;
 *   - progress (no hang): every worker alive after the last kill makes
 *     passages within WAIT seconds;
 *   - no slot leak: once the workers have left and bakery_recover ran, no
 *     slot is in use;
 *   - owner deaths: kills inside the critical section <= owner deaths
 *     recorded by the lock <= kills, and EOWNERDEAD reported by the workers
 *     <= owner deaths; the lock ends consistent.
 * Prints kills, stops, acquisitions, EOWNERDEAD, waiters passed (the
 * lock's count; not asserted: how many stops catch a waiter in line for
 * longer than the grace varies a lot from run to run, and most stops of a
 * Jayanti worker find it outside the line), violations per algorithm.
 *
 *   crash-chaos [SECONDS]       (default 5 per algorithm; CHAOS_SECONDS too)
 *   BAKERY_CHAOS_SECONDS=N crash-chaos
 *                               soak: rounds of every algorithm (at most
 *                               ROUND_MAX seconds each) for N seconds in all
 *
 * Exit status: 0 pass, 1 fail, 99 hard error.
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
#include <urcu/uatomic.h>

#include "crashkit.h"

#define CHAOS_SLOTS 4
#define CHAOS_WORKERS 3
#define DEFAULT_SECONDS 5.0
#define PROGRESS_PASSES 50      /* per live worker, after the last kill */
#define WAIT 20.0
#define STOP_MAX_MS 150         /* a stop lasts 1..STOP_MAX_MS ms (plus a tick) */
#define ROUND_MAX 30.0          /* soak: seconds of one round (serials last) */
#define CHAOS_GRACE_MS "20"     /* the workers' pass grace (BAKERY_PASS_GRACE_MS) */

struct worker {
	unsigned serial;           /* index in the table and occupancy serial */
	volatile int in_cs;        /* between the lock's return and the unlock */
	uint64_t passes, owner_dead, eslots, gave_up;
	int err;
};

struct chaos {
	struct occupancy occ;
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	volatile int stop;
	struct worker w[CRASH_SERIALS];
};

static struct chaos *ch;

static void spin(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		caa_cpu_relax();
}

static int take(bakery_lock_t *l, unsigned *seed)
{
	struct timespec at;

	if (rand_r(seed) % 4)
		return bakery_lock(l);
	at = tk_in(CLOCK_MONOTONIC, (double)(rand_r(seed) % 1000) / 1e6);
	return bakery_clocklock(l, CLOCK_MONOTONIC, &at);
}

/* One passage, retried through give-ups and slot shortage. */
static int passage(bakery_lock_t *l, struct worker *w, unsigned *seed)
{
	int rc;

	while ((rc = take(l, seed)) == ETIMEDOUT || rc == BAKERY_ESLOTS || rc == EAGAIN) {
		if (rc == BAKERY_ESLOTS || rc == EAGAIN) {
			uatomic_inc(&w->eslots);
			usleep(200);    /* dead slots are being recovered */
		} else {
			uatomic_inc(&w->gave_up);
		}
		if (CMM_LOAD_SHARED(ch->stop))
			return -1;
	}
	if (rc != 0 && rc != EOWNERDEAD) {
		w->err = rc;
		return 2;
	}
	CMM_STORE_SHARED(w->in_cs, 1);
	if (rc == EOWNERDEAD) {
		uatomic_inc(&w->owner_dead);
		if (bakery_consistent(l))
			return 3;
	}
	occupancy_pass(&ch->occ, w->serial, CRASH_OCC_PAUSE);
	spin(200);
	uatomic_inc(&w->passes);
	CMM_STORE_SHARED(w->in_cs, 0);
	if (bakery_unlock(l))
		return 4;
	spin(rand_r(seed) % 400);
	return 0;
}

static int worker_run(void *arg)
{
	struct worker *w = arg;
	unsigned seed = (unsigned)getpid();
	bakery_t *b;
	bakery_lock_t *l;
	int rc = 0;

	setenv("BAKERY_PASS_GRACE_MS", CHAOS_GRACE_MS, 1);
	if (bakery_open(ch->region, BAKERY_NORECOVER, NULL, &b) || bakery_lock_open(b, CRASH_LOCK, ch->algo, &l))
		return 1;
	while (!CMM_LOAD_SHARED(ch->stop) && rc == 0)
		rc = passage(l, w, &seed);
	if (rc > 0)
		return rc;
	return bakery_lock_close(l) || bakery_close(b) ? 5 : 0;
}

struct live {
	pid_t pid;
	unsigned serial;
	uint64_t cont_at;          /* tk_ns() to SIGCONT it at; 0: running */
};

/* What one round did. */
struct tally {
	unsigned kills, inside, stops, stops_inside;
};

static int failed;

static void fail(const char *what, long long a, long long b)
{
	fprintf(stderr, "FAIL %s: %s (%lld, %lld)\n", bakery_algo_name(ch->algo), what, a, b);
	failed = 1;
}

static void spawn(struct live *lv, unsigned *next_serial)
{
	lv->serial = (*next_serial)++;
	ch->w[lv->serial].serial = lv->serial;
	lv->pid = crash_fork(worker_run, &ch->w[lv->serial], NULL);
}

/* Kill one worker at random and start another; false when out of serials. */
static bool kill_one(struct live *v, unsigned *next_serial, struct tally *t)
{
	int st;

	if (*next_serial >= CRASH_SERIALS)
		return false;
	occupancy_doom(&ch->occ, v->serial);
	kill(v->pid, SIGKILL);
	st = tk_reap(v->pid, WAIT);
	if (st != CRASH_SIGKILLED)
		fail("a worker ended otherwise than by the kill", st, ch->w[v->serial].err);
	t->kills++;
	t->inside += ch->w[v->serial].in_cs;
	v->cont_at = 0;
	spawn(v, next_serial);
	return true;
}

static bool is_stopped(void *arg)
{
	return crash_proc_state(*(pid_t *)arg) == 'T';
}

/* SIGSTOP a running worker for 1..STOP_MAX_MS ms; once it is stopped, note
 * whether it holds the lock (everyone else then waits for it). */
static void stop_one(struct live *v, struct tally *t)
{
	if (v->cont_at)
		return;
	kill(v->pid, SIGSTOP);
	v->cont_at = tk_ns() + (uint64_t)(1 + rand() % STOP_MAX_MS) * 1000000u;
	t->stops++;
	if (tk_wait_until(is_stopped, &v->pid, 1.0))
		t->stops_inside += ch->w[v->serial].in_cs;
}

/* SIGCONT the stopped workers whose time has come (all with ALL). */
static void continue_due(struct live *lv, bool all)
{
	uint64_t now = tk_ns();

	for (int k = 0; k < CHAOS_WORKERS; k++)
		if (lv[k].cont_at && (all || lv[k].cont_at <= now)) {
			kill(lv[k].pid, SIGCONT);
			lv[k].cont_at = 0;
		}
}

/* One tick's event: a kill and respawn, or a stop; false when out of
 * serials. */
static bool strike(struct live *lv, unsigned *next_serial, struct tally *t)
{
	struct live *v = &lv[rand() % CHAOS_WORKERS];

	continue_due(lv, false);
	if (rand() % 3 == 0) {
		stop_one(v, t);
		return true;
	}
	return kill_one(v, next_serial, t);
}

/* Every live worker makes PROGRESS_PASSES passages from now on. */
static bool progress(const struct live *lv)
{
	uint64_t from[CHAOS_WORKERS], end = tk_ns() + (uint64_t)(WAIT * 1e9);
	int k = 0;

	for (k = 0; k < CHAOS_WORKERS; k++)
		from[k] = uatomic_read(&ch->w[lv[k].serial].passes);
	for (k = 0; k < CHAOS_WORKERS && tk_ns() < end;)
		if (uatomic_read(&ch->w[lv[k].serial].passes) >= from[k] + PROGRESS_PASSES)
			k++;
		else
			usleep(1000);
	return k == CHAOS_WORKERS;
}

/* What the region looks like, for a failure report. */
static void dump(bakery_t *b, bakery_lock_t *l)
{
	struct bakery_lock_info li = crash_lock_info(b, l);

	fprintf(stderr, "  lock: holder %d waiters %u participants %u owner_dead %d\n",
	        li.holder, li.waiters, li.participants, li.owner_dead);
	for (unsigned i = 0; i < CHAOS_SLOTS; i++) {
		struct bakery_slot_info si;

		if (bakery_slot_info(b, i, &si) == 0)
			fprintf(stderr, "  slot %u: state %d alive %d pid %d pass %d\n", i, si.state,
			        si.alive, (int)si.pid, si.pass);
	}
}

static void totals(unsigned serials, uint64_t *passes, uint64_t *owner_dead, uint64_t *eslots)
{
	*passes = *owner_dead = *eslots = 0;
	for (unsigned s = 1; s < serials; s++) {
		*passes += ch->w[s].passes;
		*owner_dead += ch->w[s].owner_dead;
		*eslots += ch->w[s].eslots;
	}
}

/* Figures over the whole run. */
static struct {
	unsigned rounds, kills, inside, stops, stops_inside;
	uint64_t passes, owner_dead, violations;
} sum;

static void run_algo(enum bakery_algo algo, double seconds)
{
	struct live lv[CHAOS_WORKERS];
	struct tally t = { 0 };
	unsigned next_serial = 1, reclaimed;
	uint64_t end, passes, owner_dead, eslots, at_last_kill;
	struct bakery_lock_info li;
	bakery_t *b;
	bakery_lock_t *l;
	int err;

	memset(ch, 0, sizeof(*ch));
	ch->algo = algo;
	tk_name(ch->region, TK_NAME_SIZE, "chaos");
	err = crash_create(ch->region, CHAOS_SLOTS, &b);
	if (!err)
		err = bakery_lock_open(b, CRASH_LOCK, algo, &l);
	if (err) {
		fprintf(stderr, "%s: %s\n", ch->region, bakery_strerror(err));
		exit(99);
	}
	for (int k = 0; k < CHAOS_WORKERS; k++)
		spawn(&lv[k], &next_serial);
	end = tk_ns() + (uint64_t)(seconds * 1e9);
	while (tk_ns() < end && !failed) {
		tk_sleep_ms(2 + rand() % 18);
		if (!strike(lv, &next_serial, &t))
			break;
	}
	continue_due(lv, true);
	totals(next_serial, &at_last_kill, &owner_dead, &eslots);
	if (!progress(lv)) {
		fail("no progress after the last kill", t.kills, 0);
		dump(b, l);
	}
	CMM_STORE_SHARED(ch->stop, 1);
	for (int k = 0; k < CHAOS_WORKERS; k++) {
		int st = tk_reap(lv[k].pid, WAIT);
		if (st != 0)
			fail("a worker did not leave cleanly", st, ch->w[lv[k].serial].err);
	}
	if (crash_recover_in_child(ch->region, &reclaimed))
		fail("bakery_recover failed", 0, 0);

	totals(next_serial, &passes, &owner_dead, &eslots);
	li = crash_lock_info(b, l);
	printf("%-12s %4.1f s  kills %4u (inside %3u)  stops %4u (holding %3u)  acquisitions %7llu "
	       "(%llu after the last kill)  EOWNERDEAD %3llu  owner deaths %3llu  recoveries %4llu  "
	       "no-slot retries %5llu  passed %4llu  violations %llu  stale %llu\n",
	       bakery_algo_name(algo),
	       seconds, t.kills, t.inside, t.stops, t.stops_inside, (unsigned long long)passes,
	       (unsigned long long)(passes - at_last_kill),
	       (unsigned long long)owner_dead,
	       (unsigned long long)li.owner_deaths, (unsigned long long)li.recoveries,
	       (unsigned long long)eslots, (unsigned long long)li.passes,
	       (unsigned long long)ch->occ.violations,
	       (unsigned long long)ch->occ.stale);
	if (ch->occ.violations)
		fail("overlaps in the critical section", (long long)ch->occ.violations, 0);
	if (ch->occ.counter < ch->occ.entries)
		fail("lost updates", (long long)ch->occ.counter, (long long)ch->occ.entries);
	if (ch->occ.counter > ch->occ.entries + t.kills)
		fail("more updates than entries and kills", (long long)ch->occ.counter,
		     (long long)ch->occ.entries);
	if (crash_slots_used(b) != 0)
		fail("slots left in use after recovery", crash_slots_used(b), reclaimed);
	if (t.inside > li.owner_deaths || li.owner_deaths > t.kills)
		fail("owner deaths out of bounds", (long long)li.owner_deaths, t.kills);
	if (owner_dead > li.owner_deaths)
		fail("more EOWNERDEAD than owner deaths", (long long)owner_dead,
		     (long long)li.owner_deaths);
	if (li.owner_dead || li.not_recoverable)
		fail("the lock ended inconsistent", li.owner_dead, li.not_recoverable);
	sum.rounds++;
	sum.kills += t.kills;
	sum.inside += t.inside;
	sum.stops += t.stops;
	sum.stops_inside += t.stops_inside;
	sum.passes += passes;
	sum.owner_dead += owner_dead;
	sum.violations += ch->occ.violations;
	bakery_lock_close(l);
	bakery_close(b);
	bakery_unlink(ch->region);
}

/* Soak: rounds of every algorithm until TOTAL seconds have passed. */
static void soak(double total)
{
	double round = total / CRASH_NALGOS < ROUND_MAX ? total / CRASH_NALGOS : ROUND_MAX;
	uint64_t end = tk_ns() + (uint64_t)(total * 1e9);

	do
		for (unsigned i = 0; i < CRASH_NALGOS && !failed; i++)
			run_algo(crash_algos[i], round);
	while (tk_ns() < end && !failed);
}

int main(int argc, char **argv)
{
	const char *env = getenv("CHAOS_SECONDS");
	double seconds = argc > 1 ? atof(argv[1]) : env ? atof(env) : DEFAULT_SECONDS;

	if (!crash_chaos_soak() && (seconds <= 0 || seconds > 600)) {
		fprintf(stderr, "usage: %s [SECONDS per algorithm]\n", argv[0]);
		return 99;
	}
	srand((unsigned)getpid());
	ch = tk_shared(sizeof(*ch));
	printf("chaos: %d workers, %d slots, every 2-20 ms a SIGKILL and respawn or a SIGSTOP "
	       "of 1-%d ms\n", CHAOS_WORKERS, CHAOS_SLOTS, STOP_MAX_MS);
	if (crash_chaos_soak())
		soak(crash_chaos_seconds(0));
	else
		for (unsigned i = 0; i < CRASH_NALGOS; i++)
			run_algo(crash_algos[i], seconds);
	printf("chaos total: %u configurations, %u SIGKILLs (%u inside), %u SIGSTOPs (%u holding), "
	       "%llu acquisitions, %llu EOWNERDEAD, %llu violations: %s\n", sum.rounds, sum.kills,
	       sum.inside, sum.stops, sum.stops_inside, (unsigned long long)sum.passes,
	       (unsigned long long)sum.owner_dead, (unsigned long long)sum.violations,
	       failed ? "FAIL" : "ok");
	return failed ? 1 : 0;
}
