/* SPDX-License-Identifier: MIT */
/*
 * run_lock.c - the calls on a job's lock, whichever it is: a named lock of
 * a region (`bakery run REGION LOCK`) or the path lock of a file or
 * directory (`bakery run --file`, `bakery flock`), with the same returns.
 */
#include "config.h"

#include <errno.h>
#include <time.h>

#include "run.h"

/* The options of one lock call as O says: wait, try, or wait until the
 * deadline; a try or a deadline that ends while every slot of the region
 * is taken says so (BAKERY_ESLOTS), apart from a busy lock. */
static struct bakery_acquire_opts take_opts(const struct run_opts *o)
{
	struct bakery_acquire_opts a = { .flags = BAKERY_ACQUIRE_ESLOTS };

	if (o->shared)
		a.flags |= BAKERY_ACQUIRE_SHARED;
	if (o->wait == RUN_WAIT_NONE)
		a.flags |= BAKERY_ACQUIRE_TRY;
	if (o->wait == RUN_WAIT_FOR) {
		a.clock = CLOCK_MONOTONIC;
		a.deadline = &o->deadline;
	}
	return a;
}

int run_lock_take(const struct run_lock *k, const struct run_opts *o)
{
	const struct bakery_acquire_opts a = take_opts(o);

	return k->p ? bakery_path_acquire(k->p, &a) : bakery_acquire(k->l, &a);
}

int run_lock_unlock(const struct run_lock *k)
{
	return k->p ? bakery_path_unlock(k->p) : bakery_unlock(k->l);
}

int run_lock_consistent(const struct run_lock *k)
{
	return k->p ? bakery_path_consistent(k->p) : bakery_consistent(k->l);
}

unsigned run_lock_units(const struct run_lock *k)
{
	unsigned units = 1;

	if (!k->p)
		bakery_lock_holders(k->l, &units);
	return units;
}

int run_lock_info(const struct run_lock *k, struct bakery_lock_info *li)
{
	unsigned index;
	int err;

	if (k->p)
		return bakery_path_lock_info(k->p, li);
	if ((err = bakery_lock_index(k->l, &index)))
		return err;
	return bakery_lock_info(k->b, index, li);
}

void run_lock_close(struct run_lock *k)
{
	if (k->p)
		bakery_path_close(k->p);
	if (k->l)
		bakery_lock_close(k->l);
	if (k->b)
		bakery_close(k->b);
	k->p = NULL;
	k->l = NULL;
	k->b = NULL;
}
