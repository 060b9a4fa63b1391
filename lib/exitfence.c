/* SPDX-License-Identifier: MIT */
/*
 * exitfence.c - joining a region's exits (registered, or fencing for
 * good), and a sleeping waiter's side: the membarrier and the lock's mark,
 * or the grace's cap where it cannot be made (exitfence.h).
 */
#include "config.h"

#include <stdlib.h>

#include "exitfence.h"

/* How long after a process sets exit_fences its waiters cap their sleeps,
 * and at what: the window is an exiter's few instructions between its
 * store and its load (or a preemption there, which drains its store
 * buffer), so 100 ms is a margin of many orders of magnitude. */
#define FENCE_GRACE_NS        100000000L        /* 100 ms */
#define FENCE_GRACE_SLEEP_NS   10000000L        /* 10 ms */

/* This process cannot make the expedited barrier: every exit of the
 * region fences from now on, ours included; our waiters cap their sleeps
 * for the grace. */
static void exit_fences_set(struct bakery *b)
{
	CMM_STORE_SHARED(b->exits_unfenced, false);
	/* the word before any ticket of ours (store->load, store->store):
	 * uatomic_xchg implies a full barrier on both sides */
	(void)uatomic_xchg(&b->hdr->exit_fences, 1);
	CMM_STORE_SHARED(b->fence_grace_end, monotonic_ns() + FENCE_GRACE_NS);
}

/* Which passages age a mark: every EXIT_AGE_PASSAGES-th; the test build
 * takes another power of two from BAKERY_TEST_EXIT_AGE (a test of the
 * aging under contention needs it to happen within a few passages). */
static uint64_t exit_age_mask(void)
{
#ifdef BAKERY_TESTING
	const char *s = getenv("BAKERY_TEST_EXIT_AGE");
	unsigned long n = s ? strtoul(s, NULL, 10) : 0;

	if (n && !(n & (n - 1)))
		return n - 1;
#endif
	return EXIT_AGE_PASSAGES - 1;
}

struct bakery_shm_reg *bakery__exit_fences_age(struct bakery_shm_lock *e,
                                               struct bakery_shm_reg *mine)
{
	uint32_t mark = CMM_LOAD_SHARED(e->lock_fences);

	/* each a locked instruction; never from SETTING, whose setter's
	 * membarrier may be yet to come (exitfence.h) */
	if (mark == LOCK_FENCES_SET)
		(void)uatomic_cmpxchg(&e->lock_fences, LOCK_FENCES_SET, LOCK_FENCES_STALE);
	else if (mark == LOCK_FENCES_STALE)
		(void)uatomic_cmpxchg(&e->lock_fences, LOCK_FENCES_STALE, 0);
	return mine;
}

void bakery__exit_fences_join(struct bakery *b)
{
	b->exit_age_mask = exit_age_mask();
#if (defined(__x86_64__) || defined(__i386__)) && !defined(BAKERY_NO_BARRIERS)
	if (!bakery__barrier_expedited_register()) {
		b->exits_unfenced = true;
		return;
	}
	exit_fences_set(b);
#else
	(void)b;        /* every exit fences: nothing to join */
#endif
}

/* A sleep's cap where a wake-up may be lost: the grace after we set
 * exit_fences. */
static long grace_cap(struct bakery *b, long cap_ns)
{
	uint64_t end = CMM_LOAD_SHARED(b->fence_grace_end);

	if (end && monotonic_ns() < end && cap_ns > FENCE_GRACE_SLEEP_NS)
		return FENCE_GRACE_SLEEP_NS;
	return cap_ns;
}

long bakery__exit_fence_make(struct bakery *b, struct bakery_shm_lock *e, long cap_ns)
{
	uint32_t mark;
	bool setter;

	if (!CMM_LOAD_SHARED(b->exits_unfenced))
		return grace_cap(b, cap_ns);
	mark = CMM_LOAD_SHARED(e->lock_fences);
	if (mark == LOCK_FENCES_STALE) {
		/* the exits fence still: we sleep, so the mark stays.  If an
		 * ager took it to 0 first, our read of STALE came before its
		 * step, and an exit that reads that 0 sees our count. */
		(void)uatomic_cmpxchg(&e->lock_fences, LOCK_FENCES_STALE, LOCK_FENCES_SET);
		return cap_ns;
	}
	/* the first to sleep in the lock: its exits fence from now on */
	setter = !mark && uatomic_cmpxchg(&e->lock_fences, 0, LOCK_FENCES_SETTING) == 0;
	CRASH_POINT("exit-fence-setting");
	if (bakery__barrier_expedited()) {
		/* registered, but refused now: fence from here on (a lock we
		 * left at SETTING makes its waiters make the barrier) */
		exit_fences_set(b);
		return grace_cap(b, cap_ns);
	}
	/* after the membarrier (the system call orders it): every exit that
	 * read lock_fences as 0 has drained its store */
	if (setter)
		CMM_STORE_SHARED(e->lock_fences, LOCK_FENCES_SET);
	return cap_ns;
}
