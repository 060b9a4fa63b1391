/* SPDX-License-Identifier: MIT */
/*
 * pass.h - pass.c: passing a waiter that does not take its turn.
 *
 * Every slot has, in every lock, a pass word (struct bakery_shm_reg.pass):
 *
 *   IDLE         0               not passable (idle, doorway, spinning on a
 *                                fast path, critical section)
 *   WAITING      1               its owner is in the waiting phase and has
 *                                met a condition that was false: it may be
 *                                passed
 *   PASSING(p)   p << 2 | 2      slot p won WAITING -> PASSING(p) and is
 *                                clearing the waiter's registers for it
 *   CLEARED(p)   p << 2 | 3      p's clear is done; the owner resets to IDLE
 *
 * The owner stores WAITING (pass_publish) and, before it enters the critical
 * section or leaves the wait, takes it back with WAITING -> IDLE (pass_close).
 * One compare-and-swap on one word decides between the owner and a passer:
 * the owner enters only if it won, a passer clears only if it won.  A passed
 * owner touches its registers again only after CLEARED (pass_settle): a
 * passer's late store can then never clear a newer ticket.  A passer that dies
 * between PASSING and CLEARED is finished by its recoverer (pass_recover),
 * which owns its death exactly once.
 */
#ifndef BAKERY_PASS_H
#define BAKERY_PASS_H

#include "passage.h"

#define PASS_IDLE      0u
#define PASS_WAITING   1u
#define PASS_PASSING   2u
#define PASS_CLEARED   3u
#define PASS_STATE(w)  ((w) & 3u)
#define PASS_BY(w)     ((w) >> 2)
#define PASS_WORD(state, slot) ((uint32_t)(slot) << 2 | (state))

/* Internal answer of pass_close for an owner that was passed: it must not
 * enter; lock.c settles and starts a new attempt.  (The waits of a passed
 * owner return 0 at once, so that the algorithm's loop ends without an
 * abort of its own: the passer cleared its ticket.)  Never seen by a caller
 * of the library (not an errno, not a BAKERY_E* code). */
#define BAKERY_EPASSED (-1)

/* A passer's view of the waiter it waits on (both times CLOCK_MONOTONIC):
 * since when we have waited on it while it was passable (the turn is looked
 * at only after G/4 of that: a hand-over costs no scan of the line), and
 * since when its turn has come, for the same ticket, and it has not taken it. */
struct pass_watch {
	unsigned slot;
	bool started, armed;
	struct timespec began;
	uint64_t number;             /* its ticket when `since` began */
	struct timespec since;
};

/* The grace G in nanoseconds (BAKERY_PASS_GRACE_MS, read once; default
 * BAKERY_PASS_GRACE_DEFAULT_MS); 0: passing is off. */
BAKERY_HIDDEN long bakery__pass_grace_ns(void);

/* The owner: now passable (first false condition of a blocking or timed
 * wait).  Cheap: one plain store, once per attempt. */
BAKERY_HIDDEN void bakery__pass_publish_slow(struct passage *p);
static inline void bakery__pass_publish(struct passage *p)
{
	if (!p->pass_published && p->pass_phase && p->dl->mode != WAIT_NONE)
		bakery__pass_publish_slow(p);
}

/* The owner, waiting: has it been passed?  (then its waits end at once
 * instead of waiting on a stale view) */
static inline bool bakery__pass_was_passed(const struct passage *p)
{
	return p->pass_published && CMM_LOAD_SHARED(p->mine->pass) != PASS_WAITING;
}

/* The owner, its wait over (ERR its answer): take the word back.  Returns
 * ERR, or BAKERY_EPASSED if ERR is 0 and it was passed meanwhile (it then
 * must not enter: settle, and start again).  A wait that failed (timeout,
 * region lost) after a pass returns its error; the pass is settled before
 * the next attempt.  Ends the passage's passable phase: called again, it
 * returns ERR.  An algorithm whose last waiting step or abort writes a
 * shared register (Jayanti's X, its proxy word) calls it with ERR = 0
 * before that step: only the winner of the word may take it. */
BAKERY_HIDDEN int bakery__pass_close(struct passage *p, int err);

/* The owner, before a doorway or after a pass: wait until no pass of its
 * registers is in progress, and reset the word.  0; EBUSY for a trylock
 * (which never waits for this); ETIMEDOUT, ECANCELED, EINTR
 * (bakery__wait_over); BAKERY_EBADREGION. */
BAKERY_HIDDEN int bakery__pass_settle(struct passage *p);

/* A waiter on slot J: pass J if its turn came at least G ago by our watch
 * and it has not taken it.  True if we passed it (its registers are clear,
 * or, Jayanti, its passage is left to a proxy). */
BAKERY_HIDDEN bool bakery__pass_consider(struct passage *p, unsigned j, struct pass_watch *w);
/* The same for a trylock, which keeps its watch between calls (per thread). */
BAKERY_HIDDEN bool bakery__pass_consider_once(struct passage *p, unsigned j);

/* How long a waiter on J may sleep at most: CAP, shortened while J is
 * passable so that the waiter wakes to watch it. */
BAKERY_HIDDEN long bakery__pass_sleep_cap(struct passage *p, unsigned j, long cap);

/* Crash recovery of SLOT in LOCK, before its registers are cleared: its own
 * word stops being passable, and every pass it started is finished, with
 * PASS_ABORT (the lock's algorithm's, as in struct passage; NULL: the plain
 * reset).  PASS_ABORT must be idempotent: a recoverer may redo what the
 * dead passer had done of it. */
BAKERY_HIDDEN void bakery__pass_recover(struct bakery *b, unsigned lock, unsigned slot,
                                        void (*pass_abort)(struct bakery *, unsigned, unsigned));

#endif /* BAKERY_PASS_H */
