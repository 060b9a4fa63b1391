/* SPDX-License-Identifier: MIT */
/*
 * deadline.h - how long a call may wait: for ever, not at all, or until a
 * time, and what else may end the wait (bakery_acquire's cancel word and
 * signals, stop.h): the lock calls' deadline, carried through every layer
 * that waits (the lock table, a slot's revocation, slots, registers).
 * Header only.
 */
#ifndef BAKERY_DEADLINE_H
#define BAKERY_DEADLINE_H

#include "stop.h"

enum wait_mode { WAIT_BLOCK, WAIT_NONE, WAIT_DEADLINE };

struct deadline {
	enum wait_mode mode;
	clockid_t clock;
	struct timespec at;
	/* bakery_acquire's other reasons to stop waiting, or NULL */
	struct wait_stop *stop;
	/* BAKERY_ACQUIRE_ESLOTS: a wait over before a slot was had says so */
	bool slots_told;
};

/* Is the wait over?  0, or why: EBUSY (WAIT_NONE: always), ETIMEDOUT (the
 * deadline passed), ECANCELED or EINTR (bakery_acquire's reasons, stop.h). */
static inline int bakery__wait_over(const struct deadline *dl)
{
	struct timespec now;
	int err;

	if (caa_unlikely(dl->stop) && (err = bakery__stop_check(dl->stop)))
		return err;
	if (dl->mode != WAIT_DEADLINE)
		return dl->mode == WAIT_NONE ? EBUSY : 0;
	clock_gettime(dl->clock, &now);
	return ts_cmp(&now, &dl->at) >= 0 ? ETIMEDOUT : 0;
}

/* A deadline NS from now (CLOCK_MONOTONIC): the bound of a call that
 * promises not to block. */
static inline struct deadline deadline_in(long ns)
{
	struct deadline dl = { .mode = WAIT_DEADLINE, .clock = CLOCK_MONOTONIC };

	clock_gettime(CLOCK_MONOTONIC, &dl.at);
	ts_add_ns(&dl.at, ns);
	return dl;
}

/* The clock and time a sleep within DL may last until: the deadline, or
 * CAP_NS from now if that is sooner (DL's clock; CLOCK_MONOTONIC for a
 * deadline of none). */
static inline void deadline_cap(const struct deadline *dl, long cap_ns, clockid_t *clock,
                                struct timespec *until)
{
	*clock = dl->mode == WAIT_DEADLINE ? dl->clock : CLOCK_MONOTONIC;
	clock_gettime(*clock, until);
	ts_add_ns(until, cap_ns);
	if (dl->mode == WAIT_DEADLINE && ts_cmp(&dl->at, until) < 0)
		*until = dl->at;
}

#endif /* BAKERY_DEADLINE_H */
