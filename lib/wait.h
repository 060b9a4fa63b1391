/* SPDX-License-Identifier: MIT */
/*
 * wait.h - wait.c: waiting on another slot's registers, and waking its
 * waiters after a register change.
 */
#ifndef BAKERY_WAIT_H
#define BAKERY_WAIT_H

#include "passage.h"
#include "registry.h"
#include "stop.h"

/* A condition on another slot's registers, re-evaluated on every wake-up. */
typedef bool (*await_fn)(struct bakery *b, unsigned lock, unsigned j, void *arg);

/*
 * Read once per process what a wait needs to know of the system (the CPU
 * count: glibc reads it from sysfs, 5-35 us, most of a late arrival's
 * recovery), so that the first wait, which may be the recovery of a dead
 * holder's slot, does not pay for it.  Called when a lock is opened.
 */
BAKERY_HIDDEN void bakery__wait_prepare(void);
/*
 * Wait until cond(j) holds.  0 when it holds; EBUSY (WAIT_NONE), ETIMEDOUT,
 * ECANCELED or EINTR (bakery__wait_over) when giving up.  A blocking or timed waiter that finds cond false becomes
 * passable (pass.c), and passes j if j's turn came and j has not taken it
 * for the grace G.  Once we have been passed it returns 0 at once: the
 * algorithm's loop ends, and lock.c finds out that we must not enter.  If j's owner dies meanwhile, its slot is recovered here and
 * cond is evaluated again on the cleared registers.  Wakes on a change of j's
 * registers, on the death of j's owner, and on a change of p->also.
 */
BAKERY_HIDDEN int bakery__await_slot(struct passage *p, unsigned j, await_fn cond, void *arg);
/*
 * Wait for j to leave its doorway (choosing = 0).  The doorway is wait-free
 * and short, so even a trylock spins for it briefly before giving up: a
 * trylock that failed on every doorway in progress would livelock a storm of
 * trylocks (each one's doorway failing all the others).
 */
BAKERY_HIDDEN int bakery__await_doorway(struct passage *p, unsigned j, await_fn cond, void *arg);
/* bakery__await_slot for a condition on j's choosing as well as its ticket
 * (a proxy passage's scan): woken by j's doorway too. */
BAKERY_HIDDEN int bakery__await_registers(struct passage *p, unsigned j, await_fn cond, void *arg);

/*
 * Before an algorithm's waiting loop: a waiter with two or more tickets
 * ahead sleeps once, on the line and liveness token of the ticket before
 * its predecessor's, until that ticket changes (its exit or abort), its
 * owner dies, or the deadline.  It wakes next in line, during its
 * predecessor's turn, and its loop spins on the predecessor for about a
 * wake-up (the next in line, which waits on the holder, is the only one
 * that spins): one sleep and one wake-up per acquisition instead of a sleep
 * on every slot still ahead and a wake-up of every sleeper of a line.  (The
 * test build's BAKERY_TEST_PARK_AHEAD parks a waiter with that many ahead
 * behind its predecessor itself.)  Only a wait: what lets us in is still
 * the algorithm's loop.  0, or BAKERY_EBADREGION; a deadline passing here
 * is left to the loop to report.
 */
BAKERY_HIDDEN int bakery__park_behind_slow(struct passage *p);
static inline int bakery__park_behind(struct passage *p)
{
	/* nobody ahead (the uncontended passage): not even a call */
	if (caa_likely(p->pred == BAKERY_NO_SLOT))
		return 0;
	return bakery__park_behind_slow(p);
}

/*
 * bakery__reg_signal: after a register change made with store_mb(), wake the
 * threads asleep on REG, if any registered before that barrier.  The futex
 * word `seq` is bumped only then: a waiter reads seq before raising the
 * waiter count and re-reads the registers after a barrier, so either we see
 * its count (and bump seq, which fails its futex wait or wakes it) or it sees
 * our change.  An uncontended release makes no system call and no extra
 * atomic operation.
 * It wakes those waiting on the ticket (`waiters`); a doorway's last write,
 * choosing := 0, calls bakery__reg_signal_doorway, which wakes those waiting
 * for choosing = 0 (`door_waiters`) only, so that a doorway nobody waits on
 * makes no system call.
 * bakery__reg_publish: either kind of change, after plain stores (slow
 * paths: recovery, proxy).
 */
/*
 * Wait until cond holds, where cond depends on the tickets of the slots in
 * AHEAD[0..*N) and on the lock-wide word p->also (a k-holder lock's
 * `exits`).  Every evaluation of cond refreshes AHEAD[0..*N) (the slots
 * whose tickets are ahead of ours, a subset of the previous list, in
 * increasing order), p->crowd (their number) and p->pred (the latest).
 * With more than p->via->holders of them ahead, the latest is a waiter we
 * cannot pass: we sleep on its line and token until it enters
 * (bakery__reg_signal_entry), leaves or dies.  Otherwise we are next in
 * line: we sleep on p->also and on the liveness tokens of those ahead (as
 * many as one futex_waitv takes), so that any exit or abort in the lock
 * and the death of any of them wakes us.  So an exit wakes the next in
 * line, not everyone.  Dead owners among them are recovered before cond
 * is evaluated again.  A blocking or timed waiter that sleeps becomes
 * passable (pass.c) and sleeps on its own pass word too; it passes any
 * slot ahead whose turn came and was not taken for the grace G.
 * Same returns as bakery__await_slot (0 at once once we were passed).
 */
BAKERY_HIDDEN int bakery__await_any(struct passage *p, const unsigned *ahead, const unsigned *n,
                                    await_fn cond, void *arg);
/* After we found our turn in a lock that bakery__await_any waits on: bump
 * our line's futex word (with a full barrier before, ordering our reads of
 * the tickets first, and after, before the load of the waiter count) and
 * wake the waiter parked behind us, if one registered. */
BAKERY_HIDDEN void bakery__reg_signal_entry(struct bakery_shm_reg *reg);
/* After a change that cond of bakery__await_any depends on: bump WORD
 * (with a full barrier before, ordering the change first, and after, before
 * the load of SLEEPERS) and wake its sleepers, if any registered. */
BAKERY_HIDDEN void bakery__word_signal(uint32_t *word, uint32_t *sleepers);

/* Bump REG's `seq` and wake its sleepers: the slow half of the signals
 * below, taken only when a waiter registered. */
BAKERY_HIDDEN void bakery__reg_wake(struct bakery_shm_reg *reg) __attribute__((cold));

static inline void bakery__reg_signal(struct bakery_shm_reg *reg)
{
	if (caa_unlikely(CMM_LOAD_SHARED(reg->waiters)))
		bakery__reg_wake(reg);
}

static inline void bakery__reg_signal_doorway(struct bakery_shm_reg *reg)
{
	if (caa_unlikely(CMM_LOAD_SHARED(reg->door_waiters)))
		bakery__reg_wake(reg);
}

BAKERY_HIDDEN void bakery__reg_publish(struct bakery_shm_reg *reg);

#endif /* BAKERY_WAIT_H */
