/* SPDX-License-Identifier: MIT */
/*
 * test_introspect.c - bakery_region_info, bakery_slot_info and
 * bakery_lock_info report what the test set up, for every algorithm:
 * capacities, identity and mode of the region, slots in use, the holder's
 * slot in stage CRITICAL, a second thread counted as a waiter while it
 * waits, acquisition and abort counts; the lock's state as a display
 * shows it; the reserved tails of the structs.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

START_TEST(region_info_reports_the_setup)
{
	struct bakery_config cfg = { .slots = 5, .locks = 3, .mode = 0640 };
	char name[TK_NAME_SIZE], path[TK_NAME_SIZE + 16];
	struct bakery_region_info ri;
	struct stat st;
	bakery_t *b = NULL;
	bakery_lock_t *l;
	double t0 = tk_now(CLOCK_REALTIME), t1;

	tk_name(name, sizeof(name), "rinfo");
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b), 0);
	t1 = tk_now(CLOCK_REALTIME);
	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	ck_assert_uint_ge(ri.version, 1);
	ck_assert_uint_eq(ri.slots, 5);
	ck_assert_uint_eq(ri.locks, 3);
	ck_assert_uint_eq(ri.slots_used, 0);
	ck_assert_uint_eq(ri.locks_used, 0);
	ck_assert_int_eq(ri.creator_pid, getpid());
	ck_assert_uint_eq(ri.creator_uid, getuid());
	ck_assert_uint_eq(ri.mode, 0640);
	ck_assert((double)ri.created_ns / 1e9 >= t0 - 0.01);
	ck_assert((double)ri.created_ns / 1e9 <= t1 + 0.01);
	unit_shm_path(path, sizeof(path), name);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(ri.size > 0 && ri.size <= (uint64_t)st.st_size);

	l = unit_lock(b, "one", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	ck_assert_uint_eq(ri.locks_used, 1);
	ck_assert_uint_eq(ri.slots_used, 0);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	ck_assert_uint_eq(ri.slots_used, 1);
	ck_assert_int_eq(bakery_unlock(l), 0);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* ------------------------------------------------------------ per lock -- */

/* A second thread that waits for the lock, holds it until told, and exits. */
struct second {
	pthread_t thread;
	bakery_lock_t *l;
	bakery_t *b;
	int rc, slot;
	struct tk_gate got, leave;
};

static void *second_main(void *arg)
{
	struct second *s = arg;

	s->rc = bakery_lock(s->l);
	s->slot = tk_self_slot(s->b);
	tk_gate_open(&s->got);
	tk_gate_wait(&s->leave, 60);
	if (s->rc == 0)
		bakery_unlock(s->l);
	return NULL;
}

static bool second_waiting(void *arg)
{
	struct unit_fixture *f = arg;
	struct bakery_lock_info li = unit_fixture_info(f);
	int me = tk_self_slot(f->b);

	if (li.waiters != 1)
		return false;
	/* the other active slot has reached its waiting stage */
	for (int s = 0; s < 4; s++)
		if (s != me && unit_slot_info(f->b, s).pass == BAKERY_PASS_WAITING)
			return true;
	return false;
}

static void *abort_once(void *arg)
{
	return (void *)(intptr_t)bakery_trylock(arg);
}

START_TEST(lock_and_slot_info_follow_a_passage)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	struct unit_fixture f;
	struct bakery_lock_info li;
	struct bakery_slot_info si;
	struct second s = { .rc = -1, .slot = -1 };
	pthread_t th;
	void *rc;
	int me;

	unit_fixture_open(&f, "linfo", 4, 3, "watched", algo);
	ck_assert_uint_lt(f.index, 3);

	li = unit_fixture_info(&f);
	ck_assert_str_eq(li.name, "watched");
	ck_assert_uint_eq(li.index, f.index);
	ck_assert_int_eq(li.algo, algo);
	ck_assert_int_eq(li.holder, -1);
	ck_assert_uint_eq(li.waiters, 0);
	ck_assert_uint_eq(li.participants, 0);
	ck_assert(li.acquisitions == 0 && li.aborts == 0 && li.recoveries == 0);
	ck_assert(li.owner_deaths == 0 && !li.owner_dead && !li.not_recoverable);

	/* we hold it */
	ck_assert_int_eq(bakery_lock(f.l), 0);
	me = tk_self_slot(f.b);
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.holder, me);
	ck_assert_uint_eq(li.participants, 1);
	ck_assert(li.acquisitions == 1);
	si = unit_slot_info(f.b, me);
	ck_assert_uint_eq(si.index, (unsigned)me);
	ck_assert_int_eq(si.state, BAKERY_SLOT_ACTIVE);
	ck_assert_int_eq(si.alive, 1);
	ck_assert_int_eq(si.pid, getpid());
	ck_assert_int_eq(si.tid, tk_gettid());
	ck_assert_int_eq(si.pass, BAKERY_PASS_CRITICAL);
	ck_assert_int_eq(si.lock, (int)f.index);

	/* a second thread waits */
	s.l = f.l;
	s.b = f.b;
	tk_gate_init(&s.got);
	tk_gate_init(&s.leave);
	ck_assert_int_eq(pthread_create(&s.thread, NULL, second_main, &s), 0);
	ck_assert_msg(tk_wait_until(second_waiting, &f, 5), "no waiter seen");
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.holder, me);
	ck_assert_uint_eq(li.participants, 2);

	/* it gets the lock when we let go */
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert(tk_gate_wait(&s.got, 10));
	ck_assert_int_eq(s.rc, 0);
	ck_assert_int_ne(s.slot, me);
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.holder, s.slot);
	ck_assert_uint_eq(li.waiters, 0);
	ck_assert(li.acquisitions == 2);
	ck_assert_int_eq(unit_slot_info(f.b, s.slot).pass, BAKERY_PASS_CRITICAL);
	si = unit_slot_info(f.b, me);
	ck_assert_int_eq(si.pass, BAKERY_PASS_IDLE);
	ck_assert_int_eq(si.lock, -1);

	/* one give-up of a trylock while it holds */
	ck_assert_int_eq(pthread_create(&th, NULL, abort_once, f.l), 0);
	ck_assert_int_eq(pthread_join(th, &rc), 0);
	ck_assert_int_eq((int)(intptr_t)rc, EBUSY);
	ck_assert(unit_fixture_info(&f).aborts == 1);

	tk_gate_open(&s.leave);
	ck_assert_int_eq(pthread_join(s.thread, NULL), 0);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.holder, me);
	ck_assert(li.acquisitions == 3);
	ck_assert(li.aborts == 1);
	ck_assert(li.owner_deaths == 0 && li.recoveries == 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	/* the second thread's slot went back at its exit */
	ck_assert_int_eq(unit_slot_info(f.b, s.slot).state, BAKERY_SLOT_FREE);
	ck_assert_int_eq(unit_slot_info(f.b, s.slot).alive, -1);

	tk_gate_close(&s.got);
	tk_gate_close(&s.leave);
	unit_fixture_close(&f);
}
END_TEST

/* The state a status display shows, as the library derives it: a holder's
 * death counts as soon as the kernel has proven it, before anyone recovered
 * it (owner_dead, the flag recovery sets, is still 0 then). */
START_TEST(lock_state_follows_an_owner_death)
{
	struct unit_fixture f;
	struct bakery_lock_info li;

	unit_fixture_open(&f, "lstate", 4, 2, "watched", (enum bakery_algo)_i);
	ck_assert_int_eq(unit_fixture_info(&f).state, BAKERY_LOCK_OK);
	f.child = unit_holder_process(f.name, f.lock, f.algo);
	ck_assert_int_eq(unit_fixture_info(&f).state, BAKERY_LOCK_OK);  /* alive */
	ck_assert(tk_kill(f.child));
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.owner_dead, 0);
	ck_assert_int_eq(li.state, BAKERY_LOCK_OWNER_DIED);
	ck_assert_int_eq(bakery_lock(f.l), EOWNERDEAD);
	li = unit_fixture_info(&f);
	ck_assert_int_eq(li.owner_dead, 1);
	ck_assert_int_eq(li.state, BAKERY_LOCK_OWNER_DIED);
	ck_assert_int_eq(bakery_unlock(f.l), 0);           /* not repaired */
	ck_assert_int_eq(unit_fixture_info(&f).state, BAKERY_LOCK_NOT_RECOVERABLE);
	unit_fixture_close(&f);
}
END_TEST

/* The reserved tails of the public structs: zeroed by the calls that fill
 * them, and refused (EINVAL) when a caller's configuration sets them. */
static bool zero(const unsigned *words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (words[i])
			return false;
	return true;
}
#define ZERO(array) zero((array), sizeof(array) / sizeof((array)[0]))

START_TEST(reserved_fields)
{
	struct bakery_config cfg = { .slots = 4, .locks = 2 };
	struct bakery_region_info ri;
	struct bakery_slot_info si;
	struct bakery_lock_info li;
	struct unit_fixture f;
	char name[TK_NAME_SIZE];
	bakery_t *b = NULL;

	tk_name(name, sizeof(name), "reserved");
	cfg.reserved[4] = 1;
	ck_assert_int_eq(bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b), EINVAL);
	ck_assert_ptr_null(b);

	unit_fixture_open(&f, "reserved", 4, 2, "lock", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	memset(&ri, 0xff, sizeof(ri));
	memset(&si, 0xff, sizeof(si));
	memset(&li, 0xff, sizeof(li));
	ck_assert_int_eq(bakery_region_info(f.b, &ri), 0);
	ck_assert_int_eq(bakery_slot_info(f.b, (unsigned)tk_self_slot(f.b), &si), 0);
	ck_assert_int_eq(bakery_lock_info(f.b, f.index, &li), 0);
	ck_assert(ZERO(ri.reserved) && ZERO(si.reserved) && ZERO(li.reserved));
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	unit_fixture_close(&f);
}
END_TEST

static Suite *introspect_suite(void)
{
	Suite *s = suite_create("introspect");
	TCase *tc = tcase_create("introspect");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, region_info_reports_the_setup);
	tcase_add_loop_test(tc, lock_and_slot_info_follow_a_passage, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, lock_state_follows_an_owner_death, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_test(tc, reserved_fields);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(introspect_suite());
}
