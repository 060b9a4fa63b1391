/* SPDX-License-Identifier: MIT */
/*
 * seccomp-filter.h - one system call refused with a chosen errno, as a
 * container's seccomp profile or an old kernel refuses it: a raw classic
 * BPF filter, no library.  seccomp_refuse() installs it in the calling
 * process (after PR_SET_NO_NEW_PRIVS: no privilege needed), for every
 * thread it starts and every program it executes from then on.  For
 * seccomp-run and the tests that must refuse a call part-way through.
 */
#ifndef BAKERY_TEST_SECCOMP_FILTER_H
#define BAKERY_TEST_SECCOMP_FILTER_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>

#if defined(__x86_64__)
#define THIS_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define THIS_ARCH AUDIT_ARCH_RISCV64
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define THIS_ARCH AUDIT_ARCH_PPC64LE
#elif defined(__s390x__)
#define THIS_ARCH AUDIT_ARCH_S390X
#endif

/*
 * Refuse system call NR with ERR; allow everything else.  0, or the errno of
 * the refusal to install it (EINVAL or ENOSYS: no seccomp filter here;
 * ENOTSUP: an architecture this file does not know).  A call made through
 * another ABI (x32, a 32-bit personality) has other numbers: it is let
 * through, as none of the library's is made that way.
 */
static inline int seccomp_refuse(long nr, int err)
{
#ifdef THIS_ARCH
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return errno;
	return 0;
#else
	(void)nr;
	(void)err;
	return ENOTSUP;
#endif
}

#endif /* BAKERY_TEST_SECCOMP_FILTER_H */
