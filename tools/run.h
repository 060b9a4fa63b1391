/* SPDX-License-Identifier: MIT */
/*
 * run.h - the parts of `bakery run` and `bakery flock`: their options
 * (run.c, flock.c), the job (run_job.c), its lock, named or a file's
 * (run_lock.c, run_file.c), the thread that holds it (run_hold.c), the
 * job's lifetime lock (run_life.c) and the command (run_exec.c).
 *
 * A job holds two locks, taken in this order:
 *   - the bakery lock, held by a thread of the wrapper: it orders the jobs
 *     (first come, first served), admits readers together or k holders,
 *     and tells the next holder when a holder died inside (owner died);
 *   - the lifetime lock: an OFD lock (fcntl F_OFD_SETLKW) on a byte of the
 *     shared-memory object of the bakery lock's region (for a file's lock,
 *     the user's region of path locks), opened anew by the wrapper (an
 *     open file description of its own) without O_CLOEXEC, so that the
 *     command and every process it starts inherit it, as flock(1)'s
 *     descriptor is inherited.  The kernel releases it when the last
 *     process that has the description closes it or dies, however it dies.
 * The next job takes the bakery lock first, so the order and the
 * owner-died report stay the bakery lock's; then it waits for the
 * lifetime lock, that is, until the last process the previous job started
 * is gone, even if the wrapper or the command was killed (bounded by its
 * -w deadline; with -n, busy is a conflict).  Readers take a read lock on
 * the byte, writers a write lock; a lock of k holders has k bytes (units),
 * each job holding one.  The byte is chosen by a hash of the lock's name
 * (for a file, its identity), not by its entry in the lock table: a lock
 * removed and created again (a path lock taken back while idle, as the
 * previous job's processes may leave it), or an entry of the table
 * reused, keeps waiting for the processes of the jobs before it (a hash
 * collision makes two locks wait for each other's leftovers, never lets
 * two jobs in).  With -o (--close) the command does not inherit it: the
 * wrapper holds it alone, and the command's children are not waited for.
 * What escapes: a process that closes every inherited descriptor (a
 * daemon that double-forks into a new session and closes them all);
 * setsid alone does not.  The lifetime lock is this tool's convention:
 * a program that takes the same bakery lock through the library does not
 * wait for it.
 *
 * The wrapper and its command live and die together:
 *   - the lock is held by a thread of its own; the command is a child of
 *     the main thread, which lives as long as the process;
 *   - the command gets PR_SET_PDEATHSIG(SIGKILL): if the wrapper dies, so
 *     does the command, at once (its children keep the lifetime lock);
 *   - every signal another process sends to the wrapper is passed on to
 *     the command, and the wrapper does not die of it while the command
 *     runs; it ends when the command ends;
 *   - job control: when the command stops (Ctrl-Z, SIGTTIN, SIGSTOP), the
 *     wrapper stops itself with the same signal, so the shell gets its
 *     prompt back; continued, it continues the command;
 *   - when the command dies of a signal (or the previous holder had died
 *     and the command did not exit 0), the lock thread ends without
 *     unlocking: the library's owner-death path then marks the lock
 *     owner-died, and the next holder is told BAKERY_OWNER_DEAD=1.
 *     SIGPIPE with --sigpipe-ok is a normal end (`producer | head`).
 */
#ifndef BAKERY_RUN_H
#define BAKERY_RUN_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "cli.h"

#define OWNER_DEAD_ENV "BAKERY_OWNER_DEAD"
#define SHARED_ENV "BAKERY_SHARED"     /* 1: the command runs as a reader */

enum run_wait {
	RUN_WAIT_FOREVER,          /* also -w over 1e9 s (about 31.7 years) */
	RUN_WAIT_NONE,             /* -n, --nonblock (also -w 0) */
	RUN_WAIT_FOR,              /* -w, --wait, --timeout SEC */
};

/* The exit codes of a job that did not run its command's course:
 * `bakery run`'s (75, 125, ...) or flock(1)'s (1, 64, 66, ...). */
struct run_codes {
	int conflict;              /* the lock was busy (-n) or -w expired    */
	int no_file;               /* the file to lock could not be opened    */
	int not_found;             /* the command was not found               */
	int no_exec;               /* the command could not be executed       */
};

struct run_opts {
	const char *region, *lock;
	const char *file;          /* the lock of this file (--file, flock FILE) */
	enum bakery_algo algo;
	unsigned holders;          /* --holders K; 0: join the lock as it is */
	bool biased;               /* --biased: a new lock is biased; joining,
	                            * the lock must be (false: join any) */
	bool shared;               /* -s, --shared: take the lock as a reader */
	bool any_owner;            /* --any-owner: join another user's region */
	enum run_wait wait;
	double timeout;            /* seconds, with RUN_WAIT_FOR */
	struct timespec started;   /* CLOCK_MONOTONIC: when the job began */
	struct timespec deadline;  /* ...and when its -w expires */
	struct run_codes codes;
	bool quiet;                /* flock: say nothing of the lock (conflicts,
	                            * owner died) unless verbose */
	bool close;                /* -o: the command does not keep the lock */
	bool no_fork;              /* -F (flock), --no-fork: exec the command */
	bool sigpipe_ok;           /* death by SIGPIPE is a normal end */
	bool verbose;
	char **argv;               /* the command */
	char *shell_argv[4];       /* -c: $SHELL -c COMMAND */
};

/* ---------------------------------------------------------- options -- */

/* The command into O: -c SHELL's (SHELL not NULL: $SHELL -c SHELL, as
 * flock(1) runs it; no other argument then), or A's arguments after the
 * operands.  0, or a usage error's exit code. */
int run_command_args(struct cli *c, const char *shell, const struct cli_args *a,
                     struct run_opts *o);
/* -w WAIT (or NULL), -n, -E CONFLICT (or NULL) into O (O->codes set
 * first), as flock(1) reads them: 0, or a usage error's exit code (C's
 * failure code for a -w of 2^63 s or more, as flock(1) fails to set its
 * timer). */
int run_wait_values(struct cli *c, const char *wait, bool nonblock, const char *conflict,
                    struct run_opts *o);
/* flock(1)'s descriptor form, `flock 9` (as in `( flock 9; ... ) 9>file`):
 * A's one operand a number, and no command (SHELL: -c's, or NULL). */
bool run_descriptor_form(const struct cli_args *a, const char *shell);
/* Why the descriptor form has no bakery equivalent, and what to do; the
 * command of that form follows ": ". */
#define RUN_NO_DESCRIPTOR "a bakery lock belongs to a live process, not to a descriptor; " \
	"lock a file around a command instead"
/* Set O->started to now, and O->deadline from O->timeout. */
void run_start_clock(struct run_opts *o);

/* ------------------------------------------------------- job's lock -- */

/* The lock a job takes: a named lock of a region, or the path lock of a
 * file or directory (bakery.h, "path locks"). */
struct run_lock {
	bakery_t *b;               /* a named lock's region...               */
	bakery_lock_t *l;          /* ...and the lock                        */
	bakery_path_t *p;          /* or a path lock (then B and L are NULL) */
	const char *region;        /* the region's name and the lock's: where */
	const char *name;          /* the job's lifetime lock is              */
	struct bakery_path_info path;   /* a path lock's names                */
};

/* Open (creating them if missing) the region O->region and its lock
 * O->lock into *K: 0, or an exit code after a message.  EAGAIN (a lock
 * table held by a stopped process) is tried again as long as the job
 * would wait. */
int run_named_open(struct cli *c, const struct run_opts *o, struct run_lock *k);

/* Open the path lock of the file or directory O->file into *K (run_file.c;
 * a missing file is created, as flock(1) does): 0, or an exit code after
 * a message. */
int run_file_open(struct cli *c, const struct run_opts *o, struct run_lock *k);

/* The lock calls on K (run_lock.c), as for any lock: one call taking it as
 * O says (waiting, trying, or until O's deadline; shared with -s), the
 * unlock, the repair's bakery_consistent. */
int run_lock_take(const struct run_lock *k, const struct run_opts *o);
int run_lock_unlock(const struct run_lock *k);
int run_lock_consistent(const struct run_lock *k);
/* K's capacity (1 for a mutex and a path lock). */
unsigned run_lock_units(const struct run_lock *k);
/* bakery_lock_info of K: 0 or an error number. */
int run_lock_info(const struct run_lock *k, struct bakery_lock_info *li);
/* Close K's handles (all that are set). */
void run_lock_close(struct run_lock *k);

/* ------------------------------------------------------------- jobs -- */

/* Take the lock O names, run the command, give the lock up: the exit code
 * (the command's, or one of O->codes, C's fail code). */
int run_job(struct cli *c, struct run_opts *o);
/* A conflict (the lock busy, the wait expired): WHY said on stderr
 * unless O->quiet without O->verbose, and O's conflict code returned. */
int run_conflict(const struct cli *c, const struct run_opts *o, const char *why);

/* ----------------------------------------------------- lock thread -- */

/* What becomes of the lock once the command has ended. */
enum run_verdict {
	RUN_RELEASE,               /* unlock (after bakery_consistent if owner-died) */
	RUN_ABANDON,               /* end the holding thread without unlocking */
	RUN_GIVE_BACK,             /* the command did not run: unlock, but leave
	                              an owner-died mark as it was (abandon) */
};

/* The thread that takes the lock, holds it and gives it up. */
struct run_holder {
	const struct run_lock *k;
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
 * the lock call's error (the thread has ended then).  EAGAIN (a lock
 * table held by a stopped process) is tried again until the deadline. */
int run_hold_start(struct run_holder *h, const struct run_lock *k, const struct run_opts *o);
/* Tell the thread what to do with the lock and wait for it to end. */
void run_hold_finish(struct run_holder *h, enum run_verdict verdict);

/* Has O's deadline passed?  (Never, without -w.) */
bool run_deadline_passed(const struct run_opts *o);
/* ERR is EAGAIN (a lock table or a slot held for 2 s by a stopped
 * process) and the job would still wait: true after a pause, to try
 * again; false otherwise. */
bool run_retry(const struct run_opts *o, int err);

/* -------------------------------------------------- lifetime lock -- */

/* The job's lifetime lock (run_life.c; what it is: above). */
struct run_life {
	int fd;                    /* the region's object, opened anew; -1: none */
	off_t first;               /* the lock's units: bytes FIRST...       */
	unsigned units;            /* ...FIRST + UNITS - 1                   */
};

/* Open REGION's shared-memory object anew for the lock named KEY of UNITS
 * holders; inherited by the command unless O->close.  0 or an errno. */
int run_life_open(struct run_life *lf, const char *region, const char *key, unsigned units,
                  const struct run_opts *o);
/* Take a unit, waiting as O says: 0, EBUSY (-n), ETIMEDOUT, EINTR (a
 * signal that would end the wrapper came: its number in *SIGNO), or an
 * errno. */
int run_life_take(struct run_life *lf, const struct run_opts *o, int *signo);
/* Close the wrapper's descriptor (the lock stays with whoever else has
 * it: the command's processes). */
void run_life_close(struct run_life *lf);

/* --------------------------------------------------------- command -- */

/* The signals passed on to the command: every catchable one but SIGCHLD,
 * those a fault raises (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS),
 * which must stay deliverable to the thread that faults, and those the
 * wrapper was started with ignored, which stay ignored (the command
 * inherits them so). */
void run_forwarded_set(sigset_t *set);

/* Run the command to its end, with OWNER_DEAD_ENV=1 if OWNER_DEAD and
 * SHARED_ENV=1 if it runs as a reader.
 * Returns its exit code (128 + N if it died of signal N; *SIGNALED then)
 * or ours if it could not be started. */
int run_exec(struct cli *c, const struct run_opts *o, bool owner_dead, bool *signaled);
/* Once the lock is given up and the region closed: if the command died of a
 * signal that the wrapper itself was sent (Ctrl-C reaches both), die of it
 * too, as flock(1), which does not catch it, would have: a shell running a
 * script stops at a Ctrl-C only when its child died of SIGINT.  A signal
 * sent to the command alone gives exit status 128 + n, as flock's. */
void run_die_as_command(void);
/* -F: become the command (the lifetime lock goes with it); returns only
 * if that failed, with the exit code. */
int run_exec_in_place(struct cli *c, const struct run_opts *o, bool owner_dead);

#endif /* BAKERY_RUN_H */
