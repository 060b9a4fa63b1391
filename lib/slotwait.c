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
 */
#include "config.h"

#include <errno.h>

#include "futex.h"
#include "slotwait.h"

/* Longest sleep between two scans of the slot table (a wake-up lost with
 * its sleeper's death, a dead owner's slot to reap). */
#define RESCAN_NS 250000000L

static void ts_add_ns(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	while (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* The time to sleep until: RESCAN_NS from now, or the deadline if sooner.
 * False when the deadline has passed. */
static bool sleep_until(const struct deadline *dl, clockid_t *clock, struct timespec *until)
{
	struct timespec now;

	*clock = dl->mode == WAIT_DEADLINE ? dl->clock : CLOCK_MONOTONIC;
	clock_gettime(*clock, &now);
	if (dl->mode == WAIT_DEADLINE && !ts_before(&now, &dl->at))
		return false;
	*until = now;
	ts_add_ns(until, RESCAN_NS);
	if (dl->mode == WAIT_DEADLINE && ts_before(&dl->at, until))
		*until = dl->at;
	return true;
}

/* One sleep on slot_frees while it still reads SEEN; false if the deadline
 * had passed. */
static bool slot_sleep(struct bakery *b, uint32_t seen, const struct deadline *dl)
{
	struct bakery_shm_header *h = b->hdr;
	struct timespec until;
	clockid_t clock;

	if (!sleep_until(dl, &clock, &until))
		return false;
	/* counted before the count is read again (a full barrier each): pairs
	 * with slot_freed in registry.c */
	uatomic_inc(&h->slot_sleepers);
	if (uatomic_read(&h->slot_frees) == seen)
		bakery__futex_wait_until(&h->slot_frees, seen, clock, &until);
	uatomic_dec(&h->slot_sleepers);
	return true;
}

/* No free slot: claim one as soon as one is freed, until the deadline. */
static int slot_wait(struct bakery *b, unsigned *slot, const struct deadline *dl)
{
	struct bakery_shm_header *h = b->hdr;
	int err;

	if (dl->mode == WAIT_NONE)
		return EBUSY;
	for (;;) {
		/* the count before the scan: a slot freed after the scan
		 * looked at it moves the count, and the sleep does not start */
		uint32_t seen = uatomic_read(&h->slot_frees);

		err = bakery__slot_self(b, slot);
		if (err != BAKERY_ESLOTS && err != EAGAIN)
			return err;
		if (region_lost(b))
			return BAKERY_EBADREGION;
		if (!slot_sleep(b, seen, dl))
			break;
	}
	/* leaving: a wake-up meant for us goes to the next sleeper */
	if (uatomic_read(&h->slot_sleepers))
		bakery__futex_wake_one(&h->slot_frees);
	return ETIMEDOUT;
}

int bakery__slot_self_wait(struct bakery *b, unsigned *slot, const struct deadline *dl)
{
	int err = bakery__slot_self(b, slot);

	if (caa_likely(err != BAKERY_ESLOTS && err != EAGAIN))
		return err;
	return slot_wait(b, slot, dl);
}
