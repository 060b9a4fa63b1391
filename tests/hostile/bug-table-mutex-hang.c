/* SPDX-License-Identifier: MIT */
/*
 * bug-table-mutex-hang.c - regression test (it was the reproducer of a fixed
 * library bug: the table mutex wait is now bounded; EAGAIN, or
 * BAKERY_EBADREGION where the word is proven forged).
 *
 * Creating a lock took the region's table mutex (now the table's liveness
 * token) with pthread_mutex_lock, which waits for ever.  If the owner word
 * names a thread whose
 * death the kernel never marked (a forged or corrupted word: here the pid of
 * a process that has exited, with no FUTEX_OWNER_DIED bit), every later
 * bakery_lock_open of a new name blocks for ever, in every process, and so
 * does `bakery run` with a new lock name.  The fuzzer meets the same
 * (fuzz-region.c avoids it with table_token_usable()).
 *
 * bakery_lock_open documents no blocking and no such wait.  Possible fixes:
 *   - pthread_mutex_timedlock in steps; while it times out, check the owner
 *     word: a TID above the kernel's pid limit is a forgery
 *     (BAKERY_EBADREGION at once); otherwise give up after a bound with
 *     BAKERY_EBADREGION (entries are created in microseconds, so a long
 *     hold is no honest one);
 *   - or create entries without a mutex: claim a FREE entry by CAS on its
 *     state (FREE -> a "creating" value carrying the creator's slot), fill
 *     it, publish READY; a dead creator's entry is reclaimed through its
 *     slot's liveness token like any other dead slot's state.
 *
 * The word forged here names no thread the library can prove gone (no
 * record on the token's line says that TID is one of our PID namespace):
 * for all it knows, a creator in another PID namespace holds the table,
 * stopped.  bakery_lock_open answers EAGAIN after its bound (2 s).
 *
 * Exit status: 0 if bakery_lock_open returns within 5 s, 1 if not.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hostile.h"

static char region[TK_NAME_SIZE];

static int victim(void *unused)
{
	bakery_t *b;
	bakery_lock_t *l;
	int err;

	if (bakery_open(region, 0, NULL, &b))
		return 10;
	err = bakery_lock_open(b, "new", BAKERY_ALGO_DEFAULT, &l);
	return err == 0 || err == EAGAIN || err == BAKERY_EBADREGION ? 0 : 11;
}

static int quit(void *unused)
{
	return 0;
}

int main(void)
{
	bakery_t *b = h_region(region, "tmutex", 4, 2);
	struct raw raw;
	pid_t gone = tk_fork(quit, NULL);

	bakery_close(b);
	tk_reap(gone, 10);
	raw_map(&raw, region);
	/* an owner that has exited, its death never marked */
	*raw_token(&raw, 2u * raw.nslots) = (uint32_t)gone;
	raw_unmap(&raw);
	return h_survives("bakery_lock_open of a new name, table mutex owned by an exited pid",
	                  victim, NULL, 5);
}
