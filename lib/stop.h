/* SPDX-License-Identifier: MIT */
/*
 * stop.h - stop.c: what ends a lock call's wait besides its deadline
 * (bakery_acquire's cancel word and interruption by a signal handler).
 */
#ifndef BAKERY_STOP_H
#define BAKERY_STOP_H

#include "private.h"

/* One lock call's reasons to stop waiting early (bakery_acquire's options);
 * the plain lock calls have none. */
struct wait_stop {
	const uint32_t *cancel;         /* stop once it reads non-zero: ECANCELED */
	int (*interrupted)(void *arg);  /* with intr: asked whether to stop (EINTR) */
	void *arg;
	bool intr;                      /* BAKERY_ACQUIRE_INTR */
	bool signalled;                 /* a sleep was interrupted since the last look */
	struct timespec ask_at;         /* CLOCK_MONOTONIC: ask interrupted() unprompted */
	int why;                        /* once the wait was told to stop: why (it stays) */
};

/* Fill S from bakery_acquire's options (checked by the caller). */
BAKERY_HIDDEN void bakery__stop_init(struct wait_stop *s, const struct bakery_acquire_opts *o);

/*
 * Should the wait stop now?  0, or ECANCELED (the cancel word is set) or
 * EINTR (a sleep was interrupted by a signal handler and, with a callback,
 * it says stop: asked then, and every BAKERY_ACQUIRE_POLL_MS of waiting,
 * never more often).  Once it has said stop, it says so again.
 */
BAKERY_HIDDEN int bakery__stop_check(struct wait_stop *s);

/* After a sleep of the wait that returned ERR (an errno value, 0 if it was
 * woken or timed out): an interruption is noted for the next look. */
static inline void bakery__stop_note_sleep(struct wait_stop *s, int err)
{
	if (caa_unlikely(s && err == EINTR))
		s->signalled = true;
}

/* The longest a sleep of the wait may last, CAP_NS or less: a callback is
 * asked every BAKERY_ACQUIRE_POLL_MS even when no sleep was interrupted (a
 * signal that came while the thread did not sleep interrupted none), and a
 * cancel word is looked at as often by a sleep that cannot watch it
 * (WATCHED false).  0 (no cap) stays 0 only without either. */
BAKERY_HIDDEN long bakery__stop_cap(const struct wait_stop *s, bool watched, long cap_ns);

#endif /* BAKERY_STOP_H */
