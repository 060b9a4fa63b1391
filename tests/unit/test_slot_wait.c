/* SPDX-License-Identifier: MIT */
/*
 * test_slot_wait.c - a lock call that finds every slot taken waits for one
 * (lib/slotwait.c): it sleeps (the region's count of slot sleepers says so:
 * white-box), returns only once a slot was given back, and then holds the
 * lock; a sleeper SIGKILLed while it waits does not keep the next one from
 * the freed slot; a thread that keeps locking and unlocking gives its slot
 * back to a waiter at its next unlock, instead of keeping it for good;
 * BAKERY_ACQUIRE_ESLOTS tells a full region from a busy lock.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

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

/* Wait (20 s at most) until a thread sleeps for a slot: counted, and the
 * stamp it makes right before its sleep is there. */
static void await_asleep(bakery_t *b)
{
	double t0 = tk_now(CLOCK_MONOTONIC);

	await_sleepers(b, 1);
	while (!uatomic_read(&b->hdr->slot_wanted) && tk_now(CLOCK_MONOTONIC) - t0 < 20)
		tk_sleep_ms(1);
	ck_assert_uint_ne(uatomic_read(&b->hdr->slot_wanted), 0);
}

/* A process that takes the slot, says so (gate IN), and gives it back
 * when told (gate GO): then it stops itself (BAKERY_STOP_AT) or dies
 * (BAKERY_CRASH_AT, SIGKILL) right after the slot's announcement, at crash
 * point slot-announced. */
struct giver {
	const char *name;
	const char *at;         /* BAKERY_STOP_AT or BAKERY_CRASH_AT */
	struct tk_gate in, go;
};

static int giver_main(void *arg)
{
	struct giver *g = arg;
	bakery_t *b;
	bakery_lock_t *l;

	if (setenv(g->at, "slot-announced", 1) || bakery_open(g->name, 0, NULL, &b) ||
	    bakery_lock_open(b, "l", BAKERY_ALGO_DEFAULT, &l) || bakery_lock(l))
		return 100;
	tk_gate_open(&g->in);
	if (!tk_gate_wait(&g->go, 60))
		return 101;
	return bakery_unlock(l) ? 1 : 0;        /* gives the slot back */
}

/*
 * The slot a thread gives back is free by the time the sleeper woken for it
 * looks: its token goes back before the wake-up.  The giver stops right
 * after the wake-up, still alive (_i = 0), or is SIGKILLed there (_i = 1);
 * with the rescans put off for a minute, the wake-up alone must deliver
 * the slot.
 */
START_TEST(woken_sleeper_finds_the_slot_free)
{
	struct unit_fixture f;
	struct giver g = { .name = f.name, .at = _i ? "BAKERY_CRASH_AT" : "BAKERY_STOP_AT" };
	pid_t giver, waiter;
	int status, got;

	ck_assert_int_eq(setenv("BAKERY_TEST_SLOT_RESCAN_MS", "60000", 1), 0);
	unit_fixture_open(&f, "slotwake", 1, 1, "l", BAKERY_ALGO_DEFAULT);
	tk_gate_init(&g.in);
	tk_gate_init(&g.go);
	giver = tk_fork(giver_main, &g);
	ck_assert(tk_gate_wait(&g.in, 20));     /* it has the only slot */
	waiter = tk_fork(lock_once, f.name);
	await_asleep(f.b);
	tk_gate_open(&g.go);
	ck_assert_int_eq(waitpid(giver, &status, WUNTRACED), giver);
	ck_assert_msg(_i ? WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL : WIFSTOPPED(status),
	              "the giver did not reach slot-announced (status %d)", status);
	got = tk_reap(waiter, 30);
	if (!_i)
		ck_assert_int_eq(kill(giver, SIGCONT), 0);
	ck_assert_msg(got == 0, "the woken sleeper got no slot (%d)", got);
	if (!_i)
		ck_assert_int_eq(tk_reap(giver, 30), 0);
	tk_gate_close(&g.in);
	tk_gate_close(&g.go);
	unit_fixture_close(&f);
	unsetenv("BAKERY_TEST_SLOT_RESCAN_MS");
}
END_TEST

/*
 * A thread that gives its slot back to a sleeper does not take it again
 * ahead of it: with the sleeper stopped (SIGSTOP) and the yield made to
 * outlast the test, the giver's next lock call finds no slot; once the
 * sleeper runs, it takes the slot, and the giver gets it after.
 */
START_TEST(giver_leaves_the_slot_to_its_sleeper)
{
	struct unit_fixture f;
	struct timespec soon;
	pid_t waiter;
	int status;

	ck_assert_int_eq(setenv("BAKERY_TEST_SLOT_YIELD_MS", "600000", 1), 0);
	unit_fixture_open(&f, "slotyield", 1, 1, "l", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	waiter = tk_fork(lock_once, f.name);
	await_asleep(f.b);
	ck_assert_int_eq(kill(waiter, SIGSTOP), 0);
	ck_assert_int_eq(waitpid(waiter, &status, WUNTRACED), waiter);
	ck_assert(WIFSTOPPED(status));
	ck_assert_int_eq(bakery_unlock(f.l), 0);        /* the slot goes to the stopped sleeper */
	soon = tk_in(CLOCK_REALTIME, 0.1);
	ck_assert_int_eq(bakery_timedlock(f.l, &soon), ETIMEDOUT);
	ck_assert_int_eq(kill(waiter, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(waiter, 30), 0);
	ck_assert_int_eq(bakery_lock(f.l), 0);          /* its release ended the yield */
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_fixture_close(&f);
	unsetenv("BAKERY_TEST_SLOT_YIELD_MS");
}
END_TEST

/* acquire L with FLAGS (| BAKERY_ACQUIRE_ESLOTS), trying (no SECONDS) or
 * until SECONDS from now */
static int acquire_with(bakery_lock_t *l, unsigned flags, double seconds)
{
	struct timespec at = tk_in(CLOCK_MONOTONIC, seconds);
	struct bakery_acquire_opts o = { .flags = flags, .clock = CLOCK_MONOTONIC };

	if (!(flags & BAKERY_ACQUIRE_TRY))
		o.deadline = &at;
	return bakery_acquire(l, &o);
}

/*
 * BAKERY_ACQUIRE_ESLOTS tells a full region from a busy lock: with every
 * slot taken, a try or a deadline says BAKERY_ESLOTS where the plain calls
 * say EBUSY and ETIMEDOUT (the contract's answers, unchanged); with a slot
 * of our own, a busy lock is EBUSY and ETIMEDOUT with the flag too.
 */
START_TEST(a_full_region_is_told_from_a_busy_lock)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "eslots", 2, 3);
	bakery_lock_t *l = unit_lock(b, "l", BAKERY_ALGO_DEFAULT);
	bakery_lock_t *h1 = unit_lock(b, "h1", BAKERY_ALGO_DEFAULT);
	bakery_lock_t *h2 = unit_lock(b, "h2", BAKERY_ALGO_DEFAULT);
	struct squatter s1, s2, s3;
	const unsigned try = BAKERY_ACQUIRE_TRY, eslots = BAKERY_ACQUIRE_ESLOTS;

	/* both slots taken, L free */
	squatter_start(&s1, h1);
	squatter_start(&s2, h2);
	ck_assert_int_eq(bakery_trylock(l), EBUSY);
	ck_assert_int_eq(acquire_with(l, try, 0), EBUSY);
	ck_assert_int_eq(acquire_with(l, 0, 0.05), ETIMEDOUT);
	ck_assert_int_eq(acquire_with(l, try | eslots, 0), BAKERY_ESLOTS);
	ck_assert_int_eq(acquire_with(l, eslots, 0.05), BAKERY_ESLOTS);
	ck_assert_int_eq(acquire_with(l, try | eslots | BAKERY_ACQUIRE_SHARED, 0), BAKERY_ESLOTS);
	/* a slot of ours (held through H2), L held by another thread */
	squatter_stop(&s2);
	ck_assert_int_eq(bakery_lock(h2), 0);
	squatter_stop(&s1);
	squatter_start(&s3, l);
	ck_assert_int_eq(acquire_with(l, try | eslots, 0), EBUSY);
	ck_assert_int_eq(acquire_with(l, eslots, 0.05), ETIMEDOUT);
	squatter_stop(&s3);
	ck_assert_int_eq(acquire_with(l, try | eslots, 0), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_unlock(h2), 0);
	ck_assert_int_eq(bakery_lock_close(h1), 0);
	ck_assert_int_eq(bakery_lock_close(h2), 0);
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
	tcase_add_loop_test(tc, woken_sleeper_finds_the_slot_free, 0, 2);
	tcase_add_test(tc, giver_leaves_the_slot_to_its_sleeper);
	tcase_add_test(tc, a_full_region_is_told_from_a_busy_lock);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(slot_wait_suite());
}
