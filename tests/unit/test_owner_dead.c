/* SPDX-License-Identifier: MIT */
/*
 * test_owner_dead.c - the robust-mutex contract, for every algorithm: a
 * holder SIGKILLed (or a thread exiting) inside the critical section makes
 * the next acquirer get EOWNERDEAD with the lock held; bakery_consistent then
 * unlock restores the lock; unlock without it makes the lock ENOTRECOVERABLE
 * for everyone, including processes that come later.  Also how soon a waiter
 * blocked behind the dying holder gets the lock (recovery latency), and that
 * threads dying while holding leave no mappings behind.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
static void leak_expected_begin(void) { __lsan_disable(); }
static void leak_expected_end(void) { __lsan_enable(); }
#else
static void leak_expected_begin(void) { }
static void leak_expected_end(void) { }
#endif

static void fixture_open(struct unit_fixture *f, int algo)
{
	unit_fixture_open(f, "odead", 4, 2, "precious", (enum bakery_algo)algo);
}

static void doomed_start(struct unit_fixture *f)
{
	f->child = unit_holder_process(f->name, f->lock, f->algo);
}

/* The child dies holding the lock; we then acquire with EOWNERDEAD. */
static void acquire_after_death(struct unit_fixture *f)
{
	struct bakery_lock_info li;
	int rc;

	doomed_start(f);
	ck_assert(tk_kill(f->child));
	rc = bakery_lock(f->l);
	ck_assert_msg(rc == EOWNERDEAD, "lock after the holder died: %s", bakery_strerror(rc));
	li = unit_fixture_info(f);
	ck_assert_int_eq(li.holder, tk_self_slot(f->b));   /* we hold it */
	ck_assert_int_eq(li.owner_dead, 1);
	ck_assert_uint_eq(li.owner_deaths, 1);
	ck_assert_int_eq(bakery_lock(f->l), EDEADLK);
}

START_TEST(consistent_then_unlock_restores_the_lock)
{
	struct unit_fixture f;
	struct unit_holder h;

	fixture_open(&f, _i);
	acquire_after_death(&f);
	ck_assert_int_eq(bakery_consistent(f.l), 0);
	ck_assert_int_eq(bakery_consistent(f.l), EINVAL);   /* once is enough */
	ck_assert_int_eq(unit_fixture_info(&f).owner_dead, 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_holder_start(&h, f.l);         /* and another thread gets 0 too */
	unit_holder_stop(&h);
	ck_assert_int_eq(unit_fixture_info(&f).not_recoverable, 0);
	unit_fixture_close(&f);
}
END_TEST

/* A later process, with its own open, finds the lock unrecoverable. */
static int late_comer(void *arg)
{
	struct unit_fixture *f = arg;
	bakery_lock_t *l;
	bakery_t *b;

	if (bakery_open(f->name, 0, NULL, &b) || bakery_lock_open(b, "precious", f->algo, &l))
		return 1;
	if (bakery_lock(l) != ENOTRECOVERABLE)
		return 2;
	if (bakery_trylock(l) != ENOTRECOVERABLE)
		return 3;
	/* and the inherited handle says the same */
	if (bakery_lock(f->l) != ENOTRECOVERABLE)
		return 4;
	return 0;
}

START_TEST(unlock_without_consistent_is_not_recoverable)
{
	struct unit_fixture f;
	struct timespec at;
	struct bakery_lock_info li;

	fixture_open(&f, _i);
	acquire_after_death(&f);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(bakery_lock(f.l), ENOTRECOVERABLE);
	ck_assert_int_eq(bakery_trylock(f.l), ENOTRECOVERABLE);
	at = tk_in(CLOCK_REALTIME, 0.05);
	ck_assert_int_eq(bakery_timedlock(f.l, &at), ENOTRECOVERABLE);
	ck_assert_int_eq(bakery_unlock(f.l), EPERM);         /* nothing is held */
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.not_recoverable, 1);
	ck_assert_int_eq(li.holder, -1);
	ck_assert_int_eq(tk_reap(tk_fork(late_comer, &f), 20), 0);
	unit_fixture_close(&f);
}
END_TEST

/* Nobody waits at the time of the death: a timed acquirer finds the dead
 * holder and takes over with EOWNERDEAD (trylock: bug-trylock-dead.c). */
START_TEST(timed_finds_the_dead_holder)
{
	struct unit_fixture f;
	struct timespec at;
	int rc;

	fixture_open(&f, _i);
	doomed_start(&f);
	ck_assert(tk_kill(f.child));
	at = tk_in(CLOCK_MONOTONIC, 2);
	rc = bakery_clocklock(f.l, CLOCK_MONOTONIC, &at);
	ck_assert_msg(rc == EOWNERDEAD, "clocklock after the holder died: %s", bakery_strerror(rc));
	ck_assert_int_eq(bakery_consistent(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_fixture_close(&f);
}
END_TEST

/* ----------------------------------------------- waiter behind the dead -- */

struct waiter {
	bakery_lock_t *l;
	int rc;
	double got_at;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->rc = bakery_lock(w->l);
	w->got_at = tk_now(CLOCK_MONOTONIC);
	if (w->rc == EOWNERDEAD)
		bakery_consistent(w->l);
	if (w->rc == 0 || w->rc == EOWNERDEAD)
		bakery_unlock(w->l);
	return NULL;
}

static bool waiter_waiting(void *arg)
{
	struct unit_fixture *f = arg;

	return unit_fixture_info(f).waiters == 1;
}

START_TEST(blocked_waiter_wakes_when_holder_dies)
{
	struct unit_fixture f;
	struct waiter w = { .rc = -1 };
	pthread_t th;
	double killed_at, latency;

	fixture_open(&f, _i);
	doomed_start(&f);
	w.l = f.l;
	ck_assert_int_eq(pthread_create(&th, NULL, waiter_main, &w), 0);
	ck_assert(tk_wait_until(waiter_waiting, &f, 5));
	usleep(100000);                     /* let it fall asleep in the kernel */
	killed_at = tk_now(CLOCK_MONOTONIC);
	ck_assert(tk_kill(f.child));
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	latency = w.got_at - killed_at;
	ck_assert_msg(w.rc == EOWNERDEAD, "waiter: %s", bakery_strerror(w.rc));
	printf("%s: waiter got the lock %.3f ms after its holder was killed\n",
	       bakery_algo_name(f.algo), latency * 1e3);
	ck_assert_msg(latency < 1.0, "recovery took %.3f s", latency);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_fixture_close(&f);
}
END_TEST

/* ---------------------------------------------------------- thread exit -- */

static void *exit_holding(void *arg)
{
	bakery_lock(arg);
	pthread_exit(NULL);
}

/* A thread of ours takes the lock and exits holding it. */
static void thread_dies_holding(bakery_lock_t *l)
{
	pthread_t th;

	ck_assert_int_eq(pthread_create(&th, NULL, exit_holding, l), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
}

/* The fixture of a test in which a thread dies holding the lock: by design
 * the region handle stays mapped for good once a thread died holding one
 * of its locks (registry.c), which is not a leak to report. */
static void fixture_open_for_deaths(struct unit_fixture *f, int algo)
{
	leak_expected_begin();
	fixture_open(f, algo);
	leak_expected_end();
}

/* Lines of /proc/self/maps: the process's mappings. */
static unsigned mappings(void)
{
	char line[512];
	unsigned n = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		n += strchr(line, '\n') != NULL;
	fclose(f);
	return n;
}

/* One thread dies holding the lock; we recover it. */
static void death_and_recovery(struct unit_fixture *f)
{
	thread_dies_holding(f->l);
	ck_assert_int_eq(bakery_lock(f->l), EOWNERDEAD);
	ck_assert_int_eq(bakery_consistent(f->l), 0);
	ck_assert_int_eq(bakery_unlock(f->l), 0);
}

#define DEATHS 40

/* Threads that exit holding a lock cost the surviving process nothing for
 * good: their token windows are unmapped once the kernel has marked the
 * tokens (the next lock call after), so DEATHS deaths leave the mapping
 * count where one left it (each used to keep two mappings). */
START_TEST(thread_deaths_leave_no_mappings)
{
	struct unit_fixture f;
	unsigned before;
	struct bakery_lock_info li;

	fixture_open(&f, _i);
	death_and_recovery(&f);         /* our own slot and window, once */
	before = mappings();
	for (unsigned i = 0; i < DEATHS; i++)
		death_and_recovery(&f);
	li = unit_fixture_info(&f);
	ck_assert_uint_eq(li.owner_deaths, DEATHS + 1);
	ck_assert_msg(mappings() <= before + 2, "%u mappings after %u deaths, %u before",
	              mappings(), DEATHS, before);
	unit_fixture_close(&f);
}
END_TEST

START_TEST(thread_exit_while_holding)
{
	struct unit_fixture f;

	fixture_open_for_deaths(&f, _i);
	thread_dies_holding(f.l);
	ck_assert_int_eq(bakery_lock(f.l), EOWNERDEAD);
	ck_assert_int_eq(unit_fixture_info(&f).owner_deaths, 1);
	ck_assert_int_eq(bakery_consistent(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_fixture_close(&f);
}
END_TEST

/* How the last holder left an owner-died lock: dead (DIED), or told and
 * gone without bakery_consistent (UNREPAIRED: a failed repair); a repair
 * clears both, and a new death after a failed repair is a death again. */
START_TEST(failed_repair_told_from_death)
{
	struct unit_fixture f;

	fixture_open_for_deaths(&f, _i);
	thread_dies_holding(f.l);
	ck_assert_int_eq(bakery_recover(f.b, NULL), 0);
	ck_assert_int_eq(unit_fixture_info(&f).owner_dead, BAKERY_OWNER_DEAD_DIED);
	/* told, gone without repairing */
	thread_dies_holding(f.l);
	ck_assert_int_eq(bakery_lock(f.l), EOWNERDEAD);
	ck_assert_int_eq(unit_fixture_info(&f).owner_dead, BAKERY_OWNER_DEAD_UNREPAIRED);
	/* and after that one, a plain death */
	ck_assert_int_eq(bakery_consistent(f.l), 0);
	ck_assert_int_eq(unit_fixture_info(&f).owner_dead, 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	thread_dies_holding(f.l);
	ck_assert_int_eq(bakery_lock(f.l), EOWNERDEAD);
	ck_assert_int_eq(unit_fixture_info(&f).owner_dead, BAKERY_OWNER_DEAD_DIED);
	ck_assert_int_eq(bakery_consistent(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_fixture_close(&f);
}
END_TEST

static Suite *owner_dead_suite(void)
{
	Suite *s = suite_create("owner-dead");
	TCase *tc = tcase_create("owner-dead");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, consistent_then_unlock_restores_the_lock, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, unlock_without_consistent_is_not_recoverable,
	                    TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, timed_finds_the_dead_holder, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, blocked_waiter_wakes_when_holder_dies, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, thread_exit_while_holding, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, thread_deaths_leave_no_mappings, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, failed_repair_told_from_death, TK_ALGO_FIRST, TK_ALGO_END);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(owner_dead_suite());
}
