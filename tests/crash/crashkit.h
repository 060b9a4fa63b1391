/* SPDX-License-Identifier: MIT */
/*
 * crashkit.h - helpers of the crash, recovery and abort tests (tests/crash),
 * on top of the test kit (tests/common/tk.h: names, shared memory, reaping,
 * gates, clocks): children that have a time limit and die with their
 * parent, slot lookups through the public introspection calls, a
 * kill-tolerant occupancy check, and one generic participant process.
 *
 * Nothing here uses Check, so that the plain measuring programs can share
 * it: helpers report through return values, and the callers assert.
 * Children never return into the caller: they leave with _exit().
 */
#ifndef BAKERY_TEST_CRASHKIT_H
#define BAKERY_TEST_CRASHKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "bakery.h"
#include "../common/occupancy.h"
#include "../common/tk.h"

/* The four algorithms, in the order every test runs them. */
#define CRASH_NALGOS 4
extern const enum bakery_algo crash_algos[CRASH_NALGOS];

/* The lock every test uses. */
#define CRASH_LOCK "L"

/* ------------------------------------------------------------- regions -- */

/* Create the region NAME (exclusive) with SLOTS slots (0: default):
 * 0 or the library's error. */
int crash_create(const char *name, unsigned slots, bakery_t **out);

/* How many temporary objects of region NAME lie in /dev/shm (a creator that
 * died mid-way leaves one until the next creator removes it). */
unsigned crash_orphans(const char *name);

/* How many objects in /dev/shm have a name starting with PREFIX (a leading
 * '/' is ignored): regions and temporaries a test left behind. */
unsigned crash_shm_objects(const char *prefix);

/* ----------------------------------------------------------- resources -- */

/* Open descriptors and mappings (lines of /proc/self/maps) of the calling
 * process, for leak checks: take both before and after, with the same
 * threads alive, and compare. */
unsigned crash_count_fds(void);
unsigned crash_count_maps(void);
/* AddressSanitizer's allocator maps memory as the program goes (and keeps
 * freed blocks in quarantine): there, mapping counts say nothing. */
#if defined(__SANITIZE_ADDRESS__)
#define CRASH_MAPS_COMPARABLE 0
#else
#define CRASH_MAPS_COMPARABLE 1
#endif

/* ---------------------------------------------------------------- soak -- */

/* The chaos programs run a short mode by default (make check) and a soak
 * when the environment sets BAKERY_CHAOS_SECONDS: the seconds the whole
 * program should take (its configurations share them).  SHORT_RUN when
 * unset. */
double crash_chaos_seconds(double short_run);
bool crash_chaos_soak(void);

/* ---------------------------------------------------------------- stats -- */

/* median and maximum of N values (sorts V) */
void crash_stats(uint64_t *v, unsigned n, uint64_t *median, uint64_t *worst);

/* ----------------------------------------------------------- processes -- */

/* Seconds a child may live before SIGALRM ends it (a safety net only). */
#define CRASH_CHILD_LIMIT 60

/* Fork a child that runs FN(ARG) and _exit()s with its result; it dies with
 * the caller (PR_SET_PDEATHSIG) and after CRASH_CHILD_LIMIT seconds at most.
 * CRASH_AT, if not NULL, becomes its BAKERY_CRASH_AT (test build). */
pid_t crash_fork(int (*fn)(void *), void *arg, const char *crash_at);

/* tk_reap's answer for a child ended by SIGKILL */
#define CRASH_SIGKILLED (128 + 9)

/* The state letter of /proc/PID/stat ('S' sleeping, 'R' running, ...),
 * or 0 if it cannot be read. */
char crash_proc_state(pid_t pid);

/* Write TEXT to the file PATH (a /proc knob): 0 or an errno. */
int crash_write_file(const char *path, const char *text);
/* Just after unshare(CLONE_NEWUSER): map UID and GID, the caller's before
 * it entered the namespace, to the namespace's root.  0 or an errno. */
int crash_map_ids(uid_t uid, gid_t gid);

/* --------------------------------------------------------------- slots -- */

/* Index of the slot last claimed by process PID (FREE slots included: a
 * freed slot keeps its owner's pid until it is claimed again), or -1. */
int crash_slot_of(bakery_t *b, pid_t pid);

/* Wait until process PID has a slot whose stage is PASS (TIMEOUT seconds). */
bool crash_wait_pass(bakery_t *b, pid_t pid, enum bakery_pass_state pass, double timeout);

unsigned crash_slots_used(bakery_t *b);

/* bakery_lock_info of lock L, through B; exits on failure. */
struct bakery_lock_info crash_lock_info(bakery_t *b, bakery_lock_t *l);

/* bakery_recover(), run in a short-lived child so that the caller takes no
 * slot: 0 and *reclaimed, or an error (-1 if the child failed). */
int crash_recover_in_child(const char *name, unsigned *reclaimed);

/* ----------------------------------------------------------- occupancy -- */

/*
 * Mutual exclusion is checked by the occupancy object (tests/common/
 * occupancy.h), which tolerates holders killed inside the critical
 * section: each process the test starts has a SERIAL (1..CRASH_SERIALS-1),
 * its ID there, and a test dooms the serial (occupancy_doom) before it
 * kills its holder.
 */
#define CRASH_SERIALS OCCUPANCY_IDS
/* Relaxations between the counter's read and write in a crash test's
 * critical section. */
#define CRASH_OCC_PAUSE 50

/* --------------------------------------------------------- participant -- */

enum crash_mode {
	CRASH_MODE_LOCK = 0,          /* bakery_lock                               */
	CRASH_MODE_TRY,               /* bakery_trylock, once                      */
	CRASH_MODE_TIMED_RT,          /* bakery_timedlock, deadline `timeout` away */
	CRASH_MODE_CLOCK_MONO,        /* bakery_clocklock CLOCK_MONOTONIC          */
	CRASH_MODE_CLOCK_RT,          /* bakery_clocklock CLOCK_REALTIME           */
};

/*
 * One participant process, described and reported in shared memory: it
 * opens REGION and lock CRASH_LOCK with ALGO, acquires once in MODE; on
 * EOWNERDEAD it repairs (bakery_consistent); it enters the occupancy
 * object; with HOLD it stays there, holding the lock, until `release` is
 * set (a test that kills it then must doom its serial first); it leaves the
 * occupancy object, unlocks and closes.  With WAIT_GO it spins, handles open, until `go` before it
 * calls the lock (a precise arrival time).  A participant that gives up (EBUSY, ETIMEDOUT) stays alive,
 * without unlocking anything, until `release` is set, then may retry with
 * bakery_lock if `retry` is set.
 */
struct crash_part {
	/* set by the test */
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	enum crash_mode mode;
	double timeout;            /* seconds, for the timed modes */
	int hold;
	int retry;
	int wait_go;               /* once opened, spin until `go` is set      */
	int retry_eslots;          /* BAKERY_ESLOTS: wait a little, try again  */
	volatile int go;
	unsigned serial;
	struct occupancy *occ;
	volatile int release;
	/* set by the participant */
	volatile int opened;       /* region and lock handle open               */
	volatile int holding;      /* inside, the occupancy check passed        */
	volatile int gave_up;      /* EBUSY/ETIMEDOUT returned                  */
	volatile int eslots;       /* BAKERY_ESLOTS returned (and retried)      */
	int rc;                    /* result of the (first) acquisition         */
	int rc_retry;
	uint64_t t_call;           /* tk_ns() before the acquiring call         */
	uint64_t t_acq;            /* tk_ns() when it returned with the lock    */
	uint64_t t_gave_up;
	uint64_t t_release;        /* tk_ns() just before bakery_unlock         */
	uint64_t order;            /* place among the passages (occupancy order)   */
	int slot;                  /* its slot index (found by its tid)         */
};

/* crash_fork() body: 0, or the number of the step that failed. */
int crash_part_run(void *arg);

#endif
