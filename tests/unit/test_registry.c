/* SPDX-License-Identifier: MIT */
/*
 * test_registry.c - participant slots: a thread takes its slot lazily at its
 * first lock call and gives it back at thread exit and at bakery_close
 * (other threads' slots at their next lock call); a forked child's thread
 * takes a fresh slot and does not hold the parent's lock; with a full
 * registry a try answers EBUSY at once and a timed lock ETIMEDOUT at its
 * deadline; the slot of a SIGKILLed process goes to the next newcomer, and
 * a newcomer waits for one still lending its registers to a Jayanti proxy
 * passage.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
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
	t->slot = tk_self_slot(t->b);
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
	mine = tk_self_slot(b);
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

/* A pool thread with slots in two regions: it keeps working on the second
 * after the first was closed, and must give back its slot in the first at
 * that next call (bakery_close's promise), not only at its exit. */
struct pool_thread {
	pthread_t thread;
	bakery_lock_t *first, *second;
	struct tk_gate ready, go, done, leave;
	int rc;
};

static int lock_unlock(bakery_lock_t *l)
{
	int rc = bakery_lock(l);

	return rc ? rc : bakery_unlock(l);
}

static void *pool_main(void *arg)
{
	struct pool_thread *p = arg;

	p->rc = lock_unlock(p->first);
	if (!p->rc)
		p->rc = lock_unlock(p->second);
	tk_gate_open(&p->ready);
	tk_gate_wait(&p->go, 30);
	if (!p->rc)
		p->rc = lock_unlock(p->second);     /* its next call */
	tk_gate_open(&p->done);
	tk_gate_wait(&p->leave, 30);
	return NULL;
}

START_TEST(closed_regions_slot_given_back_at_next_call)
{
	char first[TK_NAME_SIZE], second[TK_NAME_SIZE];
	bakery_t *a = unit_region(first, "poolA", 4, 2), *b = unit_region(second, "poolB", 4, 2);
	bakery_t *observer = NULL;
	struct pool_thread p = { .first = unit_lock(a, "l", BAKERY_ALGO_DEFAULT),
	                         .second = unit_lock(b, "l", BAKERY_ALGO_DEFAULT) };

	ck_assert_int_eq(bakery_open(first, 0, NULL, &observer), 0);
	tk_gate_init(&p.ready);
	tk_gate_init(&p.go);
	tk_gate_init(&p.done);
	tk_gate_init(&p.leave);
	ck_assert_int_eq(pthread_create(&p.thread, NULL, pool_main, &p), 0);
	ck_assert(tk_gate_wait(&p.ready, 30));
	ck_assert_int_eq(p.rc, 0);
	ck_assert_uint_eq(slots_used(observer), 1);         /* the pool thread's */
	ck_assert_int_eq(bakery_lock_close(p.first), 0);
	ck_assert_int_eq(bakery_close(a), 0);
	ck_assert_uint_eq(slots_used(observer), 1);         /* still its own */
	tk_gate_open(&p.go);
	ck_assert(tk_gate_wait(&p.done, 30));
	ck_assert_int_eq(p.rc, 0);
	ck_assert_uint_eq(slots_used(observer), 0);         /* given back */
	tk_gate_open(&p.leave);
	ck_assert_int_eq(pthread_join(p.thread, NULL), 0);
	ck_assert_int_eq(bakery_lock_close(p.second), 0);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_close(observer), 0);
	ck_assert_int_eq(bakery_unlink(first), 0);
	ck_assert_int_eq(bakery_unlink(second), 0);
	tk_gate_close(&p.ready);
	tk_gate_close(&p.go);
	tk_gate_close(&p.done);
	tk_gate_close(&p.leave);
}
END_TEST

/* ---------------------------------------------------------------- fork -- */

struct fork_report {
	int unlock_rc, trylock_rc, consistent_rc, other_rc, close_rc;
	int slot;
	pid_t pid;
	char name[TK_NAME_SIZE];
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
	r->slot = tk_self_slot(f->b);
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
	parent_slot = tk_self_slot(f.b);

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

/* Does this process map the shm object NAME?  (By inode: a region is
 * mapped under its creation temporary's name.) */
static bool maps_region(const char *name)
{
	char line[512], path[TK_NAME_SIZE + 16];
	struct stat st;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/dev/shm%s", name);
	if (stat(path, &st) || !(f = fopen("/proc/self/maps", "re")))
		return true;    /* cannot tell: the test fails */
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long ino;

		found = sscanf(line, "%*s %*s %*s %*s %llu", &ino) == 1 &&
		        ino == (unsigned long long)st.st_ino;
	}
	fclose(f);
	return found;
}

/* In a child forked while another thread of the parent had a slot: closing
 * the inherited handle unmaps the region (that thread is not the child's). */
static int forked_close_unmaps(void *arg)
{
	struct fork_case *f = arg;

	if (!maps_region(f->rep->name))
		return 1;       /* the check itself would be wrong */
	if (bakery_close(f->b))
		return 2;
	return maps_region(f->rep->name) ? 3 : 0;
}

START_TEST(forked_child_close_unmaps_despite_parents_threads)
{
	char name[TK_NAME_SIZE];
	struct fork_case f = { 0 };
	struct taker t;

	f.b = unit_region(name, "forkmap", 4, 4);
	f.held = unit_lock(f.b, "l", BAKERY_ALGO_DEFAULT);
	f.rep = tk_shared(sizeof(*f.rep));
	snprintf(f.rep->name, sizeof(f.rep->name), "%s", name);
	taker_start(&t, f.b, f.held);           /* another thread with a slot */
	ck_assert_int_eq(tk_reap(tk_fork(forked_close_unmaps, &f), 20), 0);
	taker_stop(&t);
	bakery_lock_close(f.held);
	ck_assert_int_eq(bakery_close(f.b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
}
END_TEST

/* ------------------------------------------------- regions per thread -- */

struct member {
	char name[TK_NAME_SIZE];
	bakery_t *b;
	bakery_lock_t *l;
};

/* A thread takes part in at most BAKERY_MAX_THREAD_REGIONS regions (one
 * robust-list entry each; the kernel walks 2048): one more is
 * BAKERY_EREGIONS (not EMFILE: no descriptor limit is at stake), and
 * closing one makes room again. */
START_TEST(thread_region_limit_is_eregions)
{
	const unsigned n = BAKERY_MAX_THREAD_REGIONS + 1;
	struct member *m = calloc(n, sizeof(*m));
	struct rlimit rl;

	ck_assert_ptr_nonnull(m);
	/* a descriptor per region */
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < n + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < n + 64) {
		printf("regions per thread: skipped, %lu descriptors at most\n",
		       (unsigned long)rl.rlim_cur);
		free(m);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		m[i].b = unit_region(m[i].name, "many", 1, 1);
		m[i].l = unit_lock(m[i].b, "l", BAKERY_ALGO_DEFAULT);
	}
	for (unsigned i = 0; i < n - 1; i++) {
		ck_assert_int_eq(bakery_lock(m[i].l), 0);
		ck_assert_int_eq(bakery_unlock(m[i].l), 0);
	}
	ck_assert_int_eq(bakery_lock(m[n - 1].l), BAKERY_EREGIONS);
	ck_assert_int_eq(bakery_trylock(m[n - 1].l), BAKERY_EREGIONS);
	ck_assert_int_eq(bakery_lock_close(m[0].l), 0);
	ck_assert_int_eq(bakery_close(m[0].b), 0);
	ck_assert_int_eq(bakery_lock(m[n - 1].l), 0);
	ck_assert_int_eq(bakery_unlock(m[n - 1].l), 0);
	ck_assert_int_eq(bakery_unlink(m[0].name), 0);
	for (unsigned i = 1; i < n; i++) {
		ck_assert_int_eq(bakery_lock_close(m[i].l), 0);
		ck_assert_int_eq(bakery_close(m[i].b), 0);
		ck_assert_int_eq(bakery_unlink(m[i].name), 0);
	}
	free(m);
}
END_TEST

/* ---------------------------------------------------------- exhaustion -- */

/* No slot free: a try says EBUSY at once, a timed lock waits for one until
 * its deadline (ETIMEDOUT), never BAKERY_ESLOTS (test_slot_wait.c shows the
 * blocking lock waiting). */
static void expect_no_slot(bakery_lock_t *l)
{
	struct timespec soon = tk_in(CLOCK_REALTIME, 0.2);
	double t0 = tk_now(CLOCK_MONOTONIC), took;

	ck_assert_int_eq(bakery_trylock(l), EBUSY);
	took = tk_now(CLOCK_MONOTONIC) - t0;
	printf("full registry: trylock gave EBUSY in %.3f ms\n", took * 1e3);
	ck_assert_msg(took < 0.5, "EBUSY took %.3f s", took);
	ck_assert_int_eq(bakery_timedlock(l, &soon), ETIMEDOUT);
	ck_assert(tk_now(CLOCK_REALTIME) >= (double)soon.tv_sec + soon.tv_nsec / 1e9);
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
	ck_assert_int_eq(bakery_trylock(l), EBUSY);
	ck_assert(tk_kill(pid));

	ck_assert_int_eq(bakery_lock(l), 0);
	ck_assert_uint_eq(slots_used(b), 1);
	ck_assert_int_eq(tk_self_slot(b), 0);
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

/* Child: take lock "full" of region ARG (blocking), report bakery_lock's
 * answer as exit status after letting go. */
static int lock_once(void *arg)
{
	bakery_t *b = NULL;
	bakery_lock_t *l = NULL;
	int rc;

	if (bakery_open(arg, 0, NULL, &b) || bakery_lock_open(b, "full", BAKERY_ALGO_DEFAULT, &l))
		return 100;
	rc = bakery_lock(l);
	if (rc == 0 || rc == EOWNERDEAD)
		bakery_unlock(l);
	return rc;
}

struct lock_watch {
	bakery_t *b;
	unsigned index;
};

static bool has_waiter(void *arg)
{
	struct lock_watch *w = arg;
	struct bakery_lock_info li;

	return bakery_lock_info(w->b, w->index, &li) == 0 && li.waiters == 1;
}

/* Child: trylock of lock "full" of region ARG; its answer as exit status. */
static int try_once(void *arg)
{
	bakery_t *b = NULL;
	bakery_lock_t *l = NULL;
	int rc;

	if (bakery_open(arg, 0, NULL, &b) || bakery_lock_open(b, "full", BAKERY_ALGO_DEFAULT, &l))
		return 100;
	rc = bakery_trylock(l);
	if (rc == 0 || rc == EOWNERDEAD)
		bakery_unlock(l);
	return rc;
}

/* Jayanti, as many slots as participants: a waiter killed behind the holder
 * leaves a passage that is completed by proxy only once the holder is out,
 * and its slot comes back then.  Meanwhile a newcomer finds no free slot
 * but one being recovered: a try says EBUSY, and a blocking lock waits;
 * after the holder lets go, the waiting newcomer gets a slot and the lock. */
START_TEST(slot_being_recovered_is_waited_for)
{
	char name[TK_NAME_SIZE];
	bakery_t *b = unit_region(name, "recovering", 2, 2);
	bakery_lock_t *l = unit_lock(b, "full", BAKERY_ALGO_JAYANTI);
	struct lock_watch w = { b, 0 };
	pid_t waiter;

	ck_assert_int_eq(bakery_lock_index(l, &w.index), 0);
	ck_assert_int_eq(bakery_lock(l), 0);                /* slot 0 */
	waiter = tk_fork(lock_once, name);                  /* slot 1, waits */
	ck_assert(tk_wait_until(has_waiter, &w, 10));
	ck_assert(tk_kill(waiter));
	ck_assert_int_eq(tk_reap(tk_fork(try_once, name), 10), EBUSY);
	waiter = tk_fork(lock_once, name);                  /* waits for the slot */
	ck_assert_int_eq(bakery_unlock(l), 0);
	ck_assert_int_eq(tk_reap(waiter, 20), 0);
	bakery_lock_close(l);
	ck_assert_int_eq(bakery_close(b), 0);
	ck_assert_int_eq(bakery_unlink(name), 0);
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
	tcase_add_test(tc, closed_regions_slot_given_back_at_next_call);
	tcase_add_test(tc, forked_child_close_unmaps_despite_parents_threads);
	tcase_add_test(tc, thread_region_limit_is_eregions);
	tcase_add_loop_test(tc, forked_child_takes_fresh_slot_and_holds_nothing,
	                    TK_ALGO_FIRST, TK_ALGO_END);
#if !defined(__SANITIZE_ADDRESS__)
	tcase_add_test(tc, lock_says_enomem_when_no_window_can_be_mapped);
#endif
	tcase_add_test(tc, full_registry_threads);
	tcase_add_test(tc, full_registry_processes);
	tcase_add_loop_test(tc, killed_process_slot_goes_to_newcomer, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_loop_test(tc, recover_reaps_killed_process_slot, TK_ALGO_FIRST, TK_ALGO_END);
	tcase_add_test(tc, slot_being_recovered_is_waited_for);
	tcase_add_loop_test(tc, open_reaps_killed_process_slot, TK_ALGO_FIRST, TK_ALGO_END);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(registry_suite());
}
