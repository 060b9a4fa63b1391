/* SPDX-License-Identifier: MIT */
/*
 * unit.c - helpers shared by the Check unit suites (see unit.h).
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

#include "unit.h"
#include "child.h"

/* ------------------------------------------------------------- regions -- */

/* The Check runner's pid: every name of this run starts with "bkunit-RUNNER-",
 * so the runner can sweep what failed tests left behind (a failed check ends
 * the test process with _exit: no clean-up runs there). */
static pid_t runner;

void unit_name(char *buf, size_t size, const char *tag)
{
	static unsigned counter;

	snprintf(buf, size, "/bkunit-%d-%d-%s-%u", (int)(runner ? runner : getpid()),
	         (int)getpid(), tag, counter++);
}

/* Remove every /dev/shm entry of this run (regions and their temporaries). */
static void names_sweep(void)
{
	char prefix[64], path[512];
	struct dirent *e;
	DIR *d = opendir("/dev/shm");

	if (!d)
		return;
	snprintf(prefix, sizeof(prefix), "bkunit-%d-", (int)getpid());
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix))) {
			snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
			unlink(path);
		}
	closedir(d);
}

bakery_t *unit_region(char *name, const char *tag, unsigned slots, unsigned locks)
{
	struct bakery_config cfg = { .slots = slots, .locks = locks };
	bakery_t *b = NULL;
	int rc;

	unit_name(name, UNIT_NAME_SIZE, tag);
	rc = bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b);
	ck_assert_msg(rc == 0, "creating %s: %s", name, bakery_strerror(rc));
	return b;
}

bakery_lock_t *unit_lock(bakery_t *b, const char *lock, enum bakery_algo algo)
{
	bakery_lock_t *l = NULL;
	int rc = bakery_lock_open(b, lock, algo, &l);

	ck_assert_msg(rc == 0, "opening lock %s (%s): %s", lock,
	              bakery_algo_name(algo), bakery_strerror(rc));
	return l;
}

void unit_shm_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "/dev/shm/%s", name[0] == '/' ? name + 1 : name);
}

int unit_self_slot(bakery_t *b)
{
	struct bakery_region_info ri;
	struct bakery_slot_info si;

	if (bakery_region_info(b, &ri))
		return -1;
	for (unsigned i = 0; i < ri.slots; i++)
		if (bakery_slot_info(b, i, &si) == 0 && si.state == BAKERY_SLOT_ACTIVE &&
		    si.pid == getpid() && si.tid == unit_gettid())
			return (int)i;
	return -1;
}

/* ---------------------------------------------------------------- time -- */

double unit_now(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct timespec unit_in(clockid_t clock, double seconds)
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

pid_t unit_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

bool unit_wait_until(bool (*cond)(void *), void *arg, double timeout)
{
	double end = unit_now(CLOCK_MONOTONIC) + timeout;

	while (!cond(arg)) {
		if (unit_now(CLOCK_MONOTONIC) > end)
			return false;
		usleep(1000);
	}
	return true;
}

/* ----------------------------------------------------------- processes -- */

void *unit_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ck_assert_msg(p != MAP_FAILED, "mmap: %s", strerror(errno));
	return p;
}

void unit_gate_init(struct unit_gate *g)
{
	ck_assert_int_eq(pipe2(g->fd, O_CLOEXEC), 0);
}

void unit_gate_open(struct unit_gate *g)
{
	char c = 1;

	if (write(g->fd[1], &c, 1) != 1)
		perror("unit_gate_open");
}

bool unit_gate_wait(struct unit_gate *g, double timeout)
{
	struct pollfd p = { .fd = g->fd[0], .events = POLLIN };
	double end = unit_now(CLOCK_MONOTONIC) + timeout;
	char c;

	for (;;) {
		int ms = (int)((end - unit_now(CLOCK_MONOTONIC)) * 1000);
		int r = poll(&p, 1, ms > 0 ? ms : 0);

		if (r > 0)
			return read(g->fd[0], &c, 1) >= 0;
		if (r == 0 || errno != EINTR)
			return false;
	}
}

void unit_gate_close(struct unit_gate *g)
{
	close(g->fd[0]);
	close(g->fd[1]);
}

pid_t unit_fork(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

int unit_reap(pid_t pid, double timeout)
{
	int r = child_reap(pid, timeout);

	return r == CHILD_LOST ? -1 : r;
}

bool unit_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	return unit_reap(pid, 10) == 128 + SIGKILL;
}

/* -------------------------------------------------------------- holder -- */

static void *holder_main(void *arg)
{
	struct unit_holder *h = arg;

	h->lock_rc = bakery_lock(h->lock);
	unit_gate_open(&h->held);
	unit_gate_wait(&h->release, 60);
	h->unlock_rc = bakery_unlock(h->lock);
	return NULL;
}

void unit_holder_start(struct unit_holder *h, bakery_lock_t *lock)
{
	h->lock = lock;
	h->lock_rc = h->unlock_rc = -1;
	unit_gate_init(&h->held);
	unit_gate_init(&h->release);
	ck_assert_int_eq(pthread_create(&h->thread, NULL, holder_main, h), 0);
	ck_assert_msg(unit_gate_wait(&h->held, 10), "holder thread never got the lock");
	ck_assert_msg(h->lock_rc == 0, "holder's lock: %s", bakery_strerror(h->lock_rc));
}

void unit_holder_stop(struct unit_holder *h)
{
	unit_gate_open(&h->release);
	ck_assert_int_eq(pthread_join(h->thread, NULL), 0);
	ck_assert_msg(h->unlock_rc == 0, "holder's unlock: %s", bakery_strerror(h->unlock_rc));
	unit_gate_close(&h->held);
	unit_gate_close(&h->release);
}

struct holder_process {
	const char *region, *lock;
	enum bakery_algo algo;
	struct unit_gate held;
};

static int holder_process_main(void *arg)
{
	struct holder_process *h = arg;
	bakery_lock_t *l;
	bakery_t *b;

	if (bakery_open(h->region, 0, NULL, &b) || bakery_lock_open(b, h->lock, h->algo, &l))
		return 1;
	if (bakery_lock(l))
		return 2;
	unit_gate_open(&h->held);
	sleep(60);
	return 3;
}

pid_t unit_holder_process(const char *region, const char *lock, enum bakery_algo algo)
{
	struct holder_process h = { region, lock, algo, { { -1, -1 } } };
	pid_t pid;
	bool held;

	unit_gate_init(&h.held);
	pid = unit_fork(holder_process_main, &h);
	held = unit_gate_wait(&h.held, 10);
	unit_gate_close(&h.held);
	if (!held)
		unit_kill(pid);
	ck_assert_msg(held, "the holder process never took the lock");
	return pid;
}

/* ---------------------------------------------------------------- main -- */

int unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	runner = getpid();
	srunner_run_all(sr, CK_NORMAL);
	names_sweep();
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
