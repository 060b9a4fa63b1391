/* SPDX-License-Identifier: MIT */
/*
 * private.h - what every private header of the library needs: the
 * includes, the hidden visibility of bakery__ names, timespec comparison
 * and addition, the monotonic clock in ns, and the test build's crash points and assertions
 * (testhooks.c).  Never installed.
 */
#ifndef BAKERY_PRIVATE_H
#define BAKERY_PRIVATE_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <urcu/arch.h>
#include <urcu/compiler.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

#include "bakery.h"

#define BAKERY_HIDDEN __attribute__((visibility("hidden")))

/* a < b: -1, a == b: 0, a > b: 1 */
static inline int ts_cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	return (a->tv_nsec > b->tv_nsec) - (a->tv_nsec < b->tv_nsec);
}

/* t += ns (ns >= 0) */
static inline void ts_add_ns(struct timespec *t, long ns)
{
	t->tv_sec += ns / 1000000000L;
	t->tv_nsec += ns % 1000000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
}

/* Now on CLOCK_MONOTONIC, in ns. */
static inline uint64_t monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Are the words of a public struct's reserved field all 0, as the API
 * requires of the structs a caller passes in?  (RESERVED: an array.) */
#define reserved_zero(reserved) words_zero((reserved), sizeof(reserved) / sizeof((reserved)[0]))
static inline bool words_zero(const unsigned *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (w[i])
			return false;
	return true;
}

/*
 * Crash points: in the test build (BAKERY_TESTING) the process SIGKILLs itself
 * when the environment variable BAKERY_CRASH_AT names this point (optionally
 * "name:N" to crash at the N-th passage there).  Compiled out otherwise.
 */
#ifdef BAKERY_TESTING
BAKERY_HIDDEN void bakery__crash_point(const char *name);
#define CRASH_POINT(name) bakery__crash_point(name)
#define BAKERY_ASSERT(cond) do { if (!(cond)) bakery__assert_fail(#cond, __FILE__, __LINE__); } while (0)
BAKERY_HIDDEN void bakery__assert_fail(const char *what, const char *file, int line);
#else
#define CRASH_POINT(name) do { } while (0)
#define BAKERY_ASSERT(cond) do { } while (0)
#endif

/*
 * Cancellation: the entry points that use the C library's cancellation
 * points (open, close, fopen, pread...) run with cancellation disabled, so a
 * thread is never cancelled half-way through them (a flock, a descriptor or
 * a slot left behind); a pending cancellation acts at the caller's next
 * cancellation point, as around pthread_mutex_lock.
 */
static inline int cancel_off(void)
{
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static inline void cancel_restore(int old)
{
	pthread_setcancelstate(old, NULL);
}

#endif /* BAKERY_PRIVATE_H */
