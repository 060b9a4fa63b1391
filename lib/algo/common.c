/* SPDX-License-Identifier: MIT */
/*
 * common.c - the steps Lamport's Bakery and the Boulangerie share
 * (Boulangerie keeps Lamport's doorway and exit, Moses and Patkin's Fig. 2, lines 3-5
 * and 10), the plain reset of a dead slot, the table of the algorithms and
 * the lock's active set (the getset() of the papers).
 */
#include "config.h"

#include "common.h"

/* ------------------------------------------------------- the algorithms -- */

const struct algo_ops *bakery__algo_ops_of(enum bakery_algo algo)
{
	switch (algo) {
	case BAKERY_ALGO_LAMPORT:     return &bakery__algo_lamport;
	case BAKERY_ALGO_BOULANGERIE: return &bakery__algo_boulangerie;
	case BAKERY_ALGO_BLACK_WHITE: return &bakery__algo_black_white;
	case BAKERY_ALGO_JAYANTI:     return &bakery__algo_jayanti;
	default:                      return NULL;
	}
}

/* ----------------------------------------------------------- active set -- */

void bakery__active_join(struct passage *p)
{
	uint64_t *set = active_of(p->b, p->lock);

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

bool bakery__not_choosing(struct bakery *b, unsigned lock, unsigned j, void *unused)
{
	return CMM_LOAD_SHARED(reg_of(b, lock, j)->choosing) == 0;
}

void bakery__number_doorway(struct passage *p)
{
	struct bakery_shm_reg *me = p->mine;
	uint64_t max = 0;

	/* choosing[i] := true, then a full barrier.  Forbids loading number[j]
	 * before choosing[i] = 1 is visible (store->load): j could read
	 * choosing[i] = 0, number[i] = 0 and enter while we pick a number from
	 * stale values below its own. */
	store_mb(&me->choosing, 1);
	CRASH_POINT("doorway");
	for_each_other(p, j, bound) {                       /* max(number[1..n]) */
		uint64_t n = CMM_LOAD_SHARED(reg_of(p->b, p->lock, j)->number);
		/* slots come in increasing order: on a tie the later slot
		 * has the later ticket (n, j) */
		if (n && n >= max)
			passage_note_ahead(p, j, n);
		if (n > max)
			max = n;
		p->crowd += n != 0;
	}
	if (max >= NUMBER_LIMIT)
		max = NUMBER_LIMIT - 1;
	CMM_STORE_SHARED(me->number, max + 1);               /* number[i] := 1 + max */
	/* choosing[i] := false, with a full barrier before and after: number
	 * before choosing = 0 (store->store: a waiter passing choosing[i] = 0
	 * must read the new number), and both before we load anyone's
	 * choosing/number in the waiting loop or the waiter count (store->load). */
	store_mb(&me->choosing, 0);
	bakery__reg_signal_doorway(me);
}

void bakery__number_exit(struct passage *p)
{
	/* number[i] := 0.  The barrier before it keeps every access of the
	 * critical section before the store that lets the next holder in; the
	 * one after orders it before the load of the waiter count. */
	store_mb(&p->mine->number, 0);
	bakery__reg_signal(p->mine);
}

void bakery__number_abort(struct passage *p)
{
	/* leaving the waiting room: choosing is already 0; number := 0 is the
	 * abort the model checker shows safe (tests/model) */
	count_abort(p);
	store_mb(&p->mine->number, 0);
	bakery__reg_signal(p->mine);
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
