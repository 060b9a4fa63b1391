/* SPDX-License-Identifier: MIT */
/*
 * run.c - `bakery run REGION LOCK [--algo A] [--timeout SEC] -- COMMAND...`:
 * like flock(1), hold a named lock while a command runs.
 *
 * The region is created if it does not exist.  This process takes the lock,
 * runs COMMAND as its child, waits for it and releases the lock; it exits
 * with the command's status.  If this process dies while the command runs,
 * the next acquirer is told the owner died: that is the point of the tool.
 *
 * Owner died: when the previous holder died inside its critical section,
 * the command runs anyway, with BAKERY_OWNER_DEAD=1 in its environment so
 * that it can repair what it protects.  Its exit status 0 says "repaired":
 * only then is the lock marked consistent.  Any other status leaves the lock
 * not recoverable, exactly as a robust pthread mutex unlocked without
 * pthread_mutex_consistent().
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define OWNER_DEAD_ENV "BAKERY_OWNER_DEAD"

/* The signals passed on to the command while it runs, so that `kill` of
 * this process ends the command and still releases the lock cleanly. */
static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM };
static volatile sig_atomic_t child_pid;

struct run_opts {
	const char *region, *lock;
	enum bakery_algo algo;
	bool timed;
	double timeout;            /* seconds */
	char **argv;               /* the command */
};

/* ------------------------------------------------------------- options -- */

static bool parse_timeout(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1e9)
		return false;
	*out = v;
	return true;
}

static int run_parse(struct cli *c, int argc, char **argv, struct run_opts *o)
{
	const char *algo = NULL, *timeout = NULL;
	const struct cli_opt opts[] = {
		{ "algo", &algo, NULL }, { "timeout", &timeout, NULL }, { NULL, NULL, NULL }
	};
	struct cli_args a;
	int err;

	if ((err = cli_parse(c, argc, argv, opts, 2, true, &a)))
		return err;
	memset(o, 0, sizeof(*o));
	o->region = a.pos[0];
	o->lock = a.pos[1];
	if (!a.nrest)
		return cli_usage_error(c, "missing COMMAND");
	o->argv = a.rest;
	if (algo && bakery_algo_parse(algo, &o->algo))
		return cli_usage_error(c, "unknown algorithm '%s' (lamport, boulangerie, "
		                       "black-white, jayanti)", algo);
	if (timeout && !parse_timeout(timeout, &o->timeout))
		return cli_usage_error(c, "--timeout must be a number of seconds, such as 2.5");
	o->timed = timeout != NULL;
	return 0;
}

/* ------------------------------------------------------------- locking -- */

static int acquire(bakery_lock_t *l, const struct run_opts *o)
{
	struct timespec at;
	time_t whole = (time_t)o->timeout;

	if (!o->timed)
		return bakery_lock(l);
	clock_gettime(CLOCK_MONOTONIC, &at);
	at.tv_nsec += (long)((o->timeout - (double)whole) * 1e9);
	at.tv_sec += whole + at.tv_nsec / 1000000000L;
	at.tv_nsec %= 1000000000L;
	return bakery_clocklock(l, CLOCK_MONOTONIC, &at);
}

/* Take the lock; 0 (OWNER_DEAD set if the previous holder died) or an exit code. */
static int lock_take(struct cli *c, bakery_lock_t *l, const struct run_opts *o, bool *owner_dead)
{
	int err = acquire(l, o);

	*owner_dead = err == EOWNERDEAD;
	if (err == 0 || err == EOWNERDEAD)
		return 0;
	if (err == ETIMEDOUT || err == EBUSY) {
		fprintf(stderr, "bakery: run %s: lock not acquired within %g s\n", c->what,
		        o->timeout);
		return EXIT_RUN_TIMEOUT;
	}
	if (err == ENOTRECOVERABLE)
		return cli_fail(c, "lock is not recoverable: a holder died and the repair "
		                "failed (remove the region to start afresh)");
	return cli_fail(c, "%s", bakery_strerror(err));
}

/* --------------------------------------------------------- the command -- */

static void forward(int sig, siginfo_t *info, void *ctx)
{
	(void)ctx;
	/* A signal from the terminal reached the command already (same process
	 * group); one sent by a process to us alone is passed on. */
	if (child_pid > 0 && info->si_code <= 0)
		kill((pid_t)child_pid, sig);
}

static void forwarding_start(sigset_t *old)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++) {
		sigaction(forwarded[i], &sa, NULL);
		sigaddset(&set, forwarded[i]);
	}
	/* held back until child_pid is known */
	sigprocmask(SIG_BLOCK, &set, old);
}

static void child_exec(const struct run_opts *o, bool owner_dead, const sigset_t *mask)
{
	int e;

	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		signal(forwarded[i], SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (owner_dead)
		setenv(OWNER_DEAD_ENV, "1", 1);
	else
		unsetenv(OWNER_DEAD_ENV);      /* not inherited from an outer run */
	execvp(o->argv[0], o->argv);
	e = errno;
	fprintf(stderr, "bakery: run: %s: %s\n", o->argv[0], strerror(e));
	_exit(e == ENOENT ? EXIT_RUN_NOTFOUND : EXIT_RUN_NOEXEC);
}

/* The shell's convention: the exit status, or 128 + the signal's number. */
static int status_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_RUN_FAIL;
}

/* Run the command to its end; its exit code, or ours if it could not start. */
static int command_run(struct cli *c, const struct run_opts *o, bool owner_dead)
{
	sigset_t old;
	int status;
	pid_t pid, r;

	fflush(NULL);
	forwarding_start(&old);
	pid = fork();
	if (pid == 0)
		child_exec(o, owner_dead, &old);
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return cli_fail(c, "cannot start a process: %s", strerror(errno));
	}
	child_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	do
		r = waitpid(pid, &status, 0);
	while (r < 0 && errno == EINTR);
	child_pid = 0;
	return r < 0 ? cli_fail(c, "waiting for the command: %s", strerror(errno))
	             : status_code(status);
}

/* ------------------------------------------------------------ subcommand -- */

/* After EOWNERDEAD: the command's success is the repair. */
static void owner_dead_settle(struct cli *c, bakery_lock_t *l, int code)
{
	if (code == 0 && bakery_consistent(l) == 0)
		return;
	fprintf(stderr, "bakery: run %s: the previous holder had died and the command "
	        "exited with status %d: lock left not recoverable\n", c->what, code);
}

static int run_locked(struct cli *c, bakery_lock_t *l, const struct run_opts *o)
{
	bool owner_dead;
	int code = lock_take(c, l, o, &owner_dead);

	if (code)
		return code;
	if (owner_dead)
		fprintf(stderr, "bakery: run %s: the previous holder died holding the lock; "
		        "running the command with " OWNER_DEAD_ENV "=1\n", c->what);
	code = command_run(c, o, owner_dead);
	if (owner_dead)
		owner_dead_settle(c, l, code);
	bakery_unlock(l);
	return code;
}

/* The algorithm the existing lock NAME uses, or NULL. */
static const char *lock_algo(bakery_t *b, const char *name)
{
	struct bakery_region_info r;
	struct bakery_lock_info li;

	if (bakery_region_info(b, &r))
		return NULL;
	for (unsigned i = 0; i < r.locks; i++)
		if (bakery_lock_info(b, i, &li) == 0 && !strcmp(li.name, name))
			return bakery_algo_name(li.algo);
	return NULL;
}

static int lock_open_fail(struct cli *c, bakery_t *b, const struct run_opts *o, int err)
{
	const char *have;

	if (err == EINVAL)
		return cli_fail(c, "invalid lock name (1 to %d printable characters, no '/')",
		                BAKERY_LOCK_NAME_MAX);
	if (err == ENAMETOOLONG)
		return cli_fail(c, "lock name longer than %d characters", BAKERY_LOCK_NAME_MAX);
	if (err == BAKERY_EALGO && (have = lock_algo(b, o->lock)))
		return cli_fail(c, "the lock uses %s; --algo %s cannot take part in it",
		                have, bakery_algo_name(o->algo));
	return cli_fail(c, "%s", bakery_strerror(err));
}

int cmd_run(struct cli *c, int argc, char **argv)
{
	struct run_opts o;
	bakery_lock_t *l;
	bakery_t *b;
	int err;

	if ((err = run_parse(c, argc, argv, &o)))
		return err < 0 ? 0 : err;
	cli_set_what(c, o.region, o.lock);
	if ((err = cli_open(c, o.region, BAKERY_CREATE, NULL, &b)))
		return err;
	err = bakery_lock_open(b, o.lock, o.algo, &l);
	if (err) {
		err = lock_open_fail(c, b, &o, err);
		bakery_close(b);
		return err;
	}
	err = run_locked(c, l, &o);
	bakery_lock_close(l);
	bakery_close(b);
	return err;
}
