/* SPDX-License-Identifier: MIT */
/*
 * slotwait.c - a thread that finds no free slot waits for one, within its
 * lock call's deadline, instead of failing.
 *
 * Whoever turns a slot FREE bumps the region's slot_frees word and, when
 * someone sleeps on it, wakes one sleeper (registry.c, slot_freed): the
 * kernel queues the sleepers of one futex word in arrival order, so the
 * longest asleep is woken first.  That is the order "as far as crash-safety
 * allows": a thread that has not slept yet may still take the slot first,
 * and a sleeper that dies after its wake-up takes that wake-up with it;
 * sleeps are therefore capped (RESCAN_NS), after which every sleeper scans
 * again, which is also when slots of dead owners are reaped (the claim's
 * second round).  A waiter that gives up while others sleep passes one
 * wake-up on, so that its leaving never strands a free slot.  A dead
 * sleeper stays counted in slot_sleepers: it costs a futex wake per freed
 * slot, never a wait.
 *
 * Slots come back under pressure: a sleeper stamps the header's
 * slot_wanted with the time (and again at every rescan), and a thread that
 * unlocks while the stamp is fresh (WANTED_FRESH_S) and holds no other lock
 * of the region gives its slot back at once (bakery__slot_give_back_if_wanted,
 * from bakery_unlock); its next lock call claims one again, in line with the
 * others.  Threads that lock now and then thus share the slots with the
 * waiters instead of keeping them for good.  The stamp is a time, not a
 * count, so that a sleeper's death cannot leave the pressure on: a stale
 * stamp is cleared by the first unlock that sees it, and the unlock path is
 * back to one load of a word that reads 0.
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

#include "futex.h"
#include "slotwait.h"

/* Longest sleep between two scans of the slot table (a wake-up lost with
 * its sleeper's death, a dead owner's slot to reap). */
#define RESCAN_NS 250000000L
/* How long a sleeper's stamp keeps the pressure on (it is renewed every
 * RESCAN_NS while the sleeper lives). */
#define WANTED_FRESH_S 2u
/* Without membarrier: how long every slot must stay with an idle owner
 * before a waiter gives up (BAKERY_ESLOTS). */
#define IDLE_WAIT_NS 1000000000L

/* CLOCK_MONOTONIC seconds, never 0 (0 means no pressure). */
static uint32_t wanted_stamp(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	return (uint32_t)now.tv_sec | 1u;
}

/* The time to sleep until: RESCAN_NS from now (less for a wait that must
 * look at its cancel word or callback, stop.c), or the deadline if sooner. */
static void sleep_until(const struct deadline *dl, clockid_t *clock, struct timespec *until)
{
	deadline_cap(dl, bakery__stop_cap(dl->stop, false, RESCAN_NS), clock, until);
}

/* One sleep on slot_frees while it still reads SEEN. */
static void slot_sleep(struct bakery *b, uint32_t seen, const struct deadline *dl)
{
	struct bakery_shm_header *h = b->hdr;
	struct timespec until;
	clockid_t clock;

	sleep_until(dl, &clock, &until);
	/* counted before the count is read again (a full barrier each): pairs
	 * with slot_freed in registry.c */
	uatomic_inc(&h->slot_sleepers);
	CMM_STORE_SHARED(h->slot_wanted, wanted_stamp());
	if (uatomic_read(&h->slot_frees) == seen) {
		struct futex_word w = futex_word(&h->slot_frees, seen);

		bakery__stop_note_sleep(dl->stop, bakery__futex_sleep(&w, 1, clock, &until, NULL));
	}
	uatomic_dec(&h->slot_sleepers);
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
 * (every slot idle, none reclaimable), or a claim's error. */
static int slot_wait(struct bakery *b, unsigned *slot, const struct deadline *dl)
{
	struct bakery_shm_header *h = b->hdr;
	uint64_t idle_since = 0;
	int err;

	if (dl->mode == WAIT_NONE)
		return EBUSY;
	for (unsigned sleeps = 0;; sleeps++) {
		/* the count before the scan: a slot freed after the scan
		 * looked at it moves the count, and the sleep does not start */
		uint32_t seen = uatomic_read(&h->slot_frees);

		err = bakery__slot_self(b, slot);
		if (err != BAKERY_ESLOTS && err != EAGAIN)
			return err;
		if (region_lost(b))
			return region_lost_error(b);
		if ((err = bakery__wait_over(dl)))
			break;
		/* waited a while and still no slot: take one from a thread
		 * that sleeps in the application (registry.c) */
		if (sleeps) {
			err = bakery__slot_reclaim_idle(b, slot);
			if (err == 0)
				return 0;
			if (err == ENOTSUP && idle_for_good(b, &idle_since)) {
				err = BAKERY_ESLOTS;
				break;
			}
		}
		slot_sleep(b, seen, dl);
	}
	/* leaving: a wake-up meant for us goes to the next sleeper */
	if (uatomic_read(&h->slot_sleepers))
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
	bakery__slot_release_self(b);
	cancel_restore(old);
}
