/* SPDX-License-Identifier: MIT */
/*
 * lockadmin.h - lockadmin.c's hidden half: taking back, in one go, the
 * locks of a full table that nobody uses (path locks, pathlock.c).
 */
#ifndef BAKERY_LOCKADMIN_H
#define BAKERY_LOCKADMIN_H

#include "handle.h"

/*
 * Remove every lock of B whose name begins with PREFIX and that nobody
 * holds, waits for or is in the doorway of, with no passage of a dead
 * participant left in it and no owner-died or not-recoverable mark (a
 * repair still due is kept): bakery_lock_unlink's protocol, with one
 * system-wide barrier for all of them.  Only when the table has no free
 * entry (another caller may have made room already: then nothing is
 * removed).  Handles on the removed locks get BAKERY_EREMOVED.  The number
 * removed into *REMOVED.  For the owner of the region's object (or root).
 * 0, EINVAL, EPERM, EAGAIN, ENOMEM, ENOTSUP, BAKERY_EBADREGION.
 */
BAKERY_HIDDEN int bakery__lock_reclaim(struct bakery *b, const char *prefix,
                                       unsigned *removed);

#endif /* BAKERY_LOCKADMIN_H */
