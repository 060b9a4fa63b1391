# SPDX-License-Identifier: MIT
# What the kernel lets the library use: PID namespaces, and the kernel and
# container matrix.
#   seccomp-run     the launcher of the matrix: one system call refused
#                   with a chosen errno, then exec (no libseccomp)
#   pidns-stopped   a participant of another PID namespace stopped while it
#                   holds the lock table or revokes a slot: waited for,
#                   never taken for corruption (skips, 77, without PID
#                   namespaces)
#   wait-cost       the CPU a blocked waiter burns, and the holder's death
#                   reaching it (run by the matrix, plain and filtered)
#   idle-slots      every slot owned by an idle thread: reclaimed where
#                   membarrier(2) works, BAKERY_ESLOTS where it is refused
#   exit-fences     exits without a barrier among processes registered for
#                   the expedited membarrier, fenced once a process that is
#                   refused it joins (through seccomp-run)
#   fork-robust     a child forked where set_robust_list is refused has no
#                   robust list: ENOTSUP, never a lock whose holder's death
#                   goes unseen
#   refused-calls   flock and statx refused by a profile: documented errors
#   matrix-*.sh     one row of the matrix each (matrix.sh says what runs)
#   seccomp-filter.h  the filter itself (seccomp-run, fork-robust)
# They need the test build (stop points, BAKERY_TEST_PARK_AHEAD) and the
# crash kit (children in namespaces, process states).
check_PROGRAMS += tests/kernel/seccomp-run tests/kernel/wait-cost tests/kernel/idle-slots \
	tests/kernel/pidns-stopped tests/kernel/exit-fences tests/kernel/fork-robust \
	tests/kernel/refused-calls
tests_kernel_seccomp_run_LDADD =
tests_kernel_wait_cost_LDADD = $(bakery_test_ldadd_tb)
tests_kernel_idle_slots_LDADD = $(bakery_test_ldadd_tb)
tests_kernel_pidns_stopped_LDADD = $(bakery_test_ldadd_tb)
tests_kernel_exit_fences_LDADD = $(bakery_test_ldadd_tb)
tests_kernel_fork_robust_LDADD = $(bakery_test_ldadd_tb)
tests_kernel_refused_calls_LDADD = $(bakery_test_ldadd_tb)

kernel_matrix = \
	tests/kernel/matrix-waitv-enosys.sh \
	tests/kernel/matrix-waitv-eperm.sh \
	tests/kernel/matrix-membarrier-enosys.sh \
	tests/kernel/matrix-membarrier-eperm.sh

TESTS += tests/kernel/pidns-stopped tests/kernel/idle-slots tests/kernel/exit-fences \
	tests/kernel/fork-robust tests/kernel/refused-calls \
	$(kernel_matrix)
EXTRA_DIST += tests/kernel/matrix.sh $(kernel_matrix) tests/kernel/seccomp-filter.h
