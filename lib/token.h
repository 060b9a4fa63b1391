/* SPDX-License-Identifier: MIT */
/*
 * token.h - token.c: liveness tokens.
 */
#ifndef BAKERY_TOKEN_H
#define BAKERY_TOKEN_H

#include <linux/futex.h>

#include "handle.h"

/*
 * A liveness token is a robust-futex word (TID | FUTEX_WAITERS |
 * FUTEX_OWNER_DIED, the kernel's robust-futex ABI) that a thread holds for as
 * long as it owns what the token stands for.  The kernel marks it
 * FUTEX_OWNER_DIED, and wakes a waiter, when the holder ends without giving
 * it back.  token.c.
 */
#define TOKEN_TABLE(b) (2u * (b)->nslots)

/* ------------------------------------------------ what a word says -- */
/*
 * The one decoder of a token word (the constants of <linux/futex.h> are
 * read nowhere else but token.c, which writes them).  A word is free (no
 * TID), held by the thread it names, or marked owner-died (the kernel's
 * mark, TID cleared or not); FUTEX_WAITERS says someone sleeps on it.
 */
enum token_state { TOKEN_FREE, TOKEN_HELD, TOKEN_OWNER_DIED };

/* The holder's TID (0: none). */
static inline uint32_t token_tid(uint32_t w)
{
	return w & FUTEX_TID_MASK;
}

static inline bool token_owner_died(uint32_t w)
{
	return (w & FUTEX_OWNER_DIED) != 0;
}

static inline enum token_state token_state(uint32_t w)
{
	if (token_owner_died(w))
		return TOKEN_OWNER_DIED;
	return token_tid(w) ? TOKEN_HELD : TOKEN_FREE;
}

/* Held by a thread that has not died (its holder gives it back, or the
 * kernel marks it). */
static inline bool token_held_live(uint32_t w)
{
	return token_state(w) == TOKEN_HELD;
}

static inline bool token_has_waiters(uint32_t w)
{
	return (w & FUTEX_WAITERS) != 0;
}

/* W with the waiters bit set: the value to sleep on once it is. */
static inline uint32_t token_with_waiters(uint32_t w)
{
	return w | FUTEX_WAITERS;
}

struct token_hold {
	struct bakery *b;
	unsigned index;            /* the token's */
	uint32_t *word;            /* the word, seen through the window */
	unsigned char *win;        /* the word's shared page, then a private one */
	uint64_t page_off;         /* the region's page the window shows */
	struct guard *guard;
};

static inline uint32_t *token_word(struct bakery *b, unsigned i)
{
	return (uint32_t *)(b->base + token_offset(b->tokens_off, b->page_size, i));
}

static inline struct bakery_shm_token_line *token_line(struct bakery *b, unsigned i)
{
	return (struct bakery_shm_token_line *)(b->base +
	                                        token_line_offset(b->tokens_off, b->page_size, i));
}

/* Token I's busy word: 1 while its holder is inside a lock call or holds a
 * lock of the region (registry.c, slot revocation). */
static inline uint32_t *token_busy_word(struct bakery *b, unsigned i)
{
	return &token_line(b, i)->busy;
}

/* Can this process hold tokens (64-bit glibc robust-list ABI)?  0 or ENOTSUP. */
BAKERY_HIDDEN int bakery__token_abi_check(uint32_t page_size);
/* In a fork child: the list head the forking thread had noted is not the
 * child's to trust (below). */
BAKERY_HIDDEN void bakery__token_list_forget(void);
/* Take token I unless a live thread holds it: 0 (it was free), EOWNERDEAD
 * (its holder died: the caller alone owns the recovery), EBUSY (held), or an
 * error from mapping the window (ENOMEM...).  On 0/EOWNERDEAD, H holds it. */
BAKERY_HIDDEN int bakery__token_try(struct bakery *b, unsigned i, struct token_hold *h);
/* bakery__token_try, waiting while it is held, until UNTIL on CLOCK
 * (CLOCK_MONOTONIC or CLOCK_REALTIME): ETIMEDOUT then. */
BAKERY_HIDDEN int bakery__token_wait(struct bakery *b, unsigned i, struct token_hold *h,
                                     clockid_t clock, const struct timespec *until);
/*
 * Is token I's word forged: held by a thread that its holder recorded as
 * one of our PID namespace (struct bakery_shm_token_line), that does not
 * exist, and that the kernel never marked owner-died (it marks the word
 * of every holder that ends before that holder's TID is free)?  False
 * whenever that cannot be known: a holder of another PID namespace, or one
 * that recorded nothing, is presumed alive (stopped, traced or starved).
 */
BAKERY_HIDDEN bool bakery__token_holder_missing(struct bakery *b, unsigned i);
/* Give the token back (free). */
BAKERY_HIDDEN void bakery__token_give(struct token_hold *h);
/* Give it back marked owner-died: the others recover what it stood for. */
BAKERY_HIDDEN void bakery__token_abandon(struct token_hold *h);
/* In a fork child: the window is the parent thread's; drop it. */
BAKERY_HIDDEN void bakery__token_forget(struct token_hold *h);
/* Unmap B's spare windows (the mapping is going away). */
BAKERY_HIDDEN void bakery__token_spares_free(struct bakery *b);

#endif /* BAKERY_TOKEN_H */
