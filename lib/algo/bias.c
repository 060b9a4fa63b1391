/* SPDX-License-Identifier: MIT */
/*
 * bias.c - the biased lock's revocation (V1-V3) and grant (G1-G3); the
 * owner's fast path (B0-B4) is inline in bias.h.  The protocol, its step
 * names and why it holds: tests/model/bias.pml.
 */
#include "config.h"

#include <stdlib.h>

#include "bias.h"
#include "futex.h"

int bakery__bias_revoke(struct passage *p)
{
	struct bakery_shm_lock *e = &p->b->locks[p->lock];
	uint32_t bias = CMM_LOAD_SHARED(e->bias);

	/* V1: nobody's (or our own slot's: we are its owner, in a passage
	 * that did not take the fast path) -> on to the ticket */
	if (bias == BIAS_NONE || bias == BIAS_SLOT0 + p->self)
		return 0;
	/* where the bias is never granted, a word other than NONE was forged:
	 * nobody takes the fast path, so there is no store to drain */
	if (!BIAS_POSSIBLE) {
		(void)uatomic_cmpxchg(&e->bias, bias, BIAS_NONE);
		return 0;
	}
	/* another slot's (or a value no slot has: a forged word is revoked
	 * like any other) -> REVOKING, whether the CAS wins or not: a loser
	 * found it changed by another revoker or a grant, and makes the
	 * membarrier all the same (bias.pml, SECOND_SKIPS must fail) */
	if (bias != BIAS_REVOKING &&
	    uatomic_cmpxchg(&e->bias, bias, BIAS_REVOKING) == bias)
		uatomic_inc(&e->bias_revocations);
	CRASH_POINT("bias-revoking");
	/* V2: a full barrier on every CPU that runs a thread of a registered
	 * process (every process that opened the lock is: lock.c), after the
	 * CAS: an owner whose B4 read its own slot did so before the CAS, and
	 * its ticket store is drained by this before our doorway reads it */
	if (bakery__barrier_expedited())
		return ENOTSUP;
	CRASH_POINT("bias-revoked");
	/* V3: it fails if the word moved on (another revoker finished): fine */
	(void)uatomic_cmpxchg(&e->bias, BIAS_REVOKING, BIAS_NONE);
	return 0;
}

void bakery__bias_count(struct passage *p, uint64_t max)
{
	uint32_t n = CMM_LOAD_SHARED(p->mine->lone_passages);

	/* our own word, on our bookkeeping line: plain */
	CMM_STORE_SHARED(p->mine->lone_passages, max ? 0 : n + (n < UINT32_MAX));
}

/* G2: is anyone else in the doorway or holding a ticket?  choosing[j]
 * first, then number[j] (bias.pml, WALK_NUMBER_FIRST must fail). */
static bool others_busy(const struct bakery_lock *l, unsigned self)
{
	struct active_walk it = active_walk_of(l->active, l->b, self);

	for (unsigned j = 0; active_walk_next(&it, &j);) {
		const struct bakery_shm_reg *r = lock_reg(l, j);

		if (CMM_LOAD_SHARED(r->choosing) & 1)
			return true;
		/* choosing before number (load->load), as a waiter reads them;
		 * pairs with the doorway's store_mb() of its ticket before its
		 * choosing := even */
		cmm_smp_rmb();
		if (CMM_LOAD_SHARED(r->number))
			return true;
	}
	return false;
}

/* The lone passages a grant waits for after REVS revocations.  The test
 * build's BAKERY_TEST_BIAS_GRANT=n makes it n, without the backoff, so
 * that a test can make grants and revocations by the thousand. */
static uint32_t grant_after(uint32_t revs)
{
#ifdef BAKERY_TESTING
	static int test_grant = -1;

	if (test_grant < 0) {
		const char *s = getenv("BAKERY_TEST_BIAS_GRANT");

		test_grant = s ? atoi(s) : 0;
	}
	if (test_grant > 0)
		return (uint32_t)test_grant;
#endif
	return BIAS_GRANT_PASSAGES << (revs < BIAS_BACKOFF_MAX ? revs : BIAS_BACKOFF_MAX);
}

void bakery__bias_grant_due(const struct bakery_lock *l, struct bakery_shm_reg *mine)
{
	struct bakery_shm_lock *e = l->entry;
	unsigned self = (unsigned)(mine - l->regs);

	if (!BIAS_POSSIBLE ||
	    CMM_LOAD_SHARED(mine->lone_passages) < grant_after(CMM_LOAD_SHARED(e->bias_revocations)))
		return;
	CMM_STORE_SHARED(mine->lone_passages, 0);
	/* G1: a locked instruction, a full barrier: the word before the loads
	 * of G2 (store->load; pairs with a revoker's barrier between its
	 * choosing := odd and its V1 load: either it reads our grant and
	 * revokes, or we read its doorway and un-grant) */
	if (uatomic_cmpxchg(&e->bias, BIAS_NONE, BIAS_SLOT0 + self) != BIAS_NONE)
		return;
	CRASH_POINT("bias-granted");
	if (others_busy(l, self))                                       /* G2 */
		/* G3: it fails if a revoker took the word meanwhile: fine */
		(void)uatomic_cmpxchg(&e->bias, BIAS_SLOT0 + self, BIAS_NONE);
}
