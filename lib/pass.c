/* SPDX-License-Identifier: MIT */
/*
 * pass.c - a waiter that does not take its turn is passed.
 *
 * The Bakery algorithms are FIFO: a waiter whose turn has come holds up
 * everyone behind it until it runs.  A waiter that is stopped (SIGSTOP,
 * Ctrl-Z, a debugger), frozen (a cgroup freezer, docker pause) or not
 * scheduled would hold the line for as long as that lasts.  So a waiter
 * behind it that has seen its turn come and not taken for the grace G passes
 * it: it aborts the passage on its behalf by clearing its registers exactly
 * as crash recovery clears a dead slot's (the algorithm's recover step, the
 * reset the SPIN models show safe at any point of a waiter's passage), and
 * the passed one, when it runs again, learns it before it could enter and
 * takes a new ticket.  Jayanti's B-Bakery, which a plain reset breaks, does
 * the waiter's own abort on its behalf instead (its passage is completed by
 * proxy: struct algo_ops.pass_abort, handed down in the passage so that this
 * file stays below the algorithms), and its waiter takes its word back
 * before it writes X or aborts on its own (jay_wait).
 *
 * Safety rests on the pass word (pass.h) and two rules:
 *   1. one word decides: the owner enters only after WAITING -> IDLE, a
 *      passer clears only after WAITING -> PASSING(self), both by CAS;
 *   2. a passed owner touches its registers again only once the word says
 *      CLEARED: a passer's late clear could otherwise wipe the owner's next
 *      ticket (comparing the ticket's value would not do: Black-White issues
 *      the same colour and number again).  A passer that dies in between is
 *      finished by the one that proves its death (bakery__pass_recover).
 * tests/model/pass.pml checks both, with the passer crashing at every step,
 * and that breaking rule 2 breaks mutual exclusion; jayanti_pass.pml the
 * same for Jayanti's abort on the waiter's behalf.
 *
 * Who is passable: a waiter that has published WAITING, i.e. met a false
 * condition in a blocking or timed wait (not a trylock, not the uncontended
 * path, not a waiter inside its doorway: those hold `choosing` and are never
 * passed).  When: its turn has come (no ticket ahead of it, nobody in the
 * critical section, nobody choosing) and stayed so, for the same ticket,
 * for G by the watch of a waiter behind it.  A running waiter takes its turn
 * within microseconds of it coming, so this passes a stopped, frozen or
 * starved one, whatever /proc says (which is also unreliable across PID
 * namespaces).  Only the waiting phase is passable (pass_phase): not an
 * algorithm's prepare step (Jayanti's drive of its own earlier passage).
 * In a lock of k > 1 holders "its turn came" means that fewer than k
 * tickets are ahead of it and no doorway is in progress (it would enter if
 * it ran); its passers are the waiters behind it, which sleep on the
 * lock-wide `exits` word, so a pass bumps that word as an exit does.
 */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "futex.h"
#include "order.h"
#include "pass.h"
#include "registry.h"

/* How often a passed owner looks at its passer's liveness while waiting for
 * CLEARED: a live passer takes microseconds; a dead one is proven here. */
#define SETTLE_POLL_NS 10000000L        /* 10 ms */
#define GRACE_MAX_MS   3600000L         /* an hour: beyond, say "off" with 0 */

/* ---------------------------------------------------------------- grace -- */

static long grace_from_env(void)
{
	const char *s = getenv("BAKERY_PASS_GRACE_MS");
	char *end;
	long ms;

	if (!s || !*s)
		return BAKERY_PASS_GRACE_DEFAULT_MS * 1000000L;
	errno = 0;
	ms = strtol(s, &end, 10);
	/* a value we cannot read keeps the default: never a crash, never off
	 * by mistake */
	if (errno || *end || ms < 0 || ms > GRACE_MAX_MS)
		return BAKERY_PASS_GRACE_DEFAULT_MS * 1000000L;
	return ms * 1000000L;
}

long bakery__pass_grace_ns(void)
{
	/* -1 = not read yet; two threads racing both read the environment,
	 * harmlessly */
	static long cached = -1;
	long g = uatomic_read(&cached);

	if (g < 0) {
		g = grace_from_env();
		uatomic_set(&cached, g);
	}
	return g;
}

static long elapsed_ns(const struct timespec *since, const struct timespec *now)
{
	return (now->tv_sec - since->tv_sec) * 1000000000L + (now->tv_nsec - since->tv_nsec);
}

/* ------------------------------------------------------- the line ahead -- */

/* Has the turn of J (ticket TJ) come: nobody in the critical section, in a
 * doorway, or with a ticket served before it?  For Jayanti, a passage left
 * to a proxy is no reason to wait: J itself would drive it (wait_turn), and
 * so do the waiters behind J once J is passed; without this, a waiter
 * stopped ahead of an abandoned passage would never be passed while the
 * waiters behind it, waiting on it in slot order, never reach that passage
 * to drive it.  A heuristic for fairness only: what makes passing safe is
 * the pass word, not this. */
static bool turn_came(struct bakery *b, unsigned lock, const struct ticket_line *line,
                      unsigned j, uint64_t tj)
{
	unsigned bound = slots_bound(b);

	for (unsigned k = 0; k < bound; k++) {
		struct bakery_shm_reg *r = reg_of(b, lock, k);
		uint64_t tk;

		if (k == j || !CMM_LOAD_SHARED(r->joined) ||
		    (ticket_line_proxies(line) && CMM_LOAD_SHARED(r->proxy)))
			continue;
		if ((CMM_LOAD_SHARED(r->choosing) & 1) ||
		    CMM_LOAD_SHARED(r->stage) == BAKERY_PASS_CRITICAL)
			return false;
		tk = CMM_LOAD_SHARED(r->number);
		if (ticket_held(line, tk) && ticket_served_before(line, tk, k, tj, j))
			return false;
	}
	return true;
}

/* The same for a waiter of a lock of CAP > 1 holders (Lamport's order of
 * (number, slot)): it would enter if it ran, i.e. fewer than CAP tickets
 * are served before TJ and no doorway is in progress that could still take
 * one ahead of it (the two phases of bakery__holders_wait).  Holders inside
 * with a later ticket do not matter: they are not counted by J's wait. */
static bool holders_turn_came(struct bakery *b, unsigned lock, const struct ticket_line *line,
                              unsigned j, uint64_t tj, unsigned cap)
{
	unsigned ahead = 0, bound = slots_bound(b);

	for (unsigned k = 0; k < bound; k++) {
		struct bakery_shm_reg *r = reg_of(b, lock, k);
		uint64_t tk;

		if (k == j || !CMM_LOAD_SHARED(r->joined))
			continue;
		if (CMM_LOAD_SHARED(r->choosing) & 1)
			return false;
		tk = CMM_LOAD_SHARED(r->number);
		if (ticket_held(line, tk) && ticket_served_before(line, tk, k, tj, j) &&
		    ++ahead >= cap)
			return false;
	}
	return true;
}

/* ---------------------------------------------------------------- owner -- */

void bakery__pass_publish_slow(struct passage *p)
{
	/* (a waiter of a lock of k > 1 holders too: its turn is looked at
	 * by holders_turn_came) */
	if (p->dl->mode == WAIT_NONE || !bakery__pass_grace_ns())
		return;
	/* A plain store: no other access needs ordering against it.  Whether
	 * a passer sees it early or late, the owner's CAS in pass_close (on
	 * the same word, after it in program order) is what decides. */
	CMM_STORE_SHARED(p->mine->pass, PASS_WAITING);
	p->pass_published = true;
}

/* bakery__pass_close for a published pass word */
int bakery__pass_close_published(struct passage *p, int err)
{
	p->pass_published = false;
	/* WAITING -> IDLE.  A full barrier (the locked cmpxchg): a passer's
	 * CAS either precedes ours (we fail, and never enter) or fails (it
	 * never clears).  Our critical section's accesses stay after it. */
	if (uatomic_cmpxchg(&p->mine->pass, PASS_WAITING, PASS_IDLE) == PASS_WAITING)
		return err;
	return err ? err : BAKERY_EPASSED;
}

/* Sleep on our pass word (woken by the passer's CLEARED) for a short while
 * (a cancel word is looked at after it: SETTLE_POLL_NS is short). */
static void settle_sleep(uint32_t *word, uint32_t val, const struct deadline *dl)
{
	struct futex_word w = futex_word(word, val);
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	ts_add_ns(&until, SETTLE_POLL_NS);
	bakery__stop_note_sleep(dl->stop, bakery__futex_sleep(&w, 1, CLOCK_MONOTONIC, &until, NULL));
}

int bakery__pass_settle(struct passage *p)
{
	uint32_t *word = &p->mine->pass;
	int err;

	for (;;) {
		uint32_t w = uatomic_read(word);
		unsigned by = PASS_BY(w);

		switch (PASS_STATE(w)) {
		case PASS_IDLE:
			return 0;
		case PASS_WAITING:      /* a leftover of a dead owner of our slot */
		case PASS_CLEARED:
			/* CLEARED read before our next stores to the registers
			 * the passer cleared (load->store), pairing with the
			 * barrier before its CLEARED store: its clear is
			 * ordered before our new ticket */
			if (uatomic_cmpxchg(word, w, PASS_IDLE) == w)
				return 0;
			continue;
		}
		/* PASSING(by) */
		if (region_lost(p->b))
			return region_lost_error(p->b);
		/* its recoverer finishes the pass (bakery__pass_recover) */
		if (by < p->b->nslots && slot_recover_if_marked(p->b, by) != OWNER_UNMARKED)
			continue;
		if ((err = bakery__wait_over(p->dl)))
			return err;             /* EBUSY for a trylock */
		settle_sleep(word, w, p->dl);
	}
}

/* --------------------------------------------------------------- passer -- */

/* A lock of k > 1 holders: its waiters sleep on the lock-wide `exits` word
 * (bakery__await_any), not on J's line; a pass frees a place as an exit
 * does.  bakery__word_signal's steps, written out for the same reason as
 * clear_for below. */
static void holders_wake(struct bakery_shm_lock *e)
{
	/* uatomic_add_return implies a full barrier before and after: the
	 * clear (and the barrier after it in clear_for) before the bump
	 * (store->store: a sleeper woken by it re-reads the cleared ticket),
	 * the bump before the load of the sleeper count (store->load),
	 * pairing with the barrier between a sleeper's count increment and
	 * its re-read in bakery__await_any */
	(void)uatomic_add_return(&e->exits, 1);
	if (caa_unlikely(CMM_LOAD_SHARED(e->exit_sleepers)))
		bakery__futex_wake_all(&e->exits);
}

/* Clear J's registers in LOCK as crash recovery clears a dead slot's: the
 * plain reset (algo/common.c's bakery__plain_reset, the recover step of
 * Lamport, Boulangerie and Black-White), then a wake-up of J's line.  Written out here
 * rather than called, so that this file stays below wait.c and the
 * algorithms (tests/unit/test-layers.sh). */
static void clear_for(struct bakery *b, unsigned lock, unsigned j)
{
	struct bakery_shm_reg *r = reg_of(b, lock, j);

	CMM_STORE_SHARED(r->choosing, 0);
	CMM_STORE_SHARED(r->number, 0);
	CMM_STORE_SHARED(r->proxy, 0);
	/* the reset before the bump of the futex word (store->store): a
	 * waiter that sees the new seq, or is woken by it, reads the reset.
	 * (liburcu's uatomic_inc promises no ordering.) */
	cmm_smp_mb();
	uatomic_inc(&r->seq);
	bakery__futex_wake_all(&r->seq);
	if (CMM_LOAD_SHARED(b->locks[lock].holders) > 1)
		holders_wake(&b->locks[lock]);
}

/* The end of a pass of J by BY: the clear before CLEARED (store->store, and
 * the publish's loads before it), pairing with the passed owner's CAS of
 * CLEARED in pass_settle; then its wake-up. */
static void pass_done(struct bakery *b, unsigned lock, unsigned j, unsigned by)
{
	uint32_t *word = &reg_of(b, lock, j)->pass;

	cmm_smp_mb();
	CMM_STORE_SHARED(*word, PASS_WORD(PASS_CLEARED, by));
	bakery__futex_wake_all(word);
}

/* The passer's step on J's registers, between PASSING and CLEARED: the
 * algorithm's abort on J's behalf (PASS_ABORT, Jayanti's), else the plain
 * reset. */
static void abort_for(struct bakery *b, unsigned lock, unsigned j,
                      void (*pass_abort)(struct bakery *, unsigned, unsigned))
{
	if (pass_abort)
		pass_abort(b, lock, j);
	else
		clear_for(b, lock, j);
}

/* WAITING -> PASSING(self) on J's word, then the clear.  True if we passed. */
static bool pass_slot(struct bakery *b, unsigned lock, unsigned j, unsigned self,
                      void (*pass_abort)(struct bakery *, unsigned, unsigned))
{
	uint32_t *word = &reg_of(b, lock, j)->pass;

	/* A full barrier (the locked cmpxchg): our win before every store of
	 * the clear, so that no store of ours can reach J's registers unless
	 * J's own WAITING -> IDLE has failed (pairs with pass_close). */
	if (uatomic_cmpxchg(word, PASS_WAITING, PASS_WORD(PASS_PASSING, self)) != PASS_WAITING)
		return false;
	uatomic_inc(&b->locks[lock].passes);
	CRASH_POINT("pass-won");
	abort_for(b, lock, j, pass_abort);
	CRASH_POINT("pass-cleared");
	pass_done(b, lock, j, self);
	return true;
}

/* Has J's turn come, with ticket *TJ? */
static bool turn_is_due(struct passage *p, unsigned j, uint64_t *tj)
{
	struct ticket_line line = ticket_line_of(p->b, p->lock);

	*tj = CMM_LOAD_SHARED(reg_of(p->b, p->lock, j)->number);
	if (!ticket_held(&line, *tj))
		return false;
	return p->via->holders > 1 ? holders_turn_came(p->b, p->lock, &line, j, *tj, p->via->holders)
	                      : turn_came(p->b, p->lock, &line, j, *tj);
}

/* J is being passed by BY: if BY died before it finished, prove it; its
 * recovery finishes the pass (bakery__pass_recover).  Nobody else may be
 * watching BY's token: J, the passed, may be stopped. */
static void finish_if_passer_dead(struct passage *p, unsigned by)
{
	if (by < p->b->nslots && by != p->self)
		(void)slot_recover_if_marked(p->b, by);
}

static bool consider(struct passage *p, unsigned j, struct pass_watch *w)
{
	long grace = bakery__pass_grace_ns();
	uint32_t word;
	struct timespec now;
	uint64_t tj;

	if (!grace || p->self == BAKERY_NO_SLOT)
		return false;
	word = CMM_LOAD_SHARED(reg_of(p->b, p->lock, j)->pass);
	if (PASS_STATE(word) == PASS_PASSING)
		finish_if_passer_dead(p, PASS_BY(word));
	if (word != PASS_WAITING) {
		w->started = w->armed = false;
		return false;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!w->started || w->slot != j) {
		*w = (struct pass_watch){ .slot = j, .started = true, .began = now };
		return false;
	}
	if (elapsed_ns(&w->began, &now) < grace / 4)
		return false;
	if (!turn_is_due(p, j, &tj)) {
		w->armed = false;
		return false;
	}
	if (!w->armed || w->number != tj) {
		w->armed = true;
		w->number = tj;
		w->since = now;
		return false;
	}
	if (elapsed_ns(&w->since, &now) < grace)
		return false;
	w->started = w->armed = false;
	return pass_slot(p->b, p->lock, j, p->self, p->via->pass_abort);
}

bool bakery__pass_consider(struct passage *p, unsigned j, struct pass_watch *w)
{
	return consider(p, j, w);
}

bool bakery__pass_consider_once(struct passage *p, unsigned j)
{
	/* A trylock's watch, kept between the calls of this thread through
	 * one lock handle (by its serial: a freed handle's address may serve
	 * another) for as long as they come at least every G/4, as often as
	 * a blocked waiter looks.  A trylock that comes back later has not
	 * watched the line meanwhile: what it saw then (a slot, a ticket, and
	 * Black-White gives the same small numbers again and again) says
	 * nothing of the passage there now, whose turn may have just come. */
	static __thread struct {
		uint64_t handle;
		struct timespec used;
		struct pass_watch w;
	} tl;
	long grace = bakery__pass_grace_ns();
	struct timespec now;

	if (!grace)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (tl.handle != p->via->serial || elapsed_ns(&tl.used, &now) >= grace / 4) {
		tl.handle = p->via->serial;
		tl.w.started = tl.w.armed = false;
	}
	tl.used = now;
	return consider(p, j, &tl.w);
}

long bakery__pass_sleep_cap(struct passage *p, unsigned j, long cap)
{
	long grace = bakery__pass_grace_ns();
	uint32_t word = CMM_LOAD_SHARED(reg_of(p->b, p->lock, j)->pass);

	/* a quarter of G: the watch sees the turn come within G/4 of it, and
	 * a passer's death within G/4 */
	if (grace && (word == PASS_WAITING || PASS_STATE(word) == PASS_PASSING) &&
	    grace / 4 < cap)
		return grace / 4 > 0 ? grace / 4 : 1;
	return cap;
}

/* ------------------------------------------------------------- recovery -- */

void bakery__pass_recover(struct bakery *b, unsigned lock, unsigned slot,
                          void (*pass_abort)(struct bakery *, unsigned, unsigned))
{
	uint32_t *own = &reg_of(b, lock, slot)->pass;
	unsigned bound = slots_bound(b);

	/* a dead waiter is no longer passable: its registers are being reset
	 * anyway.  (PASSING and CLEARED stay: the slot's next owner settles
	 * them before its first doorway.)  A CAS, not a store: a passer may
	 * win the word at the same time, and then its clear must be settled.
	 * Its full barrier orders nothing else that matters: the reset that
	 * follows only writes zeros a passer would write too. */
	uatomic_cmpxchg(own, PASS_WAITING, PASS_IDLE);
	/* the passes it started and did not finish: it is dead, so no store
	 * of its own can follow ours */
	for (unsigned j = 0; j < bound; j++) {
		uint32_t w = CMM_LOAD_SHARED(reg_of(b, lock, j)->pass);

		if (j != slot && w == PASS_WORD(PASS_PASSING, slot)) {
			abort_for(b, lock, j, pass_abort);
			pass_done(b, lock, j, slot);
		}
	}
}
