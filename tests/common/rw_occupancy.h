/* SPDX-License-Identifier: MIT */
/*
 * rw_occupancy.h - the independent check of the shared mode and of locks of
 * k holders, occupancy.h's sibling: it counts who is inside instead of
 * naming one holder.  Header only, no Check, so that bench/ shares it.
 *
 * One 64-bit word holds the readers inside (low 32 bits) and the exclusive
 * holders inside (high 32 bits), changed by atomic additions, so each entry
 * sees exactly who was inside before it:
 *   - a writer (an exclusive holder of a lock of capacity K, 1 for a
 *     mutex) that finds any reader, or K exclusive holders already, is a
 *     violation;
 *   - a reader that finds any exclusive holder is a violation;
 *   - an exit that finds its own kind already at 0 is a violation.
 * `max_readers` and `max_holders` keep the most seen inside at once, so a
 * test can assert that readers did overlap and that k holders were inside
 * together.  A test that SIGKILLs a participant known to be inside calls
 * rw_occupancy_forget() for it first (the dead never leave).
 */
#ifndef BAKERY_TEST_RW_OCCUPANCY_H
#define BAKERY_TEST_RW_OCCUPANCY_H

#include <stdbool.h>
#include <stdint.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#define RW_OCC_READER 1ull
#define RW_OCC_HOLDER (1ull << 32)

struct rw_occupancy {
	uint64_t state;            /* readers | holders << 32                 */
	uint64_t violations;       /* overlaps, and exits of nobody           */
	uint64_t max_readers;      /* most readers seen inside at once        */
	uint64_t max_holders;      /* most exclusive holders inside at once   */
	uint64_t reads, writes;    /* passages entered, by kind               */
} __attribute__((aligned(64)));

static inline uint64_t rw_occ_readers(uint64_t state) { return state & 0xffffffffu; }
static inline uint64_t rw_occ_holders(uint64_t state) { return state >> 32; }

/* *MAX := max(*MAX, V) */
static inline void rw_occ_raise(uint64_t *max, uint64_t v)
{
	uint64_t seen = uatomic_read(max);

	while (seen < v) {
		uint64_t was = uatomic_cmpxchg(max, seen, v);

		if (was == seen)
			break;
		seen = was;
	}
}

/* Enter as a reader (SHARED) or as one of at most CAPACITY exclusive
 * holders. */
static inline void rw_occupancy_in(struct rw_occupancy *o, bool shared, unsigned capacity)
{
	uint64_t add = shared ? RW_OCC_READER : RW_OCC_HOLDER;
	uint64_t now = uatomic_add_return(&o->state, add);

	if (shared) {
		if (rw_occ_holders(now))
			uatomic_inc(&o->violations);
		rw_occ_raise(&o->max_readers, rw_occ_readers(now));
		uatomic_inc(&o->reads);
	} else {
		if (rw_occ_readers(now) || rw_occ_holders(now) > capacity)
			uatomic_inc(&o->violations);
		rw_occ_raise(&o->max_holders, rw_occ_holders(now));
		uatomic_inc(&o->writes);
	}
}

static inline void rw_occupancy_out(struct rw_occupancy *o, bool shared)
{
	uint64_t sub = shared ? RW_OCC_READER : RW_OCC_HOLDER;
	uint64_t before = uatomic_sub_return(&o->state, sub) + sub;

	if (shared ? !rw_occ_readers(before) : !rw_occ_holders(before))
		uatomic_inc(&o->violations);
}

/* A participant inside is about to be killed: count it out now (call
 * before kill(); the lock lets the next one in only once it is dead). */
static inline void rw_occupancy_forget(struct rw_occupancy *o, bool shared)
{
	uatomic_sub(&o->state, shared ? RW_OCC_READER : RW_OCC_HOLDER);
	cmm_smp_mb();   /* the count before the kill() that follows */
}

/* Inside now. */
static inline uint64_t rw_occupancy_readers(struct rw_occupancy *o)
{
	return rw_occ_readers(uatomic_read(&o->state));
}

static inline uint64_t rw_occupancy_holders(struct rw_occupancy *o)
{
	return rw_occ_holders(uatomic_read(&o->state));
}

#endif
