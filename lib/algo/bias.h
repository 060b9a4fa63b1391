/* SPDX-License-Identifier: MIT */
/*
 * bias.h - a biased Bakery lock (BAKERY_LOCK_BIASED, Lamport and
 * Boulangerie): the slot the lock is biased to takes and leaves it with
 * plain stores while nobody else comes, and a newcomer revokes the bias
 * with membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) before it reads any
 * ticket.  The protocol and its step names (B0-B4 the owner's fast path,
 * V1-V3 a revocation, G1-G3 a grant) are those of tests/model/bias.pml,
 * which checks it on TSO with a crash at every step; the fast path is the
 * model's FAST_CHOOSING=0 variant (no store to choosing).
 *
 * The word: the lock entry's `bias` (layout 9).  BIAS_OFF for a lock made
 * without the flag (no step below is ever taken in it), BIAS_NONE when
 * nobody holds the bias, BIAS_REVOKING while a revocation is under way,
 * BIAS_SLOT0 + s when slot s holds it.  x86 only: elsewhere (no TSO) the
 * bias is never granted, and a biased lock is an ordinary one.
 *
 * The idea is biased locking's (K. Kawachiya, A. Koseki, T. Onodera, "Lock
 * Reservation: Java Locks Can Mostly Do Without Atomic Operations", OOPSLA
 * 2002), here on a Bakery doorway, with the revoker's side of the barrier
 * made by the kernel for every CPU at once (membarrier(2)).
 */
#ifndef BAKERY_ALGO_BIAS_H
#define BAKERY_ALGO_BIAS_H

#include "algo.h"

#define BIAS_OFF        0u
#define BIAS_NONE       1u
#define BIAS_REVOKING   2u
#define BIAS_SLOT0      16u

/* A grant follows this many passages in a row of one slot whose doorway
 * found no other ticket, doubled by each revocation the lock has seen (up
 * to BIAS_BACKOFF_MAX doublings): a lock that two processes take in turn
 * pays a membarrier per revocation, and ever more rarely. */
#define BIAS_GRANT_PASSAGES 64u
#define BIAS_BACKOFF_MAX    12u

#if (defined(__x86_64__) || defined(__i386__)) && !defined(BAKERY_NO_BARRIERS)
#define BIAS_POSSIBLE 1
#else
#define BIAS_POSSIBLE 0
#endif

/*
 * The owner's fast path, B0-B4, for a lock whose handle says it is biased
 * (l->biased), in an exclusive passage: true if we hold the lock with the
 * ticket 1, stored plainly, without the doorway's barriers or the wait.
 * False: go through the doorway (which revokes if need be), our ticket 0.
 */
static inline bool bias_fast_entry(const struct bakery_lock *l, struct passage *p)
{
	uint32_t mine = BIAS_SLOT0 + p->self;

	if (CMM_LOAD_SHARED(l->entry->bias) != mine)                    /* B0 */
		return false;
	/* B2: number := 1, a plain store (any positive value: while the bias
	 * is ours nobody else holds a ticket).  It may sit in our store buffer
	 * while B4 loads (x86 does reorder a store with a later load): a
	 * revoker's CAS comes after our B4 load, and its membarrier after its
	 * CAS drains the store before the revoker reads any ticket. */
	CMM_STORE_SHARED(p->mine->number, 1);
	CRASH_POINT("bias-ticket");
	cmm_barrier();
	if (caa_likely(CMM_LOAD_SHARED(l->entry->bias) == mine))      /* B4 */
		return true;
	/* revoked meanwhile: the fast-path ticket is thrown away with a full
	 * barrier (the exchange drains our buffer first; pairs with nothing:
	 * it orders the store before our doorway's loads), and the passage
	 * goes through the doorway from its first line */
	store_mb(&p->mine->number, 0);
	bakery__reg_signal(p->mine);
	return false;
}

/*
 * V1-V3, in a biased lock's doorway after choosing[i] := 1 and its barrier:
 * load the bias word; if another slot holds the bias, or a revocation is
 * under way, revoke it and make the membarrier.  0, or ENOTSUP if this
 * process cannot make the membarrier (it was refused since the lock was
 * opened): the doorway must then end without a ticket.
 */
BAKERY_HIDDEN int bakery__bias_revoke(struct passage *p);

/* After a doorway of a biased lock that found the highest other ticket MAX:
 * count the passages in a row that found none. */
BAKERY_HIDDEN void bakery__bias_count(struct passage *p, uint64_t max);

/* The fewest lone passages after which a grant may be due: the test
 * build's BAKERY_TEST_BIAS_GRANT may ask for as few as one. */
#ifdef BAKERY_TESTING
#define BIAS_GRANT_LEAST 1u
#else
#define BIAS_GRANT_LEAST BIAS_GRANT_PASSAGES
#endif

/* After the exit of our passage in biased lock L through our registers
 * MINE: G1-G3 if our count says so.  The count is ours (a plain load), and
 * its common answer, "not yet" (always, for the owner of the bias, whose
 * passages skip the doorway that counts), is inline. */
BAKERY_HIDDEN void bakery__bias_grant_due(const struct bakery_lock *l,
                                          struct bakery_shm_reg *mine);
static inline void bakery__bias_grant(const struct bakery_lock *l, struct bakery_shm_reg *mine)
{
	if (BIAS_POSSIBLE && caa_unlikely(CMM_LOAD_SHARED(mine->lone_passages) >= BIAS_GRANT_LEAST))
		bakery__bias_grant_due(l, mine);
}

#endif /* BAKERY_ALGO_BIAS_H */
