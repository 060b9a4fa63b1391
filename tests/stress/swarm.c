/* SPDX-License-Identifier: MIT */
/*
 * swarm.c - spawn, time, collect and clean up a group of hammers (swarm.h).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "swarm.h"

static char prog_dir[4096] = ".";

void swarm_init(const char *argv0)
{
	const char *top = getenv("top_builddir");
	const char *slash = strrchr(argv0, '/');
	size_t len;

	if (top && *top)
		snprintf(prog_dir, sizeof(prog_dir), "%s/tests/stress", top);
	else if (slash)
		snprintf(prog_dir, sizeof(prog_dir), "%.*s", (int)(slash - argv0), argv0);
	/* run through a libtool wrapper, we are .libs/lt-NAME: the hammers
	 * (or their wrappers) are one level up */
	len = strlen(prog_dir);
	if (len >= 6 && !strcmp(prog_dir + len - 6, "/.libs"))
		prog_dir[len - 6] = '\0';
	else if (!strcmp(prog_dir, ".libs"))
		strcpy(prog_dir, ".");
}

const char *swarm_prog(const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", prog_dir, name);
	return buf;
}

double swarm_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int swarm_open(struct swarm *s, const char *tag, unsigned slots)
{
	struct bakery_config cfg = { .slots = slots };
	int err;

	memset(s, 0, sizeof(*s));
	snprintf(s->region, sizeof(s->region), "/bakery-stress-%ld-%s", (long)getpid(), tag);
	/* leftovers of a killed earlier run with our pid */
	bakery_unlink(s->region);
	occupancy_unlink(s->region);
	err = bakery_open(s->region, BAKERY_CREATE | BAKERY_EXCL, &cfg, &s->b);
	if (err)
		return err;
	s->occ = occupancy_map(s->region);
	if (!s->occ) {
		swarm_close(s);
		return ENOMEM;
	}
	return 0;
}

/* In the child: die with the driver, stdout to the pipe, exec. */
static void exec_hammer(int pipe_w, const char *prog, char **argv)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || dup2(pipe_w, STDOUT_FILENO) < 0)
		_exit(127);
	close(pipe_w);
	execv(prog, argv);
	fprintf(stderr, "swarm: exec %s: %s\n", prog, strerror(errno));
	_exit(127);
}

int swarm_spawn(struct swarm *s, const char *prog, const char *lock, const char *algo,
                unsigned long iterations, const char *mode, const char *const *opts)
{
	char iters[32], *argv[16];
	unsigned argc = 0;
	int fds[2];
	pid_t pid;

	if (s->n >= SWARM_MAX || pipe(fds))
		return -1;
	snprintf(iters, sizeof(iters), "%lu", iterations);
	argv[argc++] = (char *)prog;
	argv[argc++] = s->region;
	argv[argc++] = (char *)lock;
	argv[argc++] = (char *)algo;
	argv[argc++] = iters;
	argv[argc++] = (char *)mode;
	for (; opts && *opts && argc < 15; opts++)
		argv[argc++] = (char *)*opts;
	argv[argc] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		exec_hammer(fds[1], prog, argv);
	}
	close(fds[1]);
	s->pid[s->n] = pid;
	s->out[s->n] = fds[0];
	s->n++;
	return 0;
}

/* Read hammer I's result line: "acquired N owner_dead N violations N". */
static void collect(struct swarm *s, unsigned i)
{
	char buf[256];
	ssize_t len = read(s->out[i], buf, sizeof(buf) - 1);
	unsigned long od, viol;

	close(s->out[i]);
	s->out[i] = -1;
	if (len <= 0)
		return;
	buf[len] = '\0';
	s->reported[i] = sscanf(buf, "acquired %lu owner_dead %lu violations %lu",
	                        &s->acquired[i], &od, &viol) == 3;
}

static void kill_all(struct swarm *s, const bool *done)
{
	for (unsigned i = 0; i < s->n; i++)
		if (!done[i])
			kill(s->pid[i], SIGKILL);
}

void swarm_wait(struct swarm *s, double timeout_s, bool (*stop)(struct swarm *s))
{
	const struct timespec ms = { 0, 1000000 };
	double t0 = swarm_now(), start = 0;
	bool done[SWARM_MAX] = { false }, killed = false;
	unsigned left = s->n;

	while (left) {
		double now = swarm_now();

		if (!start && uatomic_read(&s->occ->arrived) >= s->n)
			start = now;
		if (!killed && (now - t0 > timeout_s || (stop && stop(s)))) {
			s->timed_out = now - t0 > timeout_s;
			s->stopped = !s->timed_out;
			kill_all(s, done);
			killed = true;
		}
		for (unsigned i = 0; i < s->n; i++)
			if (!done[i] && waitpid(s->pid[i], &s->status[i], WNOHANG) == s->pid[i]) {
				done[i] = true;
				left--;
				collect(s, i);
			}
		if (left)
			nanosleep(&ms, NULL);
	}
	s->seconds = swarm_now() - (start ? start : t0);
}

bool swarm_hammer_ok(const struct swarm *s, unsigned i)
{
	int st = s->status[i];

	if (WIFSIGNALED(st)) {
		fprintf(stderr, "  hammer %u (pid %ld) killed by signal %d%s\n", i, (long)s->pid[i],
		        WTERMSIG(st), WTERMSIG(st) == SIGABRT ? " (a library assertion?)" : "");
		return false;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "  hammer %u (pid %ld) exited with status %d\n", i,
		        (long)s->pid[i], WEXITSTATUS(st));
		return false;
	}
	if (!s->reported[i]) {
		fprintf(stderr, "  hammer %u (pid %ld) printed no result line\n", i, (long)s->pid[i]);
		return false;
	}
	return true;
}

void swarm_close(struct swarm *s)
{
	if (s->occ)
		munmap(s->occ, sizeof(*s->occ));
	if (s->b)
		bakery_close(s->b);
	bakery_unlink(s->region);
	occupancy_unlink(s->region);
	s->occ = NULL;
	s->b = NULL;
}
