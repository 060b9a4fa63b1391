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
#include <stdlib.h>
#include <string.h>

#include "lock.h"
#include "table.h"
#include "locktable.h"
#include "pass.h"
#include "region.h"
#include "registry.h"
#include "slotwait.h"
#include "wait.h"
#include "bias.h"
#include "futex.h"

#define LIBRARY_DEFAULT_ALGO BAKERY_ALGO_BLACK_WHITE

/* ----------------------------------------------------------- lock table -- */

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

/* May a lock of ALGO be biased?  Only if its algorithm has a doorway that
 * revokes the bias (Lamport, Boulangerie: algo/bias.h). */
static bool bias_algo(enum bakery_algo algo)
{
	return bakery__algo_ops_of(algo)->doorway_biased != NULL;
}

/* Is B's process refused a part in biased locks?  Every taker must be able
 * to revoke a bias, and to have its own fast path fenced by another's
 * revocation: registered for the expedited membarrier (exitfence.c:
 * exits_unfenced says it is, on x86; elsewhere the bias is never granted). */
static bool bias_refused(const struct bakery *b)
{
	return BIAS_POSSIBLE && !b->exits_unfenced;
}

/* The algorithm a new lock of CFG gets: a biased lock's default is
 * Lamport's. */
static enum bakery_algo config_algo(const struct bakery_lock_config *cfg)
{
	unsigned k = cfg->holders ? cfg->holders : 1;

	if (cfg->algo == BAKERY_ALGO_DEFAULT && (cfg->flags & BAKERY_LOCK_BIASED))
		return BAKERY_ALGO_LAMPORT;
	return creation_algo(cfg->algo, k);
}

/* Check a lock configuration: 0, EINVAL or ENOTSUP. */
static int config_check(const struct bakery_lock_config *cfg)
{
	if ((unsigned)cfg->algo >= BAKERY_ALGO_COUNT || cfg->holders > BAKERY_MAX_HOLDERS ||
	    (cfg->flags & ~BAKERY_LOCK_BIASED) || !reserved_zero(cfg->reserved))
		return EINVAL;
	if (cfg->holders > 1 &&
	    !(bakery__algo_ops_of(creation_algo(cfg->algo, cfg->holders))->modes & ALGO_HOLDERS))
		return ENOTSUP;
	/* the bias is for the algorithms bias.pml checks, with one holder */
	if ((cfg->flags & BAKERY_LOCK_BIASED) &&
	    (cfg->holders > 1 || !bias_algo(config_algo(cfg))))
		return ENOTSUP;
	return 0;
}

/* Find NAME (or create it, if CREATE), waiting out an unlink under way;
 * *GEN is the generation of the entry that held it.  Without CREATE, a name
 * removed between the find and the generation check is looked for again
 * and reported ENOENT: never made anew. */
static int entry_get(struct bakery *b, const char *name, const struct bakery_lock_config *cfg,
                     bool create, unsigned *index, uint32_t *gen)
{
	size_t len = strlen(name);
	unsigned k = cfg->holders ? cfg->holders : 1;
	int err;

	for (;;) {
		err = bakery__table_find(b, name, len, index);
		if (err == ENOENT && create)
			err = bakery__table_create(b, name, len, config_algo(cfg), k,
			                           (cfg->flags & BAKERY_LOCK_BIASED) ? BIAS_NONE
			                                                             : BIAS_OFF,
			                           index);
		if (!err && region_lost(b))
			err = region_lost_error(b);
		if (err)
			return err;
		CRASH_POINT("open-found");
		*gen = CMM_LOAD_SHARED(b->locks[*index].gen);
		/* the generation before the name that it vouches for (load->load;
		 * an unlinker moves it on before it frees the entry) */
		cmm_smp_rmb();
		if (gen_settled(*gen) && entry_named(&b->locks[*index], name, len))
			return 0;
		if ((err = bakery__entry_wait_settled(b)))
			return err;
	}
}

/* Find or create the entry; its algorithm, capacity, bias and generation
 * into *HAVE, *HOLDERS, *BIASED, *GEN. */
static int entry_open(struct bakery *b, const char *lock_name, const struct bakery_lock_config *cfg,
                      bool create, unsigned *index, enum bakery_algo *have, unsigned *holders,
                      bool *biased, uint32_t *gen)
{
	int err = entry_get(b, lock_name, cfg, create, index, gen);

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
	*biased = CMM_LOAD_SHARED(b->locks[*index].bias) != BIAS_OFF;
	if (*biased && (*holders > 1 || !bias_algo(*have)))
		return BAKERY_EBADREGION;
	/* asking for a biased lock, this one is not */
	if ((cfg->flags & BAKERY_LOCK_BIASED) && !*biased)
		return BAKERY_EALGO;
	if (*biased && bias_refused(b))
		return ENOTSUP;
	return 0;
}

/* A serial for a new lock handle: 1, 2, ... for the life of the process. */
static uint64_t handle_serial_next(void)
{
	static uint64_t serials;

	return uatomic_add_return(&serials, 1);
}

static int lock_open(bakery_t *b, const char *lock_name, const struct bakery_lock_config *cfg,
                     bool create, bakery_lock_t **out)
{
	struct bakery_lock *l;
	enum bakery_algo have, run;
	unsigned index, holders;
	bool biased;
	uint32_t gen;
	int err;

	if (!b || !out || !cfg || b->closed)
		return EINVAL;
	if ((err = config_check(cfg)))
		return err;
	/* no biased lock made by a process that could not take it (below) */
	if ((cfg->flags & BAKERY_LOCK_BIASED) && bias_refused(b))
		return ENOTSUP;
	if (b->rdonly)
		return EPERM;
	if (region_lost(b))
		return region_lost_error(b);
	err = bakery__name_check(lock_name, BAKERY_LOCK_NAME_MAX);
	if (err)
		return err;
	err = entry_open(b, lock_name, cfg, create, &index, &have, &holders, &biased, &gen);
	if (err)
		return err;
	err = algo_join(have, cfg->algo, &run);
	if (err)
		return err;
	/* a k-holder lock is counted by every participant: a variant that
	 * cannot count would let more than k in */
	if (holders > 1 && !(bakery__algo_ops_of(run)->modes & ALGO_HOLDERS))
		return BAKERY_EBADREGION;
	/* nor may a biased lock be taken by a variant that cannot revoke */
	if (biased && !bias_algo(run))
		return BAKERY_EBADREGION;
	l = calloc(1, sizeof(*l));
	if (!l)
		return ENOMEM;
	bakery__wait_prepare();
	l->b = b;
	l->index = index;
	l->gen = gen;
	l->algo = run;
	l->ops = bakery__algo_ops_of(run);
	l->holders = holders;
	l->biased = biased;
	l->doorway = biased ? l->ops->doorway_biased : l->ops->doorway;
	l->exit = biased ? l->ops->exit_biased : l->ops->exit;
	l->pass_abort = l->ops->pass_abort;
	l->serial = handle_serial_next();
	l->entry = &b->locks[index];
	l->regs = reg_of(b, index, 0);
	l->active = active_of(b, index);
	*out = l;
	return 0;
}

int bakery_lock_open(bakery_t *b, const char *lock_name, enum bakery_algo algo, bakery_lock_t **out)
{
	const struct bakery_lock_config cfg = { .algo = algo };
	int old = cancel_off(), err = lock_open(b, lock_name, &cfg, true, out);

	cancel_restore(old);
	return err;
}

int bakery_lock_open_config(bakery_t *b, const char *lock_name,
                            const struct bakery_lock_config *cfg, bakery_lock_t **out)
{
	int old = cancel_off(), err = lock_open(b, lock_name, cfg, true, out);

	cancel_restore(old);
	return err;
}

/* Open only if it exists: the same path with creation off, so that a lock
 * removed and re-created between a look at the table and the open is never
 * created here (the find and the generation check decide together). */
int bakery_lock_lookup(bakery_t *b, const char *lock_name, enum bakery_algo algo,
                       bakery_lock_t **out)
{
	const struct bakery_lock_config cfg = { .algo = algo };
	int old = cancel_off(), err = lock_open(b, lock_name, &cfg, false, out);

	cancel_restore(old);
	return err;
}

int bakery_lock_holders(bakery_lock_t *l, unsigned *holders)
{
	if (!l || !l->b || !holders)
		return EINVAL;
	if (lock_handle_stale(l))
		return lock_removed(l->b);
	*holders = l->holders;
	return 0;
}

/* (The region is looked at only through a slot of ours in it, which keeps
 * it mapped.  A removed lock is held by nobody: what our registers in its
 * entry say is about the lock that took the entry.) */
bool bakery__lock_held_by_caller(const struct bakery_lock *l)
{
	struct thread_slot *t = bakery__slot_record_busy(l->b);

	return t && !lock_handle_stale(l) &&
	       CMM_LOAD_SHARED(lock_reg(l, t->slot)->stage) == BAKERY_PASS_CRITICAL;
}

int bakery_lock_close(bakery_lock_t *l)
{
	if (!l)
		return EINVAL;
	if (bakery__lock_held_by_caller(l))
		return EBUSY;
	free(l);
	return 0;
}

/* ------------------------------------------------------------ acquiring -- */

static const struct deadline block = { .mode = WAIT_BLOCK };
static const struct deadline never = { .mode = WAIT_NONE };

/* We hold L's entry: L's lock, or the one that took the entry after L's
 * was removed. */
static int held_already(const struct bakery_lock *l)
{
	return lock_handle_stale(l) ? lock_removed(l->b) : EDEADLK;
}

/* Can L be taken (in SHARED mode) at all? */
static int lock_usable(const struct bakery_lock *l, bool shared)
{
	if (!l || !l->b || l->b->closed)
		return EINVAL;
	/* shared mode: only where the algorithm's model allows it, and not
	 * with k holders (a holder's unit is exclusive by definition) */
	if (shared && (l->holders > 1 || !(l->ops->modes & ALGO_SHARED)))
		return ENOTSUP;
	if (region_lost(l->b))
		return region_lost_error(l->b);
	return 0;
}

/* A lock call that did not take the lock: its slot is left (the lock
 * call's pin ends; a slot waiter may get it). */
static __attribute__((cold, noinline)) void lock_call_failed(struct bakery *b)
{
	struct thread_slot *t = bakery__slot_record_busy(b);

	if (t)
		bakery__slot_leave(b, t);
}

/* A place in line not taken yet: nobody seen ahead (no predecessor: slot 0
 * is a slot like any other), not passable.  (pred_number: only once pred
 * names a slot.) */
static inline void passage_new_place(struct passage *p)
{
	p->also = p->also_waiters = NULL;
	p->crowd = 0;
	p->pred = p->pred2 = BAKERY_NO_SLOT;
	p->pass_published = p->pass_phase = false;
}

/* The passages this thread has under way, innermost first (each one's
 * `outer`): a lock call made inside one of them (from bakery_acquire's
 * callback or a signal handler) finds its own here.  On the callers'
 * stacks. */
static __thread const struct passage *tls_in_line __attribute__((tls_model("initial-exec")));

/* The one way to make a passage: slot SELF's in L's lock, every field set
 * (field by field: no zeroing of the whole, and no zero left to name slot
 * 0 where no slot is meant), OUTER the passage it is made inside. */
static inline void passage_init(struct passage *p, struct bakery_lock *l, unsigned self,
                                const struct deadline *dl, bool shared)
{
	p->b = l->b;
	p->lock = l->index;
	p->self = self;
	p->mine = lock_reg(l, self);
	p->active = l->active;
	p->dl = dl;
	p->via = l;
	p->outer = tls_in_line;
	p->shared = shared;
	passage_new_place(p);
}

/* Is REG the place of a passage this call was made inside?  (The innermost
 * passage is the calling one: lock_acquire_in_slot.) */
static bool in_line_already(const struct bakery_shm_reg *reg)
{
	for (const struct passage *i = tls_in_line->outer; i; i = i->outer)
		if (i->mine == reg)
			return true;
	return false;
}

/* The checks of passage P, just made, before its first attempt. */
static int passage_begin(struct bakery_lock *l, struct passage *p)
{
	struct bakery *b = l->b;

	if (caa_unlikely(CMM_LOAD_SHARED(p->mine->stage) != BAKERY_PASS_IDLE)) {
		if (CMM_LOAD_SHARED(p->mine->stage) == BAKERY_PASS_CRITICAL)
			return held_already(l);
		/* in line already: a call made inside our own wait on L
		 * (bakery_acquire's callback, a signal handler), which must
		 * not take a second place with the same registers.  A stage
		 * that no passage of ours left (a corrupted or forged
		 * region) is taken over, as a new place always was. */
		if (in_line_already(p->mine))
			return EDEADLK;
	}
	/* held through another handle of the region: our other slot would
	 * be ahead of this one for ever */
	if (caa_unlikely(bakery__holds_through_other_handle(b, l->index)))
		return held_already(l);
	if (CMM_LOAD_SHARED(l->entry->flags) & LOCK_NOT_RECOVERABLE)
		/* (a removed lock's flags stay in its entry until the next
		 * lock is made there) */
		return lock_handle_stale(l) ? lock_removed(b) : ENOTRECOVERABLE;
	if (caa_unlikely(!CMM_LOAD_SHARED(p->mine->joined)))
		bakery__active_join(p);
	return 0;
}

/* Leave L's critical section, held through our registers MINE in a SHARED
 * or exclusive passage.  The stage first: a holder that dies after this
 * store had left its critical section; its recoverer (lock_recovery.c)
 * clears the ticket the exit did not reach, and marks the lock's owner
 * dead only for stage CRITICAL. */
static void lock_release(struct bakery_lock *l, struct bakery_shm_reg *mine, bool shared)
{
	CMM_STORE_SHARED(mine->stage, BAKERY_PASS_IDLE);
	CRASH_POINT("exit");
	l->exit(l, mine, shared);
}

static void passage_release(struct bakery_lock *l, struct passage *p)
{
	lock_release(l, p->mine, p->shared);
}

/*
 * Has L's entry moved on since L was opened: an unlink under way, or done?
 * Called with our stage just stored: the stage before the generation.
 * Only a compiler barrier here, so that the lock path pays one load: the
 * unlinker's membarrier(2) (lockadmin.c) makes it a full barrier whenever
 * it matters, so that either the unlinker sees our stage (and gives up) or
 * we see its generation (and go no further than this).
 */
static inline bool entry_moved(const struct bakery_lock *l)
{
	cmm_barrier();
	return CMM_LOAD_SHARED(l->entry->gen) != l->gen;
}

/* L's entry moved on before our doorway: wait out an unlink under way
 * (within DL, as for the lock).  0 if the lock is still there (the unlink
 * gave up: try again), else an error. */
static __attribute__((cold)) int entry_settle_after_move(struct bakery_lock *l,
                                                         const struct deadline *dl)
{
	int err = bakery__entry_wait_settled_until(l->b, dl);

	if (err)
		return err;
	if (CMM_LOAD_SHARED(l->entry->gen) != l->gen)
		return BAKERY_EREMOVED;
	return 0;
}

/* Our entry moved on before our doorway (an unlink): not an error the
 * caller sees (entry_settle_after_move sorts it out). */
#define ENTRY_MOVED (-2)

/* One place in line (P's, not taken yet): doorway and wait.  0 when it is
 * our turn; an error; BAKERY_EPASSED when we were passed (pass.c) and must
 * not enter; or ENTRY_MOVED. */
static int passage_attempt(struct bakery_lock *l, struct passage *p)
{
	int err;

	/* a pass of our registers not finished yet (we were passed, or our
	 * slot's previous owner was): none of our stores before it is.  A
	 * plain load: IDLE is our own last store to the word (or a
	 * recoverer's), which no passer can change: passers only take
	 * WAITING. */
	if (caa_unlikely(CMM_LOAD_SHARED(p->mine->pass) != PASS_IDLE) &&
	    (err = bakery__pass_settle(p)))
		return err;
	if (l->ops->prepare) {
		/* It may wait for others (Jayanti: a passage of ours left to
		 * a proxy is completed first).  Once L was removed, such a
		 * passage is one of the lock that took the entry: a call on L
		 * must not wait for that lock's holders (nor, a trylock, be
		 * EBUSY because of them). */
		if (caa_unlikely(lock_handle_stale(l)))
			return ENTRY_MOVED;
		if ((err = l->ops->prepare(p)))
			return err;
	}
	/* The passage's mode before its ticket: the doorway's first store_mb()
	 * orders this store before the ticket's (store->store), so that whoever
	 * reads our ticket and then, after a read barrier, our mode, reads this
	 * passage's mode or a later one (reader_passes in algo/common.h). */
	if (caa_unlikely(CMM_LOAD_SHARED(p->mine->mode) != (p->shared ? REG_SHARED : REG_EXCLUSIVE)))
		CMM_STORE_SHARED(p->mine->mode, p->shared ? REG_SHARED : REG_EXCLUSIVE);
	CMM_STORE_SHARED(p->mine->stage, BAKERY_PASS_DOORWAY);
	if (caa_unlikely(entry_moved(l))) {
		CMM_STORE_SHARED(p->mine->stage, BAKERY_PASS_IDLE);
		return ENTRY_MOVED;
	}
	/* a biased lock's owner: its ticket without the doorway's barriers,
	 * and no wait (algo/bias.h; never passable: never WAITING); anyone
	 * else: the doorway, which in a biased lock revokes the bias */
	if (caa_unlikely(l->biased) && !p->shared && bias_fast_entry(l, p))
		return 0;
	if (caa_unlikely(err = l->doorway(p)))
		return err;
	CMM_STORE_SHARED(p->mine->stage, BAKERY_PASS_WAITING);
	CRASH_POINT("waiting");
	p->pass_phase = true;           /* from now on we may be passed */
	err = l->ops->wait(p);
	/* before entering: make sure we were not passed (WAITING -> IDLE) */
	return bakery__pass_close(p, err);
}

/* The lock call of passage P, in our slot, kept ours meanwhile
 * (slot_enter), or ENTRY_MOVED. */
static inline int acquire_in_line(struct bakery_lock *l, struct passage *p)
{
	uint32_t flags;
	int err = passage_begin(l, p);

	if (err)
		return err;
	/* passed: a new place in line, with the deadline we had */
	while ((err = passage_attempt(l, p)) == BAKERY_EPASSED) {
		int over;

		CMM_STORE_SHARED(p->mine->stage, BAKERY_PASS_IDLE);
		passage_new_place(p);
		if ((over = bakery__wait_over(p->dl))) {
			/* no new place past the deadline (or once told to
			 * stop); the pass is settled now if it is over, else
			 * before our next attempt */
			err = bakery__pass_settle(p);
			err = err ? err : over;
			break;
		}
	}
	if (caa_unlikely(err == ENTRY_MOVED))
		return err;     /* lock_acquire waits for the unlink, then again */
	if (err) {
		CMM_STORE_SHARED(p->mine->stage, BAKERY_PASS_IDLE);
		return err;
	}
	if (region_lost(p->b)) {
		/* what let us in may have been the zero pages the guard put
		 * in place of the region: no exclusion to speak of */
		passage_release(l, p);
		return region_lost_error(p->b);
	}
	/* the algorithm's last step (Jayanti's X) is done: we are the holder */
	CMM_STORE_SHARED(p->mine->stage, BAKERY_PASS_CRITICAL);
	CMM_STORE_SHARED(p->mine->acquisitions, p->mine->acquisitions + 1);
	CRASH_POINT("critical");
	/* the registers that let us in before the flags a recoverer set ahead
	 * of clearing them (load->load; pairs with note_dead_slot in lock_recovery.c) */
	cmm_smp_rmb();
	flags = CMM_LOAD_SHARED(l->entry->flags);
	if (caa_unlikely(flags & LOCK_NOT_RECOVERABLE)) {
		passage_release(l, p);
		return ENOTRECOVERABLE;
	}
	if (caa_unlikely(flags & LOCK_OWNER_DIED)) {
		/* a reader is told too, but cannot repair (bakery_consistent
		 * is EPERM for it): the mark stays for a writer */
		if (!p->shared)
			CMM_STORE_SHARED(p->mine->holder_inconsistent, 1);
		return EOWNERDEAD;
	}
	return 0;
}

/* acquire_in_line in a passage of our slot SELF, noted for the calls made
 * inside it. */
static inline int lock_acquire_in_slot(struct bakery_lock *l, const struct deadline *dl,
                                       bool shared, unsigned self)
{
	struct passage p;
	int err;

	passage_init(&p, l, self, dl, shared);
	tls_in_line = &p;
	/* the note (and the passage it names) before the passage's first
	 * store, and the passage before the note's removal, for a signal
	 * handler of this thread (compiler barriers: one thread, no
	 * reordering by the CPU to see) */
	cmm_barrier();
	err = acquire_in_line(l, &p);
	cmm_barrier();
	/* (removed before an unlink's wait: the next attempt is not one
	 * made inside this one) */
	tls_in_line = p.outer;
	return err;
}

/* (the only cancellation points on this path are in claiming a slot, where
 * bakery__slot_self disables cancellation: waiting makes no cancellable
 * call) */
static int lock_acquire(struct bakery_lock *l, const struct deadline *dl, bool shared)
{
	unsigned self;
	int err = lock_usable(l, shared);

	if (err)
		return err;
	/* our slot, claimed (waiting for one if need be) and kept ours for
	 * this lock call: a slot revoked while we were idle is noticed here */
	err = bakery__slot_enter_until(l->b, dl, &self);
	if (err)
		return dl->slots_told && (err == EBUSY || err == ETIMEDOUT) ? BAKERY_ESLOTS : err;
	while (caa_unlikely((err = lock_acquire_in_slot(l, dl, shared, self)) == ENTRY_MOVED) &&
	       (err = entry_settle_after_move(l, dl)) == 0)
		;
	/* holding the lock (EOWNERDEAD too) keeps the slot ours until the
	 * unlock */
	if (err && err != EOWNERDEAD)
		lock_call_failed(l->b);
	return err;
}

/* A deadline at ABSTIME on CLOCK: 0, or EINVAL (no time, a bad one, or
 * another clock). */
static int deadline_at(clockid_t clock, const struct timespec *abstime, struct deadline *dl)
{
	if (!abstime || abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000L ||
	    (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME))
		return EINVAL;
	*dl = (struct deadline){ .mode = WAIT_DEADLINE, .clock = clock, .at = *abstime };
	return 0;
}

static int clock_acquire(bakery_lock_t *l, clockid_t clock, const struct timespec *abstime,
                         bool shared)
{
	struct deadline dl;
	int err = deadline_at(clock, abstime, &dl);

	return err ? err : lock_acquire(l, &dl, shared);
}

#define ACQUIRE_FLAGS (BAKERY_ACQUIRE_SHARED | BAKERY_ACQUIRE_TRY | BAKERY_ACQUIRE_INTR | \
                       BAKERY_ACQUIRE_ESLOTS)

/* bakery_acquire's options, checked, as a deadline with its reasons to
 * stop (in STOP): 0 or EINVAL. */
static int acquire_opts(const struct bakery_acquire_opts *o, struct deadline *dl,
                        struct wait_stop *stop)
{
	if (!o || (o->flags & ~ACQUIRE_FLAGS) ||
	    (o->interrupted && !(o->flags & BAKERY_ACQUIRE_INTR)))
		return EINVAL;
	for (size_t i = 0; i < sizeof(o->reserved) / sizeof(o->reserved[0]); i++)
		if (o->reserved[i])
			return EINVAL;
	if (o->flags & BAKERY_ACQUIRE_TRY) {
		*dl = never;
		return o->deadline ? EINVAL : 0;
	}
	*dl = block;
	if (o->deadline && deadline_at(o->clock, o->deadline, dl))
		return EINVAL;
	if (o->cancel || (o->flags & BAKERY_ACQUIRE_INTR)) {
		bakery__stop_init(stop, o);
		dl->stop = stop;
	}
	return 0;
}

int bakery_acquire(bakery_lock_t *l, const struct bakery_acquire_opts *opts)
{
	struct deadline dl;
	struct wait_stop stop;
	int err = acquire_opts(opts, &dl, &stop);

	if (err)
		return err;
	dl.slots_told = (opts->flags & BAKERY_ACQUIRE_ESLOTS) != 0;
	return lock_acquire(l, &dl, opts->flags & BAKERY_ACQUIRE_SHARED);
}

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

/*
 * The calling thread's registers in L if it holds L, else NULL.  *REC: its
 * record.  By our own count we may hold nothing of the region (the slot
 * may not even be ours any more): then only registers that say otherwise
 * (written by someone else: a corrupted region) need a look, with the
 * slot pinned meanwhile (*PINNED; the caller ends that with
 * bakery__slot_leave).
 */
static inline struct bakery_shm_reg *held_reg(struct bakery_lock *l, struct thread_slot **rec,
                                              bool *pinned)
{
	struct bakery_shm_reg *r;

	*pinned = false;
	*rec = bakery__slot_record_busy(l->b);
	if (caa_unlikely(!*rec)) {
		/* holding nothing of the region by our count */
		*rec = bakery__slot_pin(l->b);
		if (!*rec)
			return NULL;
		*pinned = true;
	}
	r = lock_reg(l, (*rec)->slot);
	if (caa_likely(CMM_LOAD_SHARED(r->stage) == BAKERY_PASS_CRITICAL))
		return r;
	if (*pinned)
		bakery__slot_leave(l->b, *rec);
	*pinned = false;
	return NULL;
}

/* EPERM, unless the registers that said so were the SIGBUS guard's zero
 * pages (the region was cut short under us). */
static int not_held(struct bakery *b)
{
	return region_lost(b) ? region_lost_error(b) : EPERM;
}

/*
 * After a release that leaves the calling thread out of every lock: if the
 * thread woke a waiter since its last such release (its exit's wake-up, or
 * one of its lock calls'), give its CPU away.  The waiter woken is the next
 * in line, or the one parked behind the ticket before its predecessor's
 * (wait.c), which will be next: it needs a CPU now.  On a machine with more
 * runnable threads than CPUs, a releaser that keeps its CPU takes a new
 * ticket at once and sleeps in line, each hand-over waits for a sleeper to
 * be scheduled, and the CPUs idle between them; one that yields stays out
 * of the line while the woken one runs, and the line stays about as long as
 * the threads that run (docs/performance.md, "Oversubscription").  With
 * nobody else runnable on our CPU the yield returns at once.  No protocol
 * step: a hint to the scheduler, after the passage's last store.
 */
static __attribute__((cold, noinline)) void yield_to_woken(void)
{
	if (bakery__thread_busy_anywhere())
		return;         /* the flag stays for the release that ends it */
	bakery__futex_woke = false;
	bakery__cpu_yield();
}

int bakery_unlock(bakery_lock_t *l)
{
	struct bakery_shm_reg *mine;
	struct thread_slot *rec;
	bool pinned;

	if (!l || !l->b)
		return EINVAL;
	/* our registers in L's entry are another lock's once L was removed */
	if (caa_unlikely(lock_handle_stale(l)))
		return lock_removed(l->b);
	mine = held_reg(l, &rec, &pinned);
	if (!mine)
		return not_held(l->b);
	(void)pinned;   /* the busy_end below ends that too */
	if (caa_unlikely(CMM_LOAD_SHARED(mine->holder_inconsistent))) {
		/* EOWNERDEAD was not followed by bakery_consistent() */
		uatomic_or(&l->entry->flags, LOCK_NOT_RECOVERABLE);
		CMM_STORE_SHARED(mine->holder_inconsistent, 0);
	}
	lock_release(l, mine, CMM_LOAD_SHARED(mine->mode) == REG_SHARED);
	/* a thread waiting for a slot may get ours (slotwait.c) */
	bakery__slot_leave(rec->b, rec);
	if (caa_unlikely(bakery__futex_woke))
		yield_to_woken();
	/* released in our view; the others' may be gone with the region */
	return region_lost(l->b) ? region_lost_error(l->b) : 0;
}

int bakery_consistent(bakery_lock_t *l)
{
	struct bakery_shm_reg *r;
	struct thread_slot *rec;
	bool pinned;
	int err = 0;

	if (!l || !l->b)
		return EINVAL;
	if (lock_handle_stale(l))
		return lock_removed(l->b);
	r = held_reg(l, &rec, &pinned);
	if (!r)
		return not_held(l->b);
	if (!CMM_LOAD_SHARED(r->holder_inconsistent))
		/* a reader told EOWNERDEAD may not repair: it holds the lock
		 * shared, others may be reading beside it */
		err = CMM_LOAD_SHARED(r->mode) == REG_SHARED &&
		      (CMM_LOAD_SHARED(l->entry->flags) & LOCK_OWNER_DIED) ? EPERM : EINVAL;
	else {
		uatomic_and(&l->entry->flags, ~(LOCK_OWNER_DIED | LOCK_UNREPAIRED));
		CMM_STORE_SHARED(r->holder_inconsistent, 0);
	}
	if (pinned)
		bakery__slot_leave(l->b, rec);
	return err;
}
