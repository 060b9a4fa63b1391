/* SPDX-License-Identifier: MIT */
/*
 * shm_layout.h - the shared-memory layout: what a region holds, where, and
 * the structures every process maps.  Never installed; white-box tests may
 * include it.
 *
 * Region layout (every offset and size is recomputed from nslots/nlocks by
 * bakery__layout_compute() and compared with the header before anything is trusted):
 *
 *   header              one page
 *   slot table          nslots x struct bakery_shm_slot   (one cache line each)
 *   lock table          nlocks x struct bakery_shm_lock
 *   active sets         nlocks x active_words(nslots) x uint64_t, each lock's set
 *                       padded to a cache line
 *   registers           nlocks x nslots x struct bakery_shm_reg, two cache lines each
 *                       (what waiters poll, then the owner's bookkeeping):
 *                       written by slot s's owner (after its death, by the one
 *                       recoverer); a waiter counts itself in, a passer or a
 *                       Jayanti proxy finisher ends s's passage
 *   token pages         the liveness words of the slots and of the lock table,
 *                       TOKENS_PER_PAGE to a page, in the page's last bytes
 *                       (token.c says why)
 *
 * Shared memory holds indices, never pointers.
 */
#ifndef BAKERY_SHM_LAYOUT_H
#define BAKERY_SHM_LAYOUT_H

#include "private.h"

#define CACHE_LINE 64

/* The magic: "BAKERY" in its top six bytes names a region (anything else
 * there: BAKERY_EBADREGION); its low two bytes, 0x0001, are fixed, not the
 * layout version.  The layout version is the header's `version` field
 * (BAKERY_LAYOUT_VERSION): a build of another layout, like another value of
 * the low bytes, refuses to attach with BAKERY_EVERSION instead of
 * misreading (region.c, header_validate; LMDB's format word does the same). */
#define BAKERY_MAGIC        UINT64_C(0x42414b4552590001)
#define BAKERY_LAYOUT_VERSION 9u

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
	/* Layout 4: waiting for a free slot (slotwait.c).  In the padding of
	 * slots_hwm's line: the header's size is unchanged. */
	uint32_t slot_frees;       /* futex word: bumped whenever a slot turns FREE */
	uint32_t slot_sleepers;    /* threads waiting for a slot, asleep on
	                              slot_frees or scanning (a dead one stays
	                              counted: slotwait.c says what it costs) */
	uint32_t slot_wanted;      /* CLOCK_MONOTONIC seconds | 1 when a thread last
	                              slept for a slot; 0 once seen stale */
	/* Layout 7: 1 for good once a process that cannot make the
	 * expedited system-wide barrier (membarrier(2) refused) opened the
	 * region: every exit then fences its ticket store (exitfence.h).  0
	 * at creation.  In the same padding. */
	uint32_t exit_fences;
};

enum slot_state {
	SLOT_FREE = 0,
	SLOT_ACTIVE = 1,
	SLOT_RECOVERING = 2,       /* owner gone; a Jayanti proxy passage is still pending */
};

/* A slot's liveness token is the token word the slot names (`token`,
 * token.c); the owner thread holds it for as long as it owns the slot. */
struct bakery_shm_slot {
	uint32_t state;            /* enum slot_state                         */
	uint32_t gen;              /* even; moved on by 2 at every claim; odd while
	                              the slot is being revoked (registry.c)  */
	int32_t  pid, tid;         /* display only (PIDs are reused)          */
	uint64_t start_time;       /* display only                            */
	/* Layout 5: slots reclaimed from idle owners (registry.c).  The token
	 * that stands for the slot now (slot s names token s at creation; a
	 * revocation names a spare), and, while gen is odd, the spare token
	 * its revoker holds (so that the revoker's death is seen). */
	uint32_t token;
	uint32_t revoker;
} __attribute__((aligned(CACHE_LINE)));

enum lock_entry_state {
	LOCK_FREE = 0,
	LOCK_READY = 0x4c4f434bu,
};

/* lock_fences */
#define LOCK_FENCES_SETTING 1u     /* a waiter's membarrier is under way */
#define LOCK_FENCES_SET     2u     /* every exit that skipped its barrier is over */
#define LOCK_FENCES_STALE   3u     /* SET, and nobody has slept since an exit aged it */

/* lock flags */
#define LOCK_OWNER_DIED       0x1u
#define LOCK_NOT_RECOVERABLE  0x2u
#define LOCK_SHARED_SEEN      0x4u   /* test build: a shared passage was taken */
#define LOCK_UNREPAIRED       0x8u   /* with OWNER_DIED: the holder that left it
                                        had been told and did not repair */

struct bakery_shm_lock {
	uint32_t state;            /* enum lock_entry_state */
	uint32_t algo;             /* enum bakery_algo of the creator */
	char     name[BAKERY_LOCK_NAME_MAX + 1];
	/* Algorithm-wide registers, each on its own line: written on every
	 * passage, they should not drag the flags along. */
	uint32_t color     __attribute__((aligned(CACHE_LINE)));  /* Black-White's `color` */
	uint32_t color_sleepers;   /* threads asleep on color */
	uint32_t jayanti_x __attribute__((aligned(CACHE_LINE)));  /* Jayanti's `X`         */
	uint32_t flags     __attribute__((aligned(CACHE_LINE)));  /* LOCK_OWNER_DIED ...   */
	/* Generation of the entry (layout 4; was a reserved word): even while
	 * the entry is settled, odd while an unlink of it is under way
	 * (lockadmin.c).  Each unlink moves it on by two, so a handle that
	 * cached it (struct bakery_lock) tells its lock from a later one in
	 * the same entry.  On the flags' line: the lock path loads both. */
	uint32_t gen;
	uint64_t recoveries, owner_deaths;
	/* k holders and shared mode */
	uint32_t holders;          /* capacity k: holders at once (0 is read as 1) */
	uint32_t exit_sleepers;    /* threads asleep on `exits`                */
	uint64_t reader_deaths;    /* shared holders that died inside          */
	/* Layout 7: 0 while this lock's exits may skip their barrier, then
	 * LOCK_FENCES_SETTING and LOCK_FENCES_SET once a waiter has slept in
	 * it, back to 0 through LOCK_FENCES_STALE when nobody has slept in it
	 * for a while (exitfence.h).  On the flags' line, which the lock path
	 * reads anyway. */
	uint32_t lock_fences;
	/* Layout 9: a biased lock's word (algo/bias.h): BIAS_OFF for a lock
	 * made without BAKERY_LOCK_BIASED, else BIAS_NONE, BIAS_REVOKING or
	 * the slot the lock is biased to.  On the flags' line: the biased
	 * owner loads it twice a passage, and it is written only by a grant
	 * or a revocation. */
	uint32_t bias;
	uint32_t bias_revocations; /* revocations won so far: the grant's backoff */
	uint32_t exits __attribute__((aligned(CACHE_LINE)));
	                           /* futex word of a k-holder lock: bumped by
	                              every exit, abort and recovery in it     */
	/* added in layout 4 (pass.c) */
	uint64_t passes;           /* waiters passed in this lock */
};

/*
 * Slot s's registers in one lock: two cache lines.  The first holds what
 * the other slots read while they wait on s (choosing, number, the futex
 * word seq, mode, proxy) and the counts of those asleep on it.  The second
 * holds what s's passage keeps from one step to the next, which others
 * read once per sleep or failed trylock (the pass word) or rarely (a
 * recoverer, bakery status): the stage, stored four times a passage; the
 * pass word, stored and compared-and-swapped by a waiter that publishes
 * itself passable; the counts.  On one line, every such store took the
 * polled line away from the waiters polling it, and they fetched it back;
 * on a line of their own, the contended throughput at 2 and 4 processes
 * rose, while the same 128 bytes with everything on the first line
 * (padding alone: the adjacent-line prefetcher) changed nothing
 * (docs/performance.md, P7).  The cost is memory: 128 bytes per slot and
 * lock instead of 64 (layout 8).
 */
struct bakery_shm_reg {
	uint32_t choosing;         /* Lamport choosing / Jayanti gettoken       */
	uint32_t seq;              /* futex word: bumped after every register change */
	uint64_t number;           /* ticket; Black-White packs colour in bit 63;
	                              Jayanti stores token + 1 (0 = token -1)    */
	uint32_t waiters;          /* threads asleep on seq for number/proxy    */
	uint32_t joined;           /* in this lock's active set                 */
	uint16_t holder_inconsistent; /* holder got EOWNERDEAD, not yet consistent */
	uint16_t mode;             /* enum reg_mode of the current passage      */
	uint64_t proxy;            /* Jayanti proxy completion state            */
	uint32_t door_waiters;     /* threads asleep on seq for choosing = 0    */
	/* the second line: the owner's bookkeeping */
	uint32_t stage __attribute__((aligned(CACHE_LINE)));  /* enum bakery_pass_state */
	/* the pass word (pass.h), written by the owner and by a passer or
	 * recoverer with compare-and-swap; the futex word a passed waiter
	 * sleeps on until its pass is finished */
	uint32_t pass;
	uint64_t acquisitions;
	uint64_t aborts;
	/* Layout 9: in a biased lock, the owner's count of its passages in a
	 * row whose doorway found no other ticket (algo/bias.c: the grant) */
	uint32_t lone_passages;
} __attribute__((aligned(CACHE_LINE)));
_Static_assert(sizeof(struct bakery_shm_reg) == 2 * CACHE_LINE, "two cache lines of registers");
_Static_assert(offsetof(struct bakery_shm_reg, stage) == CACHE_LINE,
               "the owner's bookkeeping starts the second line, off the polled one");

/* The mode of a passage, written before its ticket (lock.c). */
enum reg_mode {
	REG_EXCLUSIVE = 0,
	REG_SHARED = 1,
};

/* ------------------------------------------------------------- layout -- */

struct layout {
	uint32_t nslots, nlocks, active_words, page_size;
	uint64_t slots_off, locks_off, active_off, regs_off, tokens_off, total_size;
};

/*
 * Token words: two per slot (layout 5: one named by each slot, one spare
 * for a slot revoked from an idle owner, registry.c), then TOKEN_TABLE (the
 * lock table's), each in the last TOKEN_TAIL bytes of a token page, 8 bytes
 * apart.  A holder's robust-list node lies futex_offset bytes past its
 * word, on the next page of its private window (token.c).  Each token also
 * has a line of its own at the start of the same page (struct
 * bakery_shm_token_line, written by the token's holder only): its busy
 * word, which does not move with a slot, and (layout 6) who holds it.
 */
#define TOKENS_PER_PAGE 3u
#define TOKEN_TAIL (8u * TOKENS_PER_PAGE)
#define token_count(nslots) (2u * (nslots) + 1u)

static inline uint64_t token_offset(uint64_t tokens_off, uint32_t page, unsigned i)
{
	return tokens_off + (uint64_t)(i / TOKENS_PER_PAGE) * page + page - TOKEN_TAIL +
	       8u * (i % TOKENS_PER_PAGE);
}

struct bakery_shm_token_line {
	uint32_t busy;             /* 1 while the holder is inside a lock call or
	                              holds a lock of the region (registry.c)   */
	/* Layout 6: the holder as it sees itself, for the one question the
	 * word cannot answer across PID namespaces: does a holder that keeps
	 * the token for long exist (token.c)?  A TID and the identity (device
	 * and inode of /proc/self/ns/pid) of the PID namespace that numbers
	 * it; TID 0 once given back. */
	uint32_t holder_tid;
	uint64_t holder_pidns_dev, holder_pidns_ino;
} __attribute__((aligned(CACHE_LINE)));
_Static_assert(sizeof(struct bakery_shm_token_line) == CACHE_LINE, "one cache line per token");

static inline uint64_t token_line_offset(uint64_t tokens_off, uint32_t page, unsigned i)
{
	return tokens_off + (uint64_t)(i / TOKENS_PER_PAGE) * page +
	       (uint64_t)sizeof(struct bakery_shm_token_line) * (i % TOKENS_PER_PAGE);
}

BAKERY_HIDDEN int bakery__layout_compute(unsigned nslots, unsigned nlocks, struct layout *out);
BAKERY_HIDDEN uint64_t bakery__layout_hash(const struct bakery_shm_header *h);

#endif /* BAKERY_SHM_LAYOUT_H */
