/* SPDX-License-Identifier: MIT */
/*
 * slotwait.c - a thread that finds no free slot waits for one, within its
 * lock call's deadline, instead of failing.
 *
 * Whoever turns a slot FREE bumps the region's slot_frees word, once the
 * slot's token is back (a sleeper woken earlier would find it still held),
 * and, when someone waits for a slot, wakes one sleeper (registry.c,
 * slot_freed): the kernel queues the sleepers of one futex word in arrival
 * order, so the longest asleep is woken first.  Waiters are counted in
 * slot_sleepers for the whole of their wait, asleep or scanning.  That is
 * the order "as far as crash-safety allows": a thread that has not waited
 * yet may still take the slot first, and a sleeper that dies after its
 * wake-up takes that wake-up with it; sleeps are therefore capped
 * (RESCAN_NS), after which every sleeper scans again, which is also when
 * slots of dead owners are reaped (the claim's second round).  A waiter
 * that gives up while others wait passes one wake-up on, so that its
 * leaving never strands a free slot.
 *
 * Slots come back under pressure: a sleeper stamps the header's
 * slot_wanted with the time (and again at every rescan), and a thread that
 * unlocks while the stamp is fresh (WANTED_FRESH_S) and holds no other lock
 * of the region gives its slot back at once (bakery__slot_give_back_if_wanted,
 * from bakery_unlock).  With a waiter counted, it yields the slot
 * (bakery__slot_yield_self): its own claims in the region find nothing free
 * until another slot is freed or YIELD_NS have passed, so that the waiter,
 * woken tens of microseconds later, finds the slot still free; the giver
 * then waits in line with the others.  Threads that lock now and then thus
 * share the slots with the waiters instead of keeping them for good.  The
 * stamp is a time, not a count, so that a sleeper's death cannot leave the
 * pressure on: a stale stamp is cleared by the first unlock that sees it,
 * and the unlock path is back to one load of a word that reads 0.  A dead
 * waiter stays counted in slot_sleepers: it costs a futex wake per freed
 * slot and, while some sleeper's stamp is fresh (2 s at most after the last
 * one), a give-back's yield (YIELD_NS at most) that nobody takes.
 *
 * Slots of threads that never call again are reclaimed: a waiter that has
 * slept once (RESCAN_NS) and still finds no slot revokes the slot of an
 * owner that is idle, neither inside a lock call nor with a register in
 * use in any lock (bakery__slot_reclaim_idle, registry.c, which says how).
 * That takes membarrier(2).  Where it is refused (an old kernel, a
 * container's seccomp profile), a waiter that sees every slot owned by an
 * idle thread for IDLE_WAIT_NS would wait for ever (until those threads
 * exit or close the region), indistinguishable from a busy lock: it gives
 * up with BAKERY_ESLOTS instead.  Owners at work give their slots back at
 * their next unlock: while one of them is, the waiter waits as always.
 *
 * The calling thread's own slot may be under revocation when its lock call
 * begins, by a revoker that is stopped or starved: that is waited for too,
 * within the same deadline (bakery__slot_busy_begin_until).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "futex.h"
#include "slotwait.h"

/* Longest sleep between two scans of the slot table (a wake-up lost with
 * its sleeper's death, a dead owner's slot to reap). */
#define RESCAN_NS 250000000L
/* How long a sleeper's stamp keeps the pressure on (it is renewed every
 * RESCAN_NS while the sleeper lives). */
#define WANTED_FRESH_S 2u
/* How long a slot given back to a waiter is left to it (its wake-up and
 * claim) before the giver may claim one again: past it, the waiter is
 * dead, or kept off the CPU for longer than any scheduler slice. */
#define YIELD_NS 20000000L
/* Without membarrier: how long every slot must stay with an idle owner
 * before a waiter gives up (BAKERY_ESLOTS). */
#define IDLE_WAIT_NS 1000000000L

/* A period above, or the test build's value of it from the environment
 * variable VAR (ms): a test that a wake-up alone delivers the slot needs
 * rescans that never come (BAKERY_TEST_SLOT_RESCAN_MS), and a test of the
 * yield one that does not lapse on a loaded machine
 * (BAKERY_TEST_SLOT_YIELD_MS). */
static long period_ns(const char *var, long ns)
{
#ifdef BAKERY_TESTING
	const char *s = getenv(var);

	if (s && *s)
		return strtol(s, NULL, 10) * 1000000L;
#else
	(void)var;
#endif
	return ns;
}

/* CLOCK_MONOTONIC seconds, never 0 (0 means no pressure). */
static uint32_t wanted_stamp(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	return (uint32_t)now.tv_sec | 1u;
}

/* The time to sleep until: CAP_NS from now (less for a wait that must
 * look at its cancel word or callback, stop.c), or the deadline if sooner. */
static void sleep_until(const struct deadline *dl, long cap_ns, clockid_t *clock,
                        struct timespec *until)
{
	deadline_cap(dl, bakery__stop_cap(dl->stop, false, cap_ns), clock, until);
}

/* One sleep on slot_frees while it still reads SEEN, RESCAN_NS at most, or
 * YIELD ns (not 0: the slot we gave back is a waiter's until then, and
 * ours is no pressure on anyone: no stamp). */
static void slot_sleep(struct bakery *b, uint32_t seen, const struct deadline *dl, uint64_t yield)
{
	struct bakery_shm_header *h = b->hdr;
	long rescan = period_ns("BAKERY_TEST_SLOT_RESCAN_MS", RESCAN_NS);
	struct timespec until;
	clockid_t clock;

	sleep_until(dl, yield && yield < (uint64_t)rescan ? (long)yield : rescan, &clock, &until);
	if (!yield)
		CMM_STORE_SHARED(h->slot_wanted, wanted_stamp());
	if (uatomic_read(&h->slot_frees) == seen) {
		struct futex_word w = futex_word(&h->slot_frees, seen);

		bakery__stop_note_sleep(dl->stop, bakery__futex_sleep(&w, 1, clock, &until, NULL));
	}
}

/* Reclamation is refused (no membarrier): has every slot been owned by an
 * idle thread for IDLE_WAIT_NS?  *SINCE: when that was first seen
 * (CLOCK_MONOTONIC ns; 0: it was not, at the last look). */
static bool idle_for_good(struct bakery *b, uint64_t *since)
{
	uint64_t now;

	if (!bakery__slots_idle_owned(b)) {
		*since = 0;
		return false;
	}
	now = monotonic_ns();
	if (!*since)
		*since = now;
	return now - *since >= (uint64_t)IDLE_WAIT_NS;
}

/* No free slot: claim one as soon as one is freed, until the wait is over
 * (its deadline, or bakery_acquire's cancel word or interruption): 0,
 * ETIMEDOUT (EBUSY, ECANCELED, EINTR: bakery__wait_over), BAKERY_ESLOTS
 * (every slot idle, none reclaimable), or a claim's error.  Counted in
 * slot_sleepers meanwhile. */
static int slot_wait_counted(struct bakery *b, unsigned *slot, const struct deadline *dl)
{
	struct bakery_shm_header *h = b->hdr;
	uint64_t idle_since = 0;
	int err;

	/* sleeps: those that were not a yield's (a yield is no wait of ours) */
	for (unsigned sleeps = 0;;) {
		/* the count before the scan: a slot freed after the scan
		 * looked at it moves the count, and the sleep does not start */
		uint32_t seen = uatomic_read(&h->slot_frees);
		uint64_t yield;

		err = bakery__slot_self(b, slot);
		if (err != BAKERY_ESLOTS && err != EAGAIN)
			return err;
		if (region_lost(b))
			return region_lost_error(b);
		if ((err = bakery__wait_over(dl)))
			return err;
		/* waited a while and still no slot: take one from a thread
		 * that sleeps in the application (registry.c); not while the
		 * slot we gave back waits for its taker */
		yield = bakery__slot_yield_left(b);
		if (sleeps && !yield) {
			err = bakery__slot_reclaim_idle(b, slot);
			if (err == 0)
				return 0;
			if (err == ENOTSUP && idle_for_good(b, &idle_since))
				return BAKERY_ESLOTS;
		}
		slot_sleep(b, seen, dl, yield);
		sleeps += !yield;
	}
}

static int slot_wait(struct bakery *b, unsigned *slot, const struct deadline *dl)
{
	struct bakery_shm_header *h = b->hdr;
	int err;

	if (dl->mode == WAIT_NONE)
		return EBUSY;
	/* counted before the first load of the count (a full barrier each):
	 * pairs with slot_freed in registry.c; and a thread that gives its
	 * slot back while we are counted leaves it to us (slot_give_back) */
	uatomic_inc(&h->slot_sleepers);
	err = slot_wait_counted(b, slot, dl);
	uatomic_dec(&h->slot_sleepers);
	/* leaving empty-handed: a wake-up meant for us goes to the next one */
	if (err && uatomic_read(&h->slot_sleepers))
		bakery__futex_wake_one(&h->slot_frees);
	return err;
}

/* Our slot in B, kept ours, after bakery__slot_enter failed (see
 * bakery__slot_enter_until): ESTALE asks again. */
static int slot_self_wait(struct bakery *b, unsigned *slot, const struct deadline *dl)
{
	int err = bakery__slot_enter(b, slot);

	/* our own slot, its revocation under way: wait for its end as for
	 * the lock */
	if (err == EAGAIN && bakery__slot_self_peek(b, slot) == 0)
		return bakery__slot_busy_begin_until(b, dl);
	if (caa_likely(err != BAKERY_ESLOTS && err != EAGAIN))
		return err;
	err = slot_wait(b, slot, dl);
	return err ? err : bakery__slot_busy_begin_until(b, dl);
}

int bakery__slot_enter_wait(struct bakery *b, const struct deadline *dl, int err, unsigned *slot)
{
	if (err != ESTALE && err != BAKERY_ESLOTS && err != EAGAIN)
		return err;
	do
		err = slot_self_wait(b, slot, dl);
	while (err == ESTALE);
	return err;
}

/* Give our slot of B back: to a thread waiting for one if there is one
 * (counted: alive, or dead and counted for good, which the yield's bound
 * takes care of), which then takes it before our next claim does. */
static void slot_give_back(struct bakery *b)
{
	if (uatomic_read(&b->hdr->slot_sleepers))
		bakery__slot_yield_self(b, (uint64_t)period_ns("BAKERY_TEST_SLOT_YIELD_MS", YIELD_NS));
	else
		bakery__slot_release_self(b);
}

void bakery__slot_give_back_if_wanted(struct bakery *b)
{
	uint32_t wanted = CMM_LOAD_SHARED(b->hdr->slot_wanted);
	unsigned self;
	int old;

	if (wanted_stamp() - wanted > WANTED_FRESH_S) {
		/* stale: its sleeper got a slot, gave up or died */
		uatomic_cmpxchg(&b->hdr->slot_wanted, wanted, 0);
		return;
	}
	/* no slot, or one kept for a lock held or a lock call under way */
	if (bakery__slot_self_peek(b, &self) || bakery__slot_record_busy(b))
		return;
	old = cancel_off();
	slot_give_back(b);
	cancel_restore(old);
}
