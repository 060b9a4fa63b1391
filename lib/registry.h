/* SPDX-License-Identifier: MIT */
/*
 * registry.h - registry.c: participant slots, thread records, the proof of
 * death and the recovery path of a dead slot.
 */
#ifndef BAKERY_REGISTRY_H
#define BAKERY_REGISTRY_H

#include "deadline.h"
#include "token.h"

/* "No slot": a caller without a slot of its own (registry reap, proxy
 * finisher). */
#define BAKERY_NO_SLOT UINT32_MAX

/* A thread's slot in one region (thread-local records). */
struct thread_slot {
	struct bakery *b;
	unsigned slot;
	struct token_hold token;        /* the slot's token, held */
	unsigned tok;                   /* its index (the slot names it while ours) */
	uint32_t *busy_word;            /* token_busy_word(b, tok) */
	uint32_t gen;                   /* the slot's generation when we took it */
	unsigned busy;                  /* lock calls under way and locks held through
	                                   this record (its thread's; read by others
	                                   only as a hint) */
	struct thread_slot *next;       /* the thread's records */
	struct thread_slot *mnext;      /* the mapping's records (recs_lock) */
	uint32_t exited_tid;            /* an orphan's thread (registry.c) */
};

/* This thread's slot in B, claimed on first use. */
BAKERY_HIDDEN int bakery__slot_self(struct bakery *b, unsigned *slot);
/* This thread's slot in B if it has one (no claim): 0 or ENOENT. */
BAKERY_HIDDEN int bakery__slot_self_peek(struct bakery *b, unsigned *slot);
/*
 * The calling thread starts a lock call on B (its slot claimed): from now
 * until the matching bakery__slot_busy_end its slot cannot be revoked.  0,
 * or ESTALE when the slot had been revoked while the thread was idle: its
 * record is gone (the caller claims a slot again); EAGAIN when a
 * revocation of it is under way, its revoker at work (the slot is not to
 * be used now).
 */
BAKERY_HIDDEN int bakery__slot_busy_begin(struct bakery *b);
/* bakery__slot_busy_begin, except that a revocation under way (its
 * revoker stopped or starved, in any PID namespace) is waited for within
 * DL, as a lock would be: EBUSY (WAIT_NONE) or ETIMEDOUT then, or
 * BAKERY_EBADREGION (the revoker's token is forged). */
BAKERY_HIDDEN int bakery__slot_busy_begin_until(struct bakery *b, const struct deadline *dl);
/* bakery__slot_self, then bakery__slot_busy_begin, in one call (the lock
 * path's): 0, ESTALE, EAGAIN (see bakery__slot_busy_begin_until), or
 * bakery__slot_self's errors. */
BAKERY_HIDDEN int bakery__slot_enter(struct bakery *b, unsigned *slot);
/* The lock call ended without the lock, or the lock was released. */
BAKERY_HIDDEN void bakery__slot_busy_end(struct bakery *b);
/* This thread's record of B if it is inside a lock call or holds a lock
 * of B (so its slot is its own for sure), else NULL. */
BAKERY_HIDDEN struct thread_slot *bakery__slot_record_busy(struct bakery *b);
/* The same, as its slot: 0, else ENOENT. */
BAKERY_HIDDEN int bakery__slot_self_busy(struct bakery *b, unsigned *slot);

/* bakery__slot_busy_end on a record of bakery__slot_record_busy (the
 * unlock path's).  When that was its last lock, its token's busy word
 * says it is idle. */
static inline void bakery__record_busy_end(struct thread_slot *t)
{
	CMM_STORE_SHARED(t->busy, t->busy - 1);
	if (t->busy)
		return;
	/* our last register stores before the word that says we are idle
	 * (store->store; pairs with the read barrier between the busy word
	 * and the registers in registry.c's slot_idle) */
	cmm_smp_wmb();
	CMM_STORE_SHARED(*t->busy_word, 0);
}
/* Under pressure: take the slot of an idle owner (none of its registers in
 * use, not inside a lock call) for the calling thread, which has none in B.
 * 0 and *SLOT, BAKERY_ESLOTS (no idle owner, no spare token), or ENOTSUP
 * (membarrier(2) is refused to this process: no slot is ever revoked). */
BAKERY_HIDDEN int bakery__slot_reclaim_idle(struct bakery *b, unsigned *slot);
/* Is every slot of B owned by a live thread that is idle (as above), at a
 * look (a hint, not a decision about any one slot)? */
BAKERY_HIDDEN bool bakery__slots_idle_owned(struct bakery *b);
/* Release the calling thread's slot of B (bakery_close). */
BAKERY_HIDDEN void bakery__slot_release_self(struct bakery *b);
/* Does the calling thread hold LOCK of B through another handle of the same
 * region (another slot of its own)? */
BAKERY_HIDDEN bool bakery__holds_through_other_handle(struct bakery *b, unsigned lock);
/* Does any thread of this process hold a lock of B? */
BAKERY_HIDDEN bool bakery__registry_holds_lock(struct bakery *b);

/*
 * The per-lock half of crash recovery, as the registry sees it: registered
 * in each handle at open (api.c: lock_recovery.c's), so that the registry,
 * which proves deaths and owns the slots, reaches per-lock state without
 * calling up into the lock layer.  SLOT's token is held by the caller.
 */
struct recovery_ops {
	/* Clear SLOT's part in every lock (DEAD: its owner died holding the
	 * token; record an owner death where it held the lock). */
	void (*clear_slot)(struct bakery *b, unsigned slot, bool dead);
	/* Drive SLOT's pending proxy passages without blocking, as the
	 * finisher HELPER; true when none is left. */
	bool (*finish_proxies)(struct bakery *b, unsigned slot, unsigned helper);
	/* Is a proxy passage of SLOT still pending in some lock? */
	bool (*proxies_pending)(struct bakery *b, unsigned slot);
	/* Does SLOT's owner hold a lock? */
	bool (*holds_lock)(struct bakery *b, unsigned slot);
	/* Is SLOT out of every lock: no stage, doorway, ticket, proxy
	 * passage or pass of it (a slot that may be revoked)? */
	bool (*slot_idle)(struct bakery *b, unsigned slot);
};

enum liveness { SLOT_ALIVE, SLOT_GONE };
/* Is the owner of SLOT alive?  A proven death is recovered on the spot
 * (this writes: the dead owner's registers in every lock are cleared), so
 * SLOT_GONE means the slot's registers have been cleared. */
BAKERY_HIDDEN enum liveness bakery__slot_recover_if_dead(struct bakery *b, unsigned slot);
/* Reap every dead slot and drive pending proxy passages (HELPER: the
 * caller's slot, or BAKERY_NO_SLOT); returns how many slots were freed. */
BAKERY_HIDDEN unsigned bakery__registry_reap(struct bakery *b, unsigned helper);
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
BAKERY_HIDDEN int bakery__slot_is_recovering(struct bakery *b, unsigned slot);
/* Settle SLOT: a RECOVERING slot becomes FREE once no proxy passage of it
 * is pending (the only meaning of "settle"). */
BAKERY_HIDDEN void bakery__slot_settle(struct bakery *b, unsigned slot);

#endif /* BAKERY_REGISTRY_H */
