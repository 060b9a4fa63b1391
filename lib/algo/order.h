/* SPDX-License-Identifier: MIT */
/*
 * order.h - the order of a lock's tickets, as its algorithm serves them:
 * the (number, slot) order of the papers, and a line (struct ticket_line)
 * that orders the register values of any lock through its algorithm's own
 * decoder (black_white_order.h, jayanti_order.h; Lamport's and the
 * Boulangerie's tickets are plain numbers).  Below the algorithms and the
 * waits, for those that look at a whole line: passing (pass.c), recovery
 * and removal (is a register idle?), introspection (table.c).
 */
#ifndef BAKERY_ALGO_ORDER_H
#define BAKERY_ALGO_ORDER_H

#include "black_white_order.h"
#include "jayanti_order.h"

/* (na, ia) < (nb, ib): the lexicographic order of the papers */
static inline bool ticket_before(uint64_t na, unsigned ia, uint64_t nb, unsigned ib)
{
	return na < nb || (na == nb && ia < ib);
}

/* A lock's line: what orders its tickets besides their values, read once
 * (Black-White's shared colour, Jayanti's X).  Read from racing registers:
 * a snapshot, for decisions that a later check makes safe or for display. */
struct ticket_line {
	enum bakery_algo algo;     /* the lock's; any other value: plain numbers */
	unsigned nslots;
	uint32_t view;             /* the shared colour, or X */
};

static inline enum bakery_algo lock_algo_of(struct bakery *b, unsigned lock)
{
	uint32_t a = CMM_LOAD_SHARED(b->locks[lock].algo);

	return a < BAKERY_ALGO_COUNT ? (enum bakery_algo)a : BAKERY_ALGO_DEFAULT;
}

static inline struct ticket_line ticket_line_of(struct bakery *b, unsigned lock)
{
	struct ticket_line l = { .algo = lock_algo_of(b, lock), .nslots = b->nslots };

	if (l.algo == BAKERY_ALGO_BLACK_WHITE)
		l.view = bw_shared_color(b, lock);
	else if (l.algo == BAKERY_ALGO_JAYANTI)
		l.view = CMM_LOAD_SHARED(b->locks[lock].jayanti_x);
	return l;
}

/* Does register value T hold a ticket? */
static inline bool ticket_held(const struct ticket_line *l, uint64_t t)
{
	return l->algo == BAKERY_ALGO_BLACK_WHITE ? bw_ticket_held(t) : t != 0;
}

/* Does register value T hold a ticket of LOCK (read by its algorithm)? */
static inline bool lock_ticket_held(struct bakery *b, unsigned lock, uint64_t t)
{
	const struct ticket_line l = { .algo = lock_algo_of(b, lock) };

	return ticket_held(&l, t);
}

/* The key of register value T in the line: a slot is served before
 * another whose (key, slot) is greater. */
static inline uint64_t ticket_key(const struct ticket_line *l, uint64_t t)
{
	if (l->algo == BAKERY_ALGO_BLACK_WHITE)
		return bw_ticket_key(t, l->view);
	if (l->algo == BAKERY_ALGO_JAYANTI)
		return jay_ticket_key(t, l->view, l->nslots);
	return t;
}

/* Is ticket (tk, k) served before (tj, j)? */
static inline bool ticket_served_before(const struct ticket_line *l, uint64_t tk, unsigned k,
                                        uint64_t tj, unsigned j)
{
	return ticket_before(ticket_key(l, tk), k, ticket_key(l, tj), j);
}

/* May a passage of the line be left to a proxy (Jayanti's)? */
static inline bool ticket_line_proxies(const struct ticket_line *l)
{
	return l->algo == BAKERY_ALGO_JAYANTI;
}

#endif /* BAKERY_ALGO_ORDER_H */
