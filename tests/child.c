/* SPDX-License-Identifier: MIT */
/*
 * child.c - waiting for a child process with a time limit (child.h).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int child_reap(pid_t pid, double timeout)
{
	double end = now_s() + timeout;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return CHILD_LOST;
		if (now_s() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return CHILD_KILLED;
		}
		usleep(200);
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
