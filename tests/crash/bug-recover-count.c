/* SPDX-License-Identifier: MIT */
/*
 * bug-recover-count.c - regression test (it was the reproducer of a fixed
 * library bug).  Needs the test build (crash points).
 *
 * bakery_recover(b, &reclaimed) documents *reclaimed as the number of slots
 * freed.  It counts a slot only when the same step both proved the death
 * (EOWNERDEAD on the token) and saw the slot FREE.  A Jayanti slot whose
 * passage must be completed by proxy, blocked at first by another dead
 * passage, is proven dead in one step and freed in a later one (or by a
 * concurrent recoverer): freed, never counted.
 *
 * Here: A takes slot 0 (one passage alone), B takes slot 1 and dies waiting
 * with a token; A then dies waiting with a later token.  A's proxy passage
 * waits for B's.  One bakery_recover frees both slots but reports 1.
 * (Two concurrent bakery_recover calls show the same: crash-recover's
 * racing test prints reclaimed counts summing below the slots freed.)
 *
 * The fix: registry.c's reap step counts every slot that was not FREE when
 * its token was taken and is FREE when it is let go.
 *
 * Exit status: 0 if the count is right, 1 if not, 99 on a setup failure.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/system.h>

#include "crashkit.h"

struct shared {
	struct occupancy occ;
	struct crash_part a, b;
	volatile int a_ready;
};

static struct shared *sh;

/* A: one passage alone (its slot is the lowest), then another, when told,
 * in which it dies at the crash point "waiting:2". */
static int a_run(void *arg)
{
	struct crash_part *p = arg;
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(p->region, BAKERY_NORECOVER, NULL, &b) || bakery_lock_open(b, CRASH_LOCK, p->algo, &l))
		return 1;
	if (bakery_lock(l) || bakery_unlock(l))
		return 2;
	CMM_STORE_SHARED(sh->a_ready, 1);
	if (!tk_wait_flag(&p->go, 1, 20))
		return 3;
	bakery_lock(l);
	return 4;               /* not reached: killed at the crash point */
}

static void part_init(struct crash_part *p, const char *region, unsigned serial)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->region, sizeof(p->region), "%s", region);
	p->algo = BAKERY_ALGO_JAYANTI;
	p->serial = serial;
	p->occ = &sh->occ;
}

int main(void)
{
	char region[TK_NAME_SIZE];
	unsigned reclaimed = 0, used;
	bakery_t *b;
	bakery_lock_t *l;
	pid_t a;

	sh = tk_shared(sizeof(*sh));
	tk_name(region, TK_NAME_SIZE, "bug-count");
	if (crash_create(region, 8, &b) || bakery_lock_open(b, CRASH_LOCK, BAKERY_ALGO_JAYANTI, &l))
		return 99;
	part_init(&sh->a, region, 1);
	part_init(&sh->b, region, 2);
	a = crash_fork(a_run, &sh->a, "waiting:2");
	if (!tk_wait_flag(&sh->a_ready, 1, 10))
		return 99;
	if (tk_reap(crash_fork(crash_part_run, &sh->b, "waiting"), 10) != CRASH_SIGKILLED)
		return 99;
	CMM_STORE_SHARED(sh->a.go, 1);
	if (tk_reap(a, 10) != CRASH_SIGKILLED)
		return 99;
	if (crash_recover_in_child(region, &reclaimed))
		return 99;
	used = crash_slots_used(b);
	printf("bakery_recover: reclaimed %u, slots still in use %u (expected 2 and 0)\n",
	       reclaimed, used);
	bakery_lock_close(l);
	bakery_close(b);
	bakery_unlink(region);
	return reclaimed == 2 && used == 0 ? 0 : 1;
}
