/*
 * bug-token-kind.c - regression test (it was the reproducer of a fixed
 * library bug: region_mutex_sane() now checks the kind first).
 *
 * The robust mutexes in the region (each slot's liveness token, the lock
 * table's mutex) are handed to glibc's pthread_mutex_* as they are.  glibc
 * trusts the mutex's `__kind` field; a participant that rewrites it (or a
 * corrupted region) makes glibc abort() with an assertion failure, or raise
 * SIGILL (lock elision), in every process that then checks the token:
 *
 *   kind = priority-protect (0xc2), owner alive   bakery_recover: SIGABRT
 *                                                 (tpp.c: new_prio assertion)
 *   kind = priority-inherit (0xa0), owner dead    bakery_recover: SIGABRT
 *                                                 (pthread_mutex_trylock.c: `robust')
 *   table mutex kind = priority-protect           bakery_lock_open of a new
 *                                                 name: SIGABRT
 *
 * The contract says bad input never crashes the library.  The fuzzer found
 * the same (tests/fuzz/corpus/token-kind-*, replayed by `make check`).
 *
 * Possible fixes: before any pthread_mutex_* call on a region mutex, compare
 * its kind with the one pthread_mutex_init gives the library's attributes
 * (computed once), and treat a mismatch as BAKERY_EBADREGION (table mutex)
 * or "no proof of death" (token).  That stops a corrupted region; a hostile
 * writer racing the check can still win, so the complete fix keeps the
 * liveness proof out of memory the participants can write (OFD locks on
 * the object, per thread descriptor), see bug-robust-list.c.
 *
 * Exit status: 0 if every case survives with a documented answer, 1 if not.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostile.h"

#define KIND_PRIO_PROTECT 0xc2     /* PP | process-shared | error-check */
#define KIND_PRIO_INHERIT 0xa0     /* PI | process-shared */

struct stage {
	char region[H_NAME_SIZE];
	struct h_gate ready, release;
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
	h_gate_open(&st->ready);
	if (st->die)
		raise(SIGKILL);
	h_gate_wait(&st->release, 30);
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
	struct stage *st = h_shared(sizeof(*st));
	bakery_t *b = h_region(st->region, "kind", 4, 2);

	bakery_close(b);
	h_gate_init(&st->ready);
	h_gate_init(&st->release);
	return st;
}

/* A participant's token gets KIND; then another process reaps the slots. */
static int token_case(const char *what, int kind, int die)
{
	struct stage *st = stage_new();
	struct raw raw;
	pid_t pid;
	int bad;

	st->die = die;
	pid = h_fork(participant, st);
	if (!h_gate_wait(&st->ready, 10)) {
		printf("setup failed: %s\n", what);
		return 1;
	}
	if (die)
		h_reap(pid, 10);
	raw_map(&raw, st->region);
	raw.slots[0].token.__data.__kind = kind;
	bad = h_survives(what, victim_recover, st, 10);
	h_gate_open(&st->release);
	if (!die)
		h_reap(pid, 10);
	raw_unmap(&raw);
	return bad;
}

static int table_case(void)
{
	struct stage *st = stage_new();
	struct raw raw;
	int bad;

	raw_map(&raw, st->region);
	raw.hdr->table_mutex.__data.__kind = KIND_PRIO_PROTECT;
	bad = h_survives("table mutex kind priority-protect, then bakery_lock_open",
	                 victim_lock_open, st, 10);
	raw_unmap(&raw);
	return bad;
}

int main(void)
{
	int bad = 0;

	bad += token_case("token kind priority-protect, owner alive, then bakery_recover",
	                  KIND_PRIO_PROTECT, 0);
	bad += token_case("token kind priority-inherit, owner dead, then bakery_recover",
	                  KIND_PRIO_INHERIT, 1);
	bad += table_case();
	return bad ? 1 : 0;
}
