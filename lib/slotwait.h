/* SPDX-License-Identifier: MIT */
/*
 * slotwait.h - slotwait.c: waiting for a free slot.
 */
#ifndef BAKERY_SLOTWAIT_H
#define BAKERY_SLOTWAIT_H

#include "wait.h"

/*
 * The lock layer's three calls on slots (lock.c): enter one for a lock
 * call, the current one (registry.h's bakery__slot_record_busy, or
 * bakery__slot_pin where we hold nothing by our count), leave it.
 */

/* bakery__slot_enter_until's slow half, after bakery__slot_enter's ERR: a
 * slot revoked while we were idle (ESTALE: claim another), or none free
 * (wait for one, or take an idle thread's); any other error is returned. */
BAKERY_HIDDEN int bakery__slot_enter_wait(struct bakery *b, const struct deadline *dl, int err,
                                          unsigned *slot) __attribute__((cold));

/*
 * Enter: this thread's slot in B (claimed on first use) into *SLOT, kept
 * ours for one lock call until bakery__slot_leave (not revoked meanwhile).
 * When every slot is taken (or being recovered), wait for one to be
 * freed, or take an idle thread's, within DL: EBUSY for a try (WAIT_NONE),
 * ETIMEDOUT once DL's time has come (ECANCELED or EINTR once
 * bakery_acquire's options say stop); a revocation of our own slot under
 * way is waited for as the lock would be.  Cancellation is off for the
 * claims (bakery__slot_self); the sleeps are no cancellation point.  The
 * common case, our slot still ours, is inline.
 */
static inline int bakery__slot_enter_until(struct bakery *b, const struct deadline *dl,
                                           unsigned *slot)
{
	int err = bakery__slot_enter(b, slot);

	if (caa_likely(!err))
		return 0;
	return bakery__slot_enter_wait(b, dl, err, slot);
}

/* Called when the region's slot_wanted is set and this thread is out of
 * its lock calls: give the calling thread's slot of B back if a thread is
 * waiting for one (the stamp is fresh) and this thread holds no lock of
 * B. */
BAKERY_HIDDEN void bakery__slot_give_back_if_wanted(struct bakery *b) __attribute__((cold));

/* Leave: the lock call through B's record T (bakery__slot_enter_until's or
 * bakery__slot_pin) ended without the lock, or the lock it held
 * was released.  Out of its last one, the thread gives its slot to a
 * thread waiting for one. */
static inline void bakery__slot_leave(struct bakery *b, struct thread_slot *t)
{
	bakery__record_busy_end(t);
	if (caa_unlikely(CMM_LOAD_SHARED(b->hdr->slot_wanted)))
		bakery__slot_give_back_if_wanted(b);
}

#endif /* BAKERY_SLOTWAIT_H */
