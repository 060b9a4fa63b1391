/* SPDX-License-Identifier: MIT */
/*
 * bug-shrink-sigbus.c - regression test (it was the reproducer of a fixed
 * library bug: the region is now watched by a SIGBUS guard, guard.c).
 *
 * A region shrunk (ftruncate) under a process that has it mapped: every
 * access to a page past the new end raises SIGBUS.  Any participant can do
 * it (it has the object open for writing); a new opener was always safe
 * (bakery_open compares the size, test_tables.c).  It used to kill the
 * victim on its next call.  Now the guard swaps the victim's view of the
 * region for private zero pages and every call answers BAKERY_EBADREGION:
 *
 *   idle participant, then bakery_lock              BAKERY_EBADREGION
 *   idle participant, then bakery_slot_info         BAKERY_EBADREGION
 *   holder in its critical section, then unlock     BAKERY_EBADREGION, then
 *                                                   bakery_close 0
 *   waiter asleep behind a holder when it happens   BAKERY_EBADREGION within
 *                                                   a few seconds (sleeps are
 *                                                   capped at one second)
 *
 * Exit status: 0 if every case gives its answer and nobody dies, 1 if not.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hostile.h"

enum victim_case { IDLE_LOCK, IDLE_INFO, HOLDER, SLEEPER };

struct stage {
	char region[TK_NAME_SIZE];
	struct tk_gate ready, go, holder_in;
	enum victim_case what;
};

/* The library's answers, checked; the exit status says which went wrong. */
static int victim(void *arg)
{
	struct stage *st = arg;
	struct bakery_slot_info si;
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(st->region, 0, NULL, &b) || bakery_lock_open(b, "s", 0, &l))
		return 10;
	if (st->what == SLEEPER) {
		/* queue behind the holder; the test cuts the region meanwhile */
		tk_gate_open(&st->ready);
		if (bakery_lock(l) != BAKERY_EBADREGION)
			return 12;
		return bakery_close(b) ? 13 : 0;
	}
	if (bakery_lock(l) || (st->what != HOLDER && bakery_unlock(l)))
		return 11;
	tk_gate_open(&st->ready);
	if (!tk_gate_wait(&st->go, 30))
		return 14;
	switch (st->what) {
	case IDLE_LOCK:
		if (bakery_lock(l) != BAKERY_EBADREGION)
			return 15;
		break;
	case IDLE_INFO:
		if (bakery_slot_info(b, 1, &si) != BAKERY_EBADREGION)
			return 16;
		break;
	default:
		if (bakery_unlock(l) != BAKERY_EBADREGION)
			return 17;
		break;
	}
	return bakery_close(b) ? 18 : 0;
}

/* Holds the lock until killed (the sleeper's case). */
static int holder(void *arg)
{
	struct stage *st = arg;
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(st->region, 0, NULL, &b) || bakery_lock_open(b, "s", 0, &l) ||
	    bakery_lock(l))
		return 20;
	tk_gate_open(&st->holder_in);
	pause();
	return 0;
}

static int shrink_case(const char *what, enum victim_case how)
{
	struct stage *st = tk_shared(sizeof(*st));
	bakery_t *b = h_region(st->region, "shrink", 4, 2);
	pid_t pid, hold = 0;
	struct raw raw;
	double t0;
	int rc;

	bakery_close(b);
	st->what = how;
	tk_gate_init(&st->ready);
	tk_gate_init(&st->go);
	tk_gate_init(&st->holder_in);
	if (how == SLEEPER) {
		hold = tk_fork(holder, st);
		if (!tk_gate_wait(&st->holder_in, 10)) {
			printf("setup failed: %s\n", what);
			return 1;
		}
	}
	pid = tk_fork(victim, st);
	if (!tk_gate_wait(&st->ready, 10)) {
		printf("setup failed: %s\n", what);
		return 1;
	}
	if (how == SLEEPER)
		usleep(200 * 1000);     /* past its spin, asleep in the kernel */
	raw_map(&raw, st->region);
	if (ftruncate(raw.fd, 4096) < 0) {
		perror("ftruncate");
		return 1;
	}
	t0 = tk_now(CLOCK_MONOTONIC);
	tk_gate_open(&st->go);
	rc = tk_reap(pid, 10);
	if (hold) {
		kill(hold, SIGKILL);
		tk_reap(hold, 10);
	}
	close(raw.fd);          /* the mapping's pages past the end are gone */
	if (rc == 0) {
		printf("ok:   %s (%.2f s)\n", what, tk_now(CLOCK_MONOTONIC) - t0);
		return 0;
	}
	printf("BUG:  %s: %s %d\n", what, rc > 128 ? "signal" : "status",
	       rc > 128 ? rc - 128 : rc);
	return 1;
}

int main(void)
{
	int bad = 0;

	bad += shrink_case("idle participant, region cut to one page, then bakery_lock", IDLE_LOCK);
	bad += shrink_case("idle participant, region cut to one page, then bakery_slot_info",
	                   IDLE_INFO);
	bad += shrink_case("holder, region cut to one page, then bakery_unlock and close", HOLDER);
	bad += shrink_case("waiter asleep when the region is cut to one page", SLEEPER);
	return bad ? 1 : 0;
}
