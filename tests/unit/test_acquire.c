/* SPDX-License-Identifier: MIT */
/*
 * test_acquire.c - bakery_acquire and bakery_cancel, for every algorithm:
 * a cancel word ends a wait (set by another thread, another process, a
 * signal handler, or already set), BAKERY_ACQUIRE_INTR ends a wait that a
 * signal interrupts, its callback keeps the waiter in line when it says 0
 * and ends the wait when it says so, also with no signal at all (it is
 * asked every BAKERY_ACQUIRE_POLL_MS); every give-up leaves the line as a
 * timeout does (no waiter left, the next one in at once); a lock call from
 * inside the callback on the lock waited for is EDEADLK; bad options are
 * EINVAL and take nothing; all-zero options are bakery_lock, and the flags
 * and deadline stand for the try, shared and timed calls.
 *
 * No timing bound: a wait that does not end as it should holds up the test
 * (the holder lets go only after the waiter has returned) until Check's
 * timeout fails it.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unit.h"

#define WAIT_S 30.0            /* how long a step may take: only a hang waits so long */

static void fixture_open(struct unit_fixture *f, enum bakery_algo algo)
{
	unit_fixture_open(f, "acquire", 8, 2, "l", algo);
}

static unsigned waiters(struct unit_fixture *f)
{
	struct bakery_lock_info li;

	ck_assert_int_eq(bakery_lock_info(f->b, f->index, &li), 0);
	return li.waiters;
}

/* ------------------------------------------------------------ a waiter -- */

/* Acquisitions by the waiters so far (their order of entry). */
static int entries;

/* A thread in bakery_acquire with OPTS on L; its answer in rc, and the
 * count of entries including its own in entry.  It lets go at once. */
struct waiter {
	pthread_t thread;
	bakery_lock_t *l;
	struct bakery_acquire_opts opts;
	volatile pid_t tid;
	volatile int rc;
	volatile int done;
	int entry;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	int rc;

	w->tid = tk_gettid();
	rc = bakery_acquire(w->l, &w->opts);
	if (rc == 0 || rc == EOWNERDEAD) {
		w->entry = __atomic_add_fetch(&entries, 1, __ATOMIC_SEQ_CST);
		bakery_unlock(w->l);
	}
	w->rc = rc;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void waiter_start(struct waiter *w, bakery_lock_t *l)
{
	w->l = l;
	w->rc = -1;
	w->done = 0;
	w->tid = 0;
	w->entry = 0;
	ck_assert_int_eq(pthread_create(&w->thread, NULL, waiter_main, w), 0);
}

static int waiter_join(struct waiter *w)
{
	ck_assert_int_eq(pthread_join(w->thread, NULL), 0);
	return w->rc;
}

/* The state letter of thread TID of this process ('S': asleep). */
static char thread_state(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (!(f = fopen(path, "r")))
		return '?';
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : '?';
}

struct queued {
	struct unit_fixture *f;
	struct waiter *w;
	unsigned count;
};

/* COUNT waiters in line, and W asleep in its wait. */
static bool is_queued_asleep(void *arg)
{
	struct queued *q = arg;
	struct bakery_lock_info li;

	return q->w->tid && bakery_lock_info(q->f->b, q->f->index, &li) == 0 &&
	       li.waiters == q->count && thread_state(q->w->tid) == 'S';
}

static void wait_queued(struct unit_fixture *f, struct waiter *w, unsigned count)
{
	struct queued q = { f, w, count };

	ck_assert_msg(tk_wait_until(is_queued_asleep, &q, WAIT_S), "the waiter never slept in line");
}

/* F's lock held by H, and W (its options set) in line behind it, asleep. */
static void waiter_behind_holder(struct unit_fixture *f, struct unit_holder *h, struct waiter *w)
{
	unit_holder_start(h, f->l);
	waiter_start(w, f->l);
	wait_queued(f, w, 1);
}

/* The line is left as a timeout leaves it: nobody waits, and the lock,
 * once its holder lets go, is taken by a trylock at once. */
static void assert_line_clean(struct unit_fixture *f, struct unit_holder *h)
{
	struct bakery_lock_info li;

	ck_assert_uint_eq(waiters(f), 0);
	unit_holder_stop(h);
	ck_assert_int_eq(bakery_trylock(f->l), 0);
	ck_assert_int_eq(bakery_unlock(f->l), 0);
	ck_assert_int_eq(bakery_lock_info(f->b, f->index, &li), 0);
	ck_assert_uint_ge(li.aborts, 1);
}

/* --------------------------------------------------------- cancel word -- */

START_TEST(cancel_from_another_thread)
{
	struct unit_fixture f;
	struct unit_holder h;
	struct waiter w = { 0 };
	uint32_t word = 0;

	fixture_open(&f, (enum bakery_algo)_i);
	w.opts.cancel = &word;
	waiter_behind_holder(&f, &h, &w);
	ck_assert_int_eq(bakery_cancel(&word), 0);
	ck_assert_msg(waiter_join(&w) == ECANCELED, "waiter: %s", bakery_strerror(w.rc));
	assert_line_clean(&f, &h);
	unit_fixture_close(&f);
}
END_TEST

/* A cancel word already set: one attempt, as with a deadline already past. */
START_TEST(cancel_already_set)
{
	struct unit_fixture f;
	struct unit_holder h;
	uint32_t word = 1;
	struct bakery_acquire_opts o = { .cancel = &word };

	fixture_open(&f, (enum bakery_algo)_i);
	ck_assert_int_eq(bakery_acquire(f.l, &o), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_holder_start(&h, f.l);
	ck_assert_int_eq(bakery_acquire(f.l, &o), ECANCELED);
	assert_line_clean(&f, &h);
	unit_fixture_close(&f);
}
END_TEST

/* The word in shared memory: a waiter in another process is cancelled. */
struct child_waiter {
	char region[TK_NAME_SIZE];
	uint32_t word;
	volatile int rc;
};

static int child_waiter_main(void *arg)
{
	struct child_waiter *c = arg;
	struct bakery_acquire_opts o = { .cancel = &c->word };
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(c->region, 0, NULL, &b) ||
	    bakery_lock_open(b, "l", BAKERY_ALGO_DEFAULT, &l))
		return 1;
	c->rc = bakery_acquire(l, &o);
	return 0;
}

START_TEST(cancel_another_process)
{
	struct unit_fixture f;
	struct unit_holder h;
	struct child_waiter *c = tk_shared(sizeof(*c));
	struct unit_queued q;
	pid_t pid;

	fixture_open(&f, (enum bakery_algo)_i);
	snprintf(c->region, sizeof(c->region), "%s", f.name);
	c->rc = -1;
	unit_holder_start(&h, f.l);
	pid = tk_fork(child_waiter_main, c);
	q = (struct unit_queued){ f.b, pid, 1 };
	/* the lock is at table index 0 */
	ck_assert_uint_eq(f.index, 0);
	ck_assert_msg(tk_wait_until(unit_queued_asleep, &q, WAIT_S), "the child never slept in line");
	ck_assert_int_eq(bakery_cancel(&c->word), 0);
	ck_assert_int_eq(tk_reap(pid, WAIT_S), 0);
	ck_assert_msg(c->rc == ECANCELED, "child: %s", bakery_strerror(c->rc));
	assert_line_clean(&f, &h);
	unit_fixture_close(&f);
}
END_TEST

/* -------------------------------------------------------------- signals -- */

static volatile sig_atomic_t caught;
static uint32_t *handler_cancels;      /* the word the handler sets, if any */

static void on_signal(int sig)
{
	(void)sig;
	caught++;
	if (handler_cancels)
		bakery_cancel(handler_cancels);
}

/* SIGUSR1 to on_signal, without SA_RESTART (or with it) */
static void catch_usr1(bool restart)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	caught = 0;
	handler_cancels = NULL;
}

static bool done(void *arg)
{
	const struct waiter *w = arg;

	return __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
}

/* A signal that interrupts the sleep ends a BAKERY_ACQUIRE_INTR wait.  (One
 * that comes while the waiter is awake, between two sleeps, interrupts
 * nothing: it is sent again until the wait ends.) */
START_TEST(intr_ends_wait)
{
	struct unit_fixture f;
	struct unit_holder h;
	struct waiter w = { 0 };

	fixture_open(&f, (enum bakery_algo)_i);
	catch_usr1(false);
	w.opts.flags = BAKERY_ACQUIRE_INTR;
	waiter_behind_holder(&f, &h, &w);
	do
		ck_assert_int_eq(pthread_kill(w.thread, SIGUSR1), 0);
	while (!tk_wait_until(done, &w, 0.1));
	ck_assert_msg(waiter_join(&w) == EINTR, "waiter: %s", bakery_strerror(w.rc));
	ck_assert_int_ge(caught, 1);
	assert_line_clean(&f, &h);
	unit_fixture_close(&f);
}
END_TEST

/* A handler installed with SA_RESTART ends the wait through the cancel
 * word, whatever the kernel does with the interrupted sleep. */
START_TEST(handler_cancels_wait)
{
	struct unit_fixture f;
	struct unit_holder h;
	struct waiter w = { 0 };
	static uint32_t word;

	fixture_open(&f, (enum bakery_algo)_i);
	catch_usr1(true);
	word = 0;
	handler_cancels = &word;
	w.opts.cancel = &word;
	waiter_behind_holder(&f, &h, &w);
	ck_assert_int_eq(pthread_kill(w.thread, SIGUSR1), 0);
	ck_assert_msg(waiter_join(&w) == ECANCELED, "waiter: %s", bakery_strerror(w.rc));
	handler_cancels = NULL;
	assert_line_clean(&f, &h);
	unit_fixture_close(&f);
}
END_TEST

/* Without BAKERY_ACQUIRE_INTR a signal changes nothing: the waiter gets
 * the lock once its holder lets go. */
START_TEST(signal_without_intr_keeps_waiting)
{
	struct unit_fixture f;
	struct unit_holder h;
	struct waiter w = { 0 };

	fixture_open(&f, (enum bakery_algo)_i);
	catch_usr1(false);
	waiter_behind_holder(&f, &h, &w);
	ck_assert_int_eq(pthread_kill(w.thread, SIGUSR1), 0);
	ck_assert(tk_wait_until(is_queued_asleep, &(struct queued){ &f, &w, 1 }, WAIT_S));
	ck_assert_int_eq(caught, 1);
	unit_holder_stop(&h);
	ck_assert_msg(waiter_join(&w) == 0, "waiter: %s", bakery_strerror(w.rc));
	unit_fixture_close(&f);
}
END_TEST

/* -------------------------------------------------------------- callback -- */

/* The callback's view: how often it was asked, and what it answers. */
struct judge {
	volatile int asked;
	volatile int give_up;      /* the answer */
	bakery_lock_t *l;          /* if set: try it from inside the callback */
	volatile int nested_rc;
};

static bool asked_twice(void *arg)
{
	const struct judge *j = arg;

	return j->asked >= 2;
}

static int judge_main(void *arg)
{
	struct judge *j = arg;

	j->asked++;
	if (j->l) {
		j->nested_rc = bakery_trylock(j->l);
		j->l = NULL;
	}
	return j->give_up;
}

/* Behind the holder H of F's lock, FIRST (judged by J) and SECOND in line;
 * FIRST interrupted, its callback asked (once for the signal, again
 * BAKERY_ACQUIRE_POLL_MS later), saying 0: it stays in line. */
static void first_judged_in_line(struct unit_fixture *f, enum bakery_algo algo,
                                 struct unit_holder *h, struct waiter *first,
                                 struct waiter *second, struct judge *j)
{
	fixture_open(f, algo);
	catch_usr1(false);
	entries = 0;
	first->opts = (struct bakery_acquire_opts){ .flags = BAKERY_ACQUIRE_INTR,
	                                            .interrupted = judge_main, .arg = j };
	waiter_behind_holder(f, h, first);
	waiter_start(second, f->l);
	wait_queued(f, second, 2);
	ck_assert_int_eq(pthread_kill(first->thread, SIGUSR1), 0);
	ck_assert(tk_wait_until(asked_twice, j, WAIT_S));
	ck_assert_int_eq(caught, 1);
	ck_assert(!first->done);
	ck_assert_uint_eq(waiters(f), 2);
}

/* A callback that says 0 keeps the waiter in line, ahead of one that came
 * later; asked again with no signal, it ends the wait when it says so. */
START_TEST(callback_keeps_place_then_gives_up)
{
	struct unit_fixture f;
	struct unit_holder h;
	struct waiter first = { 0 }, second = { 0 };
	struct judge j = { 0 };

	first_judged_in_line(&f, (enum bakery_algo)_i, &h, &first, &second, &j);
	/* no signal now: asked again, gives up */
	j.give_up = 1;
	ck_assert_msg(waiter_join(&first) == EINTR, "first: %s", bakery_strerror(first.rc));
	ck_assert_int_ge(j.asked, 2);
	unit_holder_stop(&h);
	ck_assert_msg(waiter_join(&second) == 0, "second: %s", bakery_strerror(second.rc));
	ck_assert_uint_eq(waiters(&f), 0);
	unit_fixture_close(&f);
}
END_TEST

/* Kept in line: the first waiter, interrupted and told to go on, still
 * enters before the one that came after it. */
START_TEST(callback_zero_keeps_fifo)
{
	struct unit_fixture f;
	struct unit_holder h;
	struct waiter first = { 0 }, second = { 0 };
	struct judge j = { 0 };

	first_judged_in_line(&f, (enum bakery_algo)_i, &h, &first, &second, &j);
	unit_holder_stop(&h);
	ck_assert_msg(waiter_join(&first) == 0, "first: %s", bakery_strerror(first.rc));
	ck_assert_msg(waiter_join(&second) == 0, "second: %s", bakery_strerror(second.rc));
	ck_assert_int_eq(first.entry, 1);
	ck_assert_int_eq(second.entry, 2);
	unit_fixture_close(&f);
}
END_TEST

/* A lock call on the same lock from inside the callback is EDEADLK, and
 * the wait goes on unharmed. */
START_TEST(callback_nested_call_refused)
{
	struct unit_fixture f;
	struct unit_holder h;
	struct waiter w = { 0 };
	struct judge j = { 0 };

	fixture_open(&f, (enum bakery_algo)_i);
	catch_usr1(false);
	j.l = f.l;
	w.opts = (struct bakery_acquire_opts){ .flags = BAKERY_ACQUIRE_INTR,
	                                       .interrupted = judge_main, .arg = &j };
	waiter_behind_holder(&f, &h, &w);
	ck_assert_int_eq(pthread_kill(w.thread, SIGUSR1), 0);
	ck_assert(tk_wait_until(asked_twice, &j, WAIT_S));
	unit_holder_stop(&h);
	ck_assert_msg(waiter_join(&w) == 0, "waiter: %s", bakery_strerror(w.rc));
	ck_assert_msg(j.nested_rc == EDEADLK, "nested: %s", bakery_strerror(j.nested_rc));
	ck_assert_uint_eq(waiters(&f), 0);
	unit_fixture_close(&f);
}
END_TEST

/* ------------------------------------------------------------- options -- */

START_TEST(options_stand_for_the_other_calls)
{
	struct unit_fixture f;
	struct unit_holder h;
	struct bakery_acquire_opts zero = { 0 };
	struct bakery_acquire_opts try = { .flags = BAKERY_ACQUIRE_TRY };
	struct bakery_acquire_opts rd = { .flags = BAKERY_ACQUIRE_SHARED | BAKERY_ACQUIRE_TRY };
	struct timespec soon = tk_in(CLOCK_MONOTONIC, 0.05);
	struct bakery_acquire_opts timed = { .clock = CLOCK_MONOTONIC, .deadline = &soon };
	int shared_rc = _i == BAKERY_ALGO_JAYANTI ? ENOTSUP : 0;

	fixture_open(&f, (enum bakery_algo)_i);
	ck_assert_int_eq(bakery_acquire(f.l, &zero), 0);
	ck_assert_int_eq(bakery_acquire(f.l, &zero), EDEADLK);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(bakery_acquire(f.l, &rd), shared_rc);
	if (!shared_rc)
		ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_holder_start(&h, f.l);
	ck_assert_int_eq(bakery_acquire(f.l, &try), EBUSY);
	ck_assert_int_eq(bakery_acquire(f.l, &timed), ETIMEDOUT);
	assert_line_clean(&f, &h);
	unit_fixture_close(&f);
}
END_TEST

START_TEST(bad_options_take_nothing)
{
	struct unit_fixture f;
	struct unit_holder h;
	struct timespec ok = tk_in(CLOCK_MONOTONIC, 1), bad = ok;
	const struct bakery_acquire_opts wrong[] = {
		{ .flags = 0x80 },
		{ .flags = BAKERY_ACQUIRE_TRY, .clock = CLOCK_MONOTONIC, .deadline = &ok },
		{ .interrupted = judge_main },
		{ .clock = CLOCK_PROCESS_CPUTIME_ID, .deadline = &ok },
		{ .clock = CLOCK_MONOTONIC, .deadline = &bad },
		{ .reserved = { NULL, NULL, NULL, &ok } },
	};

	bad.tv_nsec = 1000000000L;
	fixture_open(&f, (enum bakery_algo)_i);
	ck_assert_int_eq(bakery_acquire(f.l, NULL), EINVAL);
	ck_assert_int_eq(bakery_acquire(NULL, &wrong[0]), EINVAL);
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++)
		ck_assert_msg(bakery_acquire(f.l, &wrong[i]) == EINVAL, "options %zu", i);
	ck_assert_int_eq(bakery_cancel(NULL), EINVAL);
	/* none of them took the lock */
	unit_holder_start(&h, f.l);
	unit_holder_stop(&h);
	unit_fixture_close(&f);
}
END_TEST

static Suite *acquire_suite(void)
{
	Suite *s = suite_create("acquire");
	TCase *tc = tcase_create("acquire");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, cancel_from_another_thread, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, cancel_already_set, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, cancel_another_process, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, intr_ends_wait, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, handler_cancels_wait, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, signal_without_intr_keeps_waiting, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, callback_keeps_place_then_gives_up, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, callback_zero_keeps_fifo, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, callback_nested_call_refused, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, options_stand_for_the_other_calls, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, bad_options_take_nothing, TK_ALGO_FIRST, TK_ALGO_END);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(acquire_suite());
}
