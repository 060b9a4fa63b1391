/* SPDX-License-Identifier: MIT */
/*
 * test_wakeups.c - who a release wakes: one waiter where everyone parks,
 * the next two nearer the front, for every algorithm; and whom a
 * Black-White waiter parks behind.
 *
 * WAITERS processes queue behind a held lock one after another, each asleep
 * before the next arrives, so that each is parked behind the one before it
 * (the test build's BAKERY_TEST_PARK_AHEAD=1 parks a waiter with one ticket
 * ahead behind its predecessor; by default a waiter parks behind the ticket
 * before its predecessor's, below).  Then every release, the
 * holder's and each waiter's, must wake exactly one thread (the test build
 * counts the threads its FUTEX_WAKEs woke), the last release none; a release
 * that woke every sleeper of its line would wake all the waiters at once.
 * The waiters use lock, clocklock and timedlock in turn, and get the lock in
 * the order they arrived; an occupancy word exchanged on entry never shows
 * two holders.
 *
 * A lock of k = 2 holders (Lamport, Boulangerie): two holders inside,
 * WAITERS processes asleep in line behind them.  The release of one holder
 * must wake the next in line, who enters, and the one behind it, parked
 * behind the releaser's ticket (the third latest ahead of it), who becomes
 * the next in line, unless the entry of the first woke it already; the
 * others are parked behind tickets that are still there.  Two on an idle
 * machine; one when the woken next in line enters before the release's
 * second wake-up.  A release that woke everyone asleep on the lock's exit
 * count would wake all WAITERS, and with a crowd every exit would wake it
 * all.  Then everyone gets in, never more than two inside
 * (tests/common/rw_occupancy.h).  And a waiter parked behind a holder that
 * stays inside still gets the unit that frees (a_holder_that_stays_...).
 *
 * The line of a few, without the override (the_next_but_one_...) and a
 * Black-White ticket of the other colour behind ours (black_white_...):
 * see there.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <urcu/uatomic.h>

#include "../common/rw_occupancy.h"
#include "unit.h"

/* the test build's count of threads this process's FUTEX_WAKEs woke (futex.h) */
unsigned long bakery__test_futex_woken(void);

#define WAITERS 4

struct arena {
	char name[TK_NAME_SIZE];
	enum bakery_algo algo;
	unsigned holder;                /* occupancy: 1 + id of the holder, 0 = free */
	unsigned overlaps;
	unsigned next;                  /* acquisitions so far */
	unsigned order[WAITERS];        /* order[k]: the k-th acquirer's id */
	unsigned long woken[WAITERS];   /* threads woken by waiter k's release */
	pid_t pid[WAITERS];
	bool hold_for_sleepers;         /* release once those behind are asleep */
};

struct waiter {
	struct arena *a;
	unsigned id;
};

static int acquire(bakery_lock_t *l, unsigned id)
{
	struct timespec at;

	switch (id % 3) {
	case 0:
		return bakery_lock(l);
	case 1:
		at = tk_in(CLOCK_MONOTONIC, 60);
		return bakery_clocklock(l, CLOCK_MONOTONIC, &at);
	default:
		at = tk_in(CLOCK_REALTIME, 60);
		return bakery_timedlock(l, &at);
	}
}

/* Are the waiters after W asleep? */
static bool later_ones_asleep(void *arg)
{
	const struct waiter *w = arg;

	for (unsigned k = w->id + 1; k < WAITERS; k++)
		if (unit_proc_state(w->a->pid[k]) != 'S')
			return false;
	return true;
}

/* ... and still asleep 20 ms later.  One look at /proc is an instant:
 * with it alone, a release woke one thread instead of two about once in
 * 100 runs (2026-11-29), while every waiter still entered in order and at
 * once, so no wake-up was lost: a waiter the test saw asleep was not yet
 * asleep on the line whose exit it waits for (the next in line and the one
 * parked behind it, woken by the release before, settle anew).  Seen
 * asleep twice, 20 ms apart, it has settled: 0 in 200 runs. */
static bool later_ones_settled(void *arg)
{
	if (!later_ones_asleep(arg))
		return false;
	usleep(20000);
	return later_ones_asleep(arg);
}

static int waiter_run(void *arg)
{
	struct waiter *w = arg;
	struct arena *a = w->a;
	bakery_lock_t *l;
	bakery_t *b;
	unsigned long before;

	if (bakery_open(a->name, 0, NULL, &b) || bakery_lock_open(b, "line", a->algo, &l))
		return 1;
	if (acquire(l, w->id))
		return 2;
	if (uatomic_xchg(&a->holder, w->id + 1) != 0)
		uatomic_inc(&a->overlaps);
	a->order[a->next++] = w->id;
	if (a->hold_for_sleepers && !tk_wait_until(later_ones_settled, w, 30))
		return 4;
	if (uatomic_xchg(&a->holder, 0) != w->id + 1)
		uatomic_inc(&a->overlaps);
	before = bakery__test_futex_woken();
	if (bakery_unlock(l))
		return 3;
	a->woken[w->id] = bakery__test_futex_woken() - before;
	return 0;
}

START_TEST(one_release_wakes_one_waiter)
{
	struct arena *a = tk_shared(sizeof(*a));
	struct waiter w[WAITERS];
	pid_t pid[WAITERS];
	bakery_lock_t *l;
	bakery_t *b;
	unsigned long before, woken;

	setenv("BAKERY_TEST_PARK_AHEAD", "1", 1);
	a->algo = (enum bakery_algo)_i;
	b = unit_region(a->name, "wake", 0, 0);
	l = unit_lock(b, "line", a->algo);
	ck_assert_int_eq(bakery_lock(l), 0);
	for (unsigned k = 0; k < WAITERS; k++) {
		struct unit_queued q = { b, 0, k + 1 };

		w[k] = (struct waiter){ a, k };
		pid[k] = q.pid = tk_fork(waiter_run, &w[k]);
		ck_assert_msg(tk_wait_until(unit_queued_asleep, &q, 30),
		              "waiter %u never went to sleep in line", k);
	}
	before = bakery__test_futex_woken();
	ck_assert_int_eq(bakery_unlock(l), 0);
	woken = bakery__test_futex_woken() - before;
	ck_assert_msg(woken == 1, "the holder's release woke %lu threads, not 1", woken);
	for (unsigned k = 0; k < WAITERS; k++)
		ck_assert_int_eq(tk_reap(pid[k], 60), 0);
	ck_assert_uint_eq(a->overlaps, 0);
	ck_assert_uint_eq(a->next, WAITERS);
	for (unsigned k = 0; k < WAITERS; k++) {
		ck_assert_uint_eq(a->order[k], k);
		ck_assert_msg(a->woken[k] == (k + 1 < WAITERS),
		              "waiter %u's release woke %lu threads", k, a->woken[k]);
	}
	bakery_lock_close(l);
	bakery_close(b);
	bakery_unlink(a->name);
	unsetenv("BAKERY_TEST_PARK_AHEAD");
}
END_TEST

/* ------------------------------------------------ the next but one -- */

/*
 * Without the override that parks everyone, a waiter two or more tickets
 * back sleeps until the one before its predecessor leaves, so that it is
 * awake and next in line during its predecessor's turn; the next in line
 * itself waits on the holder.
 * WAITERS waiters queue behind a held lock, each asleep before the next
 * arrives: the holder's release must wake the first two (the next, and the
 * one parked behind the holder), not those parked further back.  Each
 * waiter releases only once those after it are asleep again, so that
 * every count is that of the sleepers it had to wake: 2 (the next, and the
 * one parked behind it) while two are left, then 1, 0.  Before, every
 * waiter slept on the first slot still ahead in slot order, the holder's:
 * its release woke them all.
 */
START_TEST(the_next_but_one_wakes_at_the_holders_exit)
{
	struct arena *a = tk_shared(sizeof(*a));
	struct waiter w[WAITERS];
	bakery_lock_t *l;
	bakery_t *b;
	unsigned long before, woken;

	/* no park behind the predecessor itself (as without the override):
	 * what is tested is the line of a few */
	setenv("BAKERY_TEST_PARK_AHEAD", "64", 1);
	a->algo = (enum bakery_algo)_i;
	a->hold_for_sleepers = true;
	b = unit_region(a->name, "next2", 0, 0);
	l = unit_lock(b, "line", a->algo);
	ck_assert_int_eq(bakery_lock(l), 0);
	for (unsigned k = 0; k < WAITERS; k++) {
		struct unit_queued q = { b, 0, k + 1 };

		w[k] = (struct waiter){ a, k };
		a->pid[k] = q.pid = tk_fork(waiter_run, &w[k]);
		ck_assert_msg(tk_wait_until(unit_queued_asleep, &q, 30),
		              "waiter %u never went to sleep in line", k);
	}
	before = bakery__test_futex_woken();
	ck_assert_int_eq(bakery_unlock(l), 0);
	woken = bakery__test_futex_woken() - before;
	ck_assert_msg(woken == 2, "the holder's release woke %lu threads, not 2", woken);
	for (unsigned k = 0; k < WAITERS; k++)
		ck_assert_int_eq(tk_reap(a->pid[k], 60), 0);
	ck_assert_uint_eq(a->overlaps, 0);
	ck_assert_uint_eq(a->next, WAITERS);
	for (unsigned k = 0; k < WAITERS; k++) {
		unsigned long expect = k + 2 < WAITERS ? 2 : WAITERS - 1 - k;

		ck_assert_uint_eq(a->order[k], k);
		ck_assert_msg(a->woken[k] == expect, "waiter %u's release woke %lu threads, not %lu",
		              k, a->woken[k], expect);
	}
	bakery_lock_close(l);
	bakery_close(b);
	bakery_unlink(a->name);
	unsetenv("BAKERY_TEST_PARK_AHEAD");
}
END_TEST

/* ------------------------------------ Black-White's tickets ahead -- */

/*
 * A Black-White ticket of the other colour read in a doorway is ahead of
 * ours only if it was taken before the last flip of the shared colour.  X
 * reads the colour and stops (BAKERY_STOP_AT=doorway-color); the holder
 * leaves, flipping it; Y takes a ticket of the new colour, behind X's to
 * come, and waits for X's doorway.  X, continued, reads Y's ticket and
 * must not park behind it (everyone parks from one ticket ahead here): Y
 * waits for X.  Until 2026-11-28 X did, and the two waited for each other
 * until the grace (10 minutes here) let one pass the other.
 */
struct bw_arena {
	char name[TK_NAME_SIZE];
	unsigned holder, overlaps, next;
	unsigned order[2];
};

struct bw_taker {
	struct bw_arena *a;
	unsigned id;
	bool stop;                      /* stop after reading the colour */
};

static int bw_taker_run(void *arg)
{
	struct bw_taker *t = arg;
	struct bw_arena *a = t->a;
	bakery_lock_t *l;
	bakery_t *b;

	if (t->stop)
		setenv("BAKERY_STOP_AT", "doorway-color", 1);
	if (bakery_open(a->name, 0, NULL, &b) ||
	    bakery_lock_open(b, "line", BAKERY_ALGO_BLACK_WHITE, &l))
		return 1;
	/* no deadline: one would end a wrong park and hide it */
	if (bakery_lock(l))
		return 2;
	if (uatomic_xchg(&a->holder, t->id + 1) != 0)
		uatomic_inc(&a->overlaps);
	a->order[a->next++] = t->id;
	if (uatomic_xchg(&a->holder, 0) != t->id + 1)
		uatomic_inc(&a->overlaps);
	return bakery_unlock(l) ? 3 : 0;
}

START_TEST(black_white_parks_only_behind_tickets_ahead)
{
	struct bw_arena *a = tk_shared(sizeof(*a));
	struct bw_taker x = { a, 0, true }, y = { a, 1, false };
	pid_t px, py;
	bakery_lock_t *l;
	bakery_t *b;
	int status;
	struct unit_queued q;

	setenv("BAKERY_TEST_PARK_AHEAD", "1", 1);
	b = unit_region(a->name, "bwpark", 0, 0);
	q = (struct unit_queued){ b, 0, 2 };
	l = unit_lock(b, "line", BAKERY_ALGO_BLACK_WHITE);
	ck_assert_int_eq(bakery_lock(l), 0);
	px = tk_fork(bw_taker_run, &x);
	ck_assert_int_eq(waitpid(px, &status, WUNTRACED), px);
	ck_assert_msg(WIFSTOPPED(status), "X did not stop at doorway-color (status %d)", status);
	ck_assert_int_eq(bakery_unlock(l), 0);                 /* the colour flips */
	q.pid = py = tk_fork(bw_taker_run, &y);
	/* X in its doorway and Y in line: two waiters, Y asleep */
	ck_assert_msg(tk_wait_until(unit_queued_asleep, &q, 30), "Y never waited for X's doorway");
	ck_assert_int_eq(kill(px, SIGCONT), 0);
	/* milliseconds when right; parked behind Y, until the grace */
	ck_assert_msg(tk_reap(px, 30) == 0, "X did not get the lock within 30 s");
	ck_assert_int_eq(tk_reap(py, 60), 0);
	ck_assert_uint_eq(a->overlaps, 0);
	ck_assert_uint_eq(a->next, 2);
	ck_assert_uint_eq(a->order[0], 0);                      /* X's colour goes first */
	bakery_lock_close(l);
	bakery_close(b);
	bakery_unlink(a->name);
	unsetenv("BAKERY_TEST_PARK_AHEAD");
}
END_TEST

/* ---------------------------------------------------------- k holders -- */

#define K 2

struct k_arena {
	char name[TK_NAME_SIZE];
	enum bakery_algo algo;
	struct rw_occupancy occ;        /* never more than K inside */
	int held;                       /* the second holder is inside */
	int last_in;                    /* the last waiter is inside */
};

struct k_taker {
	struct k_arena *a;
	unsigned id;
	struct tk_gate gate;            /* the second holder leaves when it opens */
	unsigned long entry_woke;       /* threads a waiter's lock call woke */
};

/* A taker's handle of the lock, in a region of its own process. */
static bool k_open(const struct k_taker *t, bakery_lock_t **l)
{
	bakery_t *b;

	return bakery_open(t->a->name, 0, NULL, &b) == 0 &&
	       bakery_lock_open(b, "line", t->a->algo, l) == 0;
}

/* The second holder: inside until its gate opens. */
static int k_holder_run(void *arg)
{
	struct k_taker *h = arg;
	bakery_lock_t *l;

	if (!k_open(h, &l) || bakery_lock(l))
		return 1;
	rw_occupancy_in(&h->a->occ, false, K);
	uatomic_set(&h->a->held, 1);
	tk_gate_wait(&h->gate, 60);
	rw_occupancy_out(&h->a->occ, false);
	return bakery_unlock(l) ? 2 : 0;
}

/* A waiter: in line, inside for a millisecond; counts whom its lock call
 * (its entry) woke. */
static int k_waiter_run(void *arg)
{
	struct k_taker *w = arg;
	unsigned long before;
	bakery_lock_t *l;

	if (!k_open(w, &l))
		return 1;
	before = bakery__test_futex_woken();
	if (acquire(l, w->id))
		return 2;
	w->entry_woke = bakery__test_futex_woken() - before;
	rw_occupancy_in(&w->a->occ, false, K);
	tk_sleep_ms(1);
	rw_occupancy_out(&w->a->occ, false);
	return bakery_unlock(l) ? 3 : 0;
}

/* The last in line: says when it is inside. */
static int k_last_run(void *arg)
{
	struct k_taker *w = arg;
	bakery_lock_t *l;

	if (!k_open(w, &l) || bakery_lock(l))
		return 1;
	rw_occupancy_in(&w->a->occ, false, K);
	uatomic_set(&w->a->last_in, 1);
	rw_occupancy_out(&w->a->occ, false);
	return bakery_unlock(l) ? 2 : 0;
}

/* Asleep now and 20 ms later (later_ones_settled's reason). */
static bool proc_settled(void *arg)
{
	pid_t pid = *(const pid_t *)arg;

	if (unit_proc_state(pid) != 'S')
		return false;
	usleep(20000);
	return unit_proc_state(pid) == 'S';
}

/*
 * A waiter three tickets back sleeps until the ticket before its
 * predecessor's leaves, here ours: a holder that stays inside.  Then it
 * also watches its predecessor, whose entry says that a unit is free for
 * the line behind us: the second holder leaves, the next in line enters
 * and its entry wakes the last, which gets in beside us while we stay
 * inside.  A waiter that slept behind our ticket alone would wake only at
 * our exit, or at the sleep's cap (a second): the next in line's entry
 * would wake nobody.
 */
START_TEST(a_holder_that_stays_does_not_hide_a_free_unit)
{
	struct k_arena *a = tk_shared(sizeof(*a));
	struct k_taker *t = tk_shared(sizeof(*t) * 3);
	struct bakery_lock_config cfg = { .algo = (enum bakery_algo)_i, .holders = K };
	pid_t pid[3];
	bakery_lock_t *l;
	bakery_t *b;

	a->algo = cfg.algo;
	b = unit_region(a->name, "kstay", 0, 0);
	ck_assert_int_eq(bakery_lock_open_config(b, "line", &cfg, &l), 0);
	ck_assert_int_eq(bakery_lock(l), 0);                  /* we stay inside */
	rw_occupancy_in(&a->occ, false, K);
	for (unsigned k = 0; k < 3; k++)
		t[k] = (struct k_taker){ .a = a, .id = k };
	tk_gate_init(&t[0].gate);
	pid[0] = tk_fork(k_holder_run, &t[0]);                 /* the second holder */
	ck_assert(tk_wait_flag(&a->held, 1, 30));
	for (unsigned k = 1; k < 3; k++) {
		struct unit_queued q = { b, 0, k };

		pid[k] = q.pid = tk_fork(k == 1 ? k_waiter_run : k_last_run, &t[k]);
		ck_assert_msg(tk_wait_until(unit_queued_asleep, &q, 30),
		              "waiter %u never went to sleep in line", k);
		ck_assert(tk_wait_until(proc_settled, &pid[k], 30));
	}
	tk_gate_open(&t[0].gate);                              /* a unit frees */
	ck_assert_msg(tk_wait_flag(&a->last_in, 1, 30), "the last waiter never got in");
	ck_assert_int_eq(tk_reap(pid[1], 60), 0);
	ck_assert_msg(t[1].entry_woke == 1,
	              "the next in line's entry woke %lu threads, not 1 (the last in line)",
	              t[1].entry_woke);
	rw_occupancy_out(&a->occ, false);
	ck_assert_int_eq(bakery_unlock(l), 0);
	for (unsigned k = 0; k < 3; k += 2)
		ck_assert_int_eq(tk_reap(pid[k], 60), 0);
	ck_assert_uint_eq(a->occ.violations, 0);
	ck_assert_uint_eq(a->occ.writes, 4);
	tk_gate_close(&t[0].gate);
	bakery_lock_close(l);
	bakery_close(b);
	bakery_unlink(a->name);
}
END_TEST

START_TEST(one_exit_wakes_the_next_in_line)
{
	struct k_arena *a = tk_shared(sizeof(*a));
	struct k_taker *t = tk_shared(sizeof(*t) * (WAITERS + 1));
	struct bakery_lock_config cfg = { .algo = (enum bakery_algo)_i, .holders = K };
	pid_t pid[WAITERS + 1];
	bakery_lock_t *l;
	bakery_t *b;
	unsigned long before, woken;

	setenv("BAKERY_TEST_PARK_AHEAD", "1", 1);
	a->algo = cfg.algo;
	b = unit_region(a->name, "kwake", 0, 0);
	ck_assert_int_eq(bakery_lock_open_config(b, "line", &cfg, &l), 0);
	ck_assert_int_eq(bakery_lock(l), 0);
	rw_occupancy_in(&a->occ, false, K);
	/* t[WAITERS]: the second holder */
	t[WAITERS].a = a;
	tk_gate_init(&t[WAITERS].gate);
	pid[WAITERS] = tk_fork(k_holder_run, &t[WAITERS]);
	ck_assert(tk_wait_flag(&a->held, 1, 30));
	for (unsigned k = 0; k < WAITERS; k++) {
		struct unit_queued q = { b, 0, k + 1 };

		t[k] = (struct k_taker){ .a = a, .id = k };
		pid[k] = q.pid = tk_fork(k_waiter_run, &t[k]);
		ck_assert_msg(tk_wait_until(unit_queued_asleep, &q, 30),
		              "waiter %u never went to sleep in line", k);
	}
	before = bakery__test_futex_woken();
	rw_occupancy_out(&a->occ, false);
	ck_assert_int_eq(bakery_unlock(l), 0);
	woken = bakery__test_futex_woken() - before;
	/* the next in line, and the one behind it unless the next in line's
	 * entry, which that one also watches (we are a holder), woke it first */
	ck_assert_msg(woken >= 1 && woken <= 2,
	              "a holder's release woke %lu threads, not 1 or 2 (the next in line, the one "
	              "behind)", woken);
	tk_gate_open(&t[WAITERS].gate);
	for (unsigned k = 0; k <= WAITERS; k++)
		ck_assert_int_eq(tk_reap(pid[k], 60), 0);
	ck_assert_uint_eq(a->occ.violations, 0);
	ck_assert_uint_eq(a->occ.writes, WAITERS + 2);
	tk_gate_close(&t[WAITERS].gate);
	bakery_lock_close(l);
	bakery_close(b);
	bakery_unlink(a->name);
	unsetenv("BAKERY_TEST_PARK_AHEAD");
}
END_TEST

/* --------------------------------------------- the release that woke -- */

/* sched_yield(2), counted: the library's calls come here (the program's
 * definition is found before libc's). */
static unsigned long yields;

int sched_yield(void)
{
	uatomic_inc(&yields);
	return (int)syscall(SYS_sched_yield);
}

/* A region of one lock ("line", table index 0) and the test's handles. */
struct yield_region {
	char name[TK_NAME_SIZE];
	bakery_t *b;
	bakery_lock_t *l;
};

/* Take REGION's lock once (asleep in line until the test's release), give
 * it back. */
static int yield_waiter_run(void *arg)
{
	const struct yield_region *r = arg;
	bakery_lock_t *l;
	bakery_t *b;

	if (bakery_open(r->name, 0, NULL, &b) ||
	    bakery_lock_open(b, "line", BAKERY_ALGO_DEFAULT, &l))
		return 1;
	if (bakery_lock(l))
		return 2;
	if (bakery_unlock(l))
		return 3;
	bakery_lock_close(l);
	bakery_close(b);
	return 0;
}

/* The waiter is in line and asleep, now and 20 ms later. */
static bool yield_waiter_asleep(void *arg)
{
	struct unit_queued *q = arg;

	return unit_queued_asleep(q) && proc_settled(&q->pid);
}

/* A waiter of R's lock, forked and seen asleep in line. */
static pid_t yield_waiter_queued(struct yield_region *r)
{
	struct unit_queued q = { r->b, 0, 1 };

	q.pid = tk_fork(yield_waiter_run, r);
	ck_assert_msg(tk_wait_until(yield_waiter_asleep, &q, 30),
	              "the waiter never went to sleep in line");
	return q.pid;
}

/* Release L: the threads it woke, the yields it made into *YIELDED. */
static unsigned long release_counted(bakery_lock_t *l, unsigned long *yielded)
{
	unsigned long woken = bakery__test_futex_woken(), y = uatomic_read(&yields);

	ck_assert_int_eq(bakery_unlock(l), 0);
	*yielded = uatomic_read(&yields) - y;
	return bakery__test_futex_woken() - woken;
}

/*
 * A release that woke a waiter gives its CPU away (sched_yield), so that
 * with more threads than CPUs the woken one runs while the releaser stays
 * out of the line (lock.c, yield_to_woken); one that woke nobody makes no
 * system call; one that leaves the thread holding another lock yields
 * only at the release of that one.  Without the yield every count of
 * yields here is 0.
 */
START_TEST(a_release_that_woke_a_waiter_yields)
{
	struct yield_region *r = tk_shared(sizeof(*r) * 2), *outer = &r[0], *inner = &r[1];
	unsigned long yielded, woken;
	pid_t pid;

	/* two regions: the yield waits for the thread to hold no lock in any */
	outer->b = unit_region(outer->name, "yield", 0, 0);
	outer->l = unit_lock(outer->b, "line", (enum bakery_algo)_i);
	inner->b = unit_region(inner->name, "yield2", 0, 0);
	inner->l = unit_lock(inner->b, "line", (enum bakery_algo)_i);

	/* nobody to wake: no yield */
	ck_assert_int_eq(bakery_lock(outer->l), 0);
	woken = release_counted(outer->l, &yielded);
	ck_assert_uint_eq(woken, 0);
	ck_assert_msg(yielded == 0, "a release that woke nobody yielded %lu times", yielded);

	/* a sleeper woken: one yield */
	ck_assert_int_eq(bakery_lock(outer->l), 0);
	pid = yield_waiter_queued(outer);
	woken = release_counted(outer->l, &yielded);
	ck_assert_uint_eq(woken, 1);
	ck_assert_msg(yielded == 1, "a release that woke its waiter yielded %lu times, not once",
	              yielded);
	ck_assert_int_eq(tk_reap(pid, 60), 0);

	/* still holding another lock: the yield waits for its release */
	ck_assert_int_eq(bakery_lock(outer->l), 0);
	ck_assert_int_eq(bakery_lock(inner->l), 0);
	pid = yield_waiter_queued(inner);
	woken = release_counted(inner->l, &yielded);
	ck_assert_uint_eq(woken, 1);
	ck_assert_msg(yielded == 0, "a release inside another lock yielded %lu times", yielded);
	ck_assert_int_eq(tk_reap(pid, 60), 0);
	woken = release_counted(outer->l, &yielded);
	ck_assert_uint_eq(woken, 0);
	ck_assert_msg(yielded == 1, "the outer release yielded %lu times, not once", yielded);

	for (unsigned k = 0; k < 2; k++) {
		bakery_lock_close(r[k].l);
		bakery_close(r[k].b);
		bakery_unlink(r[k].name);
	}
}
END_TEST

static Suite *wakeups_suite(void)
{
	Suite *s = suite_create("wakeups");
	TCase *tc = tcase_create("wakeups");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, one_release_wakes_one_waiter, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, the_next_but_one_wakes_at_the_holders_exit, TK_ALGO_FIRST,
	                    TK_ALGO_END);
	tcase_add_test(tc, black_white_parks_only_behind_tickets_ahead);
	/* the algorithms that count holders */
	tcase_add_loop_test(tc, one_exit_wakes_the_next_in_line, BAKERY_ALGO_LAMPORT,
	                    BAKERY_ALGO_BOULANGERIE + 1);
	tcase_add_loop_test(tc, a_holder_that_stays_does_not_hide_a_free_unit, BAKERY_ALGO_LAMPORT,
	                    BAKERY_ALGO_BOULANGERIE + 1);
	tcase_add_loop_test(tc, a_release_that_woke_a_waiter_yields, TK_ALGO_FIRST, TK_ALGO_END);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	/* the order asserted is FIFO among waiters that take their turn within
	 * the grace (bakery.h): no pass on a loaded machine here */
	setenv("BAKERY_PASS_GRACE_MS", "600000", 0);
	return unit_run(wakeups_suite());
}
