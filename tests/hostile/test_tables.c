/* SPDX-License-Identifier: MIT */
/*
 * test_tables.c - garbage in the shared tables of a live region: indices
 * and sizes out of range, unterminated names, unknown algorithms, states
 * that are none of the known ones.  Checked: no crash, no access outside the
 * mapping (the sanitizer build runs these too), errors where the API has
 * one, and honest participants still lock and recover.
 *
 *   slots_hwm beyond nslots        scans stay within the slot table
 *   Jayanti proxy word             a FIN word naming a slot past the table, or
 *                                  of a stale generation, or a STEP index past
 *                                  the table: the finisher counts as gone and
 *                                  the passage is completed, the slot freed
 *   lock name without terminator   lock_info gives 63 characters and a NUL;
 *                                  the 63-character name does not match it
 *   algo out of range / 0          bakery_lock_open: BAKERY_EBADREGION;
 *                                  lock_info shows "default"; an open handle
 *                                  keeps working; a dead slot is recovered
 *   lock entry state garbage       not found (ENOENT in lock_info), never
 *                                  reused: a new name takes another entry
 *   active set all ones            bits past the slots are never followed
 *   slot state out of range        shown as active; never claimed; no crash
 *   slot token index out of range  bakery_open: BAKERY_EBADREGION; an open
 *   (or its revoker's)             handle claims the slot and repairs it
 *   bias word garbage              on a lock of an algorithm that cannot
 *                                  be biased, or of k holders: opening it
 *                                  is BAKERY_EBADREGION; on a biased lock,
 *                                  a value naming no slot is shown as
 *                                  none and revoked by the next lock call,
 *                                  and a huge revocation count only caps
 *                                  the grant's backoff
 *   region shrunk, then opened     bakery_open: BAKERY_EBADREGION
 *   region grown under its users   nothing changes; new openers accept it
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <check.h>

#include "hostile.h"

/* lib/algo/jayanti.c's proxy word */
#define PROXY_STEP (UINT64_C(1) << 62)
#define PROXY_FIN  (UINT64_C(2) << 62)

/* One passage through every algorithm's lock of B, and a recovery pass. */
static void honest_passages(bakery_t *b)
{
	static const char *names[] = { "lamport", "boulangerie", "black-white", "jayanti" };
	unsigned reclaimed;

	for (unsigned a = 0; a < 4; a++) {
		bakery_lock_t *l = h_lock(b, names[a], (enum bakery_algo)(a + 1));

		ck_assert_int_eq(bakery_lock(l), 0);
		ck_assert_int_eq(bakery_unlock(l), 0);
		ck_assert_int_eq(bakery_trylock(l), 0);
		ck_assert_int_eq(bakery_unlock(l), 0);
		ck_assert_int_eq(bakery_lock_close(l), 0);
	}
	ck_assert_int_eq(bakery_recover(b, &reclaimed), 0);
}

static int child_passages(void *arg)
{
	const char *region = arg;
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(region, 0, NULL, &b) || bakery_lock_open(b, "jayanti", 0, &l))
		return 10;
	if (bakery_lock(l) || bakery_unlock(l) || bakery_close(b))
		return 11;
	return 0;
}

static void check_introspection(bakery_t *b)
{
	struct bakery_region_info ri;
	struct bakery_slot_info si;
	struct bakery_lock_info li;

	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	for (unsigned i = 0; i < ri.slots; i++)
		ck_assert_int_eq(bakery_slot_info(b, i, &si), 0);
	for (unsigned i = 0; i < ri.locks; i++) {
		int err = bakery_lock_info(b, i, &li);
		ck_assert(err == 0 || err == ENOENT);
		if (!err)
			ck_assert_int_lt(li.holder, (int)ri.slots);
	}
}

START_TEST(slots_hwm_beyond_capacity)
{
	static const uint32_t hwm[] = { UINT32_MAX, 5, 4096 };
	char name[TK_NAME_SIZE];
	bakery_t *b = h_region(name, "hwm", 4, 4);
	struct raw raw;

	raw_map(&raw, name);
	CMM_STORE_SHARED(raw.hdr->slots_hwm, hwm[_i]);
	honest_passages(b);
	check_introspection(b);
	ck_assert_int_eq(tk_reap(tk_fork(child_passages, name), 20), 0);
	CMM_STORE_SHARED(raw.hdr->slots_hwm, hwm[_i]);
	honest_passages(b);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* ------------------------------------------------------- Jayanti proxies -- */

struct waiter {
	char region[TK_NAME_SIZE];
};

static int jayanti_waiter(void *arg)
{
	struct waiter *w = arg;
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(w->region, 0, NULL, &b) ||
	    bakery_lock_open(b, "j", BAKERY_ALGO_JAYANTI, &l))
		return 10;
	bakery_lock(l);         /* queues behind the test; killed there */
	return 11;
}

static bool has_waiter(void *arg)
{
	struct bakery_lock_info li;

	return bakery_lock_info(arg, 0, &li) == 0 && li.waiters == 1;
}

/* The proxy word a hostile writes into the dead waiter's registers. */
static uint64_t forged_proxy(int variant, uint32_t gen)
{
	switch (variant) {
	case 0:  return PROXY_FIN | ((uint64_t)gen << 16) | 0xffffu;   /* slot past the table */
	case 1:  return PROXY_FIN | ((uint64_t)(gen + 7) << 16) | 0;    /* stale generation */
	default: return PROXY_STEP | 0xffffffffu;                       /* index past the table */
	}
}

START_TEST(jayanti_proxy_word_out_of_range)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = h_region(name, "proxy", 4, 1);
	bakery_lock_t *l = h_lock(b, "j", BAKERY_ALGO_JAYANTI);
	struct waiter *w = tk_shared(sizeof(*w));
	struct bakery_slot_info si;
	struct raw raw;
	unsigned reclaimed;
	pid_t pid;
	int dead;

	snprintf(w->region, sizeof(w->region), "%s", name);
	ck_assert_int_eq(bakery_lock(l), 0);
	pid = tk_fork(jayanti_waiter, w);
	ck_assert_msg(tk_wait_until(has_waiter, b, 10), "the waiter never queued");
	dead = tk_slot_of(b, pid, pid);
	ck_assert_int_ge(dead, 0);
	kill(pid, SIGKILL);
	ck_assert_int_eq(tk_reap(pid, 10), 128 + SIGKILL);

	raw_map(&raw, name);
	CMM_STORE_SHARED(raw_reg(&raw, 0, (unsigned)dead)->proxy,
	                 forged_proxy(_i, CMM_LOAD_SHARED(raw.slots[dead].gen)));
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_recover(b, &reclaimed), 0);
	ck_assert_uint_eq(reclaimed, 1);
	ck_assert_int_eq(bakery_slot_info(b, (unsigned)dead, &si), 0);
	ck_assert_int_eq(si.state, BAKERY_SLOT_FREE);
	ck_assert_uint_eq(CMM_LOAD_SHARED(raw_reg(&raw, 0, (unsigned)dead)->proxy), 0);
	ck_assert_uint_eq(CMM_LOAD_SHARED(raw_reg(&raw, 0, (unsigned)dead)->number), 0);
	/* not in the critical section when it died: a plain acquisition */
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* ------------------------------------------------------------ lock table -- */

START_TEST(unterminated_lock_name)
{
	char name[TK_NAME_SIZE], ln[BAKERY_LOCK_NAME_MAX + 2];
	bakery_t *b = h_region(name, "name", 4, 4);
	struct bakery_lock_info li;
	struct raw raw;
	bakery_lock_t *l, *l2;
	unsigned idx;

	memset(ln, 'x', BAKERY_LOCK_NAME_MAX);
	ln[BAKERY_LOCK_NAME_MAX] = '\0';
	l = h_lock(b, ln, BAKERY_ALGO_DEFAULT);
	idx = h_lock_index(l);
	raw_map(&raw, name);
	raw.locks[idx].name[BAKERY_LOCK_NAME_MAX] = 'y';     /* 64 bytes, no NUL */

	ck_assert_int_eq(bakery_lock_info(b, idx, &li), 0);
	ck_assert_uint_eq(strlen(li.name), BAKERY_LOCK_NAME_MAX);
	ck_assert_str_eq(li.name, ln);
	/* the 63-character name is not that entry any more: a new one */
	ck_assert_int_eq(bakery_lock_open(b, ln, BAKERY_ALGO_DEFAULT, &l2), 0);
	ck_assert_uint_ne(h_lock_index(l2), idx);
	ck_assert_int_eq(bakery_lock_close(l2), 0);
	ln[BAKERY_LOCK_NAME_MAX] = 'y';
	ln[BAKERY_LOCK_NAME_MAX + 1] = '\0';
	ck_assert_int_eq(bakery_lock_open(b, ln, BAKERY_ALGO_DEFAULT, &l2), ENAMETOOLONG);
	/* bytes no valid name has */
	memset(raw.locks[idx].name, 0xff, sizeof(raw.locks[idx].name));
	ck_assert_int_eq(bakery_lock_info(b, idx, &li), 0);
	ck_assert_uint_eq(strlen(li.name), BAKERY_LOCK_NAME_MAX);
	/* the open handle addresses its entry by index: it still works */
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

static int die_holding(void *arg)
{
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(arg, 0, NULL, &b) || bakery_lock_open(b, "a", BAKERY_ALGO_DEFAULT, &l) ||
	    bakery_lock(l))
		return 10;
	raise(SIGKILL);
	return 11;
}

START_TEST(lock_algo_out_of_range)
{
	static const uint32_t bad[] = { 99, BAKERY_ALGO_DEFAULT, UINT32_MAX };
	char name[TK_NAME_SIZE];
	bakery_t *b = h_region(name, "algo", 4, 4);
	bakery_lock_t *l = h_lock(b, "a", BAKERY_ALGO_LAMPORT), *l2;
	struct bakery_lock_info li;
	struct raw raw;
	unsigned idx = h_lock_index(l), reclaimed;
	char *shared = tk_shared(TK_NAME_SIZE);

	snprintf(shared, TK_NAME_SIZE, "%s", name);
	ck_assert_int_eq(tk_reap(tk_fork(die_holding, shared), 10), 128 + SIGKILL);
	raw_map(&raw, name);
	CMM_STORE_SHARED(raw.locks[idx].algo, bad[_i]);

	ck_assert_int_eq(bakery_lock_open(b, "a", BAKERY_ALGO_DEFAULT, &l2), BAKERY_EBADREGION);
	ck_assert_int_eq(bakery_lock_open(b, "a", BAKERY_ALGO_LAMPORT, &l2), BAKERY_EBADREGION);
	ck_assert_int_eq(bakery_lock_info(b, idx, &li), 0);
	ck_assert_int_eq(li.algo, BAKERY_ALGO_DEFAULT);
	/* the dead holder's slot is still recovered (plain reset) */
	ck_assert_int_eq(bakery_recover(b, &reclaimed), 0);
	ck_assert_uint_eq(reclaimed, 1);
	for (unsigned s = 0; s < raw.nslots; s++)
		ck_assert_uint_eq(CMM_LOAD_SHARED(raw_reg(&raw, idx, s)->number), 0);
	/* the handle opened before runs its own algorithm */
	ck_assert_int_eq(bakery_lock(l), EOWNERDEAD);
	ck_assert_int_eq(bakery_consistent(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_trylock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* lib/algo/bias.h's word */
#define BIAS_OFF   0u
#define BIAS_SLOT0 16u

START_TEST(bias_word_garbage)
{
	static const struct bakery_lock_config biased = { .flags = BAKERY_LOCK_BIASED };
	static const uint32_t forged[] = { 3, 15, BIAS_SLOT0 + 4, UINT32_MAX };
	const struct bakery_lock_config k2 = { .algo = BAKERY_ALGO_LAMPORT, .holders = 2 };
	char name[TK_NAME_SIZE];
	bakery_t *b = h_region(name, "bias", 4, 4);
	bakery_lock_t *bw = h_lock(b, "bw", BAKERY_ALGO_BLACK_WHITE), *k, *l, *l2;
	struct bakery_lock_info li;
	struct raw raw;
	int err;

	ck_assert_int_eq(bakery_lock_open_config(b, "k", &k2, &k), 0);
	err = bakery_lock_open_config(b, "biased", &biased, &l);
	if (err == ENOTSUP) {
		/* no expedited membarrier here: tests/kernel/refused-calls */
		bakery_lock_close(bw);
		bakery_lock_close(k);
		bakery_close(b);
		return;
	}
	ck_assert_int_eq(err, 0);
	raw_map(&raw, name);
	/* a bias on locks that cannot have one: refused at open */
	CMM_STORE_SHARED(raw.locks[h_lock_index(bw)].bias, BIAS_SLOT0);
	CMM_STORE_SHARED(raw.locks[h_lock_index(k)].bias, BIAS_SLOT0);
	ck_assert_int_eq(bakery_lock_open(b, "bw", BAKERY_ALGO_DEFAULT, &l2), BAKERY_EBADREGION);
	ck_assert_int_eq(bakery_lock_open(b, "k", BAKERY_ALGO_DEFAULT, &l2), BAKERY_EBADREGION);
	/* handles opened before keep their ordinary path */
	ck_assert_int_eq(bakery_lock(bw), 0);
	ck_assert_int_eq(bakery_unlock(bw), 0);
	ck_assert_int_eq(bakery_lock(k), 0);
	ck_assert_int_eq(bakery_unlock(k), 0);
	/* a biased lock's word naming no slot: shown as none, revoked */
	for (unsigned i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		CMM_STORE_SHARED(raw.locks[h_lock_index(l)].bias, forged[i]);
		ck_assert_int_eq(bakery_lock_info(b, h_lock_index(l), &li), 0);
		ck_assert_int_eq(li.bias_slot, -1);
		ck_assert_uint_eq(li.flags, BAKERY_LOCK_BIASED);
		ck_assert_int_eq(bakery_lock(l), 0);
		ck_assert_int_eq(bakery_unlock(l), 0);
		ck_assert_int_eq(bakery_lock_info(b, h_lock_index(l), &li), 0);
		ck_assert_uint_eq(li.bias_revocations, i + 1);
	}
	/* a huge count of revocations: the backoff is capped, and the lock
	 * is still granted (64 << 12 lone passages) */
	CMM_STORE_SHARED(raw.locks[h_lock_index(l)].bias_revocations, UINT32_MAX);
	for (unsigned i = 0; i < (64u << 12); i++) {
		ck_assert_int_eq(bakery_lock(l), 0);
		ck_assert_int_eq(bakery_unlock(l), 0);
	}
	ck_assert_int_eq(bakery_lock_info(b, h_lock_index(l), &li), 0);
	ck_assert_int_ge(li.bias_slot, 0);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_lock_close(bw), 0);
	ck_assert_int_eq(bakery_lock_close(k), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

START_TEST(lock_entry_state_garbage)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = h_region(name, "state", 4, 2);
	bakery_lock_t *l = h_lock(b, "g", BAKERY_ALGO_DEFAULT), *l2;
	struct bakery_lock_info li;
	struct raw raw;
	unsigned idx = h_lock_index(l);

	raw_map(&raw, name);
	CMM_STORE_SHARED(raw.locks[idx].state, 0x12345678u);
	ck_assert_int_eq(bakery_lock_info(b, idx, &li), ENOENT);
	/* "g" is not found; a new entry is made, not the damaged one reused */
	ck_assert_int_eq(bakery_lock_open(b, "g", BAKERY_ALGO_DEFAULT, &l2), 0);
	ck_assert_uint_ne(h_lock_index(l2), idx);
	ck_assert_int_eq(bakery_lock_close(l2), 0);
	ck_assert_int_eq(bakery_lock_open(b, "h", BAKERY_ALGO_DEFAULT, &l2), BAKERY_ELOCKS);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

START_TEST(active_set_all_ones)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = h_region(name, "active", 3, 4);
	struct bakery_lock_info li;
	struct raw raw;

	honest_passages(b);     /* makes the four locks */
	raw_map(&raw, name);
	for (size_t i = 0; i < (size_t)raw.nlocks * raw.active_words; i++)
		CMM_STORE_SHARED(raw.active[i], ~UINT64_C(0));
	honest_passages(b);
	ck_assert_int_eq(tk_reap(tk_fork(child_passages, name), 20), 0);
	for (unsigned i = 0; i < raw.nlocks; i++) {
		ck_assert_int_eq(bakery_lock_info(b, i, &li), 0);
		ck_assert_uint_le(li.participants, raw.nslots);
	}
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

START_TEST(slot_state_out_of_range)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = h_region(name, "slotstate", 2, 4);
	struct bakery_slot_info si;
	struct raw raw;

	raw_map(&raw, name);
	CMM_STORE_SHARED(raw.slots[0].state, 77u);
	ck_assert_int_eq(bakery_slot_info(b, 0, &si), 0);
	ck_assert_int_eq(si.state, BAKERY_SLOT_ACTIVE);
	honest_passages(b);
	/* the damaged slot was not taken: this thread is in slot 1 */
	ck_assert_int_eq(tk_self_slot(b), 1);
	check_introspection(b);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* A slot's token index past the slot tokens (the lock table's, or
 * garbage), or the revoker's of a slot being revoked: refused by
 * bakery_open; a handle opened before keeps working, and the slot is
 * claimed and repaired (revoke.h reads the index range-checked). */
START_TEST(slot_token_index_out_of_range)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = h_region(name, "slottoken", 2, 4), *b2;
	struct raw raw;

	raw_map(&raw, name);
	if (_i == 2) {
		CMM_STORE_SHARED(raw.slots[0].gen, 3u);         /* a revocation under way */
		CMM_STORE_SHARED(raw.slots[0].revoker, 4u * raw.nslots);
	} else {
		CMM_STORE_SHARED(raw.slots[0].token, _i == 0 ? 2u * raw.nslots : UINT32_MAX);
	}
	ck_assert_int_eq(bakery_open(name, 0, NULL, &b2), BAKERY_EBADREGION);
	honest_passages(b);
	ck_assert_int_eq(tk_self_slot(b), 0);
	ck_assert_uint_lt(CMM_LOAD_SHARED(raw.slots[0].token), 2u * raw.nslots);
	ck_assert_uint_eq(CMM_LOAD_SHARED(raw.slots[0].gen) % 2, 0);
	check_introspection(b);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_open(name, 0, NULL, &b2), 0);
	ck_assert_int_eq(bakery_close(b2), 0);
}
END_TEST

/* Opening an object shorter than its header says: refused before mapping. */
START_TEST(shrunk_region_refused_at_open)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = h_region(name, "shrunk", 4, 4), *b2;
	struct raw raw;

	raw_map(&raw, name);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(ftruncate(raw.fd, (off_t)raw.size - 4096), 0);
	ck_assert_int_eq(bakery_open(name, 0, NULL, &b2), BAKERY_EBADREGION);
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE, NULL, &b2), BAKERY_EBADREGION);
	ck_assert_int_eq(ftruncate(raw.fd, 100), 0);
	ck_assert_int_eq(bakery_open(name, 0, NULL, &b2), BAKERY_EBADREGION);
	ck_assert_int_eq(ftruncate(raw.fd, 0), 0);
	ck_assert_int_eq(bakery_open(name, 0, NULL, &b2), BAKERY_EBADREGION);
	/* (a region shrunk under a process that has it mapped: bug-shrink-sigbus.c) */
	munmap(raw.base, raw.size);     /* the pages past the end are gone */
	close(raw.fd);
}
END_TEST

/* Growing the object is harmless: the mapping and the layout stay. */
START_TEST(grown_region_keeps_working)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = h_region(name, "grown", 4, 4), *b2;
	struct raw raw;

	honest_passages(b);
	raw_map(&raw, name);
	ck_assert_int_eq(ftruncate(raw.fd, (off_t)raw.size + (1 << 20)), 0);
	honest_passages(b);
	ck_assert_int_eq(bakery_open(name, 0, NULL, &b2), 0);
	honest_passages(b2);
	ck_assert_int_eq(bakery_close(b2), 0);
	raw_unmap(&raw);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

static Suite *tables_suite(void)
{
	Suite *s = suite_create("hostile tables");
	TCase *tc = tcase_create("tables");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, slots_hwm_beyond_capacity, 0, 3);
	tcase_add_loop_test(tc, jayanti_proxy_word_out_of_range, 0, 3);
	tcase_add_test(tc, unterminated_lock_name);
	tcase_add_loop_test(tc, lock_algo_out_of_range, 0, 3);
	tcase_add_test(tc, lock_entry_state_garbage);
	tcase_add_test(tc, active_set_all_ones);
	tcase_add_test(tc, slot_state_out_of_range);
	tcase_add_loop_test(tc, slot_token_index_out_of_range, 0, 3);
	tcase_add_test(tc, bias_word_garbage);
	tcase_add_test(tc, shrunk_region_refused_at_open);
	tcase_add_test(tc, grown_region_keeps_working);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return h_run_suite(tables_suite());
}
