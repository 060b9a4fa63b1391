/* SPDX-License-Identifier: MIT */
/*
 * test_lock_queue.c - bakery_lock_queue(), for every algorithm: waiters
 * that took their tickets one after another are listed in that order, not
 * in the order of their slots (the threads claim their slots in one order
 * and line up in the reverse one).  Bad arguments are refused.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "unit.h"

#define WAITERS 3

struct waiter {
	pthread_t thread;
	bakery_lock_t *l;
	pid_t tid;
	int first_rc, rc;
	struct tk_gate slot_taken, go;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	/* one passage claims this thread's slot */
	w->first_rc = bakery_lock(w->l);
	if (w->first_rc == 0)
		bakery_unlock(w->l);
	tk_gate_open(&w->slot_taken);
	tk_gate_wait(&w->go, 60);
	w->rc = bakery_lock(w->l);
	if (w->rc == 0)
		bakery_unlock(w->l);
	return NULL;
}

/* The slot whose owner thread is TID, or -1. */
static int slot_of(bakery_t *b, pid_t tid)
{
	struct bakery_region_info ri;
	struct bakery_slot_info si;

	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	for (unsigned i = 0; i < ri.slots; i++)
		if (bakery_slot_info(b, i, &si) == 0 && si.state != BAKERY_SLOT_FREE && si.tid == tid)
			return (int)i;
	return -1;
}

static unsigned in_line(bakery_t *b, unsigned index)
{
	unsigned n;

	ck_assert_int_eq(bakery_lock_queue(b, index, NULL, 0, &n), 0);
	return n;
}

/* Wait (20 s at most) until N are in line. */
static void await_line(bakery_t *b, unsigned index, unsigned n)
{
	double t0 = tk_now(CLOCK_MONOTONIC);

	while (in_line(b, index) < n && tk_now(CLOCK_MONOTONIC) - t0 < 20)
		tk_sleep_ms(1);
	ck_assert_uint_eq(in_line(b, index), n);
}

START_TEST(queue_in_ticket_order)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "queue", 8, 2);
	bakery_lock_t *l = unit_lock(b, "line", (enum bakery_algo)_i);
	struct waiter w[WAITERS];
	struct unit_holder h;
	unsigned index, slots[WAITERS + 1], n = 99;

	ck_assert_int_eq(bakery_lock_index(l, &index), 0);
	for (unsigned i = 0; i < WAITERS; i++) {
		w[i] = (struct waiter){ .l = unit_lock(b, "line", (enum bakery_algo)_i) };
		tk_gate_init(&w[i].slot_taken);
		tk_gate_init(&w[i].go);
		ck_assert_int_eq(pthread_create(&w[i].thread, NULL, waiter_main, &w[i]), 0);
		ck_assert(tk_gate_wait(&w[i].slot_taken, 20));  /* slots in order 0, 1, 2 */
		ck_assert_int_eq(w[i].first_rc, 0);
	}
	unit_holder_start(&h, l);
	ck_assert_int_eq(bakery_lock_queue(b, index, slots, WAITERS + 1, &n), 0);
	ck_assert_uint_eq(n, 0);
	/* line up in the reverse order, each once the previous is waiting */
	for (unsigned k = 0; k < WAITERS; k++) {
		tk_gate_open(&w[WAITERS - 1 - k].go);
		await_line(b, index, k + 1);
	}
	ck_assert_int_eq(bakery_lock_queue(b, index, slots, WAITERS + 1, &n), 0);
	ck_assert_uint_eq(n, WAITERS);
	for (unsigned k = 0; k < WAITERS; k++)
		ck_assert_int_eq((int)slots[k], slot_of(b, w[WAITERS - 1 - k].tid));
	/* a short buffer gets the head of the line, and the full count */
	ck_assert_int_eq(bakery_lock_queue(b, index, slots, 1, &n), 0);
	ck_assert_uint_eq(n, WAITERS);
	ck_assert_int_eq((int)slots[0], slot_of(b, w[WAITERS - 1].tid));

	unit_holder_stop(&h);
	for (unsigned i = 0; i < WAITERS; i++) {
		ck_assert_int_eq(pthread_join(w[i].thread, NULL), 0);
		ck_assert_int_eq(w[i].rc, 0);
		ck_assert_int_eq(bakery_lock_close(w[i].l), 0);
		tk_gate_close(&w[i].slot_taken);
		tk_gate_close(&w[i].go);
	}
	ck_assert_uint_eq(in_line(b, index), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

START_TEST(queue_bad_arguments)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "queueargs", 4, 2);
	unsigned slot, n;

	ck_assert_int_eq(bakery_lock_queue(NULL, 0, &slot, 1, &n), EINVAL);
	ck_assert_int_eq(bakery_lock_queue(b, 0, &slot, 1, NULL), EINVAL);
	ck_assert_int_eq(bakery_lock_queue(b, 0, NULL, 1, &n), EINVAL);
	ck_assert_int_eq(bakery_lock_queue(b, 2, &slot, 1, &n), EINVAL);
	ck_assert_int_eq(bakery_lock_queue(b, 0, &slot, 1, &n), ENOENT);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

static Suite *lock_queue_suite(void)
{
	Suite *s = suite_create("lock-queue");
	TCase *tc = tcase_create("lock-queue");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, queue_in_ticket_order, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_test(tc, queue_bad_arguments);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(lock_queue_suite());
}
