/* SPDX-License-Identifier: MIT */
/*
 * run_file.c - the lock of a file or a directory, for `bakery run --file`
 * and `bakery flock`: the one place that knows how a path becomes a lock.
 *
 * It is the library's path lock (bakery.h, "path locks"), the lock a C
 * program takes with bakery_path_open and a Python one with
 * bakery.PathLock: named by the file's identity (device, inode, and its
 * birth time or generation), so that every path to the file names it and
 * a file that gets a deleted one's inode number inherits nothing; kept
 * with every other path lock of the user in one region
 * (/bakery-paths-UID, or the one BAKERY_PATH_REGION names), whose idle
 * entries are taken back, so that nothing is left behind per file.  A
 * missing file is created, as flock(1) does; a directory, or a file the
 * caller may not read, is locked all the same.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

/* The region bakery_path_open uses (bakery.h), for messages. */
static void path_region_name(char *buf, size_t size)
{
	const char *env = secure_getenv(BAKERY_PATH_REGION_ENV);

	if (env && *env)
		snprintf(buf, size, "%s", env);
	else
		snprintf(buf, size, BAKERY_PATH_REGION_PREFIX "%lu", (unsigned long)geteuid());
}

/* Can we see PATH (search every directory on the way)? */
static bool file_visible(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* bakery_path_open failed with ERR: a message and the exit code.  The
 * errors of the file are its open(2)'s and statx(2)'s; the others are the
 * region's, its table's or the process's. */
static int path_open_fail(struct cli *c, const struct run_opts *o, int err)
{
	char region[BAKERY_REGION_NAME_MAX + 2], owner[128];

	path_region_name(region, sizeof(region));
	if (!*o->file) {
		cli_fail(c, "an empty file name");      /* EINVAL: the file's error, as flock's */
		return o->codes.no_file;
	}
	switch (err) {
	case EAGAIN:
		return run_conflict(c, o, "lock not acquired: the lock table of the path locks is "
		                    "held by a stopped process");
	case BAKERY_ELOCKS:
		return cli_fail(c, "the region of path locks %s is full: every lock of its "
		                "table is held, waited for, or owner-died (`bakery status %s` "
		                "lists them; `bakery rm --force %s LOCK` removes an owner-died "
		                "one whose file is gone)", region, region, region);
	case EPERM:
		cli_region_owner(region, owner, sizeof(owner));
		return cli_fail(c, "the region of path locks %s belongs to %s, not to you: not "
		                "joined, since its owner could break its exclusion (remove it, or "
		                "name another with " BAKERY_PATH_REGION_ENV ")", region, owner);
	case EACCES:
		/* the file's or the region's?  A file we can see is locked
		 * whatever its mode (O_PATH): then the region refused us */
		if (!file_visible(o->file))
			break;
		/* fall through */
	case BAKERY_EBADREGION:
	case BAKERY_EVERSION:
		return cli_fail(c, "the region of path locks %s: %s", region, bakery_strerror(err));
	case EINVAL:
		/* (the path is not empty) the region's name is not one */
		return cli_fail(c, "the region of path locks %s, from " BAKERY_PATH_REGION_ENV
		                ", is not a region name (up to 200 characters after an "
		                "optional leading '/', none of them '/')", region);
	case ENOMEM:
	case EMFILE:
	case ENFILE:
	case ENOSPC:
		return cli_fail(c, "%s", bakery_strerror(err));
	default:
		break;
	}
	cli_fail(c, "%s", bakery_strerror(err));
	return o->codes.no_file;
}

int run_file_open(struct cli *c, const struct run_opts *o, struct run_lock *k)
{
	int err;

	memset(k, 0, sizeof(*k));
	do
		err = bakery_path_open(o->file, BAKERY_CREATE, &k->p);
	while (run_retry(o, err));
	if (err)
		return path_open_fail(c, o, err);
	bakery_path_info(k->p, &k->path);
	k->region = k->path.region;
	k->name = k->path.lock;
	if (o->verbose)
		cli_say(c, "the path lock %s of %s", k->name, k->region);
	return 0;
}
