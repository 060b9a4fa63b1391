/* SPDX-License-Identifier: MIT */
/*
 * unit.h - helpers shared by the Check unit suites: unique region names that
 * are removed even when a test fails, child processes with a time limit,
 * a thread that holds a lock on request, clocks, and the main() every suite
 * uses.
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

/* tcase_add_loop_test(tc, fn, UNIT_ALGO_FIRST, UNIT_ALGO_END): every algorithm */
#define UNIT_ALGO_FIRST BAKERY_ALGO_LAMPORT
#define UNIT_ALGO_END   (BAKERY_ALGO_JAYANTI + 1)

/* ------------------------------------------------------------- regions -- */

#define UNIT_NAME_SIZE 128

/* A region name unique to this run, process and call
 * ("/bkunit-RUNNER-PID-TAG-N"); unit_run removes whatever of the run's names
 * a failed test left in /dev/shm. */
void unit_name(char *buf, size_t size, const char *tag);

/* Create a fresh region (BAKERY_CREATE | BAKERY_EXCL) with these capacities
 * (0 = default) and the name written to NAME (UNIT_NAME_SIZE bytes). */
bakery_t *unit_region(char *name, const char *tag, unsigned slots, unsigned locks);

/* bakery_lock_open that must succeed. */
bakery_lock_t *unit_lock(bakery_t *b, const char *lock, enum bakery_algo algo);

/* The path of the region's object under /dev/shm. */
void unit_shm_path(char *buf, size_t size, const char *name);

/* The calling thread's slot index in B (found by its tid), or -1. */
int unit_self_slot(bakery_t *b);

/* ---------------------------------------------------------------- time -- */

double unit_now(clockid_t clock);                 /* seconds */
struct timespec unit_in(clockid_t clock, double seconds);   /* now + seconds */
pid_t unit_gettid(void);

/* Poll COND(ARG) every millisecond until true or TIMEOUT seconds pass. */
bool unit_wait_until(bool (*cond)(void *), void *arg, double timeout);

/* ----------------------------------------------------------- processes -- */

/* Memory shared with forked children (zeroed). */
void *unit_shared(size_t size);

/* A one-shot signal between processes or threads (a pipe). */
struct unit_gate { int fd[2]; };
void unit_gate_init(struct unit_gate *g);
void unit_gate_open(struct unit_gate *g);
/* true once the gate is open (or its writer is gone), false on timeout */
bool unit_gate_wait(struct unit_gate *g, double timeout);
void unit_gate_close(struct unit_gate *g);

/* Fork a child that runs FN(ARG) and _exit()s with its result. */
pid_t unit_fork(int (*fn)(void *), void *arg);

/* Wait for PID at most TIMEOUT seconds (SIGKILLed after that).  Returns its
 * exit status, 128 + signal if a signal ended it, -1 on timeout. */
int unit_reap(pid_t pid, double timeout);

/* SIGKILL PID and reap it; true if it died of the SIGKILL. */
bool unit_kill(pid_t pid);

/* -------------------------------------------------------------- holder -- */

/*
 * A thread that takes a lock and keeps it until told to let go, so a test
 * can check what other callers see meanwhile.
 */
struct unit_holder {
	pthread_t thread;
	bakery_lock_t *lock;
	int lock_rc, unlock_rc;
	struct unit_gate held, release;
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

/* ---------------------------------------------------------------- main -- */

/* Run one suite in fork mode; the exit status for main(). */
int unit_run(Suite *s);

#endif
