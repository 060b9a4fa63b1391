/* SPDX-License-Identifier: MIT */
/*
 * jayanti_order.h - B-Bakery's tokens: their encoding and their order
 * (jayanti.c, and the code below the algorithms that looks at a line:
 * algo/order.h).  The one place that decodes them.
 *
 * A register's `number` holds token + 1, so 0 means token = -1 as in every
 * other algorithm here; tokens are kept modulo 2n-1 (n: the region's slot
 * capacity) and compared after shifting both around one pivot (see the
 * correction to the paper in jayanti.c).
 */
#ifndef BAKERY_ALGO_JAYANTI_ORDER_H
#define BAKERY_ALGO_JAYANTI_ORDER_H

#include <limits.h>

#include "handle.h"

/* "No token" (-1 of the paper). */
#define JAY_TOKEN_NONE UINT_MAX

static inline unsigned jay_modulus(unsigned nslots)
{
	return 2 * nslots - 1;
}

/* The token of register value V, or JAY_TOKEN_NONE; corrupted values are
 * folded in range. */
static inline unsigned jay_token(uint64_t v, unsigned nslots)
{
	unsigned m = jay_modulus(nslots);

	if (v == 0)
		return JAY_TOKEN_NONE;
	/* (no division for a value in range: a passage reads its own) */
	return caa_likely(v - 1 < m) ? (unsigned)(v - 1) : (unsigned)((v - 1) % m);
}

/* (v + n-1 - pivot) mod 2n-1: the pivot maps to n-1, its cluster to 0..2n-2 */
static inline unsigned jay_shift(unsigned v, unsigned pivot, unsigned nslots)
{
	unsigned m = jay_modulus(nslots);

	return (v + m - pivot + nslots - 1) % m;
}

/* [a, i] < [c, j] with both shifted by a's pivot (line 7 of the paper). */
static inline bool jay_before(unsigned a, unsigned i, unsigned c, unsigned j, unsigned nslots)
{
	unsigned sa = jay_shift(a, a, nslots), sc = jay_shift(c, a, nslots);

	return sa < sc || (sa == sc && i < j);
}

/*
 * The key of register value V in the line while X (the token of the last
 * holder) is X: its token shifted around X, which every waiting token is
 * within n of, so the shift keeps their order, as jay_before() does around
 * a waiter's own token.  UINT64_MAX for no token.  A slot is served before
 * another whose (key, slot) is greater.
 */
static inline uint64_t jay_ticket_key(uint64_t v, uint32_t x, unsigned nslots)
{
	unsigned t = jay_token(v, nslots);

	return t == JAY_TOKEN_NONE ? UINT64_MAX : jay_shift(t, x % jay_modulus(nslots), nslots);
}

#endif /* BAKERY_ALGO_JAYANTI_ORDER_H */
