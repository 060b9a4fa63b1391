/* SPDX-License-Identifier: MIT */
/*
 * reset.c - `bakery reset REGION LOCK`: make a not-recoverable lock usable
 * again (bakery_lock_reset), for the region's owner.  The next holder is
 * told the previous one died (BAKERY_OWNER_DEAD=1 under `bakery run`).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int reset_lock(struct cli *c, bakery_t *b, const char *name)
{
	bakery_lock_t *l;
	int err;

	err = bakery_lock_lookup(b, name, BAKERY_ALGO_DEFAULT, &l);
	if (err == ENOENT)
		return cli_fail(c, "no such lock");
	if (err)
		return cli_fail(c, "%s", bakery_strerror(err));
	err = bakery_lock_reset(l);
	bakery_lock_close(l);
	if (err == EINVAL)
		return cli_fail(c, "the lock is not in the not-recoverable state; nothing to reset");
	if (err == EPERM)
		return cli_fail(c, "only the region's owner may reset its locks");
	if (err)
		return cli_fail(c, "%s", bakery_strerror(err));
	printf("lock reset: the next holder is told its previous holder died\n");
	return 0;
}

int cmd_reset(struct cli *c, int argc, char **argv)
{
	return cli_lock_command(c, argc, argv, NULL, reset_lock);
}
