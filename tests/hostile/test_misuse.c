/* SPDX-License-Identifier: MIT */
/*
 * test_misuse.c - careless callers: what each misuse returns.
 *
 *   unlock by a thread that does not hold it     EPERM (the holder keeps it)
 *   unlock by another process                    EPERM (the holder keeps it)
 *   double unlock, unlock never locked           EPERM
 *   bakery_close while this thread, or another   EBUSY, nothing closed; 0
 *     thread of the process, holds a lock        once it is released
 *   bakery_lock_close while holding              EBUSY
 *   a region handle after bakery_close, while    every call EINVAL (unlock:
 *     another thread's slot keeps it mapped      EPERM, this thread has no
 *                                                slot any more).  After the
 *                                                last slot goes the handle is
 *                                                freed: using it then is
 *                                                undefined, like free()
 *   fork                                         the child does not hold
 *                                                the parent's lock (unlock
 *                                                EPERM, trylock EBUSY); it
 *                                                locks with a slot of its own
 *   signals during a wait (SA_RESTART off)       no EINTR, the waiter keeps
 *                                                its place in line (FIFO
 *                                                against a later process);
 *                                                a deadline is not shortened
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "hostile.h"

static int holder_slot(bakery_lock_t *l, bakery_t *b)
{
	struct bakery_lock_info li;

	ck_assert_int_eq(bakery_lock_info(b, h_lock_index(l), &li), 0);
	return li.holder;
}

/* ------------------------------------------------------- wrong unlocker -- */

struct pair {
	bakery_t *b;
	bakery_lock_t *l;
	int rc[4];
	struct tk_gate go, done;
};

static void *stranger(void *arg)
{
	struct pair *p = arg;

	p->rc[0] = bakery_unlock(p->l);
	p->rc[1] = bakery_consistent(p->l);
	p->rc[2] = bakery_trylock(p->l);
	p->rc[3] = bakery_unlock(p->l);
	return NULL;
}

START_TEST(unlock_by_another_thread)
{
	char name[TK_NAME_SIZE];
	struct pair p = { .b = h_region(name, "stranger", 4, 2) };
	pthread_t t;
	int me;

	p.l = h_lock(p.b, "m", (enum bakery_algo)_i);
	ck_assert_int_eq(bakery_lock(p.l), 0);
	me = tk_self_slot(p.b);
	pthread_create(&t, NULL, stranger, &p);
	pthread_join(t, NULL);
	ck_assert_int_eq(p.rc[0], EPERM);
	ck_assert_int_eq(p.rc[1], EPERM);
	ck_assert_int_eq(p.rc[2], EBUSY);
	ck_assert_int_eq(p.rc[3], EPERM);
	ck_assert_int_eq(holder_slot(p.l, p.b), me);
	ck_assert_int_eq(bakery_unlock(p.l), 0);
	ck_assert_int_eq(bakery_lock_close(p.l), 0);
	ck_assert_int_eq(bakery_close(p.b), 0);
}
END_TEST

static int other_process(void *arg)
{
	const char *region = arg;
	bakery_t *b;
	bakery_lock_t *l;

	if (bakery_open(region, 0, NULL, &b) || bakery_lock_open(b, "m", 0, &l))
		return 10;
	if (bakery_unlock(l) != EPERM)
		return 11;
	if (bakery_trylock(l) != EBUSY)
		return 12;
	return bakery_close(b) ? 13 : 0;
}

START_TEST(unlock_by_another_process)
{
	char *name = tk_shared(TK_NAME_SIZE);
	bakery_t *b = h_region(name, "otherproc", 4, 2);
	bakery_lock_t *l = h_lock(b, "m", (enum bakery_algo)_i);
	int me;

	ck_assert_int_eq(bakery_lock(l), 0);
	me = tk_self_slot(b);
	ck_assert_int_eq(tk_reap(tk_fork(other_process, name), 10), 0);
	ck_assert_int_eq(holder_slot(l, b), me);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

START_TEST(double_unlock)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = h_region(name, "double", 4, 2);
	bakery_lock_t *l = h_lock(b, "m", (enum bakery_algo)_i);

	ck_assert_int_eq(bakery_unlock(l), EPERM);     /* never locked, no slot yet */
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), EPERM);
	ck_assert_int_eq(bakery_consistent(l), EPERM);
	/* and the lock is still sound */
	ck_assert_int_eq(bakery_trylock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

/* ---------------------------------------------------------------- close -- */

START_TEST(close_while_holding)
{
	char name[TK_NAME_SIZE];
	struct pair p = { .b = h_region(name, "closeheld", 4, 2) };
	pthread_t t;

	p.l = h_lock(p.b, "m", BAKERY_ALGO_DEFAULT);
	ck_assert_int_eq(bakery_lock(p.l), 0);
	ck_assert_int_eq(bakery_close(p.b), EBUSY);
	ck_assert_int_eq(bakery_lock_close(p.l), EBUSY);
	/* nothing was closed: the lock is still held and usable */
	pthread_create(&t, NULL, stranger, &p);
	pthread_join(t, NULL);
	ck_assert_int_eq(p.rc[2], EBUSY);
	ck_assert_int_eq(bakery_unlock(p.l), 0);
	ck_assert_int_eq(bakery_lock_close(p.l), 0);
	ck_assert_int_eq(bakery_close(p.b), 0);
}
END_TEST

/* Takes the lock, holds it until told, unlocks, then waits to be let go. */
static void *holding_thread(void *arg)
{
	struct pair *p = arg;

	p->rc[0] = bakery_lock(p->l);
	tk_gate_open(&p->done);
	tk_gate_wait(&p->go, 30);
	p->rc[1] = bakery_unlock(p->l);
	tk_gate_open(&p->done);
	tk_gate_wait(&p->go, 30);
	/* the region is closed by now, still mapped for this thread's slot */
	p->rc[2] = bakery_lock(p->l);
	tk_gate_open(&p->done);
	tk_gate_wait(&p->go, 30);
	return NULL;
}

START_TEST(close_while_another_thread_holds)
{
	char name[TK_NAME_SIZE];
	struct pair p = { .b = h_region(name, "closeother", 4, 2) };
	pthread_t t;

	p.l = h_lock(p.b, "m", BAKERY_ALGO_DEFAULT);
	tk_gate_init(&p.go);
	tk_gate_init(&p.done);
	pthread_create(&t, NULL, holding_thread, &p);
	ck_assert(tk_gate_wait(&p.done, 10));
	ck_assert_int_eq(p.rc[0], 0);
	ck_assert_int_eq(bakery_close(p.b), EBUSY);
	tk_gate_open(&p.go);
	ck_assert(tk_gate_wait(&p.done, 10));
	ck_assert_int_eq(p.rc[1], 0);
	ck_assert_int_eq(bakery_close(p.b), 0);
	tk_gate_open(&p.go);
	ck_assert(tk_gate_wait(&p.done, 10));
	ck_assert_int_eq(p.rc[2], EINVAL);
	/* lock handles before the last slot goes (the thread's exit) */
	ck_assert_int_eq(bakery_lock_close(p.l), 0);
	tk_gate_open(&p.go);
	pthread_join(t, NULL);
}
END_TEST

/* --------------------------------------------------------- closed handle -- */

/* Owns a slot (keeping the mapping alive) until told to exit. */
static void *slot_keeper(void *arg)
{
	struct pair *p = arg;

	p->rc[0] = bakery_lock(p->l);
	p->rc[1] = bakery_unlock(p->l);
	tk_gate_open(&p->done);
	tk_gate_wait(&p->go, 30);
	p->rc[2] = bakery_trylock(p->l);
	tk_gate_open(&p->done);
	tk_gate_wait(&p->go, 30);
	return NULL;
}

START_TEST(closed_handle_is_refused)
{
	char name[TK_NAME_SIZE];
	struct pair p = { .b = h_region(name, "closed", 4, 2) };
	struct bakery_region_info ri;
	struct bakery_slot_info si;
	struct bakery_lock_info li;
	struct timespec soon = tk_in(CLOCK_REALTIME, 1);
	bakery_lock_t *l2;
	unsigned n;
	pthread_t t;

	p.l = h_lock(p.b, "m", BAKERY_ALGO_DEFAULT);
	tk_gate_init(&p.go);
	tk_gate_init(&p.done);
	ck_assert_int_eq(bakery_lock(p.l), 0);
	ck_assert_int_eq(bakery_unlock(p.l), 0);
	pthread_create(&t, NULL, slot_keeper, &p);
	ck_assert(tk_gate_wait(&p.done, 10));
	ck_assert_int_eq(bakery_close(p.b), 0);

	/* still mapped (the other thread's slot): every call refuses */
	ck_assert_int_eq(bakery_close(p.b), EINVAL);
	ck_assert_int_eq(bakery_lock(p.l), EINVAL);
	ck_assert_int_eq(bakery_trylock(p.l), EINVAL);
	ck_assert_int_eq(bakery_timedlock(p.l, &soon), EINVAL);
	ck_assert_int_eq(bakery_unlock(p.l), EPERM);
	ck_assert_int_eq(bakery_lock_open(p.b, "m", BAKERY_ALGO_DEFAULT, &l2), EINVAL);
	ck_assert_int_eq(bakery_recover(p.b, &n), EINVAL);
	ck_assert_int_eq(bakery_region_info(p.b, &ri), EINVAL);
	ck_assert_int_eq(bakery_slot_info(p.b, 0, &si), EINVAL);
	ck_assert_int_eq(bakery_lock_info(p.b, 0, &li), EINVAL);
	tk_gate_open(&p.go);
	ck_assert(tk_gate_wait(&p.done, 10));
	ck_assert_int_eq(p.rc[0], 0);
	ck_assert_int_eq(p.rc[1], 0);
	ck_assert_int_eq(p.rc[2], EINVAL);
	ck_assert_int_eq(bakery_lock_close(p.l), 0);
	tk_gate_open(&p.go);
	pthread_join(t, NULL);
	/* the thread has exited: its slot went, and the mapping with it; p.b
	 * is freed memory now and is not touched again */
}
END_TEST

/* ----------------------------------------------------------------- fork -- */

struct forked {
	bakery_t *b;
	bakery_lock_t *l;
	int parent_slot;
	struct tk_gate tried, unlocked;
};

static int fork_child(void *arg)
{
	struct forked *f = arg;
	struct bakery_lock_info li;
	int mine;

	if (bakery_unlock(f->l) != EPERM)
		return 10;
	if (bakery_trylock(f->l) != EBUSY)
		return 11;
	tk_gate_open(&f->tried);
	if (!tk_gate_wait(&f->unlocked, 10))
		return 12;
	if (bakery_lock(f->l))
		return 13;
	mine = tk_self_slot(f->b);
	if (mine < 0 || mine == f->parent_slot)
		return 14;
	if (bakery_lock_info(f->b, h_lock_index(f->l), &li) || li.holder != mine)
		return 15;
	if (bakery_unlock(f->l) || bakery_close(f->b))
		return 16;
	return 0;
}

START_TEST(fork_child_does_not_inherit_the_lock)
{
	char name[TK_NAME_SIZE];
	struct forked f = { .b = h_region(name, "fork", 4, 2) };
	pid_t pid;

	f.l = h_lock(f.b, "m", (enum bakery_algo)_i);
	tk_gate_init(&f.tried);
	tk_gate_init(&f.unlocked);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	f.parent_slot = tk_self_slot(f.b);
	pid = tk_fork(fork_child, &f);
	ck_assert(tk_gate_wait(&f.tried, 10));
	/* the child's EPERM unlock left our hold alone */
	ck_assert_int_eq(holder_slot(f.l, f.b), f.parent_slot);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	tk_gate_open(&f.unlocked);
	ck_assert_int_eq(tk_reap(pid, 20), 0);
	ck_assert_int_eq(bakery_lock(f.l), 0);
	ck_assert_int_eq(bakery_unlock(f.l), 0);
	ck_assert_int_eq(bakery_lock_close(f.l), 0);
	ck_assert_int_eq(bakery_close(f.b), 0);
}
END_TEST

/* -------------------------------------------------------------- signals -- */

struct line {
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	double deadline;           /* > 0: bakery_timedlock with this many seconds */
	unsigned long seq;         /* entries so far, all processes */
	struct {
		int rc;
		unsigned long order;
		unsigned long signals;
		double waited;
	} who[2];
};

static volatile sig_atomic_t caught;

static void on_usr1(int sig)
{
	caught++;
}

/* Participant K: a handler without SA_RESTART, then one acquisition. */
static int in_line(struct line *ln, int k)
{
	struct sigaction sa;
	struct timespec until;
	bakery_t *b;
	bakery_lock_t *l;
	double t0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;            /* sa_flags 0: no SA_RESTART */
	sigaction(SIGUSR1, &sa, NULL);
	if (bakery_open(ln->region, 0, NULL, &b) || bakery_lock_open(b, "q", ln->algo, &l))
		return 10;
	t0 = tk_now(CLOCK_MONOTONIC);
	if (ln->deadline > 0) {
		until = tk_in(CLOCK_REALTIME, ln->deadline);
		ln->who[k].rc = bakery_timedlock(l, &until);
	} else {
		ln->who[k].rc = bakery_lock(l);
	}
	ln->who[k].waited = tk_now(CLOCK_MONOTONIC) - t0;
	ln->who[k].signals = (unsigned long)caught;
	if (ln->who[k].rc == 0) {
		ln->who[k].order = uatomic_add_return(&ln->seq, 1);
		usleep(10000);
		bakery_unlock(l);
	}
	return 0;
}

static int first_in_line(void *arg) { return in_line(arg, 0); }
static int second_in_line(void *arg) { return in_line(arg, 1); }

struct waiting_for {
	bakery_t *b;
	pid_t pid;
};

static bool is_waiting(void *arg)
{
	struct waiting_for *w = arg;
	struct bakery_slot_info si;
	int s = tk_slot_of(w->b, w->pid, w->pid);

	return s >= 0 && bakery_slot_info(w->b, (unsigned)s, &si) == 0 &&
	       si.pass == BAKERY_PASS_WAITING;
}

/* Start a participant and return once it is past the doorway. */
static pid_t queue_up(bakery_t *b, int (*fn)(void *), struct line *ln)
{
	struct waiting_for w = { b, tk_fork(fn, ln) };

	ck_assert_msg(tk_wait_until(is_waiting, &w, 10), "participant never queued");
	return w.pid;
}

static void bombard(pid_t a, pid_t b, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		kill(a, SIGUSR1);
		if (b > 0)
			kill(b, SIGUSR1);
		usleep(1000);
	}
}

/* _i: algorithm * 2 + (1: bakery_timedlock with a far deadline) */
START_TEST(signals_keep_the_place_in_line)
{
	struct line *ln = tk_shared(sizeof(*ln));
	bakery_t *b = h_region(ln->region, "signals", 4, 2);
	bakery_lock_t *l;
	pid_t first, second;

	ln->algo = (enum bakery_algo)(BAKERY_ALGO_LAMPORT + _i / 2);
	ln->deadline = _i % 2 ? 30 : 0;
	l = h_lock(b, "q", ln->algo);
	ck_assert_int_eq(bakery_lock(l), 0);
	first = queue_up(b, first_in_line, ln);
	second = queue_up(b, second_in_line, ln);
	bombard(first, second, 200);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(tk_reap(first, 20), 0);
	ck_assert_int_eq(tk_reap(second, 20), 0);
	ck_assert_int_eq(ln->who[0].rc, 0);
	ck_assert_int_eq(ln->who[1].rc, 0);
	ck_assert_uint_ge(ln->who[0].signals, 10);     /* they did land during the wait */
	ck_assert_uint_eq(ln->who[0].order, 1);        /* FIFO kept */
	ck_assert_uint_eq(ln->who[1].order, 2);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

START_TEST(signals_do_not_shorten_a_deadline)
{
	struct line *ln = tk_shared(sizeof(*ln));
	bakery_t *b = h_region(ln->region, "sigdeadline", 4, 2);
	bakery_lock_t *l;
	pid_t first;

	ln->algo = (enum bakery_algo)_i;
	ln->deadline = 0.5;
	l = h_lock(b, "q", ln->algo);
	ck_assert_int_eq(bakery_lock(l), 0);
	first = queue_up(b, first_in_line, ln);
	bombard(first, 0, 100);
	ck_assert_int_eq(tk_reap(first, 20), 0);
	ck_assert_int_eq(ln->who[0].rc, ETIMEDOUT);
	ck_assert_msg(ln->who[0].waited >= 0.45, "gave up after %.3f s", ln->who[0].waited);
	ck_assert_uint_ge(ln->who[0].signals, 5);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
}
END_TEST

static Suite *misuse_suite(void)
{
	Suite *s = suite_create("misuse");
	TCase *tc = tcase_create("misuse");
	TCase *sig = tcase_create("signals");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, unlock_by_another_thread, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, unlock_by_another_process, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, double_unlock, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_test(tc, close_while_holding);
	tcase_add_test(tc, close_while_another_thread_holds);
	tcase_add_test(tc, closed_handle_is_refused);
	tcase_add_loop_test(tc, fork_child_does_not_inherit_the_lock, TK_ALGO_FIRST, TK_ALGO_END);
	suite_add_tcase(s, tc);
	tcase_set_timeout(sig, 60);
	tcase_add_loop_test(sig, signals_keep_the_place_in_line, 0, 8);
	tcase_add_loop_test(sig, signals_do_not_shorten_a_deadline, TK_ALGO_FIRST, TK_ALGO_END);
	suite_add_tcase(s, sig);
	return s;
}

int main(void)
{
	return h_run_suite(misuse_suite());
}
