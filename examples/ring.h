/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the bounded ring buffer that examples/producer.c and
 * examples/consumer.c share: its own POSIX shared-memory object, guarded by
 * one named bakery lock.  Every field is read and written only with that
 * lock held.
 *
 * Accounting, so that "nothing lost, nothing duplicated" can be proved:
 *   - A producer's records carry its id and a sequence number 0, 1, 2, ...
 *     The next number is committed[id] in the ring header, so numbers stay
 *     gap-free even when a record is abandoned half-written.
 *   - A record is written in three steps: state := WRITING, the fields,
 *     state := COMMITTED (the commit point), then committed[id] := seq + 1,
 *     then tail := tail + 1.  A producer killed before the commit point
 *     leaves a WRITING record at the tail: the repair discards it, and its
 *     sequence number is not counted as produced.  Killed after the commit
 *     point, it leaves a COMMITTED record at the tail: the repair finishes
 *     the two updates for it.
 *   - The consumer takes records in ring order and checks, per producer,
 *     that sequence numbers come in order without gaps, and at the end that
 *     it consumed exactly committed[id] records of each producer.
 */
#ifndef EXAMPLES_RING_H
#define EXAMPLES_RING_H

#include <stdbool.h>
#include <stdint.h>

#include <bakery.h>

#define RING_MAGIC         0x52494e47u     /* "RING" */
#define RING_CAPACITY      64u             /* records */
#define RING_MAX_PRODUCERS 32u
#define RING_PAYLOAD       6u              /* 64-bit words of data per record */

enum record_state {
	REC_EMPTY = 0,
	REC_WRITING = 1,
	REC_COMMITTED = 2,
};

struct ring_record {
	uint32_t state;                /* enum record_state                         */
	uint32_t producer;
	uint64_t pos;                  /* ring position: a fresh record from a stale one */
	uint64_t seq;                  /* the producer's sequence number            */
	uint64_t payload[RING_PAYLOAD];
	uint64_t checksum;             /* over everything above but the state       */
};

struct ring {
	uint32_t magic, capacity;
	uint64_t head, tail;           /* positions; [head, tail) committed, unread */
	uint64_t repaired;             /* half-written records discarded            */
	uint64_t rolled_forward;       /* committed records whose updates a repair finished */
	uint64_t owner_dead;           /* times a lock holder found its predecessor dead */
	uint64_t committed[RING_MAX_PRODUCERS];   /* per producer: records committed */
	struct ring_record rec[RING_CAPACITY];
};

/* Where the ring lives and which lock guards it. */
struct ring_conn {
	bakery_t *region;
	bakery_lock_t *lock;
	struct ring *ring;
	const char *ring_name;
};

/*
 * Compiler barrier between the steps of a record.  A killed process loses
 * none of the stores it has executed, so the order in which a repairer finds
 * them is program order; only the compiler could reorder them.  (Other
 * processes read the ring only while holding the lock, whose acquire and
 * release order everything else.)
 */
#define crash_order() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* Map region REGION, lock LOCK_NAME (algorithm ALGO) and ring RING_NAME,
 * creating whichever is missing.  0 or an error, with a message printed. */
int ring_connect(struct ring_conn *c, const char *region, const char *lock_name,
                 enum bakery_algo algo, const char *ring_name, const char *who);
void ring_disconnect(struct ring_conn *c);
/* Remove the ring's shared-memory object. */
void ring_unlink(const char *ring_name);

/* Take the lock; on EOWNERDEAD repair the ring and mark it consistent.
 * Also formats a brand-new ring.  0 or an error, with a message printed. */
int ring_lock(struct ring_conn *c, const char *who);
void ring_unlock(struct ring_conn *c);

/* A record's data, from its producer and sequence number. */
void record_fill(struct ring_record *r, uint32_t producer, uint64_t seq, uint64_t pos,
                 unsigned words);
void record_seal(struct ring_record *r);
/* Do the checksum and the data match what record_fill writes? */
bool record_intact(const struct ring_record *r);

/* Sleep a little longer each time nothing could be done (ring full or
 * empty); *delay_us is reset by the caller after progress. */
void backoff(unsigned *delay_us);

#endif /* EXAMPLES_RING_H */
