/* SPDX-License-Identifier: MIT */
/*
 * locktable.c - the lock table's token, which serialises creating and
 * removing locks, and the settling of entries an unlinker left half-way
 * (the generation protocol is described in lockadmin.c).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "locktable.h"

/*
 * An honest creator or unlinker holds the table token for microseconds (an
 * unlink: one membarrier).  One that holds it longer is stopped, traced or
 * starved of CPU, in our PID namespace or another: the lock calls wait for
 * it (until their deadline), the calls that promise not to block give up
 * after TABLE_WAIT_NS with EAGAIN.  Only a token proven forged (its word
 * names a thread of our namespace that does not exist and never died, or
 * a TID no kernel gives: bakery__token_holder_missing) is
 * BAKERY_EBADREGION: otherwise such a word would block every creator of a
 * new lock for ever.
 */
#define TABLE_WAIT_NS 2000000000L

/* Take the table's token within DL, looking at its holder at least every
 * TABLE_WAIT_NS: bakery__token_try's answers, EBUSY (WAIT_NONE), ETIMEDOUT,
 * ECANCELED or EINTR (bakery__wait_over), BAKERY_EBADREGION (forged, or the
 * region lost). */
static int table_take(struct bakery *b, struct token_hold *h, const struct deadline *dl)
{
	for (;;) {
		struct timespec until;
		clockid_t clock;
		int r;

		/* a token proven forged is neither tried nor waited for (a
		 * load while it is free; kill(2) while someone holds it) */
		if (bakery__token_holder_missing(b, TOKEN_TABLE(b)))
			return BAKERY_EBADREGION;
		if (dl->mode == WAIT_NONE) {
			r = bakery__token_try(b, TOKEN_TABLE(b), h);
		} else {
			/* (shorter for bakery_acquire's cancel word or
			 * callback, which this sleep does not watch) */
			deadline_cap(dl, bakery__stop_cap(dl->stop, false, TABLE_WAIT_NS), &clock,
			             &until);
			r = bakery__token_wait(b, TOKEN_TABLE(b), h, clock, &until);
		}
		if (r != EBUSY && r != ETIMEDOUT)
			return r;
		if ((r = bakery__wait_over(dl)))
			return r;       /* EBUSY, ETIMEDOUT, ECANCELED, EINTR */
	}
}

int bakery__table_lock_until(struct bakery *b, struct token_hold *h, const struct deadline *dl)
{
	int r = table_take(b, h, dl);

	/* r == EOWNERDEAD: a creator died mid-entry; entries turn READY last,
	 * so a half-made one is still FREE and is simply overwritten.  An
	 * unlinker that died left an odd generation: settled here. */
	if (r == 0 || r == EOWNERDEAD) {
		bakery__table_settle(b);
		return 0;
	}
	if (r == EBUSY || r == ETIMEDOUT || r == ENOMEM)
		return r;
	return BAKERY_EBADREGION;
}

/* Serialise lock-table creation and removal on the table's liveness token. */
int bakery__table_lock(struct bakery *b, struct token_hold *h)
{
	struct deadline dl = deadline_in(TABLE_WAIT_NS);
	int r = bakery__table_lock_until(b, h, &dl);

	return r == ETIMEDOUT ? EAGAIN : r;
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
	 * lines are zeros already */
	unsigned bound = slots_bound(b);

	for (unsigned s = 0; s < bound; s++) {
		struct bakery_shm_reg *r = reg_of(b, lock, s);

		CMM_STORE_SHARED(r->number, 0);
		CMM_STORE_SHARED(r->holder_inconsistent, 0);
		CMM_STORE_SHARED(r->acquisitions, 0);
		CMM_STORE_SHARED(r->aborts, 0);
		CMM_STORE_SHARED(r->lone_passages, 0);
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

int bakery__entry_wait_settled_until(struct bakery *b, const struct deadline *dl)
{
	struct token_hold h;
	int err = bakery__table_lock_until(b, &h, dl);

	if (err)
		return err;
	bakery__token_give(&h);
	return 0;
}

int bakery__entry_wait_settled(struct bakery *b)
{
	struct deadline dl = deadline_in(TABLE_WAIT_NS);
	int err = bakery__entry_wait_settled_until(b, &dl);

	return err == ETIMEDOUT ? EAGAIN : err;
}

/* ------------------------------------------------------- find, create -- */

int bakery__table_find(struct bakery *b, const char *name, size_t len, unsigned *index)
{
	for (unsigned i = 0; i < b->nlocks; i++)
		if (entry_named(&b->locks[i], name, len)) {
			cmm_smp_rmb();  /* state READY before the fields it publishes */
			*index = i;
			return 0;
		}
	return ENOENT;
}

int bakery__table_create(struct bakery *b, const char *name, size_t len,
                         enum bakery_algo algo, unsigned holders, uint32_t bias,
                         unsigned *index)
{
	struct token_hold h;
	int err = bakery__table_lock(b, &h);

	if (err)
		return err;
	if (bakery__table_find(b, name, len, index) == 0)
		goto out;       /* someone created it meanwhile */
	err = BAKERY_ELOCKS;
	for (unsigned i = 0; i < b->nlocks; i++) {
		struct bakery_shm_lock *e = &b->locks[i];

		if (CMM_LOAD_SHARED(e->state) != LOCK_FREE)
			continue;
		memset(e->name, 0, sizeof(e->name));
		memcpy(e->name, name, len);
		e->algo = algo;
		e->holders = holders;
		e->exits = e->exit_sleepers = 0;
		e->reader_deaths = 0;
		e->lock_fences = 0;     /* a new lock: nobody has slept in it */
		e->bias = bias;
		e->bias_revocations = 0;
		e->color = 0;
		e->jayanti_x = 0;
		e->flags = 0;
		e->recoveries = e->owner_deaths = e->passes = 0;
		CRASH_POINT("lock-create");
		cmm_smp_wmb();  /* every field before READY publishes them */
		CMM_STORE_SHARED(e->state, LOCK_READY);
		*index = i;
		err = 0;
		break;
	}
out:
	bakery__token_give(&h);
	return err;
}
