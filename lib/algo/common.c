/* SPDX-License-Identifier: MIT */
/*
 * common.c - the steps Lamport's Bakery and the Boulangerie share
 * (Boulangerie keeps Lamport's doorway and exit, Moses and Patkin's Fig. 2, lines 3-5
 * and 10), the plain reset of a dead slot, the k-holder wait and the
 * lock's active set (the getset() of the papers).  The table of the
 * algorithms, above them all, is table.c.
 */
#include "config.h"

#include <stdlib.h>

#include "common.h"

/* ----------------------------------------------------------- active set -- */

void bakery__active_join(struct passage *p)
{
	uint64_t *set = p->active;

	uatomic_or(&set[p->self / 64], UINT64_C(1) << (p->self % 64));
	CMM_STORE_SHARED(p->mine->joined, 1);
	/* Our membership before any register of ours can be non-zero
	 * (store->store and store->load: a doorway's getset must see us). */
	cmm_smp_mb();
}

void bakery__active_leave(struct bakery *b, unsigned lock, unsigned slot)
{
	uint64_t *set = active_of(b, lock);

	/* called with the slot's registers already clear */
	CMM_STORE_SHARED(reg_of(b, lock, slot)->joined, 0);
	uatomic_and(&set[slot / 64], ~(UINT64_C(1) << (slot % 64)));
}

/* ------------------------------------------------------- shared steps -- */

/* j's doorway seen in progress (its odd count), or none seen yet */
struct doorway_seen {
	bool seen;
	uint32_t count;
};

static bool doorway_ended(struct bakery *b, unsigned lock, unsigned j, void *arg)
{
	struct doorway_seen *d = arg;
	uint32_t c = CMM_LOAD_SHARED(reg_of(b, lock, j)->choosing);

	if (!(c & 1))
		return true;
	if (!d->seen) {
		d->seen = true;
		d->count = c;
		return false;
	}
	return c != d->count;
}

int bakery__await_doorway_end(struct passage *p, unsigned j)
{
	struct doorway_seen d = { false, 0 };

	return bakery__await_doorway(p, j, doorway_ended, &d);
}
/* max(number[1..n]) over the others in the active set, each one ahead of
 * us noted in P (the crowd; the latest two, our predecessor and the one
 * before it).  Out of line: an uncontended doorway has nobody to visit
 * (active_alone). */
static __attribute__((noinline)) uint64_t others_max_number(struct passage *p)
{
	uint64_t max = 0;

	for_each_other(p, j, bound) {
		uint64_t n = CMM_LOAD_SHARED(reg_of(p->b, p->lock, j)->number);
		/* a reader parks behind the writers ahead only; a ticket's
		 * place in line is its number (ties: the later slot) */
		bool ahead = n && conflicts(p, j);

		if (ahead)
			passage_note_ahead(p, j, n, n);
		if (n > max)
			max = n;
		p->crowd += ahead;
	}
	return max;
}

/* V1-V3 of a biased lock refused (membarrier refused since the lock was
 * opened): the doorway ends without a ticket. */
static __attribute__((cold, noinline)) int doorway_refused(struct passage *p, uint32_t count,
                                                           int err)
{
	store_mb(&p->mine->choosing, count + 1);
	bakery__reg_signal_doorway(p->mine);
	return err;
}

/* The doorway, and (BIASED) a biased lock's V1-V3 in it.  Inline in both
 * instances below: the ordinary one has no trace of the bias. */
static inline __attribute__((always_inline)) int number_doorway(struct passage *p, bool biased)
{
	struct bakery_shm_reg *me = p->mine;
	struct lone_look look = lone_look_at(p);        /* (before the barrier) */
	uint64_t max;

	/* choosing[i] := true, then a full barrier.  Forbids loading number[j]
	 * before choosing[i] = 1 is visible (store->load): j could read
	 * choosing[i] = 0, number[i] = 0 and enter while we pick a number from
	 * stale values below its own. */
	uint32_t count = doorway_count_open(CMM_LOAD_SHARED(me->choosing));

	store_mb(&me->choosing, count);
	CRASH_POINT("doorway");
	/* a biased lock's V1 (algo/bias.h), after choosing := odd and its
	 * barrier and before any ticket is read (bias.pml,
	 * BIAS_BEFORE_CHOOSING must fail) */
	if (biased) {
		int err = bakery__bias_revoke(p);

		if (err)
			return doorway_refused(p, count, err);
	}
	max = lone_look_alone(&look) ? 0 : others_max_number(p);     /* max(number[1..n]) */
	if (max >= NUMBER_LIMIT)
		max = NUMBER_LIMIT - 1;
	if (biased)
		bakery__bias_count(p, max);
	CMM_STORE_SHARED(me->number, max + 1);               /* number[i] := 1 + max */
	/* choosing[i] := false, with a full barrier before and after: number
	 * before choosing = 0 (store->store: a waiter passing choosing[i] = 0
	 * must read the new number), and both before we load anyone's
	 * choosing/number in the waiting loop or the waiter count (store->load). */
	store_mb(&me->choosing, count + 1);
	bakery__reg_signal_doorway(me);
	return 0;
}

int bakery__number_doorway(struct passage *p)
{
	return number_doorway(p, false);
}

int bakery__number_doorway_biased(struct passage *p)
{
	return number_doorway(p, true);
}

/* The exit, inline in both instances below. */
static inline __attribute__((always_inline)) void number_exit(const struct bakery_lock *l,
                                                              struct bakery_shm_reg *mine)
{
	/* number[i] := 0, after every access of the critical section (the
	 * store that lets the next holder in), and before the load of the
	 * waiter count: by its own barrier, or by those of the waiters that
	 * sleep (exit_store, exitfence.h).  k holders: the lock-wide word
	 * first, then our line, so that the waiter parked behind our ticket,
	 * woken as the next in line, does not sleep on the word in time to be
	 * woken by this exit again (test_wakeups). */
	mine = exit_store(l, mine, 0);
	if (caa_unlikely(l->holders > 1))
		bakery__holders_signal(l->b, l->index);
	bakery__reg_signal(mine);
}

void bakery__number_exit(const struct bakery_lock *l, struct bakery_shm_reg *mine, bool shared)
{
	(void)shared;   /* a reader's exit is a writer's */
	number_exit(l, mine);
}

void bakery__number_exit_biased(const struct bakery_lock *l, struct bakery_shm_reg *mine,
                                bool shared)
{
	(void)shared;   /* a reader's exit is a writer's, its grant too */
	number_exit(l, mine);
	bakery__bias_grant(l, mine);           /* G1-G3, if due */
}

void bakery__number_abort(struct passage *p)
{
	/* leaving the waiting room: choosing is already 0; number := 0 is the
	 * abort the model checker shows safe (tests/model) */
	count_abort(p);
	store_mb(&p->mine->number, 0);
	if (caa_unlikely(p->via->holders > 1))
		bakery__holders_signal(p->b, p->lock);         /* first: as the exit */
	bakery__reg_signal(p->mine);
}

/* ------------------------------------------------------------ k holders -- */

void bakery__holders_signal(struct bakery *b, unsigned lock)
{
	struct bakery_shm_lock *e = &b->locks[lock];

	bakery__word_signal(&e->exits, &e->exit_sleepers);
}

/* A ticket ahead of ours as a sweep read it. */
struct ticket_ahead {
	uint64_t number;
	unsigned slot;
};

/* The tickets ahead of ours, each read once in one sweep over the set. */
struct holders_count {
	struct passage *p;
	struct ticket me;
	unsigned *slots;           /* the last sweep's slots ahead, or NULL */
	struct ticket_ahead *tickets;   /* the same tickets (room for as many) */
	unsigned nslots;
};

/* X after Y in line (line 13's order). */
static inline bool later(const struct ticket_ahead *x, const struct ticket_ahead *y)
{
	return ticket_before(y->number, y->slot, x->number, x->slot);
}

static inline void ticket_swap(struct ticket_ahead *t, unsigned a, unsigned b)
{
	struct ticket_ahead x = t[a];

	t[a] = t[b];
	t[b] = x;
}

/* The ticket of T[0..n) with exactly K later than it (K < N), by
 * selection (Hoare's FIND): O(n) on the average, where a sort of a crowd
 * far back would cost a sweep's time again on every wake-up.  Reorders T. */
static struct ticket_ahead ticket_with_later(struct ticket_ahead *t, unsigned n, unsigned k)
{
	unsigned lo = 0, hi = n - 1;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2, store = lo;

		/* partition around t[mid]: the later ones first */
		ticket_swap(t, mid, hi);
		for (unsigned i = lo; i < hi; i++)
			if (later(&t[i], &t[hi]))
				ticket_swap(t, i, store++);
		ticket_swap(t, store, hi);
		if (store == k)
			break;
		if (store < k)
			lo = store + 1;
		else
			hi = store - 1;
	}
	return t[k];
}

/*
 * More than k tickets ahead: note as p->pred2 the one whose leaving makes
 * us the next in line, the (k+1)-th latest ahead (for k = 1, the ticket
 * before our predecessor's, as passage_note_ahead notes it).  We enter
 * once all but k - 1 of those ahead have left; tickets leave about in
 * their order, so when that one has left, k are ahead and the next exit
 * lets us in.  A waiter parked behind it (wait.c) is woken by that exit,
 * during the turns of those ahead, and not by its predecessor's entry,
 * which would wait for the predecessor's own wake-up first.
 */
static void note_next_in_line_after(struct passage *p, struct holders_count *c)
{
	unsigned k = p->via->holders;
	struct ticket_ahead t;

	if (!c->tickets || c->nslots <= k)
		return;
	t = ticket_with_later(c->tickets, c->nslots, k);
	p->pred2 = t.slot;
	p->pred2_number = t.number;
}

/*
 * Fewer than k tickets ahead?  A ticket, once read ahead of ours, may only
 * leave (every later ticket of j is taken after j saw ours: phase 1 waited
 * for j's doorway), so a sweep over-counts and never under-counts the
 * tickets ahead at its end: entering on a count below k is safe
 * (model-checked: tests/model, k-holder configurations).  The sweep also
 * notes who is ahead, for the wait: their number (p->crowd), the latest
 * of them (p->pred) and, with room, the list.
 */
static bool below_capacity(struct bakery *b, unsigned lock, unsigned unused, void *arg)
{
	struct holders_count *c = arg;
	struct passage *p = c->p;

	(void)unused;
	p->crowd = 0;
	p->pred = p->pred2 = BAKERY_NO_SLOT;
	c->nslots = 0;
	for_each_other(p, j, walk) {
		uint64_t n = CMM_LOAD_SHARED(reg_of(b, lock, j)->number);

		if (n && ticket_before(n, j, c->me.number, c->me.slot)) {
			if (c->slots && c->nslots < b->nslots) {
				c->tickets[c->nslots] = (struct ticket_ahead){ n, j };
				c->slots[c->nslots++] = j;
			}
			passage_note_ahead(p, j, n, n);
			p->crowd++;
		}
	}
	if (p->crowd < p->via->holders)
		return true;
	note_next_in_line_after(p, c);
	return false;
}

/*
 * A holder ahead whose owner died (its token says so: the kernel set
 * FUTEX_OWNER_DIED when the thread died) is recovered now, even if fewer
 * than k tickets are ahead without it: otherwise a taker that finds a unit
 * free would enter without noticing, the dead one's unit would stay taken
 * and the death unreported until some taker had to wait for it.
 * Recovery marks the lock owner-died before it clears the ticket, so we,
 * the next to enter, are told EOWNERDEAD.  One load per ticket ahead.
 */
static void prove_dead_ahead(struct passage *p)
{
	for_each_other(p, j, walk) {
		if (CMM_LOAD_SHARED(reg_of(p->b, p->lock, j)->number))
			(void)slot_recover_if_marked(p->b, j);
	}
}

/* Phases 1 and 2 against the others in the lock's active set: 0 when
 * fewer than k tickets are ahead of ours, else an error after our abort.
 * Out of line: an uncontended passage has nobody to wait for. */
static __attribute__((noinline)) int holders_wait_for_others(struct passage *p)
{
	struct bakery_shm_lock *e = &p->b->locks[p->lock];
	struct holders_count c = { p, { CMM_LOAD_SHARED(p->mine->number), p->self, false }, NULL,
	                           NULL, 0 };
	int err = 0;

	/* phase 1: every doorway in progress ends, so that no ticket can
	 * still be taken ahead of ours (Lamport's line 10, for every j) */
	for_each_other(p, j, bound) {
		/* at a first look (common.h): the await's first poll, without
		 * its set-up; most slots of a crowd are out of their doorway */
		if (doorway_idle_at_a_look(p->b, p->lock, j))
			continue;
		err = bakery__await_doorway_end(p, j);
		if (err)
			goto abort;
	}
	prove_dead_ahead(p);
	/* phase 2: count the tickets ahead until fewer than k */
	if (!below_capacity(p->b, p->lock, BAKERY_NO_SLOT, &c)) {
		c.slots = malloc(sizeof(*c.slots) * p->b->nslots);
		c.tickets = malloc(sizeof(*c.tickets) * p->b->nslots);
		if (!c.slots || !c.tickets) {
			free(c.slots);
			free(c.tickets);
			err = ENOMEM;
			goto abort;
		}
		below_capacity(p->b, p->lock, BAKERY_NO_SLOT, &c);     /* who is ahead */
		p->also = &e->exits;
		p->also_waiters = &e->exit_sleepers;
		err = bakery__await_any(p, c.slots, &c.nslots, below_capacity, &c);
		free(c.tickets);
		free(c.slots);
		if (err)
			goto abort;
	}
	return 0;
abort:
	bakery__number_abort(p);
	return err;
}

int bakery__holders_wait(struct passage *p)
{
	/* nobody else in the set: no doorway to wait for, no ticket ahead */
	if (!active_alone(p)) {
		int err = holders_wait_for_others(p);

		if (err)
			return err;
	}
	/* the waiter parked behind us waits for this (bakery__await_any) */
	bakery__reg_signal_entry(p->mine);
	return 0;
}

unsigned bakery__plain_reset(struct bakery *b, unsigned lock, unsigned slot)
{
	struct bakery_shm_reg *r = reg_of(b, lock, slot);

	CMM_STORE_SHARED(r->choosing, 0);
	CMM_STORE_SHARED(r->number, 0);
	CMM_STORE_SHARED(r->proxy, 0);
	return 0;
}

#ifdef BAKERY_TESTING
bool bakery__lock_faulted(struct bakery *b, unsigned lock)
{
	if (CMM_LOAD_SHARED(b->locks[lock].recoveries) || CMM_LOAD_SHARED(b->locks[lock].passes))
		return true;
	for (unsigned s = 0; s < b->nslots; s++)
		if (CMM_LOAD_SHARED(reg_of(b, lock, s)->aborts))
			return true;
	return false;
}
#endif
