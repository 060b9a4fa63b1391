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

static void die(const char *what, int err)
{
	fprintf(stderr, "hostile test setup: %s: %s\n", what, bakery_strerror(err));
	abort();
}

/* ------------------------------------------------------------- regions -- */

bakery_t *h_region(char *name, const char *tag, unsigned slots, unsigned locks)
{
	struct bakery_config cfg = { .slots = slots, .locks = locks };
	bakery_t *b;
	int err;

	tk_name(name, TK_NAME_SIZE, tag);
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

int h_survives(const char *what, int (*fn)(void *), void *arg, double timeout)
{
	int st = tk_reap(tk_fork(fn, arg), timeout);

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


