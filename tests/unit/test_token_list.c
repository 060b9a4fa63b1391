/* SPDX-License-Identifier: MIT */
/*
 * test_token_list.c - liveness tokens share each thread's robust list with
 * glibc's robust mutexes (token.c links its private nodes in glibc's way).
 * A thread interleaves robust mutexes of its own with slots in two regions,
 * gives some back out of order, and then ends holding the rest: the kernel
 * must find every one on the list and mark it owner-died - the glibc
 * mutexes (EOWNERDEAD from pthread_mutex_lock) and the tokens (EOWNERDEAD
 * from bakery_lock, the thread having died inside both critical sections).
 * A list broken by a wrong link would lose some of them, or crash glibc.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <unistd.h>

#include "unit.h"

#define NMUTEX 4

struct world {
	char name[2][TK_NAME_SIZE];
	bakery_t *b[2];
	bakery_lock_t *l[2];
	pthread_mutex_t m[NMUTEX];
	int order;                 /* which interleaving the thread plays */
	int failed_step;
};

static void robust_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	ck_assert_int_eq(pthread_mutex_init(m, &a), 0);
	pthread_mutexattr_destroy(&a);
}

/* The robust list of the calling thread, walked as the kernel walks it:
 * its length, or -1 if it does not come back to the head within LIMIT. */
static int robust_list_length(void)
{
	struct robust_list_head *head;
	struct robust_list *e;
	size_t len;
	int n = 0;

	if (syscall(SYS_get_robust_list, 0, &head, &len))
		return -1;
	for (e = head->list.next; e != &head->list && n < 64; n++)
		e = (struct robust_list *)((uintptr_t)e->next & ~(uintptr_t)1);
	return e == &head->list ? n : -1;
}

#define STEP(n, call) do { if ((call) != 0) { w->failed_step = (n); return NULL; } } while (0)

/*
 * order 0: m0, slot+lock in region 0, m1, slot+lock in region 1, m2;
 *          unlock m1 (between our two nodes), then end holding the rest.
 * order 1: the same, then also give region 1's slot back (bakery_close:
 *          our node unlinked between glibc's), and m0 (the list's far end),
 *          then end.
 * order 2: give region 1's slot back while m1, behind it in the list, is
 *          still locked, then unlock m1 and m2: glibc unlinks m1 through
 *          the prev pointer our unlink left it (a stale one would point
 *          into the unmapped window).
 */
static void *thread_main(void *arg)
{
	struct world *w = arg;
	bakery_lock_t *l1;
	int base = robust_list_length();

	STEP(1, pthread_mutex_lock(&w->m[0]));
	STEP(2, bakery_lock(w->l[0]));
	STEP(3, pthread_mutex_lock(&w->m[1]));
	STEP(4, bakery_open(w->name[1], 0, NULL, &w->b[1]));
	STEP(5, bakery_lock_open(w->b[1], "t", BAKERY_ALGO_DEFAULT, &l1));
	STEP(6, bakery_lock(l1));
	STEP(7, pthread_mutex_lock(&w->m[2]));
	STEP(8, robust_list_length() != base + 5);
	if (w->order == 2) {
		STEP(20, bakery_unlock(l1));
		STEP(21, bakery_lock_close(l1));
		STEP(22, bakery_close(w->b[1]));
		STEP(23, robust_list_length() != base + 4);
		STEP(24, pthread_mutex_unlock(&w->m[1]));
		STEP(25, pthread_mutex_unlock(&w->m[2]));
		STEP(26, robust_list_length() != base + 2);
		STEP(27, pthread_mutex_lock(&w->m[3]));
		STEP(28, pthread_mutex_unlock(&w->m[3]));
		return NULL;
	}
	STEP(9, pthread_mutex_unlock(&w->m[1]));
	STEP(10, robust_list_length() != base + 4);
	if (w->order == 1) {
		STEP(11, bakery_unlock(l1));
		STEP(12, bakery_lock_close(l1));
		STEP(13, bakery_close(w->b[1]));
		STEP(14, robust_list_length() != base + 3);
		STEP(15, pthread_mutex_unlock(&w->m[0]));
		STEP(16, robust_list_length() != base + 2);
	} else {
		w->l[1] = l1;
	}
	/* glibc's list still works around our nodes */
	STEP(17, pthread_mutex_lock(&w->m[3]));
	STEP(18, pthread_mutex_unlock(&w->m[3]));
	return NULL;        /* ends holding what it still holds */
}

static void world_run(struct world *w, int order)
{
	pthread_t t;

	w->order = order;
	w->b[0] = unit_region(w->name[0], "tlist0", 4, 2);
	w->l[0] = unit_lock(w->b[0], "t", BAKERY_ALGO_DEFAULT);
	/* the thread opens its own handle */
	ck_assert_int_eq(bakery_close(unit_region(w->name[1], "tlist1", 4, 2)), 0);
	for (int i = 0; i < NMUTEX; i++)
		robust_init(&w->m[i]);
	ck_assert_int_eq(pthread_create(&t, NULL, thread_main, w), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_msg(w->failed_step == 0, "thread failed at step %d", w->failed_step);
}

/* Close what the test opened.  Region 1's handle stays open when its
 * thread died holding a lock there: the mapping must stay (the kernel walks
 * the token at thread exit), and an open handle keeps it reachable. */
static void world_close(struct world *w)
{
	ck_assert_int_eq(bakery_lock_close(w->l[0]), 0);
	if (w->l[1])
		ck_assert_int_eq(bakery_lock_close(w->l[1]), 0);
	ck_assert_int_eq(bakery_close(w->b[0]), 0);
}

/* The mutex was left by a dead owner (EOWNERDEAD), or it was free (0). */
static void expect_mutex(pthread_mutex_t *m, int want)
{
	int r = pthread_mutex_lock(m);

	ck_assert_int_eq(r, want);
	if (r == EOWNERDEAD)
		pthread_mutex_consistent(m);
	pthread_mutex_unlock(m);
}

/* bakery_lock answers WANT (0, or EOWNERDEAD: made consistent), then unlock. */
static void expect_lock(bakery_lock_t *l, int want)
{
	ck_assert_int_eq(bakery_lock(l), want);
	if (want == EOWNERDEAD)
		ck_assert_int_eq(bakery_consistent(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
}

/* The same through a new handle on region NAME, lock "t". */
static void expect_region_lock(const char *name, int want)
{
	bakery_t *b;
	bakery_lock_t *l;

	ck_assert_int_eq(bakery_open(name, 0, NULL, &b), 0);
	l = unit_lock(b, "t", BAKERY_ALGO_DEFAULT);
	expect_lock(l, want);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}

START_TEST(thread_ends_holding_interleaved)
{
	struct world w = { 0 };

	world_run(&w, 0);
	expect_mutex(&w.m[0], EOWNERDEAD);
	expect_mutex(&w.m[1], 0);
	expect_mutex(&w.m[2], EOWNERDEAD);
	expect_lock(w.l[0], EOWNERDEAD);
	expect_region_lock(w.name[1], EOWNERDEAD);
	world_close(&w);
}
END_TEST

START_TEST(thread_ends_after_giving_back_out_of_order)
{
	struct world w = { 0 };

	world_run(&w, 1);
	expect_mutex(&w.m[0], 0);
	expect_mutex(&w.m[1], 0);
	expect_mutex(&w.m[2], EOWNERDEAD);
	expect_lock(w.l[0], EOWNERDEAD);
	/* region 1 was given back cleanly: no owner died there */
	expect_region_lock(w.name[1], 0);
	world_close(&w);
}
END_TEST

START_TEST(give_back_before_a_locked_mutex)
{
	struct world w = { 0 };

	world_run(&w, 2);
	expect_mutex(&w.m[0], EOWNERDEAD);
	expect_mutex(&w.m[1], 0);
	expect_mutex(&w.m[2], 0);
	expect_lock(w.l[0], EOWNERDEAD);
	expect_region_lock(w.name[1], 0);
	world_close(&w);
}
END_TEST

static Suite *token_list_suite(void)
{
	Suite *s = suite_create("token_list");
	TCase *tc = tcase_create("robust list");

	tcase_add_test(tc, thread_ends_holding_interleaved);
	tcase_add_test(tc, thread_ends_after_giving_back_out_of_order);
	tcase_add_test(tc, give_back_before_a_locked_mutex);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(token_list_suite());
}
