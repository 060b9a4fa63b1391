/* SPDX-License-Identifier: MIT */
/*
 * fd.c - the descriptors the library opens: close-on-exec, and never 0, 1
 * or 2.
 *
 * A program started with standard error closed (cron wrappers, daemons,
 * `cmd 2>&-`) gets the lowest free number from the next open(): if that is
 * the region's object, the program's first message to stderr is written
 * over the region's header.  So a descriptor that lands on 0-2 is moved
 * above (F_DUPFD_CLOEXEC) and the low number closed again, leaving the
 * standard streams as the program had them.
 */
#include "config.h"

#include <fcntl.h>
#include <unistd.h>

#include "fd.h"

/* FD itself if above 2, else a close-on-exec copy above 2 (FD is closed);
 * -1 with errno if there is no number above 2 left. */
static int fd_above_stdio(int fd)
{
	int moved, err;

	if (fd > STDERR_FILENO)
		return fd;
	moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	err = errno;
	close(fd);
	errno = err;
	return moved;
}

int bakery__fd_open(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags | O_CLOEXEC | O_NOCTTY, mode), err;

	if (fd < 0)
		return -1;
	fd = fd_above_stdio(fd);
	if (fd < 0 && (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
		err = errno;
		unlink(path);
		errno = err;
	}
	return fd;
}
