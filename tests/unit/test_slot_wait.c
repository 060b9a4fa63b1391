/* SPDX-License-Identifier: MIT */
/*
 * test_slot_wait.c - a lock call that finds every slot taken waits for one
 * (lib/slotwait.c): it sleeps (the region's count of slot sleepers says so:
 * white-box), returns only once a slot was given back, and then holds the
 * lock; a sleeper SIGKILLed while it waits does not keep the next one from
 * the freed slot; a thread that keeps locking and unlocking gives its slot
 * back to a waiter at its next unlock, instead of keeping it for good.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>

#include <urcu/uatomic.h>

#include "unit.h"
#include "handle.h"

/* A thread that takes a slot and keeps it until told to end.  It holds a
 * lock meanwhile (another one than the waiters'): the slot of a thread that
 * holds nothing would be taken from it (test_slot_reclaim.c). */
struct squatter {
	pthread_t thread;
	bakery_lock_t *l;
	int rc;
	struct tk_gate in, out;
};

static void *squatter_main(void *arg)
{
	struct squatter *s = arg;

	s->rc = bakery_lock(s->l);
	tk_gate_open(&s->in);
	tk_gate_wait(&s->out, 60);
	if (s->rc == 0)
		bakery_unlock(s->l);
	return NULL;            /* thread exit: the slot goes back */
}

static void squatter_start(struct squatter *s, bakery_lock_t *l)
{
	s->l = l;
	tk_gate_init(&s->in);
	tk_gate_init(&s->out);
	ck_assert_int_eq(pthread_create(&s->thread, NULL, squatter_main, s), 0);
	ck_assert(tk_gate_wait(&s->in, 20));
	ck_assert_int_eq(s->rc, 0);
}

static void squatter_stop(struct squatter *s)
{
	tk_gate_open(&s->out);
	ck_assert_int_eq(pthread_join(s->thread, NULL), 0);
	tk_gate_close(&s->in);
	tk_gate_close(&s->out);
}

/* A thread that locks and unlocks once; done says it returned. */
struct waiter {
	pthread_t thread;
	bakery_lock_t *l;
	int rc, done, squatter_gone_first;
	const int *squatter_gone;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->rc = bakery_lock(w->l);
	w->squatter_gone_first = uatomic_read(w->squatter_gone);
	if (w->rc == 0)
		bakery_unlock(w->l);
	uatomic_set(&w->done, 1);
	return NULL;
}

static unsigned sleepers(bakery_t *b)
{
	return uatomic_read(&b->hdr->slot_sleepers);
}

/* Wait (20 s at most) until at least N threads sleep for a slot. */
static void await_sleepers(bakery_t *b, unsigned n)
{
	double t0 = tk_now(CLOCK_MONOTONIC);

	while (sleepers(b) < n && tk_now(CLOCK_MONOTONIC) - t0 < 20)
		tk_sleep_ms(1);
	ck_assert_uint_ge(sleepers(b), n);
}

START_TEST(lock_waits_for_a_free_slot)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "slotwait", 1, 2);
	bakery_lock_t *l = unit_lock(b, "l", (enum bakery_algo)_i);
	bakery_lock_t *hold = unit_lock(b, "hold", BAKERY_ALGO_DEFAULT);
	struct squatter s;
	int gone = 0;
	struct waiter w = { .l = l, .squatter_gone = &gone };

	squatter_start(&s, hold);
	ck_assert_int_eq(pthread_create(&w.thread, NULL, waiter_main, &w), 0);
	await_sleepers(b, 1);
	ck_assert_int_eq(uatomic_read(&w.done), 0);     /* asleep, not failed */
	uatomic_set(&gone, 1);
	squatter_stop(&s);                              /* its slot goes back */
	ck_assert_int_eq(pthread_join(w.thread, NULL), 0);
	ck_assert_int_eq(w.rc, 0);
	ck_assert_int_eq(w.squatter_gone_first, 1);
	ck_assert_uint_eq(sleepers(b), 0);
	ck_assert_int_eq(bakery_lock_close(hold), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* Child: lock "l" of region ARG once (waiting for a slot). */
static int lock_once(void *arg)
{
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(arg, 0, NULL, &b) || bakery_lock_open(b, "l", BAKERY_ALGO_DEFAULT, &l))
		return 100;
	return bakery_lock(l) == 0 && bakery_unlock(l) == 0 ? 0 : 1;
}

START_TEST(dead_sleeper_does_not_hold_up_the_next)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "slotdead", 1, 2);
	bakery_lock_t *l = unit_lock(b, "l", BAKERY_ALGO_DEFAULT);
	bakery_lock_t *hold = unit_lock(b, "hold", BAKERY_ALGO_DEFAULT);
	struct squatter s;
	pid_t doomed, next;

	squatter_start(&s, hold);
	doomed = tk_fork(lock_once, name);
	await_sleepers(b, 1);
	ck_assert(tk_kill(doomed));                     /* still counted */
	next = tk_fork(lock_once, name);
	await_sleepers(b, 2);
	squatter_stop(&s);
	ck_assert_int_eq(tk_reap(next, 30), 0);
	ck_assert_int_eq(bakery_lock_close(hold), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* Locks and unlocks until told to stop, or for 20 s at most (capped). */
struct busy {
	pthread_t thread;
	bakery_lock_t *l;
	int stop, capped, errors;
	unsigned long passages;
};

static void *busy_main(void *arg)
{
	struct busy *u = arg;
	double t0 = tk_now(CLOCK_MONOTONIC);

	while (!uatomic_read(&u->stop)) {
		if (tk_now(CLOCK_MONOTONIC) - t0 > 20) {
			u->capped = 1;
			break;
		}
		if (bakery_lock(u->l) || bakery_unlock(u->l))
			u->errors++;
		uatomic_inc(&u->passages);
	}
	return NULL;
}

START_TEST(busy_thread_gives_its_slot_back)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "slotback", 1, 1);
	bakery_lock_t *l = unit_lock(b, "l", BAKERY_ALGO_DEFAULT);
	struct busy u = { .l = l };
	double t0 = tk_now(CLOCK_MONOTONIC);

	ck_assert_int_eq(pthread_create(&u.thread, NULL, busy_main, &u), 0);
	while (uatomic_read(&u.passages) == 0 && tk_now(CLOCK_MONOTONIC) - t0 < 20)
		tk_sleep_ms(1);
	ck_assert_uint_gt(uatomic_read(&u.passages), 0);    /* it has the only slot */
	ck_assert_int_eq(tk_reap(tk_fork(lock_once, name), 30), 0);
	uatomic_set(&u.stop, 1);
	ck_assert_int_eq(pthread_join(u.thread, NULL), 0);
	ck_assert_msg(!u.capped, "the waiter got a slot only once the busy thread stopped");
	ck_assert_int_eq(u.errors, 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

static Suite *slot_wait_suite(void)
{
	Suite *s = suite_create("slot-wait");
	TCase *tc = tcase_create("slot-wait");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, lock_waits_for_a_free_slot, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_test(tc, dead_sleeper_does_not_hold_up_the_next);
	tcase_add_test(tc, busy_thread_gives_its_slot_back);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(slot_wait_suite());
}
