/* SPDX-License-Identifier: MIT */
/*
 * handle.h - struct bakery, a process's handle on a mapped region (made,
 * counted and freed by region.c), struct bakery_lock, and the accessors
 * into the mapping.  Never installed; white-box tests may include it.
 */
#ifndef BAKERY_HANDLE_H
#define BAKERY_HANDLE_H

#include "shm_layout.h"

struct guard;
struct recovery_ops;
struct thread_slot;
struct algo_ops;
struct passage;

/* "No slot": a caller without a slot of its own (registry reap, proxy
 * finisher), nobody seen ahead in line (passage.h). */
#define BAKERY_NO_SLOT UINT32_MAX

/* Token windows given back and kept for the next take (token.c). */
#define TOKEN_SPARE_WINDOWS 4u

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
	/* the shm object's identity, recorded at open: two handles of one
	 * object, whatever names they were opened by (a hard link, a rename) */
	dev_t dev;
	ino_t ino;
	/* set by the SIGBUS guard to the error every call answers from then
	 * on: BAKERY_EBADREGION (the object was cut short under us) or ENOSPC
	 * (a page of it could not be allocated: a full /dev/shm) */
	int lost;
	struct guard *guard;
	/* the per-lock half of recovery, registered at open (api.c) */
	const struct recovery_ops *recovery;
	/* lifetime: one reference for the user's handle, one per thread slot */
	unsigned long refs;
	int closed;
	int rdonly;                /* opened BAKERY_RDONLY: introspection only */
	/* exitfence.h: this process may clear its tickets at an exit
	 * without a barrier (registered for the expedited barrier, x86); or,
	 * where it cannot, until when (CLOCK_MONOTONIC ns) its waiters cap
	 * their sleeps; which of a slot's passages age a lock's mark (a
	 * power of two, less one: exit_store) */
	bool exits_unfenced;
	uint64_t fence_grace_end;
	uint64_t exit_age_mask;
	/* token windows given back, kept for the next take (token.c) */
	pthread_mutex_t spare_lock;
	unsigned char *spare_win[TOKEN_SPARE_WINDOWS];
	uint64_t spare_off[TOKEN_SPARE_WINDOWS];   /* the page each one shows */
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
	uint32_t gen;              /* the entry's generation when opened */
	enum bakery_algo algo;     /* the variant this handle runs */
	const struct algo_ops *ops;
	unsigned holders;          /* the lock's capacity k, read at open */
	bool biased;               /* made with BAKERY_LOCK_BIASED (algo/bias.h) */
	/* ops->doorway and ->exit, or their biased twins in a biased lock */
	int (*doorway)(struct passage *p);
	void (*exit)(const struct bakery_lock *l, struct bakery_shm_reg *mine, bool shared);
	/* ops->pass_abort: how a passer aborts a passed waiter's passage in
	 * this lock, when the plain reset will not do; NULL: the plain reset
	 * (pass.c, which reads it through a passage's handle) */
	void (*pass_abort)(struct bakery *b, unsigned lock, unsigned slot);
	uint64_t serial;           /* this handle among all the process opened
	                              (never 0, never reused, unlike an address) */
	/* Where the lock lies in B's mapping, which never moves while B is
	 * open: its entry, its row of registers (slot 0's) and its active set.
	 * The lock path reloads these after every barrier: one load each, not
	 * the address arithmetic from B's fields. */
	struct bakery_shm_lock *entry;
	struct bakery_shm_reg *regs;
	uint64_t *active;
};

static inline struct bakery_shm_reg *reg_of(struct bakery *b, unsigned lock, unsigned slot)
{
	return &b->regs[(size_t)lock * b->nslots + slot];
}

/* Slot SLOT's registers in L's lock (reg_of, from the handle). */
static inline struct bakery_shm_reg *lock_reg(const struct bakery_lock *l, unsigned slot)
{
	return &l->regs[slot];
}

static inline uint64_t *active_of(struct bakery *b, unsigned lock)
{
	return &b->active[(size_t)lock * b->active_words];
}

/* The bound of the slots ever claimed, from the region's high-water mark
 * HWM, within our own NSLOTS: never trust the region. */
static inline unsigned slots_bound_of(unsigned hwm, unsigned nslots)
{
	return hwm < nslots ? hwm : nslots;
}

/* The slots that may matter now: claims take the lowest free index first, so
 * this stays near the number of threads in use, whatever the capacity. */
static inline unsigned slots_bound(struct bakery *b)
{
	return slots_bound_of(CMM_LOAD_SHARED(b->hdr->slots_hwm), b->nslots);
}

/*
 * Has L's lock been removed since L was opened (bakery_lock_unlink): does
 * its entry now hold another lock, or none?  Not while the generation is
 * L's or one more: an unlink of L under way, which gives up while anyone
 * holds or waits for L (lockadmin.c), so that a holder of L never finds it
 * gone.  One load and a compare.
 */
static inline bool lock_handle_stale(const struct bakery_lock *l)
{
	return (CMM_LOAD_SHARED(l->entry->gen) ^ l->gen) > 1u;
}

/* Has the mapping been lost under this process (guard.c)? */
static inline bool region_lost(struct bakery *b)
{
	return caa_unlikely(CMM_LOAD_SHARED(b->lost));
}

/* The error a call answers once region_lost(b): BAKERY_EBADREGION, or
 * ENOSPC for a page /dev/shm had no room for. */
static inline int region_lost_error(struct bakery *b)
{
	int err = CMM_LOAD_SHARED(b->lost);

	return err ? err : BAKERY_EBADREGION;
}

/* The answer to a call on a handle of B whose lock was removed:
 * BAKERY_EREMOVED, unless what said so was the SIGBUS guard's zero pages
 * (the region was lost under us: region_lost_error's answer). */
static inline int lock_removed(struct bakery *b)
{
	return region_lost(b) ? region_lost_error(b) : BAKERY_EREMOVED;
}

#endif /* BAKERY_HANDLE_H */
