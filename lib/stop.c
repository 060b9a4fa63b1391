/* SPDX-License-Identifier: MIT */
/*
 * stop.c - what ends a lock call's wait besides its deadline: a cancel word
 * that another thread, process or signal handler sets (bakery_cancel), and
 * an interruption by a signal handler (BAKERY_ACQUIRE_INTR), which an
 * optional callback may judge.
 *
 * The waits look here wherever they look at their deadline (wait.h,
 * bakery__wait_over), and give up the same way: the algorithm's abort, as
 * on a timeout.  A sleep watches the cancel word (wait.c puts it among the
 * futex words it sleeps on), so setting it and waking it ends the wait at
 * once.  A signal only interrupts a sleep that is under way: one that comes
 * while the waiter spins, or just before it enters the kernel, interrupts
 * nothing (the handler runs and returns, and the sleep begins as if nothing
 * happened).  So with a callback, which may know better (an interpreter's
 * flag that its C-level handler set, say), every sleep is capped at
 * BAKERY_ACQUIRE_POLL_MS and the callback is asked at least that often:
 * such a signal is noticed within that time, at the cost of one wake-up and
 * one call per period while the thread waits.
 */
#include "config.h"

#include "futex.h"
#include "stop.h"

#define POLL_NS (BAKERY_ACQUIRE_POLL_MS * 1000000L)

static void schedule_ask(struct wait_stop *s)
{
	clock_gettime(CLOCK_MONOTONIC, &s->ask_at);
	s->ask_at.tv_nsec += POLL_NS;
	while (s->ask_at.tv_nsec >= 1000000000L) {
		s->ask_at.tv_nsec -= 1000000000L;
		s->ask_at.tv_sec++;
	}
}

void bakery__stop_init(struct wait_stop *s, const struct bakery_acquire_opts *o)
{
	*s = (struct wait_stop){
		.cancel = o->cancel,
		.interrupted = o->interrupted,
		.arg = o->arg,
		.intr = (o->flags & BAKERY_ACQUIRE_INTR) != 0,
	};
	if (s->interrupted)
		schedule_ask(s);
}

static bool ask_due(const struct wait_stop *s)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return ts_cmp(&now, &s->ask_at) >= 0;
}

/* Interrupted, and the callback (if any) says stop? */
static bool interrupt_stops(struct wait_stop *s)
{
	if (!s->interrupted)
		return s->signalled;
	if (!s->signalled && !ask_due(s))
		return false;
	s->signalled = false;
	schedule_ask(s);
	return s->interrupted(s->arg) != 0;
}

int bakery__stop_check(struct wait_stop *s)
{
	if (s->why)
		return s->why;
	if (s->cancel && CMM_LOAD_SHARED(*s->cancel))
		s->why = ECANCELED;
	else if (s->intr && interrupt_stops(s))
		s->why = EINTR;
	return s->why;
}

long bakery__stop_cap(const struct wait_stop *s, bool watched, long cap_ns)
{
	if (!s || !(s->interrupted || (s->cancel && !watched)))
		return cap_ns;
	return cap_ns && cap_ns < POLL_NS ? cap_ns : POLL_NS;
}

int bakery_cancel(uint32_t *word)
{
	if (!word)
		return EINVAL;
	/* the store before the wake-up's look for sleepers (store->load),
	 * pairing with the full barrier the kernel takes between queueing a
	 * sleeper and comparing its words: a sleeper is either woken or reads
	 * the word set, and does not sleep */
	uatomic_set(word, 1);
	cmm_smp_mb();
	bakery__futex_wake_all(word);
	return 0;
}
