# SPDX-License-Identifier: MIT
# Hostile and careless participants, permissions and misuse.
#   test_*  Check suites: what the library does with garbage in its registers
#           and tables, forged tokens, misuse of the API, other users.
#   bug-*   reproducers of library bugs, each file's opening comment says
#           which.  Fixed ones stay as regression tests (hostile_fixed);
#           open ones are expected failures (hostile_bugs, XFAIL_TESTS):
#           once one passes it XPASSes, which fails `make check`, and moves
#           to hostile_fixed.
# hostile.c: the helpers every program here shares
check_LTLIBRARIES += tests/hostile/libhostile.la
tests_hostile_libhostile_la_SOURCES = tests/hostile/hostile.c tests/hostile/hostile.h

# the sanitizer and valgrind pass of CI (run by .ci/run, not by make check)
EXTRA_DIST += tests/ci-hardening.sh
if HAVE_CHECK
hostile_suites = \
	tests/hostile/test_registers \
	tests/hostile/test_tables \
	tests/hostile/test_tokens \
	tests/hostile/test_misuse \
	tests/hostile/test_perm \
	tests/hostile/test_shm_dir \
	tests/hostile/test_squat
check_PROGRAMS += $(hostile_suites)
TESTS += $(hostile_suites)
endif

# Fixed: they stay as regression tests.
hostile_fixed = \
	tests/hostile/bug-token-kind \
	tests/hostile/bug-table-mutex-hang \
	tests/hostile/bug-jayanti-abort \
	tests/hostile/bug-jayanti-abort-live \
	tests/hostile/bug-robust-list \
	tests/hostile/bug-shrink-sigbus
# Known limits of the design (none at present): listed here, they are
# expected failures.
hostile_bugs =
check_PROGRAMS += $(hostile_fixed) $(hostile_bugs)
TESTS += $(hostile_fixed) $(hostile_bugs)
XFAIL_TESTS += $(hostile_bugs)

# crash points: the test build
tests_hostile_bug_jayanti_abort_LDADD = $(bakery_test_ldadd_tb)
