/* SPDX-License-Identifier: MIT */
/*
 * registry.c - participant slots and their kernel-attested liveness tokens.
 *
 * A thread owns a slot for as long as it holds the slot's token, a robust
 * futex word (token.c), unless the slot is revoked while the thread is
 * idle (revoke.c: the slot then names another token).  The kernel marks it
 * FUTEX_OWNER_DIED when its holder thread ends without giving it back (SIGKILL, crash, thread exit),
 * whatever PID namespace it ran in and however soon its PID is reused: the
 * proof of death is the kernel's, not a PID comparison.  Whoever then takes
 * the token gets EOWNERDEAD exactly once and owns the recovery; if that
 * recoverer dies too, the next one gets EOWNERDEAD again and redoes the
 * (idempotent) recovery.  A slot is handed to a new owner only after its
 * recovery has finished.
 *
 * Why a robust futex rather than an OFD lock: slots are per thread, and a
 * robust futex is thread-scoped, so a thread that exits while holding a lock
 * is caught without any cooperation, and the kernel wakes a waiter at the
 * death; OFD locks die with the process only, and wake nobody.  The price:
 * the token's window (and the mapping) must stay mapped while the thread
 * holds the token, because the kernel walks the node at thread exit; which is
 * why mappings are reference counted by the threads' slots.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fd.h"
#include "futex.h"
#include "recovery_ops.h"
#include "region.h"
#include "registry.h"

/* ----------------------------------------------------- per-thread state -- */

/* The calling thread's records and their number (registry.h: the lock
 * path's fast half reads them inline) */
__thread struct thread_slot *bakery__thread_slots;
__thread unsigned bakery__thread_nslots;
static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

/* bakery_close calls seen by this thread: it gives back its slots of
 * closed handles at its next lock call (bakery__region_closes) */
__thread unsigned long bakery__closes_seen;

static void thread_exit(void *unused);
static void orphans_reap(void);
static pthread_mutex_t orphans_lock = PTHREAD_MUTEX_INITIALIZER;
static struct thread_slot *orphans;     /* linked by next (orphan_add) */
unsigned long bakery__norphans;

/* Is T one of the calling thread's records? */
static bool record_is_mine(const struct thread_slot *t)
{
	for (const struct thread_slot *m = bakery__thread_slots; m; m = m->next)
		if (m == t)
			return true;
	return false;
}

/*
 * In a fork child, the parent's other threads' slots of handle B are none
 * of ours (their tokens stay the parent's threads'): drop the references
 * and token windows their records hold, or bakery_close in the child could
 * never unmap the region (the user's handle still holds one reference: B
 * stays mapped meanwhile).  The forking thread's own records are dropped
 * below.
 */
static void forget_other_threads(struct bakery *b)
{
	for (struct thread_slot *o = b->recs, *next; o; o = next) {
		next = o->mnext;
		if (record_is_mine(o))
			continue;
		bakery__token_forget(&o->token);
		uatomic_add(&b->refs, -1);
		free(o);
	}
	b->recs = NULL;
}

/*
 * In a fork child only the forking thread survives, and glibc has emptied
 * its robust list: the tokens its records name belong to the parent's
 * thread.  Forget them (the child's threads claim fresh slots) and the
 * parent's held locks with them.  (region.c resets the handles' lists.)
 */
static void atfork_child(void)
{
	struct thread_slot *t = bakery__thread_slots;

	pthread_mutex_init(&orphans_lock, NULL);
	bakery__region_for_each(forget_other_threads);
	bakery__thread_slots = NULL;
	bakery__thread_nslots = 0;
	while (t) {
		struct thread_slot *next = t->next;
		bakery__token_forget(&t->token);
		bakery__region_put(t->b);
		free(t);
		t = next;
	}
}

static void tls_init(void)
{
	pthread_key_create(&tls_key, thread_exit);
	pthread_atfork(NULL, NULL, atfork_child);
}

/* ------------------------------------------------------------- recovery -- */

/*
 * Crash recovery, top to bottom:
 *
 *   bakery__registry_reap        every slot below the high-water mark
 *     reap_one                   one slot, its token taken and given back
 *   bakery__slot_recover_if_dead one slot a waiter found dead (wait.c)
 *   slot_try_take                a slot being claimed
 *       slot_take_and_recover    THE worker: take the token; if its holder
 *                                died, clear the dead owner's part in every
 *                                lock, then finish its proxy passages
 *         slot_recover_dead      the clearing, through b->recovery
 *                                (lock_recovery.c), then settle
 *
 * "Settle" means one thing: a RECOVERING slot becomes FREE once no proxy
 * passage of it is left (bakery__slot_settle).
 */

/*
 * A slot turned FREE: tell the threads waiting for one (slotwait.c).  The
 * state change (a cmpxchg, a full barrier) before the count; the count (an
 * atomic increment, a full barrier) before the load of the sleepers, which
 * pairs with the waiter's increment of the sleepers before its own load of
 * the count: either it sees our count move, or we see it asleep.  One is
 * woken per slot, the longest asleep first.
 */
static void slot_freed(struct bakery *b)
{
	uatomic_inc(&b->hdr->slot_frees);
	if (caa_unlikely(uatomic_read(&b->hdr->slot_sleepers)))
		bakery__futex_wake_one(&b->hdr->slot_frees);
}

/*
 * A RECOVERING slot becomes FREE once no proxy passage of it is pending.
 * Called by the releaser and by every proxy finisher: each first publishes
 * its own change (state or proxy, with a full barrier), then looks at the
 * other's, so at least one of them sees both done.
 */
static bool slot_settle(struct bakery *b, unsigned slot)
{
	struct bakery_shm_slot *s = &b->slots[slot];

	cmm_smp_mb();   /* our proxy/state store before reading the others' */
	return CMM_LOAD_SHARED(s->state) == SLOT_RECOVERING &&
	       !b->recovery->proxies_pending(b, slot) &&
	       uatomic_cmpxchg(&s->state, SLOT_RECOVERING, SLOT_FREE) == SLOT_RECOVERING;
}

void bakery__slot_settle(struct bakery *b, unsigned slot)
{
	if (slot_settle(b, slot))
		slot_freed(b);
}

/*
 * Clear every trace of SLOT from every lock; then the slot is FREE, or
 * RECOVERING while proxy passages remain.  The caller holds the slot's token,
 * from EOWNERDEAD (DEAD: a holder's death is recorded) or as the owner giving
 * it back.  Idempotent: a recoverer that dies half-way is followed by another.
 * True if this call made the slot FREE: the caller announces it
 * (slot_freed) once it has let go of the token, or a waiter woken for it
 * finds the token still held, and sleeps again.
 */
static bool slot_clear(struct bakery *b, unsigned slot, bool dead)
{
	b->recovery->clear_slot(b, slot, dead);
	CRASH_POINT("recover-cleared");
	uatomic_set(&b->slots[slot].state, SLOT_RECOVERING);
	return slot_settle(b, slot);
}

/* The owner is gone and we hold its token after EOWNERDEAD (not
 * announced: see slot_clear). */
static void slot_recover_dead_quiet(struct bakery *b, unsigned slot)
{
	struct bakery_shm_slot *s = &b->slots[slot];

	if (CMM_LOAD_SHARED(s->state) == SLOT_ACTIVE || CMM_LOAD_SHARED(s->state) == SLOT_RECOVERING)
		slot_clear(b, slot, true);
}

/* Is SLOT FREE now, having been found BEFORE otherwise? */
static bool slot_turned_free(struct bakery *b, unsigned slot, uint32_t before)
{
	return before != SLOT_FREE && CMM_LOAD_SHARED(b->slots[slot].state) == SLOT_FREE;
}

/* Let go of a slot's token H; then, if we made the slot FREE (FREED),
 * announce it: after, so that the waiter it wakes finds the token back. */
static void slot_token_give(struct bakery *b, bool freed, struct token_hold *h)
{
	bakery__token_give(h);
	if (freed)
		slot_freed(b);
}

/* The same, for revoke.c, which gives the token back after us: announced
 * at once (a waiter woken early finds it at its next scan). */
static void slot_recover_dead(struct bakery *b, unsigned slot)
{
	uint32_t before = CMM_LOAD_SHARED(b->slots[slot].state);

	slot_recover_dead_quiet(b, slot);
	if (slot_turned_free(b, slot, before))
		slot_freed(b);
}

/*
 * The one recovery worker.  Take SLOT's token unless a live thread holds
 * it; if its holder died, clear what it left in every lock (and clear an
 * ACTIVE slot whose token nobody held: see below); then, if
 * FINISHER is a slot (not BAKERY_NO_SLOT), drive the slot's pending proxy
 * passages as far as they go without waiting, as their finisher FINISHER
 * (we hold the token, so a finisher we name after the slot itself is
 * replaced only if we die).  Without this a region whose every slot awaits
 * a proxy could never be entered again.  Returns bakery__token_try's
 * answer: 0 or EOWNERDEAD with the token held in H; *before (if not NULL)
 * gets the state found with it in hand.
 */
static int slot_take_and_recover(struct bakery *b, unsigned slot, unsigned finisher,
                                 uint32_t *before, struct token_hold *h)
{
	struct bakery_shm_slot *s = &b->slots[slot];
	unsigned tok = slot_token_index(b, slot);
	int r = bakery__token_try(b, tok, h);

	if (r != 0 && r != EOWNERDEAD)
		return r;
	/* With the token in hand: is it still the slot's?  A revocation under
	 * way ends first; one that committed left it a spare, whose holder
	 * (a revoked owner) died with nothing of the slot's to recover. */
	if (bakery__revocation_settle(b, slot, NULL, slot_recover_dead)) {
		/* a live revoker's: not ours to take; a death stays marked
		 * for later */
		if (r == EOWNERDEAD)
			bakery__token_abandon(h);
		else
			bakery__token_give(h);
		return EBUSY;
	}
	if (slot_token_index(b, slot) != tok) {
		bakery__spare_put_back(b, tok, h);
		return EBUSY;
	}
	/* read with the token held: nobody else frees it meanwhile */
	if (before)
		*before = CMM_LOAD_SHARED(s->state);
	if (r == EOWNERDEAD)
		slot_recover_dead_quiet(b, slot);
	else if (CMM_LOAD_SHARED(s->state) == SLOT_ACTIVE)
		/* ACTIVE, and its token was free: nobody owns it.  Its owner
		 * let go of the token without clearing the slot: its exit or
		 * bakery_close timed out on a revocation of the slot
		 * (record_release), which its revoker then undid, the token
		 * being free.  The owner held no lock (its registers are
		 * idle) and has forgotten the slot: clear it, or it would
		 * stay taken for good. */
		slot_clear(b, slot, false);
	if (finisher != BAKERY_NO_SLOT && CMM_LOAD_SHARED(s->state) == SLOT_RECOVERING &&
	    b->recovery->finish_proxies(b, slot, finisher))
		slot_settle(b, slot);
	return r;
}

enum liveness bakery__slot_recover_if_dead(struct bakery *b, unsigned slot)
{
	struct token_hold h;
	uint32_t before;

	switch (slot_take_and_recover(b, slot, BAKERY_NO_SLOT, &before, &h)) {
	case EOWNERDEAD:
	case 0:
		slot_token_give(b, slot_turned_free(b, slot, before), &h);
		return SLOT_GONE;
	default:
		/* EBUSY: alive (or our own).  An error mapping the token's
		 * window proves nothing either: treat as alive. */
		return SLOT_ALIVE;
	}
}

int bakery__slot_is_recovering(struct bakery *b, unsigned slot)
{
	return CMM_LOAD_SHARED(b->slots[slot].state) == SLOT_RECOVERING;
}

/* Reap slot I if its owner is gone: true if this call freed it (a slot we
 * found dead or RECOVERING, with its token in hand, and leave FREE). */
static bool reap_one(struct bakery *b, unsigned i, unsigned helper, unsigned *freed)
{
	struct bakery_shm_slot *s = &b->slots[i];
	struct token_hold h;
	uint32_t before;
	bool now_free;
	int r;

	if (CMM_LOAD_SHARED(s->state) == SLOT_FREE)
		return false;
	/* a dead revoker's, most likely */
	if (bakery__revocation_settle(b, i, NULL, slot_recover_dead))
		return false;
	/* without a slot of our own, the one whose token we hold names the
	 * finisher */
	r = slot_take_and_recover(b, i, helper < b->nslots ? helper : i, &before, &h);
	if (r != 0 && r != EOWNERDEAD)
		return false;
	now_free = slot_turned_free(b, i, before);
	if (now_free)
		(*freed)++;
	slot_token_give(b, now_free, &h);
	return now_free;
}

unsigned bakery__registry_reap(struct bakery *b, unsigned helper)
{
	unsigned freed = 0, bound = slots_bound(b);
	bool again = true;

	/* a proxy passage completed in one pass may unblock one scanned
	 * before it: go round again while a pass frees a slot */
	for (unsigned pass = 0; again && pass <= bound; pass++) {
		again = false;
		for (unsigned i = 0; i < bound; i++)
			again |= reap_one(b, i, helper, &freed);
	}
	return freed;
}

/* ---------------------------------------------------------------- claim -- */

static void hwm_raise(struct bakery *b, unsigned slot)
{
	uint32_t cur = uatomic_read(&b->hdr->slots_hwm);

	while (cur < slot + 1) {
		uint32_t seen = uatomic_cmpxchg(&b->hdr->slots_hwm, cur, slot + 1);
		if (seen == cur)
			break;
		cur = seen;
	}
}

/* Try to take SLOT for record T: 0 if we now own it (token held in
 * T->token, its index and the slot's generation in T, state ACTIVE),
 * EBUSY if it is not free, or what kept us from holding its token. */
static int slot_try_take(struct bakery *b, unsigned slot, struct thread_slot *t)
{
	struct bakery_shm_slot *s = &b->slots[slot];
	int r = slot_take_and_recover(b, slot, slot, NULL, &t->token);

	if (r != 0 && r != EOWNERDEAD)
		return r;
	if (CMM_LOAD_SHARED(s->state) != SLOT_FREE) {
		/* RECOVERING: a proxy passage still needs the registers */
		bakery__token_give(&t->token);
		return EBUSY;
	}
	CRASH_POINT("claim");
	t->tok = slot_token_index(b, slot);
	t->busy_word = token_busy_word(b, t->tok);
	/* a dead holder's busy word is not ours */
	CMM_STORE_SHARED(*t->busy_word, 0);
	s->token = t->tok;
	/* even, moved on: a record of the slot's last owner tells it is not
	 * its own any more */
	t->gen = (CMM_LOAD_SHARED(s->gen) | 1u) + 1u;
	CMM_STORE_SHARED(s->gen, t->gen);
	bakery__slot_sign(s);
	hwm_raise(b, slot);
	uatomic_set(&s->state, SLOT_ACTIVE);
	return 0;
}

/* Take the lowest slot we can: 0, BAKERY_ESLOTS when every slot is owned,
 * EAGAIN when the only ones not owned are still being recovered, or what
 * stopped us from holding any token at all (ENOMEM: no memory for
 * a token's window; ENOTSUP: this thread has no robust list). */
static int slot_claim(struct bakery *b, struct thread_slot *t)
{
	bool recovering = false;

	for (int round = 0; round < 2; round++) {
		for (unsigned i = 0; i < b->nslots; i++) {
			int r;

			/* a live owner's slot: skip without touching its line */
			if (round == 0 && CMM_LOAD_SHARED(b->slots[i].state) != SLOT_FREE)
				continue;
			r = slot_try_take(b, i, t);
			if (r == 0) {
				t->slot = i;
				return 0;
			}
			if (r != EBUSY)
				return r;
			recovering |= round == 1 && bakery__slot_is_recovering(b, i);
		}
		/* second round: every slot, reaping dead owners on the way */
	}
	/* a dead owner's slot still lends its registers to a passage being
	 * completed by proxy (Jayanti): it comes back once the passages ahead
	 * of that one have gone, so this is a "not now", not a full region */
	return recovering ? EAGAIN : BAKERY_ESLOTS;
}

/*
 * The slot this thread last gave back to a waiter (bakery__slot_yield_self):
 * the region, the count of slot frees the give-back made, and when the
 * yield lapses.  Until then, and while no other slot is freed, this
 * thread's claims in that region find nothing free, so that the waiter
 * woken for the slot takes it: the giver runs on and would otherwise claim
 * it again within a microsecond, long before the waiter is scheduled.
 */
static __thread struct {
	const struct bakery *b;
	uint32_t frees;
	uint64_t until;
} yielded;

uint64_t bakery__slot_yield_left(const struct bakery *b)
{
	uint64_t now;

	if (caa_likely(yielded.b != b))
		return 0;
	now = monotonic_ns();
	if (uatomic_read(&b->hdr->slot_frees) == yielded.frees && now < yielded.until)
		return yielded.until - now;
	yielded.b = NULL;
	return 0;
}

/* Give back our own slot: its registers are idle unless a lock is held. */
static void slot_give_back(struct bakery *b, unsigned slot, struct token_hold *h)
{
	bool freed = slot_clear(b, slot, false);

	/* Cut short under us, our view of the registers may be private zero
	 * pages, so the clearing above may not have reached the others: leave
	 * the slot as a dead owner's, for them to recover. */
	if (region_lost(b)) {
		bakery__token_abandon(h);
		return;
	}
	slot_token_give(b, freed, h);
	CRASH_POINT("slot-announced");
}

/* ------------------------------------------------------- thread records -- */

/* The calling thread's slots (one robust-list entry each). */
static unsigned records_count(void)
{
	return bakery__thread_nslots;
}

static struct thread_slot *record_find(struct bakery *b)
{
	for (struct thread_slot *t = bakery__thread_slots; t; t = t->next)
		if (t->b == b)
			return t;
	return NULL;
}

/* Does the owner of SLOT hold any lock of B? */
static bool slot_holds_lock(struct bakery *b, unsigned slot)
{
	return b->recovery->holds_lock(b, slot);
}

static void record_link(struct thread_slot *t)
{
	pthread_mutex_lock(&t->b->recs_lock);
	t->mnext = t->b->recs;
	t->b->recs = t;
	pthread_mutex_unlock(&t->b->recs_lock);
}

static void record_unlink(struct thread_slot *t)
{
	pthread_mutex_lock(&t->b->recs_lock);
	for (struct thread_slot **pp = &t->b->recs; *pp; pp = &(*pp)->mnext)
		if (*pp == t) {
			*pp = t->mnext;
			break;
		}
	pthread_mutex_unlock(&t->b->recs_lock);
}

bool bakery__thread_busy_anywhere(void)
{
	for (const struct thread_slot *t = bakery__thread_slots; t; t = t->next)
		if (t->busy)
			return true;
	return false;
}

bool bakery__registry_holds_lock(struct bakery *b)
{
	bool held = false;

	/* only a record inside a lock call or holding a lock surely still
	 * owns its slot (the others' registers may be a new owner's) */
	pthread_mutex_lock(&b->recs_lock);
	for (struct thread_slot *t = b->recs; t && !held; t = t->mnext)
		held = CMM_LOAD_SHARED(t->busy) && slot_holds_lock(b, t->slot);
	pthread_mutex_unlock(&b->recs_lock);
	return held;
}

/* Drop record T, whose slot was revoked: the slot and its registers are
 * someone else's; the token we still hold is a spare, given back. */
static void record_drop_revoked(struct thread_slot *t)
{
	record_unlink(t);
	bakery__spare_put_back(t->b, t->tok, &t->token);
	bakery__region_put(t->b);
	free(t);
}

/*
 * Mark T's token busy, then make sure its slot is still T's: the owner's
 * half of the revocation handshake (revoke.c).  0: it is, and stays T's
 * while the busy word reads 1; ESTALE: it was revoked; a revocation of it
 * that did not end within DL (bakery__revocation_settle's answers: the busy word says
 * 1 meanwhile, so that the revoker gives up when it looks): the slot is
 * not to be used now.  (A region cut short under us reads zeros: the slot
 * counts as ours, the callers see the loss.)
 */
static int record_pin(struct thread_slot *t, const struct deadline *dl)
{
	struct bakery *b = t->b;
	uint32_t *gen = &b->slots[t->slot].gen;
	int err;

	CMM_STORE_SHARED(*t->busy_word, 1);
	/* the busy store before the generation load (store->load) with a
	 * compiler barrier only, so that a lock call pays one load: the
	 * reclaimer's membarrier (bakery__slot_revoke) makes it a full barrier when
	 * it matters, so that either it sees us busy or we see its odd
	 * generation */
	cmm_barrier();
	if (caa_likely(CMM_LOAD_SHARED(*gen) == t->gen) || region_lost(b))
		return 0;
	err = bakery__revocation_settle(b, t->slot, dl, slot_recover_dead);
	if (!err && CMM_LOAD_SHARED(*gen) == t->gen)
		return 0;       /* the revocation gave up: still ours */
	CMM_STORE_SHARED(*t->busy_word, 0);
	return err ? err : ESTALE;
}

/* Unlink record T from the thread and the mapping, give its slot back
 * (or drop the record if the slot is not T's any more). */
static void record_release(struct thread_slot *t)
{
	struct deadline dl = deadline_in(REVOKE_WAIT_NS);

	/* revoked, or a revocation that did not end: the slot may be the
	 * revoker's, so drop the record without giving the slot back */
	if (!t->busy && !region_lost(t->b) && record_pin(t, &dl)) {
		record_drop_revoked(t);
		return;
	}
	record_unlink(t);
	slot_give_back(t->b, t->slot, &t->token);
	bakery__region_put(t->b);
	free(t);
}

/* Give back slots of mappings the user closed since we last looked. */
static void records_prune_closed(void)
{
	struct thread_slot **pp = &bakery__thread_slots;

	while (*pp) {
		struct thread_slot *t = *pp;
		if (CMM_LOAD_SHARED(t->b->closed) && !t->busy) {
			*pp = t->next;
			bakery__thread_nslots--;
			record_release(t);
		} else {
			pp = &t->next;
		}
	}
}

int bakery__slot_self_peek(struct bakery *b, unsigned *slot)
{
	struct thread_slot *t = bakery__thread_slots;

	/* the common case: one region per thread */
	if (caa_likely(t && t->b == b)) {
		*slot = t->slot;
		return 0;
	}
	t = record_find(b);
	if (!t)
		return ENOENT;
	*slot = t->slot;
	return 0;
}

/* T, with its slot and token, becomes one of the calling thread's
 * records of B. */
static void record_adopt(struct bakery *b, struct thread_slot *t)
{
	t->b = b;
	bakery__region_get(b);
	record_link(t);
	t->next = bakery__thread_slots;
	bakery__thread_slots = t;
	bakery__thread_nslots++;
	pthread_setspecific(tls_key, (void *)1);
}

/* bakery__slot_self's work beyond the lookup: pruning, reaping orphans,
 * claiming.  C is the close count the caller read. */
static int slot_self_slow(struct bakery *b, unsigned long c, unsigned *slot)
{
	struct thread_slot *t;
	int err;

	orphans_reap();
	if (c != bakery__closes_seen) {
		/* the count before the `closed` flags it announces (load->load;
		 * pairs with the full barrier in bakery__region_close) */
		cmm_smp_rmb();
		bakery__closes_seen = c;
		records_prune_closed();
	}
	if (caa_likely(bakery__slot_self_peek(b, slot) == 0))
		return 0;
	pthread_once(&tls_once, tls_init);
	records_prune_closed();
	if (records_count() >= BAKERY_MAX_THREAD_REGIONS)
		return BAKERY_EREGIONS;  /* the kernel would not walk our robust list so far */
	if (bakery__slot_yield_left(b))
		return BAKERY_ESLOTS;   /* the slot we gave back is a waiter's */
	t = calloc(1, sizeof(*t));
	if (!t)
		return ENOMEM;
	err = slot_claim(b, t);
	if (err) {
		free(t);
		return err;
	}
	record_adopt(b, t);
	*slot = t->slot;
	return 0;
}

/*
 * The calling thread's slot in B, claimed on first use.  The common case,
 * nothing to prune or reap and a slot already ours, is a few loads; the
 * rest reaches the C library's cancellation points (fopen of /proc, close
 * of a handle's descriptor when its last reference goes) and so runs with
 * cancellation disabled: a thread cancelled there would leave a slot, a
 * token or a reference behind.
 */
int bakery__slot_self(struct bakery *b, unsigned *slot)
{
	unsigned long c = bakery__region_closes();
	int old, err;

	if (caa_likely(c == bakery__closes_seen && !uatomic_read(&bakery__norphans) &&
	               bakery__slot_self_peek(b, slot) == 0))
		return 0;
	old = cancel_off();
	err = slot_self_slow(b, c, slot);
	cancel_restore(old);
	return err;
}

/* Are A and B handles of the same shm object?  By its identity, recorded
 * at open: a hard link or a rename gives it other names, and a name may
 * have named another object when the other handle was opened. */
static bool same_region(const struct bakery *a, const struct bakery *b)
{
	return a->ino == b->ino && a->dev == b->dev;
}

bool bakery__holds_through_other_handle_slow(struct bakery *b, unsigned lock)
{
	for (struct thread_slot *t = bakery__thread_slots; t; t = t->next)
		if (t->busy && t->b != b && !t->b->closed && !t->b->lost && same_region(t->b, b) &&
		    CMM_LOAD_SHARED(reg_of(t->b, lock, t->slot)->stage) == BAKERY_PASS_CRITICAL)
			return true;
	return false;
}

void bakery__slot_release_self(struct bakery *b)
{
	for (struct thread_slot **pp = &bakery__thread_slots; *pp; pp = &(*pp)->next) {
		struct thread_slot *t = *pp;
		if (t->b == b) {
			*pp = t->next;
			bakery__thread_nslots--;
			record_release(t);
			return;
		}
	}
}

void bakery__slot_yield_self(struct bakery *b, uint64_t ns)
{
	/* our give-back is the next free unless another comes first: then
	 * there is a slot for us too, and no yield */
	uint32_t frees = uatomic_read(&b->hdr->slot_frees) + 1u;

	bakery__slot_release_self(b);
	yielded.b = b;
	yielded.frees = frees;
	yielded.until = monotonic_ns() + ns;
}

/* The calling thread's record of B (the common case first). */
static struct thread_slot *record_of(struct bakery *b)
{
	struct thread_slot *t = bakery__thread_slots;

	return caa_likely(t && t->b == b) ? t : record_find(b);
}

/* Take T off the calling thread's list. */
static void record_forget_mine(struct thread_slot *t)
{
	for (struct thread_slot **pp = &bakery__thread_slots; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			bakery__thread_nslots--;
			return;
		}
}

/* bakery__record_busy_begin when the generation moved: record_pin decides. */
int bakery__record_busy_begin_slow(struct thread_slot *t, const struct deadline *dl)
{
	int old, err;

	if ((err = record_pin(t, dl)) == 0)
		return 0;
	if (err != ESTALE) {
		CMM_STORE_SHARED(t->busy, t->busy - 1);
		return err;
	}
	old = cancel_off();
	record_forget_mine(t);
	record_drop_revoked(t);
	cancel_restore(old);
	return ESTALE;
}

int bakery__slot_busy_begin(struct bakery *b)
{
	struct thread_slot *t = record_of(b);

	return caa_likely(t) ? bakery__record_busy_begin(t, NULL) : ESTALE;
}

int bakery__slot_busy_begin_until(struct bakery *b, const struct deadline *dl)
{
	struct thread_slot *t = record_of(b);

	return caa_likely(t) ? bakery__record_busy_begin(t, dl) : ESTALE;
}

int bakery__slot_enter_slow(struct bakery *b, unsigned *slot)
{
	int err = bakery__slot_self(b, slot);

	return err ? err : bakery__slot_busy_begin(b);
}

void bakery__slot_busy_end(struct bakery *b)
{
	struct thread_slot *t = record_of(b);

	if (t && t->busy)
		bakery__record_busy_end(t);
}

struct thread_slot *bakery__slot_record_busy_slow(struct bakery *b)
{
	struct thread_slot *t = record_find(b);

	return t && t->busy ? t : NULL;
}

struct thread_slot *bakery__slot_pin(struct bakery *b)
{
	unsigned self;

	/* no claim: a thread without a slot in B has nothing to pin */
	if (bakery__slot_self_peek(b, &self) || bakery__slot_busy_begin(b))
		return NULL;
	return bakery__slot_record_busy(b);
}

int bakery__slot_reclaim_idle(struct bakery *b, unsigned *slot)
{
	struct thread_slot *t;
	unsigned bound;
	int old, err = BAKERY_ESLOTS;

	if (bakery__barrier_refused())
		return ENOTSUP;
	if (region_lost(b) || records_count() >= BAKERY_MAX_THREAD_REGIONS)
		return BAKERY_ESLOTS;
	old = cancel_off();
	pthread_once(&tls_once, tls_init);
	t = calloc(1, sizeof(*t));
	if (!t || bakery__spare_take(b, &t->token, &t->tok)) {
		free(t);
		goto out;
	}
	t->busy_word = token_busy_word(b, t->tok);
	bound = slots_bound(b);
	for (unsigned i = 0; i < bound && err == BAKERY_ESLOTS; i++) {
		int r = bakery__slot_revoke(b, i, t->tok, &t->gen);

		if (r == 0)
			t->slot = i;
		if (r == 0 || r == ENOTSUP)
			err = r;
	}
	if (err) {
		bakery__spare_put_back(b, t->tok, &t->token);
		free(t);
		goto out;
	}
	record_adopt(b, t);
	*slot = t->slot;
out:
	cancel_restore(old);
	return err;
}

/*
 * Records of threads that exited holding a lock.  Their token windows hold
 * the robust-list nodes the kernel walks when the thread is gone, so they
 * stay mapped until the kernel has marked the token (owner-died, the TID
 * cleared: handle_futex_death writes the word after reading the node); then
 * the next lock call of any thread unmaps them and drops their mapping
 * references.  Without this every such death cost the process two mappings
 * for good.
 */
static void orphan_add(struct thread_slot *t)
{
	t->exited_tid = token_tid((uint32_t)syscall(SYS_gettid));
	pthread_mutex_lock(&orphans_lock);
	t->next = orphans;
	orphans = t;
	uatomic_inc(&bakery__norphans);
	pthread_mutex_unlock(&orphans_lock);
}

/* Has the kernel let go of orphan T's node? */
static bool orphan_walked(const struct thread_slot *t)
{
	return token_tid(uatomic_read(t->token.word)) != t->exited_tid;
}

static void orphans_reap(void)
{
	if (caa_likely(!uatomic_read(&bakery__norphans)) || pthread_mutex_trylock(&orphans_lock))
		return;
	for (struct thread_slot **pp = &orphans; *pp;) {
		struct thread_slot *t = *pp;

		if (!orphan_walked(t)) {
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		uatomic_dec(&bakery__norphans);
		bakery__token_forget(&t->token);
		bakery__region_put(t->b);
		free(t);
	}
	pthread_mutex_unlock(&orphans_lock);
}

/*
 * Thread exit.  A slot of a thread that still holds a lock is left as it is:
 * the token stays held, the kernel marks it owner-died when the thread is
 * gone, and survivors recover it (EOWNERDEAD for the next holder).  The
 * process no longer holds those locks (bakery_close must not say EBUSY for
 * them); the record becomes an orphan until the kernel has walked the
 * token's memory (orphans_reap).
 */
static void thread_exit(void *unused)
{
	struct thread_slot *t = bakery__thread_slots;

	bakery__thread_slots = NULL;
	bakery__thread_nslots = 0;
	while (t) {
		struct thread_slot *next = t->next;

		if (t->busy && slot_holds_lock(t->b, t->slot)) {
			/* keeps its mapping reference and its token's
			 * window: the kernel reads the node at our exit */
			record_unlink(t);
			orphan_add(t);
		} else {
			record_release(t);
		}
		t = next;
	}
}
