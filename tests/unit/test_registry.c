/* SPDX-License-Identifier: MIT */
/*
 * test_registry.c - participant slots: a thread takes its slot lazily at its
 * first lock call and gives it back at thread exit and at bakery_close; a
 * forked child's thread takes a fresh slot and does not hold the parent's
 * lock; a full registry answers BAKERY_ESLOTS at once; the slot of a
 * SIGKILLed process goes to the next newcomer.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "unit.h"

static unsigned slots_used(bakery_t *b)
{
	struct bakery_region_info ri;

	ck_assert_int_eq(bakery_region_info(b, &ri), 0);
	return ri.slots_used;
}

/* ---------------------------------------------------------- slot taker -- */

/* A thread that takes a slot (one lock/unlock), reports it, and keeps it
 * until told to exit. */
struct taker {
	pthread_t thread;
	bakery_lock_t *lock;
	int rc, slot;
	unsigned used_inside;      /* slots_used seen while owning the slot */
	bakery_t *b;
	struct tk_gate ready, go;
};

static void *taker_main(void *arg)
{
	struct taker *t = arg;
	struct bakery_region_info ri;

	t->rc = bakery_lock(t->lock);
	if (!t->rc)
		t->rc = bakery_unlock(t->lock);
	t->slot = unit_self_slot(t->b);
	bakery_region_info(t->b, &ri);
	t->used_inside = ri.slots_used;
	tk_gate_open(&t->ready);
	tk_gate_wait(&t->go, 60);
	return NULL;
}

static void taker_start(struct taker *t, bakery_t *b, bakery_lock_t *l)
{
	t->b = b;
	t->lock = l;
	tk_gate_init(&t->ready);
	tk_gate_init(&t->go);
	ck_assert_int_eq(pthread_create(&t->thread, NULL, taker_main, t), 0);
	ck_assert(tk_gate_wait(&t->ready, 10));
	ck_assert_msg(t->rc == 0, "taker: %s", bakery_strerror(t->rc));
}

static void taker_stop(struct taker *t)
{
	tk_gate_open(&t->go);
	ck_assert_int_eq(pthread_join(t->thread, NULL), 0);
	tk_gate_close(&t->ready);
	tk_gate_close(&t->go);
}

/* ------------------------------------------------------------ lifetime -- */

START_TEST(slot_taken_lazily_given_back_at_exit_and_close)
{
	char name[TK_NAME_SIZE];
	struct bakery_slot_info si;
	struct taker t;
	bakery_t *b, *observer = NULL;
	bakery_lock_t *l;
	int mine;

	b = unit_region(name, "lazy", 4, 4);
	ck_assert_int_eq(bakery_open(name, 0, NULL, &observer), 0);
	l = unit_lock(b, "lazy", BAKERY_ALGO_DEFAULT);
	ck_assert_uint_eq(slots_used(b), 0);        /* opening takes no slot */

	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_uint_eq(slots_used(b), 1);
	mine = unit_self_slot(b);
	ck_assert_int_ge(mine, 0);
	ck_assert_int_eq(bakery_slot_info(b, (unsigned)mine, &si), 0);
	ck_assert_int_eq(si.state, BAKERY_SLOT_ACTIVE);
	ck_assert_int_eq(si.alive, 1);
	ck_assert_int_eq(si.pid, getpid());
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_uint_eq(slots_used(b), 1);        /* kept between calls */

	taker_start(&t, b, l);
	ck_assert_uint_eq(t.used_inside, 2);
	ck_assert_int_ge(t.slot, 0);
	ck_assert_int_ne(t.slot, mine);
	taker_stop(&t);
	ck_assert_uint_eq(slots_used(b), 1);        /* given back at thread exit */
	ck_assert_int_eq(bakery_slot_info(b, (unsigned)t.slot, &si), 0);
	ck_assert_int_eq(si.state, BAKERY_SLOT_FREE);

	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_uint_eq(slots_used(observer), 0); /* given back at close */
	ck_assert_int_eq(bakery_close(observer), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* ---------------------------------------------------------------- fork -- */

struct fork_report {
	int unlock_rc, trylock_rc, consistent_rc, other_rc, close_rc;
	int slot;
	pid_t pid;
};

struct fork_case {
	bakery_t *b;
	bakery_lock_t *held, *other;
	struct fork_report *rep;
};

/* In the child: the parent's lock is not ours, our slot is new. */
static int forked_child(void *arg)
{
	struct fork_case *f = arg;
	struct fork_report *r = f->rep;

	r->pid = getpid();
	r->unlock_rc = bakery_unlock(f->held);
	r->consistent_rc = bakery_consistent(f->held);
	r->trylock_rc = bakery_trylock(f->held);
	r->other_rc = bakery_lock(f->other);
	r->slot = unit_self_slot(f->b);
	if (!r->other_rc)
		r->other_rc = bakery_unlock(f->other);
	r->close_rc = bakery_close(f->b);
	return 0;
}

START_TEST(forked_child_takes_fresh_slot_and_holds_nothing)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	char name[TK_NAME_SIZE];
	struct fork_case f;
	int parent_slot;

	f.b = unit_region(name, "fork", 4, 4);
	f.held = unit_lock(f.b, "held", algo);
	f.other = unit_lock(f.b, "other", algo);
	f.rep = tk_shared(sizeof(*f.rep));
	ck_assert_int_eq(bakery_lock(f.held), 0);
	parent_slot = unit_self_slot(f.b);

	ck_assert_int_eq(tk_reap(tk_fork(forked_child, &f), 20), 0);
	ck_assert_int_eq(f.rep->unlock_rc, EPERM);
	ck_assert_int_eq(f.rep->consistent_rc, EPERM);
	ck_assert_int_eq(f.rep->trylock_rc, EBUSY);
	ck_assert_int_eq(f.rep->other_rc, 0);
	ck_assert_int_eq(f.rep->close_rc, 0);       /* the child holds nothing */
	ck_assert_int_ge(f.rep->slot, 0);
	ck_assert_int_ne(f.rep->slot, parent_slot);

	/* still ours */
	ck_assert_int_eq(bakery_lock(f.held), EDEADLK);
	ck_assert_int_eq(bakery_unlock(f.held), 0);
	/* the child's slot was given back (an aborted passage completed first) */
	ck_assert_int_eq(bakery_recover(f.b, NULL), 0);
	ck_assert_uint_eq(slots_used(f.b), 1);
	ck_assert_int_eq(bakery_lock(f.held), 0);
	ck_assert_int_eq(bakery_unlock(f.held), 0);
	bakery_lock_close(f.held);
	bakery_lock_close(f.other);
	ck_assert_int_eq(bakery_close(f.b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* ---------------------------------------------------------- exhaustion -- */

/* The three ways of asking for a lock all fail at once with ESLOTS. */
static void expect_no_slot(bakery_lock_t *l)
{
	struct timespec later = tk_in(CLOCK_REALTIME, 5);
	double t0 = tk_now(CLOCK_MONOTONIC), took;

	ck_assert_int_eq(bakery_lock(l), BAKERY_ESLOTS);
	ck_assert_int_eq(bakery_trylock(l), BAKERY_ESLOTS);
	ck_assert_int_eq(bakery_timedlock(l, &later), BAKERY_ESLOTS);
	took = tk_now(CLOCK_MONOTONIC) - t0;
	printf("full registry: lock, trylock and timedlock gave ESLOTS in %.3f ms\n", took * 1e3);
	ck_assert_msg(took < 0.5, "ESLOTS took %.3f s", took);
}

/*
 * A thread's slot token needs a two-page window (token.c).  When the process
 * cannot map one, the lock call must say so (ENOMEM), not claim the region
 * is full (BAKERY_ESLOTS).  The child caps its address space just above what
 * it uses, so the window's mmap fails while the small allocations still fit
 * in the heap it has.  (Not under ASan, whose shadow memory needs the
 * address space.)
 */
#if !defined(__SANITIZE_ADDRESS__)
static int capped_child(void *arg)
{
	const char *name = arg;
	unsigned long pages;
	struct rlimit lim;
	bakery_lock_t *l;
	bakery_t *b;
	FILE *f;

	/* a handle of its own: the parent's mapping may keep spare windows
	 * (token.c), which a claim would reuse without mapping anything */
	if (bakery_open(name, 0, NULL, &b) || bakery_lock_open(b, "l", BAKERY_ALGO_DEFAULT, &l))
		return 99;
	f = fopen("/proc/self/statm", "re");
	if (!f || fscanf(f, "%lu", &pages) != 1)
		return 100;
	fclose(f);
	lim.rlim_cur = lim.rlim_max = pages * (unsigned long)sysconf(_SC_PAGESIZE) + 4096;
	if (setrlimit(RLIMIT_AS, &lim))
		return 101;
	return bakery_lock(l) == ENOMEM ? 0 : 1;
}

START_TEST(lock_says_enomem_when_no_window_can_be_mapped)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "nomem", 4, 1);
	bakery_lock_t *l = unit_lock(b, "l", BAKERY_ALGO_DEFAULT);

	ck_assert_int_eq(tk_reap(tk_fork(capped_child, name), 20), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST
#endif

START_TEST(full_registry_threads)
{
	char name[TK_NAME_SIZE];
	struct taker t[2];
	bakery_t *b;
	bakery_lock_t *l;

	b = unit_region(name, "full", 2, 2);
	l = unit_lock(b, "full", BAKERY_ALGO_DEFAULT);
	taker_start(&t[0], b, l);
	taker_start(&t[1], b, l);
	expect_no_slot(l);
	taker_stop(&t[0]);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	taker_stop(&t[1]);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

struct squatter {
	const char *name;
	enum bakery_algo algo;
	struct tk_gate ready, go;
};

/* Opens the region on its own, takes a slot, says so, waits, leaves cleanly. */
static int squatter_main(void *arg)
{
	struct squatter *s = arg;
	bakery_lock_t *l;
	bakery_t *b;

	if (bakery_open(s->name, 0, NULL, &b))
		return 1;
	if (bakery_lock_open(b, "full", s->algo, &l) || bakery_lock(l) || bakery_unlock(l))
		return 2;
	tk_gate_open(&s->ready);
	tk_gate_wait(&s->go, 60);
	bakery_lock_close(l);
	return bakery_close(b) ? 3 : 0;
}

START_TEST(full_registry_processes)
{
	char name[TK_NAME_SIZE];
	struct squatter s = { name, BAKERY_ALGO_DEFAULT, { { 0 } }, { { 0 } } };
	pid_t pids[2];
	bakery_t *b;
	bakery_lock_t *l;

	b = unit_region(name, "fullproc", 2, 2);
	l = unit_lock(b, "full", BAKERY_ALGO_DEFAULT);
	tk_gate_init(&s.ready);
	tk_gate_init(&s.go);
	for (int i = 0; i < 2; i++) {
		pids[i] = tk_fork(squatter_main, &s);
		ck_assert(tk_gate_wait(&s.ready, 10));
	}
	expect_no_slot(l);
	tk_gate_open(&s.go);
	tk_gate_open(&s.go);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(tk_reap(pids[i], 10), 0);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
	tk_gate_close(&s.ready);
	tk_gate_close(&s.go);
}
END_TEST

/* ------------------------------------------------------- killed owners -- */

/* slots = 1: a child takes the only slot and is SIGKILLed (holding no lock);
 * the parent then gets the slot, with no EOWNERDEAD. */
START_TEST(killed_process_slot_goes_to_newcomer)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	char name[TK_NAME_SIZE];
	struct squatter s = { name, algo, { { 0 } }, { { 0 } } };
	struct bakery_lock_info li;
	bakery_t *b;
	bakery_lock_t *l;
	unsigned index;
	pid_t pid;

	b = unit_region(name, "killslot", 1, 2);
	l = unit_lock(b, "full", algo);
	tk_gate_init(&s.ready);
	tk_gate_init(&s.go);
	pid = tk_fork(squatter_main, &s);
	ck_assert(tk_gate_wait(&s.ready, 10));
	ck_assert_int_eq(bakery_trylock(l), BAKERY_ESLOTS);
	ck_assert(tk_kill(pid));

	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_uint_eq(slots_used(b), 1);
	ck_assert_int_eq(unit_self_slot(b), 0);
	ck_assert_int_eq(bakery_lock_index(l, &index), 0);
	ck_assert_int_eq(bakery_lock_info(b, index, &li), 0);
	ck_assert_int_eq(li.owner_dead, 0);
	ck_assert_int_eq(li.holder, 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
	tk_gate_close(&s.ready);
	tk_gate_close(&s.go);
}
END_TEST

/* bakery_recover reaps the dead slot and says so. */
START_TEST(recover_reaps_killed_process_slot)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	char name[TK_NAME_SIZE];
	struct squatter s = { name, algo, { { 0 } }, { { 0 } } };
	struct bakery_slot_info si;
	unsigned reclaimed = 99;
	bakery_t *b;
	bakery_lock_t *l;

	b = unit_region(name, "reap", 2, 2);
	l = unit_lock(b, "full", algo);
	tk_gate_init(&s.ready);
	tk_gate_init(&s.go);
	pid_t pid = tk_fork(squatter_main, &s);
	ck_assert(tk_gate_wait(&s.ready, 10));
	ck_assert_uint_eq(slots_used(b), 1);
	ck_assert(tk_kill(pid));

	ck_assert_int_eq(bakery_slot_info(b, 0, &si), 0);
	ck_assert_int_eq(si.alive, 0);              /* proven dead, not yet reaped */
	ck_assert_int_eq(bakery_recover(b, &reclaimed), 0);
	ck_assert_uint_eq(reclaimed, 1);
	ck_assert_int_eq(bakery_slot_info(b, 0, &si), 0);
	ck_assert_int_eq(si.state, BAKERY_SLOT_FREE);
	ck_assert_int_eq(bakery_recover(b, &reclaimed), 0);
	ck_assert_uint_eq(reclaimed, 0);            /* idempotent */
	/* recover took a slot for the caller (its own use) or none: never more */
	ck_assert_uint_le(slots_used(b), 1);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
	tk_gate_close(&s.ready);
	tk_gate_close(&s.go);
}
END_TEST

/* Opening the region proves and clears deaths too (bakery.h: bakery_open), unless
 * the opener asks not to (BAKERY_NORECOVER, for inspection tools). */
START_TEST(open_reaps_killed_process_slot)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	char name[TK_NAME_SIZE];
	struct squatter s = { name, algo, { { 0 } }, { { 0 } } };
	struct bakery_slot_info si;
	bakery_t *b, *look, *opener;
	bakery_lock_t *l;

	b = unit_region(name, "openreap", 2, 2);
	l = unit_lock(b, "full", algo);
	tk_gate_init(&s.ready);
	tk_gate_init(&s.go);
	pid_t pid = tk_fork(squatter_main, &s);
	ck_assert(tk_gate_wait(&s.ready, 10));
	ck_assert(tk_kill(pid));

	ck_assert_int_eq(bakery_open(name, BAKERY_NORECOVER, NULL, &look), 0);
	ck_assert_int_eq(bakery_slot_info(look, 0, &si), 0);
	ck_assert_int_eq(si.state, BAKERY_SLOT_ACTIVE);   /* NORECOVER left it */
	ck_assert_int_eq(si.alive, 0);
	ck_assert_int_eq(bakery_open(name, 0, NULL, &opener), 0);
	ck_assert_int_eq(bakery_slot_info(look, 0, &si), 0);
	ck_assert_int_eq(si.state, BAKERY_SLOT_FREE);     /* the plain open reaped it */
	ck_assert_uint_eq(slots_used(b), 0);
	ck_assert_int_eq(bakery_close(opener), 0);
	ck_assert_int_eq(bakery_close(look), 0);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
	tk_gate_close(&s.ready);
	tk_gate_close(&s.go);
}
END_TEST

static Suite *registry_suite(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("registry");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, slot_taken_lazily_given_back_at_exit_and_close);
	tcase_add_loop_test(tc, forked_child_takes_fresh_slot_and_holds_nothing,
	                    TK_ALGO_FIRST, TK_ALGO_END);
#if !defined(__SANITIZE_ADDRESS__)
	tcase_add_test(tc, lock_says_enomem_when_no_window_can_be_mapped);
#endif
	tcase_add_test(tc, full_registry_threads);
	tcase_add_test(tc, full_registry_processes);
	tcase_add_loop_test(tc, killed_process_slot_goes_to_newcomer, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, recover_reaps_killed_process_slot, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, open_reaps_killed_process_slot, TK_ALGO_FIRST, TK_ALGO_END);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(registry_suite());
}
