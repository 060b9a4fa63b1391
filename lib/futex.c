/* SPDX-License-Identifier: MIT */
/*
 * futex.c - the futex and membarrier system calls, and what the library
 * does where a kernel or a seccomp filter refuses them: the one sleep of
 * every wait (one word or several), waking (the test build counts the
 * threads woken), and the system-wide barrier of two handshakes.  The
 * lowest layer with token.c's words above it.
 *
 * Each call's answers are named below, with what they mean here.  What a
 * refusal costs: without futex_waitv, a sleep that watches several words
 * watches the first alone and looks at the others at growing intervals
 * (wait.c says which word comes first); without membarrier, idle slots are
 * not reclaimed and locks are not removed (registry.c, lockadmin.c).
 */
#include "config.h"

#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "futex.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449     /* one number on every architecture */
#endif

/* Set when a FUTEX_WAKE of the calling thread woke a thread (lock.c clears
 * it). */
__thread bool bakery__futex_woke;

#ifdef BAKERY_TESTING
/* Threads this process's FUTEX_WAKEs woke (the kernel's count). */
static unsigned long woken;

unsigned long bakery__test_futex_woken(void)
{
	return uatomic_read(&woken);
}
#endif

/* ---------------------------------------------------------------- wake -- */

static void futex_wake(uint32_t *word, int nr)
{
	/* The answer: how many were woken, or -1 with EFAULT (the word is not
	 * mapped: nobody to wake), EINVAL, ENOSYS or EPERM (refused: sleepers
	 * then end their sleeps at their bounds).  Nothing to do either way. */
	long n = syscall(SYS_futex, word, FUTEX_WAKE, nr, NULL, NULL, 0);

	if (n > 0) {
		bakery__futex_woke = true;
#ifdef BAKERY_TESTING
		uatomic_add(&woken, (unsigned long)n);
#endif
	}
}

void bakery__futex_wake_all(uint32_t *word)
{
	futex_wake(word, INT_MAX);
}

void bakery__futex_wake_one(uint32_t *word)
{
	futex_wake(word, 1);
}

void bakery__cpu_yield(void)
{
	/* The answer: 0, or -1 with EPERM or ENOSYS (refused by a seccomp
	 * filter): the yield is a hint, nothing is lost without it. */
	(void)sched_yield();
}

/* --------------------------------------------------------------- sleep -- */

/* Cleared for good the first time futex_waitv is refused. */
static int have_waitv = 1;

bool bakery__futex_waitv_refused(void)
{
	return !uatomic_read(&have_waitv);
}

/* The errors every sleep expects: the word had changed (EAGAIN), a
 * signal (EINTR), the time (ETIMEDOUT).  Anything else: no sleep was made. */
static int expected(int err)
{
	switch (err) {
	case EAGAIN:
		return 0;
	case EINTR:
	case ETIMEDOUT:
		return err;
	default:
		return -1;
	}
}

/* futex_waitv on W[0..N): 0, ETIMEDOUT or EINTR; -1 if refused. */
static int sleep_many(const struct futex_word *w, unsigned n, clockid_t clock,
                      const struct timespec *until)
{
	/* the answer is the index of the word woken, or -1 and errno */
	if (syscall(SYS_futex_waitv, w, n, 0, until, clock) >= 0)
		return 0;
	return expected(errno);
}

/* FUTEX_WAIT_BITSET on one word (it takes an absolute time on either
 * clock): 0, ETIMEDOUT or EINTR; -1 if refused. */
static int sleep_one(const struct futex_word *w, clockid_t clock, const struct timespec *until)
{
	int op = FUTEX_WAIT_BITSET | (clock == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);

	if (syscall(SYS_futex, (uint32_t *)(uintptr_t)w->uaddr, op, (uint32_t)w->val, until, NULL,
	            FUTEX_BITSET_MATCH_ANY) == 0)
		return 0;
	return expected(errno);
}

/* UNTIL, or NS from now if that is sooner (or there is no UNTIL). */
static void bound(clockid_t clock, const struct timespec *until, long ns, struct timespec *out)
{
	clock_gettime(clock, out);
	ts_add_ns(out, ns);
	if (until && ts_cmp(until, out) < 0)
		*out = *until;
}

/* No futex at all (a filter refusing FUTEX_WAIT): a plain sleep until AT,
 * so that at least nothing spins.  clock_nanosleep is a cancellation point,
 * and a lock call makes none while it waits (bakery.h): a thread cancelled
 * here would leave its place in line to recovery. */
static int sleep_plain(clockid_t clock, const struct timespec *at)
{
	int state;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
	clock_nanosleep(clock, TIMER_ABSTIME, at, NULL);
	pthread_setcancelstate(state, NULL);
	return ETIMEDOUT;
}

/* Without futex_waitv: W[0] alone, for the bound of the *NAPS-th nap in a
 * row that timed out. */
static int sleep_first(const struct futex_word *w, clockid_t clock, const struct timespec *until,
                       unsigned *naps)
{
	unsigned k = *naps < 16 ? *naps : 16;
	long ns = FUTEX_ONE_WORD_MIN_NS << k;
	struct timespec at;
	int r;

	bound(clock, until, ns < FUTEX_ONE_WORD_MAX_NS ? ns : FUTEX_ONE_WORD_MAX_NS, &at);
	r = sleep_one(w, clock, &at);
	if (r < 0)
		r = sleep_plain(clock, &at);
	*naps = r == ETIMEDOUT ? k + 1 : 0;
	return r;
}

int bakery__futex_sleep(const struct futex_word *w, unsigned n, clockid_t clock,
                        const struct timespec *until, unsigned *naps)
{
	struct timespec at;
	int r;

	if (n > 1 && caa_likely(uatomic_read(&have_waitv))) {
		r = sleep_many(w, n, clock, until);
		if (caa_likely(r >= 0))
			return r;
		/* ENOSYS, EPERM, EACCES, EINVAL...: not for this process */
		uatomic_set(&have_waitv, 0);
	}
	if (n > 1)
		return sleep_first(w, clock, until, naps);
	r = sleep_one(w, clock, until);
	if (caa_likely(r >= 0))
		return r;
	bound(clock, until, FUTEX_ONE_WORD_MAX_NS, &at);
	return sleep_plain(clock, &at);
}

/* ------------------------------------------------------------- barrier -- */

/* Set for good the first time membarrier is refused. */
static int barrier_refused;

bool bakery__barrier_refused(void)
{
	return uatomic_read(&barrier_refused);
}

int bakery__barrier_everywhere(void)
{
	if (uatomic_read(&barrier_refused))
		return ENOTSUP;
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return 0;
	switch (errno) {
	case ENOSYS:    /* no such call: before Linux 4.3, or compiled out */
	case EPERM:     /* a seccomp filter; or nohz_full CPUs (the global command) */
	case EINVAL:    /* the command unknown to this kernel */
		uatomic_set(&barrier_refused, 1);
		return ENOTSUP;
	default:        /* no barrier was made this time */
		return ENOTSUP;
	}
}

/* 1 once registered, -1 once refused, 0 before the first try. */
static int expedited_state;

int bakery__barrier_expedited_register(void)
{
	int st = uatomic_read(&expedited_state);

	if (st)
		return st > 0 ? 0 : ENOTSUP;
	/* two threads racing both register: the kernel takes it twice */
	st = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0 ? 1 : -1;
	uatomic_set(&expedited_state, st);
	return st > 0 ? 0 : ENOTSUP;
}

int bakery__barrier_expedited(void)
{
	/* ENOSYS, EINVAL, EPERM (a seccomp filter): refused; the caller
	 * falls back on barriers of its own (exitfence.c) */
	return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0 ? 0 : ENOTSUP;
}
