/* SPDX-License-Identifier: MIT */
/*
 * test_lock_unlink.c - bakery_lock_unlink(), for every algorithm: an idle
 * lock is removed and its table entry serves another name; a lock that is
 * held or waited for is not (EBUSY) and stays usable; a handle opened
 * before the removal gets BAKERY_EREMOVED, never the lock that took its
 * entry, from every call that takes it (an unlock or a repair through it
 * leaves the next lock, held by the caller, as it is; it closes with 0);
 * unlinks racing with threads that lock, unlock and reopen never
 * let two of them in at once.  A lock that owes a repair (its holder died
 * inside) is not removed unless forced; participants killed in it are
 * proven dead by the unlink itself (EOWNERDEAD for a dead holder, not
 * EBUSY).  An unlinker killed at each step (test
 * build: BAKERY_CRASH_AT=unlink-...) leaves either the lock or a free
 * entry, and the next table operation finds the region sound.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <urcu/uatomic.h>

#include "unit.h"

static unsigned lock_index(bakery_lock_t *l)
{
	unsigned i;

	ck_assert_int_eq(bakery_lock_index(l, &i), 0);
	return i;
}

START_TEST(unlink_removes_an_idle_lock)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "unlink", 4, 2);
	bakery_lock_t *old = unit_lock(b, "typo", (enum bakery_algo)_i);
	bakery_lock_t *other = unit_lock(b, "kept", (enum bakery_algo)_i);
	bakery_lock_t *l, *fresh;
	struct bakery_lock_info li;
	unsigned index = lock_index(old);

	ck_assert_int_eq(bakery_lock(old), 0);
	ck_assert_int_eq(bakery_unlock(old), 0);
	/* the table is full until the unlink */
	ck_assert_int_eq(bakery_lock_open(b, "third", (enum bakery_algo)_i, &l), BAKERY_ELOCKS);
	ck_assert_int_eq(bakery_lock_unlink(b, "typo"), 0);
	ck_assert_int_eq(bakery_lock_info(b, index, &li), ENOENT);
	ck_assert_int_eq(bakery_lock_lookup(b, "typo", BAKERY_ALGO_DEFAULT, &l), ENOENT);
	ck_assert_int_eq(bakery_lock_unlink(b, "typo"), ENOENT);
	ck_assert_int_eq(bakery_lock(old), BAKERY_EREMOVED);
	ck_assert_int_eq(bakery_trylock(old), BAKERY_EREMOVED);

	/* the entry serves another name, which starts from nothing */
	fresh = unit_lock(b, "third", (enum bakery_algo)_i);
	ck_assert_uint_eq(lock_index(fresh), index);
	ck_assert_int_eq(bakery_lock_info(b, index, &li), 0);
	ck_assert_str_eq(li.name, "third");
	ck_assert_uint_eq(li.acquisitions, 0);
	ck_assert_int_eq(bakery_lock(old), BAKERY_EREMOVED);   /* still not the new one */
	ck_assert_int_eq(bakery_lock(fresh), 0);
	ck_assert_int_eq(bakery_trylock(old), BAKERY_EREMOVED);
	ck_assert_int_eq(bakery_unlock(fresh), 0);
	ck_assert_int_eq(bakery_lock(other), 0);                /* the other lock untouched */
	ck_assert_int_eq(bakery_unlock(other), 0);

	ck_assert_int_eq(bakery_lock_close(old), 0);
	ck_assert_int_eq(bakery_lock_close(fresh), 0);
	ck_assert_int_eq(bakery_lock_close(other), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/*
 * A stale handle: lock A is removed, lock B takes A's table entry (a
 * one-entry table) and is left owner-died by a holder that was killed; a
 * thread takes B (EOWNERDEAD) and, before it repairs, calls everything that
 * takes a lock handle with A's.  Its registers in the entry are B's: every
 * call must see that A is gone (BAKERY_EREMOVED; a close, 0) and leave B as
 * it is: still held (another thread's trylock is EBUSY), still owner-died.
 */
struct stale {
	bakery_lock_t *a, *b;
	int lock_rc, consistent_rc, unlock_rc, index_rc, holders_rc, reset_rc, close_rc;
	int b_consistent_rc, b_unlock_rc;
	struct tk_gate done, release;
};

static void *stale_holder_main(void *arg)
{
	struct stale *s = arg;
	unsigned u;

	s->lock_rc = bakery_lock(s->b);
	s->consistent_rc = bakery_consistent(s->a);
	s->unlock_rc = bakery_unlock(s->a);
	s->index_rc = bakery_lock_index(s->a, &u);
	s->holders_rc = bakery_lock_holders(s->a, &u);
	s->reset_rc = bakery_lock_reset(s->a);
	s->close_rc = bakery_lock_close(s->a);
	tk_gate_open(&s->done);
	tk_gate_wait(&s->release, 120);
	s->b_consistent_rc = bakery_consistent(s->b);
	s->b_unlock_rc = bakery_unlock(s->b);
	return NULL;
}

START_TEST(stale_handle_leaves_the_next_lock_alone)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "stale", 4, 1);
	bakery_lock_t *a = unit_lock(b, "a", (enum bakery_algo)_i);
	bakery_lock_t *a2 = unit_lock(b, "a", (enum bakery_algo)_i);
	struct stale s = { .a = a };
	struct bakery_lock_info li;
	unsigned index = lock_index(a);
	pthread_t t;
	pid_t doomed;

	ck_assert_int_eq(bakery_lock(a), 0);
	ck_assert_int_eq(bakery_unlock(a), 0);
	ck_assert_int_eq(bakery_lock_unlink(b, "a"), 0);
	doomed = unit_holder_process(name, "b", (enum bakery_algo)_i);
	ck_assert(tk_kill(doomed));
	s.b = unit_lock(b, "b", (enum bakery_algo)_i);
	ck_assert_uint_eq(lock_index(s.b), index);              /* A's entry */
	tk_gate_init(&s.done);
	tk_gate_init(&s.release);
	ck_assert_int_eq(pthread_create(&t, NULL, stale_holder_main, &s), 0);
	ck_assert(tk_gate_wait(&s.done, 30));
	ck_assert_int_eq(s.lock_rc, EOWNERDEAD);
	ck_assert_int_eq(s.consistent_rc, BAKERY_EREMOVED);
	ck_assert_int_eq(s.unlock_rc, BAKERY_EREMOVED);
	ck_assert_int_eq(s.index_rc, BAKERY_EREMOVED);
	ck_assert_int_eq(s.holders_rc, BAKERY_EREMOVED);
	ck_assert_int_eq(s.reset_rc, BAKERY_EREMOVED);
	ck_assert_int_eq(s.close_rc, 0);
	/* B still held, still owner-died */
	ck_assert_int_eq(bakery_trylock(s.b), EBUSY);
	ck_assert_int_eq(bakery_lock_info(b, index, &li), 0);
	ck_assert_str_eq(li.name, "b");
	ck_assert_int_eq(li.owner_dead, 1);
	ck_assert_int_eq(li.holding, 1);
	/* the same from a thread that holds nothing (and whose trylock of B
	 * just now left a passage in the entry, for Jayanti: a proxy's to
	 * complete once B's holder leaves; not a reason to wait for B) */
	ck_assert_int_eq(bakery_unlock(a2), BAKERY_EREMOVED);
	ck_assert_int_eq(bakery_consistent(a2), BAKERY_EREMOVED);
	ck_assert_int_eq(bakery_trylock(a2), BAKERY_EREMOVED);
	ck_assert_int_eq(bakery_lock(a2), BAKERY_EREMOVED);
	ck_assert_int_eq(bakery_lock_close(a2), 0);
	ck_assert_int_eq(bakery_trylock(s.b), EBUSY);
	tk_gate_open(&s.release);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(s.b_consistent_rc, 0);
	ck_assert_int_eq(s.b_unlock_rc, 0);
	ck_assert_int_eq(bakery_lock_info(b, index, &li), 0);
	ck_assert_int_eq(li.owner_dead, 0);
	ck_assert_int_eq(bakery_trylock(s.b), 0);
	ck_assert_int_eq(bakery_unlock(s.b), 0);
	tk_gate_close(&s.done);
	tk_gate_close(&s.release);
	ck_assert_int_eq(bakery_lock_close(s.b), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* A thread that calls bakery_lock and keeps what it got until released. */
struct waiter {
	pthread_t thread;
	bakery_lock_t *l;
	int rc;
	struct tk_gate release;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->rc = bakery_lock(w->l);
	if (w->rc == 0) {
		tk_gate_wait(&w->release, 30);
		bakery_unlock(w->l);
	}
	return NULL;
}

static unsigned waiters_of(bakery_t *b, bakery_lock_t *l)
{
	struct bakery_lock_info li;

	ck_assert_int_eq(bakery_lock_info(b, lock_index(l), &li), 0);
	return li.waiters;
}

/* Wait (20 s at most) until L's lock has one waiter, and check it has. */
static void await_one_waiter(bakery_t *b, bakery_lock_t *l)
{
	double t0 = tk_now(CLOCK_MONOTONIC);

	while (waiters_of(b, l) == 0 && tk_now(CLOCK_MONOTONIC) - t0 < 20)
		tk_sleep_ms(1);
	ck_assert_uint_eq(waiters_of(b, l), 1);
}

START_TEST(unlink_refuses_a_lock_in_use)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "unlinkbusy", 4, 2);
	bakery_lock_t *l = unit_lock(b, "busy", (enum bakery_algo)_i);
	bakery_lock_t *wl = unit_lock(b, "busy", (enum bakery_algo)_i);
	struct unit_holder h;
	struct waiter w = { .l = wl };

	unit_holder_start(&h, l);
	ck_assert_int_eq(bakery_lock_unlink(b, "busy"), EBUSY);         /* held */
	tk_gate_init(&w.release);
	ck_assert_int_eq(pthread_create(&w.thread, NULL, waiter_main, &w), 0);
	await_one_waiter(b, wl);
	unit_holder_stop(&h);
	/* the waiter has it now, or is about to: in use either way */
	ck_assert_int_eq(bakery_lock_unlink(b, "busy"), EBUSY);
	tk_gate_open(&w.release);
	ck_assert_int_eq(pthread_join(w.thread, NULL), 0);
	ck_assert_int_eq(w.rc, 0);
	tk_gate_close(&w.release);
	/* still the same lock for both handles */
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock(wl), 0);
	ck_assert_int_eq(bakery_unlock(wl), 0);
	ck_assert_int_eq(bakery_lock_unlink(b, "busy"), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_lock_close(wl), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* A reader holding the lock shared keeps it too (the algorithms that have
 * a shared mode). */
static void *reader_main(void *arg)
{
	struct waiter *w = arg;

	w->rc = bakery_rdlock(w->l);
	if (w->rc == 0) {
		tk_gate_wait(&w->release, 30);
		bakery_unlock(w->l);
	}
	return NULL;
}

START_TEST(unlink_refuses_a_lock_held_shared)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "unlinkrd", 4, 2);
	bakery_lock_t *l = unit_lock(b, "shared", (enum bakery_algo)_i);
	struct waiter w = { .l = l };
	double t0 = tk_now(CLOCK_MONOTONIC);
	struct bakery_lock_info li;
	unsigned index = lock_index(l);

	tk_gate_init(&w.release);
	w.rc = -1;
	ck_assert_int_eq(pthread_create(&w.thread, NULL, reader_main, &w), 0);
	while (!(bakery_lock_info(b, index, &li) == 0 && li.holder >= 0) &&
	       uatomic_read(&w.rc) == -1 && tk_now(CLOCK_MONOTONIC) - t0 < 20)
		tk_sleep_ms(1);
	if (uatomic_read(&w.rc) == ENOTSUP) {           /* no shared mode here */
		ck_assert_int_eq(pthread_join(w.thread, NULL), 0);
	} else {
		ck_assert_int_eq(bakery_lock_unlink(b, "shared"), EBUSY);
		tk_gate_open(&w.release);
		ck_assert_int_eq(pthread_join(w.thread, NULL), 0);
		ck_assert_int_eq(w.rc, 0);
	}
	tk_gate_close(&w.release);
	ck_assert_int_eq(bakery_lock_unlink(b, "shared"), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/*
 * A lock whose holder died inside its critical section owes a repair: its
 * next holder must be told.  Removing it would lose that (a lock made anew
 * under the name tells nobody), so the unlink refuses with EOWNERDEAD and
 * the lock stays; left not recoverable, with ENOTRECOVERABLE.  Forced
 * (BAKERY_UNLINK_FORCE), it goes; repaired, it goes as any other.  Held,
 * it stays, forced or not (EBUSY).
 */
START_TEST(unlink_of_a_dead_holders_lock)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "unlinkdead", 4, 2);
	bakery_lock_t *l;
	unsigned reclaimed;

	ck_assert(tk_kill(unit_holder_process(name, "orphan", algo)));
	/* recovered by the unlink itself (unlink_proves_dead_users_dead), or
	 * beforehand: the same answer */
	ck_assert_int_eq(bakery_recover(b, &reclaimed), 0);
	ck_assert_int_eq(bakery_lock_unlink(b, "orphan"), EOWNERDEAD);
	ck_assert_int_eq(bakery_lock_unlink_flags(b, "orphan", 0), EOWNERDEAD);
	/* still there, and the next holder is told */
	ck_assert_int_eq(bakery_lock_lookup(b, "orphan", BAKERY_ALGO_DEFAULT, &l), 0);
	ck_assert_int_eq(bakery_lock(l), EOWNERDEAD);
	ck_assert_int_eq(bakery_lock_unlink_flags(b, "orphan", BAKERY_UNLINK_FORCE), EBUSY);
	ck_assert_int_eq(bakery_unlock(l), 0);                  /* unrepaired */
	ck_assert_int_eq(bakery_lock_unlink(b, "orphan"), ENOTRECOVERABLE);
	ck_assert_int_eq(bakery_lock(l), ENOTRECOVERABLE);
	ck_assert_int_eq(bakery_lock_unlink_flags(b, "orphan", BAKERY_UNLINK_FORCE), 0);
	ck_assert_int_eq(bakery_lock(l), BAKERY_EREMOVED);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_lock_lookup(b, "orphan", BAKERY_ALGO_DEFAULT, &l), ENOENT);

	/* forced straight from owner-died */
	ck_assert(tk_kill(unit_holder_process(name, "forced", algo)));
	ck_assert_int_eq(bakery_recover(b, &reclaimed), 0);
	ck_assert_int_eq(bakery_lock_unlink_flags(b, "forced", BAKERY_UNLINK_FORCE), 0);

	/* repaired: removed as any other */
	ck_assert(tk_kill(unit_holder_process(name, "mended", algo)));
	l = unit_lock(b, "mended", algo);
	ck_assert_int_eq(bakery_lock(l), EOWNERDEAD);
	ck_assert_int_eq(bakery_lock_unlink(b, "mended"), EBUSY);
	ck_assert_int_eq(bakery_consistent(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_unlink(b, "mended"), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);

	ck_assert_int_eq(bakery_lock_unlink_flags(b, "mended", 0x2), EINVAL);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/*
 * Participants killed in a lock are no users of it: the unlink proves them
 * dead and recovers them itself, without a bakery_recover() first.  A dead
 * holder: EOWNERDEAD at once (the lock kept, its next holder told); a dead
 * waiter, or a dead reader (where the algorithm has a shared mode), whose
 * deaths owe no repair: the lock is removed.
 */
struct dead_user {
	const char *region, *lock;
	enum bakery_algo algo;
	bool shared;
	struct tk_gate ready;
};

/* A child that takes the lock shared (or waits for it in bakery_lock) and
 * then sleeps until it is killed. */
static int dead_user_main(void *arg)
{
	struct dead_user *u = arg;
	bakery_lock_t *l;
	bakery_t *b;

	if (bakery_open(u->region, 0, NULL, &b) || bakery_lock_open(b, u->lock, u->algo, &l))
		return 1;
	if (u->shared && bakery_rdlock(l))
		return 2;
	tk_gate_open(&u->ready);
	if (!u->shared)
		bakery_lock(l);         /* waits behind the parent's holder */
	sleep(60);
	return 3;
}

START_TEST(unlink_proves_dead_users_dead)
{
	enum bakery_algo algo = (enum bakery_algo)_i;
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "unlinkkilled", 4, 2);
	bakery_lock_t *l, *held;
	struct dead_user u = { .region = name, .lock = "waited", .algo = algo };
	struct unit_holder h;
	pid_t pid;

	/* a holder killed: EOWNERDEAD, with no bakery_recover() first */
	ck_assert(tk_kill(unit_holder_process(name, "orphan", algo)));
	ck_assert_int_eq(bakery_lock_unlink(b, "orphan"), EOWNERDEAD);
	ck_assert_int_eq(bakery_lock_lookup(b, "orphan", BAKERY_ALGO_DEFAULT, &l), 0);
	ck_assert_int_eq(bakery_lock(l), EOWNERDEAD);
	ck_assert_int_eq(bakery_consistent(l), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_unlink(b, "orphan"), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);

	/* a waiter killed in line: removed once the holder has gone */
	held = unit_lock(b, "waited", algo);
	unit_holder_start(&h, held);
	tk_gate_init(&u.ready);
	pid = tk_fork(dead_user_main, &u);
	ck_assert(tk_gate_wait(&u.ready, 10));
	await_one_waiter(b, held);
	ck_assert(tk_kill(pid));
	tk_gate_close(&u.ready);
	ck_assert_int_eq(bakery_lock_unlink(b, "waited"), EBUSY);       /* held */
	unit_holder_stop(&h);
	ck_assert_int_eq(bakery_lock_unlink(b, "waited"), 0);
	ck_assert_int_eq(bakery_lock_close(held), 0);

	/* a reader killed (where there is a shared mode): its death owes
	 * nothing, the lock is removed */
	l = unit_lock(b, "read", algo);
	if (bakery_tryrdlock(l) != ENOTSUP) {
		ck_assert_int_eq(bakery_unlock(l), 0);
		u.lock = "read";
		u.shared = true;
		tk_gate_init(&u.ready);
		pid = tk_fork(dead_user_main, &u);
		ck_assert(tk_gate_wait(&u.ready, 10));
		ck_assert(tk_kill(pid));
		tk_gate_close(&u.ready);
		ck_assert_int_eq(bakery_lock_unlink(b, "read"), 0);
	}
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

START_TEST(unlink_bad_arguments)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "unlinkargs", 4, 2), *ro;

	ck_assert_int_eq(bakery_lock_unlink(NULL, "x"), EINVAL);
	ck_assert_int_eq(bakery_lock_unlink(b, NULL), EINVAL);
	ck_assert_int_eq(bakery_lock_unlink(b, ""), EINVAL);
	ck_assert_int_eq(bakery_lock_unlink(b, "nosuch"), ENOENT);
	ck_assert_int_eq(bakery_open(name, BAKERY_RDONLY, NULL, &ro), 0);
	ck_assert_int_eq(bakery_lock_unlink(ro, "nosuch"), EPERM);
	ck_assert_int_eq(bakery_close(ro), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* A user who may open the region (mode 0666) but does not own it. */
static int stranger(void *arg)
{
	bakery_t *b;

	if (setgid(65534) || setuid(65534))
		return 1;
	if (bakery_open(arg, 0, NULL, &b))
		return 2;
	return bakery_lock_unlink(b, "mine") == EPERM ? 0 : 3;
}

START_TEST(unlink_needs_the_owner)
{
	char name[TK_NAME_SIZE], path[256];
	bakery_t *b;
	bakery_lock_t *l;

	if (geteuid() != 0)
		return;         /* needs root to become another user */
	b = unit_region(name, "unlinkowner", 4, 2);
	l = unit_lock(b, "mine", BAKERY_ALGO_DEFAULT);
	unit_shm_path(path, sizeof(path), name);
	ck_assert_int_eq(chmod(path, 0666), 0);
	ck_assert_int_eq(tk_reap(tk_fork(stranger, name), 20), 0);
	ck_assert_int_eq(bakery_lock(l), 0);            /* still there */
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* ------------------------------------------------------------------ race -- */

/*
 * A one-entry table and two names: racers open one name or the other (the
 * open fails while the other name has the entry), lock, check that they are
 * alone and that the entry still holds their lock's name, unlock, and open
 * again once their lock was removed.  The test thread unlinks both names
 * meanwhile.  A stale handle that entered the entry's next lock, or an
 * unlink that freed a lock in use, shows as a wrong name or as two inside.
 */
static const char *const race_names[2] = { "left", "right" };

struct race {
	bakery_t *b;
	enum bakery_algo algo;
	int stop;
	int inside;                /* threads in a critical section: 0 or 1 */
	unsigned long overlaps, wrong_entry, passages, errors;
};

struct racer {
	struct race *r;
	unsigned id;
};

/* In the critical section of NAME's lock L: is the entry still NAME's? */
static bool entry_is(bakery_t *b, bakery_lock_t *l, const char *name)
{
	struct bakery_lock_info li;
	unsigned index;

	return bakery_lock_index(l, &index) == 0 && bakery_lock_info(b, index, &li) == 0 &&
	       strcmp(li.name, name) == 0;
}

static void *racer_main(void *arg)
{
	const struct racer *me = arg;
	struct race *r = me->r;
	bakery_lock_t *l = NULL;
	const char *name = NULL;

	for (unsigned n = 0; !uatomic_read(&r->stop); n++) {
		int rc;

		if (!l) {
			name = race_names[(me->id + n) % 2];
			rc = bakery_lock_open(r->b, name, r->algo, &l);
			if (rc == BAKERY_ELOCKS) {
				sched_yield();          /* the other name has the entry */
				continue;
			}
			if (rc) {
				uatomic_inc(&r->errors);
				break;
			}
		}
		rc = bakery_lock(l);
		if (rc == BAKERY_EREMOVED) {
			bakery_lock_close(l);
			l = NULL;
			continue;
		}
		if (rc) {
			uatomic_inc(&r->errors);
			break;
		}
		if (uatomic_add_return(&r->inside, 1) != 1)
			uatomic_inc(&r->overlaps);
		if (!entry_is(r->b, l, name))
			uatomic_inc(&r->wrong_entry);
		uatomic_dec(&r->inside);
		uatomic_inc(&r->passages);
		if (bakery_unlock(l))
			uatomic_inc(&r->errors);
	}
	if (l)
		bakery_lock_close(l);
	return NULL;
}

#define RACERS 3
#define RACE_S 60.0             /* the race's bound: ends well before it */
#define RACE_STEP_S 5.0         /* the racers' next passage, at most */
#define REFUSALS_S 2.0          /* how long the race looks for refusals */

/* The racers made a passage since *SEEN (race_moved's argument). */
struct race_seen { struct race *r; unsigned long seen; };

static bool race_moved(void *arg)
{
	const struct race_seen *w = arg;

	return uatomic_read(&w->r->passages) != w->seen;
}

/* Is the unlinker of R, started at T0, to make another attempt? */
static bool race_goes_on(struct race *r, double t0, unsigned removals, unsigned refusals)
{
	double t = tk_now(CLOCK_MONOTONIC) - t0;

	if (t >= RACE_S)
		return false;
	if (removals < 10 || uatomic_read(&r->passages) < 100)
		return true;
	return refusals < 5 && t < REFUSALS_S;
}

START_TEST(unlink_races_with_lockers)
{
	char name[TK_NAME_SIZE];
	struct race r = { .algo = (enum bakery_algo)_i };
	struct racer who[RACERS];
	pthread_t t[RACERS];
	unsigned removals = 0, refusals = 0;
	double t0 = tk_now(CLOCK_MONOTONIC);

	r.b = unit_region(name, "unlinkrace", 8, 1);
	for (unsigned i = 0; i < RACERS; i++) {
		who[i] = (struct racer){ &r, i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, racer_main, &who[i]), 0);
	}
	/* Until enough removals and passages, within RACE_S, and some
	 * refusals if they come within REFUSALS_S (they need a racer caught
	 * inside at the unlinker's look: 0-2 in 2 s here); not a
	 * count of attempts: on a loaded machine 2000 of them passed with no
	 * removal, or no passage.  After a removal the racers make a passage
	 * first (within RACE_STEP_S): a new lock of the name, or the other
	 * one. */
	for (unsigned n = 0; race_goes_on(&r, t0, removals, refusals); n++) {
		int rc = bakery_lock_unlink(r.b, race_names[n % 2]);

		ck_assert_msg(rc == 0 || rc == EBUSY || rc == ENOENT, "unlink: %s",
		              bakery_strerror(rc));
		removals += rc == 0;
		refusals += rc == EBUSY;
		if (rc == 0) {
			struct race_seen seen = { &r, uatomic_read(&r.passages) };

			(void)tk_wait_until(race_moved, &seen, RACE_STEP_S);
		}
	}
	uatomic_set(&r.stop, 1);
	for (unsigned i = 0; i < RACERS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_uint_eq(r.overlaps, 0);
	ck_assert_uint_eq(r.wrong_entry, 0);
	ck_assert_msg(r.errors == 0, "%lu errors; %lu passages, %u removals, %u refusals",
	              r.errors, r.passages, removals, refusals);
	ck_assert_uint_gt(r.passages, 0);
	ck_assert_uint_gt(removals, 0);
	ck_assert_int_eq(bakery_close(r.b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* ---------------------------------------------------------------- crash -- */

static const char *const crash_points[] = {
	"unlink-dying", "unlink-checked", "unlink-freed", "unlink-clear",
};

struct doomed {
	const char *name, *point;
};

static int doomed_unlinker(void *arg)
{
	const struct doomed *d = arg;
	bakery_t *b;

	setenv("BAKERY_CRASH_AT", d->point, 1);
	if (bakery_open(d->name, 0, NULL, &b))
		return 1;
	return bakery_lock_unlink(b, "victim") == 0 ? 2 : 3;
}

START_TEST(killed_unlinker_leaves_the_lock_or_a_free_entry)
{
	char name[TK_NAME_SIZE];
	struct doomed d = { name, crash_points[_i] };
	bakery_t *b = unit_region(name, "unlinkcrash", 4, 2);
	bakery_lock_t *old = unit_lock(b, "victim", BAKERY_ALGO_DEFAULT), *l, *l2;
	struct bakery_lock_info li;
	unsigned index;
	int rc;

	ck_assert_int_eq(bakery_lock(old), 0);
	ck_assert_int_eq(bakery_unlock(old), 0);
	ck_assert_int_eq(bakery_lock_index(old, &index), 0);
	ck_assert_int_eq(tk_reap(tk_fork(doomed_unlinker, &d), 20), 128 + SIGKILL);
	/* before anyone settles it: an unlink under way, or the lock gone */
	rc = bakery_lock_info(b, index, &li);
	if (_i < 2)             /* unlink-dying, unlink-checked: still READY */
		ck_assert(rc == 0 && li.state == BAKERY_LOCK_REMOVING);
	else
		ck_assert_int_eq(rc, ENOENT);

	/* the old handle: the lock, or gone; never stuck */
	rc = bakery_lock(old);
	ck_assert_msg(rc == 0 || rc == BAKERY_EREMOVED, "lock: %s", bakery_strerror(rc));
	if (rc == 0) {
		/* the lock survived: found by name, and removable now */
		ck_assert_int_eq(bakery_unlock(old), 0);
		ck_assert_int_eq(bakery_lock_lookup(b, "victim", BAKERY_ALGO_DEFAULT, &l), 0);
		ck_assert_int_eq(bakery_lock_close(l), 0);
		ck_assert_int_eq(bakery_lock_unlink(b, "victim"), 0);
		ck_assert_int_eq(bakery_lock(old), BAKERY_EREMOVED);
	} else {
		ck_assert_int_eq(bakery_lock_lookup(b, "victim", BAKERY_ALGO_DEFAULT, &l), ENOENT);
	}
	/* a free entry: two new names fit in the two-entry table */
	l = unit_lock(b, "first", BAKERY_ALGO_LAMPORT);
	l2 = unit_lock(b, "second", BAKERY_ALGO_JAYANTI);
	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_int_eq(bakery_lock(l2), 0);
	ck_assert_int_eq(bakery_unlock(l2), 0);
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(bakery_lock(old), BAKERY_EREMOVED);
	ck_assert_int_eq(bakery_lock_close(l), 0);
	ck_assert_int_eq(bakery_lock_close(l2), 0);
	ck_assert_int_eq(bakery_lock_close(old), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* A look-up stopped between finding the name and opening it while the lock
 * is removed: it must say ENOENT, and not create the lock again. */
static int stopped_lookup(void *arg)
{
	const char *name = arg;
	bakery_lock_t *l;
	bakery_t *b;
	int rc;

	setenv("BAKERY_STOP_AT", "open-found", 1);
	if (bakery_open(name, 0, NULL, &b))
		return 1;
	rc = bakery_lock_lookup(b, "victim", BAKERY_ALGO_DEFAULT, &l);
	return rc == ENOENT ? 0 : rc == 0 ? 2 : 3;
}

static bool is_stopped(void *arg)
{
	return unit_proc_state(*(pid_t *)arg) == 'T';
}

START_TEST(lookup_racing_an_unlink_creates_nothing)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "lookuprace", 4, 4);
	bakery_lock_t *l = unit_lock(b, "victim", BAKERY_ALGO_DEFAULT);
	pid_t pid;

	ck_assert_int_eq(bakery_lock_close(l), 0);
	pid = tk_fork(stopped_lookup, name);
	ck_assert_msg(tk_wait_until(is_stopped, &pid, 20), "the look-up never reached its stop");
	ck_assert_int_eq(bakery_lock_unlink(b, "victim"), 0);
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	/* 2: the look-up opened a lock that was removed after it found it */
	ck_assert_int_eq(tk_reap(pid, 20), 0);
	ck_assert_int_eq(bakery_lock_lookup(b, "victim", BAKERY_ALGO_DEFAULT, &l), ENOENT);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

static Suite *lock_unlink_suite(void)
{
	Suite *s = suite_create("lock-unlink");
	TCase *tc = tcase_create("lock-unlink");
	TCase *tr = tcase_create("race");
	TCase *tx = tcase_create("crash");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, unlink_removes_an_idle_lock, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, stale_handle_leaves_the_next_lock_alone, TK_ALGO_FIRST,
	                    TK_ALGO_END);
	tcase_add_loop_test(tc, unlink_refuses_a_lock_in_use, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, unlink_refuses_a_lock_held_shared, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, unlink_of_a_dead_holders_lock, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, unlink_proves_dead_users_dead, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_test(tc, unlink_bad_arguments);
	tcase_add_test(tc, unlink_needs_the_owner);
	suite_add_tcase(s, tc);
	tcase_set_timeout(tr, 120);
	tcase_add_loop_test(tr, unlink_races_with_lockers, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_test(tr, lookup_racing_an_unlink_creates_nothing);
	suite_add_tcase(s, tr);
	tcase_set_timeout(tx, 60);
	tcase_add_loop_test(tx, killed_unlinker_leaves_the_lock_or_a_free_entry, 0,
	                    (int)(sizeof(crash_points) / sizeof(crash_points[0])));
	suite_add_tcase(s, tx);
	return s;
}

int main(void)
{
	return unit_run(lock_unlink_suite());
}
