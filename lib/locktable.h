/* SPDX-License-Identifier: MIT */
/*
 * locktable.h - locktable.c: the lock table's token and the generation of
 * its entries, for lock.c (finding and creating locks) and lockadmin.c
 * (removing them).
 */
#ifndef BAKERY_LOCKTABLE_H
#define BAKERY_LOCKTABLE_H

#include <string.h>

#include "deadline.h"
#include "token.h"

/* Take the lock table's token (creating and removing locks), waiting at
 * most 2 s: 0, EAGAIN (held all that time by a thread not proven gone: a
 * holder stopped or starved, in any PID namespace), ENOMEM,
 * BAKERY_EBADREGION (a forged token word, or the region lost).  Entries a
 * dead unlinker left half-removed are settled before it returns
 * (bakery__table_settle). */
BAKERY_HIDDEN int bakery__table_lock(struct bakery *b, struct token_hold *h);
/* The same within DL: EBUSY (WAIT_NONE) or ETIMEDOUT instead of EAGAIN;
 * a blocking one waits for as long as the token is held. */
BAKERY_HIDDEN int bakery__table_lock_until(struct bakery *b, struct token_hold *h,
                                           const struct deadline *dl);
/* Finish or undo what an unlinker that died left in the table (an odd
 * generation); the caller holds the table's token. */
BAKERY_HIDDEN void bakery__table_settle(struct bakery *b);
/* The entry's generation is odd (an unlink under way): wait for the unlink
 * to end (or settle what a dead unlinker left).  0, or as
 * bakery__table_lock; _until, as bakery__table_lock_until. */
BAKERY_HIDDEN int bakery__entry_wait_settled(struct bakery *b);
BAKERY_HIDDEN int bakery__entry_wait_settled_until(struct bakery *b, const struct deadline *dl);
/* The last step of removing entry LOCK, committed (FREE): clear its
 * registers for the next lock, then the next even generation.
 * Idempotent; the caller holds the table's token. */
BAKERY_HIDDEN void bakery__entry_finish_free(struct bakery *b, unsigned lock);

/* Does table entry E hold NAME (LEN bytes)?  The entry's name may be
 * unterminated. */
static inline bool entry_named(const struct bakery_shm_lock *e, const char *name, size_t len)
{
	return CMM_LOAD_SHARED(e->state) == LOCK_READY &&
	       memcmp(e->name, name, len) == 0 && e->name[len] == '\0';
}

/* The entry of the lock named NAME (LEN bytes) into *INDEX: 0, or ENOENT.
 * Without the table's token: a snapshot that opening a lock re-checks. */
BAKERY_HIDDEN int bakery__table_find(struct bakery *b, const char *name, size_t len,
                                     unsigned *index);
/* Find the lock named NAME, or create it with ALGO and HOLDERS (and its
 * bias word BIAS, algo/bias.h), under the table's token: 0 and *INDEX,
 * BAKERY_ELOCKS (the table is full), or bakery__table_lock's errors. */
BAKERY_HIDDEN int bakery__table_create(struct bakery *b, const char *name, size_t len,
                                       enum bakery_algo algo, unsigned holders,
                                       uint32_t bias, unsigned *index);

static inline bool gen_settled(uint32_t gen)
{
	return (gen & 1u) == 0;
}

#endif /* BAKERY_LOCKTABLE_H */
