/* SPDX-License-Identifier: MIT */
/*
 * test_timed.c - deadlines, for every algorithm: timedlock and clocklock on
 * a held lock give ETIMEDOUT no earlier than the deadline and soon after it,
 * on CLOCK_REALTIME and CLOCK_MONOTONIC; the give-up leaves the lock usable;
 * other clocks and malformed deadlines are EINVAL (and acquire nothing); a
 * deadline already past still acquires a free lock.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "unit.h"

#define DEADLINE_S 0.05        /* how far ahead the deadlines are set */
#define LATE_LIMIT_S 1.0       /* how late after it a give-up may return */

static void fixture_open(struct unit_fixture *f, enum bakery_algo algo)
{
	unit_fixture_open(f, "timed", 4, 2, "timed", algo);
}

static double ts_seconds(const struct timespec *t)
{
	return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

/* Wait on the held lock until a deadline DEADLINE_S ahead on CLOCK (through
 * timedlock when TIMED); it must time out, not early and not much late. */
static void expect_timeout(bakery_lock_t *l, clockid_t clock, bool timed)
{
	struct timespec at = tk_in(clock, DEADLINE_S);
	double start = tk_now(CLOCK_MONOTONIC), after_deadline;
	int rc = timed ? bakery_timedlock(l, &at) : bakery_clocklock(l, clock, &at);

	after_deadline = tk_now(clock) - ts_seconds(&at);
	ck_assert_msg(rc == ETIMEDOUT, "gave %s", bakery_strerror(rc));
	ck_assert_msg(after_deadline >= 0, "returned %.6f s before the deadline", -after_deadline);
	ck_assert_msg(after_deadline < LATE_LIMIT_S, "returned %.3f s after the deadline",
	              after_deadline);
	ck_assert(tk_now(CLOCK_MONOTONIC) - start >= DEADLINE_S * 0.99);
}

START_TEST(deadline_on_held_lock_times_out)
{
	struct unit_fixture f;
	struct unit_holder h;
	struct timespec later;

	fixture_open(&f, (enum bakery_algo)_i);
	unit_holder_start(&h, f.l);
	expect_timeout(f.l, CLOCK_REALTIME, true);
	expect_timeout(f.l, CLOCK_REALTIME, false);
	expect_timeout(f.l, CLOCK_MONOTONIC, false);
	/* a deadline already past gives up at once */
	later = tk_in(CLOCK_MONOTONIC, -1);
	ck_assert_int_eq(bakery_clocklock(f.l, CLOCK_MONOTONIC, &later), ETIMEDOUT);
	ck_assert_uint_ge(unit_fixture_info(&f).aborts, 1);
	unit_holder_stop(&h);

	/* the give-ups left the protocol cleanly: the lock is free for us */
	later = tk_in(CLOCK_MONOTONIC, 5);
	ck_assert_int_eq(bakery_clocklock(f.l, CLOCK_MONOTONIC, &later), 0);
	ck_assert_int_eq(unit_fixture_info(&f).waiters, 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_fixture_close(&f);
}
END_TEST

/* A waiter with a generous deadline gets the lock once the holder lets go. */
struct late_waiter {
	bakery_lock_t *l;
	int rc;
};

static void *late_waiter_main(void *arg)
{
	struct late_waiter *w = arg;
	struct timespec at = tk_in(CLOCK_REALTIME, 10);

	w->rc = bakery_timedlock(w->l, &at);
	if (w->rc == 0)
		bakery_unlock(w->l);
	return NULL;
}

START_TEST(deadline_met_when_released_in_time)
{
	struct unit_fixture f;
	struct late_waiter w = { 0 };
	pthread_t th;

	fixture_open(&f, (enum bakery_algo)_i);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	w.l = f.l;
	w.rc = -1;
	ck_assert_int_eq(pthread_create(&th, NULL, late_waiter_main, &w), 0);
	usleep(50000);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_msg(w.rc == 0, "waiter: %s", bakery_strerror(w.rc));
	unit_fixture_close(&f);
}
END_TEST

START_TEST(bad_clock_and_malformed_deadlines)
{
	static const clockid_t other_clocks[] = {
		CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, -1, 12345,
	};
	struct unit_fixture f;
	struct unit_holder h;
	struct timespec ok = tk_in(CLOCK_MONOTONIC, 1);
	struct timespec neg = ok, big = ok;

	fixture_open(&f, (enum bakery_algo)_i);
	neg.tv_nsec = -1;
	big.tv_nsec = 1000000000L;
	for (size_t i = 0; i < sizeof(other_clocks) / sizeof(other_clocks[0]); i++)
		ck_assert_int_eq(bakery_clocklock(f.l, other_clocks[i], &ok), EINVAL);
	ck_assert_int_eq(bakery_timedlock(f.l, &neg), EINVAL);
	ck_assert_int_eq(bakery_timedlock(f.l, &big), EINVAL);
	ck_assert_int_eq(bakery_clocklock(f.l, CLOCK_MONOTONIC, &neg), EINVAL);
	ck_assert_int_eq(bakery_clocklock(f.l, CLOCK_REALTIME, &big), EINVAL);
	/* none of them took the lock */
	unit_holder_start(&h, f.l);
	unit_holder_stop(&h);
	unit_fixture_close(&f);
}
END_TEST

START_TEST(past_deadline_still_acquires_free_lock)
{
	struct unit_fixture f;
	struct timespec epoch = { 0, 0 };
	struct timespec past = tk_in(CLOCK_MONOTONIC, -0.5);

	fixture_open(&f, (enum bakery_algo)_i);
	ck_assert_int_eq(bakery_timedlock(f.l, &epoch), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(bakery_clocklock(f.l, CLOCK_REALTIME, &epoch), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(bakery_clocklock(f.l, CLOCK_MONOTONIC, &past), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_fixture_close(&f);
}
END_TEST

static Suite *timed_suite(void)
{
	Suite *s = suite_create("timed");
	TCase *tc = tcase_create("deadlines");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, deadline_on_held_lock_times_out, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, deadline_met_when_released_in_time, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, bad_clock_and_malformed_deadlines, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, past_deadline_still_acquires_free_lock,
	                    TK_ALGO_FIRST, TK_ALGO_END);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(timed_suite());
}
