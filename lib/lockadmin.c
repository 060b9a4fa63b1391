/* SPDX-License-Identifier: MIT */
/*
 * lockadmin.c - calls around a lock's life that the lock protocol does not
 * need: opening a lock only if it exists, and (for the region's owner)
 * making a not-recoverable lock usable again.
 *
 * ENOTRECOVERABLE is final for the participants, as for a robust pthread
 * mutex: a holder was told the previous one died, did not repair, and
 * unlocked.  Without a way back the only cure would be to remove the whole
 * region, and every other lock in it.  bakery_lock_reset() is that way
 * back, for whoever owns the region: it returns the lock to the owner-died
 * state, so that the next holder is still told the protected state was
 * never repaired (EOWNERDEAD) and gets the chance to repair it.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "private.h"
#include "handle.h"
#include "shm_layout.h"
#include "region.h"

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
		return BAKERY_EBADREGION;
	if ((err = caller_owns(l->b)))
		return err;
	flags = &l->b->locks[l->index].flags;
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

/*
 * Open LOCK_NAME only if it exists.  Locks are never removed, so a lock
 * found in the table is still there when bakery_lock_open joins it: the
 * open cannot create one.
 */
int bakery_lock_lookup(bakery_t *b, const char *lock_name, enum bakery_algo algo,
                       bakery_lock_t **out)
{
	struct bakery_lock_info li;
	int err;

	if (!b || !lock_name || !out || b->closed)
		return EINVAL;
	if ((err = bakery__name_check(lock_name, BAKERY_LOCK_NAME_MAX)))
		return err;
	for (unsigned i = 0; i < b->nlocks; i++)
		if (bakery_lock_info(b, i, &li) == 0 && strcmp(li.name, lock_name) == 0)
			return bakery_lock_open(b, lock_name, algo, out);
	return region_lost(b) ? BAKERY_EBADREGION : ENOENT;
}
