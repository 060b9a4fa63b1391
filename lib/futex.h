/* SPDX-License-Identifier: MIT */
/*
 * futex.h - futex.c: the futex and membarrier system calls, the only place
 * the library makes them.
 */
#ifndef BAKERY_FUTEX_H
#define BAKERY_FUTEX_H

#include "private.h"

/* Wake every thread asleep on WORD. */
BAKERY_HIDDEN void bakery__futex_wake_all(uint32_t *word);
/* Wake the thread asleep on WORD the longest (the kernel queues sleepers of
 * one priority in arrival order). */
BAKERY_HIDDEN void bakery__futex_wake_one(uint32_t *word);
/* Set when one of the calling thread's wakes above woke a thread (the
 * kernel's answer); lock.c's releases clear it. */
BAKERY_HIDDEN extern __thread bool bakery__futex_woke __attribute__((tls_model("initial-exec")));
/* Give the CPU to another runnable thread, if there is one
 * (sched_yield(2); a refusal is ignored). */
BAKERY_HIDDEN void bakery__cpu_yield(void) __attribute__((cold));

/* One word a sleep watches, and the value it must still hold for the sleep
 * to begin: struct futex_waitv of the kernel's ABI (Linux 5.16). */
struct futex_word {
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t reserved;
};

/* futex_waitv takes at most this many words. */
#define FUTEX_WORDS_MAX 128u

static inline struct futex_word futex_word(uint32_t *word, uint32_t val)
{
	/* 2: FUTEX2_SIZE_U32, a 32-bit word (shared: no FUTEX2_PRIVATE) */
	return (struct futex_word){ .val = val, .uaddr = (uintptr_t)word, .flags = 2 };
}

/*
 * The one sleep: until a word of W[0..N) (1 <= N <= FUTEX_WORDS_MAX) no
 * longer holds its value, a wake-up on one of them, or UNTIL on CLOCK
 * (CLOCK_MONOTONIC or CLOCK_REALTIME; NULL: no time limit).  Returns 0
 * (woken, or a word had changed already), ETIMEDOUT or EINTR; a return is
 * never proof of anything: the caller looks at what it waits for again.
 *
 * Several words take futex_waitv.  Where that is refused - ENOSYS (a kernel
 * before 5.16), EPERM or EACCES (a seccomp filter), or any other error but
 * the three above: the call made no sleep - the process stops asking for
 * it, and every sleep of several words sleeps on W[0] alone, at most
 * FUTEX_ONE_WORD_MIN_NS the first time and twice as long after each such
 * sleep that timed out, up to FUTEX_ONE_WORD_MAX_NS (*NAPS counts them:
 * start it at 0 for each wait; a wake-up on W[0] starts it again), so that
 * the other words are looked at without a busy loop.  A single word takes
 * FUTEX_WAIT_BITSET; where even that is refused, the sleep is a plain
 * timed sleep of the same bound.
 */
#define FUTEX_ONE_WORD_MIN_NS   1000000L        /* 1 ms */
#define FUTEX_ONE_WORD_MAX_NS 100000000L        /* 100 ms */
BAKERY_HIDDEN int bakery__futex_sleep(const struct futex_word *w, unsigned n, clockid_t clock,
                                      const struct timespec *until, unsigned *naps);

/* Is futex_waitv known to be refused to this process (futex_sleep above)? */
BAKERY_HIDDEN bool bakery__futex_waitv_refused(void);

/* A full barrier in every running thread of the system
 * (membarrier(MEMBARRIER_CMD_GLOBAL)): 0, or ENOTSUP where it is refused
 * (ENOSYS: a kernel without it; EPERM: a seccomp filter, or CPUs isolated
 * with nohz_full; EINVAL: the command unknown), remembered for the process:
 * later calls answer ENOTSUP at once.  The other half of a handshake whose
 * hot side has only a compiler barrier (lockadmin.c, registry.c). */
BAKERY_HIDDEN int bakery__barrier_everywhere(void);
/* Has this process been refused the barrier above? */
BAKERY_HIDDEN bool bakery__barrier_refused(void);
/* Register this process for the expedited barrier below
 * (MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, Linux 4.16+; kept across
 * fork, dropped at exec): 0, or ENOTSUP where it is refused.  Idempotent;
 * the answer is remembered for the process. */
BAKERY_HIDDEN int bakery__barrier_expedited_register(void);
/* A full barrier in every running thread of every process registered
 * above (membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED): interrupts only the
 * CPUs that run one, microseconds): 0, or ENOTSUP.  exitfence.h. */
BAKERY_HIDDEN int bakery__barrier_expedited(void);

#ifdef BAKERY_TESTING
/* Threads woken so far by this process's bakery__futex_wake_all calls. */
BAKERY_HIDDEN unsigned long bakery__test_futex_woken(void);
#endif

#endif /* BAKERY_FUTEX_H */
