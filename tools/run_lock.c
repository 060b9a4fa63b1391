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

/* One lock call on a named lock, as O says: wait, try, or wait until the
 * deadline. */
static int named_take(bakery_lock_t *l, const struct run_opts *o)
{
	if (o->wait == RUN_WAIT_FOREVER)
		return o->shared ? bakery_rdlock(l) : bakery_lock(l);
	if (o->wait == RUN_WAIT_NONE)
		return o->shared ? bakery_tryrdlock(l) : bakery_trylock(l);
	return o->shared ? bakery_clockrdlock(l, CLOCK_MONOTONIC, &o->deadline)
	                 : bakery_clocklock(l, CLOCK_MONOTONIC, &o->deadline);
}

/* The same on a path lock. */
static int path_take(bakery_path_t *p, const struct run_opts *o)
{
	if (o->wait == RUN_WAIT_FOREVER)
		return o->shared ? bakery_path_rdlock(p) : bakery_path_lock(p);
	if (o->wait == RUN_WAIT_NONE)
		return o->shared ? bakery_path_tryrdlock(p) : bakery_path_trylock(p);
	return o->shared ? bakery_path_clockrdlock(p, CLOCK_MONOTONIC, &o->deadline)
	                 : bakery_path_clocklock(p, CLOCK_MONOTONIC, &o->deadline);
}

int run_lock_take(const struct run_lock *k, const struct run_opts *o)
{
	return k->p ? path_take(k->p, o) : named_take(k->l, o);
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
