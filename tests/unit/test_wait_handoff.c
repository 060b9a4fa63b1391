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
 * build (libbakery-test).  The deadline must fall after the wake-up: on a
 * machine too busy for that, the trial is repeated with a longer one.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

/* the timed waiter's deadline, from its start: the first trial's, and the
 * longest a busy machine gets (each retry takes four times as long) */
#define DEADLINE_S     0.5
#define DEADLINE_MAX_S 8.0

struct timed_waiter {
	char name[TK_NAME_SIZE];
	enum bakery_algo algo;
	double deadline;
};

/* Child: a timedlock that the kernel's wake-up stops; its answer as exit
 * status (ETIMEDOUT, or EOWNERDEAD if it proved the death and got in). */
static int timed_waiter(void *arg)
{
	const struct timed_waiter *w = arg;
	struct timespec at = tk_in(CLOCK_MONOTONIC, w->deadline);
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

struct watch {
	bakery_t *b;
	unsigned index;
};

static bool one_waiter(void *arg)
{
	const struct watch *w = arg;

	return unit_lock_info(w->b, w->index).waiters == 1;
}

/* Checks after a trial that could tell: the woken waiter proved the death
 * whatever it answered (RC), and the lock works. */
static void check_proven(bakery_t *b, bakery_lock_t *l, unsigned index, int rc)
{
	struct bakery_lock_info li = unit_lock_info(b, index);

	ck_assert_msg(rc == ETIMEDOUT || rc == EOWNERDEAD, "waiter: %d", rc);
	ck_assert_msg(li.recoveries == 1, "the woken waiter left the death unproven "
	              "(recoveries %llu, answered %s)", (unsigned long long)li.recoveries,
	              bakery_strerror(rc));
	ck_assert_uint_eq(li.owner_deaths, 1);
	rc = bakery_lock(l);
	ck_assert(rc == 0 || rc == EOWNERDEAD);
	if (rc == EOWNERDEAD)
		ck_assert_int_eq(bakery_consistent(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
}

/* One trial with W's deadline.  False if the waiter was woken after its
 * deadline (the machine was too busy: the trial cannot tell). */
static bool trial(struct timed_waiter *w)
{
	bakery_t *b = unit_region(w->name, "handoff", 4, 2);
	bakery_lock_t *l = unit_lock(b, "precious", w->algo);
	struct watch watch = { b, 0 };
	pid_t holder, waiter;
	double started;
	bool told;
	int st, rc;

	ck_assert_int_eq(bakery_lock_index(l, &watch.index), 0);
	holder = unit_holder_process(w->name, "precious", w->algo);
	started = tk_now(CLOCK_MONOTONIC);
	waiter = tk_fork(timed_waiter, w);
	ck_assert(tk_wait_until(one_waiter, &watch, 5 + w->deadline));
	usleep(100000);                     /* let it fall asleep in the kernel */
	ck_assert(tk_kill(holder));       /* the kernel wakes the waiter... */
	/* ...which stops at once, before it looks at anything */
	ck_assert_int_eq(waitpid(waiter, &st, WUNTRACED), waiter);
	ck_assert_msg(WIFSTOPPED(st), "the waiter was not stopped after its wake-up");
	told = tk_now(CLOCK_MONOTONIC) - started < w->deadline;
	while (tk_now(CLOCK_MONOTONIC) - started < w->deadline + 0.1)
		usleep(10000);
	/* nobody else has looked at the dead holder */
	if (told)
		ck_assert_uint_eq(unit_lock_info(b, watch.index).recoveries, 0);
	ck_assert_int_eq(kill(waiter, SIGCONT), 0);
	rc = tk_reap(waiter, 10);
	if (told)
		check_proven(b, l, watch.index, rc);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(w->name), 0);
	return told;
}

START_TEST(woken_timed_waiter_proves_the_death)
{
	struct timed_waiter w = { .algo = (enum bakery_algo)_i };

	for (w.deadline = DEADLINE_S; w.deadline <= DEADLINE_MAX_S; w.deadline *= 4)
		if (trial(&w))
			return;
	ck_abort_msg("woken after its deadline of %.1f s every time: the test cannot tell",
	             DEADLINE_MAX_S);
}
END_TEST

static Suite *handoff_suite(void)
{
	Suite *s = suite_create("wait-handoff");
	TCase *tc = tcase_create("per-algorithm");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, woken_timed_waiter_proves_the_death, TK_ALGO_FIRST,
	                    TK_ALGO_END);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(handoff_suite());
}
