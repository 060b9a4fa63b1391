/* SPDX-License-Identifier: MIT */
/*
 * seccomp-run.c - run a command in a process where one system call is
 * refused with a chosen errno, as a container's seccomp profile or an old
 * kernel refuses it:
 *
 *   seccomp-run SYSCALL ERRNO COMMAND [ARG...]
 *
 * SYSCALL is futex_waitv or membarrier; ERRNO a name (ENOSYS, EPERM,
 * EINVAL, EACCES) or a number.  The filter (raw classic BPF, no library)
 * answers that call, on this architecture, with the errno and lets every
 * other call through; it is installed after PR_SET_NO_NEW_PRIVS, so no
 * privilege is needed, and inherited by everything COMMAND runs.  Before
 * the exec the launcher calls the refused system call itself and checks the
 * answer, so that a filter that did not take can never make a row of the
 * matrix pass unchecked.
 *
 * Exit status: COMMAND's; 77 (skip) with the reason printed where seccomp
 * filters are not available (a kernel without CONFIG_SECCOMP_FILTER, an
 * architecture this file does not know); 99 on a usage or setup error.
 */
#include "config.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp-filter.h"

#define SKIP 77
#define SETUP_FAILED 99

/* futex_waitv has one number on every architecture (Linux 5.16) */
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

struct call {
	const char *name;
	long nr;
};

static const struct call calls[] = {
	{ "futex_waitv", SYS_futex_waitv },
	{ "membarrier", SYS_membarrier },
};

static const struct {
	const char *name;
	int value;
} errnos[] = {
	{ "ENOSYS", ENOSYS }, { "EPERM", EPERM }, { "EINVAL", EINVAL }, { "EACCES", EACCES },
};

static void usage(void)
{
	fprintf(stderr, "usage: seccomp-run futex_waitv|membarrier ERRNO COMMAND [ARG...]\n");
	exit(SETUP_FAILED);
}

static long call_number(const char *name)
{
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(calls[i].name, name))
			return calls[i].nr;
	usage();
	return -1;
}

static int errno_value(const char *name)
{
	char *end;
	long v;

	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (!strcmp(errnos[i].name, name))
			return errnos[i].value;
	v = strtol(name, &end, 10);
	if (*name == '\0' || *end != '\0' || v <= 0 || v > SECCOMP_RET_DATA)
		usage();
	return (int)v;
}

/* Make the refused call with harmless arguments: what does it answer? */
static int probe(long nr)
{
	long r = nr == SYS_membarrier ? syscall(nr, MEMBARRIER_CMD_QUERY, 0, 0)
	                              : syscall(nr, NULL, 0, 0, NULL, 0);

	return r < 0 ? errno : 0;
}

int main(int argc, char **argv)
{
	long nr;
	int err, got;

	if (argc < 4)
		usage();
	nr = call_number(argv[1]);
	err = errno_value(argv[2]);
	if ((got = seccomp_refuse(nr, err))) {
		printf("SKIP: no seccomp filter here: %s\n", strerror(got));
		return got == EINVAL || got == ENOSYS || got == ENOTSUP ? SKIP : SETUP_FAILED;
	}
	if ((got = probe(nr)) != err) {
		fprintf(stderr, "seccomp-run: %s answers %s under the filter, not %s\n", argv[1],
		        got ? strerror(got) : "success", strerror(err));
		return SETUP_FAILED;
	}
	fflush(NULL);
	execvp(argv[3], argv + 3);
	fprintf(stderr, "seccomp-run: %s: %s\n", argv[3], strerror(errno));
	return SETUP_FAILED;
}
