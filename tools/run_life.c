/* SPDX-License-Identifier: MIT */
/*
 * run_life.c - the job's lifetime lock: an OFD lock on a byte of the
 * region's shared-memory object, in an open file description that the
 * command and all its descendants inherit (run.h says why and what it
 * covers).
 *
 * Taking it may wait (for the processes a previous job left running);
 * that wait ends at the job's deadline, and when a signal that would end
 * the wrapper comes: the job then gives the bakery lock back before it
 * dies of that signal, rather than leave it owner-died.  fcntl's
 * F_OFD_SETLKW is interrupted for that by a periodic timer signal, so
 * neither a signal nor the deadline can slip in unnoticed between a test
 * and the wait.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "run.h"

/* The units of the lock named KEY start at LIFE_BASE + hash(KEY) *
 * LIFE_STRIDE: a stride for the most holders a lock may have, far past
 * the region's own bytes (the library takes no fcntl lock on them, and
 * an OFD lock may lie past the end of a file). */
#define LIFE_BASE   ((off_t)1 << 50)
#define LIFE_STRIDE ((off_t)BAKERY_MAX_HOLDERS)
#define LIFE_HASH_BITS 36

/* How often a waiting fcntl is interrupted to look at the deadline and
 * at the signals caught (and, for several units, to try the others). */
#define LIFE_TICK_NS 50000000L

/* FNV-1a, 64 bits: the name's place among the ranges. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

void run_life_close(struct run_life *lf)
{
	if (lf->fd >= 0)
		close(lf->fd);
	lf->fd = -1;
}

int run_life_open(struct run_life *lf, const char *region, const char *key, unsigned units,
                  const struct run_opts *o)
{
	uint64_t slot = name_hash(key) & (((uint64_t)1 << LIFE_HASH_BITS) - 1);

	/* a new open file description: not the library's; shm_open sets
	 * FD_CLOEXEC, taken off so that the command inherits it, unless -o */
	lf->fd = shm_open(region, O_RDWR, 0);
	if (lf->fd < 0)
		return errno;
	if (!o->close && fcntl(lf->fd, F_SETFD, 0) < 0) {
		int err = errno;

		run_life_close(lf);
		return err;
	}
	lf->first = LIFE_BASE + (off_t)slot * LIFE_STRIDE;
	lf->units = units ? units : 1;
	return 0;
}

static int set_lock(struct run_life *lf, const struct run_opts *o, unsigned unit, int cmd)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = o->shared ? F_RDLCK : F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = lf->first + (off_t)unit;
	fl.l_len = 1;
	return fcntl(lf->fd, cmd, &fl) == 0 ? 0 : errno;
}

/* Take any free unit at once: 0, EBUSY, or an errno. */
static int try_units(struct run_life *lf, const struct run_opts *o)
{
	for (unsigned u = 0; u < lf->units; u++) {
		int err = set_lock(lf, o, u, F_OFD_SETLK);

		if (err != EAGAIN && err != EACCES)
			return err;
	}
	return EBUSY;
}

/* ------------------------------------------------------------ waiting -- */

static volatile sig_atomic_t caught;

static void interrupt(int sig, siginfo_t *info, void *ctx)
{
	(void)ctx;
	/* the tick only interrupts; anything else is a signal to end on */
	if (!(sig == SIGALRM && info->si_code == SI_TIMER))
		caught = sig;
}

/* Does SIG, left to its default action, end the process? */
static bool ends_process(int sig)
{
	return sig != SIGCONT && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU &&
	       sig != SIGURG && sig != SIGWINCH;
}

struct life_wait {
	struct sigaction old[NSIG];
	sigset_t set;
	timer_t timer;
	bool timing;
};

/* Catch the signals that would end the wrapper, and start the tick. */
static void wait_begin(struct life_wait *w)
{
	struct itimerspec tick = { { 0, LIFE_TICK_NS }, { 0, LIFE_TICK_NS } };
	struct sigevent ev;
	struct sigaction sa;
	sigset_t forwarded;

	caught = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = interrupt;
	sa.sa_flags = SA_SIGINFO;          /* no SA_RESTART: fcntl returns EINTR */
	sigfillset(&sa.sa_mask);
	run_forwarded_set(&forwarded);
	sigemptyset(&w->set);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&forwarded, sig) && ends_process(sig)) {
			sigaddset(&w->set, sig);
			sigaction(sig, &sa, &w->old[sig]);
		}
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGALRM;
	w->timing = timer_create(CLOCK_MONOTONIC, &ev, &w->timer) == 0 &&
	            timer_settime(w->timer, 0, &tick, NULL) == 0;
}

/* Stop the tick and give the signals their old actions back.  A tick
 * still pending would kill the wrapper once SIGALRM has its default
 * action again (or the command after exec, which keeps pending signals):
 * it is taken here, blocked. */
static void wait_end(struct life_wait *w)
{
	const struct timespec now = { 0, 0 };
	sigset_t alarm_set, old;
	siginfo_t si;

	sigemptyset(&alarm_set);
	sigaddset(&alarm_set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alarm_set, &old);
	if (w->timing)
		timer_delete(w->timer);
	while (sigtimedwait(&alarm_set, &si, &now) == SIGALRM)
		if (si.si_code != SI_TIMER)
			caught = SIGALRM;
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&w->set, sig))
			sigaction(sig, &w->old[sig], NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* One wait for a unit: blocking until the tick, or without a timer (none
 * could be made) a try and a pause of one tick. */
static int wait_once(struct run_life *lf, const struct run_opts *o, unsigned unit, bool timing)
{
	const struct timespec pause = { 0, LIFE_TICK_NS };
	int err;

	if (timing)
		return set_lock(lf, o, unit, F_OFD_SETLKW);
	if ((err = try_units(lf, o)) != EBUSY)
		return err;
	nanosleep(&pause, NULL);
	return EINTR;
}

/* Wait for a unit: unit TURN, or with several units any of them (the
 * others are tried at every tick). */
static int wait_units(struct run_life *lf, const struct run_opts *o, bool timing, int *signo)
{
	for (unsigned turn = 0;; turn++) {
		int err = wait_once(lf, o, turn % lf->units, timing);

		if (err != EINTR)
			return err;
		if (caught) {
			*signo = caught;
			return EINTR;
		}
		if (run_deadline_passed(o))
			return ETIMEDOUT;
		if (lf->units > 1 && (err = try_units(lf, o)) != EBUSY)
			return err;
	}
}

int run_life_take(struct run_life *lf, const struct run_opts *o, int *signo)
{
	struct life_wait w;
	int err = try_units(lf, o);

	if (err != EBUSY || o->wait == RUN_WAIT_NONE)
		return err;
	if (run_deadline_passed(o))
		return ETIMEDOUT;
	wait_begin(&w);
	err = wait_units(lf, o, w.timing, signo);
	wait_end(&w);
	if (err == 0 && caught) {
		/* it came as the lock was taken: ended all the same */
		*signo = caught;
		err = EINTR;
	}
	return err;
}
