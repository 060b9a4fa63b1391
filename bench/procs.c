/* SPDX-License-Identifier: MIT */
/*
 * procs.c - process plumbing of bakery-bench: the control block children
 * share with the parent, futex flags to sequence them without burning the
 * CPU the measured processes need, forking, and reaping with a time limit so
 * that a mechanism that hangs costs a run, not the benchmark.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <urcu/arch.h>

#include "bench.h"

struct control *control_new(void)
{
	void *p = mmap(NULL, sizeof(struct control), PROT_READ | PROT_WRITE,
	               MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void control_reset(struct control *c)
{
	memset(c, 0, sizeof(*c));
}

void control_free(struct control *c)
{
	munmap(c, sizeof(*c));
}

/* ----------------------------------------------------------------- time -- */

int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void sleep_ns(int64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

struct usage usage_self(void)
{
	struct rusage u;
	struct usage r;

	getrusage(RUSAGE_SELF, &u);
	r.cpu_ns = (uint64_t)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000u +
	           (uint64_t)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000u;
	r.vcsw = (uint64_t)u.ru_nvcsw;
	r.ivcsw = (uint64_t)u.ru_nivcsw;
	return r;
}

void usage_into(struct child_result *r, const struct usage *since)
{
	struct usage now = usage_self();

	r->cpu_ns = now.cpu_ns - since->cpu_ns;
	r->vcsw = now.vcsw - since->vcsw;
	r->ivcsw = now.ivcsw - since->ivcsw;
}

/* Busy and total jiffies of all CPUs so far; false if /proc/stat is unreadable. */
static bool cpu_jiffies(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return false;
	/* user nice system idle iowait irq softirq steal */
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
	           &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4)
		return false;
	*total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	*busy = *total - v[3] - v[4];
	return true;
}

double cpus_busy(int64_t interval_ns)
{
	unsigned long long b0, t0, b1, t1;

	if (!cpu_jiffies(&b0, &t0))
		return -1;
	sleep_ns(interval_ns);
	if (!cpu_jiffies(&b1, &t1) || t1 <= t0)
		return -1;
	return (double)(b1 - b0) / (double)(t1 - t0);
}

/* ---------------------------------------------------------------- flags -- */

static void futex_wake(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void futex_wait(uint32_t *word, uint32_t seen, const struct timespec *rel)
{
	syscall(SYS_futex, word, FUTEX_WAIT, seen, rel, NULL, 0);
}

void flag_set(uint32_t *word, uint32_t value)
{
	__atomic_store_n(word, value, __ATOMIC_SEQ_CST);
	futex_wake(word);
}

void flag_inc(uint32_t *word)
{
	__atomic_add_fetch(word, 1, __ATOMIC_SEQ_CST);
	futex_wake(word);
}

void flag_wait(uint32_t *word, uint32_t value)
{
	uint32_t v;

	while ((v = __atomic_load_n(word, __ATOMIC_SEQ_CST)) != value)
		futex_wait(word, v, NULL);
}

void flag_wait_change(uint32_t *word, uint32_t seen)
{
	futex_wait(word, seen, NULL);
}

bool flag_wait_for(uint32_t *word, uint32_t value, int64_t timeout_ns)
{
	int64_t end = now_ns() + timeout_ns;
	uint32_t v;

	while ((v = __atomic_load_n(word, __ATOMIC_SEQ_CST)) != value) {
		int64_t left = end - now_ns();
		struct timespec rel;

		if (left <= 0)
			return false;
		rel.tv_sec = (time_t)(left / 1000000000);
		rel.tv_nsec = (long)(left % 1000000000);
		futex_wait(word, v, &rel);
	}
	return true;
}

/* ------------------------------------------------------------- children -- */

pid_t spawn(child_fn fn, struct mech *m, struct control *c, unsigned id)
{
	pid_t pid;

	fflush(NULL);   /* nothing buffered is written twice */
	pid = fork();
	if (pid == 0) {
		fn(m, c, id);
		_exit(0);
	}
	return pid;
}

bool reap(const pid_t *pids, unsigned n, int64_t timeout_ns)
{
	int64_t end = now_ns() + timeout_ns;
	unsigned left = n;
	bool clean = true;
	bool gone[BENCH_MAX_PROCS + 2] = { false };

	while (left) {
		for (unsigned i = 0; i < n; i++) {
			int st;

			if (gone[i] || waitpid(pids[i], &st, WNOHANG) != pids[i])
				continue;
			gone[i] = true;
			left--;
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				clean = false;
		}
		if (!left)
			break;
		if (now_ns() > end) {
			/* a hung mechanism: end the run, report it */
			for (unsigned i = 0; i < n; i++)
				if (!gone[i]) {
					kill(pids[i], SIGKILL);
					waitpid(pids[i], NULL, 0);
				}
			return false;
		}
		sleep_ns(1000000);
	}
	return clean;
}

/* (bench.h) */
unsigned run_children(child_fn fn, struct mech *m, struct control *c, pid_t *pids,
                      unsigned n_want, unsigned arrivals_each, double duration_s,
                      int64_t *elapsed_ns)
{
	unsigned n = 0;
	int64_t t0;

	while (n < n_want && (pids[n] = spawn(fn, m, c, n)) > 0)
		n++;
	flag_wait_for(&c->ready, n * arrivals_each, BENCH_SETUP_TIMEOUT_NS);
	t0 = now_ns();
	flag_set(&c->go, 1);
	sleep_ns((int64_t)(duration_s * 1e9));
	flag_set(&c->stop, 1);
	*elapsed_ns = now_ns() - t0;
	return n;
}

/* ------------------------------------------------------------ background -- */

void background_start(pid_t *pids, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] == 0) {
			volatile uint64_t x = 0;

			/* other work on the machine: it runs whenever a CPU
			 * would be idle, and gives way to everyone else */
			if (setpriority(PRIO_PROCESS, 0, 19) < 0)
				_exit(1);
			for (;;)
				x++;
		}
	}
}

void background_stop(pid_t *pids, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
}

/* ------------------------------------------------------------ occupancy -- */

void occupancy_visit(struct occupancy *o, int32_t me)
{
	/* one relaxation between the counter's read and write: the
	 * benchmark's critical section stays short */
	occupancy_in(o, (uint64_t)me, 1);
	occupancy_note_handoff(o, (uint64_t)me);
	occupancy_out(o, (uint64_t)me);
}
