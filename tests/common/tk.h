/* SPDX-License-Identifier: MIT */
/*
 * tk.h - the test kit every suite shares (tests/unit, tests/crash,
 * tests/hostile): unique region names removed whatever the outcome,
 * memory shared with forked children, children reaped with a deadline,
 * one-shot gates, clocks.  The suites' own kits (unit.h, crashkit.h,
 * hostile.h) add what only they need on top.
 *
 * Nothing here uses Check, so that plain programs can share it: helpers
 * report through return values; a failure of the kit itself (no memory, no
 * pipe, no fork) prints what failed and exits with TK_SETUP_FAILED, which a
 * test counts as a failure.  Children leave with _exit().
 */
#ifndef BAKERY_TEST_TK_H
#define BAKERY_TEST_TK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "bakery.h"

#define TK_SETUP_FAILED 99

/* Every algorithm, as a loop test's range:
 * tcase_add_loop_test(tc, fn, TK_ALGO_FIRST, TK_ALGO_END) */
#define TK_ALGO_FIRST BAKERY_ALGO_LAMPORT
#define TK_ALGO_END   (BAKERY_ALGO_JAYANTI + 1)

/* ------------------------------------------------------------- regions -- */

/* Room for any name tk_name makes. */
#define TK_NAME_SIZE 96

/*
 * A region name unique to this run, process and call
 * ("/bktest-RUN-PID-TAG-N"; RUN is the pid of tk_run_begin's caller, or of
 * the caller itself).  The process that made it unlinks it when it exits
 * normally (forked children leave with _exit and do not), and tk_run_end
 * removes every object of the run, also those of tests that failed (Check
 * ends a failed test with _exit).
 */
void tk_name(char *buf, size_t size, const char *tag);
void tk_run_begin(void);
void tk_run_end(void);

/* The slot of B owned by thread TID of process PID (state ACTIVE), found
 * through the public introspection calls, or -1; tk_self_slot: the calling
 * thread's. */
int tk_slot_of(bakery_t *b, pid_t pid, pid_t tid);
int tk_self_slot(bakery_t *b);

/* ---------------------------------------------------------------- time -- */

double tk_now(clockid_t clock);                          /* seconds */
uint64_t tk_ns(void);                                    /* CLOCK_MONOTONIC, ns */
struct timespec tk_in(clockid_t clock, double seconds);  /* now + seconds */
void tk_sleep_ms(double ms);
pid_t tk_gettid(void);

/* Poll COND(ARG) every 100 us until true (true) or TIMEOUT seconds (false). */
bool tk_wait_until(bool (*cond)(void *), void *arg, double timeout);

/* A flag in shared memory reaching VALUE within TIMEOUT seconds. */
bool tk_wait_flag(const volatile int *flag, int value, double timeout);

/* ----------------------------------------------------------- processes -- */

/* Zeroed memory shared with children forked afterwards. */
void *tk_shared(size_t size);

/* Fork a child that runs FN(ARG) and _exit()s with its result. */
pid_t tk_fork(int (*fn)(void *), void *arg);

/* Wait at most TIMEOUT seconds for PID; SIGKILL and reap it after that.
 * Its exit status, 128 + the signal that ended it, TK_KILLED if the time
 * ran out, or TK_LOST if waitpid failed (errno says why). */
#define TK_KILLED (-1)
#define TK_LOST   (-2)
int tk_reap(pid_t pid, double timeout);

/* SIGKILL PID and reap it; true if it died of the SIGKILL. */
bool tk_kill(pid_t pid);

/* A one-shot signal between processes or threads (a pipe). */
struct tk_gate { int fd[2]; };
void tk_gate_init(struct tk_gate *g);
void tk_gate_open(struct tk_gate *g);
/* true once the gate is open (or its writer is gone), false on timeout;
 * a signal does not cut the wait short */
bool tk_gate_wait(struct tk_gate *g, double timeout);
void tk_gate_close(struct tk_gate *g);

#endif
