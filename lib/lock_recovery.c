/* SPDX-License-Identifier: MIT */
/*
 * lock_recovery.c - the per-lock half of crash recovery: what a dead (or
 * departing) slot leaves in each lock, and how it is cleared.  registry.c
 * proves the death and owns the slot; it reaches this file only through
 * struct recovery_ops, which bakery_open registers in the handle
 * (api.c), so the registry never calls up into the lock layer.
 *
 * Owner-died, as for a robust pthread mutex: the recoverer of a slot that
 * died inside the critical section sets LOCK_OWNER_DIED before clearing the
 * slot's registers; whoever acquires next sees the flag and gets EOWNERDEAD
 * (lock.c).
 */
#include "config.h"

#include "table.h"
#include "lock_recovery.h"
#include "recovery_ops.h"
#include "order.h"
#include "pass.h"

/* Only entries in use have registers anyone wrote: testing the lock table
 * first keeps a per-slot sweep from touching (and faulting in) one register
 * page per lock of the region. */
static inline bool lock_in_use(struct bakery *b, unsigned lock)
{
	return CMM_LOAD_SHARED(b->locks[lock].state) == LOCK_READY;
}

static bool lock_entry_ready(struct bakery *b, unsigned lock, const struct algo_ops **ops)
{
	struct bakery_shm_lock *e = &b->locks[lock];
	uint32_t algo;

	if (!lock_in_use(b, lock))
		return false;
	algo = CMM_LOAD_SHARED(e->algo);
	/* a corrupted algo still gets its registers cleared (plain reset) */
	*ops = bakery__algo_ops_of(algo == BAKERY_ALGO_DEFAULT || algo >= BAKERY_ALGO_COUNT
	                           ? BAKERY_ALGO_LAMPORT : (enum bakery_algo)algo);
	return true;
}

/* Mark the lock owner-died by a dead writer: UNREPAIRED if that writer
 * had been told EOWNERDEAD and not called bakery_consistent (a failed
 * repair), cleared if it had not (a new death).  One atomic step, so
 * that the two bits are never seen apart. */
static void mark_owner_died(struct bakery_shm_lock *e, bool unrepaired)
{
	uint32_t old = CMM_LOAD_SHARED(e->flags), seen;

	for (;;) {
		uint32_t new = (old | LOCK_OWNER_DIED | LOCK_UNREPAIRED) &
		               (unrepaired ? ~0u : ~LOCK_UNREPAIRED);

		seen = uatomic_cmpxchg(&e->flags, old, new);
		if (seen == old)
			return;
		old = seen;
	}
}

/* Owner-died bookkeeping shared by all algorithms.  A reader that died
 * inside changed nothing: its share comes back without the mark. */
static void note_dead_slot(struct bakery *b, unsigned lock, unsigned slot)
{
	struct bakery_shm_lock *e = &b->locks[lock];
	struct bakery_shm_reg *r = reg_of(b, lock, slot);

	if (CMM_LOAD_SHARED(r->stage) == BAKERY_PASS_CRITICAL) {
		if (CMM_LOAD_SHARED(r->mode) == REG_SHARED) {
			uatomic_inc(&e->reader_deaths);
		} else {
			mark_owner_died(e, CMM_LOAD_SHARED(r->holder_inconsistent) != 0);
			uatomic_inc(&e->owner_deaths);
		}
	}
	uatomic_inc(&e->recoveries);
	/* the flag before the register reset that lets the next holder in
	 * (store->store; pairs with the read barrier in lock_acquire) */
	cmm_smp_mb();
}

/* Clear SLOT's part in every lock it joined (registry.c's slot_clear). */
static void clear_slot(struct bakery *b, unsigned slot, bool dead)
{
	const struct algo_ops *ops;

	for (unsigned l = 0; l < b->nlocks; l++) {
		struct bakery_shm_reg *r = reg_of(b, l, slot);

		if (!lock_entry_ready(b, l, &ops) || !CMM_LOAD_SHARED(r->joined))
			continue;
		if (dead)
			note_dead_slot(b, l, slot);
		bakery__pass_recover(b, l, slot, ops->pass_abort); /* the passes it left unfinished */
		if (ops->recover(b, l, slot) == 0) {
			CMM_STORE_SHARED(r->stage, BAKERY_PASS_IDLE);
			CMM_STORE_SHARED(r->holder_inconsistent, 0);
			bakery__active_leave(b, l, slot);
		}
		bakery__reg_publish(r);     /* wake whoever waits on the dead registers */
		if (CMM_LOAD_SHARED(b->locks[l].holders) > 1)
			bakery__holders_signal(b, l);   /* and whoever counts them */
	}
}

/* Is a Jayanti passage of SLOT still to be completed in some lock? */
static bool proxies_pending(struct bakery *b, unsigned slot)
{
	for (unsigned l = 0; l < b->nlocks; l++)
		if (lock_in_use(b, l) && CMM_LOAD_SHARED(reg_of(b, l, slot)->proxy))
			return true;
	return false;
}

/* Drive the slot's pending proxy passages; true if none is left. */
static bool finish_proxies(struct bakery *b, unsigned slot, unsigned helper)
{
	bool done = true;
	const struct algo_ops *ops;

	for (unsigned l = 0; l < b->nlocks; l++)
		if (lock_entry_ready(b, l, &ops) && CMM_LOAD_SHARED(reg_of(b, l, slot)->proxy)
		    && ops->finish_proxy)
			done &= ops->finish_proxy(b, l, slot, helper);
	return done;
}

/* Does the owner of SLOT hold any lock of B? */
static bool holds_lock(struct bakery *b, unsigned slot)
{
	for (unsigned l = 0; l < b->nlocks; l++)
		if (lock_in_use(b, l) &&
		    CMM_LOAD_SHARED(reg_of(b, l, slot)->stage) == BAKERY_PASS_CRITICAL)
			return true;
	return false;
}

/* Is SLOT out of LOCK: no stage, no doorway, no ticket (as the lock's
 * algorithm reads it), no proxy passage, no pass? */
static bool reg_idle(struct bakery *b, unsigned lock, unsigned slot)
{
	const struct bakery_shm_reg *r = reg_of(b, lock, slot);

	return CMM_LOAD_SHARED(r->stage) == BAKERY_PASS_IDLE &&
	       (CMM_LOAD_SHARED(r->choosing) & 1) == 0 &&
	       !lock_ticket_held(b, lock, CMM_LOAD_SHARED(r->number)) &&
	       CMM_LOAD_SHARED(r->proxy) == 0 && CMM_LOAD_SHARED(r->pass) == PASS_IDLE;
}

/* Is SLOT out of every lock in use? */
static bool slot_idle(struct bakery *b, unsigned slot)
{
	for (unsigned l = 0; l < b->nlocks; l++)
		if (lock_in_use(b, l) && !reg_idle(b, l, slot))
			return false;
	return true;
}

const struct recovery_ops bakery__lock_recovery = {
	.clear_slot = clear_slot,
	.finish_proxies = finish_proxies,
	.proxies_pending = proxies_pending,
	.holds_lock = holds_lock,
	.slot_idle = slot_idle,
};
