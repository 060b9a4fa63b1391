/* SPDX-License-Identifier: MIT */
/*
 * hostile.h - helpers of the hostile-participant and misuse tests: unique
 * region names removed at exit, a "raw" view of a region that writes its
 * tables directly (as a hostile or buggy participant would, with no library
 * in between), children with time limits, a one-shot gate, clocks.
 *
 * Children forked by a test never return into Check: they report through
 * their exit status and leave with _exit().
 */
#ifndef BAKERY_TEST_HOSTILE_H
#define BAKERY_TEST_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "shm_layout.h"
#include "handle.h"

#define H_NAME_SIZE 96

/* all four algorithms, for tcase_add_loop_test */
#define H_ALGO_FIRST BAKERY_ALGO_LAMPORT
#define H_ALGO_END   (BAKERY_ALGO_JAYANTI + 1)

/* ------------------------------------------------------------- regions -- */

/* "/bkhostile-RUN-TAG-PID-N", unlinked when the process that made it exits
 * normally (forked children leave with _exit and do not unlink). */
void h_name(char *buf, size_t size, const char *tag);
/* A Check suite's main(): h_run_begin() before running the suite makes RUN
 * its pid; h_run_end() after it removes every name of the run, also those
 * of tests that failed (Check ends a failed test with _exit). */
void h_run_begin(void);
void h_run_end(void);

/* A fresh region (CREATE|EXCL; 0 = default capacity); aborts the test on
 * failure.  NAME gets H_NAME_SIZE bytes. */
bakery_t *h_region(char *name, const char *tag, unsigned slots, unsigned locks);
bakery_lock_t *h_lock(bakery_t *b, const char *lock, enum bakery_algo algo);
unsigned h_lock_index(bakery_lock_t *l);

/* The slot owned by thread TID of process PID, or -1. */
int h_slot_of(bakery_t *b, pid_t pid, pid_t tid);
pid_t h_gettid(void);

/* --------------------------------------------------------- the raw view -- */

/* The object mapped behind the library's back, its tables located from the
 * header (of a region the library made, so the header is sound). */
struct raw {
	int fd;
	size_t size;
	unsigned char *base;
	struct bakery_shm_header *hdr;
	struct bakery_shm_slot *slots;
	struct bakery_shm_lock *locks;
	uint64_t *active;
	struct bakery_shm_reg *regs;
	unsigned nslots, nlocks, active_words;
	uint64_t tokens_off;
	uint32_t page_size;
};

void raw_map(struct raw *r, const char *name);
void raw_unmap(struct raw *r);
struct bakery_shm_reg *raw_reg(struct raw *r, unsigned lock, unsigned slot);
/* Token word I (slot I's, or the lock table's at I = nslots). */
uint32_t *raw_token(struct raw *r, unsigned i);

/* ----------------------------------------------------------- processes -- */

/* Fork a child that runs FN(ARG) and _exit()s with its result. */
pid_t h_fork(int (*fn)(void *), void *arg);
/* Wait at most TIMEOUT seconds for PID (SIGKILLed after that).  Its exit
 * status, 128 + signal if a signal ended it, -1 if it had to be killed. */
int h_reap(pid_t pid, double timeout);
/* Run FN(ARG) in a child.  0 if it returned 0 within TIMEOUT seconds;
 * otherwise prints WHAT and how the child ended (a signal: a crash; killed
 * at the time limit: a hang; another status: a wrong answer) and returns 1. */
int h_survives(const char *what, int (*fn)(void *), void *arg, double timeout);
/* Memory shared with forked children, zeroed. */
void *h_shared(size_t size);

/* A one-shot signal between processes or threads (a pipe). */
struct h_gate { int fd[2]; };
void h_gate_init(struct h_gate *g);
void h_gate_open(struct h_gate *g);
/* true once the gate is open (or its writer is gone), false on timeout */
bool h_gate_wait(struct h_gate *g, double timeout);
void h_gate_close(struct h_gate *g);

/* ---------------------------------------------------------------- time -- */

double h_now(void);                             /* CLOCK_MONOTONIC seconds */
struct timespec h_in(double seconds);           /* CLOCK_REALTIME, now + s */
/* Poll COND(ARG) every millisecond until true or TIMEOUT seconds pass. */
bool h_wait_until(bool (*cond)(void *), void *arg, double timeout);

#ifdef CHECK_H
/* main() of a Check suite: runs S between h_run_begin() and h_run_end();
 * the exit status. */
static inline int h_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	h_run_begin();
	srunner_run_all(sr, CK_NORMAL);
	h_run_end();
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
#endif

#endif
