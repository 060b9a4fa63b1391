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
                        enum bakery_algo algo, unsigned holders, unsigned *index)
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
		e->holders = holders;
		e->exits = e->exit_sleepers = 0;
		e->reader_deaths = 0;
		e->color = 0;
		e->jayanti_x = 0;
		e->flags = 0;
		e->recoveries = e->owner_deaths = 0;
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

/* The algorithm a new lock gets: the caller's, or the library's default
 * (Lamport for a lock of k > 1 holders, the default cannot count them). */
static enum bakery_algo creation_algo(enum bakery_algo algo, unsigned holders)
{
	if (algo != BAKERY_ALGO_DEFAULT)
		return algo;
	return holders > 1 ? BAKERY_ALGO_LAMPORT : LIBRARY_DEFAULT_ALGO;
}

/* Check a lock configuration: 0, EINVAL or ENOTSUP. */
static int config_check(const struct bakery_lock_config *cfg)
{
	if ((unsigned)cfg->algo >= BAKERY_ALGO_COUNT || cfg->holders > BAKERY_MAX_HOLDERS)
		return EINVAL;
	for (size_t i = 0; i < sizeof(cfg->reserved) / sizeof(cfg->reserved[0]); i++)
		if (cfg->reserved[i])
			return EINVAL;
	if (cfg->holders > 1 &&
	    !(bakery__algo_ops_of(creation_algo(cfg->algo, cfg->holders))->modes & ALGO_HOLDERS))
		return ENOTSUP;
	return 0;
}

/* Find or create the entry; its algorithm and capacity into *HAVE, *HOLDERS. */
static int entry_open(struct bakery *b, const char *lock_name, const struct bakery_lock_config *cfg,
                      unsigned *index, enum bakery_algo *have, unsigned *holders)
{
	size_t len = strlen(lock_name);
	unsigned k = cfg->holders ? cfg->holders : 1;
	int err = table_find(b, lock_name, len, index);

	if (err == ENOENT)
		err = table_create(b, lock_name, len, creation_algo(cfg->algo, k), k, index);
	if (!err && region_lost(b))
		err = BAKERY_EBADREGION;
	if (err)
		return err;
	*have = CMM_LOAD_SHARED(b->locks[*index].algo);
	*holders = CMM_LOAD_SHARED(b->locks[*index].holders);
	if (*holders == 0)
		*holders = 1;
	if (*have == BAKERY_ALGO_DEFAULT || (unsigned)*have >= BAKERY_ALGO_COUNT ||
	    *holders > BAKERY_MAX_HOLDERS)
		return BAKERY_EBADREGION;
	/* joining asks for a capacity other than the lock's */
	if (cfg->holders && cfg->holders != *holders)
		return BAKERY_EALGO;
	return 0;
}

static int lock_open(bakery_t *b, const char *lock_name, const struct bakery_lock_config *cfg,
                     bakery_lock_t **out)
{
	struct bakery_lock *l;
	enum bakery_algo have, run;
	unsigned index, holders;
	int err;

	if (!b || !out || !cfg || b->closed)
		return EINVAL;
	if ((err = config_check(cfg)))
		return err;
	if (b->rdonly)
		return EPERM;
	if (region_lost(b))
		return BAKERY_EBADREGION;
	err = bakery__name_check(lock_name, BAKERY_LOCK_NAME_MAX);
	if (err)
		return err;
	err = entry_open(b, lock_name, cfg, &index, &have, &holders);
	if (err)
		return err;
	err = algo_join(have, cfg->algo, &run);
	if (err)
		return err;
	/* a k-holder lock is counted by every participant: a variant that
	 * cannot count would let more than k in */
	if (holders > 1 && !(bakery__algo_ops_of(run)->modes & ALGO_HOLDERS))
		return BAKERY_EBADREGION;
	l = calloc(1, sizeof(*l));
	if (!l)
		return ENOMEM;
	l->b = b;
	l->index = index;
	l->algo = run;
	l->ops = bakery__algo_ops_of(run);
	l->holders = holders;
	*out = l;
	return 0;
}

int bakery_lock_open(bakery_t *b, const char *lock_name, enum bakery_algo algo, bakery_lock_t **out)
{
	const struct bakery_lock_config cfg = { .algo = algo };
	int old = cancel_off(), err = lock_open(b, lock_name, &cfg, out);

	cancel_restore(old);
	return err;
}

int bakery_lock_open_config(bakery_t *b, const char *lock_name,
                            const struct bakery_lock_config *cfg, bakery_lock_t **out)
{
	int old = cancel_off(), err = lock_open(b, lock_name, cfg, out);

	cancel_restore(old);
	return err;
}

int bakery_lock_holders(bakery_lock_t *l, unsigned *holders)
{
	if (!l || !holders)
		return EINVAL;
	*holders = l->holders;
	return 0;
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

static int passage_begin(struct bakery_lock *l, const struct deadline *dl, bool shared,
                         struct passage *p)
{
	struct bakery *b;
	int err;

	if (!l || !l->b || l->b->closed)
		return EINVAL;
	/* shared mode: only where the algorithm's model allows it, and not
	 * with k holders (a holder's unit is exclusive by definition) */
	if (shared && (l->holders > 1 || !(l->ops->modes & ALGO_SHARED)))
		return ENOTSUP;
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
	p->also = p->also_waiters = NULL;
	p->crowd = 0;
	p->pred = BAKERY_NO_SLOT;
	p->shared = shared;
	p->holders = l->holders;
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

/* (the only cancellation points on this path are in claiming a slot, where
 * bakery__slot_self disables cancellation: waiting makes no cancellable
 * call) */
static int lock_acquire(struct bakery_lock *l, const struct deadline *dl, bool shared)
{
	struct passage p;
	uint32_t flags;
	int err = passage_begin(l, dl, shared, &p);

	if (err)
		return err;
	if (l->ops->prepare && (err = l->ops->prepare(&p)))
		return err;
	/* The passage's mode before its ticket: the doorway's first store_mb()
	 * orders this store before the ticket's (store->store), so that whoever
	 * reads our ticket and then, after a read barrier, our mode, reads this
	 * passage's mode or a later one (wait_shared_ok in algo/common.c). */
	if (caa_unlikely(CMM_LOAD_SHARED(p.mine->mode) != (shared ? REG_SHARED : REG_EXCLUSIVE)))
		CMM_STORE_SHARED(p.mine->mode, shared ? REG_SHARED : REG_EXCLUSIVE);
	CMM_STORE_SHARED(p.mine->stage, BAKERY_PASS_DOORWAY);
	l->ops->doorway(&p);
	CMM_STORE_SHARED(p.mine->stage, BAKERY_PASS_WAITING);
	CRASH_POINT("waiting");
	err = l->ops->wait(&p);
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
		/* a reader is told too, but cannot repair (bakery_consistent
		 * is EPERM for it): the mark stays for a writer */
		if (!shared)
			CMM_STORE_SHARED(p.mine->holder_inconsistent, 1);
		return EOWNERDEAD;
	}
	return 0;
}

static int clock_acquire(bakery_lock_t *l, clockid_t clock, const struct timespec *abstime,
                         bool shared)
{
	struct deadline dl = { .mode = WAIT_DEADLINE, .clock = clock };

	if (!abstime || abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000L ||
	    (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME))
		return EINVAL;
	dl.at = *abstime;
	return lock_acquire(l, &dl, shared);
}

static const struct deadline block = { .mode = WAIT_BLOCK };
static const struct deadline never = { .mode = WAIT_NONE };

int bakery_lock(bakery_lock_t *l)
{
	return lock_acquire(l, &block, false);
}

int bakery_trylock(bakery_lock_t *l)
{
	return lock_acquire(l, &never, false);
}

int bakery_clocklock(bakery_lock_t *l, clockid_t clock, const struct timespec *abstime)
{
	return clock_acquire(l, clock, abstime, false);
}

int bakery_timedlock(bakery_lock_t *l, const struct timespec *abstime)
{
	return clock_acquire(l, CLOCK_REALTIME, abstime, false);
}

int bakery_rdlock(bakery_lock_t *l)
{
	return lock_acquire(l, &block, true);
}

int bakery_tryrdlock(bakery_lock_t *l)
{
	return lock_acquire(l, &never, true);
}

int bakery_clockrdlock(bakery_lock_t *l, clockid_t clock, const struct timespec *abstime)
{
	return clock_acquire(l, clock, abstime, true);
}

int bakery_timedrdlock(bakery_lock_t *l, const struct timespec *abstime)
{
	return clock_acquire(l, CLOCK_REALTIME, abstime, true);
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
	p.holders = l->holders;
	p.shared = CMM_LOAD_SHARED(p.mine->mode) == REG_SHARED;
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
		/* a reader told EOWNERDEAD may not repair: it holds the lock
		 * shared, others may be reading beside it */
		return CMM_LOAD_SHARED(r->mode) == REG_SHARED &&
		       (CMM_LOAD_SHARED(l->b->locks[l->index].flags) & LOCK_OWNER_DIED) ? EPERM : EINVAL;
	uatomic_and(&l->b->locks[l->index].flags, ~LOCK_OWNER_DIED);
	CMM_STORE_SHARED(r->holder_inconsistent, 0);
	return 0;
}
