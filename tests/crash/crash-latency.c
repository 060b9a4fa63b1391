/* SPDX-License-Identifier: MIT */
/*
 * crash-latency.c - recovery while waiting, and its latency, for every
 * algorithm (normal build of the library, as users get it).
 *
 *   waiter:  H holds; W is blocked in bakery_lock() and asleep in the
 *            kernel; the test SIGKILLs H.  Measured: from the kill() call to
 *            the moment W's bakery_lock() returns (CLOCK_MONOTONIC, the
 *            timestamps compared through shared memory).
 *   arrival: H holds and is SIGKILLed, and reaped (dead for sure); then A,
 *            its handles already open, calls bakery_lock().  Measured: from
 *            the call to its return, and from the kill() call to its return.
 *
 *   baseline: the waiter set-up without a death: H unlocks instead of
 *            dying.  Measured: from H's unlock to W's acquisition, the
 *            plain futex hand-over on this machine, under this load.
 *
 * Every trial must recover, with EOWNERDEAD, and mutual exclusion must hold
 * (occupancy object).  The recovery medians must stay below
 * LATENCY_FACTOR times the baseline median measured in the same run, or
 * below LATENCY_FLOOR_NS, whichever is larger: a loaded machine slows both
 * alike, and the bug this catches (a waiter that learns of the death only
 * at its one-second sleep cap, or by polling) costs hundreds of
 * milliseconds, where a hand-over costs tens of microseconds.  The figures
 * are printed.
 *
 *   crash-latency [TRIALS]      (default 30 per algorithm and kind)
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

#include <urcu/system.h>

#include "crashkit.h"

#define DEFAULT_TRIALS 30
#define MAX_TRIALS 600         /* 3 kinds x 2 serials per trial < CRASH_SERIALS */
#define LATENCY_FACTOR 50               /* x the hand-over baseline's median */
#define LATENCY_FLOOR_NS 50000000ull    /* 50 ms */
#define WAIT 10.0

struct shared {
	struct occupancy occ;
	struct crash_part h, w;
};

struct bench {
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	bakery_t *b;
	struct shared *sh;
	unsigned asleep;           /* waiter trials where W was seen asleep */
	int failed;
};

static void fail(struct bench *be, const char *what, int value)
{
	fprintf(stderr, "FAIL %s: %s (%d)\n", bakery_algo_name(be->algo), what, value);
	be->failed = 1;
}

static pid_t start(struct bench *be, struct crash_part *p, unsigned serial, int hold, int wait_go)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->region, sizeof(p->region), "%s", be->region);
	p->algo = be->algo;
	p->mode = CRASH_MODE_LOCK;
	p->hold = hold;
	p->wait_go = wait_go;
	p->serial = serial;
	p->occ = &be->sh->occ;
	return crash_fork(crash_part_run, p, NULL);
}

/* H holding the lock, or 0 after a failure.  Serials are unique per trial:
 * a killed holder's serial stays doomed. */
static pid_t start_holder(struct bench *be, unsigned trial)
{
	pid_t h = start(be, &be->sh->h, 1 + 2 * trial, 1, 0);

	if (!tk_wait_flag(&be->sh->h.holding, 1, WAIT)) {
		fail(be, "the holder never got the lock", be->sh->h.rc);
		tk_reap(h, 0);
		return 0;
	}
	return h;
}

/* Kill H and reap it; the caller's timestamp comes just before. */
static void kill_holder(struct bench *be, pid_t h)
{
	occupancy_doom(&be->sh->occ, be->sh->h.serial);
	kill(h, SIGKILL);
	if (tk_reap(h, WAIT) != CRASH_SIGKILLED)
		fail(be, "the holder did not die of SIGKILL", 0);
}

static bool asleep(pid_t pid)
{
	for (int i = 0; i < 1000; i++) {
		if (crash_proc_state(pid) == 'S')
			return true;
		usleep(1000);
	}
	return false;
}

/* One waiter trial: the kill-to-acquisition delay, in ns. */
static uint64_t waiter_trial(struct bench *be, unsigned trial)
{
	struct crash_part *w = &be->sh->w;
	pid_t h = start_holder(be, trial), wp;
	uint64_t t_kill;
	int st;

	if (!h)
		return 0;
	wp = start(be, w, 2 + 2 * trial, 0, 0);
	if (!crash_wait_pass(be->b, wp, BAKERY_PASS_WAITING, WAIT))
		fail(be, "the waiter never queued", 0);
	/* past its short spin, asleep on the futexes */
	be->asleep += asleep(wp);
	usleep(2000);
	t_kill = tk_ns();
	kill_holder(be, h);
	st = tk_reap(wp, WAIT);
	if (st != 0)
		fail(be, "the waiter did not get through", st);
	if (w->rc != EOWNERDEAD)
		fail(be, "the waiter was not told EOWNERDEAD", w->rc);
	return w->t_acq - t_kill;
}

/* One baseline trial: the unlock-to-acquisition delay of a plain hand-over
 * to a waiter asleep in the kernel, in ns. */
static uint64_t handover_trial(struct bench *be, unsigned trial)
{
	struct crash_part *w = &be->sh->w, *h = &be->sh->h;
	pid_t hp = start_holder(be, trial), wp;

	if (!hp)
		return 0;
	wp = start(be, w, 2 + 2 * trial, 0, 0);
	if (!crash_wait_pass(be->b, wp, BAKERY_PASS_WAITING, WAIT))
		fail(be, "the waiter never queued", 0);
	asleep(wp);
	usleep(2000);
	CMM_STORE_SHARED(h->release, 1);
	if (tk_reap(hp, WAIT) != 0 || tk_reap(wp, WAIT) != 0)
		fail(be, "a hand-over participant failed", 0);
	if (w->rc != 0)
		fail(be, "the waiter of a hand-over got an error", w->rc);
	return w->t_acq - h->t_release;
}

/* One arrival trial: call-to-acquisition and kill-to-acquisition, in ns. */
static void arrival_trial(struct bench *be, unsigned trial, uint64_t *from_call,
                          uint64_t *from_kill)
{
	struct crash_part *a = &be->sh->w;
	pid_t h = start_holder(be, trial), ap;
	uint64_t t_kill;
	int st;

	*from_call = *from_kill = 0;
	if (!h)
		return;
	ap = start(be, a, 2 + 2 * trial, 0, 1);
	if (!tk_wait_flag(&a->opened, 1, WAIT))
		fail(be, "the late arrival never opened the region", 0);
	t_kill = tk_ns();
	kill_holder(be, h);
	CMM_STORE_SHARED(a->go, 1);
	st = tk_reap(ap, WAIT);
	if (st != 0)
		fail(be, "the late arrival did not get through", st);
	if (a->rc != EOWNERDEAD)
		fail(be, "the late arrival was not told EOWNERDEAD", a->rc);
	*from_call = a->t_acq - a->t_call;
	*from_kill = a->t_acq - t_kill;
}

static void report(const char *algo, const char *what, uint64_t *v, unsigned n, uint64_t *median)
{
	uint64_t worst;

	crash_stats(v, n, median, &worst);
	printf("%-12s %-26s median %9.1f us   worst %9.1f us   (%u trials)\n", algo, what,
	       (double)*median / 1e3, (double)worst / 1e3, n);
}

static int run_algo(enum bakery_algo algo, unsigned trials)
{
	static uint64_t wait_ns[MAX_TRIALS], call_ns[MAX_TRIALS], kill_ns[MAX_TRIALS];
	static uint64_t base_ns[MAX_TRIALS];
	struct bench be = { .algo = algo };
	uint64_t med_wait, med_call, med_kill, med_base, bound;
	bakery_lock_t *l;
	int err;

	tk_name(be.region, TK_NAME_SIZE, "latency");
	err = crash_create(be.region, 8, &be.b);
	if (!err)
		err = bakery_lock_open(be.b, CRASH_LOCK, algo, &l);
	if (err) {
		fprintf(stderr, "%s: %s\n", be.region, bakery_strerror(err));
		exit(99);
	}
	be.sh = tk_shared(sizeof(*be.sh));
	for (unsigned t = 0; t < trials && !be.failed; t++)
		wait_ns[t] = waiter_trial(&be, t);
	for (unsigned t = 0; t < trials && !be.failed; t++)
		arrival_trial(&be, trials + t, &call_ns[t], &kill_ns[t]);
	for (unsigned t = 0; t < trials && !be.failed; t++)
		base_ns[t] = handover_trial(&be, 2 * trials + t);
	if (be.sh->occ.violations || be.sh->occ.entries != be.sh->occ.counter)
		fail(&be, "mutual exclusion broken", (int)be.sh->occ.violations);
	if (!be.failed) {
		report(bakery_algo_name(algo), "waiter (kill -> acquire)", wait_ns, trials, &med_wait);
		report("", "arrival (call -> acquire)", call_ns, trials, &med_call);
		report("", "arrival (kill -> acquire)*", kill_ns, trials, &med_kill);
		report("", "baseline (unlock -> acquire)", base_ns, trials, &med_base);
		printf("%-12s waiter seen asleep before the kill in %u of %u trials\n", "",
		       be.asleep, trials);
		printf("%-12s (* the holder is reaped before the arrival's call)\n", "");
		bound = LATENCY_FACTOR * med_base;
		if (bound < LATENCY_FLOOR_NS)
			bound = LATENCY_FLOOR_NS;
		printf("%-12s bound on the recovery medians: %.1f ms\n", "", (double)bound / 1e6);
		if (med_wait > bound || med_call > bound)
			fail(&be, "median recovery latency over the bound", 0);
	}
	bakery_lock_close(l);
	bakery_close(be.b);
	bakery_unlink(be.region);
	munmap(be.sh, sizeof(*be.sh));
	return be.failed;
}

int main(int argc, char **argv)
{
	unsigned trials = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : DEFAULT_TRIALS;
	int failed = 0;

	if (trials < 1 || trials > MAX_TRIALS) {
		fprintf(stderr, "usage: %s [TRIALS (1..%d)]\n", argv[0], MAX_TRIALS);
		return 99;
	}
	printf("recovery latency after SIGKILL of the holder, CLOCK_MONOTONIC\n");
	for (unsigned i = 0; i < CRASH_NALGOS; i++)
		failed |= run_algo(crash_algos[i], trials);
	return failed ? 1 : 0;
}
