/* SPDX-License-Identifier: MIT */
/*
 * occupancy.h - the independent check of mutual exclusion every test and
 * the benchmark use: it does not trust the lock under test.  Header only,
 * no Check, so that bench/ shares it.
 *
 * Each holder, named by an ID (its pid, or a serial the test gives it),
 * swaps its ID into `inside` on entry (occupancy_in) and 0 back on exit
 * (occupancy_out), with atomic exchanges, so any overlap is seen by one
 * side or the other:
 *   - on entry, any other value means two holders at once (`violations`),
 *     unless that ID was marked doomed (occupancy_doom) before the test
 *     killed its holder: the lock may let the next holder in once the
 *     killed one is gone, and the dead one never swapped its ID out
 *     (`stale`);
 *   - on exit, anything but our own ID is always a violation (we are alive
 *     and still inside).
 * `counter` is incremented on entry with a plain read, pause, write:
 * overlapping holders lose updates (counter < entries shows an overlap
 * even if the swaps raced by luck); a holder killed between its write and
 * its `entries` increment adds one (counter <= entries + kills).
 *
 * Also: `order` (acquisition order, for FIFO checks), `arrived` (the start
 * line), `last` and `handoffs` (acquisitions by another holder than the
 * previous one: a lock that lets its releaser barge in changes hands less
 * often than a FIFO one).
 *
 * The stress tests keep it in an shm object of its own, REGION-occ
 * (occupancy_map); the crash tests and the benchmark in memory shared with
 * their children.
 */
#ifndef BAKERY_TEST_OCCUPANCY_H
#define BAKERY_TEST_OCCUPANCY_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

/* Relaxation pauses between the counter's read and its write by default:
 * long enough that two overlapping holders interleave. */
#define OCCUPANCY_PAUSE 20

/* IDs below this can be marked doomed (the crash tests' serials). */
#define OCCUPANCY_IDS 4096

struct occupancy {
	uint64_t inside;           /* ID of the holder, 0 if none               */
	uint64_t counter;          /* read-pause-write: overlaps lose updates   */
	uint64_t entries;          /* critical sections entered (atomic)        */
	uint64_t violations;       /* overlaps the swaps saw                    */
	uint64_t stale;            /* entries that found a doomed holder's ID   */
	uint64_t order;            /* acquisition order, for FIFO checks        */
	uint64_t arrived;          /* participants at the start line            */
	uint64_t last;             /* ID of the previous holder                 */
	uint64_t handoffs;         /* entries by another ID than the last       */
	uint8_t doomed[OCCUPANCY_IDS];
} __attribute__((aligned(64)));

/* Enter as ID, PAUSE relaxations between the counter's read and write. */
static inline void occupancy_in(struct occupancy *o, uint64_t id, unsigned pause)
{
	uint64_t prev = uatomic_xchg(&o->inside, id);
	uint64_t c;

	if (prev) {
		/* the doom mark was stored before the kill that let us in */
		if (prev < OCCUPANCY_IDS && uatomic_read(&o->doomed[prev]))
			uatomic_inc(&o->stale);
		else
			uatomic_inc(&o->violations);
	}
	c = CMM_LOAD_SHARED(o->counter);
	for (unsigned i = 0; i < pause; i++)
		caa_cpu_relax();
	CMM_STORE_SHARED(o->counter, c + 1);
	uatomic_inc(&o->entries);
}

static inline void occupancy_out(struct occupancy *o, uint64_t id)
{
	if (uatomic_xchg(&o->inside, 0) != id)
		uatomic_inc(&o->violations);
}

/* occupancy_in then occupancy_out: a short critical section. */
static inline void occupancy_pass(struct occupancy *o, uint64_t id, unsigned pause)
{
	occupancy_in(o, id, pause);
	occupancy_out(o, id);
}

/* Inside, as ID: count a change of hands. */
static inline void occupancy_note_handoff(struct occupancy *o, uint64_t id)
{
	if (CMM_LOAD_SHARED(o->last) != id) {
		CMM_STORE_SHARED(o->last, id);
		CMM_STORE_SHARED(o->handoffs, o->handoffs + 1);
	}
}

/* Mark ID as about to be killed by the test: call before kill(). */
static inline void occupancy_doom(struct occupancy *o, uint64_t id)
{
	if (id < OCCUPANCY_IDS)
		uatomic_set(&o->doomed[id], 1);
	cmm_smp_mb();   /* the mark before the kill() that follows */
}

/* A short critical section as this process (ID: its pid). */
static inline void occupancy_enter_pause(struct occupancy *o, unsigned pause)
{
	occupancy_pass(o, (uint64_t)getpid(), pause);
}

static inline void occupancy_enter(struct occupancy *o)
{
	occupancy_enter_pause(o, OCCUPANCY_PAUSE);
}

/* ------------------------------------------- the stress tests' object -- */

static inline void occupancy_name(const char *region, char *name, size_t size)
{
	snprintf(name, size, "/%s-occ", region[0] == '/' ? region + 1 : region);
}

static inline struct occupancy *occupancy_map(const char *region)
{
	char name[300];
	void *p;
	int fd;

	occupancy_name(region, name, sizeof(name));
	fd = shm_open(name, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(struct occupancy)) < 0) {
		perror("occupancy");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	p = mmap(NULL, sizeof(struct occupancy), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static inline void occupancy_unlink(const char *region)
{
	char name[300];

	occupancy_name(region, name, sizeof(name));
	shm_unlink(name);
}

/*
 * A start barrier: announce ourselves and wait (sleeping in 100 us steps)
 * until N participants have, so that they all contend from the first
 * passage instead of running one after another.  Gives up after about
 * TIMEOUT_S seconds and returns -1 (a participant failed to start).
 */
static inline int occupancy_start_line(struct occupancy *occ, uint64_t n, unsigned timeout_s)
{
	const struct timespec step = { 0, 100000 };

	uatomic_inc(&occ->arrived);
	for (unsigned long i = 0; uatomic_read(&occ->arrived) < n; i++) {
		if (i >= (unsigned long)timeout_s * 10000)
			return -1;
		nanosleep(&step, NULL);
	}
	return 0;
}

#endif
