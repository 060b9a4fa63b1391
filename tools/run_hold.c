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

bool run_deadline_passed(const struct run_opts *o)
{
	struct timespec now;

	if (o->wait != RUN_WAIT_FOR)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > o->deadline.tv_sec ||
	       (now.tv_sec == o->deadline.tv_sec && now.tv_nsec >= o->deadline.tv_nsec);
}

bool run_retry(const struct run_opts *o, int err)
{
	const struct timespec pause = { 0, 20000000L };

	if (err != EAGAIN || o->wait == RUN_WAIT_NONE || run_deadline_passed(o))
		return false;
	nanosleep(&pause, NULL);
	return true;
}

static int acquire(const struct run_lock *k, const struct run_opts *o)
{
	int err;

	do
		err = run_lock_take(k, o);
	while (run_retry(o, err));
	return err;
}

static void *holder_main(void *arg)
{
	struct run_holder *h = arg;
	int err = acquire(h->k, h->o);

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
	/* the library's thread-exit path: owner died (a writer that did
	 * not run its command leaves the mark it found, as a writer must
	 * not unlock without bakery_consistent; a reader never repairs) */
	if (h->verdict == RUN_ABANDON ||
	    (h->verdict == RUN_GIVE_BACK && err == EOWNERDEAD && !h->o->shared))
		return NULL;
	/* a reader cannot repair (EPERM): the owner-died mark stays for the
	 * next writer */
	if (err == EOWNERDEAD && !h->o->shared && h->verdict == RUN_RELEASE)
		run_lock_consistent(h->k);
	run_lock_unlock(h->k);
	return NULL;
}

int run_hold_start(struct run_holder *h, const struct run_lock *k, const struct run_opts *o)
{
	sigset_t block, old;
	int err;

	h->k = k;
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
