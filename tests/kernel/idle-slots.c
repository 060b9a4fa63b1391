/* SPDX-License-Identifier: MIT */
/*
 * idle-slots.c - a newcomer that finds every slot of a region owned by a
 * thread that sleeps in the application (holds no lock, is not inside a
 * lock call).
 *
 * Where membarrier(2) works, an idle owner's slot is reclaimed: the
 * newcomer's timed lock gets in well before its deadline.  Where it is
 * refused (an old kernel, a seccomp profile: the matrix runs this program
 * under seccomp-run), no slot can be reclaimed, and the newcomer must not
 * wait out its whole timeout (for ever when blocking) as if a lock were
 * busy: a timed lock and a blocking one both return BAKERY_ESLOTS after a
 * bounded wait (about a second), a trylock EBUSY at once.  With one owner
 * busy instead (it holds another lock), the newcomer waits as always: its
 * short timed lock says ETIMEDOUT, and it gets the busy owner's slot once
 * that one unlocks.  Finally, an idle owner that leaves frees its slot.
 *
 * Which case applies is asked of the kernel here, under the same filter
 * as the library: membarrier(MEMBARRIER_CMD_QUERY) must list the global
 * command.
 */
#include "config.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/tk.h"

#define DEADLINE_S 10.0         /* far past the bounded wait */
#define ESLOTS_BOUND_S 5.0      /* the bounded wait (1 s), generously */
#define SHORT_S 2.0             /* a timed lock that must time out */
#define DONE_S 20.0

struct owner {
	char region[TK_NAME_SIZE];
	bool busy;                 /* holds lock "M" while it sleeps */
	struct tk_gate ready, leave, unlock;
};

static int failed;

#define expect(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL (line %d): ", __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failed = 1; return; } } while (0)

static bool membarrier_works(void)
{
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	return cmds >= 0 && (cmds & MEMBARRIER_CMD_GLOBAL);
}

/* An owner: takes a slot (locks L once), then sleeps in the application;
 * a busy one holds M meanwhile, until `unlock`. */
static int owner_run(void *arg)
{
	struct owner *o = arg;
	bakery_t *b;
	bakery_lock_t *l, *m;

	if (bakery_open(o->region, 0, NULL, &b) || bakery_lock_open(b, "L", BAKERY_ALGO_DEFAULT, &l))
		return 2;
	if (bakery_lock(l) || bakery_unlock(l))
		return 3;
	if (o->busy && (bakery_lock_open(b, "M", BAKERY_ALGO_DEFAULT, &m) || bakery_lock(m)))
		return 4;
	tk_gate_open(&o->ready);
	if (o->busy) {
		tk_gate_wait(&o->unlock, DONE_S * 3);
		bakery_unlock(m);
	}
	tk_gate_wait(&o->leave, DONE_S * 3);
	return bakery_close(b) ? 5 : 0;
}

static pid_t owner_start(struct owner *o, const char *region, bool busy)
{
	pid_t pid;

	memset(o, 0, sizeof(*o));
	snprintf(o->region, sizeof(o->region), "%s", region);
	o->busy = busy;
	tk_gate_init(&o->ready);
	tk_gate_init(&o->leave);
	tk_gate_init(&o->unlock);
	pid = tk_fork(owner_run, o);
	if (!tk_gate_wait(&o->ready, DONE_S)) {
		fprintf(stderr, "an owner never got ready\n");
		exit(TK_SETUP_FAILED);
	}
	return pid;
}

static void owner_leave(struct owner *o, pid_t pid)
{
	tk_gate_open(&o->unlock);
	tk_gate_open(&o->leave);
	if (tk_reap(pid, DONE_S) != 0)
		failed = 1;
}

/* A lock call of the newcomer, in a thread of its own, timed. */
struct call {
	pthread_t thread;
	bakery_lock_t *l;
	int (*fn)(bakery_lock_t *l, double s);
	double s;
	int rc;
	int done;
	uint64_t t0, t1;
};

static int timed(bakery_lock_t *l, double s)
{
	struct timespec at = tk_in(CLOCK_MONOTONIC, s);

	return bakery_clocklock(l, CLOCK_MONOTONIC, &at);
}

static int blocking(bakery_lock_t *l, double s)
{
	(void)s;
	return bakery_lock(l);
}

static void *call_run(void *arg)
{
	struct call *c = arg;

	c->t0 = tk_ns();
	c->rc = c->fn(c->l, c->s);
	if (c->rc == 0)
		bakery_unlock(c->l);
	c->t1 = tk_ns();
	__atomic_store_n(&c->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static bool call_done(void *arg)
{
	return __atomic_load_n(&((struct call *)arg)->done, __ATOMIC_SEQ_CST);
}

/* Run FN(L, S) in a new thread (a new thread: no slot of its own yet) and
 * wait for it; its seconds. */
static double call(struct call *c)
{
	c->done = 0;
	if (pthread_create(&c->thread, NULL, call_run, c)) {
		perror("pthread_create");
		exit(TK_SETUP_FAILED);
	}
	if (!tk_wait_until(call_done, c, DONE_S + c->s)) {
		fprintf(stderr, "FAIL: a lock call did not end\n");
		exit(1);
	}
	pthread_join(c->thread, NULL);
	return (double)(c->t1 - c->t0) / 1e9;
}

static void all_idle(bakery_lock_t *l, bool reclaimable)
{
	struct call c = { .l = l, .fn = timed, .s = DEADLINE_S };
	double s = call(&c);

	printf("every owner idle, membarrier %s: timed lock %s after %.3f s\n",
	       reclaimable ? "works" : "refused", bakery_errname(c.rc), s);
	if (reclaimable) {
		expect(c.rc == 0, "timed lock: %s, not 0 (an idle slot reclaimed)",
		       bakery_strerror(c.rc));
		return;
	}
	expect(c.rc == BAKERY_ESLOTS, "timed lock: %s, not BAKERY_ESLOTS", bakery_strerror(c.rc));
	expect(s < ESLOTS_BOUND_S, "BAKERY_ESLOTS only after %.3f s", s);
	c.fn = blocking;
	s = call(&c);
	printf("every owner idle, membarrier refused: blocking lock %s after %.3f s\n",
	       bakery_errname(c.rc), s);
	expect(c.rc == BAKERY_ESLOTS, "blocking lock: %s, not BAKERY_ESLOTS", bakery_strerror(c.rc));
	expect(s < ESLOTS_BOUND_S, "BAKERY_ESLOTS only after %.3f s", s);
}

static void one_busy(bakery_lock_t *l, struct owner *busy)
{
	struct call c = { .l = l, .fn = timed, .s = SHORT_S };
	double s = call(&c);

	printf("one owner busy: timed lock %s after %.3f s\n", bakery_errname(c.rc), s);
	expect(c.rc == ETIMEDOUT, "timed lock: %s, not ETIMEDOUT", bakery_strerror(c.rc));
	/* the busy owner unlocks meanwhile: its slot comes back to us */
	c.s = DEADLINE_S;
	tk_gate_open(&busy->unlock);
	s = call(&c);
	printf("one owner busy, then unlocks: timed lock %s after %.3f s\n", bakery_errname(c.rc), s);
	expect(c.rc == 0, "timed lock: %s, not 0", bakery_strerror(c.rc));
}

/* A region of 2 slots and its lock L (the waiters' stamp of another
 * region would make owners give their slots back at once). */
static bakery_t *region_new(char *name, size_t size, bakery_lock_t **l)
{
	struct bakery_config cfg = { .slots = 2, .locks = 4 };
	bakery_t *b;

	tk_name(name, size, "idleslots");
	if (bakery_open(name, BAKERY_CREATE | BAKERY_EXCL, &cfg, &b) ||
	    bakery_lock_open(b, "L", BAKERY_ALGO_DEFAULT, l))
		exit(TK_SETUP_FAILED);
	return b;
}

static void region_end(char *name, bakery_t *b, bakery_lock_t *l)
{
	bakery_lock_close(l);
	bakery_close(b);
	bakery_unlink(name);
}

int main(void)
{
	struct owner *o = tk_shared(2 * sizeof(*o));
	bool reclaimable = membarrier_works();
	char region[TK_NAME_SIZE];
	bakery_t *b;
	bakery_lock_t *l;
	pid_t p0, p1;

	/* every slot owned by an idle thread */
	b = region_new(region, sizeof(region), &l);
	p0 = owner_start(&o[0], region, false);
	p1 = owner_start(&o[1], region, false);
	all_idle(l, reclaimable);
	if (reclaimable) {
		/* the reclaimed owner claims again on its next call: leave */
		owner_leave(&o[0], p0);
		owner_leave(&o[1], p1);
	} else {
		/* an idle owner that leaves frees its slot */
		struct call c = { .l = l, .fn = timed, .s = DEADLINE_S };

		owner_leave(&o[0], p0);
		if (!failed) {
			double s = call(&c);

			printf("an idle owner left: timed lock %s after %.3f s\n",
			       bakery_errname(c.rc), s);
			if (c.rc != 0) {
				fprintf(stderr, "FAIL: timed lock: %s, not 0\n", bakery_strerror(c.rc));
				failed = 1;
			}
		}
		owner_leave(&o[1], p1);
	}
	region_end(region, b, l);

	/* one owner busy, one idle: a wait like any other, then a slot */
	if (!failed && reclaimable) {
		printf("one owner busy: skipped (the idle one's slot would be reclaimed)\n");
	} else if (!failed) {
		b = region_new(region, sizeof(region), &l);
		p0 = owner_start(&o[0], region, true);
		p1 = owner_start(&o[1], region, false);
		one_busy(l, &o[0]);
		owner_leave(&o[0], p0);
		owner_leave(&o[1], p1);
		region_end(region, b, l);
	}
	return failed ? 1 : 0;
}
