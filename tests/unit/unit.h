/* SPDX-License-Identifier: MIT */
/*
 * unit.h - helpers shared by the Check unit suites, on top of the test kit
 * (tests/common/tk.h: names, children, gates, clocks): regions and locks
 * that must open, a thread or a process that holds a lock on request, and
 * the main() every suite uses.
 *
 * Children forked by a test never return into Check: they report through
 * their exit status (0 = all good, otherwise the number of the step that
 * went wrong) or through a shared mapping, and leave with _exit().
 */
#ifndef BAKERY_TEST_UNIT_H
#define BAKERY_TEST_UNIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include <check.h>

#include "bakery.h"
#include "../common/tk.h"

/* ------------------------------------------------------------- regions -- */

/* Create a fresh region (BAKERY_CREATE | BAKERY_EXCL) with these capacities
 * (0 = default) and the name written to NAME (TK_NAME_SIZE bytes, from
 * tk_name; unit_run removes whatever of the run's names a failed test left
 * in /dev/shm). */
bakery_t *unit_region(char *name, const char *tag, unsigned slots, unsigned locks);

/* bakery_lock_open that must succeed. */
bakery_lock_t *unit_lock(bakery_t *b, const char *lock, enum bakery_algo algo);

/* The path of the region's object under /dev/shm. */
void unit_shm_path(char *buf, size_t size, const char *name);

/* ------------------------------------------------------------- fixture -- */

/* A fresh region with one lock in it: the setting of most suites. */
struct unit_fixture {
	char name[TK_NAME_SIZE];   /* the region's name */
	const char *lock;          /* the lock's name */
	enum bakery_algo algo;     /* as opened (BAKERY_ALGO_DEFAULT: the lock's) */
	unsigned holders;          /* the capacity asked for (0: a mutex) */
	bakery_t *b;
	bakery_lock_t *l;
	unsigned index;            /* the lock's table index */
	pid_t child;               /* a child process of the test's own, if any */
};

/* Create the region (as unit_region: TAG, SLOTS, LOCKS) and open LOCK in it
 * with ALGO, or with CFG's algorithm and capacity; both must succeed. */
void unit_fixture_open(struct unit_fixture *f, const char *tag, unsigned slots,
                       unsigned locks, const char *lock, enum bakery_algo algo);
void unit_fixture_open_config(struct unit_fixture *f, const char *tag, unsigned slots,
                              unsigned locks, const char *lock,
                              const struct bakery_lock_config *cfg);
/* Close the lock and the region and remove it: all must succeed. */
void unit_fixture_close(struct unit_fixture *f);

/* bakery_lock_info of the lock at table INDEX of B, which must succeed;
 * unit_fixture_info: of the fixture's lock. */
struct bakery_lock_info unit_lock_info(bakery_t *b, unsigned index);
struct bakery_lock_info unit_fixture_info(const struct unit_fixture *f);
/* bakery_slot_info of slot SLOT (>= 0) of B, which must succeed. */
struct bakery_slot_info unit_slot_info(bakery_t *b, int slot);

/* -------------------------------------------------------------- holder -- */

/*
 * A thread that takes a lock and keeps it until told to let go, so a test
 * can check what other callers see meanwhile.
 */
struct unit_holder {
	pthread_t thread;
	bakery_lock_t *lock;
	int lock_rc, unlock_rc;
	struct tk_gate held, release;
};
/* Start the thread; returns once it holds the lock (its rc checked). */
void unit_holder_start(struct unit_holder *h, bakery_lock_t *lock);
/* Let go and join; the unlock's rc checked. */
void unit_holder_stop(struct unit_holder *h);

/*
 * A process of its own (its own bakery_open and lock handle, as an unrelated
 * program would have) that takes LOCK of REGION with ALGO and keeps it until
 * killed.  Returns its pid once it holds the lock.
 */
pid_t unit_holder_process(const char *region, const char *lock, enum bakery_algo algo);

/* The state field of /proc/PID/stat ('S' asleep, as in a futex wait; 'T'
 * stopped), '?' if it cannot be read. */
char unit_proc_state(pid_t pid);

/* For tk_wait_until: is PID asleep while COUNT slots wait for the lock at
 * table index 0 of B (a waiter that has taken its place in line)? */
struct unit_queued {
	bakery_t *b;
	pid_t pid;
	unsigned count;
};
bool unit_queued_asleep(void *arg);

/* ---------------------------------------------------------------- main -- */

/* Run one suite in fork mode; the exit status for main(). */
int unit_run(Suite *s);

#endif
