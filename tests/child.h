/* SPDX-License-Identifier: MIT */
/*
 * child.h - waiting for a child process with a time limit, shared by the
 * test kits (tests/unit/unit.c, tests/crash/crashkit.c,
 * tests/hostile/hostile.c).
 */
#ifndef BAKERY_TEST_CHILD_H
#define BAKERY_TEST_CHILD_H

#include <sys/types.h>

/* Wait at most TIMEOUT seconds for PID; SIGKILL it after that.  Its exit
 * status, 128 + the signal that ended it, CHILD_KILLED if the time ran out,
 * or CHILD_LOST if waitpid failed (errno says why). */
#define CHILD_KILLED (-1)
#define CHILD_LOST   (-2)
int child_reap(pid_t pid, double timeout);

#endif
