/* SPDX-License-Identifier: MIT */
/*
 * lockadmin.c - calls around a lock's life that the lock protocol does not
 * need: (for the region's owner) making a not-recoverable lock usable
 * again, and removing a lock.
 *
 * ENOTRECOVERABLE is final for the participants, as for a robust pthread
 * mutex: a holder was told the previous one died, did not repair, and
 * unlocked.  Without a way back the only cure would be to remove the whole
 * region, and every other lock in it.  bakery_lock_reset() is that way
 * back, for whoever owns the region: it returns the lock to the owner-died
 * state, so that the next holder is still told the protected state was
 * never repaired (EOWNERDEAD) and gets the chance to repair it.
 *
 * Removing a lock (bakery_lock_unlink) races with acquirers that hold a
 * handle on it, and their handles outlive it.  The entry's generation
 * (struct bakery_shm_lock.gen) settles both:
 *
 *   1. under the table's token, the generation goes odd: an unlink is
 *      under way;
 *   2. a system-wide barrier (membarrier(2)), then every slot's registers
 *      in the lock are read.  An acquirer stores its stage, then reads the
 *      generation, with only a compiler barrier between (lock.c,
 *      entry_moved): the membarrier makes it a full one, so either we see
 *      its stage here or it sees the odd generation and stops before its
 *      doorway (tests/model/unlink.pml checks this handshake);
 *   3. any register not idle: the generation goes back (EBUSY), and the
 *      lock is as it was; the same, unless forced, while the lock owes a
 *      repair (owner-died: EOWNERDEAD; not recoverable: ENOTRECOVERABLE):
 *      the next holder of a lock of that name must be told, and a new
 *      lock would tell it nothing;
 *   4. all idle: the entry is FREE (the commit point), its registers are
 *      cleared for the next lock, and the generation moves on to the next
 *      even value.  A handle that cached the old one gets BAKERY_EREMOVED.
 *
 * Before step 1 (and without the table's token), if a participant found
 * in the lock was left by the dead (its token marked owner-died by the
 * kernel, or its slot still recovering), the region is reaped as
 * bakery_recover() reaps it: a dead holder, waiter or reader is not "in
 * use" (step 3), and a dead writer's recovery marks the lock owner-died,
 * so the unlink answers EOWNERDEAD rather than EBUSY.  Recovery is open to
 * any participant at any time (every opener reaps); it adds nothing to the
 * handshake of steps 1-4.
 *
 * An unlinker that dies leaves an odd generation under a token the kernel
 * marks owner-died; whoever takes the token next settles the entry
 * (bakery__table_settle): a READY entry goes back to its lock (step 3), a
 * FREE one is finished (step 4).  Either the lock or a free entry, never
 * an entry stuck half-way.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "private.h"
#include "futex.h"
#include "handle.h"
#include "lockadmin.h"
#include "order.h"
#include "locktable.h"
#include "shm_layout.h"
#include "region.h"
#include "registry.h"

/* May the caller administer region B?  Its owner, or root. */
static int caller_owns(struct bakery *b)
{
	struct stat st;

	if (fstat(b->fd, &st) < 0)
		return EPERM;
	return geteuid() == 0 || geteuid() == st.st_uid ? 0 : EPERM;
}

int bakery_lock_reset(bakery_lock_t *l)
{
	uint32_t *flags, old, new;
	int err;

	if (!l || !l->b || l->b->closed)
		return EINVAL;
	if (region_lost(l->b))
		return region_lost_error(l->b);
	if ((err = caller_owns(l->b)))
		return err;
	if (lock_handle_stale(l))
		return BAKERY_EREMOVED;
	flags = &l->entry->flags;
	/* one atomic step from not-recoverable to owner-died: no acquirer can
	 * see the lock with neither mark (the acquirer's side of the pairing
	 * is the read barrier before its flags load in lock_acquire) */
	do {
		old = CMM_LOAD_SHARED(*flags);
		if (!(old & LOCK_NOT_RECOVERABLE))
			return EINVAL;
		new = (old & ~LOCK_NOT_RECOVERABLE) | LOCK_OWNER_DIED;
	} while (uatomic_cmpxchg(flags, old, new) != old);
	return 0;
}

/* ------------------------------------------------------------ removing -- */

/* Is SLOT out of LOCK: no stage, no doorway, no ticket, no proxy passage? */
static bool reg_idle(struct bakery *b, unsigned lock, unsigned slot)
{
	const struct bakery_shm_reg *r = reg_of(b, lock, slot);

	return CMM_LOAD_SHARED(r->stage) == BAKERY_PASS_IDLE &&
	       (CMM_LOAD_SHARED(r->choosing) & 1) == 0 &&
	       !lock_ticket_held(b, lock, CMM_LOAD_SHARED(r->number)) &&
	       CMM_LOAD_SHARED(r->proxy) == 0;
}

/* Every slot out of LOCK.  Only the slots below the high-water mark are
 * read: a slot above it has never been claimed, so its registers were
 * never written (and reading them would only fault in pages of zeros).
 * Read after the barrier of step 2: a claim raises the mark before its
 * thread stores a stage, so an acquirer whose stage we must see has
 * raised it where we look. */
static bool entry_idle(struct bakery *b, unsigned lock)
{
	unsigned bound = slots_bound(b);

	for (unsigned s = 0; s < bound; s++)
		if (!reg_idle(b, lock, s))
			return false;
	return true;
}

/*
 * The repair LOCK still owes: EOWNERDEAD (a holder died inside and nobody
 * has repaired since), ENOTRECOVERABLE, or 0.  Called with the registers
 * found idle: read after them (load->load), the flags are those a
 * recoverer set before it cleared a dead holder's registers (pairs with
 * the barrier in note_dead_slot, lock_recovery.c), and those an unlock
 * without repair set (a locked or, bakery_unlock) before its exit's store
 * (exit_store) cleared its ticket.
 */
static int repair_owed(struct bakery *b, unsigned lock)
{
	uint32_t flags;

	cmm_smp_rmb();
	flags = CMM_LOAD_SHARED(b->locks[lock].flags);
	if (flags & LOCK_NOT_RECOVERABLE)
		return ENOTRECOVERABLE;
	return flags & LOCK_OWNER_DIED ? EOWNERDEAD : 0;
}

/* Steps 3 and 4 on entry LOCK, marked (odd) in step 1 and looked at after
 * the barrier of step 2: removed if IDLE (true), else as it was. */
static bool entry_settle_marked(struct bakery *b, unsigned lock, bool idle)
{
	struct bakery_shm_lock *e = &b->locks[lock];

	if (!idle) {
		CMM_STORE_SHARED(e->gen, CMM_LOAD_SHARED(e->gen) - 1);
		return false;
	}
	CMM_STORE_SHARED(e->state, LOCK_FREE);
	CRASH_POINT("unlink-freed");
	bakery__entry_finish_free(b, lock);
	return true;
}

/* Step 2's barrier: the odd generations stored before it, the registers
 * read after it.  0 or ENOTSUP. */
static int barrier_after_marks(void)
{
	/* the odd generations before the register loads that follow
	 * (store->load), in this thread and, through membarrier, against
	 * every acquirer's stage store and generation load (lock.c,
	 * entry_moved) */
	cmm_smp_mb();
	return bakery__barrier_everywhere();   /* the acquirers' half */
}

/* Steps 1-4 on entry LOCK, the table's token held; FLAGS as
 * bakery_lock_unlink_flags's. */
static int entry_remove(struct bakery *b, unsigned lock, unsigned flags)
{
	struct bakery_shm_lock *e = &b->locks[lock];
	int err;

	/* even: settled at table_lock */
	CMM_STORE_SHARED(e->gen, CMM_LOAD_SHARED(e->gen) + 1);
	CRASH_POINT("unlink-dying");
	err = barrier_after_marks();
	if (!err && !entry_idle(b, lock))
		err = EBUSY;
	if (!err && !(flags & BAKERY_UNLINK_FORCE))
		err = repair_owed(b, lock);
	CRASH_POINT("unlink-checked");
	entry_settle_marked(b, lock, !err);
	return err;
}

/* Is the owner of SLOT, found in a lock, perhaps dead: its token marked
 * owner-died by the kernel, or the slot left RECOVERING with passages
 * that others must finish (a dead jayanti waiter's, completed by proxy)? */
static bool slot_left_by_the_dead(struct bakery *b, unsigned slot)
{
	return token_owner_died(CMM_LOAD_SHARED(*slot_token_word(b, slot))) ||
	       bakery__slot_is_recovering(b, slot);
}

/* Before step 1: if a slot that is not idle in the lock LOCK_NAME was left
 * by the dead, reap the region as bakery_recover() does (the deaths
 * proven with the kernel's mark, the slots cleared, their pending proxy
 * passages driven); a live owner costs two loads.  Found without the
 * table's token: if the entry changes hands meanwhile, recovering the dead
 * is harmless, and step 3 still decides on what it sees. */
static void recover_dead_users(struct bakery *b, const char *lock_name)
{
	unsigned lock, bound;

	if (bakery__table_find(b, lock_name, strlen(lock_name), &lock))
		return;         /* no such lock: ENOENT below */
	bound = slots_bound(b);
	for (unsigned s = 0; s < bound; s++)
		if (!reg_idle(b, lock, s) && slot_left_by_the_dead(b, s)) {
			bakery__registry_reap(b, BAKERY_NO_SLOT);
			return;
		}
}

static int lock_unlink(bakery_t *b, const char *lock_name, unsigned flags)
{
	struct token_hold h;
	unsigned index;
	int err;

	if (!b || !lock_name || b->closed || (flags & ~BAKERY_UNLINK_FORCE))
		return EINVAL;
	if (b->rdonly)
		return EPERM;
	if (region_lost(b))
		return region_lost_error(b);
	if ((err = bakery__name_check(lock_name, BAKERY_LOCK_NAME_MAX)))
		return err;
	if ((err = caller_owns(b)))
		return err;
	recover_dead_users(b, lock_name);
	if ((err = bakery__table_lock(b, &h)))
		return err;
	err = bakery__table_find(b, lock_name, strlen(lock_name), &index);
	if (!err)
		err = entry_remove(b, index, flags);
	bakery__token_give(&h);
	return region_lost(b) ? region_lost_error(b) : err;
}

/* (membarrier and the table token: cancellation off) */
int bakery_lock_unlink_flags(bakery_t *b, const char *lock_name, unsigned flags)
{
	int old = cancel_off(), err = lock_unlink(b, lock_name, flags);

	cancel_restore(old);
	return err;
}

int bakery_lock_unlink(bakery_t *b, const char *lock_name)
{
	return bakery_lock_unlink_flags(b, lock_name, 0);
}

/* ---------------------------------------------------------- reclaiming -- */

/*
 * Many unlinks at the price of one: steps 1-4 on every entry that may be
 * taken back, with a single barrier (step 2) for all of them.  The
 * handshake is step 2's, entry by entry; an acquirer of any of them either
 * is seen (that entry is given back) or sees its odd generation.  A
 * reclaimer that dies leaves several odd generations, which the next
 * holder of the table's token settles one by one, as it would one.
 */

/* Does entry LOCK hold a lock named PREFIX... that nobody seems to use, and
 * that has nothing to tell its next holder?  An owner-died or
 * not-recoverable lock is kept: a repair is due. */
static bool entry_reclaimable(struct bakery *b, unsigned lock, const char *prefix, size_t plen)
{
	const struct bakery_shm_lock *e = &b->locks[lock];

	return CMM_LOAD_SHARED(e->state) == LOCK_READY && memcmp(e->name, prefix, plen) == 0 &&
	       !(CMM_LOAD_SHARED(e->flags) & (LOCK_OWNER_DIED | LOCK_NOT_RECOVERABLE)) &&
	       entry_idle(b, lock);
}

/* Step 3's test for a reclaimed entry, after the barrier: idle, and still
 * without a repair due. */
static bool entry_still_reclaimable(struct bakery *b, unsigned lock)
{
	if (!entry_idle(b, lock))
		return false;
	/* the idle registers before the flags: a recoverer marks the lock
	 * owner-died before it clears a dead holder's registers, an unlock
	 * marks it not recoverable before it leaves (load->load; pairs with
	 * note_dead_slot in lock_recovery.c and bakery_unlock in lock.c) */
	cmm_smp_rmb();
	return !(CMM_LOAD_SHARED(b->locks[lock].flags) & (LOCK_OWNER_DIED | LOCK_NOT_RECOVERABLE));
}

static bool table_has_free_entry(struct bakery *b)
{
	for (unsigned i = 0; i < b->nlocks; i++)
		if (CMM_LOAD_SHARED(b->locks[i].state) == LOCK_FREE)
			return true;
	return false;
}

/* Steps 1-4 on the reclaimable entries, the table's token held. */
static int table_reclaim(struct bakery *b, const char *prefix, unsigned *removed)
{
	uint64_t marked[BAKERY_MAX_LOCKS / 64] = { 0 };
	size_t plen = strlen(prefix);
	unsigned n = 0;
	int err;

	for (unsigned i = 0; i < b->nlocks; i++)
		if (entry_reclaimable(b, i, prefix, plen)) {
			CMM_STORE_SHARED(b->locks[i].gen, CMM_LOAD_SHARED(b->locks[i].gen) + 1);
			marked[i / 64] |= UINT64_C(1) << (i % 64);
			n++;
		}
	if (n == 0)
		return 0;
	CRASH_POINT("reclaim-marked");
	err = barrier_after_marks();
	for (unsigned i = 0; i < b->nlocks; i++)
		if (marked[i / 64] & (UINT64_C(1) << (i % 64)) &&
		    entry_settle_marked(b, i, !err && entry_still_reclaimable(b, i)))
			(*removed)++;
	return err;
}

static int lock_reclaim(struct bakery *b, const char *prefix, unsigned *removed)
{
	struct token_hold h;
	int err;

	*removed = 0;
	if (!b || b->closed || !prefix || strlen(prefix) > BAKERY_LOCK_NAME_MAX)
		return EINVAL;
	if (b->rdonly)
		return EPERM;
	if (region_lost(b))
		return region_lost_error(b);
	if ((err = caller_owns(b)))
		return err;
	if ((err = bakery__table_lock(b, &h)))
		return err;
	/* someone made room meanwhile: nothing to take back */
	if (!table_has_free_entry(b))
		err = table_reclaim(b, prefix, removed);
	bakery__token_give(&h);
	return region_lost(b) ? region_lost_error(b) : err;
}

int bakery__lock_reclaim(struct bakery *b, const char *prefix, unsigned *removed)
{
	int old = cancel_off(), err = lock_reclaim(b, prefix, removed);

	cancel_restore(old);
	return err;
}
