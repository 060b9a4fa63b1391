/* SPDX-License-Identifier: MIT */
/*
 * revoke.h - revoke.c: which token stands for a slot now, and the
 * revocation of an idle owner's slot (both halves of its handshake).
 */
#ifndef BAKERY_REVOKE_H
#define BAKERY_REVOKE_H

#include "deadline.h"
#include "region.h"
#include "token.h"

/* How long an owner's exit or bakery_close waits at most for a revocation
 * of its slot to end (a lock call waits until its deadline). */
#define REVOKE_WAIT_NS 2000000000L

/* The index of the token that stands for SLOT now (struct
 * bakery_shm_slot.token), range-checked: a corrupted index reads as the
 * slot's first token, which is harmless (a wrong word to sleep on). */
static inline unsigned slot_token_index(struct bakery *b, unsigned slot)
{
	uint32_t t = CMM_LOAD_SHARED(b->slots[slot].token);

	return t < 2u * b->nslots ? t : slot;
}

/* The futex word of slot's liveness token (for futex_waitv). */
static inline uint32_t *slot_token_word(struct bakery *b, unsigned slot)
{
	return token_word(b, slot_token_index(b, slot));
}

/* Recover SLOT as a dead owner's, its token held by the caller (the
 * registry's, passed down: a revoker that died after its commit left the
 * slot to a dead owner). */
typedef void slot_recover_fn(struct bakery *b, unsigned slot);

/* Sign SLOT with the calling thread's identity (pid, tid, the process's
 * start time): who owns it, for display. */
BAKERY_HIDDEN void bakery__slot_sign(struct bakery_shm_slot *s);

/* Make SLOT's generation even: settle what a dead revoker left (RECOVER
 * when the slot had become the dead revoker's), or wait for a live one to
 * end its revocation, within DL (NULL: no wait).  0; while a revoker not
 * proven gone is at work, EAGAIN (no DL), EBUSY (WAIT_NONE), ETIMEDOUT,
 * ECANCELED or EINTR (bakery__wait_over); BAKERY_EBADREGION (its token is
 * forged).  The revocation is then left as it is. */
BAKERY_HIDDEN int bakery__revocation_settle(struct bakery *b, unsigned slot,
                                            const struct deadline *dl, slot_recover_fn *recover);

/* Give back token TOK, held in H, that is no slot's any more: a spare.  Its
 * busy word is reset for its next holder. */
BAKERY_HIDDEN void bakery__spare_put_back(struct bakery *b, unsigned tok, struct token_hold *h);

/* Take a spare token (one no slot names) into H, its index into *TOK, its
 * busy word cleared: 0, or BAKERY_ESLOTS. */
BAKERY_HIDDEN int bakery__spare_take(struct bakery *b, struct token_hold *h, unsigned *tok);

/* Revoke SLOT for the holder of spare token SPARE: 0 (the slot names
 * SPARE now, its generation *GEN), EBUSY, or ENOTSUP (membarrier refused
 * to this process).  The reclaimer's half of the handshake. */
BAKERY_HIDDEN int bakery__slot_revoke(struct bakery *b, unsigned slot, unsigned spare,
                                      uint32_t *gen);

/* Is every slot owned, and every owner idle (a slot waiter may reclaim)? */
BAKERY_HIDDEN bool bakery__slots_idle_owned(struct bakery *b);

#endif /* BAKERY_REVOKE_H */
