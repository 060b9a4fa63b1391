/* SPDX-License-Identifier: MIT */
/*
 * test_slot_reclaim.c - slots of threads that sleep in the application are
 * reclaimed under pressure (lib/revoke.c, lib/registry.c): in a region of 2
 * slots taken by two processes that locked once and then sleep, a third
 * process's lock call gets a slot and the lock; a revoked sleeper that
 * wakes and locks again gets a slot again (taking the other sleeper's) and
 * waits its turn (an independent occupancy check); the SIGKILL of a revoked
 * sleeper is no owner death of its slot's new owner (no EOWNERDEAD, nothing
 * recovered, the holder stays inside); a revoked thread's exit or
 * bakery_close leaves its slot's new owner alone; a reclaimer killed in the
 * middle of a revocation (crash points of the test build) leaves nothing
 * that the owner's next lock call does not settle.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "unit.h"
#include "../common/occupancy.h"

/* Long enough for any load: on today's code it is how long the test waits
 * before it fails. */
#define RECLAIM_TIMEOUT_S 30.0

struct sleepers {
	char name[TK_NAME_SIZE];
	struct occupancy occ;
	int slot[2];               /* each sleeper's slot when it went to sleep */
	int rc[2];                 /* its second lock call's answer */
	struct tk_gate ready[2], wake[2], inside, release;
};

struct sleeper_arg {
	struct sleepers *s;
	int i;
};

/* Lock once, sleep in the application until woken; then lock again (with
 * a generous timeout), stay inside until released, and leave. */
static int sleeper_main(void *arg)
{
	struct sleepers *s = ((struct sleeper_arg *)arg)->s;
	int i = ((struct sleeper_arg *)arg)->i;
	struct timespec until;
	bakery_lock_t *l;
	bakery_t *b;

	if (bakery_open(s->name, 0, NULL, &b) || bakery_lock_open(b, "l", BAKERY_ALGO_DEFAULT, &l))
		return 1;
	if (bakery_lock(l) || bakery_unlock(l))
		return 2;
	s->slot[i] = tk_self_slot(b);
	tk_gate_open(&s->ready[i]);
	if (!tk_gate_wait(&s->wake[i], 120))
		return 3;
	until = tk_in(CLOCK_MONOTONIC, RECLAIM_TIMEOUT_S);
	s->rc[i] = bakery_clocklock(l, CLOCK_MONOTONIC, &until);
	if (s->rc[i])
		return 4;
	occupancy_in(&s->occ, (uint64_t)getpid(), OCCUPANCY_PAUSE);
	tk_gate_open(&s->inside);
	tk_gate_wait(&s->release, 120);
	occupancy_out(&s->occ, (uint64_t)getpid());
	if (bakery_unlock(l))
		return 5;
	bakery_lock_close(l);
	return bakery_close(b) ? 6 : 0;
}

/* Lock L within RECLAIM_TIMEOUT_S: the answer, and the seconds it took. */
static int lock_within_timeout(bakery_lock_t *l, double *took)
{
	struct timespec until = tk_in(CLOCK_MONOTONIC, RECLAIM_TIMEOUT_S);
	double t0 = tk_now(CLOCK_MONOTONIC);
	int rc = bakery_clocklock(l, CLOCK_MONOTONIC, &until);

	*took = tk_now(CLOCK_MONOTONIC) - t0;
	return rc;
}

START_TEST(sleepers_slots_are_reclaimed)
{
	struct sleepers *s = tk_shared(sizeof(*s));
	bakery_t *b = unit_region(s->name, "reclaim", 2, 1);
	bakery_lock_t *l = unit_lock(b, "l", BAKERY_ALGO_DEFAULT);
	struct unit_queued q = { b, 0, 1 };
	struct bakery_lock_info li;
	struct sleeper_arg args[2];
	pid_t pid[2];
	unsigned recovered;
	double took;
	int me, r, o;

	tk_gate_init(&s->inside);
	tk_gate_init(&s->release);
	for (int i = 0; i < 2; i++) {
		tk_gate_init(&s->ready[i]);
		tk_gate_init(&s->wake[i]);
		args[i] = (struct sleeper_arg){ s, i };
		pid[i] = tk_fork(sleeper_main, &args[i]);
		ck_assert(tk_gate_wait(&s->ready[i], 20));
	}
	/* both slots belong to sleepers: we get one of them all the same */
	ck_assert_int_eq(lock_within_timeout(l, &took), 0);
	printf("reclaim: a lock call with every slot asleep took %.3f s\n", took);
	occupancy_in(&s->occ, 1, OCCUPANCY_PAUSE);
	me = tk_self_slot(b);
	ck_assert(me == s->slot[0] || me == s->slot[1]);
	r = me == s->slot[0] ? 0 : 1;   /* the sleeper revoked */
	o = 1 - r;                      /* the other, still asleep in its slot */

	/* the revoked sleeper wakes: it gets a slot again (the other's) and
	 * waits for us, not beside us */
	tk_gate_open(&s->wake[r]);
	q.pid = pid[r];
	ck_assert(tk_wait_until(unit_queued_asleep, &q, RECLAIM_TIMEOUT_S));
	occupancy_out(&s->occ, 1);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert(tk_gate_wait(&s->inside, RECLAIM_TIMEOUT_S));

	/* the other sleeper, revoked in turn, is killed: its old token's
	 * death is nobody's owner death */
	ck_assert(tk_kill(pid[o]));
	ck_assert_int_eq(bakery_recover(b, &recovered), 0);
	ck_assert_uint_eq(recovered, 0);
	ck_assert_int_eq(bakery_trylock(l), EBUSY);     /* still held, by the woken one */

	tk_gate_open(&s->release);
	ck_assert_int_eq(tk_reap(pid[r], 30), 0);
	ck_assert_int_eq(s->rc[r], 0);
	ck_assert_int_eq(bakery_lock(l), 0);            /* not EOWNERDEAD */
	occupancy_in(&s->occ, 1, OCCUPANCY_PAUSE);
	occupancy_out(&s->occ, 1);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_info(b, 0, &li), 0);
	ck_assert_uint_eq(li.owner_deaths, 0);
	ck_assert_uint_eq(li.recoveries, 0);
	ck_assert_uint_eq(s->occ.violations, 0);
	ck_assert_uint_eq(s->occ.counter, s->occ.entries);
	for (int i = 0; i < 2; i++) {
		tk_gate_close(&s->ready[i]);
		tk_gate_close(&s->wake[i]);
	}
	tk_gate_close(&s->inside);
	tk_gate_close(&s->release);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(s->name), 0);
}
END_TEST

/* ------------------------------------------- a revoked thread that leaves -- */

struct leaver {
	const char *name;
	int how;                   /* 0: thread exit, 1: bakery_close */
	struct tk_gate ready, leave;
};

static void *leaver_thread(void *arg)
{
	struct leaver *v = arg;
	bakery_lock_t *l;
	bakery_t *b;
	intptr_t rc = 0;

	if (bakery_open(v->name, 0, NULL, &b) || bakery_lock_open(b, "l", BAKERY_ALGO_DEFAULT, &l) ||
	    bakery_lock(l) || bakery_unlock(l))
		return (void *)1;
	tk_gate_open(&v->ready);
	tk_gate_wait(&v->leave, 120);
	if (v->how == 1) {
		bakery_lock_close(l);
		rc = bakery_close(b) ? 2 : 0;
	}
	return (void *)rc;         /* how == 0: the thread's exit handler runs */
}

/* A process whose one thread takes the slot, sleeps, then leaves. */
static int leaver_main(void *arg)
{
	struct leaver *v = arg;
	pthread_t t;
	void *rc;

	if (pthread_create(&t, NULL, leaver_thread, v) || pthread_join(t, &rc))
		return 10;
	return (int)(intptr_t)rc;
}

START_TEST(revoked_thread_leaves_new_owner_alone)
{
	struct leaver *v = tk_shared(sizeof(*v));
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "revleave", 1, 1);
	bakery_lock_t *l = unit_lock(b, "l", BAKERY_ALGO_DEFAULT);
	double took;
	pid_t pid;

	v->name = name;
	v->how = _i;
	tk_gate_init(&v->ready);
	tk_gate_init(&v->leave);
	pid = tk_fork(leaver_main, v);
	ck_assert(tk_gate_wait(&v->ready, 20));
	ck_assert_int_eq(lock_within_timeout(l, &took), 0);
	/* the revoked thread leaves while we hold the lock in its old slot:
	 * giving back a slot it no longer owns would clear our registers */
	tk_gate_open(&v->leave);
	ck_assert_int_eq(tk_reap(pid, 20), 0);
	ck_assert_int_eq(bakery_lock(l), EDEADLK);      /* still ours */
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	tk_gate_close(&v->ready);
	tk_gate_close(&v->leave);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* ------------------------------------------------ a reclaimer that dies -- */

static const char *const revoke_points[] = { "revoke-odd", "revoke-named" };

struct dying {
	char name[TK_NAME_SIZE];
	const char *point;
	int rc;
	struct tk_gate ready, wake;
};

/* Open region NAME and its lock "l", lock once (taking a slot), say so
 * (gate READY), and sleep in the application until told (gate GO): 0 with
 * *B and *L, or the step that failed (1 to 3). */
static int lock_once_then_idle(const char *name, struct tk_gate *ready, struct tk_gate *go,
                               bakery_t **b, bakery_lock_t **l)
{
	if (bakery_open(name, 0, NULL, b) || bakery_lock_open(*b, "l", BAKERY_ALGO_DEFAULT, l))
		return 1;
	if (bakery_lock(*l) || bakery_unlock(*l))
		return 2;
	tk_gate_open(ready);
	return tk_gate_wait(go, 120) ? 0 : 3;
}

/* Lock once, sleep until woken, lock again (within the timeout). */
static int idle_owner_main(void *arg)
{
	struct dying *d = arg;
	struct timespec until;
	bakery_lock_t *l;
	bakery_t *b;
	int err = lock_once_then_idle(d->name, &d->ready, &d->wake, &b, &l);

	if (err)
		return err;
	until = tk_in(CLOCK_MONOTONIC, RECLAIM_TIMEOUT_S);
	d->rc = bakery_clocklock(l, CLOCK_MONOTONIC, &until);
	if (d->rc || bakery_unlock(l))
		return 4;
	bakery_lock_close(l);
	return bakery_close(b) ? 5 : 0;
}

/* Wait for a slot, and die (SIGKILL, the test build's crash point) in the
 * middle of revoking the idle owner's. */
static int dying_reclaimer_main(void *arg)
{
	struct dying *d = arg;
	struct timespec until = tk_in(CLOCK_MONOTONIC, RECLAIM_TIMEOUT_S);
	bakery_lock_t *l;
	bakery_t *b;

	setenv("BAKERY_CRASH_AT", d->point, 1);
	if (bakery_open(d->name, 0, NULL, &b) || bakery_lock_open(b, "l", BAKERY_ALGO_DEFAULT, &l))
		return 1;
	bakery_clocklock(l, CLOCK_MONOTONIC, &until);
	return 2;                  /* the crash point was never reached */
}

/* The owner's next lock call settles what the dead reclaimer left (undone
 * before the commit, finished after it), and gets a slot and the lock; so
 * does everyone after it, without an owner death. */
START_TEST(dead_reclaimer_is_settled)
{
	struct dying *d = tk_shared(sizeof(*d));
	bakery_t *b = unit_region(d->name, "revdead", 1, 1);
	bakery_lock_t *l = unit_lock(b, "l", BAKERY_ALGO_DEFAULT);
	struct bakery_lock_info li;
	pid_t owner, reclaimer;

	d->point = revoke_points[_i];
	tk_gate_init(&d->ready);
	tk_gate_init(&d->wake);
	owner = tk_fork(idle_owner_main, d);
	ck_assert(tk_gate_wait(&d->ready, 20));
	reclaimer = tk_fork(dying_reclaimer_main, d);
	ck_assert_int_eq(tk_reap(reclaimer, RECLAIM_TIMEOUT_S + 10), 128 + SIGKILL);
	tk_gate_open(&d->wake);
	ck_assert_int_eq(tk_reap(owner, RECLAIM_TIMEOUT_S + 10), 0);
	ck_assert_int_eq(d->rc, 0);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_info(b, 0, &li), 0);
	ck_assert_uint_eq(li.owner_deaths, 0);
	tk_gate_close(&d->ready);
	tk_gate_close(&d->wake);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(d->name), 0);
}
END_TEST

/* ---------------------------------- an owner that leaves mid-revocation -- */

struct leaving {
	const char *name;
	struct tk_gate ready, leave;
};

/* Lock once, sleep in the application until told to leave, then close the
 * region (its slot under a revocation that does not end meanwhile). */
static int leaving_owner_main(void *arg)
{
	struct leaving *v = arg;
	bakery_lock_t *l;
	bakery_t *b;
	int err = lock_once_then_idle(v->name, &v->ready, &v->leave, &b, &l);

	if (err)
		return err;
	bakery_lock_close(l);
	return bakery_close(b) ? 4 : 0;
}

/* Wait for a slot, stopping (SIGSTOP) in the middle of the revocation of
 * the idle owner's; once continued, lock within the timeout. */
static int stopped_reclaimer_main(void *arg)
{
	struct leaving *v = arg;
	struct timespec until;
	bakery_lock_t *l;
	bakery_t *b;

	setenv("BAKERY_STOP_AT", "revoke-odd", 1);
	if (bakery_open(v->name, 0, NULL, &b) || bakery_lock_open(b, "l", BAKERY_ALGO_DEFAULT, &l))
		return 1;
	until = tk_in(CLOCK_MONOTONIC, RECLAIM_TIMEOUT_S);
	if (bakery_clocklock(l, CLOCK_MONOTONIC, &until))
		return 2;
	return bakery_unlock(l) ? 3 : 0;
}

/*
 * The owner closes the region while a reclaimer, stopped, is revoking its
 * slot: its close waits for the revocation (REVOKE_WAIT_NS), gives up, and
 * lets go of the slot's token without clearing the slot, the slot being
 * perhaps the reclaimer's.  The reclaimer, continued, finds the token free,
 * undoes its revocation and must still get the slot: an ACTIVE slot whose
 * token nobody holds is nobody's (until 2026-11-28 it stayed taken for
 * good, and the reclaimer waited until its timeout).
 */
START_TEST(owner_leaving_mid_revocation_frees_its_slot)
{
	struct unit_fixture f;
	struct leaving leaving = { .name = f.name }, *v = &leaving;
	pid_t owner, reclaimer;
	int status;

	unit_fixture_open(&f, "revgone", 1, 1, "l", BAKERY_ALGO_DEFAULT);
	tk_gate_init(&v->ready);
	tk_gate_init(&v->leave);
	owner = tk_fork(leaving_owner_main, v);
	ck_assert(tk_gate_wait(&v->ready, 20));
	reclaimer = tk_fork(stopped_reclaimer_main, v);
	ck_assert_int_eq(waitpid(reclaimer, &status, WUNTRACED), reclaimer);
	ck_assert_msg(WIFSTOPPED(status), "the reclaimer did not reach revoke-odd (status %d)",
	              status);
	tk_gate_open(&v->leave);
	ck_assert_int_eq(tk_reap(owner, RECLAIM_TIMEOUT_S), 0);
	ck_assert_int_eq(kill(reclaimer, SIGCONT), 0);
	ck_assert_int_eq(tk_reap(reclaimer, RECLAIM_TIMEOUT_S + 10), 0);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	tk_gate_close(&v->ready);
	tk_gate_close(&v->leave);
	unit_fixture_close(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("slot_reclaim");
	TCase *tc = tcase_create("reclaim");

	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, sleepers_slots_are_reclaimed);
	tcase_add_loop_test(tc, revoked_thread_leaves_new_owner_alone, 0, 2);
	tcase_add_loop_test(tc, dead_reclaimer_is_settled, 0, 2);
	tcase_add_test(tc, owner_leaving_mid_revocation_frees_its_slot);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
