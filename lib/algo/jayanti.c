/* SPDX-License-Identifier: MIT */
/*
 * jayanti.c - the bounded Bakery algorithm B-Bakery.
 *
 *   P. Jayanti, K. Tan, G. Friedland, A. Katz, "Bounding Lamport's Bakery
 *   Algorithm", SOFSEM 2001, Fig. 2, whose line numbers the
 *   comments cite.
 *
 * Lamport's algorithm plus a shared register X holding the token of the last
 * process to enter the critical section (line 8) and read in the doorway
 * (line 3).  X keeps all tokens within n of each other, so they can be kept
 * modulo 2n-1 and compared after shifting around a pivot.  Registers:
 * gettoken (bit), token in {-1, 0..2n-2}, X in {0..2n-2}; n is the region's
 * slot capacity.  Mutual exclusion, deadlock freedom, FIFO.
 *
 * CORRECTION TO THE PAPER.  Section 5 defines [v'_i, i] < [v'_j, j] by
 * shifting v'_i by (n-1-v'_i) and v'_j by (n-1-v'_j): as printed, every
 * shifted token equals n-1 and the comparison degenerates to the slot index,
 * which the model checker shows breaks mutual exclusion and FIFO.  Both
 * values must be shifted by the same pivot, the comparing process's own
 * token: shift(v) = v + (n-1-v'_i) mod 2n-1.  That is what before() does.
 *
 * Crash and abort (model-checked: tests/model/jayanti.pml): a plain reset of
 * a process that published its token but had not written X lets two threads
 * into the critical section.  Such a passage is completed by PROXY: anyone
 * runs the dead (or aborted) slot's waiting loop (lines 6-7) with its token,
 * then writes X := token and token := -1.  The proxy's progress is kept in
 * the slot's `proxy` word and advanced by CAS, so whoever waits behind the
 * passage drives it, one verified j after another, and the final X write is
 * claimed once (a finisher that dies is replaced once its death is proven).
 * A death after X was written (stage CRITICAL) or before the token was
 * published is reset plainly.
 *
 * Register encoding: `number` holds token + 1, so 0 means token = -1 as in
 * every other algorithm here.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "pass.h"

/* proxy word: 0 = none; STEP|id|j = slots below j verified for the passage
 * named id; FIN|gen|slot = the final writes claimed by that slot (of that
 * generation).  The id (the passage's token + 1 and the low bits of the
 * slot's abort count) keeps a helper that read the word of one passage from
 * committing, by a CAS that would otherwise succeed (ABA), its verification
 * into a later passage of the same slot that happens to have reached the
 * same j: that passage's token may be behind what was verified. */
#define PROXY_STEP  (UINT64_C(1) << 62)
#define PROXY_FIN   (UINT64_C(2) << 62)
#define PROXY_TAG(w)   ((w) & (UINT64_C(3) << 62))
#define PROXY_J(w)     ((unsigned)((w) & 0xffffffffu))
#define PROXY_ID(w)    ((w) & ((UINT64_C(1) << 62) - (UINT64_C(1) << 32)))
#define FIN_SLOT(w)    ((unsigned)((w) & 0xffffu))
#define FIN_GEN(w)     ((uint32_t)((w) >> 16))

/* The encoding and order of the tokens: jayanti_order.h. */
#define TOKEN_NONE JAY_TOKEN_NONE

static inline unsigned modulus(struct bakery *b) { return jay_modulus(b->nslots); }

/* token of a register, -1 as TOKEN_NONE */
static inline unsigned token_read(struct bakery *b, struct bakery_shm_reg *r)
{
	return jay_token(CMM_LOAD_SHARED(r->number), b->nslots);
}

/* The first proxy word of R's pending passage in LOCK (its token is
 * published and stays until the passage is complete): token + 1 < 2^14
 * (BAKERY_MAX_SLOTS), and above it 16 bits of an epoch that moves on
 * between two passages of the slot left to a proxy: the slot's abort count
 * (its own give-ups) plus the lock's pass count (each pass is counted
 * before its proxy word is written, pass.c). */
static uint64_t proxy_start_word(struct bakery *b, unsigned lock, struct bakery_shm_reg *r)
{
	unsigned t = token_read(b, r);
	uint64_t tok = t == TOKEN_NONE ? 0 : t + 1;
	uint64_t epoch = (CMM_LOAD_SHARED(r->aborts) + CMM_LOAD_SHARED(b->locks[lock].passes)) &
	                 0xffffu;

	return PROXY_STEP | epoch << 46 | tok << 32;
}

static inline unsigned shift(struct bakery *b, unsigned v, unsigned pivot)
{
	return jay_shift(v, pivot, b->nslots);
}

/* [a, i] < [c, j] with both shifted by a's pivot (see the correction above) */
static inline bool before(struct bakery *b, unsigned a, unsigned i, unsigned c, unsigned j)
{
	return jay_before(a, i, c, j, b->nslots);
}

/* ------------------------------------------------------------- doorway -- */

/* A token read at line 2, with its slot: kept until X is read (line 3). */
struct seen_token {
	uint16_t slot, token;
};

/* Tokens noted on the stack; a larger crowd is noted in memory allocated
 * for the slots below the walk's bound, so that the doorway's stack stays
 * small whatever the region's size (a thread made with PTHREAD_STACK_MIN). */
#define SEEN_ON_STACK 32

/* Room for the tokens of the slots below BOUND, the COUNT noted so far in
 * ON_STACK copied in; NULL without memory. */
static struct seen_token *seen_grow(const struct seen_token *on_stack, unsigned count,
                                    unsigned bound)
{
	struct seen_token *seen = malloc(sizeof(*seen) * bound);

	if (seen)
		memcpy(seen, on_stack, sizeof(*seen) * count);
	return seen;
}

/* Line 2 after line 1: S := {token_j}, into SEEN (grown if need be);
 * *COUNT tokens, *SEEN the array they are in, or NULL without memory.
 * Out of line: an uncontended doorway has nobody to read (active_alone). */
static __attribute__((noinline)) void tokens_read(struct passage *p, struct seen_token **seen,
                                                  unsigned *count)
{
	struct seen_token *on_stack = *seen;
	struct bakery *b = p->b;

	*count = 0;
	for_each_other(p, j, walk) {
		unsigned t = token_read(b, reg_of(b, p->lock, j));

		if (t == TOKEN_NONE)
			continue;
		/* (a walk visits each slot below its bound once) */
		if (*count == SEEN_ON_STACK && *seen == on_stack &&
		    !(*seen = seen_grow(on_stack, *count, walk.bound)))
			return;
		(*seen)[(*count)++] = (struct seen_token){ (uint16_t)j, (uint16_t)t };
	}
	p->crowd = *count;
}

/* Line 3 after line 2: x := X, read from X's word, kept modulo M = 2n-1
 * (a value out of range, only in a corrupted region, is folded in without
 * a division otherwise). */
static inline unsigned x_read_at(const uint32_t *x_word, unsigned m)
{
	unsigned x;

	/* line 3 comes after line 2: Theorem 2 needs X read last */
	cmm_smp_rmb();
	x = CMM_LOAD_SHARED(*x_word);

	return caa_likely(x < m) ? x : x % m;
}

static inline unsigned x_read(struct bakery *b, unsigned lock)
{
	return x_read_at(&b->locks[lock].jayanti_x, modulus(b));
}

/* Lines 2-4 with others in the set: S := {token_j} (line 2), x := X (line
 * 3), max^ over S u {x} (line 4), noting who is ahead; the token of line
 * 4, or TOKEN_NONE without memory for S.  Out of line, as the walks are
 * (algo.h): the doorway of a lone passage saves no registers for it. */
static __attribute__((noinline)) unsigned crowd_token(struct passage *p)
{
	struct bakery *b = p->b;
	unsigned m = modulus(b), x, best, count;
	struct seen_token on_stack[SEEN_ON_STACK], *seen = on_stack;

	tokens_read(p, &seen, &count);                          /* line 2 */
	if (caa_unlikely(!seen))
		return TOKEN_NONE;
	x = x_read(b, p->lock);                                 /* line 3 */
	best = shift(b, x, x);                                  /* line 4: max^ over S u {x} */
	for (unsigned k = 0; k < count; k++) {
		/* every token read is ahead of ours, its place in line its
		 * shifted value (ties: the later slot, as the walk is in
		 * slot order) */
		unsigned place = shift(b, seen[k].token, x);

		passage_note_ahead(p, seen[k].slot, (uint64_t)seen[k].token + 1, place);
		if (place > best)
			best = place;
	}
	if (seen != on_stack)
		free(seen);
	return (best + x + m - (b->nslots - 1)) % m;            /* shift back */
}

/* Lines 4-5 after line 3 gave TOK (the max^ of line 4, or TOKEN_NONE
 * without memory for S): token_i := TOK (+) 1 modulo M, then gettoken :=
 * false. */
static inline int doorway_finish(struct passage *p, struct bakery_shm_reg *me, unsigned tok,
                                 unsigned m)
{
	if (caa_unlikely(tok == TOKEN_NONE)) {
		/* no token published: what a recoverer does after a death
		 * here (the plain reset), done by ourselves */
		store_mb(&me->choosing, 0);
		bakery__reg_signal_doorway(me);
		return ENOMEM;
	}
	tok = tok + 1 < m ? tok + 1 : 0;                        /* (+) 1, modulo 2n-1 */
	CMM_STORE_SHARED(me->number, (uint64_t)tok + 1);        /* token_i := ... */
	/* Theorem 1: while a token is held, X <= token <= X + n (X never
	 * decreases, and nobody passes us to move X beyond our token).  The
	 * modular form is what the code relies on; proxy completion after a
	 * crash or abort is checked by the model, not by this bound. */
	BAKERY_ASSERT((tok + m - CMM_LOAD_SHARED(p->b->locks[p->lock].jayanti_x) % m) % m <=
	                      p->b->nslots ||
	              bakery__lock_faulted(p->b, p->lock));
	CRASH_POINT("doorway-token");
	/* line 5, fenced on both sides: the token before gettoken = false
	 * (store->store), both before the loads of lines 6-7 (store->load) */
	store_mb(&me->choosing, 0);
	bakery__reg_signal_doorway(me);
	return 0;
}

/* Lines 2-5 with others in the set.  Out of line, and called last: the
 * lone doorway keeps nothing for it in saved registers. */
static __attribute__((noinline)) int doorway_in_crowd(struct passage *p)
{
	return doorway_finish(p, p->mine, crowd_token(p), modulus(p->b));
}

static int jay_doorway(struct passage *p)
{
	struct bakery_shm_reg *me = p->mine;
	/* (the addresses before the barrier: loads after it wait for it) */
	const uint32_t *x_word = &p->b->locks[p->lock].jayanti_x;
	unsigned m = modulus(p->b);
	struct lone_look look = lone_look_at(p);

	/* line 1: gettoken := true, then a full barrier: forbids loading the
	 * tokens and X before gettoken = 1 is visible (store->load) */
	store_mb(&me->choosing, 1);
	CRASH_POINT("doorway");
	if (!lone_look_alone(&look))
		return doorway_in_crowd(p);
	/* lines 2-4 alone: S = {}, and max^ over {x} is x itself (x shifted
	 * around itself, then back) */
	return doorway_finish(p, me, x_read_at(x_word, m), m);
}

/* --------------------------------------------------------------- proxy -- */

/* Has the finisher named in proxy word W gone (proven)? */
static bool finisher_gone(struct bakery *b, uint64_t w)
{
	unsigned s = FIN_SLOT(w);

	if (s >= b->nslots || CMM_LOAD_SHARED(b->slots[s].gen) != FIN_GEN(w))
		return true;
	return bakery__slot_recover_if_dead(b, s) == SLOT_GONE;
}

/* Lines 6-7 of slot D's loop, from slot FROM on: the first j that still
 * blocks token TD of D, or BOUND when none does. */
static unsigned proxy_scan(struct bakery *b, unsigned lock, unsigned d, unsigned td,
                           unsigned from, unsigned bound)
{
	for (unsigned j = from; j < bound; j++) {
		struct bakery_shm_reg *rj = reg_of(b, lock, j);
		unsigned tj;

		if (j == d)
			continue;
		if (CMM_LOAD_SHARED(rj->choosing))                      /* line 6 */
			return j;
		tj = token_read(b, rj);
		if (tj != TOKEN_NONE && !before(b, td, d, tj, j))        /* line 7 */
			return j;
	}
	return bound;
}

/* Lines 8 and 10 on D's behalf, by the one claimant of the FIN state. */
static void proxy_finish(struct bakery *b, unsigned lock, unsigned d)
{
	struct bakery_shm_reg *r = reg_of(b, lock, d);
	unsigned td = token_read(b, r);

	/* A replaced finisher may have reset the token already; then X has
	 * moved on and must not be written back. */
	if (td != TOKEN_NONE) {
		CMM_STORE_SHARED(b->locks[lock].jayanti_x, td);     /* line 8: X := token_d */
		cmm_smp_wmb();  /* store->store: X before the token goes */
		CMM_STORE_SHARED(r->number, 0);                  /* line 10: token_d := -1 */
	}
	CMM_STORE_SHARED(r->choosing, 0);
	CMM_STORE_SHARED(r->stage, BAKERY_PASS_IDLE);
	/* store->store: the token's reset before the end of the proxy word,
	 * pairing with the read barrier of jay_pass_abort (which must not
	 * see the word ended and the token still there) */
	cmm_smp_wmb();
	uatomic_set(&r->proxy, 0);
	bakery__reg_publish(r);
	if (bakery__slot_is_recovering(b, d)) {
		bakery__active_leave(b, lock, d);
		bakery__slot_settle(b, d);
	}
}

/*
 * Advance D's proxy passage as far as it goes without waiting.  True when it
 * is complete; else *blocked is the slot it waits on (BAKERY_NO_SLOT: a live
 * finisher is at work, or HELPER has no slot to claim the finish with).
 */
static bool proxy_step(struct bakery *b, unsigned lock, unsigned d, unsigned helper,
                       unsigned *blocked)
{
	struct bakery_shm_reg *r = reg_of(b, lock, d);

	for (;;) {
		uint64_t w = uatomic_read(&r->proxy), fin;
		unsigned bound = slots_bound(b), j;

		if (!w)
			return true;
		*blocked = BAKERY_NO_SLOT;
		if (helper == BAKERY_NO_SLOT)
			return false;
		fin = PROXY_FIN | ((uint64_t)CMM_LOAD_SHARED(b->slots[helper].gen) << 16) | helper;
		if (PROXY_TAG(w) == PROXY_FIN) {
			if (!finisher_gone(b, w))
				return false;
		} else {
			/* the register's token, as every end condition of a drive
			 * reads it (in a sound region the word's id names the
			 * same one; if the passage changed after we read W, the
			 * commit below fails on the id) */
			unsigned td = token_read(b, r);
			j = td == TOKEN_NONE ? bound :
			    proxy_scan(b, lock, d, td, PROXY_J(w), bound);
			if (j < bound) {
				/* verified slots below j: commit, so the next
				 * helper resumes there (verifications stay in order) */
				if (uatomic_cmpxchg(&r->proxy, w, PROXY_STEP | PROXY_ID(w) | j) != w)
					continue;
				*blocked = j;
				return false;
			}
		}
		if (uatomic_cmpxchg(&r->proxy, w, fin) != w)
			continue;
		CRASH_POINT("proxy-finish");
		proxy_finish(b, lock, d);
		return true;
	}
}

/* ------------------------------------------------------------- waiting -- */

struct turn {
	unsigned token, self;
};

/* line 6 */
static bool gettoken_clear(struct bakery *b, unsigned lock, unsigned j, void *unused)
{
	return CMM_LOAD_SHARED(reg_of(b, lock, j)->choosing) == 0;
}

/* line 7: token_j = -1 or [token_i, i] < [token_j, j] */
static bool turn_holds(struct bakery *b, unsigned lock, unsigned j, const struct turn *t)
{
	unsigned tj = token_read(b, reg_of(b, lock, j));

	return tj == TOKEN_NONE || before(b, t->token, t->self, tj, j);
}

/* line 7, or j's passage needs a proxy to go on */
static bool turn_or_proxy(struct bakery *b, unsigned lock, unsigned j, void *arg)
{
	return turn_holds(b, lock, j, arg) || CMM_LOAD_SHARED(reg_of(b, lock, j)->proxy);
}

/* One proxy passage being driven: slot d's, with token token_d.  A helper
 * drives only that passage (d's next one may well be behind the helper), and
 * a waiting helper stops as soon as its own turn on d comes.  A passage
 * driven because it blocks another one (PARENT) is driven only while it
 * still does: what blocked the parent when we looked may since have become
 * a newer passage of the same slot, behind the parent and even behind the
 * helper's own, whose proxy would then wait on the helper for ever. */
struct drive {
	unsigned d, token_d;
	uint64_t proxy;                 /* proxy word when we went to sleep */
	const struct turn *turn;        /* the helper's own passage, or NULL */
	const struct drive *parent;     /* the passage d blocks, or NULL */
};

/* Does slot k still block the proxy passage that DR drives? */
static bool still_blocks(struct bakery *b, unsigned lock, const struct drive *dr, unsigned k)
{
	return proxy_scan(b, lock, dr->d, dr->token_d, k, k + 1) == k;
}

static bool drive_over(struct bakery *b, unsigned lock, const struct drive *dr)
{
	struct bakery_shm_reg *rd = reg_of(b, lock, dr->d);

	if (!CMM_LOAD_SHARED(rd->proxy) || token_read(b, rd) != dr->token_d)
		return true;
	if (dr->turn)
		return turn_holds(b, lock, dr->d, dr->turn);
	/* the chain of parents ends at the helper's own passage (or at the
	 * helper's own aborted one): each link is re-checked, so a stale one
	 * ends the drive instead of making the helper wait on itself */
	return dr->parent && (drive_over(b, lock, dr->parent) ||
	                      !still_blocks(b, lock, dr->parent, dr->d));
}

/* k no longer blocks d's proxy passage, or the drive is over */
static bool proxy_unblocked(struct bakery *b, unsigned lock, unsigned k, void *arg)
{
	const struct drive *dr = arg;

	return drive_over(b, lock, dr) || !still_blocks(b, lock, dr, k);
}

/* ... or k's own passage was left to a proxy meanwhile (its owner died while
 * we waited): then we go and drive it */
static bool proxy_unblocked_or_left(struct bakery *b, unsigned lock, unsigned k, void *arg)
{
	return CMM_LOAD_SHARED(reg_of(b, lock, k)->proxy) || proxy_unblocked(b, lock, k, arg);
}

/* d's proxy word moved (a live finisher is at work on it) */
static bool proxy_moved(struct bakery *b, unsigned lock, unsigned d, void *arg)
{
	const struct drive *dr = arg;

	return drive_over(b, lock, dr) || CMM_LOAD_SHARED(reg_of(b, lock, d)->proxy) != dr->proxy;
}

/* Drive d's current proxy passage until it completes, TURN (if any) holds,
 * or it no longer blocks PARENT's passage (if any).  DEPTH counts the proxy passages we are driving on the way to this
 * one: each blocks the previous, so in a sound region they follow tokens in
 * order and end; in a damaged one they could form a cycle, hence the bound. */
static int proxy_drive(struct passage *p, unsigned d, const struct turn *turn,
                       const struct drive *parent, unsigned depth)
{
	struct bakery_shm_reg *rd = reg_of(p->b, p->lock, d);
	struct drive dr = { d, token_read(p->b, rd), 0, turn, parent };
	unsigned k;
	int err;

	/* a helper that is passed meanwhile stops helping: its own wait is
	 * over (its awaits would return at once, and this loop would spin) */
	while (!drive_over(p->b, p->lock, &dr) && !bakery__pass_was_passed(p)) {
		if (proxy_step(p->b, p->lock, d, p->self, &k))
			break;
		dr.proxy = CMM_LOAD_SHARED(rd->proxy);
		if (k == BAKERY_NO_SLOT)
			err = bakery__await_slot(p, d, proxy_moved, &dr);
		else if (depth >= p->b->nslots)
			/* a chain longer than the slots: a cycle, which only a
			 * damaged region makes; wait (and time out) as for any
			 * blocker, never spin */
			err = bakery__await_registers(p, k, proxy_unblocked, &dr);
		else if (CMM_LOAD_SHARED(reg_of(p->b, p->lock, k)->proxy))
			/* k is itself a passage left to a proxy: nobody else may
			 * be driving it, so drive it first */
			err = proxy_drive(p, k, NULL, &dr, depth + 1);
		else
			err = bakery__await_registers(p, k, proxy_unblocked_or_left, &dr);
		if (err)
			return err;
	}
	return 0;
}

static int wait_turn(struct passage *p, unsigned j, const struct turn *t)
{
	int err;

	for (;;) {
		err = bakery__await_slot(p, j, turn_or_proxy, (void *)t);
		/* passed: our passage is a proxy's now; jay_wait stops */
		if (err || bakery__pass_was_passed(p))
			return err;
		if (turn_holds(p->b, p->lock, j, t))
			return 0;
		/* j's passage, ahead of ours, was abandoned or its owner died:
		 * complete it on its behalf */
		err = proxy_drive(p, j, t, NULL, 0);
		if (err)
			return err;
	}
}

static void jay_abort(struct passage *p)
{
	/* The token stays published: the passage is completed by proxy
	 * before this slot starts another (jay_prepare) or is reused. */
	count_abort(p);
	uatomic_set(&p->mine->proxy, proxy_start_word(p->b, p->lock, p->mine));
	bakery__reg_publish(p->mine);
}

/*
 * Lines 6 and 7 at a first look: j's gettoken is false, then (load->load)
 * its token is none or behind ours.  The loads of the first polls of the
 * awaits below, without their set-up (common.h, doorway_idle_at_a_look:
 * far back in a crowd most slots pass so); otherwise j is awaited from
 * line 6 again.
 */
static inline bool turn_at_a_look(struct bakery *b, unsigned lock, unsigned j,
                                  const struct turn *t)
{
	if (!gettoken_clear(b, lock, j, NULL))
		return false;
	/* gettoken_j before token_j, as line 6 before line 7; pairs with
	 * the store->store order of j's line 5 */
	cmm_smp_rmb();
	return turn_holds(b, lock, j, t);
}

/* Lines 6-7 against every other slot (or until we are passed), our token
 * being TOKEN. */
static __attribute__((noinline)) int await_turn_of_others(struct passage *p, unsigned token)
{
	const struct turn turn = { token, p->self }, *t = &turn;
	int err = bakery__park_behind(p);       /* two or more back: sleep once first */

	if (err)
		return err;
	for_each_other(p, j, bound) {
		if (bakery__pass_was_passed(p))
			break;
		if (turn_at_a_look(p->b, p->lock, j, t))
			continue;
		err = bakery__await_doorway(p, j, gettoken_clear, NULL);           /* line 6 */
		if (!err)
			err = wait_turn(p, j, t);                       /* line 7 */
		if (err)
			break;
	}
	return err;
}

/* Line 8: X := token_i, the passage's last shared write. */
static inline void x_write(struct passage *p, unsigned token)
{
	CMM_STORE_SHARED(p->b->locks[p->lock].jayanti_x, token);
	/* store->store: X before the stage that tells a recoverer we are in */
	cmm_smp_wmb();
}

/* Lines 6-8 with others in the set, or once we may have been passed. */
static __attribute__((noinline)) int wait_in_crowd(struct passage *p, unsigned token)
{
	int err = active_alone(p) ? 0 : await_turn_of_others(p, token), passed;

	/* Our pass word back (WAITING -> IDLE, a full barrier) before line 8
	 * or an abort, both of which write shared registers: a passer that
	 * won the word aborts our passage for us (jay_pass_abort), and we
	 * then must write neither (a late X := token would move X back
	 * behind later holders; a second proxy word would complete the
	 * passage twice).  Pairs with the passer's CAS in pass.c. */
	passed = bakery__pass_close(p, 0);
	if (err) {
		if (!passed)
			jay_abort(p);
		return err;
	}
	if (passed)
		return passed;                  /* BAKERY_EPASSED: lock.c starts again */
	x_write(p, token);                                      /* line 8 */
	return 0;
}

static int jay_wait(struct passage *p)
{
	unsigned token = token_read(p->b, p->mine);

	/* Nobody else in the set: lines 6-7 have no j to visit.  Never
	 * passable then (only a wait that met a false condition publishes its
	 * pass word), so the word needs no taking back: line 8 at once, in a
	 * function that saves no registers for the crowd's. */
	if (caa_likely(active_alone(p) && !p->pass_published)) {
		bakery__pass_close(p, 0);
		x_write(p, token);                              /* line 8 */
		return 0;
	}
	return wait_in_crowd(p, token);
}

/*
 * A passer's abort of waiting slot D's passage on its behalf (pass.c, with
 * D's pass word PASSING(passer): D writes nothing until CLEARED): what
 * jay_abort does, less the count of D's own give-ups (a pass is counted in
 * the lock's passes, which the proxy word's epoch includes).  Idempotent,
 * for a passer's recoverer that redoes it: the proxy word is installed
 * only by 0 -> start, and only while D's token is still published, so a
 * passage already left to a proxy (by the dead passer, or by D's own
 * recovery) or already completed is never started again.
 */
static void jay_pass_abort(struct bakery *b, unsigned lock, unsigned d)
{
	struct bakery_shm_reg *r = reg_of(b, lock, d);

	/* the proxy word before the token (load->load), pairing with the
	 * write barrier of proxy_finish: a word seen ended comes with the
	 * token's reset */
	if (!uatomic_read(&r->proxy)) {
		cmm_smp_rmb();
		if (CMM_LOAD_SHARED(r->number))
			uatomic_cmpxchg(&r->proxy, 0, proxy_start_word(b, lock, r));
	}
	bakery__reg_publish(r);         /* those behind D drive it */
}

static void jay_exit(const struct bakery_lock *l, struct bakery_shm_reg *mine, bool shared)
{
	(void)shared;
	/* line 10: token_i := -1, after the critical section, before the
	 * waiter-count load (exit_store, exitfence.h) */
	mine = exit_store(l, mine, 0);
	bakery__reg_signal(mine);
}

/* A previous passage of ours that was abandoned must be complete first. */
static int jay_prepare(struct passage *p)
{
	if (caa_likely(!CMM_LOAD_SHARED(p->mine->proxy)))
		return 0;
	return proxy_drive(p, p->self, NULL, NULL, 0);
}

static unsigned jay_recover(struct bakery *b, unsigned lock, unsigned d)
{
	struct bakery_shm_reg *r = reg_of(b, lock, d);

	if (CMM_LOAD_SHARED(r->proxy))
		return 1;               /* already being completed */
	if (CMM_LOAD_SHARED(r->stage) == BAKERY_PASS_CRITICAL || !CMM_LOAD_SHARED(r->number))
		return bakery__plain_reset(b, lock, d);   /* X written, or no token yet */
	CMM_STORE_SHARED(r->choosing, 0);        /* gettoken_d := false */
	/* 0 -> start: a live passer of D (pass word PASSING) may be starting
	 * the same proxy passage (jay_pass_abort); one of us does */
	uatomic_cmpxchg(&r->proxy, 0, proxy_start_word(b, lock, r));
	return 1;
}

static bool jay_finish_proxy(struct bakery *b, unsigned lock, unsigned d, unsigned helper)
{
	unsigned blocked;

	return proxy_step(b, lock, d, helper, &blocked);
}

const struct algo_ops bakery__algo_jayanti = {
	.id = BAKERY_ALGO_JAYANTI,
	.name = "jayanti",
	.prepare = jay_prepare,
	.doorway = jay_doorway,                                 /* lines 1-5 */
	.wait = jay_wait,                                       /* lines 6-8 */
	.exit = jay_exit,                                       /* line 10 */
	.recover = jay_recover,
	.finish_proxy = jay_finish_proxy,
	.pass_abort = jay_pass_abort,
};
