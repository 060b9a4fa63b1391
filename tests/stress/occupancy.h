/* SPDX-License-Identifier: MIT */
/*
 * occupancy.h - an independent check of mutual exclusion, shared by the
 * stress, chaos and mutant tests: it does not trust the lock under test.
 *
 * The object REGION-occ (its own shm object) holds:
 *   inside     - the pid of the process in the critical section, 0 if none;
 *                swapped in on entry and out on exit with atomic exchanges,
 *                so any overlap is seen by one side or the other;
 *   counter    - incremented with a plain read, pause, write: overlapping
 *                holders lose updates, so counter != total acquisitions
 *                shows an overlap even if the swaps raced by luck;
 *   violations - overlaps seen by the swaps;
 *   entries    - critical sections entered (atomic, never loses one);
 *   arrived    - participants at the start line (occupancy_start_line()).
 */
#ifndef BAKERY_TEST_OCCUPANCY_H
#define BAKERY_TEST_OCCUPANCY_H

#include <fcntl.h>
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

struct occupancy {
	int32_t inside;
	uint32_t pad;
	uint64_t counter;
	uint64_t violations;
	uint64_t entries;
	uint64_t arrived;
};

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

/* The critical section's body with PAUSE relaxations between the counter's
 * read and write: enter, work, leave, checking all the way. */
static inline void occupancy_enter_pause(struct occupancy *occ, unsigned pause)
{
	int32_t me = (int32_t)getpid();
	uint64_t c;

	if (uatomic_xchg(&occ->inside, me) != 0)
		uatomic_inc(&occ->violations);
	c = CMM_LOAD_SHARED(occ->counter);
	for (unsigned i = 0; i < pause; i++)
		caa_cpu_relax();
	CMM_STORE_SHARED(occ->counter, c + 1);
	uatomic_inc(&occ->entries);
	if (uatomic_xchg(&occ->inside, 0) != me)
		uatomic_inc(&occ->violations);
}

static inline void occupancy_enter(struct occupancy *occ)
{
	occupancy_enter_pause(occ, OCCUPANCY_PAUSE);
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
