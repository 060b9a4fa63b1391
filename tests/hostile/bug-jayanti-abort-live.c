/* SPDX-License-Identifier: MIT */
/*
 * bug-jayanti-abort-live.c - regression test: the reproducer of a library
 * bug fixed in commit 634074e (a proxy drive now notices that the slot it
 * waits on died, and drives that slot's passage).  The same bug as
 * bug-jayanti-abort.c, reached in the normal build, with the death coming
 * while the waiter already waits.
 *
 * Jayanti lock.  Slot D is in its doorway (gettoken = 1, token published)
 * when thread T arrives:
 *   bakery_trylock      EBUSY (D is choosing): T's passage is aborted and
 *                       left for a proxy to complete (jay_abort);
 *   D dies              (SIGKILL, still in the doorway);
 *   bakery_timedlock    jay_prepare drives T's own aborted passage, which D
 *                       blocks; D is proven dead and recovered, its passage
 *                       is now pending by proxy too, and T must drive it
 *                       (before the fix: ETIMEDOUT at the deadline, and
 *                       bakery_lock waited for ever).
 * No forged data is needed: the doorway state is what a participant killed
 * between publishing its token and clearing gettoken leaves (crash point
 * "doorway-token"); it is written here by a live participant into its own
 * registers so that T's trylock meets it alive, in the normal build.
 *
 * Before the fix, proxy_drive() drove a blocking slot's pending proxy
 * passage only when it was pending at the step; one left pending while the
 * drive already waited on the slot (proxy_unblocked) was never driven.
 *
 * Exit status: 0 if the timed lock succeeds, 1 if not.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hostile.h"

struct stage {
	char region[TK_NAME_SIZE];
	struct tk_gate ready, die, aborted;
};

/* D: a real participant that stops in its doorway, then dies there. */
static int in_doorway(void *arg)
{
	struct stage *st = arg;
	struct bakery_shm_reg *reg;
	struct raw raw;
	bakery_t *b;
	bakery_lock_t *l;
	int slot;

	if (bakery_open(st->region, 0, NULL, &b) ||
	    bakery_lock_open(b, "j", BAKERY_ALGO_JAYANTI, &l) || bakery_lock(l) || bakery_unlock(l))
		return 10;
	slot = tk_self_slot(b);
	if (slot < 0)
		return 11;
	raw_map(&raw, st->region);
	reg = raw_reg(&raw, h_lock_index(l), (unsigned)slot);
	/* lines 1-4 of the doorway: gettoken := 1, a token published */
	CMM_STORE_SHARED(reg->choosing, 1);
	CMM_STORE_SHARED(reg->number, CMM_LOAD_SHARED(raw.locks[h_lock_index(l)].jayanti_x) + 2);
	CMM_STORE_SHARED(reg->stage, BAKERY_PASS_DOORWAY);
	cmm_smp_mb();
	tk_gate_open(&st->ready);
	tk_gate_wait(&st->die, 30);
	raise(SIGKILL);
	return 12;
}

static int abort_then_lock(void *arg)
{
	struct stage *st = arg;
	struct timespec deadline;
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(st->region, 0, NULL, &b) ||
	    bakery_lock_open(b, "j", BAKERY_ALGO_JAYANTI, &l))
		return 20;
	if (bakery_trylock(l) != EBUSY)
		return 21;
	tk_gate_open(&st->aborted);
	deadline = tk_in(CLOCK_REALTIME, 3);
	if (bakery_timedlock(l, &deadline) != 0)
		return 22;
	return bakery_unlock(l) ? 23 : 0;
}

/* The victim, with D killed once the victim's trylock has given up. */
static int scenario(void *arg)
{
	struct stage *st = arg;
	pid_t d = tk_fork(in_doorway, st), t;
	int rc;

	if (!tk_gate_wait(&st->ready, 10))
		return 30;
	t = tk_fork(abort_then_lock, st);
	if (!tk_gate_wait(&st->aborted, 10)) {
		tk_gate_open(&st->die);
		tk_reap(d, 10);
		return tk_reap(t, 10);
	}
	tk_gate_open(&st->die);
	tk_reap(d, 10);
	rc = tk_reap(t, 10);
	return rc;
}

int main(void)
{
	struct stage *st = tk_shared(sizeof(*st));
	bakery_t *b = h_region(st->region, "jayabort", 4, 1);
	bakery_lock_t *l = h_lock(b, "j", BAKERY_ALGO_JAYANTI);

	bakery_lock_close(l);
	bakery_close(b);
	tk_gate_init(&st->ready);
	tk_gate_init(&st->die);
	tk_gate_init(&st->aborted);
	return h_survives("Jayanti: trylock abort behind a slot in its doorway that then dies, "
	                  "then timedlock", scenario, st, 20);
}
