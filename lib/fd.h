/* SPDX-License-Identifier: MIT */
/*
 * fd.h - fd.c: the descriptors the library opens.
 */
#ifndef BAKERY_FD_H
#define BAKERY_FD_H

#include "private.h"

/*
 * open(PATH, FLAGS | O_CLOEXEC | O_NOCTTY, MODE), moved to a descriptor
 * above 2 if it landed on 0, 1 or 2 (a program started with standard
 * streams closed would otherwise print its messages into our object).
 * The descriptor, or -1 with errno set.  With O_CREAT | O_EXCL, a file
 * made but left without a descriptor (no number above 2 free) is removed
 * again.
 */
BAKERY_HIDDEN int bakery__fd_open(const char *path, int flags, mode_t mode);

#endif /* BAKERY_FD_H */
