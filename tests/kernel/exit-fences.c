/* SPDX-License-Identifier: MIT */
/*
 * exit-fences.c - an exit clears its ticket without a barrier only in a
 * lock where nobody has slept yet, and only while every process of the
 * region can make the expedited barrier that a sleeping waiter makes
 * instead (lib/exitfence.h).
 *
 *   1. Registered processes only: an uncontended lock's exits skip their
 *      barrier (its lock_fences 0, the region's exit_fences 0); a waiter
 *      that sleeps in a lock marks it (lock_fences SET) and its exits
 *      fence from then on; without sleepers, our exits age the mark
 *      (STALE within EXIT_AGE_PASSAGES passages, 0 within twice as many,
 *      and the exits skip their barrier again), a waiter that sleeps in a
 *      STALE lock puts SET back without the setter's steps, and the next
 *      sleeper marks a lock anew; two registered processes contend on
 *      every algorithm, their waiters sleeping (every 32nd passage holds
 *      the lock for a millisecond) and the marks aging every 4 passages,
 *      exclusion checked by the occupancy objects, not by the lock.
 *   2. A waiter killed between its mark's two steps (crash point
 *      exit-fence-setting) leaves the lock at SETTING; the next waiter
 *      still sleeps, is woken and gets in.
 *   3. A process that is refused membarrier (run under seccomp-run, as a
 *      container's profile refuses it) joins: at its open it sets
 *      exit_fences, its own exits fence, and from then on so does every
 *      exit of the region; the two contend again, exclusion checked.
 * Skips (77) where the expedited barrier is unavailable here (the library
 * then always fences), on other architectures than x86 (where the release
 * store is a full barrier and exits always fence), and where seccomp-run
 * cannot install its filter.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exitfence.h"
#include "handle.h"
#include "../common/occupancy.h"
#include "../common/tk.h"

#define PASSAGES 400            /* per process and algorithm */
#define HOLD_EVERY 32           /* every 32nd passage holds the lock ... */
#define HOLD_MS 1.0             /* ... this long: the other side sleeps */
#define DONE_S 120.0
#define SKIP 77

static const enum bakery_algo algos[] = {
	BAKERY_ALGO_LAMPORT, BAKERY_ALGO_BOULANGERIE, BAKERY_ALGO_BLACK_WHITE,
	BAKERY_ALGO_JAYANTI,
};
#define NALGOS (sizeof(algos) / sizeof(algos[0]))

static struct bakery *handle(bakery_t *b)
{
	return (struct bakery *)b;
}

/* The occupancy object of each algorithm's lock (the processes do not
 * move from one lock to the next together): O[a]. */
static bool occupancies_map(const char *region, struct occupancy **o)
{
	for (unsigned a = 0; a < NALGOS; a++) {
		char name[TK_NAME_SIZE + 16];

		snprintf(name, sizeof(name), "%s-%u", region, a);
		if (!(o[a] = occupancy_map(name)))
			return false;
	}
	return true;
}

static void occupancies_unlink(const char *region)
{
	for (unsigned a = 0; a < NALGOS; a++) {
		char name[TK_NAME_SIZE + 16];

		snprintf(name, sizeof(name), "%s-%u", region, a);
		occupancy_unlink(name);
	}
}

/* The marks (lock_fences) our unlocks left, one bit per value: what the
 * contention went through, for the report (timing decides it). */
static unsigned marks_seen;

/* Lock L's mark (lock_fences). */
static uint32_t mark_of(bakery_lock_t *l)
{
	return CMM_LOAD_SHARED(((struct bakery_lock *)l)->entry->lock_fences);
}

/* PASSAGES lock / occupancy / unlock on each algorithm's lock; 0 or the
 * first error. */
static int contend(bakery_t *b, struct occupancy **o, uint64_t id)
{
	for (unsigned a = 0; a < NALGOS; a++) {
		char name[32];
		bakery_lock_t *l;
		int err;

		snprintf(name, sizeof(name), "L%u", a);
		if ((err = bakery_lock_open(b, name, algos[a], &l)))
			return err;
		for (unsigned i = 0; i < PASSAGES; i++) {
			if ((err = bakery_lock(l)))
				return err;
			occupancy_in(o[a], id, OCCUPANCY_PAUSE);
			if (i % HOLD_EVERY == 0)
				tk_sleep_ms(HOLD_MS);
			occupancy_out(o[a], id);
			if ((err = bakery_unlock(l)))
				return err;
			marks_seen |= 1u << (mark_of(l) & 7);
		}
		bakery_lock_close(l);
	}
	return 0;
}

/* ------------------------------------------------- the refused joiner -- */

static int joiner(const char *region)
{
	struct occupancy *o[NALGOS];
	bakery_t *b;
	int err;

	if (!occupancies_map(region, o) || bakery_open(region, 0, NULL, &b))
		return 2;
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0) {
		fprintf(stderr, "FAIL: the joiner was not refused membarrier\n");
		return 3;
	}
	if (handle(b)->exits_unfenced || !CMM_LOAD_SHARED(handle(b)->hdr->exit_fences)) {
		fprintf(stderr, "FAIL: refused membarrier, the joiner's exits are unfenced "
		        "(exits_unfenced %d, exit_fences %u)\n", handle(b)->exits_unfenced,
		        CMM_LOAD_SHARED(handle(b)->hdr->exit_fences));
		return 4;
	}
	uatomic_inc(&o[0]->arrived);
	if ((err = contend(b, o, 2))) {
		fprintf(stderr, "FAIL: the joiner's passages: %s\n", bakery_strerror(err));
		return 5;
	}
	return bakery_close(b) ? 6 : 0;
}

/* -------------------------------------------- the registered processes -- */

struct peer {
	char region[TK_NAME_SIZE];
};

static int peer_run(void *arg)
{
	struct peer *p = arg;
	struct occupancy *o[NALGOS];
	bakery_t *b;

	if (!occupancies_map(p->region, o) || bakery_open(p->region, 0, NULL, &b))
		return 2;
	if (!handle(b)->exits_unfenced)
		return 3;
	return contend(b, o, 3) ? 4 : bakery_close(b) ? 5 : 0;
}

static int failed;

#define expect(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL (line %d): ", __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failed = 1; } } while (0)

static void exclusion_held(struct occupancy **o, uint64_t entries, const char *when)
{
	for (unsigned a = 0; a < NALGOS; a++) {
		expect(o[a]->violations == 0, "%s, %s: %llu overlaps", when,
		       bakery_algo_name(algos[a]), (unsigned long long)o[a]->violations);
		expect(o[a]->counter == entries && o[a]->entries == entries,
		       "%s, %s: counter %llu, entries %llu, want %llu", when,
		       bakery_algo_name(algos[a]), (unsigned long long)o[a]->counter,
		       (unsigned long long)o[a]->entries, (unsigned long long)entries);
	}
}

/* The joiner, under seccomp-run (built beside this program). */
static pid_t joiner_start(const char *region)
{
	const char *top = getenv("top_builddir");
	char run[4096], self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(run, sizeof(run), "%s/tests/kernel/seccomp-run", top ? top : ".");
	pid = fork();
	if (pid == 0) {
		execl(run, run, "membarrier", "EPERM", self, "--join", region, (char *)NULL);
		_exit(99);
	}
	return pid;
}

static bool arrived(void *arg)
{
	return uatomic_read(&((struct occupancy **)arg)[0]->arrived) > 0;
}

/* ------------------------------------------------- one lock's mark -- */

/* Lock NAME of B (the default algorithm), opened once and kept (this
 * process's handles only: children open their own). */
static struct bakery_lock *lock_of(bakery_t *b, const char *name)
{
	static struct { char name[8]; bakery_lock_t *l; } opened[4];
	unsigned i;

	for (i = 0; i < 4 && opened[i].l; i++)
		if (!strcmp(opened[i].name, name))
			return opened[i].l;
	if (i == 4 || bakery_lock_open(b, name, BAKERY_ALGO_DEFAULT, &opened[i].l)) {
		fprintf(stderr, "setup failed: lock %s\n", name);
		exit(TK_SETUP_FAILED);
	}
	snprintf(opened[i].name, sizeof(opened[i].name), "%s", name);
	return opened[i].l;
}

static uint32_t lock_fences(bakery_t *b, const char *name)
{
	return mark_of(lock_of(b, name));
}

/* Would an exit of lock NAME fence (exit_store's look after its store)? */
static bool exits_fence(bakery_t *b, const char *name)
{
	struct bakery_lock *l = lock_of(b, name);

	return exit_fence_wanted(l->b, l->entry);
}

/* An uncontended lock: its exits skip their barrier. */
static void uncontended_skips(bakery_t *b)
{
	for (int i = 0; i < 3; i++) {
		expect(!bakery_lock(lock_of(b, "U")) && !bakery_unlock(lock_of(b, "U")),
		       "lock U");
	}
	expect(lock_fences(b, "U") == 0, "nobody slept in U, yet its lock_fences is %u",
	       lock_fences(b, "U"));
	expect(!exits_fence(b, "U"), "an uncontended lock's exits fence");
}

struct taker {
	char region[TK_NAME_SIZE];
	const char *lock;
	const char *crash_at;      /* BAKERY_CRASH_AT, or NULL */
};

/* A taker of lock LOCK in PEER's region, dying at CRASH_AT (or NULL), in
 * memory shared with the children it is forked into. */
static struct taker *taker_new(const struct peer *peer, const char *lock, const char *crash_at)
{
	struct taker *t = tk_shared(sizeof(*t));

	snprintf(t->region, sizeof(t->region), "%s", peer->region);
	t->lock = lock;
	t->crash_at = crash_at;
	return t;
}

/* Take and give back lock T->lock of the region (a blocking lock). */
static int taker_run(void *arg)
{
	struct taker *t = arg;
	bakery_lock_t *l;
	bakery_t *b;

	if (t->crash_at && setenv("BAKERY_CRASH_AT", t->crash_at, 1))
		return 2;
	if (bakery_open(t->region, 0, NULL, &b) ||
	    bakery_lock_open(b, t->lock, BAKERY_ALGO_DEFAULT, &l))
		return 3;
	if (bakery_lock(l) || bakery_unlock(l))
		return 4;
	return bakery_lock_close(l) || bakery_close(b) ? 5 : 0;
}

/* More than ABOVE are counted asleep on our line of lock NAME (we hold
 * it; a waiter killed asleep stays counted). */
struct counted { bakery_t *b; const char *name; uint32_t above; };

static uint32_t sleepers(bakery_t *b, const char *name)
{
	return CMM_LOAD_SHARED(lock_reg(lock_of(b, name), (unsigned)tk_self_slot(b))->waiters);
}

static bool sleeper_counted(void *arg)
{
	struct counted *c = arg;

	return sleepers(c->b, c->name) > c->above;
}

static bool lock_marked(void *arg)
{
	struct counted *c = arg;

	return lock_fences(c->b, c->name) == LOCK_FENCES_SET;
}

/* While we hold lock S, a taker sleeps in it: it marks S (SET), and gets
 * in once we unlock; S's exits fence from then on. */
static void sleeper_marks(bakery_t *b, struct peer *peer)
{
	struct taker *t = taker_new(peer, "S", NULL);
	struct counted c = { b, "S", 0 };
	pid_t pid;
	int st;

	expect(!bakery_lock(lock_of(b, "S")), "lock S");
	pid = tk_fork(taker_run, t);
	expect(tk_wait_until(lock_marked, &c, DONE_S), "a waiter slept in S (counted: %d), "
	       "yet S is not marked (lock_fences %u)", sleeper_counted(&c), lock_fences(b, "S"));
	expect(!bakery_unlock(lock_of(b, "S")), "unlock S");
	expect((st = tk_reap(pid, DONE_S)) == 0, "the taker of S: %d", st);
	expect(exits_fence(b, "S"), "S had a sleeper, yet its exits skip "
	       "their barrier");
}

/* Passages of ours in lock NAME until its mark is WANT, at most LIMIT:
 * how many it took (LIMIT + 1: it never was). */
static unsigned passages_until(bakery_t *b, const char *name, uint32_t want, unsigned limit)
{
	unsigned n = 0;

	while (lock_fences(b, name) != want && n <= limit) {
		if (bakery_lock(lock_of(b, name)) || bakery_unlock(lock_of(b, name)))
			return limit + 1;
		n++;
	}
	return n;
}

/* S is marked (sleeper_marks): our fenced exits age it to STALE within
 * EXIT_AGE_PASSAGES passages; a waiter that sleeps then puts SET back
 * without the setter's steps (it would die at exit-fence-setting); with
 * nobody sleeping the mark goes to STALE and 0 within twice as many, and
 * S's exits skip their barrier again; the next sleeper marks it anew. */
static void mark_wears_off(bakery_t *b, struct peer *peer)
{
	struct taker *t = taker_new(peer, "S", "exit-fence-setting");
	struct counted c = { b, "S", 0 };
	unsigned n;
	pid_t pid;
	int st;

	expect(lock_fences(b, "S") == LOCK_FENCES_SET, "S not marked: %u", lock_fences(b, "S"));
	n = passages_until(b, "S", LOCK_FENCES_STALE, EXIT_AGE_PASSAGES);
	expect(n <= EXIT_AGE_PASSAGES, "S still %u after %u passages without a sleeper",
	       lock_fences(b, "S"), EXIT_AGE_PASSAGES);
	expect(exits_fence(b, "S"), "S is STALE, yet its exits skip their barrier");
	expect(!bakery_lock(lock_of(b, "S")), "lock S");
	pid = tk_fork(taker_run, t);
	expect(tk_wait_until(lock_marked, &c, DONE_S), "a waiter slept in STALE S, yet S is "
	       "not SET again (lock_fences %u)", lock_fences(b, "S"));
	expect(!bakery_unlock(lock_of(b, "S")), "unlock S");
	expect((st = tk_reap(pid, DONE_S)) == 0, "the waiter in STALE S took the setter's "
	       "steps or failed: %d", st);
	n = passages_until(b, "S", 0, 2 * EXIT_AGE_PASSAGES);
	expect(n <= 2 * EXIT_AGE_PASSAGES, "S still %u after %u passages without a sleeper",
	       lock_fences(b, "S"), 2 * EXIT_AGE_PASSAGES);
	expect(!exits_fence(b, "S"), "S's mark wore off, yet its exits fence");
	sleeper_marks(b, peer);
}

/* A waiter killed after it set SETTING, before its membarrier: S stays
 * SETTING, and the next waiter sleeps (making the membarrier itself), is
 * woken by our unlock and gets in. */
static void setter_killed(bakery_t *b, struct peer *peer)
{
	struct taker *t = taker_new(peer, "C", "exit-fence-setting");
	struct counted c = { b, "C", 0 };
	pid_t pid;
	int st;

	expect(!bakery_lock(lock_of(b, "C")), "lock C");
	pid = tk_fork(taker_run, t);
	expect((st = tk_reap(pid, DONE_S)) == 128 + SIGKILL, "the setter did not die at "
	       "exit-fence-setting: %d", st);
	expect(lock_fences(b, "C") == LOCK_FENCES_SETTING, "a setter died, yet lock_fences "
	       "is %u", lock_fences(b, "C"));
	t->crash_at = NULL;
	c.above = sleepers(b, "C");
	pid = tk_fork(taker_run, t);
	expect(tk_wait_until(sleeper_counted, &c, DONE_S), "no waiter came to sleep in C");
	tk_sleep_ms(20);
	expect(!bakery_unlock(lock_of(b, "C")), "unlock C");
	expect((st = tk_reap(pid, DONE_S)) == 0, "the waiter of C after the setter's death: %d",
	       st);
	expect(lock_fences(b, "C") == LOCK_FENCES_SETTING, "lock_fences of C moved on: %u",
	       lock_fences(b, "C"));
}

int main(int argc, char **argv)
{
	struct peer *peer;
	struct occupancy *o[NALGOS];
	bakery_t *b;
	pid_t pid;
	int st;

	if (argc == 3 && !strcmp(argv[1], "--join"))
		return joiner(argv[2]);
#if !defined(__x86_64__) && !defined(__i386__)
	printf("SKIP: exits fence on every architecture but x86\n");
	return SKIP;
#endif
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) != 0) {
		printf("SKIP: no expedited membarrier here (%s): every exit fences\n",
		       strerror(errno));
		return SKIP;
	}
	tk_run_begin();
	peer = tk_shared(sizeof(*peer));
	tk_name(peer->region, sizeof(peer->region), "exitfence");
	if (bakery_open(peer->region, BAKERY_CREATE, NULL, &b) || !occupancies_map(peer->region, o)) {
		fprintf(stderr, "setup failed\n");
		return TK_SETUP_FAILED;
	}

	/* 1: registered processes only */
	expect(handle(b)->exits_unfenced, "registered, yet exits_unfenced is false");
	expect(!CMM_LOAD_SHARED(handle(b)->hdr->exit_fences), "exit_fences set by a registered "
	       "process");
	uncontended_skips(b);
	sleeper_marks(b, peer);
	mark_wears_off(b, peer);
	/* the contention below ages the marks every 4 passages of a slot
	 * (the peer reads the variable at its open): the locks go from SET
	 * to 0 and are marked anew many times while the two contend */
	setenv("BAKERY_TEST_EXIT_AGE", "4", 1);
	handle(b)->exit_age_mask = 3;
	pid = tk_fork(peer_run, peer);
	expect(contend(b, o, 1) == 0, "the first process's passages");
	expect((st = tk_reap(pid, DONE_S)) == 0, "the registered peer: %d", st);
	exclusion_held(o, 2u * PASSAGES, "two registered processes");
	expect(!CMM_LOAD_SHARED(handle(b)->hdr->exit_fences), "a registered peer set exit_fences");

	/* 2: a setter killed between SETTING and SET */
	setter_killed(b, peer);

	/* 3: a process refused membarrier joins */
	pid = joiner_start(peer->region);
	expect(pid > 0, "fork: %s", strerror(errno));
	if (!tk_wait_until(arrived, o, DONE_S)) {
		st = tk_reap(pid, DONE_S);
		if (st == SKIP) {
			printf("SKIP: seccomp-run cannot refuse membarrier here\n");
			bakery_close(b);
			bakery_unlink(peer->region);
			occupancies_unlink(peer->region);
			return SKIP;
		}
		fprintf(stderr, "FAIL: the joiner never arrived (status %d)\n", st);
		failed = 1;
	} else {
		expect(exits_fence(b, "U"), "a refused process joined, yet an "
		       "uncontended lock's exits skip their barrier");
		expect(contend(b, o, 1) == 0, "the first process's passages beside the joiner");
		expect((st = tk_reap(pid, DONE_S)) == 0, "the joiner: %d", st);
		exclusion_held(o, 4u * PASSAGES, "beside the refused joiner");
		expect(CMM_LOAD_SHARED(handle(b)->hdr->exit_fences), "exit_fences was cleared");
	}
	bakery_close(b);
	bakery_unlink(peer->region);
	occupancies_unlink(peer->region);
	tk_run_end();
	if (!failed)
		printf("PASS: exits unfenced in a lock nobody slept in, fenced once a waiter "
		       "slept or a refused process joined, unfenced again once the mark wore "
		       "off; exclusion held (marks seen while contending: 0 %s, SET %s, STALE "
		       "%s)\n", marks_seen & 1 ? "yes" : "no",
		       marks_seen & (1u << LOCK_FENCES_SET) ? "yes" : "no",
		       marks_seen & (1u << LOCK_FENCES_STALE) ? "yes" : "no");
	return failed;
}
