/* SPDX-License-Identifier: MIT */
/*
 * run.h - the parts of `bakery run`: the options (run.c), the thread that
 * holds the lock (run_hold.c) and the command (run_exec.c).
 *
 * The wrapper and its command live and die together:
 *   - the lock is held by a thread of its own; the command is a child of
 *     the main thread, which lives as long as the process;
 *   - the command gets PR_SET_PDEATHSIG(SIGKILL): if the wrapper dies, so
 *     does the command, at once;
 *   - every signal another process sends to the wrapper is passed on to
 *     the command, and the wrapper does not die of it while the command
 *     runs; it ends when the command ends;
 *   - when the command dies of a signal (or the previous holder had died
 *     and the command did not exit 0), the lock thread ends without
 *     unlocking: the library's owner-death path then marks the lock
 *     owner-died, and the next holder is told BAKERY_OWNER_DEAD=1.
 */
#ifndef BAKERY_RUN_H
#define BAKERY_RUN_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#include "cli.h"

#define OWNER_DEAD_ENV "BAKERY_OWNER_DEAD"
#define SHARED_ENV "BAKERY_SHARED"     /* 1: the command runs as a reader */

enum run_wait {
	RUN_WAIT_FOREVER,
	RUN_WAIT_NONE,             /* -n, --nonblock */
	RUN_WAIT_FOR,              /* -w, --wait, --timeout SEC */
};

struct run_opts {
	const char *region, *lock;
	char region_buf[64];       /* the region derived from --file */
	enum bakery_algo algo;
	unsigned holders;          /* --holders K; 0: join the lock as it is */
	bool shared;               /* -s, --shared: take the lock as a reader */
	bool any_owner;            /* --any-owner: join another user's region */
	enum run_wait wait;
	double timeout;            /* seconds, with RUN_WAIT_FOR */
	int conflict_code;         /* exit code when the lock was busy */
	char **argv;               /* the command */
	char *shell_argv[4];       /* -c: sh -c COMMAND */
};

/* What becomes of the lock once the command has ended. */
enum run_verdict {
	RUN_RELEASE,               /* unlock (after bakery_consistent if owner-died) */
	RUN_ABANDON,               /* end the holding thread without unlocking */
};

/* The thread that takes the lock, holds it and gives it up. */
struct run_holder {
	bakery_lock_t *l;
	const struct run_opts *o;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool taken;                /* the lock call returned...      */
	int err;                   /* ...this                        */
	bool decided;              /* the main thread said...        */
	enum run_verdict verdict;  /* ...this                        */
};

/* Start the thread and wait for its lock call: 0, EOWNERDEAD (held), or
 * the lock call's error (the thread has ended then). */
int run_hold_start(struct run_holder *h, bakery_lock_t *l, const struct run_opts *o);
/* Tell the thread what to do with the lock and wait for it to end. */
void run_hold_finish(struct run_holder *h, enum run_verdict verdict);

/* The signals passed on to the command: every catchable one but SIGCHLD
 * and those a fault raises (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP,
 * SIGSYS), which must stay deliverable to the thread that faults. */
void run_forwarded_set(sigset_t *set);

/* Run the command to its end, with OWNER_DEAD_ENV=1 if OWNER_DEAD and
 * SHARED_ENV=1 if it runs as a reader.
 * Returns its exit code (128 + N if it died of signal N; *SIGNALED then)
 * or ours (EXIT_RUN_*) if it could not be started. */
int run_exec(struct cli *c, const struct run_opts *o, bool owner_dead, bool *signaled);

#endif /* BAKERY_RUN_H */
