/* SPDX-License-Identifier: MIT */
/*
 * tk.c - the test kit every suite shares (see tk.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/system.h>

#include "bakery.h"
#include "tk.h"

static void setup_failed(const char *what)
{
	fprintf(stderr, "test kit: %s: %s\n", what, strerror(errno));
	exit(TK_SETUP_FAILED);
}

/* ------------------------------------------------------------- regions -- */

#define MAX_NAMES 256

static char made[MAX_NAMES][TK_NAME_SIZE];
static unsigned nmade;
static pid_t maker;
static pid_t run_id;

static void names_unlink(void)
{
	if (getpid() != maker)
		return;         /* a child that exited normally: not its names */
	for (unsigned i = 0; i < nmade; i++)
		bakery_unlink(made[i]);
}

void tk_name(char *buf, size_t size, const char *tag)
{
	static unsigned counter;

	snprintf(buf, size, "/bktest-%d-%d-%s-%u", (int)(run_id ? run_id : getpid()),
	         (int)getpid(), tag, counter++);
	if (maker != getpid()) {
		maker = getpid();
		nmade = 0;
		atexit(names_unlink);
	}
	if (nmade < MAX_NAMES)
		snprintf(made[nmade++], TK_NAME_SIZE, "%s", buf);
}

void tk_run_begin(void)
{
	run_id = getpid();
}

void tk_run_end(void)
{
	char prefix[32], path[512];
	struct dirent *e;
	DIR *d = opendir("/dev/shm");
	size_t n;

	if (!d)
		return;
	/* regions and their temporary objects alike */
	n = (size_t)snprintf(prefix, sizeof(prefix), "bktest-%d-", (int)run_id);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, n)) {
			snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
			unlink(path);
		}
	closedir(d);
}

int tk_slot_of(bakery_t *b, pid_t pid, pid_t tid)
{
	struct bakery_region_info ri;
	struct bakery_slot_info si;

	if (bakery_region_info(b, &ri))
		return -1;
	for (unsigned i = 0; i < ri.slots; i++)
		if (bakery_slot_info(b, i, &si) == 0 && si.state == BAKERY_SLOT_ACTIVE &&
		    si.pid == pid && si.tid == tid)
			return (int)i;
	return -1;
}

int tk_self_slot(bakery_t *b)
{
	return tk_slot_of(b, getpid(), tk_gettid());
}

/* ---------------------------------------------------------------- time -- */

double tk_now(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

uint64_t tk_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

struct timespec tk_in(clockid_t clock, double seconds)
{
	struct timespec t;
	long long ns;

	clock_gettime(clock, &t);
	ns = (long long)t.tv_sec * 1000000000LL + t.tv_nsec + (long long)(seconds * 1e9);
	if (ns < 0)
		ns = 0;
	t.tv_sec = (time_t)(ns / 1000000000LL);
	t.tv_nsec = (long)(ns % 1000000000LL);
	return t;
}

void tk_sleep_ms(double ms)
{
	long long ns = (long long)(ms * 1e6);
	struct timespec t = { (time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL) };

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

pid_t tk_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

bool tk_wait_until(bool (*cond)(void *), void *arg, double timeout)
{
	uint64_t end = tk_ns() + (uint64_t)(timeout * 1e9);

	while (!cond(arg)) {
		if (tk_ns() > end)
			return false;
		usleep(100);
	}
	return true;
}

bool tk_wait_flag(const volatile int *flag, int value, double timeout)
{
	uint64_t end = tk_ns() + (uint64_t)(timeout * 1e9);

	while (CMM_LOAD_SHARED(*flag) != value) {
		if (tk_ns() > end)
			return false;
		usleep(100);
	}
	return true;
}

/* ----------------------------------------------------------- processes -- */

void *tk_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		setup_failed("mmap");
	return p;
}

pid_t tk_fork(int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(NULL);           /* nothing buffered is written twice */
	pid = fork();
	if (pid < 0)
		setup_failed("fork");
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

int tk_reap(pid_t pid, double timeout)
{
	double end = tk_now(CLOCK_MONOTONIC) + timeout;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return TK_LOST;
		if (tk_now(CLOCK_MONOTONIC) > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return TK_KILLED;
		}
		usleep(200);
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

bool tk_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	return tk_reap(pid, 10) == 128 + SIGKILL;
}

void tk_gate_init(struct tk_gate *g)
{
	if (pipe2(g->fd, O_CLOEXEC) < 0)
		setup_failed("pipe");
}

void tk_gate_open(struct tk_gate *g)
{
	char c = 1;

	if (write(g->fd[1], &c, 1) != 1)
		setup_failed("gate write");
}

bool tk_gate_wait(struct tk_gate *g, double timeout)
{
	struct pollfd p = { .fd = g->fd[0], .events = POLLIN };
	double end = tk_now(CLOCK_MONOTONIC) + timeout;
	char c;

	for (;;) {
		int ms = (int)((end - tk_now(CLOCK_MONOTONIC)) * 1000);
		int r = poll(&p, 1, ms > 0 ? ms : 0);

		if (r > 0)
			return read(g->fd[0], &c, 1) >= 0;
		if (r == 0 || errno != EINTR)
			return false;
	}
}

void tk_gate_close(struct tk_gate *g)
{
	close(g->fd[0]);
	close(g->fd[1]);
}
