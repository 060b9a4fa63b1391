/* SPDX-License-Identifier: MIT */
/*
 * passage.h - struct passage: one attempt of a thread at one lock, as the
 * lock calls (lock.c), the algorithms, the waits (wait.c) and the passing
 * of a stopped waiter (pass.c) all see it.  A header of
 * its own, below all of them: pass.c, which wait.c calls, reads it too.
 */
#ifndef BAKERY_PASSAGE_H
#define BAKERY_PASSAGE_H

#include "deadline.h"
#include "handle.h"

struct passage {
	struct bakery *b;
	unsigned lock;
	unsigned self;             /* our slot index */
	struct bakery_shm_reg *mine;
	uint64_t *active;          /* the lock's active set (the handle's) */
	const struct deadline *dl;
	/* the lock handle it is made through: the lock's capacity k (more
	 * than 1 admits k holders at once), how a passer aborts a passed
	 * waiter's passage (pass.c), and the handle's serial (a trylock's pass
	 * watch belongs to one handle) are read there, not copied: every
	 * store made before the doorway's barrier is one the barrier waits
	 * for */
	const struct bakery_lock *via;
	/* the passage this thread had under way when it started this one (a
	 * lock call made inside a wait: bakery_acquire's callback, a signal
	 * handler), or NULL (lock.c) */
	const struct passage *outer;
	/* a shared (reader) passage: it waits only for exclusive ones ahead */
	bool shared;
	/*
	 * The place in line, from here to pass_phase: set anew for each place
	 * (lock.c, passage_new_place).  pred_number and pred2_number mean
	 * something only while pred and pred2 name a slot, and are set with
	 * them (passage_note_ahead).
	 */
	/* a lock-wide futex word the conditions also depend on, or NULL */
	uint32_t *also, *also_waiters;
	uint64_t pred_number;
	/* others holding a ticket when our doorway read them, all ahead of
	 * ours (wait.c: how long to spin, whether to park) */
	unsigned crowd;
	/* the latest of those tickets (our predecessor in line) and the
	 * ticket register value the doorway read (pred_number, above), or
	 * BAKERY_NO_SLOT; and the latest before it, whose exit makes us the
	 * next in line (BAKERY_NO_SLOT with fewer than two ahead), and the
	 * place of each in line (passage_note_ahead) */
	unsigned pred, pred2;
	/* our pass word says WAITING (pass.h): we may be passed */
	bool pass_published;
	/* in the algorithm's waiting phase (after the doorway, before the
	 * pass word is taken back): only there may we become passable, not
	 * while an algorithm's prepare step drives a passage of ours */
	bool pass_phase;
	uint64_t pred2_number;
	uint64_t pred_rank, pred2_rank;
};

/*
 * Note slot J, ticket register value NUMBER, as a ticket ahead of ours.
 * RANK is its place in line: a later ticket has a larger rank.  Doorways
 * note every ticket ahead, in increasing slot order, so that on a tie of
 * ranks the later slot is the later ticket, as the algorithms order them.
 * Keeps the latest two (wait.c parks behind them).
 */
static inline void passage_note_ahead(struct passage *p, unsigned j, uint64_t number,
                                      uint64_t rank)
{
	if (p->pred == BAKERY_NO_SLOT || rank >= p->pred_rank) {
		p->pred2 = p->pred;
		p->pred2_number = p->pred_number;
		p->pred2_rank = p->pred_rank;
		p->pred = j;
		p->pred_number = number;
		p->pred_rank = rank;
	} else if (p->pred2 == BAKERY_NO_SLOT || rank >= p->pred2_rank) {
		p->pred2 = j;
		p->pred2_number = number;
		p->pred2_rank = rank;
	}
}

#endif /* BAKERY_PASSAGE_H */
