/* SPDX-License-Identifier: MIT */
/*
 * crash-pidns.c - liveness does not trust PIDs: PID reuse and PID
 * namespaces, for every algorithm.
 *
 * Participants run inside a new user + PID namespace (as children of its
 * init), where /proc/sys/kernel/ns_last_pid chooses the next PID, so that a
 * PID collision or a reused PID costs nothing to arrange:
 *
 *   inside-dies:   V, inside, holds the lock with the very PID (and TID) that
 *                  W, outside, has in its own namespace.  W queues and must
 *                  NOT get in while V lives; V is SIGKILLed; W must recover
 *                  and get in (EOWNERDEAD) at once.
 *   outside-dies:  the reverse: H outside holds, W inside (same PID as H)
 *                  waits; H is SIGKILLed; W recovers.
 *   reused-pid:    V, inside, holds and is SIGKILLed and reaped; X, a live
 *                  participant, then gets V's PID (and TID).  The region shows
 *                  two slots with that PID, one dead, one alive.  W, arriving
 *                  from outside, must recover the dead slot at once, and X's
 *                  slot must stay untouched.
 *   reused-tid-recovers: the same, but X itself (whose TID equals the dead
 *                  owner's in the robust mutex word) takes the lock: it must
 *                  be told EOWNERDEAD, not taken for the owner.
 *
 * Mutual exclusion is checked by the occupancy object throughout.  Prints
 * the recovery latencies.  Exit status 77 (skip) when user or PID
 * namespaces, or ns_last_pid, are not available here.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu/system.h>

#include "crashkit.h"

#define SKIP 77
#define WAIT 10.0
#define RECOVERY_BOUND_NS 1000000000ull    /* generous: the figure is printed */
#define SLOTS 8

/* Exit statuses of the namespace's init (besides 0 and failures). */
#define NS_UNAVAILABLE 40
#define NS_NO_LAST_PID 41
#define NS_PID_MISSED  42

struct inside {
	struct crash_part part;
	pid_t want_pid;            /* the namespace PID it must get (0: any) */
	pid_t ns_pid, outer_pid;   /* the ones it got                        */
	volatile int ready;        /* reuse-pid: X holds its own lock        */
};

struct shared {
	struct occupancy occ;
	char region[TK_NAME_SIZE];
	enum bakery_algo algo;
	int ns_errno;
	struct inside v, x;        /* run inside the namespace              */
	struct crash_part w, h;       /* run outside                           */
	int (*script)(struct shared *);   /* what the namespace's init does */
};

static struct shared *sh;
static int failed;

static void fail(int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL (line %d) %s: ", line, bakery_algo_name(sh->algo));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	failed = 1;
}

#define expect(cond, ...) do { if (!(cond)) { fail(__LINE__, __VA_ARGS__); return; } } while (0)

/* ------------------------------------------------------------ namespace -- */

/* Inside the namespace: make PID the next one forked. */
static int next_pid(pid_t pid)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", (int)pid - 1);
	return crash_write_file("/proc/sys/kernel/ns_last_pid", buf);
}

/* The init of the namespace (PID 1): runs the script, bounded in time. */
static int ns_init(void *arg)
{
	struct shared *s = arg;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	return s->script(s);
}

/* Child N: unshare, map ids, fork the init; exits with the init's status. */
static int ns_spawn(void *arg)
{
	struct shared *s = arg;
	uid_t uid = getuid();
	gid_t gid = getgid();
	int st;

	if (unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0) {
		s->ns_errno = errno;
		return NS_UNAVAILABLE;
	}
	if ((s->ns_errno = crash_map_ids(uid, gid)))
		return NS_UNAVAILABLE;
	st = tk_reap(crash_fork(ns_init, s, NULL), CRASH_CHILD_LIMIT - 5);
	return st < 0 ? 99 : st;
}

/* Inside: a participant that notes its PIDs first (/proc is the outer
 * namespace's, so /proc/self names the outer PID). */
static int inside_run(void *arg)
{
	struct inside *in = arg;
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	in->ns_pid = getpid();
	in->outer_pid = n > 0 ? (pid_t)strtol((buf[n] = 0, buf), NULL, 10) : 0;
	return crash_part_run(&in->part);
}

/* Inside: start IN's participant with the namespace PID it wants. */
static int inside_start(struct inside *in, pid_t *pid)
{
	if (in->want_pid && next_pid(in->want_pid))
		return NS_NO_LAST_PID;
	*pid = crash_fork(inside_run, in, NULL);
	if (*pid <= 0)
		return 99;
	if (in->want_pid && *pid != in->want_pid)
		return NS_PID_MISSED;
	return 0;
}

/* ---------------------------------------------------------- participants -- */

static void part_init(struct crash_part *p, unsigned serial, int hold, int wait_go)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->region, sizeof(p->region), "%s", sh->region);
	p->algo = sh->algo;
	p->mode = CRASH_MODE_LOCK;
	p->hold = hold;
	p->wait_go = wait_go;
	p->serial = serial;
	p->occ = &sh->occ;
}

static bool waiters_at_least(bakery_t *b, bakery_lock_t *l, unsigned n)
{
	uint64_t end = tk_ns() + (uint64_t)(WAIT * 1e9);

	while (tk_ns() < end) {
		if (crash_lock_info(b, l).waiters >= n)
			return true;
		usleep(100);
	}
	return false;
}

static struct bakery_slot_info slot(bakery_t *b, int index)
{
	struct bakery_slot_info si = { .state = BAKERY_SLOT_ACTIVE, .alive = -2 };

	if (index >= 0)
		bakery_slot_info(b, (unsigned)index, &si);
	return si;
}

/* ------------------------------------------------------------- scripts -- */

/* The inside participant V; done when it has been killed. */
static int script_v(struct shared *s)
{
	pid_t v;
	int err = inside_start(&s->v, &v);

	if (err)
		return err;
	return tk_reap(v, WAIT * 2) == CRASH_SIGKILLED ? 0 : 1;
}

/* V, killed from outside and reaped; then X with V's PID. */
static int script_reuse(struct shared *s)
{
	pid_t v, x;
	int err = inside_start(&s->v, &v);

	if (err)
		return err;
	if (tk_reap(v, WAIT * 2) != CRASH_SIGKILLED)
		return 1;
	s->x.want_pid = v;
	if ((err = inside_start(&s->x, &x)))
		return err;
	return tk_reap(x, WAIT * 2);
}

/* X of reused-pid: a live participant of another lock of the region. */
static int x_hold_other(void *arg)
{
	struct inside *in = arg;
	bakery_t *b;
	bakery_lock_t *l;

	in->ns_pid = getpid();
	if (bakery_open(in->part.region, BAKERY_NORECOVER, NULL, &b) || bakery_lock_open(b, "other", in->part.algo, &l))
		return 1;
	if (bakery_lock(l))
		return 2;
	CMM_STORE_SHARED(in->ready, 1);
	if (!tk_wait_flag(&in->part.release, 1, WAIT * 2))
		return 3;
	return bakery_unlock(l) || bakery_lock_close(l) || bakery_close(b) ? 4 : 0;
}

static int script_reuse_other(struct shared *s)
{
	pid_t v, x;
	int err = inside_start(&s->v, &v);

	if (err)
		return err;
	if (tk_reap(v, WAIT * 2) != CRASH_SIGKILLED)
		return 1;
	if (next_pid(v))
		return NS_NO_LAST_PID;
	x = crash_fork(x_hold_other, &s->x, NULL);
	if (x != v)
		return NS_PID_MISSED;
	return tk_reap(x, WAIT * 2);
}

/* W inside, with H's PID. */
static int script_w(struct shared *s)
{
	pid_t w;
	int err = inside_start(&s->x, &w);

	if (err)
		return err;
	return tk_reap(w, WAIT * 2);
}

/* ----------------------------------------------------------- scenarios -- */

static pid_t ns_run(int (*script)(struct shared *))
{
	sh->script = script;
	return crash_fork(ns_spawn, sh, NULL);
}

static void expect_ns_exit(pid_t n)
{
	int st = tk_reap(n, WAIT * 3);

	if (st != 0)
		fail(__LINE__, "the namespace's init ended with %d", st);
}

static void report(const char *what, uint64_t ns)
{
	printf("%-12s %-44s %9.1f us\n", bakery_algo_name(sh->algo), what, (double)ns / 1e3);
}

/* V inside holds with W's PID; W outside waits; V is killed. */
static void inside_dies(bakery_t *b, bakery_lock_t *l)
{
	pid_t w, n;
	uint64_t t_kill;

	part_init(&sh->w, 1, 0, 1);
	w = crash_fork(crash_part_run, &sh->w, NULL);
	part_init(&sh->v.part, 2, 1, 0);
	sh->v.want_pid = w;
	n = ns_run(script_v);
	expect(tk_wait_flag(&sh->v.part.holding, 1, WAIT), "V never got the lock");
	expect(sh->v.ns_pid == w, "V got PID %d inside, not %d", sh->v.ns_pid, w);
	CMM_STORE_SHARED(sh->w.go, 1);
	expect(waiters_at_least(b, l, 1), "W never queued");
	tk_sleep_ms(50);
	expect(!sh->w.holding, "W got in while V, with its own PID, was alive");
	t_kill = tk_ns();
	occupancy_doom(&sh->occ, sh->v.part.serial);
	kill(sh->v.outer_pid, SIGKILL);
	expect(tk_reap(w, WAIT) == 0, "W did not get through");
	expect(sh->w.rc == EOWNERDEAD, "W got %s", bakery_strerror(sh->w.rc));
	expect(sh->w.t_acq - t_kill < RECOVERY_BOUND_NS, "recovery took %.1f ms",
	       (double)(sh->w.t_acq - t_kill) / 1e6);
	report("inside holder killed, outside waiter", sh->w.t_acq - t_kill);
	expect_ns_exit(n);
	expect(slot(b, sh->v.part.slot).state == BAKERY_SLOT_FREE, "V's slot not freed");
}

/* H outside holds; W inside, with H's PID, waits; H is killed. */
static void outside_dies(bakery_t *b, bakery_lock_t *l)
{
	pid_t h, n;
	uint64_t t_kill;

	part_init(&sh->h, 3, 1, 0);
	h = crash_fork(crash_part_run, &sh->h, NULL);
	expect(tk_wait_flag(&sh->h.holding, 1, WAIT), "H never got the lock");
	part_init(&sh->x.part, 4, 0, 0);
	sh->x.want_pid = h;
	n = ns_run(script_w);
	expect(waiters_at_least(b, l, 1), "W never queued");
	tk_sleep_ms(50);
	expect(!sh->x.part.holding, "W got in while H, with its own PID, was alive");
	expect(sh->x.ns_pid == h, "W got PID %d inside, not %d", sh->x.ns_pid, h);
	t_kill = tk_ns();
	occupancy_doom(&sh->occ, sh->h.serial);
	kill(h, SIGKILL);
	expect(tk_reap(h, WAIT) == CRASH_SIGKILLED, "H did not die");
	expect_ns_exit(n);
	expect(sh->x.part.rc == EOWNERDEAD, "W got %s", bakery_strerror(sh->x.part.rc));
	expect(sh->x.part.t_acq - t_kill < RECOVERY_BOUND_NS, "recovery took %.1f ms",
	       (double)(sh->x.part.t_acq - t_kill) / 1e6);
	report("outside holder killed, inside waiter", sh->x.part.t_acq - t_kill);
	expect(slot(b, sh->h.slot).state == BAKERY_SLOT_FREE, "H's slot not freed");
}

/* V inside holds, dies, is reaped; X gets its PID; W arrives from outside. */
static void reused_pid(bakery_t *b, bakery_lock_t *l)
{
	struct bakery_slot_info vs, xs;
	pid_t n, w;
	int x_slot;

	part_init(&sh->v.part, 5, 1, 0);
	sh->v.want_pid = 0;
	part_init(&sh->x.part, 6, 1, 0);
	sh->x.ready = 0;
	n = ns_run(script_reuse_other);
	expect(tk_wait_flag(&sh->v.part.holding, 1, WAIT), "V never got the lock");
	occupancy_doom(&sh->occ, sh->v.part.serial);
	kill(sh->v.outer_pid, SIGKILL);
	expect(tk_wait_flag(&sh->x.ready, 1, WAIT), "X never started");
	expect(sh->x.ns_pid == sh->v.ns_pid, "X got PID %d, V had %d", sh->x.ns_pid, sh->v.ns_pid);
	/* two slots show the PID: V's dead one, X's live one */
	vs = slot(b, sh->v.part.slot);
	x_slot = -1;
	for (unsigned i = 0; i < SLOTS; i++) {
		struct bakery_slot_info si = slot(b, (int)i);
		if ((int)i != sh->v.part.slot && si.state == BAKERY_SLOT_ACTIVE && si.pid == sh->x.ns_pid)
			x_slot = (int)i;
	}
	xs = slot(b, x_slot);
	expect(vs.state == BAKERY_SLOT_ACTIVE && vs.alive == 0 && vs.pid == sh->v.ns_pid,
	       "V's slot: state %d alive %d pid %d", vs.state, vs.alive, vs.pid);
	expect(x_slot >= 0 && xs.alive == 1 && xs.tid == vs.tid,
	       "X's slot %d: alive %d tid %d (V's tid %d)", x_slot, xs.alive, xs.tid, vs.tid);

	part_init(&sh->w, 7, 0, 0);
	w = crash_fork(crash_part_run, &sh->w, NULL);
	expect(tk_reap(w, WAIT) == 0, "W did not get through");
	expect(sh->w.rc == EOWNERDEAD, "W got %s", bakery_strerror(sh->w.rc));
	report("PID reused, late arrival (call -> acquire)", sh->w.t_acq - sh->w.t_call);
	expect(sh->w.t_acq - sh->w.t_call < RECOVERY_BOUND_NS, "recovery took too long");
	expect(slot(b, sh->v.part.slot).state == BAKERY_SLOT_FREE, "V's slot not freed");
	xs = slot(b, x_slot);
	expect(xs.state == BAKERY_SLOT_ACTIVE && xs.alive == 1, "X's live slot was disturbed");
	CMM_STORE_SHARED(sh->x.part.release, 1);
	expect_ns_exit(n);
	(void)l;
}

/* The same, X (same TID as the dead owner) taking the lock itself. */
static void reused_tid_recovers(bakery_t *b, bakery_lock_t *l)
{
	pid_t n;

	part_init(&sh->v.part, 8, 1, 0);
	sh->v.want_pid = 0;
	part_init(&sh->x.part, 9, 0, 0);
	n = ns_run(script_reuse);
	expect(tk_wait_flag(&sh->v.part.holding, 1, WAIT), "V never got the lock");
	occupancy_doom(&sh->occ, sh->v.part.serial);
	kill(sh->v.outer_pid, SIGKILL);
	expect_ns_exit(n);
	expect(sh->x.ns_pid == sh->v.ns_pid, "X got PID %d, V had %d", sh->x.ns_pid, sh->v.ns_pid);
	expect(sh->x.part.rc == EOWNERDEAD, "X, with the dead owner's TID, got %s",
	       bakery_strerror(sh->x.part.rc));
	report("PID reused, same TID recovers (call -> acquire)",
	       sh->x.part.t_acq - sh->x.part.t_call);
	expect(slot(b, sh->v.part.slot).state == BAKERY_SLOT_FREE, "V's slot not freed");
	(void)l;
}

static void run_algo(enum bakery_algo algo)
{
	static void (*const scenarios[])(bakery_t *, bakery_lock_t *) = {
		inside_dies, outside_dies, reused_pid, reused_tid_recovers,
	};
	bakery_t *b;
	bakery_lock_t *l;
	int err;

	memset(sh, 0, sizeof(*sh));
	sh->algo = algo;
	tk_name(sh->region, TK_NAME_SIZE, "pidns");
	err = crash_create(sh->region, SLOTS, &b);
	if (!err)
		err = bakery_lock_open(b, CRASH_LOCK, algo, &l);
	if (err) {
		fprintf(stderr, "%s: %s\n", sh->region, bakery_strerror(err));
		exit(99);
	}
	for (unsigned i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]) && !failed; i++)
		scenarios[i](b, l);
	if (!failed && (sh->occ.violations || sh->occ.entries != sh->occ.counter))
		fail(__LINE__, "mutual exclusion broken: %llu overlaps",
		     (unsigned long long)sh->occ.violations);
	if (!failed && crash_slots_used(b) != 0)
		fail(__LINE__, "%u slots left in use", crash_slots_used(b));
	bakery_lock_close(l);
	bakery_close(b);
	bakery_unlink(sh->region);
}

/* --------------------------------------------------------------- probe -- */

/* Can we make a user + PID namespace and choose PIDs in it? */
static int probe_script(struct shared *s)
{
	pid_t pid;

	s->v.want_pid = 300;
	s->v.part.region[0] = 0;        /* the child fails at once: no region */
	return inside_start(&s->v, &pid) ? NS_NO_LAST_PID : (tk_reap(pid, WAIT), 0);
}

static int probe(void)
{
	int st;

	memset(sh, 0, sizeof(*sh));
	sh->script = probe_script;
	st = tk_reap(crash_fork(ns_spawn, sh, NULL), WAIT);
	if (st == NS_UNAVAILABLE)
		printf("SKIP: no user + PID namespace here: %s\n", strerror(sh->ns_errno));
	else if (st == NS_NO_LAST_PID || st == NS_PID_MISSED)
		printf("SKIP: cannot choose PIDs in a new PID namespace (ns_last_pid)\n");
	else if (st != 0)
		printf("SKIP: namespace probe ended with %d\n", st);
	return st;
}

int main(void)
{
	sh = tk_shared(sizeof(*sh));
	if (probe())
		return SKIP;
	printf("liveness across PID namespaces and PID reuse (kill -> acquire unless noted)\n");
	for (unsigned i = 0; i < CRASH_NALGOS && !failed; i++)
		run_algo(crash_algos[i]);
	return failed ? 1 : 0;
}
