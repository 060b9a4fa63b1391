/* SPDX-License-Identifier: MIT */
/*
 * common.h - steps the Bakery-family algorithms share.
 */
#ifndef BAKERY_ALGO_COMMON_H
#define BAKERY_ALGO_COMMON_H

#include "algo.h"
#include "bias.h"
#include "futex.h"
#include "order.h"
#include "registry.h"

/* Numbers never wrap: a value near the top of the register can only come
 * from a corrupted or hostile region (2^62 passages are centuries away). */
#define NUMBER_LIMIT (UINT64_C(1) << 62)

/* A ticket (number, slot) for the lexicographic comparisons of the papers
 * (ticket_before, order.h), and the mode of its passage. */
struct ticket {
	uint64_t number;
	unsigned slot;
	bool shared;
};

/*
 * Shared mode: a reader need not wait for a reader.  Called with j's ticket
 * just read and found ahead of ours (or undecided): may a reader (SHARED)
 * pass j because j's passage is shared too?  j's mode is read after its
 * ticket (load->load), pairing with the store_mb() that opens j's doorway
 * after its mode store (lock.c): the mode read is that of the ticket's
 * passage, or of a later one, which began after that passage had left.
 * Either way the passage whose ticket we read does not exclude us
 * (model-checked: tests/model, shared configurations).
 */
static inline bool reader_passes(struct bakery *b, unsigned lock, unsigned j, bool shared)
{
	if (!shared)
		return false;
	cmm_smp_rmb();
	return CMM_LOAD_SHARED(reg_of(b, lock, j)->mode) == REG_SHARED;
}

/* Does j's passage exclude ours (read after j's ticket, as above)?  Only
 * guides where to park and how long to spin: never decides entry. */
static inline bool conflicts(struct passage *p, unsigned j)
{
	return !reader_passes(p->b, p->lock, j, p->shared);
}

/* Count an abort before the reset that undoes the passage (the test
 * build's bound assertions look at it). */
static inline void count_abort(struct passage *p)
{
	CMM_STORE_SHARED(p->mine->aborts, p->mine->aborts + 1);
	cmm_smp_wmb();
}

/*
 * `choosing` is a doorway counter, not a bit: odd while its owner is in the
 * doorway, one more at each end of it (a recoverer or passer resets it to
 * 0).  "await choosing[j] = 0" becomes "await choosing[j] even, or another
 * value than the odd one first read": a doorway seen in progress has ended
 * even if j is already in its next one.  With the bit, a waiter could find
 * j choosing every time it looked while j, a reader passing a reader or a
 * holder of a k-holder lock, came back again and again: the waiter starved
 * (model-checked: tests/model, shared and k-holder configurations).
 */
static inline uint32_t doorway_count_open(uint32_t c)
{
	return (c & 1) ? c + 2 : c + 1;         /* odd, and another value */
}

/* await the end of j's doorway in progress, if any (the line of each paper
 * that awaits choosing[j] = false) */
BAKERY_HIDDEN int bakery__await_doorway_end(struct passage *p, unsigned j);

/*
 * The first look of a wait loop at slot j: is j out of its doorway (its
 * count even), so that its ticket may be read next?  The load the first
 * poll of bakery__await_doorway_end makes, without the await's set-up.
 * A loop whose conditions on j both hold at this first look (the doorway's,
 * then the ticket's, read after it) goes on to the next slot; otherwise it
 * awaits j as the paper says, from the doorway's line again.  Far back in a
 * crowd most slots are behind us and pass at a look, sparing the awaits'
 * set-up for each (docs/performance.md, "The first look").
 */
static inline bool doorway_idle_at_a_look(struct bakery *b, unsigned lock, unsigned j)
{
	if (CMM_LOAD_SHARED(reg_of(b, lock, j)->choosing) & 1)
		return false;
	/* choosing[j] before j's ticket (load->load), as the papers' doorway
	 * line before their ticket line; pairs with the store->store order of
	 * j's doorway (its ticket before its choosing := false) */
	cmm_smp_rmb();
	return true;
}

/* The doorway of Lamport and Boulangerie: choosing, max + 1, publish.
 * Always 0.  The doorway of such a lock made biased: the same, with the
 * revocation after its first line (algo/bias.h); 0, or ENOTSUP: the
 * revocation's membarrier was refused. */
BAKERY_HIDDEN int bakery__number_doorway(struct passage *p);
BAKERY_HIDDEN int bakery__number_doorway_biased(struct passage *p);

/* Exit and abort by number := 0 (Lamport, Boulangerie). */
BAKERY_HIDDEN void bakery__number_exit(const struct bakery_lock *l, struct bakery_shm_reg *mine,
                                       bool shared);
BAKERY_HIDDEN void bakery__number_exit_biased(const struct bakery_lock *l,
                                              struct bakery_shm_reg *mine, bool shared);
BAKERY_HIDDEN void bakery__number_abort(struct passage *p);

/* The wait of a lock of k > 1 holders, for algorithms whose tickets form
 * one fixed order (Lamport, Boulangerie): enter once fewer than k tickets
 * are ahead of ours. */
BAKERY_HIDDEN int bakery__holders_wait(struct passage *p);


/* A dead slot's plain reset: choosing := 0, number := 0 (model-checked,
 * tests/model: safe for Lamport, Boulangerie and Black-White, in either order). */
BAKERY_HIDDEN unsigned bakery__plain_reset(struct bakery *b, unsigned lock, unsigned slot);

#ifdef BAKERY_TESTING
/* Has LOCK seen a crash recovery, a pass or an abort?  (bounds loosen after one) */
BAKERY_HIDDEN bool bakery__lock_faulted(struct bakery *b, unsigned lock);
#endif

#endif
