/* SPDX-License-Identifier: MIT */
/*
 * bug-jayanti-abort.c - regression test (it was the reproducer of a fixed
 * library bug).  Needs the test build (crash points); no hostile write is
 * involved.
 *
 * Jayanti lock, slot D dies in its doorway after publishing its token
 * (crash point "doorway-token": gettoken still 1).  Thread T then:
 *   bakery_trylock      EBUSY (D is "choosing"): T's passage is aborted and
 *                       left for a proxy to complete (jay_abort);
 *   bakery_timedlock    jay_prepare drives T's own aborted passage, which is
 *                       blocked by D; D is proven dead and recovered, its
 *                       own passage is now pending by proxy too, and
 *                       proxy_drive() only waits for D to stop blocking
 *                       (proxy_unblocked) - nobody drives D's proxy.  T
 *                       polls until its deadline: ETIMEDOUT (bakery_lock:
 *                       for ever).  A bakery_recover from anyone unblocks it.
 *
 * The fix: when the slot k that blocks a proxy passage has a proxy passage
 * of its own pending, proxy_drive() drives k's first.  (A trylock now also
 * checks D's liveness itself, so it may complete D's passage and acquire.)
 *
 * Exit status: 0 if the timed lock succeeds, 1 if not.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hostile.h"

static char region[TK_NAME_SIZE];

/* D: dies inside its doorway, token published. */
static int dies_in_doorway(void *unused)
{
	bakery_t *b;
	bakery_lock_t *l;

	setenv("BAKERY_CRASH_AT", "doorway-token", 1);
	if (bakery_open(region, 0, NULL, &b) ||
	    bakery_lock_open(b, "j", BAKERY_ALGO_JAYANTI, &l))
		return 10;
	bakery_lock(l);
	return 11;              /* the crash point did not fire */
}

static int abort_then_lock(void *unused)
{
	struct timespec deadline;
	bakery_t *b;
	bakery_lock_t *l;

	int err;

	/* NORECOVER: opening would reap D at once; the point is the lock
	 * calls meeting it */
	if (bakery_open(region, BAKERY_NORECOVER, NULL, &b) ||
	    bakery_lock_open(b, "j", BAKERY_ALGO_JAYANTI, &l))
		return 20;
	/* a trylock checks the liveness of the slot it would wait on: it may
	 * prove D dead, complete D's passage and acquire, or give up */
	err = bakery_trylock(l);
	if (err == 0)
		return bakery_unlock(l) ? 23 : 0;
	if (err != EBUSY)
		return 21;
	deadline = tk_in(CLOCK_REALTIME, 3);
	if (bakery_timedlock(l, &deadline) != 0)
		return 22;
	return bakery_unlock(l) ? 23 : 0;
}

int main(void)
{
	bakery_t *b = h_region(region, "jayabort", 4, 1);
	bakery_lock_t *l = h_lock(b, "j", BAKERY_ALGO_JAYANTI);
	int st = tk_reap(tk_fork(dies_in_doorway, NULL), 10);

	if (st != 128 + 9) {
		printf("setup failed: the doorway crash point did not fire (%d)\n", st);
		return 1;
	}
	bakery_lock_close(l);
	bakery_close(b);
	return h_survives("Jayanti: trylock abort behind a slot dead in its doorway, then timedlock",
	                  abort_then_lock, NULL, 10);
}
