/* SPDX-License-Identifier: MIT */
/*
 * run_hold.c - `bakery run`'s lock thread: it takes the lock, holds it
 * while the main thread runs the command, then either unlocks or ends
 * without unlocking.
 *
 * Why a thread: lock ownership and the liveness proof are per thread in
 * libbakery.  A thread that ends while holding a lock is a dead owner
 * (bakery.h, Caveats): the kernel marks its token, survivors recover its
 * slot and the next acquirer gets EOWNERDEAD.  Ending this thread is how
 * the wrapper hands on "the protected state may be broken" without
 * dying itself, so that it can still exit with the command's status.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <time.h>

#include "run.h"

static int acquire(bakery_lock_t *l, const struct run_opts *o)
{
	struct timespec at;
	time_t whole = (time_t)o->timeout;

	if (o->wait == RUN_WAIT_FOREVER)
		return o->shared ? bakery_rdlock(l) : bakery_lock(l);
	if (o->wait == RUN_WAIT_NONE)
		return o->shared ? bakery_tryrdlock(l) : bakery_trylock(l);
	clock_gettime(CLOCK_MONOTONIC, &at);
	at.tv_nsec += (long)((o->timeout - (double)whole) * 1e9);
	at.tv_sec += whole + at.tv_nsec / 1000000000L;
	at.tv_nsec %= 1000000000L;
	return o->shared ? bakery_clockrdlock(l, CLOCK_MONOTONIC, &at)
	                 : bakery_clocklock(l, CLOCK_MONOTONIC, &at);
}

static void *holder_main(void *arg)
{
	struct run_holder *h = arg;
	int err = acquire(h->l, h->o);

	pthread_mutex_lock(&h->mu);
	h->taken = true;
	h->err = err;
	pthread_cond_broadcast(&h->cv);
	if (err != 0 && err != EOWNERDEAD) {
		pthread_mutex_unlock(&h->mu);
		return NULL;
	}
	while (!h->decided)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
	if (h->verdict == RUN_ABANDON)
		return NULL;    /* the library's thread-exit path: owner died */
	/* a reader cannot repair (EPERM): the owner-died mark stays for the
	 * next writer */
	if (err == EOWNERDEAD && !h->o->shared)
		bakery_consistent(h->l);
	bakery_unlock(h->l);
	return NULL;
}

int run_hold_start(struct run_holder *h, bakery_lock_t *l, const struct run_opts *o)
{
	sigset_t block, old;
	int err;

	h->l = l;
	h->o = o;
	h->taken = h->decided = false;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	/* the signals meant for the command go to the main thread */
	run_forwarded_set(&block);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	err = pthread_create(&h->thread, NULL, holder_main, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return err;
	pthread_mutex_lock(&h->mu);
	while (!h->taken)
		pthread_cond_wait(&h->cv, &h->mu);
	err = h->err;
	pthread_mutex_unlock(&h->mu);
	if (err != 0 && err != EOWNERDEAD)
		pthread_join(h->thread, NULL);
	return err;
}

void run_hold_finish(struct run_holder *h, enum run_verdict verdict)
{
	pthread_mutex_lock(&h->mu);
	h->verdict = verdict;
	h->decided = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->thread, NULL);
}
