/*
 * bug-shrink-sigbus.c - REPRODUCER, an expected failure until the library is
 * fixed (tests/hostile/local.mk lists it in XFAIL_TESTS).
 *
 * A region shrunk (ftruncate) under a process that has it mapped: every
 * access to a page past the new end raises SIGBUS, and the library touches
 * the slot table on the next call, so the caller dies:
 *
 *   bakery_lock after the object was cut to one page        SIGBUS
 *   bakery_slot_info after the object was cut to one page   SIGBUS
 *
 * Any participant can do it (it has the object open for writing); a new
 * opener is safe (bakery_open compares the size, test_tables.c).
 *
 * Options, none complete:
 *   - fstat() the object in each call and refuse (BAKERY_EBADREGION) when it
 *     is shorter than the mapping: one system call per call, and a shrink
 *     right after the check still faults;
 *   - a SIGBUS handler around region accesses (sigsetjmp): process-wide,
 *     collides with the application's own handler, not async-safe with
 *     respect to the library's own state;
 *   - seals (F_SEAL_SHRINK) exist only for memfd objects, which have no name
 *     other processes can open (and /proc/PID/fd hand-over defeats
 *     "unrelated processes");
 *   - document it in the Caveats: a participant that can write the object
 *     can crash the others with ftruncate (like any shared mapping).
 *
 * Exit status: 0 if both calls return instead of crashing, 1 if not.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hostile.h"

struct stage {
	char region[H_NAME_SIZE];
	struct h_gate ready, go;
	int introspect;            /* bakery_slot_info instead of bakery_lock */
};

static int victim(void *arg)
{
	struct stage *st = arg;
	struct bakery_slot_info si;
	bakery_t *b;
	bakery_lock_t *l;
	int err;

	if (bakery_open(st->region, 0, NULL, &b) || bakery_lock_open(b, "s", 0, &l) ||
	    bakery_lock(l) || bakery_unlock(l))
		return 10;
	h_gate_open(&st->ready);
	if (!h_gate_wait(&st->go, 30))
		return 11;
	if (st->introspect)
		err = bakery_slot_info(b, 1, &si);
	else
		err = bakery_lock(l);
	return err == 0 || err == BAKERY_EBADREGION ? 0 : 12;
}

static int shrink_case(const char *what, int introspect)
{
	struct stage *st = h_shared(sizeof(*st));
	bakery_t *b = h_region(st->region, "shrink", 4, 2);
	struct raw raw;
	pid_t pid;
	int rc;

	bakery_close(b);
	st->introspect = introspect;
	h_gate_init(&st->ready);
	h_gate_init(&st->go);
	pid = h_fork(victim, st);
	if (!h_gate_wait(&st->ready, 10)) {
		printf("setup failed: %s\n", what);
		return 1;
	}
	raw_map(&raw, st->region);
	if (ftruncate(raw.fd, 4096) < 0) {
		perror("ftruncate");
		return 1;
	}
	h_gate_open(&st->go);
	rc = h_reap(pid, 10);
	close(raw.fd);          /* the mapping's pages past the end are gone */
	if (rc == 0) {
		printf("ok:   %s\n", what);
		return 0;
	}
	printf("BUG:  %s: %s %d\n", what, rc > 128 ? "signal" : "status",
	       rc > 128 ? rc - 128 : rc);
	return 1;
}

int main(void)
{
	int bad = 0;

	bad += shrink_case("bakery_lock after the region was cut to one page", 0);
	bad += shrink_case("bakery_slot_info after the region was cut to one page", 1);
	return bad ? 1 : 0;
}
