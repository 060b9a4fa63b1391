/* SPDX-License-Identifier: MIT */
/*
 * rm.c - `bakery rm REGION LOCK`: remove a lock nobody holds or waits for
 * (bakery_lock_unlink), for the region's owner; its table entry is free
 * for another name.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "cli.h"

static int remove_lock(struct cli *c, bakery_t *b, const char *name)
{
	int err = bakery_lock_unlink(b, name);

	switch (err) {
	case 0:
		printf("lock removed\n");
		return 0;
	case ENOENT:
		return cli_fail(c, "no such lock");
	case EBUSY:
		return cli_fail(c, "the lock is held or waited for (or a dead holder's "
		                   "passage is left in it: `bakery recover` first)");
	case EPERM:
		return cli_fail(c, "only the region's owner may remove its locks");
	default:
		return cli_fail(c, "%s", bakery_strerror(err));
	}
}

int cmd_rm(struct cli *c, int argc, char **argv)
{
	return cli_lock_command(c, argc, argv, remove_lock);
}
