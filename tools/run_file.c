/* SPDX-License-Identifier: MIT */
/*
 * run_file.c - the lock of a file or a directory, for `bakery run --file`
 * and `bakery flock`: the one place that knows how a path becomes a lock.
 *
 * Every path to the same file (links, relative or absolute) names the
 * same lock: the lock is found by the file's identity, its device and
 * inode.  The file is created if missing, as flock(1) does; a directory,
 * or a file the caller may not read, is locked all the same (only its
 * identity is needed).  Today each file has a region of its own, named
 * after that identity (/bakery-file-DEV-INO, lock "file").
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

#define FILE_LOCK_NAME "file"

/* The identity of PATH, created (empty) if missing: 0 or an errno. */
static int file_identity(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CREAT | O_NOCTTY | O_CLOEXEC, 0666);
	int err = 0;

	if (fd < 0)
		/* a directory (EISDIR), or a file we may not read: its
		 * identity is enough */
		return stat(path, st) == 0 ? 0 : errno;
	if (fstat(fd, st) < 0)
		err = errno;
	close(fd);
	return err;
}

int run_file_open(struct cli *c, struct run_opts *o, bakery_t **b, bakery_lock_t **l)
{
	struct stat st;
	int err = file_identity(o->file, &st);

	if (err) {
		fprintf(stderr, "bakery: %s: %s: %s\n", c->cmd, o->file, strerror(err));
		return o->codes.no_file;
	}
	snprintf(o->region_buf, sizeof(o->region_buf), "/bakery-file-%llx-%llx",
	         (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	o->region = o->region_buf;
	o->lock = FILE_LOCK_NAME;
	if (!*c->what)          /* flock names the file in its messages */
		cli_set_what(c, o->region, o->lock);
	return run_named_open(c, o, b, l);
}
