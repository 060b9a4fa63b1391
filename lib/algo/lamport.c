/* SPDX-License-Identifier: MIT */
/*
 * lamport.c - Lamport's Bakery algorithm.
 *
 *   L. Lamport, "A New Solution of Dijkstra's Concurrent Programming
 *   Problem", CACM 17(8), 1974.  As presented in N. Lynch, "Distributed
 *   Algorithms", Morgan Kaufmann, 1996, section 10.7, and in the pseudocode
 *   of the Wikipedia article "Lamport's bakery algorithm", whose line
 *   numbers the comments below cite.
 *
 * Properties: mutual exclusion, lockout (starvation) freedom, FIFO after the
 * wait-free doorway.  Registers: choosing (a doorway counter: odd in the
 * doorway, see common.h; the paper's bit starves readers), number (64-bit, unbounded in
 * the paper; see NUMBER_LIMIT).  Crash: a dead slot is reset to choosing = 0,
 * number = 0, and reused only after the reset (model-checked: tests/model).
 * Abort: number := 0.
 *
 * Shared mode: a reader's line 13 also ends when j's passage is shared (a
 * reader need not wait for a reader); a writer's is unchanged.  k holders:
 * lines 8-14 become "wait for every doorway, then until fewer than k
 * tickets are ahead" (common.c).  Both model-checked: tests/model.
 *
 * The loops run over the lock's active set rather than 1..n: a slot outside
 * the set has choosing = number = 0, so skipping it changes no outcome.
 */
#include "config.h"

#include "common.h"

/*
 * Line 13: wait while number[j] != 0 and (number[j], j) < (number[i], i);
 * i.e. until number[j] = 0 or (number[i], i) < (number[j], j).
 */
static bool goes_after_us(struct bakery *b, unsigned lock, unsigned j, void *arg)
{
	const struct ticket *me = arg;
	uint64_t nj = CMM_LOAD_SHARED(reg_of(b, lock, j)->number);

	return nj == 0 || ticket_before(me->number, me->slot, nj, j) ||
	       reader_passes(b, lock, j, me->shared);   /* both shared: no conflict */
}

/* Lines 8-14 for each other slot of the lock's active set. */
static __attribute__((noinline)) int wait_for_others(struct passage *p)
{
	struct ticket me = { CMM_LOAD_SHARED(p->mine->number), p->self, p->shared };
	int err = bakery__park_behind(p);       /* two or more back: sleep once first */

	if (err) {
		bakery__number_abort(p);
		return err;
	}
	/* line 8, our predecessor last (algo.h) */
	for_each_other_last(p, j, bound, p->pred) {
		/* lines 10 and 13 at a first look (common.h) */
		if (doorway_idle_at_a_look(p->b, p->lock, j) &&
		    goes_after_us(p->b, p->lock, j, &me))
			continue;
		err = bakery__await_doorway_end(p, j);             /* line 10 */
		if (!err)
			err = bakery__await_slot(p, j, goes_after_us, &me);     /* line 13 */
		if (err) {
			bakery__number_abort(p);
			return err;
		}
	}
	return 0;
}

static int lamport_wait(struct passage *p)
{
	if (p->via->holders > 1)
		return bakery__holders_wait(p);
	/* nobody else in the set: lines 8-14 have no j to visit */
	if (active_alone(p))
		return 0;
	return wait_for_others(p);
}

const struct algo_ops bakery__algo_lamport = {
	.id = BAKERY_ALGO_LAMPORT,
	.name = "lamport",
	.modes = ALGO_SHARED | ALGO_HOLDERS,
	.doorway = bakery__number_doorway,                                      /* lines 5-7 */
	.doorway_biased = bakery__number_doorway_biased,                         /* lines 5-7, V1-V3 */
	.wait = lamport_wait,                                           /* lines 8-14 */
	.exit = bakery__number_exit,                                            /* line 18 */
	.exit_biased = bakery__number_exit_biased,                              /* and G1-G3 */
	.recover = bakery__plain_reset,
};
