/* SPDX-License-Identifier: MIT */
/*
 * run_exec.c - the job's command: started as a child of the main thread,
 * tied to the wrapper's life with PR_SET_PDEATHSIG, sent every signal the
 * wrapper is sent, and waited for, stops included (job control); or, with
 * -F, run in the wrapper's place.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t continued;   /* a SIGCONT came */
static pid_t wrapper_pid;

/* Signals a fault raises in the thread that faulted: forwarding them would
 * loop on the fault (and the library's SIGBUS guard needs its own). */
static bool raised_by_faults(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
	       sig == SIGTRAP || sig == SIGSYS;
}

static bool forwardable(int sig)
{
	if (sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD || raised_by_faults(sig))
		return false;
	/* glibc keeps the two below SIGRTMIN for itself */
	return sig < 32 || (sig >= SIGRTMIN && sig <= SIGRTMAX);
}

/* Was SIG ignored when we were started (nohup, `trap '' SIG`, SIGINT and
 * SIGQUIT in a shell's asynchronous job)?  Nothing here ever ignores a
 * signal, so its action now says. */
static bool ignored(int sig)
{
	struct sigaction now;

	return sigaction(sig, NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) &&
	       now.sa_handler == SIG_IGN;
}

void run_forwarded_set(sigset_t *set)
{
	sigemptyset(set);
	for (int sig = 1; sig < NSIG; sig++)
		if (forwardable(sig) && !ignored(sig))
			sigaddset(set, sig);
}

/* The signals the wrapper was sent while the command ran, and the one the
 * command died of (0: none): run_die_as_command. */
static volatile sig_atomic_t received[NSIG];
static int command_signal;

static void forward(int sig, siginfo_t *info, void *ctx)
{
	(void)ctx;
	if (sig == SIGCONT)
		continued = 1;
	received[sig] = 1;
	/* A signal from the terminal (si_code > 0) reached the command already
	 * (same process group); one a process sent to us is passed on, unless
	 * we raised it ourselves (SIGPIPE of our own write). */
	if (child_pid > 0 && info->si_code <= 0 && info->si_pid != wrapper_pid)
		kill((pid_t)child_pid, sig);
}

/* Catch every forwarded signal, held back until child_pid is known. */
static void forwarding_start(sigset_t *old)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	run_forwarded_set(&set);
	sigprocmask(SIG_BLOCK, &set, old);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&set, sig))
			sigaction(sig, &sa, NULL);
}

/* Set the command's environment.  Here, not in the child: between fork
 * and exec a child of a threaded process may call only async-signal-safe
 * functions, which setenv is not. */
static void command_environment(const struct run_opts *o, bool owner_dead)
{
	if (owner_dead)
		setenv(OWNER_DEAD_ENV, "1", 1);
	else
		unsetenv(OWNER_DEAD_ENV);      /* not inherited from an outer run */
	if (o->shared)
		setenv(SHARED_ENV, "1", 1);
	else
		unsetenv(SHARED_ENV);
}

/* The exec of the command failed with ERR: say so, and the exit code. */
static int exec_failed(const struct cli *c, const struct run_opts *o, int err)
{
	fprintf(stderr, "bakery: %s: %s: %s\n", c->cmd, o->argv[0], strerror(err));
	return err == ENOENT ? o->codes.not_found : o->codes.no_exec;
}

static void child_exec(const struct cli *c, const struct run_opts *o, pid_t parent,
                       const sigset_t *mask)
{
	sigset_t set;

	/* the caught ones back to their default; the ignored ones, never
	 * caught, stay ignored through the exec, as the caller meant */
	run_forwarded_set(&set);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&set, sig))
			signal(sig, SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	/* die with the wrapper; if it died before this took effect, we were
	 * reparented already and must not run at all */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(c->fail_code);
	execvp(o->argv[0], o->argv);
	_exit(exec_failed(c, o, errno));
}

/* The shell's convention: the exit status, or 128 + the signal's number. */
static int status_code(int status, bool *signaled)
{
	*signaled = WIFSIGNALED(status);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_RUN_FAIL;
}

/* The command stopped of SIG: a job-control stop (Ctrl-Z, a read or write
 * from the background) stops the wrapper the same way, so that the shell,
 * which waits for the wrapper, sees the job stopped and gives the prompt
 * back; continued (fg, bg), the wrapper continues the command.  The
 * kernel ignores such a stop in an orphaned process group: then neither
 * stops.  A SIGSTOP sent to the command alone stops only the command. */
static void stop_as(pid_t pid, int sig)
{
	struct sigaction dfl, old;
	sigset_t set, mask;

	if (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
		return;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&set);
	sigaddset(&set, sig);
	continued = 0;
	sigaction(sig, &dfl, &old);
	pthread_sigmask(SIG_UNBLOCK, &set, &mask);
	raise(sig);             /* returns once continued, or ignored */
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	sigaction(sig, &old, NULL);
	if (continued)
		kill(pid, SIGCONT);
}

/* Wait for the command to end, following its stops. */
static pid_t wait_command(pid_t pid, int *status)
{
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, WUNTRACED);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || !WIFSTOPPED(*status))
			return r;
		stop_as(pid, WSTOPSIG(*status));
	}
}

int run_exec(struct cli *c, const struct run_opts *o, bool owner_dead, bool *signaled)
{
	sigset_t old;
	int status;
	pid_t pid, r;

	*signaled = false;
	command_environment(o, owner_dead);
	fflush(NULL);
	wrapper_pid = getpid();
	forwarding_start(&old);
	pid = fork();
	if (pid == 0)
		child_exec(c, o, wrapper_pid, &old);
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return cli_fail(c, "cannot start a process: %s", strerror(errno));
	}
	child_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	r = wait_command(pid, &status);
	/* the forwarded signals stay caught: until the lock is given up the
	 * wrapper must not die of one */
	child_pid = 0;
	if (r < 0)
		return cli_fail(c, "waiting for the command: %s", strerror(errno));
	if (WIFSIGNALED(status))
		command_signal = WTERMSIG(status);
	return status_code(status, signaled);
}

void run_die_as_command(void)
{
	int sig = command_signal;
	sigset_t set;

	if (sig <= 0 || sig >= NSIG || !received[sig])
		return;
	fflush(NULL);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);             /* returns only for a signal whose default is to go on */
}

int run_exec_in_place(struct cli *c, const struct run_opts *o, bool owner_dead)
{
	command_environment(o, owner_dead);
	fflush(NULL);
	execvp(o->argv[0], o->argv);
	return exec_failed(c, o, errno);
}
