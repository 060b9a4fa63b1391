/* SPDX-License-Identifier: MIT */
/*
 * table.h - table.c: the table of algorithms, above them all.
 */
#ifndef BAKERY_ALGO_TABLE_H
#define BAKERY_ALGO_TABLE_H

#include "algo.h"

/* The algorithm whose id is ALGO, or NULL (BAKERY_ALGO_DEFAULT, or a value
 * that names none). */
BAKERY_HIDDEN const struct algo_ops *bakery__algo_ops_of(enum bakery_algo algo);

/*
 * The line of LOCK (introspection): a waiting SLOT (its ticket taken) is let
 * in before another one whose (key, slot) is greater, as the lock's
 * algorithm orders tickets (struct algo_ops.queue_key).  Read from racing
 * registers: a snapshot, for display.
 */
BAKERY_HIDDEN uint64_t bakery__queue_key(struct bakery *b, unsigned lock, unsigned slot);

#endif /* BAKERY_ALGO_TABLE_H */
