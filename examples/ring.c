/* SPDX-License-Identifier: MIT */
/*
 * ring.c - the shared ring buffer of the producer/consumer example: mapping
 * it, taking its lock, repairing it after a holder died, and the record
 * format.  See ring.h for the accounting rules.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ring.h"

/* ----------------------------------------------------------- mapping -- */

/* Open or create the ring object.  Every process sizes it the same way, so
 * a concurrent ftruncate() is harmless; the contents are formatted later,
 * under the lock (ring_lock). */
static int ring_map(const char *name, struct ring **out)
{
	struct stat st;
	void *p;
	int fd = shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		return errno;
	if (fstat(fd, &st) < 0 ||
	    ((size_t)st.st_size < sizeof(struct ring) && ftruncate(fd, sizeof(struct ring)) < 0)) {
		int e = errno;
		close(fd);
		return e;
	}
	p = mmap(NULL, sizeof(struct ring), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return errno;
	*out = p;
	return 0;
}

int ring_connect(struct ring_conn *c, const char *region, const char *lock_name,
                 enum bakery_algo algo, const char *ring_name, const char *who)
{
	int err;

	memset(c, 0, sizeof(*c));
	c->ring_name = ring_name;
	err = bakery_open(region, BAKERY_CREATE, NULL, &c->region);
	if (err) {
		fprintf(stderr, "%s: region %s: %s\n", who, region, bakery_strerror(err));
		return err;
	}
	err = bakery_lock_open(c->region, lock_name, algo, &c->lock);
	if (err) {
		fprintf(stderr, "%s: lock %s: %s\n", who, lock_name, bakery_strerror(err));
		return err;
	}
	err = ring_map(ring_name, &c->ring);
	if (err)
		fprintf(stderr, "%s: ring %s: %s\n", who, ring_name, strerror(err));
	return err;
}

void ring_disconnect(struct ring_conn *c)
{
	if (c->ring)
		munmap(c->ring, sizeof(struct ring));
	if (c->lock)
		bakery_lock_close(c->lock);
	if (c->region)
		bakery_close(c->region);
}

void ring_unlink(const char *ring_name)
{
	shm_unlink(ring_name);
}

/* ------------------------------------------------------------ repair -- */

/* A consumer died between taking the head record (state EMPTY) and
 * advancing head: finish that step. */
static void repair_head(struct ring *r)
{
	struct ring_record *rec = &r->rec[r->head % RING_CAPACITY];

	if (r->head < r->tail && !(rec->state == REC_COMMITTED && rec->pos == r->head))
		r->head++;
}

/* A producer died while writing at the tail. */
static void repair_tail(struct ring *r)
{
	struct ring_record *rec = &r->rec[r->tail % RING_CAPACITY];

	if (r->tail - r->head >= RING_CAPACITY)
		return;                 /* full: nobody was writing */
	if (rec->state == REC_COMMITTED && rec->pos == r->tail && rec->producer < RING_MAX_PRODUCERS) {
		/* past the commit point: it counts; finish its two updates */
		if (r->committed[rec->producer] < rec->seq + 1)
			r->committed[rec->producer] = rec->seq + 1;
		r->tail++;
		r->rolled_forward++;
	} else if (rec->state == REC_WRITING) {
		/* before the commit point: it never existed */
		memset(rec, 0, sizeof(*rec));
		r->repaired++;
	}
}

static void ring_format(struct ring *r)
{
	memset(r, 0, sizeof(*r));
	r->capacity = RING_CAPACITY;
	r->magic = RING_MAGIC;
}

int ring_lock(struct ring_conn *c, const char *who)
{
	int err = bakery_lock(c->lock);

	if (err == EOWNERDEAD) {
		/* the previous holder died inside: make the ring whole again,
		 * then say so; unlocking without it would poison the lock */
		if (c->ring->magic == RING_MAGIC) {
			repair_head(c->ring);
			repair_tail(c->ring);
			c->ring->owner_dead++;
		}
		err = bakery_consistent(c->lock);
	}
	if (err) {
		fprintf(stderr, "%s: lock: %s\n", who, bakery_strerror(err));
		return err;
	}
	if (c->ring->magic != RING_MAGIC)
		ring_format(c->ring);
	return 0;
}

void ring_unlock(struct ring_conn *c)
{
	bakery_unlock(c->lock);
}

/* ----------------------------------------------------------- records -- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	return x;
}

static uint64_t record_sum(const struct ring_record *r)
{
	uint64_t h = mix(r->producer ^ (r->pos << 8)) ^ mix(r->seq + 1);

	for (unsigned i = 0; i < RING_PAYLOAD; i++)
		h = mix(h ^ r->payload[i]);
	return h;
}

void record_fill(struct ring_record *r, uint32_t producer, uint64_t seq, uint64_t pos,
                 unsigned words)
{
	r->producer = producer;
	r->pos = pos;
	r->seq = seq;
	for (unsigned i = 0; i < words && i < RING_PAYLOAD; i++)
		r->payload[i] = mix(((uint64_t)producer << 48) ^ (seq << 4) ^ i);
}

void record_seal(struct ring_record *r)
{
	r->checksum = record_sum(r);
}

bool record_intact(const struct ring_record *r)
{
	for (unsigned i = 0; i < RING_PAYLOAD; i++)
		if (r->payload[i] != mix(((uint64_t)r->producer << 48) ^ (r->seq << 4) ^ i))
			return false;
	return r->checksum == record_sum(r);
}

void backoff(unsigned *delay_us)
{
	struct timespec ts;

	if (*delay_us < 20)
		*delay_us = 20;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)*delay_us * 1000;
	nanosleep(&ts, NULL);
	if (*delay_us < 2000)
		*delay_us *= 2;
}
