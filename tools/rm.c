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
	const struct cli_opt opts[] = { { NULL, 0, NULL, NULL } };
	struct cli_args a;
	bakery_t *b;
	int err;

	if ((err = cli_parse(c, argc, argv, opts, NULL, 2, false, &a)))
		return err < 0 ? 0 : err;
	if ((err = cli_region_arg(c, a.pos[0])))
		return err;
	cli_set_what(c, a.pos[0], a.pos[1]);
	if ((err = cli_open(c, a.pos[0], 0, NULL, &b)))
		return err;
	err = remove_lock(c, b, a.pos[1]);
	bakery_close(b);
	return err;
}
