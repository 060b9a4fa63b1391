/* SPDX-License-Identifier: MIT */
/*
 * exitfence.h - exitfence.c: an exit's ticket store without its barrier,
 * the barrier made instead by the waiters that go to sleep.
 *
 * An exit clears its ticket, then loads its line's waiter count to wake
 * the sleepers (wait.h, bakery__reg_signal).  A store->load barrier
 * between the two (a locked instruction, about a sixth of an uncontended
 * passage) pairs with the waiter's barrier between its count increment
 * and its re-read of the ticket.  Without either, on x86 the store may
 * still sit in the exiter's store buffer while its load reads the count
 * from before the increment, and the waiter, reading the old ticket,
 * sleeps with nobody to wake it.
 *
 * In a lock where nobody has slept yet, the barrier moves to the side
 * that sleeps, which makes a system call anyway: after its increment and
 * barrier, the first waiter to sleep makes membarrier(MEMBARRIER_CMD_
 * GLOBAL_EXPEDITED), a full barrier on every CPU that runs a thread of a
 * process registered for it.  Either an exiter's store was made before
 * that barrier, and is drained by it before our re-read, or its load of
 * the count comes after it and sees our increment.  (The slot revocation,
 * revoke.c, and liburcu's urcu-memb flavour pair a plain fast side with
 * membarrier the same way.)  That waiter also marks the lock: its
 * lock_fences goes from 0 to SETTING before the membarrier and to SET
 * after it, and from then on every exit of the lock makes its barrier
 * again and no waiter makes the membarrier (an interrupt of every running
 * participant on every sleep would cost a contended lock a fifth of its
 * throughput).  An exit reads lock_fences after its store: one that saw 0
 * read it before SETTING, its store came before that, and the setter's
 * membarrier drained it; a waiter that reads SET re-reads the ticket after
 * that membarrier.  A waiter that reads SETTING makes its own.  A setter
 * that dies before SET leaves the lock at SETTING: its waiters keep making
 * the membarrier, correct and slower.
 *
 * The mark wears off where nobody sleeps any more: on every
 * EXIT_AGE_PASSAGES-th passage of a slot in the lock, an exit that
 * fenced moves SET to STALE, and STALE to 0 (compare-and-swap each); a
 * waiter that finds STALE puts SET back (a compare-and-swap that may
 * fail, the word having gone to 0 meanwhile) and makes no membarrier.
 * So a lock contended once, then left to one process, skips its barrier
 * again after one or two thousand passages, and a lock whose waiters
 * sleep more often than that keeps its mark.  Lowering the word needs no
 * membarrier: a waiter that read SET or STALE read it after its count
 * increment and barrier; an exit that reads the 0 an ager stored reads it
 * after that, and its load of the count comes after its load of the word
 * (x86 keeps loads in order), so it sees the waiter's count and wakes it.
 * SETTING is never aged: its setter's membarrier may still be to come.
 *
 * An exit skips its barrier only when its process registered for the
 * expedited barrier at open (so that the waiters' barriers reach it), the
 * region's exit_fences is 0 and the lock's lock_fences is 0.  A process
 * that cannot make the barrier (membarrier refused: a seccomp profile,
 * Linux < 4.16) sets exit_fences for good at open, before it takes any
 * ticket, and always fences its own exits.  An exiter may have read
 * exit_fences as 0 just before it was set, and the setter cannot drain
 * it: the setter's waiters cap their sleeps at FENCE_GRACE_SLEEP_NS for
 * FENCE_GRACE_NS after the open, so that a wake-up lost in that window
 * (the exiter's few instructions between its store and its load) costs
 * milliseconds, never a hang.
 *
 * x86 only: elsewhere the release store is itself a full barrier
 * (algo.h, bakery_release) and there is nothing to gain.  Modelled, with
 * the variants that lose a wake-up, in tests/model/exit_wake.pml.
 */
#ifndef BAKERY_EXITFENCE_H
#define BAKERY_EXITFENCE_H

#include "futex.h"
#include "handle.h"

/* A lock's mark wears off after this many passages of one slot without a
 * sleeper, or twice as many (above): a membarrier's few microseconds
 * spread over a thousand passages, each a barrier cheaper. */
#define EXIT_AGE_PASSAGES 1024u

/* At open (not read-only): register, or make the region's exits fence. */
BAKERY_HIDDEN void bakery__exit_fences_join(struct bakery *b);

/* An exit's step down of lock E's mark: SET to STALE, STALE to 0.
 * Returns MINE, the exiter's registers, so that the exit need not keep
 * them on its stack across the call. */
BAKERY_HIDDEN struct bakery_shm_reg *bakery__exit_fences_age(struct bakery_shm_lock *e,
                                                             struct bakery_shm_reg *mine)
	__attribute__((cold));

/* After an exit's plain store to its ticket in lock E of B: must it
 * fence? */
static inline bool exit_fence_wanted(const struct bakery *b, const struct bakery_shm_lock *e)
{
	return (CMM_LOAD_SHARED(b->hdr->exit_fences) | CMM_LOAD_SHARED(e->lock_fences)) != 0;
}

BAKERY_HIDDEN long bakery__exit_fence_make(struct bakery *b, struct bakery_shm_lock *e,
                                           long cap_ns) __attribute__((cold));

/*
 * A waiter in lock E, after its waiter count and the barrier behind it
 * and before its re-read of a ticket that an exit clears: the exiters'
 * barrier, unless the lock's exits make their own (SET; STALE is put back
 * to SET out of line).  Returns the cap of
 * the sleep that follows: CAP_NS, or a shorter one where a wake-up may be
 * lost (above).
 */
static inline long bakery__exit_fence_remote(struct bakery *b, struct bakery_shm_lock *e,
                                             long cap_ns)
{
	if (caa_likely(b->exits_unfenced) &&
	    caa_likely(CMM_LOAD_SHARED(e->lock_fences) == LOCK_FENCES_SET))
		return cap_ns;
	return bakery__exit_fence_make(b, e, cap_ns);
}

#endif /* BAKERY_EXITFENCE_H */
