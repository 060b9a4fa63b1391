/*
 * test_wait_handoff.c - the death of a token's owner wakes one waiter in
 * the kernel; that waiter must prove and recover the death before it does
 * anything else, even when its deadline has passed meanwhile: otherwise it
 * leaves with ETIMEDOUT, takes the only wake-up with it, and every other
 * waiter sleeps until its one-second cap.
 *
 * The waiter is made to miss its deadline exactly there: in the test build,
 * BAKERY_STOP_AT=wait-woken stops it (SIGSTOP) right after the kernel woke
 * it; the test lets the deadline pass, then continues it.  Needs the test
 * build (libbakery-test).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

#define DEADLINE_S 0.5          /* the timed waiter's, from its start */

struct timed_waiter {
	char name[TK_NAME_SIZE];
	enum bakery_algo algo;
};

/* Child: a timedlock that the kernel's wake-up stops; its answer as exit
 * status (ETIMEDOUT, or EOWNERDEAD if it proved the death and got in). */
static int timed_waiter(void *arg)
{
	const struct timed_waiter *w = arg;
	struct timespec at = tk_in(CLOCK_MONOTONIC, DEADLINE_S);
	bakery_t *b = NULL;
	bakery_lock_t *l = NULL;
	int rc;

	if (setenv("BAKERY_STOP_AT", "wait-woken", 1) || bakery_open(w->name, 0, NULL, &b) ||
	    bakery_lock_open(b, "precious", w->algo, &l))
		return 100;
	rc = bakery_clocklock(l, CLOCK_MONOTONIC, &at);
	if (rc == EOWNERDEAD && (bakery_consistent(l) || bakery_unlock(l)))
		return 101;
	return rc;
}

static struct bakery_lock_info lock_info(bakery_t *b, unsigned index)
{
	struct bakery_lock_info li;

	ck_assert_int_eq(bakery_lock_info(b, index, &li), 0);
	return li;
}

struct watch {
	bakery_t *b;
	unsigned index;
};

static bool one_waiter(void *arg)
{
	const struct watch *w = arg;

	return lock_info(w->b, w->index).waiters == 1;
}

START_TEST(woken_timed_waiter_proves_the_death)
{
	struct timed_waiter w = { .algo = (enum bakery_algo)_i };
	bakery_t *b = unit_region(w.name, "handoff", 4, 2);
	bakery_lock_t *l = unit_lock(b, "precious", w.algo);
	struct watch watch = { b, 0 };
	struct bakery_lock_info li;
	pid_t holder, waiter;
	double started;
	int st, rc;

	ck_assert_int_eq(bakery_lock_index(l, &watch.index), 0);
	holder = unit_holder_process(w.name, "precious", w.algo);
	started = tk_now(CLOCK_MONOTONIC);
	waiter = tk_fork(timed_waiter, &w);
	ck_assert(tk_wait_until(one_waiter, &watch, 5));
	usleep(100000);                     /* let it fall asleep in the kernel */
	ck_assert(tk_kill(holder));       /* the kernel wakes the waiter... */
	/* ...which stops at once, before it looks at anything */
	ck_assert_int_eq(waitpid(waiter, &st, WUNTRACED), waiter);
	ck_assert_msg(WIFSTOPPED(st), "the waiter was not stopped after its wake-up");
	ck_assert_msg(tk_now(CLOCK_MONOTONIC) - started < DEADLINE_S,
	              "woken after its deadline: the test cannot tell");
	while (tk_now(CLOCK_MONOTONIC) - started < DEADLINE_S + 0.1)
		usleep(10000);
	/* nobody else has looked at the dead holder */
	ck_assert_uint_eq(lock_info(b, watch.index).recoveries, 0);
	ck_assert_int_eq(kill(waiter, SIGCONT), 0);
	rc = tk_reap(waiter, 10);
	ck_assert_msg(rc == ETIMEDOUT || rc == EOWNERDEAD, "waiter: %d", rc);
	/* whatever it answered, it proved the death before leaving */
	li = lock_info(b, watch.index);
	ck_assert_msg(li.recoveries == 1, "the woken waiter left the death unproven "
	              "(recoveries %llu, answered %s)", (unsigned long long)li.recoveries,
	              bakery_strerror(rc));
	ck_assert_uint_eq(li.owner_deaths, 1);
	/* and the lock works */
	rc = bakery_lock(l);
	ck_assert(rc == 0 || rc == EOWNERDEAD);
	if (rc == EOWNERDEAD)
		ck_assert_int_eq(bakery_consistent(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(w.name), 0);
}
END_TEST

static Suite *handoff_suite(void)
{
	Suite *s = suite_create("wait-handoff");
	TCase *tc = tcase_create("per-algorithm");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, woken_timed_waiter_proves_the_death, TK_ALGO_FIRST,
	                    TK_ALGO_END);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(handoff_suite());
}
