/* SPDX-License-Identifier: MIT */
/*
 * hostile.c - helpers of the hostile-participant and misuse tests (see
 * hostile.h).  They abort() on a failure of their own (a test that cannot
 * set its stage up must not pass), and need no Check, so the stand-alone
 * reproducers use them too.
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostile.h"
#include "child.h"

static void die(const char *what, int err)
{
	fprintf(stderr, "hostile test setup: %s: %s\n", what, bakery_strerror(err));
	abort();
}

/* ------------------------------------------------------------- regions -- */

#define MAX_NAMES 64

static char made[MAX_NAMES][H_NAME_SIZE];
static unsigned nmade;
static pid_t maker;

static void names_unlink(void)
{
	if (getpid() != maker)
		return;         /* a child that exited normally: not its names */
	for (unsigned i = 0; i < nmade; i++)
		bakery_unlink(made[i]);
}

static pid_t run_id;

void h_run_begin(void)
{
	run_id = getpid();
}

void h_run_end(void)
{
	char prefix[32];
	struct dirent *e;
	DIR *d = opendir("/dev/shm");
	size_t n;

	if (!d)
		return;
	n = (size_t)snprintf(prefix, sizeof(prefix), "bkhostile-%d-", (int)run_id);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, n)) {
			char name[300];
			snprintf(name, sizeof(name), "/%s", e->d_name);
			shm_unlink(name);
		}
	closedir(d);
}

void h_name(char *buf, size_t size, const char *tag)
{
	static unsigned counter;

	snprintf(buf, size, "/bkhostile-%d-%s-%d-%u", (int)(run_id ? run_id : getpid()), tag,
	         (int)getpid(), counter++);
	if (maker != getpid()) {
		maker = getpid();
		nmade = 0;
		atexit(names_unlink);
	}
	if (nmade < MAX_NAMES)
		snprintf(made[nmade++], H_NAME_SIZE, "%s", buf);
}

bakery_t *h_region(char *name, const char *tag, unsigned slots, unsigned locks)
{
	struct bakery_config cfg = { .slots = slots, .locks = locks };
	bakery_t *b;
	int err;

	h_name(name, H_NAME_SIZE, tag);
	err = bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b);
	if (err)
		die("bakery_open", err);
	return b;
}

bakery_lock_t *h_lock(bakery_t *b, const char *lock, enum bakery_algo algo)
{
	bakery_lock_t *l;
	int err = bakery_lock_open(b, lock, algo, &l);

	if (err)
		die("bakery_lock_open", err);
	return l;
}

unsigned h_lock_index(bakery_lock_t *l)
{
	unsigned i;
	int err = bakery_lock_index(l, &i);

	if (err)
		die("bakery_lock_index", err);
	return i;
}

pid_t h_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int h_slot_of(bakery_t *b, pid_t pid, pid_t tid)
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

/* --------------------------------------------------------- the raw view -- */

void raw_map(struct raw *r, const char *name)
{
	struct bakery_shm_header h;
	struct stat st;

	r->fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (r->fd < 0 || fstat(r->fd, &st) < 0 ||
	    pread(r->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		die("raw_map", errno);
	r->size = (size_t)h.total_size;
	r->base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED)
		die("raw_map: mmap", errno);
	r->hdr = (struct bakery_shm_header *)r->base;
	r->slots = (struct bakery_shm_slot *)(r->base + h.slots_off);
	r->locks = (struct bakery_shm_lock *)(r->base + h.locks_off);
	r->active = (uint64_t *)(r->base + h.active_off);
	r->regs = (struct bakery_shm_reg *)(r->base + h.regs_off);
	r->nslots = h.nslots;
	r->nlocks = h.nlocks;
	r->active_words = h.active_words;
	r->tokens_off = h.tokens_off;
	r->page_size = h.page_size;
}

void raw_unmap(struct raw *r)
{
	munmap(r->base, r->size);
	close(r->fd);
}

struct bakery_shm_reg *raw_reg(struct raw *r, unsigned lock, unsigned slot)
{
	return &r->regs[(size_t)lock * r->nslots + slot];
}

uint32_t *raw_token(struct raw *r, unsigned i)
{
	return (uint32_t *)(r->base + token_offset(r->tokens_off, r->page_size, i));
}

/* ----------------------------------------------------------- processes -- */

pid_t h_fork(int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

int h_reap(pid_t pid, double timeout)
{
	int r = child_reap(pid, timeout);

	if (r == CHILD_LOST)
		die("waitpid", errno);
	return r;
}

int h_survives(const char *what, int (*fn)(void *), void *arg, double timeout)
{
	int st = h_reap(h_fork(fn, arg), timeout);

	if (st == 0) {
		printf("ok:   %s\n", what);
		fflush(stdout);
		return 0;
	}
	if (st < 0)
		printf("BUG:  %s: hangs (killed after %.0f s)\n", what, timeout);
	else if (st > 128)
		printf("BUG:  %s: crashes (signal %d, %s)\n", what, st - 128, strsignal(st - 128));
	else
		printf("BUG:  %s: wrong answer (step %d)\n", what, st);
	fflush(stdout);
	return 1;
}

void *h_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", errno);
	return p;
}

void h_gate_init(struct h_gate *g)
{
	if (pipe(g->fd) < 0)
		die("pipe", errno);
}

void h_gate_open(struct h_gate *g)
{
	if (write(g->fd[1], "o", 1) != 1)
		die("gate write", errno);
}

bool h_gate_wait(struct h_gate *g, double timeout)
{
	struct pollfd p = { .fd = g->fd[0], .events = POLLIN };
	char c;

	if (poll(&p, 1, (int)(timeout * 1000)) != 1)
		return false;
	return read(g->fd[0], &c, 1) >= 0;
}

void h_gate_close(struct h_gate *g)
{
	close(g->fd[0]);
	close(g->fd[1]);
}

/* ---------------------------------------------------------------- time -- */

double h_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct timespec h_in(double seconds)
{
	struct timespec t;
	long ns;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += (time_t)seconds;
	ns = t.tv_nsec + (long)((seconds - (double)(time_t)seconds) * 1e9);
	t.tv_sec += ns / 1000000000L;
	t.tv_nsec = ns % 1000000000L;
	return t;
}

bool h_wait_until(bool (*cond)(void *), void *arg, double timeout)
{
	double end = h_now() + timeout;

	while (!cond(arg)) {
		if (h_now() > end)
			return false;
		usleep(1000);
	}
	return true;
}
