/* SPDX-License-Identifier: MIT */
/*
 * registry.h - registry.c: participant slots, thread records, the proof of
 * death and the recovery path of a dead slot.
 */
#ifndef BAKERY_REGISTRY_H
#define BAKERY_REGISTRY_H

#include "deadline.h"
#include "region.h"
#include "revoke.h"
#include "token.h"

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

/*
 * The calling thread's records (linked by next: the common case is one),
 * their number, the bakery_close calls it has seen (bakery__region_closes)
 * and the process's orphan records: registry.c's, read here by the lock
 * path's fast half.  initial-exec: each is one %fs-relative load.
 */
#define THREAD_LOCAL_FAST __thread __attribute__((tls_model("initial-exec")))
BAKERY_HIDDEN extern THREAD_LOCAL_FAST struct thread_slot *bakery__thread_slots;
BAKERY_HIDDEN extern THREAD_LOCAL_FAST unsigned bakery__thread_nslots;
BAKERY_HIDDEN extern THREAD_LOCAL_FAST unsigned long bakery__closes_seen;
BAKERY_HIDDEN extern unsigned long bakery__norphans;

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

/* One more lock call (or lock held) through record T: 0, or ESTALE when
 * its slot had been revoked (T is gone then), or record_pin's answer for a
 * revocation of it that did not end within DL (NULL: at once; T stays,
 * not busy). */
BAKERY_HIDDEN int bakery__record_busy_begin_slow(struct thread_slot *t, const struct deadline *dl)
	__attribute__((cold));
static inline int bakery__record_busy_begin(struct thread_slot *t, const struct deadline *dl)
{
	unsigned busy = t->busy + 1;

	CMM_STORE_SHARED(t->busy, busy);
	/* already inside a lock call or holding one: pinned already */
	if (busy > 1)
		return 0;
	/* record_pin's common case, written out (the lock path's): the busy
	 * store, a compiler barrier, our generation still there */
	CMM_STORE_SHARED(*t->busy_word, 1);
	cmm_barrier();
	if (caa_likely(CMM_LOAD_SHARED(t->b->slots[t->slot].gen) == t->gen))
		return 0;
	return bakery__record_busy_begin_slow(t, dl);
}

/* bakery__slot_self, then bakery__slot_busy_begin, in one call (the lock
 * path's): 0, ESTALE, EAGAIN (see bakery__slot_busy_begin_until), or
 * bakery__slot_self's errors.  The common case (bakery__slot_self's) is
 * inline: our first record is B's, and no handle was closed and no record
 * orphaned since we last looked. */
BAKERY_HIDDEN int bakery__slot_enter_slow(struct bakery *b, unsigned *slot);
static inline int bakery__slot_enter(struct bakery *b, unsigned *slot)
{
	struct thread_slot *t = bakery__thread_slots;

	if (caa_likely(t && t->b == b && bakery__region_closes() == bakery__closes_seen &&
	               !uatomic_read(&bakery__norphans))) {
		*slot = t->slot;
		return bakery__record_busy_begin(t, NULL);
	}
	return bakery__slot_enter_slow(b, slot);
}
/* The lock call ended without the lock, or the lock was released. */
BAKERY_HIDDEN void bakery__slot_busy_end(struct bakery *b);
/* This thread's record of B if it is inside a lock call or holds a lock
 * of B (so its slot is its own for sure), else NULL.  Inline when B's is
 * the thread's first record. */
BAKERY_HIDDEN struct thread_slot *bakery__slot_record_busy_slow(struct bakery *b);
static inline struct thread_slot *bakery__slot_record_busy(struct bakery *b)
{
	struct thread_slot *t = bakery__thread_slots;

	if (caa_likely(t && t->b == b))
		return t->busy ? t : NULL;
	return bakery__slot_record_busy_slow(b);
}
/* For a thread that by its own count holds nothing of B (its record is
 * not busy): its record, pinned now as by a lock call, for
 * bakery__slot_leave (slotwait.h) to end, if it has a slot in B still its
 * own; else NULL.  (The unlock path's look at registers that may say we
 * hold a lock after all.) */
BAKERY_HIDDEN struct thread_slot *bakery__slot_pin(struct bakery *b) __attribute__((cold));

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
/* Release it for a thread waiting for a slot, and let that thread have it:
 * the calling thread's claims in B find no slot free for the next NS
 * nanoseconds, or until another slot is freed, whichever comes first. */
BAKERY_HIDDEN void bakery__slot_yield_self(struct bakery *b, uint64_t ns);
/* How long the calling thread's yield in B still holds its claims back
 * (ns; 0: none). */
BAKERY_HIDDEN uint64_t bakery__slot_yield_left(const struct bakery *b);
/* Does the calling thread, which has a record of B, hold LOCK of B through
 * another handle of the same region (another slot of its own)?  With one
 * record, B's, it has no other: one load. */
BAKERY_HIDDEN bool bakery__holds_through_other_handle_slow(struct bakery *b, unsigned lock);
static inline bool bakery__holds_through_other_handle(struct bakery *b, unsigned lock)
{
	if (caa_likely(bakery__thread_nslots <= 1))
		return false;
	return bakery__holds_through_other_handle_slow(b, lock);
}
/* Is the calling thread inside a lock call or holding a lock, in any
 * region (by its own records)? */
BAKERY_HIDDEN bool bakery__thread_busy_anywhere(void);
/* Does any thread of this process hold a lock of B? */
BAKERY_HIDDEN bool bakery__registry_holds_lock(struct bakery *b);

enum liveness { SLOT_ALIVE, SLOT_GONE };
/* Is the owner of SLOT alive?  A proven death is recovered on the spot
 * (this writes: the dead owner's registers in every lock are cleared), so
 * SLOT_GONE means the slot's registers have been cleared. */
BAKERY_HIDDEN enum liveness bakery__slot_recover_if_dead(struct bakery *b, unsigned slot);
/* Reap every dead slot and drive pending proxy passages (HELPER: the
 * caller's slot, or BAKERY_NO_SLOT); returns how many slots were freed. */
BAKERY_HIDDEN unsigned bakery__registry_reap(struct bakery *b, unsigned helper);
/* What slot_recover_if_marked found. */
enum owner_mark {
	OWNER_UNMARKED,         /* SLOT's token is not marked owner-died */
	OWNER_MARKED,           /* it was, but no death was proven here (its
	                           token was taken again: a recoverer at work,
	                           or a new owner) */
	OWNER_RECOVERED,        /* it was: the death proven, the slot recovered */
};

/* The one way to act on a token marked owner-died: if SLOT's is, prove
 * and recover the death (bakery__slot_recover_if_dead).  One load when it
 * is not. */
static inline enum owner_mark slot_recover_if_marked(struct bakery *b, unsigned slot)
{
	if (caa_likely(!token_owner_died(CMM_LOAD_SHARED(*slot_token_word(b, slot)))))
		return OWNER_UNMARKED;
	return bakery__slot_recover_if_dead(b, slot) == SLOT_GONE ? OWNER_RECOVERED : OWNER_MARKED;
}
BAKERY_HIDDEN int bakery__slot_is_recovering(struct bakery *b, unsigned slot);
/* Settle SLOT: a RECOVERING slot becomes FREE once no proxy passage of it
 * is pending (the only meaning of "settle"). */
BAKERY_HIDDEN void bakery__slot_settle(struct bakery *b, unsigned slot);

#endif /* BAKERY_REGISTRY_H */
