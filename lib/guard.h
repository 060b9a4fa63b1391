/* SPDX-License-Identifier: MIT */
/*
 * guard.h - guard.c: the SIGBUS guard.  Tests of the guard include it.
 */
#ifndef BAKERY_GUARD_H
#define BAKERY_GUARD_H

#include "private.h"

/*
 * A shared mapping of an object another process cut short (ftruncate) raises
 * SIGBUS on any access past the new end, and so does a page the file system
 * cannot allocate (a full /dev/shm).  bakery__guard_add() watches [base,
 * base + len), a mapping of the object FD that is all there while the
 * object is at least END bytes (FD -1: no object to ask): such a SIGBUS is
 * answered by replacing the whole range with private zero-filled pages (the
 * access is then retried and reads zeros) and setting *lost to the error
 * the library then answers: BAKERY_EBADREGION if the object is smaller than
 * END (cut short), ENOSPC if it is still whole (no page to be had).
 * SIGBUS outside every watched range goes to the handler installed before
 * ours, or kills the process as it would have.  FD must stay open until
 * bakery__guard_remove().  guard.c.
 */
struct guard;
BAKERY_HIDDEN int bakery__guard_add(void *base, size_t len, int fd, uint64_t end, int *lost,
                                    struct guard **out);
BAKERY_HIDDEN void bakery__guard_remove(struct guard *g);

#endif /* BAKERY_GUARD_H */
