/* SPDX-License-Identifier: MIT */
/*
 * test_tokens.c - a liveness token (the robust futex word a slot's owner
 * holds) that someone else rewrote while the owner lives.
 *
 *   word cleared (no owner)    no proof of death: honest waiters keep
 *                              waiting (trylock EBUSY, timedlock ETIMEDOUT)
 *                              while the holder is inside; the lock goes on
 *                              once it lets go
 *   forged FUTEX_OWNER_DIED    indistinguishable from a real death: the
 *                              waiter recovers the live holder's slot and
 *                              enters with EOWNERDEAD (the protected state
 *                              may be inconsistent, which it is told); the
 *                              real holder's unlock then returns EPERM.
 *                              Mutual exclusion is lost: the price of a
 *                              forged proof, documented, not a crash.
 *
 * Everything else near a token word is written by nobody, and its
 * robust-list node is in the holder's private memory: bug-robust-list.c.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "hostile.h"

#define FUTEX_OWNER_DIED_BIT 0x40000000

struct holder {
	char region[TK_NAME_SIZE];
	struct tk_gate ready, release;
};

/* Holds lock "t" until released; exits with its unlock's result. */
static int holder(void *arg)
{
	struct holder *h = arg;
	bakery_t *b;
	bakery_lock_t *l;
	int err;

	if (bakery_open(h->region, 0, NULL, &b) ||
	    bakery_lock_open(b, "t", BAKERY_ALGO_DEFAULT, &l) || bakery_lock(l))
		return 100;
	tk_gate_open(&h->ready);
	tk_gate_wait(&h->release, 30);
	err = bakery_unlock(l);
	return err == EPERM ? 1 : err ? 101 : 0;
}

/* A holder process in a fresh region; *slot gets its slot. */
static pid_t holder_start(enum bakery_algo algo, struct holder **hp, bakery_t **b,
                          bakery_lock_t **l, int *slot)
{
	struct holder *h = tk_shared(sizeof(*h));
	pid_t pid;

	*b = h_region(h->region, "token", 4, 2);
	*l = h_lock(*b, "t", algo);
	tk_gate_init(&h->ready);
	tk_gate_init(&h->release);
	pid = tk_fork(holder, h);
	ck_assert_msg(tk_gate_wait(&h->ready, 10), "the holder never got the lock");
	*slot = tk_slot_of(*b, pid, pid);
	ck_assert_int_ge(*slot, 0);
	*hp = h;
	return pid;
}

static int *raw_token_int(struct raw *raw, int slot)
{
	return (int *)raw_token(raw, (unsigned)slot);
}

START_TEST(token_cleared_while_owner_holds)
{
	struct holder *h;
	bakery_t *b;
	bakery_lock_t *l;
	struct timespec soon;
	struct raw raw;
	int slot;
	pid_t pid = holder_start((enum bakery_algo)_i, &h, &b, &l, &slot);

	raw_map(&raw, h->region);
	CMM_STORE_SHARED(*raw_token_int(&raw, slot), 0);
	ck_assert_int_eq(bakery_trylock(l), EBUSY);
	soon = tk_in(CLOCK_REALTIME, 0.3);
	ck_assert_int_eq(bakery_timedlock(l, &soon), ETIMEDOUT);
	tk_gate_open(&h->release);
	ck_assert_int_eq(tk_reap(pid, 10), 0);          /* its unlock: 0 */
	soon = tk_in(CLOCK_REALTIME, 10);
	ck_assert_int_eq(bakery_timedlock(l, &soon), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

START_TEST(forged_owner_died_while_owner_holds)
{
	struct holder *h;
	bakery_t *b;
	bakery_lock_t *l;
	struct timespec soon;
	struct raw raw;
	int slot;
	pid_t pid = holder_start((enum bakery_algo)_i, &h, &b, &l, &slot);

	raw_map(&raw, h->region);
	CMM_STORE_SHARED(*raw_token_int(&raw, slot), FUTEX_OWNER_DIED_BIT | (int)pid);
	soon = tk_in(CLOCK_REALTIME, 10);
	ck_assert_int_eq(bakery_timedlock(l, &soon), EOWNERDEAD);
	ck_assert_int_eq(bakery_consistent(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	tk_gate_open(&h->release);
	ck_assert_int_eq(tk_reap(pid, 10), 1);          /* its unlock: EPERM */
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* The lock table's token held, by its word, by a thread ID no kernel gives
 * (at or above PID_MAX_LIMIT, 4194304 on 64-bit; the fuzzer's corpus holds
 * such words), with no holder record on its line: a new lock is refused
 * with BAKERY_EBADREGION at once, in a blocking call too, where an
 * unprovable holder would get EAGAIN after the table's 2 s bound.  The
 * lock table keeps working once the word is cleared. */
START_TEST(table_token_held_by_impossible_tid)
{
	static const uint32_t tids[] = { 4194304, 0x06060606, 0x3fffffff };
	char region[TK_NAME_SIZE];
	bakery_t *b = h_region(region, "tidmax", 4, 4);
	bakery_lock_t *l;
	struct raw raw;
	uint32_t *word;

	raw_map(&raw, region);
	word = raw_token(&raw, 2 * raw.nslots);
	ck_assert_uint_eq(CMM_LOAD_SHARED(*word), 0);
	CMM_STORE_SHARED(*word, tids[_i]);
	ck_assert_int_eq(bakery_lock_open(b, "new", BAKERY_ALGO_DEFAULT, &l), BAKERY_EBADREGION);
	CMM_STORE_SHARED(*word, 0);
	ck_assert_int_eq(bakery_lock_open(b, "new", BAKERY_ALGO_DEFAULT, &l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

static Suite *tokens_suite(void)
{
	Suite *s = suite_create("hostile tokens");
	TCase *tc = tcase_create("tokens");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, token_cleared_while_owner_holds, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, forged_owner_died_while_owner_holds, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, table_token_held_by_impossible_tid, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return h_run_suite(tokens_suite());
}
