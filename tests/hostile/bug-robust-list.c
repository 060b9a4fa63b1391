/* SPDX-License-Identifier: MIT */
/*
 * bug-robust-list.c - regression test (it was the reproducer of a fixed
 * library bug: tokens are no longer glibc robust mutexes in the region).
 *
 * A slot's liveness token used to be a robust pthread mutex in the region,
 * and while a thread held it glibc linked it into that thread's robust list
 * through the mutex's own `__list.__next` / `__list.__prev` words, in the
 * region.  Unlocking it (bakery_close, thread exit) unlinked it with
 *     next->__prev = mutex->__list.__prev;  prev->__next = mutex->__list.__next;
 * using those two words as they were: anyone who could write the region
 * could make a holder's process store a value of their choice at an address
 * of their choice (the victim died of SIGSEGV in bakery_close).
 *
 * Now the token is a bare robust futex word whose list node lies on a page
 * private to the holder (token.c).  Here the whole page around the victim's
 * token, the word included, is filled with pointer-like garbage while the
 * victim holds it and keeps a robust mutex of its own linked in front of it;
 * the victim then unlocks its own mutex (glibc relinks around our node),
 * closes the region, and takes its mutex again (the list must still be
 * sound).
 *
 * Exit status: 0 if the victim does all that normally, 1 if not.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "hostile.h"

struct stage {
	char region[TK_NAME_SIZE];
	struct tk_gate ready, go;
};

static void robust_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

/* Owns a slot (token held) behind a robust mutex of its own, then closes
 * the region when told to. */
static int victim(void *arg)
{
	struct stage *st = arg;
	pthread_mutex_t own;
	bakery_t *b;
	bakery_lock_t *l;

	robust_init(&own);
	if (bakery_open(st->region, 0, NULL, &b) || bakery_lock_open(b, "r", 0, &l) ||
	    bakery_lock(l) || bakery_unlock(l) || bakery_lock_close(l))
		return 10;
	if (pthread_mutex_lock(&own))
		return 11;
	tk_gate_open(&st->ready);
	if (!tk_gate_wait(&st->go, 30))
		return 12;
	if (pthread_mutex_unlock(&own))
		return 13;
	if (bakery_close(b))
		return 14;
	if (pthread_mutex_lock(&own) || pthread_mutex_unlock(&own))
		return 15;
	return 0;
}

int main(void)
{
	struct stage *st = tk_shared(sizeof(*st));
	bakery_t *b = h_region(st->region, "rlist", 4, 2);
	struct raw raw;
	pid_t pid;
	int st_exit;

	bakery_close(b);
	tk_gate_init(&st->ready);
	tk_gate_init(&st->go);
	pid = tk_fork(victim, st);
	if (!tk_gate_wait(&st->ready, 10)) {
		printf("setup failed\n");
		return 1;
	}
	raw_map(&raw, st->region);
	/* the victim's token, slot 0 of a fresh region: its whole page */
	{
		uintptr_t page = (uintptr_t)raw_token(&raw, 0) & ~(uintptr_t)(raw.page_size - 1);
		uint64_t *w = (uint64_t *)page;

		for (size_t i = 0; i < raw.page_size / sizeof(*w); i++)
			w[i] = 0x10;
	}
	tk_gate_open(&st->go);
	st_exit = tk_reap(pid, 10);
	raw_unmap(&raw);
	if (st_exit == 0) {
		printf("ok:   victim closed its region after its token's page was rewritten\n");
		return 0;
	}
	printf("BUG:  victim after its token's page was rewritten: %s %d\n",
	       st_exit > 128 ? "signal" : "status", st_exit > 128 ? st_exit - 128 : st_exit);
	return 1;
}
