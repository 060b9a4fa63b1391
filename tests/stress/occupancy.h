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
 *   violations - overlaps seen by the swaps.
 */
#ifndef BAKERY_TEST_OCCUPANCY_H
#define BAKERY_TEST_OCCUPANCY_H

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

struct occupancy {
	int32_t inside;
	uint32_t pad;
	uint64_t counter;
	uint64_t violations;
	uint64_t entries;
};

static inline struct occupancy *occupancy_map(const char *region)
{
	char name[300];
	void *p;
	int fd;

	snprintf(name, sizeof(name), "/%s-occ", region[0] == '/' ? region + 1 : region);
	fd = shm_open(name, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(struct occupancy)) < 0) {
		perror("occupancy");
		return NULL;
	}
	p = mmap(NULL, sizeof(struct occupancy), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static inline void occupancy_unlink(const char *region)
{
	char name[300];

	snprintf(name, sizeof(name), "/%s-occ", region[0] == '/' ? region + 1 : region);
	shm_unlink(name);
}

/* The critical section's body: enter, work, leave, checking all the way. */
static inline void occupancy_enter(struct occupancy *occ)
{
	int32_t me = (int32_t)getpid();
	uint64_t c;

	if (uatomic_xchg(&occ->inside, me) != 0)
		uatomic_inc(&occ->violations);
	c = CMM_LOAD_SHARED(occ->counter);
	for (int i = 0; i < 20; i++)
		caa_cpu_relax();
	CMM_STORE_SHARED(occ->counter, c + 1);
	uatomic_inc(&occ->entries);
	if (uatomic_xchg(&occ->inside, 0) != me)
		uatomic_inc(&occ->violations);
}

#endif
