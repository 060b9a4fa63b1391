/* SPDX-License-Identifier: MIT */
/*
 * pathid.h - pathid.c: a file's identity, and the name of its path lock.
 */
#ifndef BAKERY_PATHID_H
#define BAKERY_PATHID_H

#include "private.h"

struct path_id {
	uint32_t major, minor;     /* the file's device */
	uint64_t ino;
	enum bakery_path_stamp stamp;
	uint64_t stamp_value;      /* birth time in ns, or generation */
};

/* The identity of the file or directory PATH names (symbolic links
 * followed); with CREATE, a missing regular file is created first.  0, or
 * the errno of statx(2), open(2) or ioctl(2). */
BAKERY_HIDDEN int bakery__path_id(const char *path, bool create, struct path_id *id);

/* ID's lock name (BAKERY_PATH_LOCK_PREFIX...) into NAME, which has room
 * for BAKERY_LOCK_NAME_MAX + 1 bytes. */
BAKERY_HIDDEN void bakery__path_id_name(const struct path_id *id, char *name);

#endif /* BAKERY_PATHID_H */
