/* SPDX-License-Identifier: MIT */
/*
 * bug-token-kind.c - regression test (it was the reproducer of a fixed
 * library bug; the field it forged no longer exists).
 *
 * The liveness tokens used to be glibc robust mutexes in the region, handed
 * to pthread_mutex_* as they were.  glibc trusts a mutex's `__kind` field,
 * and a participant that rewrote it made glibc abort() (priority-protect or
 * priority-inherit kinds) in every process that then checked the token; the
 * fuzzer found the same (tests/fuzz/corpus/token-kind-*, still replayed).
 * Tokens are now bare robust futex words (token.c) that only the library
 * reads, so the nearest forgery left is the word itself, every bit set
 * (a TID, FUTEX_WAITERS and FUTEX_OWNER_DIED at once):
 *
 *   slot token word all ones, owner alive, then bakery_recover
 *   slot token word all ones, owner dead, then bakery_recover
 *   table token word all ones, then bakery_lock_open of a new name
 *
 * Each must return (0 or BAKERY_EBADREGION), not crash or hang.
 *
 * Exit status: 0 if every case survives with a documented answer, 1 if not.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostile.h"

#define WORD_ALL_ONES 0xffffffffu

struct stage {
	char region[TK_NAME_SIZE];
	struct tk_gate ready, release;
	int die;                   /* the participant dies instead of waiting */
};

/* A participant that owns a slot, then waits (or dies) holding its token. */
static int participant(void *arg)
{
	struct stage *st = arg;
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(st->region, 0, NULL, &b) || bakery_lock_open(b, "k", 0, &l) ||
	    bakery_lock(l) || bakery_unlock(l))
		return 10;
	tk_gate_open(&st->ready);
	if (st->die)
		raise(SIGKILL);
	tk_gate_wait(&st->release, 30);
	return 0;
}

static int victim_recover(void *arg)
{
	struct stage *st = arg;
	bakery_t *b;
	unsigned n;
	int err;

	if (bakery_open(st->region, 0, NULL, &b))
		return 20;
	err = bakery_recover(b, &n);
	return err == 0 || err == BAKERY_EBADREGION ? 0 : 21;
}

static int victim_lock_open(void *arg)
{
	struct stage *st = arg;
	bakery_t *b;
	bakery_lock_t *l;
	int err;

	if (bakery_open(st->region, 0, NULL, &b))
		return 30;
	err = bakery_lock_open(b, "new", BAKERY_ALGO_DEFAULT, &l);
	return err == 0 || err == BAKERY_EBADREGION ? 0 : 31;
}

static struct stage *stage_new(void)
{
	struct stage *st = tk_shared(sizeof(*st));
	bakery_t *b = h_region(st->region, "kind", 4, 2);

	bakery_close(b);
	tk_gate_init(&st->ready);
	tk_gate_init(&st->release);
	return st;
}

/* A participant's token word gets WORD; then another process reaps the slots. */
static int token_case(const char *what, uint32_t word, int die)
{
	struct stage *st = stage_new();
	struct raw raw;
	pid_t pid;
	int bad;

	st->die = die;
	pid = tk_fork(participant, st);
	if (!tk_gate_wait(&st->ready, 10)) {
		printf("setup failed: %s\n", what);
		return 1;
	}
	if (die)
		tk_reap(pid, 10);
	raw_map(&raw, st->region);
	*raw_token(&raw, 0) = word;
	bad = h_survives(what, victim_recover, st, 10);
	tk_gate_open(&st->release);
	if (!die)
		tk_reap(pid, 10);
	raw_unmap(&raw);
	return bad;
}

static int table_case(void)
{
	struct stage *st = stage_new();
	struct raw raw;
	int bad;

	raw_map(&raw, st->region);
	*raw_token(&raw, 2u * raw.nslots) = WORD_ALL_ONES;
	bad = h_survives("table token word all ones, then bakery_lock_open",
	                 victim_lock_open, st, 10);
	raw_unmap(&raw);
	return bad;
}

int main(void)
{
	int bad = 0;

	bad += token_case("token word all ones, owner alive, then bakery_recover",
	                  WORD_ALL_ONES, 0);
	bad += token_case("token word all ones, owner dead, then bakery_recover",
	                  WORD_ALL_ONES, 1);
	bad += table_case();
	return bad ? 1 : 0;
}
