# SPDX-License-Identifier: MIT
# rules for tests/crash (included from the top Makefile.am)
# Crash recovery and abort tests: SIGKILL at every crash point of the test
# build, recovery latency, idempotent recovery, abort, thread death, PID
# reuse and PID namespaces, and the chaos harness (crash-chaos, chaos-*).
# crashkit.c/h: helpers shared by all of them; scene.c/h: the stage of the
# Check tests.
# The crash kit (crashkit.c) serves every program here; the Check stage
# (scene.c) only the Check suites.  Every program links the kits and the
# library by default (tests/local.mk); those below that name an _LDADD
# need the test build's crash points.
check_LTLIBRARIES += tests/crash/libcrash.la
tests_crash_libcrash_la_SOURCES = tests/crash/crashkit.c tests/crash/crashkit.h

if HAVE_CHECK

crash_check_tests = \
	tests/crash/crash-points \
	tests/crash/crash-recover \
	tests/crash/crash-abort \
	tests/crash/crash-modes \
	tests/crash/crash-threads \
	tests/crash/crash-bias

check_PROGRAMS += $(crash_check_tests)
TESTS += $(crash_check_tests)

check_LTLIBRARIES += tests/crash/libscene.la
tests_crash_libscene_la_SOURCES = tests/crash/scene.c tests/crash/scene.h

tests_crash_crash_points_LDADD = $(bakery_test_ldadd_tb)
tests_crash_crash_recover_LDADD = $(bakery_test_ldadd_tb)
tests_crash_crash_abort_LDADD = $(bakery_test_ldadd_tb)
tests_crash_crash_threads_LDADD = $(bakery_test_ldadd_tb)
tests_crash_crash_modes_LDADD = $(bakery_test_ldadd_tb)
tests_crash_crash_bias_LDADD = $(bakery_test_ldadd_tb)

endif

# Programs without Check: they measure and print figures (recovery latency,
# chaos) or may skip (PID namespaces, exit 77).
crash_plain_tests = \
	tests/crash/crash-latency \
	tests/crash/crash-pidns \
	tests/crash/crash-chaos

check_PROGRAMS += $(crash_plain_tests)
TESTS += $(crash_plain_tests)

tests_crash_crash_chaos_LDADD = $(bakery_test_ldadd_tb)

# The chaos harness's other programs, one concern each (crash-chaos above:
# SIGKILL and SIGSTOP of processes).  Short by default; BAKERY_CHAOS_SECONDS
# makes each a soak of that many seconds.
chaos_tests = \
	tests/crash/chaos-cancel \
	tests/crash/chaos-dlopen \
	tests/crash/chaos-regions \
	tests/crash/chaos-nested

check_PROGRAMS += $(chaos_tests)
TESTS += $(chaos_tests)

tests_crash_chaos_cancel_LDADD = $(bakery_test_ldadd_tb)
tests_crash_chaos_regions_LDADD = $(bakery_test_ldadd_tb)
tests_crash_chaos_nested_LDADD = $(bakery_test_ldadd_tb)
# chaos-dlopen dlopen()s the built shared library: it must not link it
tests_crash_chaos_dlopen_LDADD = $(BAKERY_LIBS)

# Reproducers of library bugs, fixed: they stay as regression tests.
crash_bug_tests = \
	tests/crash/bug-recover-count

check_PROGRAMS += $(crash_bug_tests)
TESTS += $(crash_bug_tests)

tests_crash_bug_recover_count_LDADD = $(bakery_test_ldadd_tb)
