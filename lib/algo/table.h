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

#endif /* BAKERY_ALGO_TABLE_H */
