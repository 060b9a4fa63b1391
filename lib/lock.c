/* SPDX-License-Identifier: MIT */
/*
 * lock.c - the named-lock table, the public lock calls and the owner-died
 * state machine.  Algorithm-agnostic: the algorithm steps are behind
 * struct algo_ops (lib/algo/).
 *
 * Owner-died, as for a robust pthread mutex: the recoverer of a slot that
 * died inside the critical section sets LOCK_OWNER_DIED before clearing the
 * slot's registers (lock_recovery.c); whoever acquires next sees the flag
 * and gets EOWNERDEAD.  bakery_consistent() clears it; an unlock without it
 * sets LOCK_NOT_RECOVERABLE for good.
 */
#include "config.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "pass.h"
#include "region.h"
#include "registry.h"

#define LIBRARY_DEFAULT_ALGO BAKERY_ALGO_BLACK_WHITE

/* ----------------------------------------------------------- lock table -- */

/* Does table entry E hold NAME?  The entry's name may be unterminated. */
static bool entry_named(const struct bakery_shm_lock *e, const char *name, size_t len)
{
	return CMM_LOAD_SHARED(e->state) == LOCK_READY &&
	       memcmp(e->name, name, len) == 0 && e->name[len] == '\0';
}

static int table_find(struct bakery *b, const char *name, size_t len, unsigned *index)
{
	for (unsigned i = 0; i < b->nlocks; i++)
		if (entry_named(&b->locks[i], name, len)) {
			cmm_smp_rmb();  /* state READY before the fields it publishes */
			*index = i;
			return 0;
		}
	return ENOENT;
}

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

/* Serialise lock-table creation on the table's liveness token. */
static int table_lock(struct bakery *b, struct token_hold *h)
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
	 * so a half-made one is still FREE and is simply overwritten */
	if (r == 0 || r == EOWNERDEAD)
		return 0;
	if (r == ETIMEDOUT && table_holder_exists(b))
		return EAGAIN;
	return r == ENOMEM ? ENOMEM : BAKERY_EBADREGION;
}

static int table_create(struct bakery *b, const char *name, size_t len,
                        enum bakery_algo algo, unsigned *index)
{
	struct token_hold h;
	int err = table_lock(b, &h);

	if (err)
		return err;
	if (table_find(b, name, len, index) == 0)
		goto out;       /* someone created it meanwhile */
	err = BAKERY_ELOCKS;
	for (unsigned i = 0; i < b->nlocks; i++) {
		struct bakery_shm_lock *e = &b->locks[i];

		if (CMM_LOAD_SHARED(e->state) != LOCK_FREE)
			continue;
		memset(e->name, 0, sizeof(e->name));
		memcpy(e->name, name, len);
		e->algo = algo;
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

/* Can a handle running WANT take part in a lock created with HAVE? */
static int algo_join(enum bakery_algo have, enum bakery_algo want, enum bakery_algo *run)
{
	if (want == BAKERY_ALGO_DEFAULT || want == have) {
		*run = have;
		return 0;
	}
	/* Moses & Patkin, "Mutual exclusion as a matter of priority" (2018),
	 * section 4: any mix of Bakery and Boulangerie is correct */
	if ((have == BAKERY_ALGO_LAMPORT || have == BAKERY_ALGO_BOULANGERIE) &&
	    (want == BAKERY_ALGO_LAMPORT || want == BAKERY_ALGO_BOULANGERIE)) {
		*run = want;
		return 0;
	}
	return BAKERY_EALGO;
}

static int lock_open(bakery_t *b, const char *lock_name, enum bakery_algo algo,
                     bakery_lock_t **out)
{
	struct bakery_lock *l;
	enum bakery_algo have, run;
	unsigned index;
	size_t len;
	int err;

	if (!b || !out || b->closed || (unsigned)algo >= BAKERY_ALGO_COUNT)
		return EINVAL;
	if (b->rdonly)
		return EPERM;
	if (region_lost(b))
		return BAKERY_EBADREGION;
	err = bakery__name_check(lock_name, BAKERY_LOCK_NAME_MAX);
	if (err)
		return err;
	len = strlen(lock_name);
	err = table_find(b, lock_name, len, &index);
	if (err == ENOENT)
		err = table_create(b, lock_name, len,
		                   algo == BAKERY_ALGO_DEFAULT ? LIBRARY_DEFAULT_ALGO : algo, &index);
	if (!err && region_lost(b))
		err = BAKERY_EBADREGION;
	if (err)
		return err;
	have = CMM_LOAD_SHARED(b->locks[index].algo);
	if (have == BAKERY_ALGO_DEFAULT || (unsigned)have >= BAKERY_ALGO_COUNT)
		return BAKERY_EBADREGION;
	err = algo_join(have, algo, &run);
	if (err)
		return err;
	l = calloc(1, sizeof(*l));
	if (!l)
		return ENOMEM;
	l->b = b;
	l->index = index;
	l->algo = run;
	l->ops = bakery__algo_ops_of(run);
	*out = l;
	return 0;
}

int bakery_lock_open(bakery_t *b, const char *lock_name, enum bakery_algo algo, bakery_lock_t **out)
{
	int old = cancel_off(), err = lock_open(b, lock_name, algo, out);

	cancel_restore(old);
	return err;
}

int bakery_lock_close(bakery_lock_t *l)
{
	unsigned self;

	if (!l)
		return EINVAL;
	if (bakery__slot_self_peek(l->b, &self) == 0 &&
	    CMM_LOAD_SHARED(reg_of(l->b, l->index, self)->stage) == BAKERY_PASS_CRITICAL)
		return EBUSY;
	free(l);
	return 0;
}

/* ------------------------------------------------------------ acquiring -- */

static int passage_begin(struct bakery_lock *l, const struct deadline *dl, struct passage *p)
{
	struct bakery *b;
	int err;

	if (!l || !l->b || l->b->closed)
		return EINVAL;
	b = l->b;
	if (region_lost(b))
		return BAKERY_EBADREGION;
	err = bakery__slot_self(b, &p->self);
	if (err)
		return err;
	p->b = b;
	p->lock = l->index;
	p->mine = reg_of(b, l->index, p->self);
	p->dl = dl;
	if (CMM_LOAD_SHARED(p->mine->stage) == BAKERY_PASS_CRITICAL)
		return EDEADLK;
	/* held through another handle of the region: our other slot would
	 * be ahead of this one for ever */
	if (caa_unlikely(bakery__holds_through_other_handle(b, l->index)))
		return EDEADLK;
	if (CMM_LOAD_SHARED(b->locks[l->index].flags) & LOCK_NOT_RECOVERABLE)
		return ENOTRECOVERABLE;
	if (caa_unlikely(!CMM_LOAD_SHARED(p->mine->joined)))
		bakery__active_join(p);
	return 0;
}

static void passage_release(struct bakery_lock *l, struct passage *p)
{
	CMM_STORE_SHARED(p->mine->stage, BAKERY_PASS_IDLE);
	CRASH_POINT("exit");
	l->ops->exit(p);
}

/* One place in line: doorway and wait.  0 when it is our turn; an error;
 * or BAKERY_EPASSED when we were passed (pass.c) and must not enter. */
static int passage_attempt(struct bakery_lock *l, struct passage *p)
{
	int err;

	p->also = p->also_waiters = NULL;
	p->crowd = 0;
	p->pred = BAKERY_NO_SLOT;
	p->pass_published = false;
	/* a pass of our registers not finished yet (we were passed, or our
	 * slot's previous owner was): none of our stores before it is.  A
	 * plain load: IDLE is our own last store to the word (or a
	 * recoverer's), which no passer can change: passers only take
	 * WAITING. */
	if (caa_unlikely(CMM_LOAD_SHARED(p->mine->pass) != PASS_IDLE) &&
	    (err = bakery__pass_settle(p)))
		return err;
	if (l->ops->prepare && (err = l->ops->prepare(p)))
		return err;
	CMM_STORE_SHARED(p->mine->stage, BAKERY_PASS_DOORWAY);
	l->ops->doorway(p);
	CMM_STORE_SHARED(p->mine->stage, BAKERY_PASS_WAITING);
	CRASH_POINT("waiting");
	err = l->ops->wait(p);
	/* before entering: make sure we were not passed (WAITING -> IDLE) */
	return bakery__pass_close(p, err);
}

/* (the only cancellation points on this path are in claiming a slot, where
 * bakery__slot_self disables cancellation: waiting makes no cancellable
 * call) */
static int lock_acquire(struct bakery_lock *l, const struct deadline *dl)
{
	struct passage p;
	uint32_t flags;
	int err = passage_begin(l, dl, &p);

	if (err)
		return err;
	/* passed: a new place in line, with the deadline we had */
	while ((err = passage_attempt(l, &p)) == BAKERY_EPASSED) {
		CMM_STORE_SHARED(p.mine->stage, BAKERY_PASS_IDLE);
		if (dl->mode == WAIT_DEADLINE && bakery__deadline_passed(dl)) {
			/* no new place past the deadline; the pass is settled
			 * now if it is over, else before our next attempt */
			err = bakery__pass_settle(&p);
			err = err ? err : ETIMEDOUT;
			break;
		}
	}
	if (err) {
		CMM_STORE_SHARED(p.mine->stage, BAKERY_PASS_IDLE);
		return err;
	}
	if (region_lost(p.b)) {
		/* what let us in may have been the zero pages the guard put
		 * in place of the region: no exclusion to speak of */
		passage_release(l, &p);
		return BAKERY_EBADREGION;
	}
	/* the algorithm's last step (Jayanti's X) is done: we are the holder */
	CMM_STORE_SHARED(p.mine->stage, BAKERY_PASS_CRITICAL);
	CMM_STORE_SHARED(p.mine->acquisitions, p.mine->acquisitions + 1);
	CRASH_POINT("critical");
	/* the registers that let us in before the flags a recoverer set ahead
	 * of clearing them (load->load; pairs with note_dead_slot in lock_recovery.c) */
	cmm_smp_rmb();
	flags = CMM_LOAD_SHARED(p.b->locks[p.lock].flags);
	if (caa_unlikely(flags & LOCK_NOT_RECOVERABLE)) {
		passage_release(l, &p);
		return ENOTRECOVERABLE;
	}
	if (caa_unlikely(flags & LOCK_OWNER_DIED)) {
		CMM_STORE_SHARED(p.mine->holder_inconsistent, 1);
		return EOWNERDEAD;
	}
	return 0;
}

int bakery_lock(bakery_lock_t *l)
{
	const struct deadline dl = { .mode = WAIT_BLOCK };

	return lock_acquire(l, &dl);
}

int bakery_trylock(bakery_lock_t *l)
{
	const struct deadline dl = { .mode = WAIT_NONE };

	return lock_acquire(l, &dl);
}

int bakery_clocklock(bakery_lock_t *l, clockid_t clock, const struct timespec *abstime)
{
	struct deadline dl = { .mode = WAIT_DEADLINE, .clock = clock };

	if (!abstime || abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000L ||
	    (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME))
		return EINVAL;
	dl.at = *abstime;
	return lock_acquire(l, &dl);
}

int bakery_timedlock(bakery_lock_t *l, const struct timespec *abstime)
{
	return bakery_clocklock(l, CLOCK_REALTIME, abstime);
}

/* ------------------------------------------------------------ releasing -- */

/* The calling thread's registers in L if it holds L, else NULL. */
static struct bakery_shm_reg *held_reg(struct bakery_lock *l, unsigned *self)
{
	struct bakery_shm_reg *r;

	if (bakery__slot_self_peek(l->b, self))
		return NULL;
	r = reg_of(l->b, l->index, *self);
	return CMM_LOAD_SHARED(r->stage) == BAKERY_PASS_CRITICAL ? r : NULL;
}

/* EPERM, unless the registers that said so were the SIGBUS guard's zero
 * pages (the region was cut short under us). */
static int not_held(struct bakery *b)
{
	return region_lost(b) ? BAKERY_EBADREGION : EPERM;
}

int bakery_unlock(bakery_lock_t *l)
{
	struct passage p = { 0 };
	const struct deadline dl = { .mode = WAIT_NONE };

	if (!l || !l->b)
		return EINVAL;
	p.mine = held_reg(l, &p.self);
	if (!p.mine)
		return not_held(l->b);
	p.b = l->b;
	p.lock = l->index;
	p.dl = &dl;
	if (caa_unlikely(CMM_LOAD_SHARED(p.mine->holder_inconsistent))) {
		/* EOWNERDEAD was not followed by bakery_consistent() */
		uatomic_or(&p.b->locks[p.lock].flags, LOCK_NOT_RECOVERABLE);
		CMM_STORE_SHARED(p.mine->holder_inconsistent, 0);
	}
	passage_release(l, &p);
	/* released in our view; the others' may be gone with the region */
	return region_lost(p.b) ? BAKERY_EBADREGION : 0;
}

int bakery_consistent(bakery_lock_t *l)
{
	struct bakery_shm_reg *r;
	unsigned self;

	if (!l || !l->b)
		return EINVAL;
	r = held_reg(l, &self);
	if (!r)
		return not_held(l->b);
	if (!CMM_LOAD_SHARED(r->holder_inconsistent))
		return EINVAL;
	uatomic_and(&l->b->locks[l->index].flags, ~LOCK_OWNER_DIED);
	CMM_STORE_SHARED(r->holder_inconsistent, 0);
	return 0;
}
