/* SPDX-License-Identifier: MIT */
/*
 * boulangerie.c - the Boulangerie algorithm.
 *
 *   Y. Moses, K. Patkin, "Mutual exclusion as a matter of priority",
 *   Theoretical Computer Science 751 (2018); Fig. 2, whose line
 *   numbers the comments cite.
 *
 * Lamport's Bakery with two changes to the testing region, both reducing
 * blocking: (6a) a process holding number 1 tests only the slots below it,
 * since only they can hold a better ticket; (8_j) it stops waiting on j after
 * two different consecutive reads of number[j], which prove that j left the
 * bakery in between.  Same guarantees and registers as Lamport; section 4
 * shows any mix of Bakery and Boulangerie participants is correct, so the
 * two may share a lock.  Crash: plain reset.  Abort: number := 0.
 *
 * Shared mode and k holders as in Lamport's (lamport.c): a reader's 8_j
 * also ends when j's passage is shared; a lock of k > 1 holders waits as
 * Lamport's does (common.c), without 6a and 8_j.
 */
#include "config.h"

#include "common.h"

struct testing {
	struct ticket me;
	bool have_prev;                 /* prev_n != bottom */
	uint64_t prev;
};

/* Lines 8_j a-e: one read of number[j] per evaluation. */
static bool priority_gained(struct bakery *b, unsigned lock, unsigned j, void *arg)
{
	struct testing *t = arg;
	uint64_t tmp = CMM_LOAD_SHARED(reg_of(b, lock, j)->number);   /* 8_j d */
	bool changed = t->have_prev && tmp != t->prev;

	t->prev = tmp;                                                  /* 8_j c */
	t->have_prev = true;
	return tmp == 0 || ticket_before(t->me.number, t->me.slot, tmp, j) || changed || /* 8_j e */
	       reader_passes(b, lock, j, t->me.shared);         /* both shared: no conflict */
}

/* 6b-8 for each other slot of the lock's active set below LIMIT. */
static __attribute__((noinline)) int wait_for_others(struct passage *p, uint64_t num,
                                                     unsigned limit)
{
	int err = bakery__park_behind(p);       /* two or more back: sleep once first */

	if (err) {
		bakery__number_abort(p);
		return err;
	}
	/* 6b, our predecessor last (algo.h: 6a bounds the set, not the
	 * order; with number 1, any ticket ahead is below us) */
	for_each_other_last(p, j, bound, p->pred) {
		struct testing t = { { num, p->self, p->shared }, false, 0 }; /* 8_j a */

		if (j >= limit)
			continue;
		/* 7_j and a first 8_j at a look (common.h); else from 7_j
		 * again, with a fresh 8_j a */
		if (doorway_idle_at_a_look(p->b, p->lock, j) &&
		    priority_gained(p->b, p->lock, j, &t))
			continue;
		t.have_prev = false;
		err = bakery__await_doorway_end(p, j);             /* 7_j */
		if (!err)
			err = bakery__await_slot(p, j, priority_gained, &t);    /* 8_j b-e */
		if (err) {
			bakery__number_abort(p);
			return err;
		}
	}
	return 0;
}

static int boulangerie_wait(struct passage *p)
{
	uint64_t num = CMM_LOAD_SHARED(p->mine->number);
	/* 6a: if number[i] = 1 then Limit := i - 1 else Limit := N */
	unsigned limit = num == 1 ? p->self : UINT32_MAX;

	if (p->via->holders > 1)
		return bakery__holders_wait(p);
	/* nobody else in the set: 6b has no j to visit */
	if (active_alone(p))
		return 0;
	return wait_for_others(p, num, limit);
}

const struct algo_ops bakery__algo_boulangerie = {
	.id = BAKERY_ALGO_BOULANGERIE,
	.name = "boulangerie",
	.modes = ALGO_SHARED | ALGO_HOLDERS,
	.doorway = bakery__number_doorway,                                      /* 3-5 */
	.doorway_biased = bakery__number_doorway_biased,                         /* 3-5, V1-V3 */
	.wait = boulangerie_wait,                                       /* 6a-8 */
	.exit = bakery__number_exit,                                            /* 10.1-10.2 */
	.exit_biased = bakery__number_exit_biased,                              /* and G1-G3 */
	.recover = bakery__plain_reset,
};
