/* SPDX-License-Identifier: MIT */
/*
 * rm.c - `bakery rm [-f|--force] REGION LOCK`: remove a lock nobody holds
 * or waits for (bakery_lock_unlink_flags), for the region's owner; its
 * table entry is free for another name.  A lock that owes a repair (its
 * holder died inside) stays, unless forced: its next holder must be told.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "cli.h"

/* --force: set while parsing, read by remove_lock (one command a process) */
static bool force;

static int remove_lock(struct cli *c, bakery_t *b, const char *name)
{
	int err = bakery_lock_unlink_flags(b, name, force ? BAKERY_UNLINK_FORCE : 0);

	switch (err) {
	case 0:
		printf("lock removed\n");
		return 0;
	case ENOENT:
		return cli_fail(c, "no such lock");
	case EBUSY:
		return cli_fail(c, "the lock is held or waited for (or a dead holder's "
		                   "passage is left in it: `bakery recover` first)");
	case EOWNERDEAD:
		return cli_fail(c, "a holder died inside and nobody has repaired since "
		                   "(owner-died): the next holder must be told; repair under "
		                   "`bakery run` (told BAKERY_OWNER_DEAD=1), or remove it "
		                   "anyway with --force");
	case ENOTRECOVERABLE:
		return cli_fail(c, "the lock is not recoverable (a holder died and the repair "
		                   "was skipped): `bakery reset` it and repair under `bakery "
		                   "run`, or remove it anyway with --force");
	case EPERM:
		return cli_fail(c, "only the region's owner may remove its locks");
	default:
		return cli_fail(c, "%s", bakery_strerror(err));
	}
}

int cmd_rm(struct cli *c, int argc, char **argv)
{
	const struct cli_opt opts[] = {
		{ "force", 'f', NULL, &force, NULL }, { NULL, 0, NULL, NULL, NULL }
	};

	return cli_lock_command(c, argc, argv, opts, remove_lock);
}
