/* SPDX-License-Identifier: MIT */
/*
 * guard.h - guard.c: the SIGBUS guard.  Tests of the guard include it.
 */
#ifndef BAKERY_GUARD_H
#define BAKERY_GUARD_H

#include "private.h"

/*
 * A shared mapping of an object another process cut short (ftruncate) raises
 * SIGBUS on any access past the new end.  bakery__guard_add() watches [base,
 * base + len): such a SIGBUS is answered by replacing the whole range with
 * private zero-filled pages (the access is then retried and reads zeros) and
 * setting *lost to 1, which the library checks to answer BAKERY_EBADREGION.
 * SIGBUS outside every watched range goes to the handler installed before
 * ours, or kills the process as it would have.  guard.c.
 */
struct guard;
BAKERY_HIDDEN int bakery__guard_add(void *base, size_t len, int *lost, struct guard **out);
BAKERY_HIDDEN void bakery__guard_remove(struct guard *g);

#endif /* BAKERY_GUARD_H */
