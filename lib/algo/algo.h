/* SPDX-License-Identifier: MIT */
/*
 * algo.h - the interface of the algorithms (struct algo_ops), their
 * barriers, and the walk over a lock's active set they share.
 */
#ifndef BAKERY_ALGO_H
#define BAKERY_ALGO_H

#include "exitfence.h"
#include "wait.h"

/* ------------------------------------------------------------- barriers -- */

/*
 * store_mb(p, v): store v to the register *p, then a full barrier: the
 * store->load points of the papers (a register write followed by reads of
 * the others' registers, the reordering x86-64 does perform).  One locked
 * exchange does both: uatomic_xchg implies a full barrier before and after,
 * which also orders every earlier load and store before the store.  It is
 * cheaper than a plain store and cmm_smp_mb() (mfence) on x86-64.
 * The mutant build (BAKERY_NO_BARRIERS, `make check-mutants`) makes it a
 * plain store, to show the stress test catches the missing barriers.
 */
#ifdef BAKERY_NO_BARRIERS
#define store_mb(p, v) CMM_STORE_SHARED(*(p), (v))
#else
#define store_mb(p, v) ((void)uatomic_xchg((p), (v)))
#endif

/*
 * bakery_release(): orders every load and store of the critical section
 * before the store that follows (the register write that lets the next
 * holder in).  liburcu 0.13 has no release store; on x86 (TSO) loads and
 * stores are never reordered with a later store, so a compiler barrier is
 * enough there, and a full barrier everywhere else.
 */
#if defined(__x86_64__) || defined(__i386__) || defined(BAKERY_NO_BARRIERS)
#define bakery_release() cmm_barrier()
#else
#define bakery_release() cmm_smp_mb()
#endif

/*
 * exit_store(l, mine, v): an exit's store of v to its ticket mine->number
 * in lock L, the store that lets the next holder in, before the load of
 * the waiter count (bakery__reg_signal).  Where this process's exits may
 * leave that store->load barrier to the waiters that sleep (exitfence.h):
 * a release store, then the looks at the region's and the lock's words
 * that say whether they do; the barrier only if not, and then, on every
 * EXIT_AGE_PASSAGES-th passage of our slot, a step of the lock's mark
 * towards 0.  The looks come after the store: a look that saw 0 was made
 * before any waiter's "set" began, and so, with the store, before that
 * waiter's membarrier.  Else store_mb().  Returns MINE: an exit that goes
 * on with it takes it from here (mine = exit_store(...)), so that it need
 * not stay on the stack across the aging's call.
 */
static inline struct bakery_shm_reg *exit_store(const struct bakery_lock *l,
                                                struct bakery_shm_reg *mine, uint64_t v)
{
	/* read before the store, which may alias them as far as the
	 * compiler knows */
	const struct bakery *b = l->b;
	struct bakery_shm_lock *e = l->entry;

	if (caa_likely(b->exits_unfenced)) {
		bakery_release();
		CMM_STORE_SHARED(mine->number, v);
		if (caa_unlikely(exit_fence_wanted(b, e))) {
			/* the store before the load of the waiter count
			 * (store->load), pairing with the waiter's barrier
			 * after its count increment (wait.c) */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			if (caa_unlikely(!(CMM_LOAD_SHARED(mine->acquisitions) & b->exit_age_mask)))
				mine = bakery__exit_fences_age(e, mine);
		}
	} else
		store_mb(&mine->number, v);
	return mine;
}

/* What an algorithm supports beside the exclusive lock (algo_ops.modes). */
#define ALGO_SHARED  0x1u          /* shared (reader) passages */
#define ALGO_HOLDERS 0x2u          /* locks of k > 1 holders   */

struct algo_ops {
	enum bakery_algo id;
	const char *name;
	unsigned modes;            /* ALGO_SHARED | ALGO_HOLDERS, as model-checked */
	/* Take a place in line; never blocks.  0, or ENOMEM (Jayanti, for a
	 * crowd too large to note on the stack: nothing was published, as
	 * after a death before the ticket, which a plain reset clears). */
	int (*doorway)(struct passage *p);
	/* The doorway of a lock made biased (BAKERY_LOCK_BIASED, algo/bias.h):
	 * the same, with the revocation of another slot's bias after its
	 * first line.  NULL: the algorithm's locks cannot be biased. */
	int (*doorway_biased)(struct passage *p);
	/* Wait for our turn: 0, or EBUSY/ETIMEDOUT after leaving the protocol
	 * cleanly (the algorithm's abort). */
	int (*wait)(struct passage *p);
	/* Leave the critical section of L, held through our registers MINE
	 * (a SHARED passage's, or an exclusive one's).  No passage: the
	 * unlock makes none, it needs only these. */
	void (*exit)(const struct bakery_lock *l, struct bakery_shm_reg *mine, bool shared);
	/* The exit of a lock made biased: the same, then the grant of the
	 * bias when it is due (algo/bias.h).  NULL with doorway_biased. */
	void (*exit_biased)(const struct bakery_lock *l, struct bakery_shm_reg *mine,
	                    bool shared);
	/* Clear dead SLOT's part in LOCK; the caller owns the slot's recovery.
	 * Returns the number of passages left to complete by proxy (Jayanti). */
	unsigned (*recover)(struct bakery *b, unsigned lock, unsigned slot);
	/* Drive a pending proxy passage of SLOT in LOCK without blocking;
	 * true when none is left.  HELPER is the caller's own slot. */
	bool (*finish_proxy)(struct bakery *b, unsigned lock, unsigned slot, unsigned helper);
	/* Before a new doorway: finish what a previous passage of ours left
	 * (Jayanti's aborted passage).  0, EBUSY or ETIMEDOUT.  May be NULL. */
	int (*prepare)(struct passage *p);
	/* A passer's abort of waiting SLOT's passage in LOCK on its behalf
	 * (pass.c, between PASSING and CLEARED of SLOT's pass word), when
	 * the plain reset would break the algorithm (Jayanti: a proxy
	 * passage).  Idempotent: a passer's recoverer may redo it.  NULL:
	 * the plain reset. */
	void (*pass_abort)(struct bakery *b, unsigned lock, unsigned slot);
	/* (How the tickets are encoded and ordered is not here but in one
	 * header per algorithm, below the waits that pass.c serves: order.h.) */
};

/* The algorithms, one file each; the table of them is table.c. */
BAKERY_HIDDEN extern const struct algo_ops bakery__algo_lamport, bakery__algo_boulangerie,
	bakery__algo_black_white, bakery__algo_jayanti;

/* After a ticket of a k-holder lock is cleared (exit, abort, recovery):
 * wake those counting the tickets ahead of theirs (algo/common.c). */
BAKERY_HIDDEN void bakery__holders_signal(struct bakery *b, unsigned lock);

/*
 * A walk over a lock's active set: the getset() of the papers.  Each word of
 * the set is read once and the members still to visit stay in a register.
 * Reading the set word by word is a correct getset(): a slot that joined
 * before the walk started is seen (its word is read after that), and a slot
 * leaves only once its registers are clear, so missing a leaver is harmless.
 */
struct active_walk {
	const uint64_t *set;
	uint64_t bits;             /* members of word w not visited yet */
	unsigned w, words, bound, self;
};

/* Word W of the set, without our own bit. */
static inline uint64_t active_word(const struct active_walk *it, unsigned w)
{
	uint64_t bits = CMM_LOAD_SHARED(it->set[w]);

	if (w == it->self / 64)
		bits &= ~(UINT64_C(1) << (it->self % 64));
	return bits;
}

/* A walk over SET, a lock's active set in region B, for slot SELF. */
static inline struct active_walk active_walk_of(const uint64_t *set, struct bakery *b,
                                                unsigned self)
{
	struct active_walk it = {
		.set = set,
		.bound = slots_bound(b),
		.self = self,
	};

	it.words = (it.bound + 63) / 64;
	if (it.words)
		it.bits = active_word(&it, 0);
	return it;
}

static inline struct active_walk active_walk_start(const struct passage *p)
{
	return active_walk_of(p->active, p->b, p->self);
}

/* The next member (not us) below the bound into *J; false at the end. */
static inline bool active_walk_next(struct active_walk *it, unsigned *j)
{
	while (!it->bits) {
		if (++it->w >= it->words)
			return false;
		it->bits = active_word(it, it->w);
	}
	*j = it->w * 64 + (unsigned)__builtin_ctzll(it->bits);
	it->bits &= it->bits - 1;
	return *j < it->bound;
}

/*
 * Is the lock's active set empty but for us, below the bound?  Each word is
 * read once, in order, as a walk reads it: "yes" is what a walk started now
 * would find (no member to visit), so a step may skip its walk on it.
 * "No" may also mean a member past the bound, or our own bit missing (a
 * forged set): the walk then sorts it out.
 * The uncontended passage's two walks are one load and compare each (while
 * the slots ever claimed are below 64; a loop over the words past that),
 * and the walks themselves stay out of its way (the callers keep them in
 * functions of their own, so that the common path saves no registers).
 */
static inline bool active_alone_words(const uint64_t *set, unsigned bound, unsigned self)
{
	unsigned self_word = self / 64, w = 0;
	uint64_t self_bit = UINT64_C(1) << (self % 64);

	/* our own bit is in the set for the whole passage (we joined before
	 * the doorway), and our slot is below the bound: at least one word */
	do {
		if (CMM_LOAD_SHARED(set[w]) != (w == self_word ? self_bit : 0))
			return false;
	} while (++w * 64 < bound);
	return true;
}

/*
 * active_alone's question in two halves, for a doorway: the addresses and
 * our bit are taken before the barrier (lone_look_at: process-local words,
 * which no other process changes), so that after it only the two shared
 * words, the bound and the first word of the set, are loaded, side by
 * side.  Loads that follow a locked instruction wait for it, and a chain
 * of three (passage, region, header) cost more than the barrier's own
 * cycles (docs/performance.md, "What the time of a passage is").
 */
struct lone_look {
	const uint32_t *hwm;       /* the region's slots_hwm */
	const uint64_t *set;       /* the lock's active set */
	uint64_t self_bit;         /* our bit in the set's first word, or 0 */
	unsigned nslots, self;
};

static inline struct lone_look lone_look_at(const struct passage *p)
{
	return (struct lone_look){
		.hwm = &p->b->hdr->slots_hwm,
		.set = p->active,
		.self_bit = p->self < 64 ? UINT64_C(1) << p->self : 0,
		.nslots = p->b->nslots,
		.self = p->self,
	};
}

static inline bool lone_look_alone(const struct lone_look *lk)
{
	unsigned hwm = CMM_LOAD_SHARED(*lk->hwm);
	uint64_t first = CMM_LOAD_SHARED(lk->set[0]);

	/* every slot ever claimed below 64 (a region's usual state, whatever
	 * its size): the loop's one word, without the loop */
	if (caa_likely(hwm <= 64))
		return first == lk->self_bit;
	return active_alone_words(lk->set, slots_bound_of(hwm, lk->nslots), lk->self);
}

static inline bool active_alone(const struct passage *p)
{
	struct lone_look lk = lone_look_at(p);

	return lone_look_alone(&lk);
}

/* for (each slot j of the lock's active set, j != self).  WALK names the
 * walk's state.  `break` leaves the whole walk: the outer loop runs once. */
#define for_each_other(p, j, walk)                                           \
	for (struct active_walk walk = active_walk_start(p); walk.set;          \
	     walk.set = NULL)                                                   \
		for (unsigned j = 0; active_walk_next(&walk, &j);)

/*
 * for (each slot j of the active set, j != self), the slots above LAST
 * first, then those up to LAST: LAST (our predecessor in line) is visited
 * last.  A wait loop that checks its predecessor last finds every other
 * slot's condition met while the predecessor holds the lock (everyone
 * ahead of it has left, everyone else is behind us), so the predecessor's
 * exit is followed by no further load of another slot's line before we
 * enter: at 4 processes on 2 CPUs the hand-over gets ~10 % faster.  The
 * papers' loops go in increasing order, but their arguments take each j
 * alone: any order is as correct (the models visit the others from any
 * slot, round: tests/model).  LAST = BAKERY_NO_SLOT: increasing order.
 * Two walks of the set (the second reads it again: a slot that joined
 * since is behind us, one that left has its registers clear, as for any
 * walk).  `break` ends the current walk only; the callers return instead.
 */
#define for_each_other_last(p, j, walk, last)                                \
	for (unsigned walk##_lap = (last) == BAKERY_NO_SLOT; walk##_lap < 2;   \
	     walk##_lap++)                                                     \
		for_each_other(p, j, walk)                                     \
			if ((j > (last)) == (walk##_lap == 0))

/* Join LOCK's active set (once per slot ownership); leave it with the
 * slot's registers clear (algo/common.c). */
BAKERY_HIDDEN void bakery__active_join(struct passage *p);
BAKERY_HIDDEN void bakery__active_leave(struct bakery *b, unsigned lock, unsigned slot);

#endif /* BAKERY_ALGO_H */
