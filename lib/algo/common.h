/* SPDX-License-Identifier: MIT */
/*
 * common.h - steps the Bakery-family algorithms share.
 */
#ifndef BAKERY_ALGO_COMMON_H
#define BAKERY_ALGO_COMMON_H

#include "algo.h"
#include "futex.h"
#include "registry.h"

/* Numbers never wrap: a value near the top of the register can only come
 * from a corrupted or hostile region (2^62 passages are centuries away). */
#define NUMBER_LIMIT (UINT64_C(1) << 62)

/* A ticket (number, slot) for the lexicographic comparisons of the papers. */
struct ticket {
	uint64_t number;
	unsigned slot;
};

/* (a.number, a.slot) < (b.number, b.slot) */
static inline bool ticket_before(uint64_t na, unsigned ia, uint64_t nb, unsigned ib)
{
	return na < nb || (na == nb && ia < ib);
}

/* Count an abort before the reset that undoes the passage (the test
 * build's bound assertions look at it). */
static inline void count_abort(struct passage *p)
{
	CMM_STORE_SHARED(p->mine->aborts, p->mine->aborts + 1);
	cmm_smp_wmb();
}

/* await choosing[j] = 0 */
BAKERY_HIDDEN bool bakery__not_choosing(struct bakery *b, unsigned lock, unsigned j, void *unused);

/* The doorway of Lamport and Boulangerie: choosing, max + 1, publish. */
BAKERY_HIDDEN void bakery__number_doorway(struct passage *p);

/* Exit and abort by number := 0 (Lamport, Boulangerie). */
BAKERY_HIDDEN void bakery__number_exit(struct passage *p);
BAKERY_HIDDEN void bakery__number_abort(struct passage *p);

/* A dead slot's plain reset: choosing := 0, number := 0 (model-checked,
 * tests/model: safe for Lamport, Boulangerie and Black-White, in either order). */
BAKERY_HIDDEN unsigned bakery__plain_reset(struct bakery *b, unsigned lock, unsigned slot);

#ifdef BAKERY_TESTING
/* Has LOCK seen a crash recovery, a pass or an abort?  (bounds loosen after one) */
BAKERY_HIDDEN bool bakery__lock_faulted(struct bakery *b, unsigned lock);
#endif

#endif
