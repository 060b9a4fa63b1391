/* SPDX-License-Identifier: MIT */
/*
 * locktable.c - the lock table's token, which serialises creating and
 * removing locks, and the settling of entries an unlinker left half-way
 * (the generation protocol is described in lockadmin.c).
 */
#include "config.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>

#include "locktable.h"

/* An honest creator holds the table token for microseconds. */
#define TABLE_WAIT_S 2

/* Does the thread the table token names exist (in our PID namespace)?  A
 * creator that is alive but stopped, or starved of CPU, holds it past
 * TABLE_WAIT_S: a reason to try again, not corruption. */
static bool table_holder_exists(struct bakery *b)
{
	pid_t tid = (pid_t)(CMM_LOAD_SHARED(*token_word(b, TOKEN_TABLE(b))) & FUTEX_TID_MASK);

	return tid > 0 && (kill(tid, 0) == 0 || errno == EPERM);
}

/* Serialise lock-table creation and removal on the table's liveness token. */
int bakery__table_lock(struct bakery *b, struct token_hold *h)
{
	struct timespec until;
	int r;

	/* bounded: a token word naming a thread whose death the kernel never
	 * marked (corrupted or forged) would otherwise block every creator of
	 * a new lock for ever */
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += TABLE_WAIT_S;
	r = bakery__token_wait(b, TOKEN_TABLE(b), h, &until);
	/* r == EOWNERDEAD: a creator died mid-entry; entries turn READY last,
	 * so a half-made one is still FREE and is simply overwritten.  An
	 * unlinker that died left an odd generation: settled here. */
	if (r == 0 || r == EOWNERDEAD) {
		bakery__table_settle(b);
		return 0;
	}
	if (r == ETIMEDOUT && table_holder_exists(b))
		return EAGAIN;
	return r == ENOMEM ? ENOMEM : BAKERY_EBADREGION;
}

/* Step 4 after the commit: registers as a new entry's, and the next even
 * generation.  Idempotent (a settler may redo it).  Nobody else writes
 * these registers now: an acquirer that came after step 2 stops at the
 * generation, before any of them.  Active-set membership is left as it
 * is: an idle member is harmless in any lock, and its owner's view of it
 * (`joined`) stays true. */
void bakery__entry_finish_free(struct bakery *b, unsigned lock)
{
	struct bakery_shm_lock *e = &b->locks[lock];
	/* a slot above the high-water mark never wrote a register: its
	 * lines are zeros already, and left unwritten they cost no memory */
	unsigned bound = slots_bound(b);

	for (unsigned s = 0; s < bound; s++) {
		struct bakery_shm_reg *r = reg_of(b, lock, s);

		CMM_STORE_SHARED(r->number, 0);
		CMM_STORE_SHARED(r->holder_inconsistent, 0);
		CMM_STORE_SHARED(r->acquisitions, 0);
		CMM_STORE_SHARED(r->aborts, 0);
	}
	CRASH_POINT("unlink-clear");
	/* the cleared registers before the generation a creator waits for
	 * (store->store; the creator takes the table token after us) */
	cmm_smp_wmb();
	CMM_STORE_SHARED(e->gen, (CMM_LOAD_SHARED(e->gen) | 1u) + 1u);
}

void bakery__table_settle(struct bakery *b)
{
	for (unsigned i = 0; i < b->nlocks; i++) {
		struct bakery_shm_lock *e = &b->locks[i];
		uint32_t gen = CMM_LOAD_SHARED(e->gen);

		if (gen_settled(gen))
			continue;
		if (CMM_LOAD_SHARED(e->state) == LOCK_READY)
			CMM_STORE_SHARED(e->gen, gen - 1);      /* undone: the lock stays */
		else
			bakery__entry_finish_free(b, i);        /* committed: finish */
	}
}

int bakery__entry_wait_settled(struct bakery *b)
{
	struct token_hold h;
	int err = bakery__table_lock(b, &h);

	if (err)
		return err;
	bakery__token_give(&h);
	return 0;
}

