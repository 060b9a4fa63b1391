/* SPDX-License-Identifier: MIT */
/*
 * black_white_order.h - Black-White's tickets: their encoding and the
 * order they are served in (black_white.c, and the code below the
 * algorithms that looks at a line: algo/order.h).  The one place that
 * decodes them.
 *
 * The ticket is ONE 64-bit word, colour in bit 63 and number below, so
 * that "read the ticket of j" is one atomic read as the paper assumes; an
 * idle register keeps its colour with number 0.  The shared colour word
 * keeps the colour in bit 0 and counts writes above it.
 */
#ifndef BAKERY_ALGO_BLACK_WHITE_ORDER_H
#define BAKERY_ALGO_BLACK_WHITE_ORDER_H

#include "handle.h"

#define BW_COLOR_BIT   (UINT64_C(1) << 63)
#define BW_NUMBER_MASK (BW_COLOR_BIT - 1)

static inline unsigned bw_color(uint64_t t) { return (unsigned)(t >> 63); }
static inline uint64_t bw_number(uint64_t t) { return t & BW_NUMBER_MASK; }

static inline uint64_t bw_ticket(unsigned color, uint64_t number)
{
	return ((uint64_t)color << 63) | (number & BW_NUMBER_MASK);
}

/* Does register value T hold a ticket (a number, whatever its colour)? */
static inline bool bw_ticket_held(uint64_t t)
{
	return bw_number(t) != 0;
}

/* The lock's shared colour word, and the colour it says. */
static inline uint32_t *bw_color_word(struct bakery *b, unsigned lock)
{
	return &b->locks[lock].color;
}

/* the shared colour, read from its word (bw_color_word) */
static inline unsigned bw_color_read(const uint32_t *word)
{
	return CMM_LOAD_SHARED(*word) & 1;
}

static inline unsigned bw_shared_color(struct bakery *b, unsigned lock)
{
	return bw_color_read(bw_color_word(b, lock));
}

/*
 * The key of ticket T in the line while the shared colour is SHARED:
 * tickets not of the shared colour were taken before the last flip and
 * go first (line 12 of the paper); within a colour, (number, slot) as in
 * Lamport's.  A slot is served before another whose (key, slot) is
 * greater.
 */
static inline uint64_t bw_ticket_key(uint64_t t, unsigned shared)
{
	return (uint64_t)(bw_color(t) == shared) << 63 | bw_number(t);
}

#endif /* BAKERY_ALGO_BLACK_WHITE_ORDER_H */
