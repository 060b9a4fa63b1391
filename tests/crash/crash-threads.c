/* SPDX-License-Identifier: MIT */
/*
 * crash-threads.c - thread death, for every algorithm.
 *
 *   - A thread that exits while holding a lock is a dead owner, although its
 *     process lives on: the next locker, in the same process or in another
 *     one already waiting, is told EOWNERDEAD; the dead thread's slot is
 *     recovered and FREE; the process can still close the region.
 *   - A waiter in another process is woken by the thread's exit alone (no
 *     process dies): the delay from the thread's exit to the waiter's
 *     acquisition is printed.
 *   - A thread that exits normally gives its slot back: slots_used drops as
 *     soon as it is joined, and its slot is FREE.
 *
 * The threads run in a child process (process P below), which reports what
 * it saw through shared memory; the test process asserts.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <urcu/system.h>

#include "scene.h"

struct report {
	/* set by the test */
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	struct occupancy *occ;
	volatile int exit_thread;  /* the thread may exit now            */
	volatile int close_now;    /* process P may close and leave now  */
	/* set by process P and its thread */
	volatile int holding;      /* the thread holds the lock          */
	volatile int joined;
	pid_t tid;
	int thread_rc, main_rc, consistent_rc, unlock_rc, lock_close_rc, close_rc;
	uint64_t t_exit;           /* tk_ns() just before the thread ends */
	struct bakery_slot_info dead;   /* the thread's slot after join  */
	struct bakery_slot_info later;  /* the same slot at the end      */
	unsigned used_before, used_during, used_after;
	bakery_lock_t *l;
	bakery_t *b;
};

static int slot_of_tid(bakery_t *b, pid_t tid, struct bakery_slot_info *out)
{
	struct bakery_region_info ri;

	if (bakery_region_info(b, &ri))
		return -1;
	for (unsigned i = 0; i < ri.slots; i++)
		if (bakery_slot_info(b, i, out) == 0 && out->pid == getpid() && out->tid == tid)
			return (int)i;
	return -1;
}

/* Takes the lock and ends with it held when told to. */
static void *hold_and_exit(void *arg)
{
	struct report *r = arg;

	r->tid = tk_gettid();
	r->thread_rc = bakery_lock(r->l);
	if (r->thread_rc == 0)
		occupancy_pass(r->occ, 1, CRASH_OCC_PAUSE);
	CMM_STORE_SHARED(r->holding, 1);
	while (!CMM_LOAD_SHARED(r->exit_thread))
		usleep(100);
	r->t_exit = tk_ns();
	return NULL;
}

/* Takes and releases the lock, then ends normally when told to. */
static void *pass_and_exit(void *arg)
{
	struct report *r = arg;

	r->tid = tk_gettid();
	r->thread_rc = bakery_lock(r->l);
	if (r->thread_rc == 0) {
		occupancy_pass(r->occ, 1, CRASH_OCC_PAUSE);
		r->unlock_rc = bakery_unlock(r->l);
	}
	CMM_STORE_SHARED(r->holding, 1);
	while (!CMM_LOAD_SHARED(r->exit_thread))
		usleep(100);
	return NULL;
}

static int open_both(struct report *r)
{
	if (bakery_open(r->region, BAKERY_NORECOVER, NULL, &r->b))
		return 1;
	if (bakery_lock_open(r->b, CRASH_LOCK, r->algo, &r->l))
		return 2;
	return 0;
}

static int run_thread(struct report *r, void *(*fn)(void *))
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, r))
		return 3;
	if (pthread_join(t, NULL))
		return 4;
	CMM_STORE_SHARED(r->joined, 1);
	return 0;
}

static void close_both(struct report *r)
{
	r->lock_close_rc = bakery_lock_close(r->l);
	r->close_rc = bakery_close(r->b);
}

/* Process P: its thread dies holding, then P's main thread takes the lock. */
static int same_process(void *arg)
{
	struct report *r = arg;
	int err = open_both(r);

	if (err)
		return err;
	r->exit_thread = 1;
	if ((err = run_thread(r, hold_and_exit)))
		return err;
	if (slot_of_tid(r->b, r->tid, &r->dead) < 0)
		return 5;
	r->main_rc = bakery_lock(r->l);
	if (r->main_rc == EOWNERDEAD)
		r->consistent_rc = bakery_consistent(r->l);
	if (r->main_rc == 0 || r->main_rc == EOWNERDEAD) {
		occupancy_pass(r->occ, 2, CRASH_OCC_PAUSE);
		r->unlock_rc = bakery_unlock(r->l);
	}
	bakery_slot_info(r->b, r->dead.index, &r->later);
	close_both(r);
	return 0;
}

static void expect_dead_then_free(struct report *r, enum bakery_algo algo)
{
	ck_assert_msg(r->dead.state == BAKERY_SLOT_ACTIVE && r->dead.alive == 0 &&
	              r->dead.pass == BAKERY_PASS_CRITICAL,
	              "%s: the dead thread's slot: state %d alive %d pass %d",
	              bakery_algo_name(algo), r->dead.state, r->dead.alive, r->dead.pass);
	ck_assert_msg(r->later.state == BAKERY_SLOT_FREE, "%s: the dead thread's slot is not freed",
	              bakery_algo_name(algo));
}

START_TEST(test_thread_dies_holding)
{
	struct report *r = tk_shared(sizeof(*r));
	struct bakery_lock_info li;
	struct scene s;
	int st;

	scene_open(&s, "thread-dies", SCENE_ALGO(_i), 8);
	snprintf(r->region, sizeof(r->region), "%s", s.region);
	r->algo = s.algo;
	r->occ = &s.sh->occ;
	st = tk_reap(crash_fork(same_process, r, NULL), 20);
	ck_assert_msg(st == 0, "%s: process P ended with %d", bakery_algo_name(s.algo), st);
	ck_assert_int_eq(r->thread_rc, 0);
	expect_dead_then_free(r, s.algo);
	ck_assert_msg(r->main_rc == EOWNERDEAD, "%s: the next locker got %s",
	              bakery_algo_name(s.algo), bakery_strerror(r->main_rc));
	ck_assert_int_eq(r->consistent_rc, 0);
	ck_assert_int_eq(r->unlock_rc, 0);
	ck_assert_int_eq(r->lock_close_rc, 0);
	ck_assert_msg(r->close_rc == 0, "%s: bakery_close after a dead thread's lock was "
	              "recovered: %s", bakery_algo_name(s.algo), bakery_strerror(r->close_rc));
	li = crash_lock_info(s.b, s.l);
	ck_assert(li.owner_deaths == 1 && li.recoveries == 1 && !li.owner_dead);
	scene_expect_exclusion(&s, 2);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
	munmap(r, sizeof(*r));
}
END_TEST

/* Process P: its thread takes the lock and ends when told; P lives on. */
static int other_process(void *arg)
{
	struct report *r = arg;
	int err = open_both(r);

	if (err)
		return err;
	if ((err = run_thread(r, hold_and_exit)))
		return err;
	if (slot_of_tid(r->b, r->tid, &r->dead) < 0)
		return 5;
	if (!tk_wait_flag(&r->close_now, 1, 30))
		return 6;
	bakery_slot_info(r->b, r->dead.index, &r->later);
	close_both(r);
	return 0;
}

START_TEST(test_thread_death_wakes_waiter)
{
	struct report *r = tk_shared(sizeof(*r));
	struct scene s;
	struct crash_part *w;
	pid_t p;

	scene_open(&s, "thread-wakes", SCENE_ALGO(_i), 8);
	snprintf(r->region, sizeof(r->region), "%s", s.region);
	r->algo = s.algo;
	r->occ = &s.sh->occ;
	p = crash_fork(other_process, r, NULL);
	ck_assert(tk_wait_flag(&r->holding, 1, 10));
	scene_start(&s, 2, NULL, 0);
	scene_wait_waiting(&s, 2);
	r->exit_thread = 1;
	scene_expect_exit(&s, 2, 0);
	w = &s.sh->part[2];
	ck_assert_msg(w->rc == EOWNERDEAD, "%s: the waiter got %s",
	              bakery_algo_name(s.algo), bakery_strerror(w->rc));
	ck_assert(tk_wait_flag(&r->joined, 1, 10));
	fprintf(stderr, "%s: waiter in another process got the lock %.1f us after the "
	        "holding thread's exit\n", bakery_algo_name(s.algo),
	        (double)(w->t_acq - r->t_exit) / 1e3);
	/* process P is still alive: the death was the thread's alone */
	ck_assert(crash_proc_state(p) != 0 && crash_proc_state(p) != 'Z');
	r->close_now = 1;
	ck_assert_int_eq(tk_reap(p, 10), 0);
	/* (the waiter may have recovered the slot before P looked at it) */
	ck_assert_msg(r->later.state == BAKERY_SLOT_FREE, "%s: the dead thread's slot is not freed",
	              bakery_algo_name(s.algo));
	ck_assert_int_eq(r->lock_close_rc, 0);
	ck_assert_msg(r->close_rc == 0, "%s: bakery_close after a dead thread's lock was "
	              "recovered: %s", bakery_algo_name(s.algo), bakery_strerror(r->close_rc));
	scene_expect_exclusion(&s, 2);
	ck_assert_uint_eq(crash_slots_used(s.b), 0);
	scene_close(&s);
	munmap(r, sizeof(*r));
}
END_TEST

/* Process P: a thread takes a slot (one passage), then ends normally. */
static int normal_exit(void *arg)
{
	struct report *r = arg;
	pthread_t t;
	int err = open_both(r);

	if (err)
		return err;
	r->used_before = crash_slots_used(r->b);
	if (pthread_create(&t, NULL, pass_and_exit, r))
		return 3;
	if (!tk_wait_flag(&r->holding, 1, 10))
		return 4;
	r->used_during = crash_slots_used(r->b);
	if (slot_of_tid(r->b, r->tid, &r->dead) < 0)
		return 5;
	r->exit_thread = 1;
	if (pthread_join(t, NULL))
		return 6;
	r->used_after = crash_slots_used(r->b);
	bakery_slot_info(r->b, r->dead.index, &r->later);
	close_both(r);
	return 0;
}

START_TEST(test_thread_exit_gives_slot_back)
{
	struct report *r = tk_shared(sizeof(*r));
	struct scene s;

	scene_open(&s, "thread-exit", SCENE_ALGO(_i), 8);
	snprintf(r->region, sizeof(r->region), "%s", s.region);
	r->algo = s.algo;
	r->occ = &s.sh->occ;
	ck_assert_int_eq(tk_reap(crash_fork(normal_exit, r, NULL), 20), 0);
	ck_assert_int_eq(r->thread_rc, 0);
	ck_assert_int_eq(r->unlock_rc, 0);
	ck_assert_msg(r->used_before == 0 && r->used_during == 1 && r->used_after == 0,
	              "%s: slots used %u, %u while the thread lived, %u after it ended",
	              bakery_algo_name(s.algo), r->used_before, r->used_during, r->used_after);
	ck_assert(r->dead.state == BAKERY_SLOT_ACTIVE && r->dead.alive == 1);
	ck_assert(r->later.state == BAKERY_SLOT_FREE);
	ck_assert_int_eq(r->close_rc, 0);
	ck_assert_uint_eq(crash_lock_info(s.b, s.l).recoveries, 0);
	scene_expect_exclusion(&s, 1);
	scene_close(&s);
	munmap(r, sizeof(*r));
}
END_TEST

static Suite *suite(void)
{
	Suite *su = suite_create("crash-threads");
	TCase *tc = tcase_create("threads");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_thread_dies_holding, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_thread_death_wakes_waiter, 0, CRASH_NALGOS);
	tcase_add_loop_test(tc, test_thread_exit_gives_slot_back, 0, CRASH_NALGOS);
	suite_add_tcase(su, tc);
	return su;
}

int main(void)
{
	return scene_run(suite());
}
