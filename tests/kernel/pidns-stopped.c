/* SPDX-License-Identifier: MIT */
/*
 * pidns-stopped.c - a participant of another PID namespace that is stopped
 * (SIGSTOP) while it holds something others wait for is a live holder, not
 * corruption: the TID in a robust futex word is its holder's as its own
 * namespace numbers it, so nothing can be concluded from that TID here.
 *
 * V runs in a child PID namespace (a new one as root; a user + PID
 * namespace otherwise), with a PID that no process of ours has, and stops
 * at a stop point of the test build (BAKERY_STOP_AT):
 *
 *   table:   V stops inside bakery_lock_unlink, holding the lock table, the
 *            lock's generation odd (unlink-dying).  From here: a blocking
 *            bakery_lock of that lock waits (still waiting after WATCH_S,
 *            past the old 2 s bound); a timed one returns ETIMEDOUT at its
 *            deadline; a trylock EBUSY at once; bakery_lock_open of a new
 *            lock and of the lock being removed EAGAIN (never
 *            BAKERY_EBADREGION).  Continued, V's unlink ends (0); the
 *            blocking lock then says BAKERY_EREMOVED, and the new lock
 *            opens.
 *   revoker: in a region of 2 slots, one owned by an idle thread O, the
 *            other by a thread holding another lock, V waits for a slot
 *            and stops in the middle of revoking O's (revoke-odd).  O's
 *            timed lock returns ETIMEDOUT at its deadline, its blocking
 *            lock waits; continued, V finds O busy and gives up, O gets
 *            the lock, gives its slot back at its unlock to V, which gets
 *            the lock too.  An occupancy object checks exclusion.
 *
 * Exit status 77 (skip) with the reason printed where no PID namespace can
 * be made here.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../crash/crashkit.h"

#define SKIP 77
#define WATCH_S 3.5             /* past the old 2 s bound */
#define TIMED_S 3.0             /* a timed lock's deadline, from its call */
#define SOON_S 1.0              /* "at once", generously */
#define DONE_S 15.0             /* a call that must end, under any load */
#define STOP_S 20.0             /* for V to reach its stop point */

/* Exit statuses of the namespace's init (besides 0 and V's failures). */
#define NS_UNAVAILABLE 40

enum scene { SCENE_PROBE, SCENE_TABLE, SCENE_REVOKER };

struct shared {
	struct occupancy occ;
	char region[TK_NAME_SIZE];
	enum scene scene;
	pid_t want_pid;            /* V's PID in its namespace: none of ours has it */
	int pid_chosen;            /* ns_last_pid took it */
	int ns_errno;
	pid_t v_outer, v_inner;    /* V's PID here and in its namespace */
	int v_rc;                  /* what V's call returned */
};

static struct shared *sh;
static int failed;

static void fail(int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL (line %d): ", line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	failed = 1;
}

#define expect(cond, ...) do { if (!(cond)) { fail(__LINE__, __VA_ARGS__); return; } } while (0)

/* ------------------------------------------------------------ namespace -- */

/* A new PID namespace for our children: as root, a PID namespace alone;
 * otherwise inside a new user namespace (where the kernel allows it). */
static int ns_enter(void)
{
	uid_t uid = getuid();
	gid_t gid = getgid();

	if (geteuid() == 0 && unshare(CLONE_NEWPID) == 0)
		return 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0)
		return errno;
	return crash_map_ids(uid, gid);
}

/* ------------------------------------------------------------------- V -- */

static int v_table(bakery_t *b)
{
	setenv("BAKERY_STOP_AT", "unlink-dying", 1);
	return bakery_lock_unlink(b, CRASH_LOCK);
}

static int v_revoker(bakery_t *b)
{
	bakery_lock_t *l;
	int err;

	setenv("BAKERY_STOP_AT", "revoke-odd", 1);
	if ((err = bakery_lock_open(b, CRASH_LOCK, BAKERY_ALGO_DEFAULT, &l)))
		return err;
	if ((err = bakery_lock(l)))
		return err;
	occupancy_in(&sh->occ, 2, CRASH_OCC_PAUSE);
	occupancy_out(&sh->occ, 2);
	if ((err = bakery_unlock(l)))
		return err;
	return bakery_lock_close(l);
}

/* V, in the namespace: notes its PIDs (/proc is ours: /proc/self names the
 * outer PID), then runs the scene's call; its result into v_rc. */
static int v_run(void *unused)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);
	bakery_t *b;
	int err;

	(void)unused;
	sh->v_inner = getpid();
	CMM_STORE_SHARED(sh->v_outer, n > 0 ? (pid_t)strtol((buf[n] = 0, buf), NULL, 10) : -1);
	if (sh->scene == SCENE_PROBE)
		return 0;
	if ((err = bakery_open(sh->region, 0, NULL, &b))) {
		sh->v_rc = err;
		return 1;
	}
	err = sh->scene == SCENE_TABLE ? v_table(b) : v_revoker(b);
	sh->v_rc = err;
	bakery_close(b);
	return err ? 2 : 0;
}

/* The namespace's init (PID 1): V with the chosen PID, if it can. */
static int ns_init(void *unused)
{
	char buf[32];

	(void)unused;
	snprintf(buf, sizeof(buf), "%d", (int)sh->want_pid - 1);
	sh->pid_chosen = crash_write_file("/proc/sys/kernel/ns_last_pid", buf) == 0;
	return tk_reap(crash_fork(v_run, NULL, NULL), CRASH_CHILD_LIMIT - 10);
}

static int ns_spawn(void *unused)
{
	(void)unused;
	if ((sh->ns_errno = ns_enter()))
		return NS_UNAVAILABLE;
	return tk_reap(crash_fork(ns_init, NULL, NULL), CRASH_CHILD_LIMIT - 5);
}

/* A PID that no process here has (kill says so): V's, in its namespace,
 * so that a TID check made here finds nobody, as it would in the field. */
static pid_t pid_free_here(void)
{
	for (pid_t p = 3000; p < 32000; p += 7)
		if (kill(p, 0) < 0 && errno == ESRCH)
			return p;
	return 2;
}

/* Start V in SCENE; with STOPS, wait until it is stopped at its point. */
static pid_t v_start(enum scene scene, bool stops)
{
	uint64_t end = tk_ns() + (uint64_t)(STOP_S * 1e9);
	pid_t n;

	sh->scene = scene;
	sh->v_outer = 0;
	sh->v_rc = -1;
	sh->want_pid = pid_free_here();
	n = crash_fork(ns_spawn, NULL, NULL);
	while (!stops ? false : CMM_LOAD_SHARED(sh->v_outer) <= 0 ||
	                        crash_proc_state(CMM_LOAD_SHARED(sh->v_outer)) != 'T')
		if (tk_ns() > end)
			return -n;
		else
			tk_sleep_ms(1);
	return n;
}

/* --------------------------------------------------------------- calls -- */

/* One library call in a thread of its own, timed. */
struct call {
	pthread_t thread;
	int (*fn)(struct call *);
	bakery_lock_t *l;          /* the handle it uses (opened beforehand) */
	bakery_t *b;
	const char *name;          /* a lock to open */
	int rc;
	volatile int done;
	uint64_t t0, t1;
};

static void *call_run(void *arg)
{
	struct call *c = arg;

	c->t0 = tk_ns();
	c->rc = c->fn(c);
	c->t1 = tk_ns();
	CMM_STORE_SHARED(c->done, 1);
	return NULL;
}

static void call_start(struct call *c)
{
	c->done = 0;
	if (pthread_create(&c->thread, NULL, call_run, c)) {
		perror("pthread_create");
		exit(TK_SETUP_FAILED);
	}
}

static bool call_done(void *arg)
{
	return CMM_LOAD_SHARED(((struct call *)arg)->done);
}

/* Wait for C to end (it must); its seconds. */
static double call_end(struct call *c)
{
	if (!tk_wait_until(call_done, c, DONE_S)) {
		fprintf(stderr, "a call did not end within %.0f s\n", DONE_S);
		exit(1);
	}
	pthread_join(c->thread, NULL);
	return (double)(c->t1 - c->t0) / 1e9;
}

static int do_lock(struct call *c)
{
	int err = bakery_lock(c->l);

	if (err == 0 || err == EOWNERDEAD) {
		occupancy_in(&sh->occ, 1, CRASH_OCC_PAUSE);
		occupancy_out(&sh->occ, 1);
		bakery_unlock(c->l);
	}
	return err;
}

static int do_timedlock(struct call *c)
{
	struct timespec at = tk_in(CLOCK_MONOTONIC, TIMED_S);

	return bakery_clocklock(c->l, CLOCK_MONOTONIC, &at);
}

static int do_open(struct call *c)
{
	bakery_lock_t *l;
	int err = bakery_lock_open(c->b, c->name, BAKERY_ALGO_DEFAULT, &l);

	if (!err)
		bakery_lock_close(l);
	return err;
}

static bakery_lock_t *lock_of(bakery_t *b)
{
	bakery_lock_t *l;

	if (bakery_lock_open(b, CRASH_LOCK, BAKERY_ALGO_DEFAULT, &l)) {
		fprintf(stderr, "cannot open %s\n", CRASH_LOCK);
		exit(TK_SETUP_FAILED);
	}
	return l;
}

static bool v_gone(pid_t n)
{
	int st = tk_reap(n, DONE_S);

	if (st != 0)
		fprintf(stderr, "the namespace ended with %d (V's call: %s)\n", st,
		        bakery_strerror(sh->v_rc));
	return st == 0;
}

/* -------------------------------------------------------------- scenes -- */

static void scene_table(void)
{
	bakery_t *b;
	struct call blocking = { .fn = do_lock }, timed = { .fn = do_timedlock },
	            create = { .fn = do_open, .name = "new" },
	            reopen = { .fn = do_open, .name = CRASH_LOCK };
	bakery_lock_t *try_l;
	uint64_t t;
	pid_t n;
	int err;

	tk_name(sh->region, sizeof(sh->region), "pidnstable");
	if (crash_create(sh->region, 8, &b))
		exit(TK_SETUP_FAILED);
	/* handles opened before the removal starts */
	blocking.l = lock_of(b);
	timed.l = lock_of(b);
	try_l = lock_of(b);
	create.b = reopen.b = b;
	n = v_start(SCENE_TABLE, true);
	expect(n > 0, "V never stopped inside bakery_lock_unlink");
	printf("table: V stopped (PID %d in its namespace%s, %d here)\n", (int)sh->v_inner,
	       sh->pid_chosen ? ", chosen" : "", (int)sh->v_outer);

	call_start(&blocking);
	call_start(&timed);
	call_start(&create);
	call_start(&reopen);
	t = tk_ns();
	err = bakery_trylock(try_l);
	printf("table: trylock %s after %.3f s\n", bakery_errname(err), (double)(tk_ns() - t) / 1e9);
	expect(err == EBUSY, "trylock: %s, not EBUSY", bakery_strerror(err));
	expect(tk_ns() - t < (uint64_t)(SOON_S * 1e9), "the trylock waited");

	expect(call_end(&create) >= 0 && create.rc == EAGAIN,
	       "bakery_lock_open of a new lock: %s, not EAGAIN", bakery_strerror(create.rc));
	printf("table: lock_open(new) %s after %.3f s\n", bakery_errname(create.rc),
	       (double)(create.t1 - create.t0) / 1e9);
	expect(call_end(&reopen) >= 0 && reopen.rc == EAGAIN,
	       "bakery_lock_open of the lock being removed: %s, not EAGAIN",
	       bakery_strerror(reopen.rc));
	call_end(&timed);
	printf("table: timed lock %s after %.3f s\n", bakery_errname(timed.rc),
	       (double)(timed.t1 - timed.t0) / 1e9);
	expect(timed.rc == ETIMEDOUT, "timed lock: %s, not ETIMEDOUT", bakery_strerror(timed.rc));
	expect(timed.t1 - timed.t0 >= (uint64_t)((TIMED_S - 0.01) * 1e9), "timed lock left early");
	while (tk_ns() - blocking.t0 < (uint64_t)(WATCH_S * 1e9))
		tk_sleep_ms(10);
	expect(!CMM_LOAD_SHARED(blocking.done), "blocking lock gave up after %.3f s: %s",
	       (double)(blocking.t1 - blocking.t0) / 1e9, bakery_strerror(blocking.rc));
	printf("table: blocking lock still waiting after %.1f s\n", WATCH_S);

	kill(sh->v_outer, SIGCONT);
	call_end(&blocking);
	expect(blocking.rc == BAKERY_EREMOVED, "blocking lock after the removal: %s",
	       bakery_strerror(blocking.rc));
	expect(v_gone(n) && sh->v_rc == 0, "V's unlink: %s", bakery_strerror(sh->v_rc));
	expect(do_open(&create) == 0, "the new lock does not open after the removal");
	printf("table: continued: blocking lock %s, V's unlink %s, new lock opens\n",
	       bakery_errname(blocking.rc), bakery_errname(sh->v_rc));
	bakery_lock_close(blocking.l);
	bakery_lock_close(timed.l);
	bakery_lock_close(try_l);
	bakery_close(b);
	bakery_unlink(sh->region);
}

/* A thread that holds another lock ("M") until told: its slot is busy. */
struct busy_holder {
	pthread_t thread;
	bakery_t *b;
	struct tk_gate in, out;
	int rc;
};

static void *busy_holder_run(void *arg)
{
	struct busy_holder *h = arg;
	bakery_lock_t *l;

	h->rc = bakery_lock_open(h->b, "M", BAKERY_ALGO_DEFAULT, &l);
	if (!h->rc)
		h->rc = bakery_lock(l);
	tk_gate_open(&h->in);
	if (h->rc)
		return NULL;
	tk_gate_wait(&h->out, CRASH_CHILD_LIMIT);
	bakery_unlock(l);
	bakery_lock_close(l);
	return NULL;
}

/* O: one thread, whose slot V revokes: it locks once and goes idle, then
 * (at `go`) makes a timed lock and a blocking one, each timed. */
struct owner {
	pthread_t thread;
	struct call once, timed, blocking;
	struct tk_gate idle, go;
};

static void *owner_run(void *arg)
{
	struct owner *o = arg;

	call_run(&o->once);
	tk_gate_open(&o->idle);
	tk_gate_wait(&o->go, CRASH_CHILD_LIMIT);
	call_run(&o->timed);
	call_run(&o->blocking);
	return NULL;
}

static void scene_revoker(void)
{
	bakery_t *b;
	struct busy_holder f;
	struct owner o;
	pid_t n;

	tk_name(sh->region, sizeof(sh->region), "pidnsrevoke");
	if (crash_create(sh->region, 2, &b))
		exit(TK_SETUP_FAILED);
	memset(&o, 0, sizeof(o));
	o.once.fn = o.blocking.fn = do_lock;
	o.timed.fn = do_timedlock;
	o.once.l = o.timed.l = o.blocking.l = lock_of(b);
	tk_gate_init(&o.idle);
	tk_gate_init(&o.go);
	memset(&f, 0, sizeof(f));
	f.b = b;
	tk_gate_init(&f.in);
	tk_gate_init(&f.out);
	/* O takes slot 0 and goes idle; F takes slot 1 and stays busy */
	if (pthread_create(&o.thread, NULL, owner_run, &o) || !tk_gate_wait(&o.idle, DONE_S) ||
	    pthread_create(&f.thread, NULL, busy_holder_run, &f) || !tk_gate_wait(&f.in, DONE_S)) {
		fprintf(stderr, "revoker: setup failed\n");
		exit(TK_SETUP_FAILED);
	}
	expect(o.once.rc == 0 && f.rc == 0, "setup: O %s, F %s", bakery_strerror(o.once.rc),
	       bakery_strerror(f.rc));
	n = v_start(SCENE_REVOKER, true);
	expect(n > 0, "V never stopped in the middle of revoking O's slot");
	printf("revoker: V stopped (PID %d in its namespace%s, %d here)\n", (int)sh->v_inner,
	       sh->pid_chosen ? ", chosen" : "", (int)sh->v_outer);

	tk_gate_open(&o.go);
	expect(tk_wait_until(call_done, &o.timed, DONE_S), "O's timed lock did not end");
	printf("revoker: O's timed lock %s after %.3f s\n", bakery_errname(o.timed.rc),
	       (double)(o.timed.t1 - o.timed.t0) / 1e9);
	expect(o.timed.rc == ETIMEDOUT, "O's timed lock: %s, not ETIMEDOUT",
	       bakery_strerror(o.timed.rc));
	expect(o.timed.t1 - o.timed.t0 >= (uint64_t)((TIMED_S - 0.01) * 1e9),
	       "O's timed lock left early");
	tk_sleep_ms(WATCH_S * 1e3);
	expect(!CMM_LOAD_SHARED(o.blocking.done), "O's blocking lock gave up after %.3f s: %s",
	       (double)(o.blocking.t1 - o.blocking.t0) / 1e9, bakery_strerror(o.blocking.rc));
	printf("revoker: O's blocking lock still waiting after %.1f s\n", WATCH_S);

	kill(sh->v_outer, SIGCONT);
	expect(tk_wait_until(call_done, &o.blocking, DONE_S), "O's blocking lock did not end");
	pthread_join(o.thread, NULL);
	expect(o.blocking.rc == 0, "O's blocking lock: %s", bakery_strerror(o.blocking.rc));
	expect(v_gone(n) && sh->v_rc == 0, "V: %s", bakery_strerror(sh->v_rc));
	printf("revoker: continued: O's lock %s, V's lock %s\n", bakery_errname(o.blocking.rc),
	       bakery_errname(sh->v_rc));
	tk_gate_open(&f.out);
	pthread_join(f.thread, NULL);
	bakery_lock_close(o.once.l);
	bakery_close(b);
	bakery_unlink(sh->region);
}

/* --------------------------------------------------------------- probe -- */

static int probe(void)
{
	pid_t n = v_start(SCENE_PROBE, false);
	int st = tk_reap(n, 20);

	if (st == NS_UNAVAILABLE)
		printf("SKIP: no PID namespace here (as root: unshare(CLONE_NEWPID); otherwise a "
		       "user + PID namespace): %s\n", strerror(sh->ns_errno));
	else if (st != 0)
		printf("SKIP: the namespace probe ended with %d\n", st);
	return st;
}

int main(void)
{
	sh = tk_shared(sizeof(*sh));
	if (probe())
		return SKIP;
	scene_table();
	if (!failed)
		scene_revoker();
	if (!failed && (sh->occ.violations || sh->occ.entries != sh->occ.counter))
		fail(__LINE__, "mutual exclusion broken: %llu overlaps",
		     (unsigned long long)sh->occ.violations);
	return failed ? 1 : 0;
}
