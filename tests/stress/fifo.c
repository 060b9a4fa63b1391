/* SPDX-License-Identifier: MIT */
/*
 * fifo.c - black-box FIFO test of every algorithm, and proof that the same
 * test catches a lock that is not FIFO.
 *
 * A trial: the driver process takes the lock; then WAITERS processes are
 * forked one after another, each recording its arrival in a shared sequence
 * and calling lock().  The next one starts only once the previous one has
 * arrived and SPACING_MS more have passed: far longer than a doorway (a few
 * microseconds), so each waiter has finished its doorway before the next
 * begins.  The driver then unlocks; each waiter, holding the lock, appends
 * itself to a shared entry sequence.  A FIFO lock must admit them in arrival
 * order; fifo_in_order() compares the two sequences.
 *
 * fifo_trial() and fifo_in_order() are the same code for every mechanism;
 * a mechanism is only an adapter (open/lock/unlock/close).  Run against:
 *   - each libbakery algorithm: every trial must be in order;
 *   - a LIFO lock, which hands the lock to the latest waiter: every trial
 *     must be out of order (the teeth of the test, shown without relying
 *     on the scheduler to be unfair);
 *   - a test-and-set spinlock that yields while it waits, a robust
 *     process-shared pthread mutex and flock(2), surveyed only (--survey):
 *     whether they admit waiters in order depends on the scheduler (see the
 *     note at mech_pthread).
 * For the bakery locks the driver also waits, through the public
 * introspection call, until the waiter is seen WAITING (past its doorway)
 * before the spacing sleep, so that a loaded machine cannot make a trial
 * unfair by delaying a doorway by more than the spacing.
 *
 *   bakery-fifo [--survey [TRIALS]]
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#include "bakery.h"

#define WAITERS 4
#define SPACING_MS 50
#define BAKERY_TRIALS 4         /* per algorithm, in make check */
#define CATCH_TRIALS 3          /* of the LIFO lock, each out of order */
#define TRIAL_TIMEOUT_S 20

/* Shared with the forked waiters (anonymous shared mapping). */
struct shared {
	uint32_t arrived, entered;
	int arrival[WAITERS];           /* waiter ids in arrival order */
	int entry[WAITERS];             /* waiter ids in entry order */
	pthread_mutex_t mutex;          /* mech_pthread */
	uint32_t spin;                  /* mech_spin */
	struct {                        /* mech_lifo */
		uint32_t guard;         /* a spinlock over the fields below */
		uint32_t held, top;
		int stack[WAITERS];     /* waiter ids, the latest on top */
		uint32_t granted[WAITERS];
	} lifo;
};

struct mech;
struct mech_ops {
	const char *name;
	int (*open)(struct mech *m);
	/* in a forked waiter, before its first lock() */
	int (*child_init)(struct mech *m);
	int (*lock)(struct mech *m);
	int (*unlock)(struct mech *m);
	/* true once N waiters are seen past their doorway; NULL: no way to tell */
	bool (*settled)(struct mech *m, unsigned n);
	void (*close)(struct mech *m);
};

struct mech {
	const struct mech_ops *ops;
	struct shared *sh;
	enum bakery_algo algo;
	char name[128];                 /* region or file name */
	bakery_t *b;
	bakery_lock_t *l;
	int fd;
	int id;                         /* the waiter's id; -1 in the driver */
};

/* ------------------------------------------------------------ checker -- */

static void print_order(const char *what, const int *ids, unsigned n)
{
	fprintf(stderr, "    %s:", what);
	for (unsigned i = 0; i < n; i++)
		fprintf(stderr, " %d", ids[i]);
	fprintf(stderr, "\n");
}

/* Did the waiters enter in exactly their arrival order? */
static bool fifo_in_order(const int *arrival, const int *entry, unsigned n, bool verbose)
{
	bool same = memcmp(arrival, entry, n * sizeof(*arrival)) == 0;

	if (!same && verbose) {
		print_order("arrived", arrival, n);
		print_order("entered", entry, n);
	}
	return same;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* Poll COND(m, n) every millisecond for up to 5 s. */
static bool wait_until(struct mech *m, unsigned n, bool (*cond)(struct mech *, unsigned))
{
	for (int i = 0; i < 5000; i++) {
		if (cond(m, n))
			return true;
		sleep_ms(1);
	}
	return false;
}

static bool arrived(struct mech *m, unsigned n)
{
	return uatomic_read(&m->sh->arrived) >= n;
}

/* One waiter: arrive, wait for the lock, record the entry, leave. */
static void waiter(struct mech *m, int id)
{
	struct shared *sh = m->sh;
	uint32_t pos;

	m->id = id;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || m->ops->child_init(m))
		_exit(3);
	pos = uatomic_add_return(&sh->arrived, 1) - 1;
	CMM_STORE_SHARED(sh->arrival[pos], id);
	if (m->ops->lock(m))
		_exit(4);
	pos = uatomic_add_return(&sh->entered, 1) - 1;
	CMM_STORE_SHARED(sh->entry[pos], id);
	if (m->ops->unlock(m))
		_exit(5);
	if (m->ops->close)
		m->ops->close(m);
	_exit(0);
}

/* Reap every waiter, killing those still there after TRIAL_TIMEOUT_S. */
static bool reap(pid_t *pid, unsigned n)
{
	bool ok = true;

	for (int t = 0; t < TRIAL_TIMEOUT_S * 100; t++) {
		unsigned left = 0;

		for (unsigned i = 0; i < n; i++)
			left += pid[i] > 0;
		if (!left)
			return ok;
		for (unsigned i = 0; i < n; i++) {
			int st;

			if (pid[i] > 0 && waitpid(pid[i], &st, WNOHANG) == pid[i]) {
				ok = ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
				pid[i] = 0;
			}
		}
		sleep_ms(10);
	}
	fprintf(stderr, "    waiters still blocked after %d s: killed\n", TRIAL_TIMEOUT_S);
	for (unsigned i = 0; i < n; i++)
		if (pid[i] > 0) {
			kill(pid[i], SIGKILL);
			waitpid(pid[i], NULL, 0);
		}
	return false;
}

/* Start the waiters one by one behind the held lock. */
static bool line_up(struct mech *m, pid_t *pid)
{
	for (unsigned i = 0; i < WAITERS; i++) {
		fflush(NULL);
		pid[i] = fork();
		if (pid[i] < 0)
			return false;
		if (pid[i] == 0)
			waiter(m, (int)i);
		if (!wait_until(m, i + 1, arrived) ||
		    (m->ops->settled && !wait_until(m, i + 1, m->ops->settled))) {
			fprintf(stderr, "    waiter %u did not arrive\n", i);
			return false;
		}
		sleep_ms(SPACING_MS);
	}
	return true;
}

/*
 * One trial.  1: in arrival order; 0: out of order; -1: the trial itself
 * failed (a waiter died, hung or never arrived).
 */
static int fifo_trial(struct mech *m, bool verbose)
{
	pid_t pid[WAITERS] = { 0 };
	bool lined_up, reaped;

	memset(m->sh->arrival, 0, sizeof(m->sh->arrival));
	memset(m->sh->entry, 0, sizeof(m->sh->entry));
	uatomic_set(&m->sh->arrived, 0);
	uatomic_set(&m->sh->entered, 0);
	if (m->ops->lock(m))
		return -1;
	lined_up = line_up(m, pid);
	if (m->ops->unlock(m))
		lined_up = false;
	reaped = reap(pid, WAITERS);
	if (!lined_up || !reaped || uatomic_read(&m->sh->entered) != WAITERS) {
		fprintf(stderr, "    %s: trial failed (%u waiters entered)\n", m->ops->name,
		        uatomic_read(&m->sh->entered));
		return -1;
	}
	return fifo_in_order(m->sh->arrival, m->sh->entry, WAITERS, verbose);
}

/* --------------------------------------------------------- mechanisms -- */

static int bk_open(struct mech *m)
{
	int err;

	snprintf(m->name, sizeof(m->name), "/bakery-fifo-%ld-%d", (long)getpid(), (int)m->algo);
	bakery_unlink(m->name);
	err = bakery_open(m->name, BAKERY_CREATE | BAKERY_EXCL, NULL, &m->b);
	if (!err)
		err = bakery_lock_open(m->b, "fifo", m->algo, &m->l);
	if (err)
		fprintf(stderr, "fifo: %s: %s\n", m->name, bakery_strerror(err));
	return err;
}

/* forked waiters use the inherited handles; their threads take fresh slots */
static int bk_child_init(struct mech *m) { (void)m; return 0; }
static int bk_lock(struct mech *m) { return bakery_lock(m->l); }
static int bk_unlock(struct mech *m) { return bakery_unlock(m->l); }

/* N slots past their doorway (WAITING) in our lock. */
static bool bk_settled(struct mech *m, unsigned n)
{
	struct bakery_region_info ri;
	unsigned waiting = 0;

	if (bakery_region_info(m->b, &ri))
		return false;
	for (unsigned s = 0; s < ri.slots; s++) {
		struct bakery_slot_info si;

		if (!bakery_slot_info(m->b, s, &si) && si.pass == BAKERY_PASS_WAITING)
			waiting++;
	}
	return waiting >= n;
}

static void bk_close(struct mech *m)
{
	bakery_lock_close(m->l);
	bakery_close(m->b);
}

static const struct mech_ops mech_bakery = {
	"bakery", bk_open, bk_child_init, bk_lock, bk_unlock, bk_settled, bk_close,
};

/*
 * A robust, process-shared pthread mutex.  Waiters sleep in the kernel on
 * the mutex word, and the kernel queues sleepers of one futex first come,
 * first served (equal priorities): each unlock wakes the longest sleeper,
 * and with everyone asleep no one can barge in, so in this set-up glibc's
 * mutex behaves FIFO in practice.  That is why the test's teeth are shown
 * with the spinlock below, and the mutex is only surveyed.
 */
static int pt_open(struct mech *m)
{
	pthread_mutexattr_t a;
	int err;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	err = pthread_mutex_init(&m->sh->mutex, &a);
	pthread_mutexattr_destroy(&a);
	return err;
}

static int pt_child_init(struct mech *m) { (void)m; return 0; }
static int pt_lock(struct mech *m) { return pthread_mutex_lock(&m->sh->mutex); }
static int pt_unlock(struct mech *m) { return pthread_mutex_unlock(&m->sh->mutex); }
static void pt_close(struct mech *m) { (void)m; }

static const struct mech_ops mech_pthread = {
	"pthread-mutex", pt_open, pt_child_init, pt_lock, pt_unlock, NULL, pt_close,
};

/* Test-and-set with sched_yield while waiting: no queue at all. */
static int sp_open(struct mech *m) { uatomic_set(&m->sh->spin, 0); return 0; }
static int sp_child_init(struct mech *m) { (void)m; return 0; }

static int sp_lock(struct mech *m)
{
	while (uatomic_xchg(&m->sh->spin, 1))
		sched_yield();
	return 0;
}

static int sp_unlock(struct mech *m)
{
	cmm_smp_mb();   /* the critical section before the release */
	uatomic_set(&m->sh->spin, 0);
	return 0;
}

static void sp_close(struct mech *m) { (void)m; }

static const struct mech_ops mech_spin = {
	"tas-spinlock", sp_open, sp_child_init, sp_lock, sp_unlock, NULL, sp_close,
};

/*
 * LIFO: a waiter pushes its id and waits until the holder hands the lock to
 * it; unlock hands it to the id on top of the stack.  Waiters that arrive
 * in the order 0, 1, 2, 3 enter as 3, 2, 1, 0, on any machine.
 */
static void lifo_guard(struct mech *m)
{
	while (uatomic_xchg(&m->sh->lifo.guard, 1))
		sched_yield();
}

static void lifo_unguard(struct mech *m)
{
	cmm_smp_mb();   /* the guarded updates before the guard's release */
	uatomic_set(&m->sh->lifo.guard, 0);
}

static int lf_open(struct mech *m)
{
	memset(&m->sh->lifo, 0, sizeof(m->sh->lifo));
	return 0;
}

static int lf_lock(struct mech *m)
{
	bool queued = false;

	lifo_guard(m);
	if (m->sh->lifo.held) {
		m->sh->lifo.stack[m->sh->lifo.top++] = m->id;
		queued = true;
	}
	m->sh->lifo.held = 1;
	lifo_unguard(m);
	if (queued) {
		while (!uatomic_read(&m->sh->lifo.granted[m->id]))
			sched_yield();
		uatomic_set(&m->sh->lifo.granted[m->id], 0);
	}
	return 0;
}

static int lf_unlock(struct mech *m)
{
	lifo_guard(m);
	if (m->sh->lifo.top)    /* hand over: held stays 1 */
		uatomic_set(&m->sh->lifo.granted[m->sh->lifo.stack[--m->sh->lifo.top]], 1);
	else
		m->sh->lifo.held = 0;
	lifo_unguard(m);
	return 0;
}

/* N waiters queued on the stack. */
static bool lf_settled(struct mech *m, unsigned n)
{
	return uatomic_read(&m->sh->lifo.top) >= n;
}

static const struct mech_ops mech_lifo = {
	"lifo", lf_open, sp_child_init, lf_lock, lf_unlock, lf_settled, sp_close,
};

/* flock(2) on a scratch file, each process on its own open file. */
static int fl_open(struct mech *m)
{
	snprintf(m->name, sizeof(m->name), "/tmp/bakery-fifo-%ld.lock", (long)getpid());
	m->fd = open(m->name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	return m->fd < 0 ? errno : 0;
}

static int fl_child_init(struct mech *m)
{
	/* a lock of its own: flock locks belong to the open file description */
	m->fd = open(m->name, O_RDWR | O_CLOEXEC);
	return m->fd < 0 ? errno : 0;
}

static int fl_lock(struct mech *m) { return flock(m->fd, LOCK_EX) ? errno : 0; }
static int fl_unlock(struct mech *m) { return flock(m->fd, LOCK_UN) ? errno : 0; }

static void fl_close(struct mech *m)
{
	close(m->fd);
}

static const struct mech_ops mech_flock = {
	"flock", fl_open, fl_child_init, fl_lock, fl_unlock, NULL, fl_close,
};

/* -------------------------------------------------------------- runs -- */

struct tally {
	unsigned trials, in_order, out_of_order, failed;
};

/* TRIALS trials of M (fewer if one fails). */
static struct tally run_trials(const struct mech_ops *ops, enum bakery_algo algo,
                               struct shared *sh, unsigned trials, bool verbose)
{
	struct mech m = { .ops = ops, .sh = sh, .algo = algo, .fd = -1, .id = -1 };
	struct tally t = { 0 };

	if (ops->open(&m)) {
		t.failed = 1;
		return t;
	}
	for (unsigned i = 0; i < trials; i++) {
		int r = fifo_trial(&m, verbose);

		t.trials++;
		if (r < 0) {
			t.failed++;
			break;
		}
		r ? t.in_order++ : t.out_of_order++;
	}
	ops->close(&m);
	if (ops == &mech_bakery)
		bakery_unlink(m.name);
	else if (ops == &mech_flock)
		unlink(m.name);
	return t;
}

static void report(const char *name, const struct tally *t, const char *verdict)
{
	printf("fifo: %-14s %2u trials x %u waiters: %2u in order, %2u out of order, "
	       "%u failed  %s\n", name, t->trials, WAITERS, t->in_order, t->out_of_order,
	       t->failed, verdict);
	fflush(stdout);
}

/* make check: every algorithm FIFO, the LIFO lock caught every time. */
static int check(struct shared *sh)
{
	int failed = 0;
	struct tally t;

	for (int a = BAKERY_ALGO_LAMPORT; a < BAKERY_ALGO_COUNT; a++) {
		bool ok;

		t = run_trials(&mech_bakery, (enum bakery_algo)a, sh, BAKERY_TRIALS, true);
		ok = !t.failed && t.in_order == BAKERY_TRIALS;
		report(bakery_algo_name((enum bakery_algo)a), &t, ok ? "ok" : "FAILED");
		failed += !ok;
	}
	t = run_trials(&mech_lifo, 0, sh, CATCH_TRIALS, false);
	report(mech_lifo.name, &t, !t.failed && t.out_of_order == CATCH_TRIALS ?
	       "ok (caught out of order every time: the check has teeth)" :
	       "FAILED (not caught out of order every time)");
	failed += t.failed || t.out_of_order != CATCH_TRIALS;
	return failed ? 1 : 0;
}

/* --survey: fixed trial counts for every mechanism, figures only. */
static int survey(struct shared *sh, unsigned trials)
{
	static const struct mech_ops *const others[] = { &mech_pthread, &mech_flock, &mech_spin,
	                                                  &mech_lifo };
	struct tally t;

	for (int a = BAKERY_ALGO_LAMPORT; a < BAKERY_ALGO_COUNT; a++) {
		t = run_trials(&mech_bakery, (enum bakery_algo)a, sh, trials, true);
		report(bakery_algo_name((enum bakery_algo)a), &t, "");
	}
	for (unsigned i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		t = run_trials(others[i], 0, sh, trials, false);
		report(others[i]->name, &t, "");
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
	                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (sh == MAP_FAILED) {
		perror("fifo: mmap");
		return 99;
	}
	/* FIFO is promised among waiters that take their turn within the
	 * grace (bakery.h): a machine loaded enough to keep a woken waiter off
	 * the CPU for 250 ms must not turn this test into one of passing */
	setenv("BAKERY_PASS_GRACE_MS", "600000", 0);
	if (argc > 1 && !strcmp(argv[1], "--survey"))
		return survey(sh, argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 20);
	return check(sh);
}
