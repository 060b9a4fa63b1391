/*
 * internal.h - shared-memory layout and the interfaces between the library's
 * parts.  Never installed.
 *
 * Region layout (every offset and size is recomputed from nslots/nlocks by
 * layout_compute() and compared with the header before anything is trusted):
 *
 *   header              one page
 *   slot table          nslots x struct bakery_shm_slot   (one cache line pair each)
 *   lock table          nlocks x struct bakery_shm_lock
 *   active sets         nlocks x active_words(nslots) x uint64_t, each lock's set
 *                       padded to a cache line
 *   registers           nlocks x nslots x struct bakery_shm_reg, one cache line each:
 *                       registers of slot s in lock l have one writer, s's owner
 *                       (or, after its death, the one recoverer)
 *   token pages         the liveness words of the slots and of the lock table,
 *                       TOKENS_PER_PAGE to a page, in the page's last bytes
 *                       (token.c says why)
 *
 * Shared memory holds indices, never pointers.
 */
#ifndef BAKERY_INTERNAL_H
#define BAKERY_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <urcu/arch.h>
#include <urcu/compiler.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#include "bakery.h"

#define BAKERY_HIDDEN __attribute__((visibility("hidden")))

#define CACHE_LINE 64

/* "BAKERY" + 0x00 + layout version byte: a build of another layout refuses to
 * attach instead of misreading (LMDB's format word does the same). */
#define BAKERY_MAGIC        UINT64_C(0x42414b4552590001)
#define BAKERY_LAYOUT_VERSION 2u

/* ------------------------------------------------------------- barriers -- */

/*
 * store_mb(p, v): store v to the register *p, then a full barrier: the
 * store->load points of the papers (a register write followed by reads of
 * the others' registers, the reordering x86-64 does perform).  One locked
 * exchange does both: uatomic_xchg implies a full barrier before and after,
 * which also orders every earlier load and store before the store.  It is
 * cheaper than a plain store and cmm_smp_mb() (mfence) on x86-64.
 * The mutant build (BAKERY_NO_BARRIERS, `make check-mutants`) makes it a
 * plain store, to show the stress test catches the missing barriers.
 */
#ifdef BAKERY_NO_BARRIERS
#define store_mb(p, v) CMM_STORE_SHARED(*(p), (v))
#else
#define store_mb(p, v) ((void)uatomic_xchg((p), (v)))
#endif

/*
 * bakery_release(): orders every load and store of the critical section
 * before the store that follows (the register write that lets the next
 * holder in).  liburcu 0.13 has no release store; on x86 (TSO) loads and
 * stores are never reordered with a later store, so a compiler barrier is
 * enough there, and a full barrier everywhere else.
 */
#if defined(__x86_64__) || defined(__i386__) || defined(BAKERY_NO_BARRIERS)
#define bakery_release() cmm_barrier()
#else
#define bakery_release() cmm_smp_mb()
#endif

/* --------------------------------------------------------- shm structs -- */

enum init_state {
	REGION_CREATING = 0,       /* never seen by openers: the region is linked in ready */
	REGION_READY    = 0x52454459u,
};

struct bakery_shm_header {
	uint64_t magic;
	uint32_t version;
	uint32_t init_state;
	uint32_t header_size, slot_size, lock_size, reg_size;
	uint32_t nslots, nlocks;
	uint32_t active_words;     /* uint64_t words per lock's active set, padded */
	uint32_t page_size;        /* of the token pages: the creator's page size */
	uint64_t slots_off, locks_off, active_off, regs_off, tokens_off, total_size;
	/* identity, display only */
	int32_t  creator_pid;
	uint32_t creator_uid;
	uint64_t created_ns;
	uint64_t layout_check;     /* hash of the fields above: catches a torn or forged header */
	/* mutable, shared */
	uint32_t slots_hwm __attribute__((aligned(CACHE_LINE)));
	                           /* 1 + highest slot index ever claimed: bounds every scan */
};

enum slot_state {
	SLOT_FREE = 0,
	SLOT_ACTIVE = 1,
	SLOT_RECOVERING = 2,       /* owner gone; a Jayanti proxy passage is still pending */
};

/* A slot's liveness token is token word number `slot` (token.c); the owner
 * thread holds it for as long as it owns the slot. */
struct bakery_shm_slot {
	uint32_t state;            /* enum slot_state                         */
	uint32_t gen;              /* bumped at every claim                   */
	int32_t  pid, tid;         /* display only (PIDs are reused)          */
	uint64_t start_time;       /* display only                            */
} __attribute__((aligned(CACHE_LINE)));

enum lock_entry_state {
	LOCK_FREE = 0,
	LOCK_READY = 0x4c4f434bu,
};

/* lock flags */
#define LOCK_OWNER_DIED       0x1u
#define LOCK_NOT_RECOVERABLE  0x2u

struct bakery_shm_lock {
	uint32_t state;            /* enum lock_entry_state */
	uint32_t algo;             /* enum bakery_algo of the creator */
	char     name[BAKERY_LOCK_NAME_MAX + 1];
	/* Algorithm-wide registers, each on its own line: written on every
	 * passage, they should not drag the flags along. */
	uint32_t bw_color __attribute__((aligned(CACHE_LINE)));  /* Black-White `color`  */
	uint32_t bw_waiters;       /* threads asleep on bw_color */
	uint32_t jay_x    __attribute__((aligned(CACHE_LINE)));  /* Jayanti `X`          */
	uint32_t flags    __attribute__((aligned(CACHE_LINE)));  /* LOCK_OWNER_DIED ...  */
	uint32_t reserved;         /* keeps the counters 8-byte aligned */
	uint64_t recoveries, owner_deaths;
};

/* Stage of a slot in one lock (enum bakery_pass_state values). */
struct bakery_shm_reg {
	uint32_t choosing;         /* Lamport choosing / Jayanti gettoken       */
	uint32_t seq;              /* futex word: bumped after every register change */
	uint64_t number;           /* ticket; Black-White packs colour in bit 63;
	                              Jayanti stores token + 1 (0 = token -1)    */
	uint32_t stage;            /* enum bakery_pass_state                    */
	uint32_t waiters;          /* threads asleep on seq                     */
	uint32_t joined;           /* in this lock's active set                 */
	uint32_t holder_inconsistent; /* holder got EOWNERDEAD, not yet consistent */
	uint64_t proxy;            /* Jayanti proxy completion state            */
	uint64_t acquisitions;
	uint64_t aborts;
} __attribute__((aligned(CACHE_LINE)));

/* ------------------------------------------------------------- layout -- */

struct layout {
	uint32_t nslots, nlocks, active_words, page_size;
	uint64_t slots_off, locks_off, active_off, regs_off, tokens_off, total_size;
};

/*
 * Token words: one per slot, then TOKEN_TABLE (the lock table's), each in the
 * last TOKEN_TAIL bytes of a token page, 8 bytes apart.  A holder's
 * robust-list node lies futex_offset bytes past its word, on the next page of
 * its private window (token.c).
 */
#define TOKENS_PER_PAGE 3u
#define TOKEN_SPARE_WINDOWS 4u
#define TOKEN_TAIL (8u * TOKENS_PER_PAGE)
#define token_count(nslots) ((nslots) + 1u)

static inline uint64_t token_offset(uint64_t tokens_off, uint32_t page, unsigned i)
{
	return tokens_off + (uint64_t)(i / TOKENS_PER_PAGE) * page + page - TOKEN_TAIL +
	       8u * (i % TOKENS_PER_PAGE);
}

BAKERY_HIDDEN int layout_compute(unsigned nslots, unsigned nlocks, struct layout *out);
BAKERY_HIDDEN uint64_t layout_hash(const struct bakery_shm_header *h);

/* --------------------------------------------------- process-local side -- */

struct bakery {
	/* validated copies: after open nothing below is re-read from the region */
	unsigned char *base;
	size_t size;
	unsigned nslots, nlocks, active_words;
	struct bakery_shm_header *hdr;
	struct bakery_shm_slot *slots;
	struct bakery_shm_lock *locks;
	uint64_t *active;
	struct bakery_shm_reg *regs;
	uint64_t tokens_off;
	uint32_t page_size;
	int fd;
	/* set by the SIGBUS guard when the object was cut short under us:
	 * from then on every call answers BAKERY_EBADREGION */
	int lost;
	struct guard *guard;
	/* lifetime: one reference for the user's handle, one per thread slot */
	unsigned long refs;
	int closed;
	/* token windows given back, kept for the next take (token.c) */
	pthread_mutex_t spare_lock;
	unsigned char *spare_win[TOKEN_SPARE_WINDOWS];
	unsigned nspare;
	/* this process's threads' slots in the region (bakery_close's EBUSY) */
	pthread_mutex_t recs_lock;
	struct thread_slot *recs;
	struct bakery *next;       /* all mappings of the process (for fork) */
	char name[BAKERY_REGION_NAME_MAX + 2];
};

struct bakery_lock {
	struct bakery *b;
	unsigned index;
	enum bakery_algo algo;     /* the variant this handle runs */
	const struct algo_ops *ops;
};

static inline struct bakery_shm_reg *reg_of(struct bakery *b, unsigned lock, unsigned slot)
{
	return &b->regs[(size_t)lock * b->nslots + slot];
}

static inline uint64_t *active_of(struct bakery *b, unsigned lock)
{
	return &b->active[(size_t)lock * b->active_words];
}

/* The slots that may matter now: claims take the lowest free index first, so
 * this stays near the number of threads in use, whatever the capacity. */
static inline unsigned slots_bound(struct bakery *b)
{
	unsigned hwm = CMM_LOAD_SHARED(b->hdr->slots_hwm);
	return hwm < b->nslots ? hwm : b->nslots;   /* never trust the region */
}

/* ------------------------------------------------------------- regions -- */

BAKERY_HIDDEN int name_check(const char *name, size_t max);

/* Has the object been cut short under this process (guard.c)? */
static inline bool region_lost(struct bakery *b)
{
	return caa_unlikely(CMM_LOAD_SHARED(b->lost));
}

/* --------------------------------------------------------------- tokens -- */

/*
 * A liveness token is a robust-futex word (TID | FUTEX_WAITERS |
 * FUTEX_OWNER_DIED, the kernel's robust-futex ABI) that a thread holds for as
 * long as it owns what the token stands for.  The kernel marks it
 * FUTEX_OWNER_DIED, and wakes a waiter, when the holder ends without giving
 * it back.  token.c.
 */
#define TOKEN_TABLE(b) ((b)->nslots)

struct token_hold {
	struct bakery *b;
	uint32_t *word;            /* the word, seen through the window */
	unsigned char *win;        /* the word's shared page, then a private one */
	struct guard *guard;
};

static inline uint32_t *token_word(struct bakery *b, unsigned i)
{
	return (uint32_t *)(b->base + token_offset(b->tokens_off, b->page_size, i));
}

/* Can this process hold tokens (64-bit glibc robust-list ABI)?  0 or ENOTSUP. */
BAKERY_HIDDEN int token_abi_check(uint32_t page_size);
/* Take token I unless a live thread holds it: 0 (it was free), EOWNERDEAD
 * (its holder died: the caller alone owns the recovery), EBUSY (held), or an
 * error from mapping the window (ENOMEM...).  On 0/EOWNERDEAD, H holds it. */
BAKERY_HIDDEN int token_try(struct bakery *b, unsigned i, struct token_hold *h);
/* token_try, waiting while it is held, until UNTIL (CLOCK_MONOTONIC):
 * ETIMEDOUT then. */
BAKERY_HIDDEN int token_wait(struct bakery *b, unsigned i, struct token_hold *h,
                             const struct timespec *until);
/* Give the token back (free). */
BAKERY_HIDDEN void token_give(struct token_hold *h);
/* Give it back marked owner-died: the others recover what it stood for. */
BAKERY_HIDDEN void token_abandon(struct token_hold *h);
/* In a fork child: the window is the parent thread's; drop it. */
BAKERY_HIDDEN void token_forget(struct token_hold *h);
/* Unmap B's spare windows (the mapping is going away). */
BAKERY_HIDDEN void token_spares_free(struct bakery *b);

/* ---------------------------------------------------------------- guard -- */

/*
 * A shared mapping of an object another process cut short (ftruncate) raises
 * SIGBUS on any access past the new end.  guard_add() watches [base,
 * base + len): such a SIGBUS is answered by replacing the whole range with
 * private zero-filled pages (the access is then retried and reads zeros) and
 * setting *lost to 1, which the library checks to answer BAKERY_EBADREGION.
 * SIGBUS outside every watched range goes to the handler installed before
 * ours, or kills the process as it would have.  guard.c.
 */
struct guard;
BAKERY_HIDDEN int guard_add(void *base, size_t len, int *lost, struct guard **out);
BAKERY_HIDDEN void guard_remove(struct guard *g);

/* ------------------------------------------------------------ registry -- */

/* A thread's slot in one region (thread-local records). */
struct thread_slot {
	struct bakery *b;
	unsigned slot;
	struct token_hold token;        /* the slot's token, held */
	struct thread_slot *next;       /* the thread's records */
	struct thread_slot *mnext;      /* the mapping's records (recs_lock) */
	uint32_t exited_tid;            /* an orphan's thread (registry.c) */
};

/* This thread's slot in B, claimed on first use. */
BAKERY_HIDDEN int slot_self(struct bakery *b, unsigned *slot);
/* This thread's slot in B if it has one (no claim): 0 or ENOENT. */
BAKERY_HIDDEN int slot_self_peek(struct bakery *b, unsigned *slot);
/* Does the calling thread hold LOCK of B through another handle of the same
 * region (another slot of its own)? */
BAKERY_HIDDEN bool bakery__holds_through_other_handle(struct bakery *b, unsigned lock);
/* Release the calling thread's slot of B (bakery_close). */
BAKERY_HIDDEN void slot_release_self(struct bakery *b);
/* Does any thread of this process hold a lock of B? */
BAKERY_HIDDEN bool mapping_holds_lock(struct bakery *b);

enum liveness { SLOT_ALIVE, SLOT_GONE };
/* Is the owner of SLOT alive?  A proven death is recovered on the spot, so
 * SLOT_GONE means the slot's registers have been cleared. */
BAKERY_HIDDEN enum liveness slot_check(struct bakery *b, unsigned slot);
/* Reap every dead slot and drive pending proxy passages (HELPER: the
 * caller's slot, or UINT_MAX); returns how many slots were freed. */
BAKERY_HIDDEN unsigned registry_reap(struct bakery *b, unsigned helper);
/* The futex word of slot's liveness token (for futex_waitv). */
static inline uint32_t *slot_token_word(struct bakery *b, unsigned slot)
{
	return token_word(b, slot);
}
BAKERY_HIDDEN void registry_atfork_child(void);
BAKERY_HIDDEN void mapping_register(struct bakery *b);
BAKERY_HIDDEN void mapping_unregister(struct bakery *b);
BAKERY_HIDDEN void mapping_put(struct bakery *b);
BAKERY_HIDDEN int slot_is_recovering(struct bakery *b, unsigned slot);
BAKERY_HIDDEN void slot_settle(struct bakery *b, unsigned slot);
BAKERY_HIDDEN void region_destroy(struct bakery *b);

/* ---------------------------------------------------------- cancellation -- */

/* The entry points that use the C library's cancellation points (open,
 * close, fopen, pread...) run with cancellation disabled, so a thread is
 * never cancelled half-way through them (a flock, a descriptor or a slot
 * left behind); a pending cancellation acts at the caller's next
 * cancellation point, as around pthread_mutex_lock. */
static inline int cancel_off(void)
{
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static inline void cancel_restore(int old)
{
	pthread_setcancelstate(old, NULL);
}

/* ----------------------------------------------------------------- wait -- */

static inline int ts_cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	return (a->tv_nsec > b->tv_nsec) - (a->tv_nsec < b->tv_nsec);
}

enum wait_mode { WAIT_BLOCK, WAIT_NONE, WAIT_DEADLINE };

struct deadline {
	enum wait_mode mode;
	clockid_t clock;
	struct timespec at;
};

/* A condition on another slot's registers, re-evaluated on every wake-up. */
typedef bool (*await_fn)(struct bakery *b, unsigned lock, unsigned j, void *arg);

struct passage;
/*
 * Wait until cond(j) holds.  0 when it holds; EBUSY (WAIT_NONE) or ETIMEDOUT
 * when giving up.  If j's owner dies meanwhile, its slot is recovered here and
 * cond is evaluated again on the cleared registers.  Wakes on a change of j's
 * registers, on the death of j's owner, and on a change of p->also.
 */
BAKERY_HIDDEN int await_slot(struct passage *p, unsigned j, await_fn cond, void *arg);
/*
 * Wait for j to leave its doorway (choosing = 0).  The doorway is wait-free
 * and short, so even a trylock spins for it briefly before giving up: a
 * trylock that failed on every doorway in progress would livelock a storm of
 * trylocks (each one's doorway failing all the others).
 */
BAKERY_HIDDEN int await_doorway(struct passage *p, unsigned j, await_fn cond);

/*
 * reg_signal: after a register change made with store_mb(), wake the
 * threads asleep on REG, if any registered before that barrier.  The futex
 * word `seq` is bumped only then: a waiter reads seq before raising the
 * waiter count and re-reads the registers after a barrier, so either we see
 * its count (and bump seq, which fails its futex wait or wakes it) or it sees
 * our change.  An uncontended release makes no system call and no extra
 * atomic operation.
 * reg_publish: the same after plain stores (slow paths: recovery, proxy).
 */
BAKERY_HIDDEN void reg_signal(struct bakery_shm_reg *reg);
BAKERY_HIDDEN void reg_publish(struct bakery_shm_reg *reg);
BAKERY_HIDDEN void futex_wake_all(uint32_t *word);

/* ---------------------------------------------------------- algorithms -- */

struct passage {
	struct bakery *b;
	unsigned lock;
	unsigned self;             /* our slot index */
	struct bakery_shm_reg *mine;
	const struct deadline *dl;
	/* a lock-wide futex word the conditions also depend on, or NULL */
	uint32_t *also, *also_waiters;
	/* others holding a ticket when our doorway read them (wait.c: how
	 * long to spin) */
	unsigned crowd;
};

struct algo_ops {
	enum bakery_algo id;
	const char *name;
	/* Take a place in line; never blocks. */
	void (*doorway)(struct passage *p);
	/* Wait for our turn: 0, or EBUSY/ETIMEDOUT after leaving the protocol
	 * cleanly (the algorithm's abort). */
	int (*wait)(struct passage *p);
	/* Leave the critical section. */
	void (*exit)(struct passage *p);
	/* Clear dead SLOT's part in LOCK; the caller owns the slot's recovery.
	 * Returns the number of passages left to complete by proxy (Jayanti). */
	unsigned (*recover)(struct bakery *b, unsigned lock, unsigned slot);
	/* Drive a pending proxy passage of SLOT in LOCK without blocking;
	 * true when none is left.  HELPER is the caller's own slot. */
	bool (*settle)(struct bakery *b, unsigned lock, unsigned slot, unsigned helper);
	/* Before a new doorway: finish what a previous passage of ours left
	 * (Jayanti's aborted passage).  0, EBUSY or ETIMEDOUT.  May be NULL. */
	int (*prepare)(struct passage *p);
};

BAKERY_HIDDEN const struct algo_ops *algo_ops_of(enum bakery_algo algo);
BAKERY_HIDDEN extern const struct algo_ops algo_lamport, algo_boulangerie,
	algo_black_white, algo_jayanti;

/*
 * A walk over a lock's active set: the getset() of the papers.  Each word of
 * the set is read once and the members still to visit stay in a register.
 * Reading the set word by word is a correct getset(): a slot that joined
 * before the walk started is seen (its word is read after that), and a slot
 * leaves only once its registers are clear, so missing a leaver is harmless.
 */
struct active_walk {
	const uint64_t *set;
	uint64_t bits;             /* members of word w not visited yet */
	unsigned w, words, bound, self;
};

/* Word W of the set, without our own bit. */
static inline uint64_t active_word(const struct active_walk *it, unsigned w)
{
	uint64_t bits = CMM_LOAD_SHARED(it->set[w]);

	if (w == it->self / 64)
		bits &= ~(UINT64_C(1) << (it->self % 64));
	return bits;
}

static inline struct active_walk active_walk_start(const struct passage *p)
{
	struct active_walk it = {
		.set = active_of(p->b, p->lock),
		.bound = slots_bound(p->b),
		.self = p->self,
	};

	it.words = (it.bound + 63) / 64;
	if (it.words)
		it.bits = active_word(&it, 0);
	return it;
}

/* The next member (not us) below the bound into *J; false at the end. */
static inline bool active_walk_next(struct active_walk *it, unsigned *j)
{
	while (!it->bits) {
		if (++it->w >= it->words)
			return false;
		it->bits = active_word(it, it->w);
	}
	*j = it->w * 64 + (unsigned)__builtin_ctzll(it->bits);
	it->bits &= it->bits - 1;
	return *j < it->bound;
}

/* for (each slot j of the lock's active set, j != self).  WALK names the
 * walk's state.  `break` leaves the whole walk: the outer loop runs once. */
#define for_each_other(p, j, walk)                                           \
	for (struct active_walk walk = active_walk_start(p); walk.set;          \
	     walk.set = NULL)                                                   \
		for (unsigned j = 0; active_walk_next(&walk, &j);)

/* Join LOCK's active set (once per slot ownership). */
BAKERY_HIDDEN void active_join(struct passage *p);
BAKERY_HIDDEN void active_leave(struct bakery *b, unsigned lock, unsigned slot);

/* Owner-died bookkeeping shared by all algorithms (lock.c). */
BAKERY_HIDDEN void lock_note_dead_slot(struct bakery *b, unsigned lock, unsigned slot);

/* ---------------------------------------------------------- test hooks -- */

/*
 * Crash points: in the test build (BAKERY_TESTING) the process SIGKILLs itself
 * when the environment variable BAKERY_CRASH_AT names this point (optionally
 * "name:N" to crash at the N-th passage there).  Compiled out otherwise.
 */
#ifdef BAKERY_TESTING
BAKERY_HIDDEN void crash_point(const char *name);
#define CRASH_POINT(name) crash_point(name)
#define BAKERY_ASSERT(cond) do { if (!(cond)) bakery_assert_fail(#cond, __FILE__, __LINE__); } while (0)
BAKERY_HIDDEN void bakery_assert_fail(const char *what, const char *file, int line);
#else
#define CRASH_POINT(name) do { } while (0)
#define BAKERY_ASSERT(cond) do { } while (0)
#endif

#endif /* BAKERY_INTERNAL_H */
