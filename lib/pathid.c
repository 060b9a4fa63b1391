/* SPDX-License-Identifier: MIT */
/*
 * pathid.c - what names a path lock: the identity of the file a path
 * names, made of what every process that looks at the file finds the same.
 *
 * The device and the inode number name the file while it exists, whatever
 * its paths (links, renames).  Once it is deleted the inode number is free
 * for a new file (ext4 hands it to the very next one), so a third part
 * tells the two apart: the birth time, where statx(2) reports one (ext4
 * with large inodes, XFS v5, btrfs, tmpfs...), costs nothing more; else the
 * inode generation (FS_IOC_GETVERSION: ext2/3, ext4 with small inodes),
 * which needs the file opened; else nothing.  Which one is a property of
 * the file system, never of the caller: two processes that looked at one
 * file with different rights must not name two locks.  So a caller that
 * may not open a file whose generation is needed gets the error, not a
 * name without it.
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd.h"
#include "pathid.h"

#define ID_MASK (STATX_TYPE | STATX_INO | STATX_BTIME)
/* a file that is opened only to be looked at: no controlling terminal,
 * no wait on a FIFO, nothing inherited by exec */
#define LOOK_FLAGS (O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)

/* statx(2) has no EPERM of its own: that is a seccomp profile refusing it
 * (older container runtimes did).  Not stat(2) instead: without the birth
 * time the same file would get another name, and another lock, than in a
 * process that may call statx. */
static int id_statx(int dirfd, const char *path, int flags, struct statx *sx)
{
	if (statx(dirfd, path, flags, ID_MASK, sx) == 0)
		return 0;
	return errno == EPERM ? ENOTSUP : errno;
}

static void id_fill(const struct statx *sx, struct path_id *id)
{
	id->major = sx->stx_dev_major;
	id->minor = sx->stx_dev_minor;
	id->ino = sx->stx_ino;
	id->stamp = BAKERY_PATH_STAMP_NONE;
	id->stamp_value = 0;
	if (sx->stx_mask & STATX_BTIME) {
		id->stamp = BAKERY_PATH_STAMP_BIRTH;
		/* unsigned: a birth before 1970 wraps, the same way everywhere */
		id->stamp_value = (uint64_t)sx->stx_btime.tv_sec * UINT64_C(1000000000) +
		                  sx->stx_btime.tv_nsec;
	}
}

/* The generation of the file open as FD, where there is no birth time.
 * The kernel writes an int: the buffer has room for a long all the same,
 * the request's declared size. */
static int id_generation(int fd, struct path_id *id)
{
	unsigned int gen[sizeof(long) / sizeof(unsigned int)] = { 0 };

	if (ioctl(fd, FS_IOC_GETVERSION, gen) == 0) {
		id->stamp = BAKERY_PATH_STAMP_GENERATION;
		id->stamp_value = gen[0];
		return 0;
	}
	/* a file system that keeps no generation: the inode number alone */
	if (errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS)
		return 0;
	return errno;
}

/* The identity of the file open as FD. */
static int id_of_fd(int fd, struct path_id *id)
{
	struct statx sx;
	int err = id_statx(fd, "", AT_EMPTY_PATH, &sx);

	if (err)
		return err;
	id_fill(&sx, id);
	return id->stamp == BAKERY_PATH_STAMP_NONE ? id_generation(fd, id) : 0;
}

/* Open PATH (creating it with O_CREAT) and take the identity of what was
 * opened: the file itself, even if the path changes meanwhile. */
static int id_by_open(const char *path, int oflags, struct path_id *id)
{
	int fd = bakery__fd_open(path, LOOK_FLAGS | oflags, 0666);   /* never 0-2 */
	int err;

	if (fd < 0)
		return errno;
	err = id_of_fd(fd, id);
	close(fd);
	return err;
}

int bakery__path_id(const char *path, bool create, struct path_id *id)
{
	struct statx sx;
	int err = id_statx(AT_FDCWD, path, 0, &sx);

	if (err == ENOENT && create)
		return id_by_open(path, O_CREAT, id);
	if (err)
		return err;
	id_fill(&sx, id);
	/* no birth time: the generation, from the file opened */
	return id->stamp == BAKERY_PATH_STAMP_NONE ? id_by_open(path, 0, id) : 0;
}

void bakery__path_id_name(const struct path_id *id, char *name)
{
	/* at most 5 + 8 + 1 + 8 + 1 + 16 + 2 + 16 = 57 characters */
	int n = snprintf(name, BAKERY_LOCK_NAME_MAX + 1, BAKERY_PATH_LOCK_PREFIX "%" PRIx32 ".%" PRIx32
	                 ":%" PRIx64 ":", id->major, id->minor, id->ino);

	if (id->stamp == BAKERY_PATH_STAMP_BIRTH)
		snprintf(name + n, BAKERY_LOCK_NAME_MAX + 1 - n, "b%" PRIx64, id->stamp_value);
	else if (id->stamp == BAKERY_PATH_STAMP_GENERATION)
		snprintf(name + n, BAKERY_LOCK_NAME_MAX + 1 - n, "g%" PRIx64, id->stamp_value);
	else
		snprintf(name + n, BAKERY_LOCK_NAME_MAX + 1 - n, "-");
}
