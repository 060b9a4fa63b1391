/* SPDX-License-Identifier: MIT */
/*
 * black_white.c - the Black-White Bakery algorithm, adaptive.
 *
 *   G. Taubenfeld, "The Black-White Bakery Algorithm and related bounded-
 *   space, adaptive, local-spinning and FIFO algorithms", DISC 2004:
 *   Algorithm 2, made adaptive as in Algorithm 3, whose line numbers
 *   the comments cite.
 *
 * Lamport's Bakery with one shared colour bit: a ticket is (colour, number),
 * numbers are taken among tickets of one's own colour, and the holder flips
 * the colour on exit, so that all tickets of the old colour are served before
 * any of the new.  Without faults numbers stay <= n (asserted in the test
 * build).  Each crash or abort inside one colour epoch can push a later
 * ticket one higher (tests/model), so `number` is 63 bits wide, not
 * log(n+1).  Mutual exclusion, deadlock freedom and FIFO hold with the plain
 * reset of a dead slot; the recoverer never touches `color` (flipping it
 * breaks FIFO and mutual exclusion: tests/model).
 *
 * Adaptivity (Algorithm 3): join(S) is done once per slot ownership (the slot
 * stays in S across passages, leaving when the slot is given back; a superset
 * of the active processes changes no outcome, as idle members have number 0),
 * and getset(S) is the lock's active-set bitmap, read up to the registry's
 * high-water mark.  The cost of a passage grows with the slots that use the
 * lock, not with the region's capacity.
 *
 * Register encoding (black_white_order.h, with the order of the line): the
 * ticket is ONE 64-bit word, colour in bit 63 and number below.  The shared
 * colour word keeps the colour in bit 0 and counts writes above it:
 * sleepers wait on that word, and a write that restores the same colour
 * still changes it.
 */
#include "config.h"

#include "common.h"

/* Is the ticket register value T, noted for slot J (BAKERY_NO_SLOT: none),
 * of the other colour than MYCOLOR? */
static bool noted_other(unsigned j, uint64_t t, unsigned mycolor)
{
	return j != BAKERY_NO_SLOT && bw_color(t) != mycolor;
}

/*
 * Lines 3 and 5 over the others in the active set: the highest number of
 * colour MYCOLOR, each ticket ahead of ours counted in P's crowd, and the
 * latest two noted (wait.c parks behind them), the other colour's ranked
 * before ours.  A ticket of the other colour is ahead of ours only while
 * the shared colour is ours (line 12): one taken after a flip during our
 * doorway is behind us and waits for us, and parking behind it would stall
 * both until the grace.  So those noted stay noted only if the colour,
 * read again after the tickets, is still ours; then each of them leaves
 * before a ticket of ours can enter, and so before the colour can flip
 * again.  Out of line: an uncontended doorway has nobody to visit
 * (active_alone).
 */
static __attribute__((noinline)) uint64_t others_max_number(struct passage *p, unsigned mycolor)
{
	uint64_t max = 0;

	for_each_other(p, j, bound) {                             /* lines 3, 5 */
		uint64_t t = CMM_LOAD_SHARED(reg_of(p->b, p->lock, j)->number);
		/* for a reader: the writers among them */
		bool ahead = bw_number(t) && conflicts(p, j);

		if (ahead)
			passage_note_ahead(p, j, t, bw_ticket_key(t, mycolor));
		if (bw_color(t) == mycolor && bw_number(t) > max)
			max = bw_number(t);
		p->crowd += ahead;
	}
	/* ours rank after the other colour's: if the latest two hold one of
	 * the other colour, the second does (and the first, if both do) */
	if (!noted_other(p->pred2, p->pred2_number, mycolor) &&
	    !noted_other(p->pred, p->pred_number, mycolor))
		return max;
	/* the colour is read again only where a waiter may park, two or
	 * more ahead (the colour's line moves at every exit: a load of it is
	 * a cache miss); with one ahead, those of the other colour are
	 * dropped unread.  The tickets before the colour (load->load): with
	 * the colour ours after they were read, each ticket of the other
	 * colour read is served before every ticket of ours (line 12), or
	 * has already left (a stale read: the park then ends at once) */
	if (p->crowd >= 2) {
		cmm_smp_rmb();
		if (bw_shared_color(p->b, p->lock) == mycolor)
			return max;
	}
	if (noted_other(p->pred2, p->pred2_number, mycolor))
		p->pred2 = BAKERY_NO_SLOT;
	if (noted_other(p->pred, p->pred_number, mycolor))
		p->pred = BAKERY_NO_SLOT;
	return max;
}

static int bw_doorway(struct passage *p)
{
	struct bakery_shm_reg *me = p->mine;
	/* (the addresses before the barrier) */
	const uint32_t *color = bw_color_word(p->b, p->lock);
	struct lone_look look = lone_look_at(p);
	unsigned mycolor;
	uint64_t max;

	/* line 2, then a full barrier: forbids loading color and the tickets
	 * before choosing[i] = 1 is visible (store->load), as in Lamport's */
	uint32_t count = doorway_count_open(CMM_LOAD_SHARED(me->choosing));

	store_mb(&me->choosing, count);
	CRASH_POINT("doorway");
	mycolor = bw_color_read(color);                                 /* line 4 */
	CRASH_POINT("doorway-color");
	max = lone_look_alone(&look) ? 0 : others_max_number(p, mycolor); /* lines 3, 5 */
	if (max >= NUMBER_LIMIT)
		max = NUMBER_LIMIT - 1;
#ifdef BAKERY_TESTING
	/* readers overlapping without end keep numbers growing within a
	 * colour, as Lamport's: the bound is for exclusive passages only.
	 * The mark before our ticket (store->store, the store_mb below), so
	 * that whoever reads the ticket reads the mark */
	if (p->shared && !(CMM_LOAD_SHARED(p->b->locks[p->lock].flags) & LOCK_SHARED_SEEN))
		uatomic_or(&p->b->locks[p->lock].flags, LOCK_SHARED_SEEN);
#endif
	BAKERY_ASSERT(max + 1 <= p->b->nslots || bakery__lock_faulted(p->b, p->lock) ||
	              (CMM_LOAD_SHARED(p->b->locks[p->lock].flags) & LOCK_SHARED_SEEN));
	CMM_STORE_SHARED(me->number, bw_ticket(mycolor, max + 1));  /* line 5 */
	/* line 6, fenced on both sides: the ticket before choosing = 0
	 * (store->store), both before the loads of line 7 on (store->load) */
	store_mb(&me->choosing, count + 1);
	bakery__reg_signal_doorway(me);
	return 0;
}

struct bw_wait {
	uint64_t mine;          /* our ticket */
	unsigned self;
	bool shared;            /* a reader's passage */
	int branch;             /* -1 undecided, 0 same colour (line 11), 1 other (12) */
};

/* Lines 10-12: the branch is chosen on the first read of j's ticket; the
 * await then re-reads j's ticket (and the colour) until one term holds. */
static bool bw_passed(struct bakery *b, unsigned lock, unsigned j, void *arg)
{
	struct bw_wait *w = arg;
	uint64_t tj = CMM_LOAD_SHARED(reg_of(b, lock, j)->number);
	unsigned mycolor = bw_color(w->mine);

	if (w->branch < 0)
		w->branch = bw_color(tj) == mycolor ? 0 : 1;               /* line 10 */
	if (bw_number(tj) == 0)
		return true;
	if (w->branch == 0) {                                             /* line 11 */
		if (!ticket_before(bw_number(tj), j, bw_number(w->mine), w->self) ||
		    bw_color(tj) != mycolor)
			return true;
	} else if (bw_color(tj) == mycolor || mycolor != bw_shared_color(b, lock)) { /* line 12 */
		return true;
	}
	/* both shared: no conflict, whatever the colours (readers never
	 * write the colour, bw_exit).  The mode is read last, after the
	 * colour, in the order tests/model/black_white_shared.pml checks. */
	return reader_passes(b, lock, j, w->shared);
}

static void bw_abort(struct passage *p)
{
	/* number := 0; the colour bit stays untouched */
	count_abort(p);
	store_mb(&p->mine->number, bw_ticket(bw_color(p->mine->number), 0));
	bakery__reg_signal(p->mine);
}

/* Lines 10-12 for J.  The branch is taken on the first read of j's ticket
 * (line 10, after j's doorway: line 9).  Only line 12 reads the shared
 * colour, so only its wait also sleeps on the colour word: a waiter of
 * line 11 is woken by j's exit alone, not by every exit's flip. */
static int bw_await_ticket(struct passage *p, struct bakery_shm_lock *e, unsigned j,
                           struct bw_wait *w)
{
	int err;

	(void)bw_passed(p->b, p->lock, j, w);                             /* line 10 */
	if (w->branch == 1) {
		p->also = &e->color;
		p->also_waiters = &e->color_sleepers;
	}
	err = bakery__await_slot(p, j, bw_passed, w);
	p->also = p->also_waiters = NULL;
	return err;
}

/* Lines 7-12 for each other slot of the lock's active set. */
static __attribute__((noinline)) int wait_for_others(struct passage *p)
{
	struct bakery_shm_lock *e = &p->b->locks[p->lock];
	uint64_t mine = CMM_LOAD_SHARED(p->mine->number);
	int err;

	/* two or more back: sleep once behind the one before our predecessor */
	err = bakery__park_behind(p);
	if (err) {
		bw_abort(p);
		return err;
	}
	/* lines 7-8, our predecessor last (algo.h) */
	for_each_other_last(p, j, bound, p->pred) {
		struct bw_wait w = { mine, p->self, p->shared, -1 };

		/* lines 9-12 at a first look (common.h); else from line 9
		 * again, line 10's branch taken afresh */
		if (doorway_idle_at_a_look(p->b, p->lock, j) && bw_passed(p->b, p->lock, j, &w))
			continue;
		w.branch = -1;
		err = bakery__await_doorway_end(p, j);             /* line 9 */
		if (!err)
			err = bw_await_ticket(p, e, j, &w);                     /* lines 10-12 */
		if (err) {
			bw_abort(p);
			return err;
		}
	}
	return 0;
}

static int bw_wait(struct passage *p)
{
	/* nobody else in the set: lines 7-8 have no j to visit */
	if (active_alone(p))
		return 0;
	return wait_for_others(p);
}

static void bw_exit(const struct bakery_lock *l, struct bakery_shm_reg *mine, bool shared)
{
	struct bakery_shm_lock *e = l->entry;
	unsigned mycolor = bw_color(CMM_LOAD_SHARED(mine->number));
	uint32_t word = CMM_LOAD_SHARED(e->color);

	/* line 15: color := the other colour, by the one holder.  A reader
	 * leaves the colour as it is (readers inside together may be of both
	 * colours; a flip by one would hand the older colour's priority to
	 * the newer while the older is still inside: see docs/algorithms.md) */
	if (caa_likely(!shared)) {
		/* every access of the critical section before the colour write */
		bakery_release();
		CMM_STORE_SHARED(e->color, (((word >> 1) + 1) << 1) | (mycolor ^ 1));
	}
	/* line 16: after the colour (store->store, the paper stresses lines
	 * 15 and 16 must stay in order; for a reader, after its critical
	 * section), and both before the loads of the waiter counts
	 * (store->load): by its own barrier, or by those of the waiters that
	 * sleep, colour sleepers included (exit_store, exitfence.h) */
	mine = exit_store(l, mine, bw_ticket(mycolor, 0));
	bakery__reg_signal(mine);
	if (!shared && CMM_LOAD_SHARED(e->color_sleepers))
		bakery__futex_wake_all(&e->color);
}

const struct algo_ops bakery__algo_black_white = {
	.id = BAKERY_ALGO_BLACK_WHITE,
	.name = "black-white",
	.modes = ALGO_SHARED,
	.doorway = bw_doorway,                                          /* lines 1-6 */
	.wait = bw_wait,                                                /* lines 7-13 */
	.exit = bw_exit,                                                /* lines 15-17 */
	.recover = bakery__plain_reset,
};
