/* SPDX-License-Identifier: MIT */
/*
 * slotwait.h - slotwait.c: waiting for a free slot.
 */
#ifndef BAKERY_SLOTWAIT_H
#define BAKERY_SLOTWAIT_H

#include "wait.h"

/*
 * This thread's slot in B, as bakery__slot_self, kept ours for a lock call
 * (bakery__slot_busy_begin: ESTALE if it had been revoked, and then the
 * caller asks again); when every slot is taken (or being recovered), wait
 * for one to be freed, or take an idle thread's, within DL: EBUSY for a
 * try (WAIT_NONE), ETIMEDOUT once DL's time has come (ECANCELED or EINTR
 * once bakery_acquire's options say stop).  Cancellation is off
 * for the claims (bakery__slot_self); the sleeps are no cancellation point.
 */
BAKERY_HIDDEN int bakery__slot_self_wait(struct bakery *b, unsigned *slot,
                                         const struct deadline *dl);

/* Called after an unlock when the region's slot_wanted is set: give the
 * calling thread's slot of B back if a thread is waiting for one (the
 * stamp is fresh) and this thread holds no other lock of B. */
BAKERY_HIDDEN void bakery__slot_give_back_if_wanted(struct bakery *b);

#endif /* BAKERY_SLOTWAIT_H */
