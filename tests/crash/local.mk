# SPDX-License-Identifier: MIT
# rules for tests/crash (included from the top Makefile.am)
# Crash recovery and abort tests: SIGKILL at every crash point of the test
# build, recovery latency, idempotent recovery, abort, thread death, PID
# reuse and PID namespaces, and the chaos harness (crash-chaos, chaos-*).
# crashkit.c/h: helpers shared by all of them; scene.c/h: the stage of the
# Check tests.
crash_kit = tests/crash/crashkit.c tests/crash/crashkit.h tests/common/tk.c tests/common/tk.h \
	tests/common/occupancy.h

if HAVE_CHECK

crash_check_tests = \
	tests/crash/crash-points \
	tests/crash/crash-recover \
	tests/crash/crash-abort \
	tests/crash/crash-threads

check_PROGRAMS += $(crash_check_tests)
TESTS += $(crash_check_tests)

crash_scene = tests/crash/scene.c tests/crash/scene.h $(crash_kit)

tests_crash_crash_points_SOURCES = tests/crash/crash-points.c $(crash_scene)
tests_crash_crash_points_CPPFLAGS = $(bakery_test_cppflags)
tests_crash_crash_points_CFLAGS = $(bakery_test_cflags)
tests_crash_crash_points_LDADD = $(bakery_test_ldadd_tb)

tests_crash_crash_recover_SOURCES = tests/crash/crash-recover.c $(crash_scene)
tests_crash_crash_recover_CPPFLAGS = $(bakery_test_cppflags)
tests_crash_crash_recover_CFLAGS = $(bakery_test_cflags)
tests_crash_crash_recover_LDADD = $(bakery_test_ldadd_tb)

tests_crash_crash_abort_SOURCES = tests/crash/crash-abort.c $(crash_scene)
tests_crash_crash_abort_CPPFLAGS = $(bakery_test_cppflags)
tests_crash_crash_abort_CFLAGS = $(bakery_test_cflags)
tests_crash_crash_abort_LDADD = $(bakery_test_ldadd_tb)

tests_crash_crash_threads_SOURCES = tests/crash/crash-threads.c $(crash_scene)
tests_crash_crash_threads_CPPFLAGS = $(bakery_test_cppflags)
tests_crash_crash_threads_CFLAGS = $(bakery_test_cflags)
tests_crash_crash_threads_LDADD = $(bakery_test_ldadd_tb)

endif

# Programs without Check: they measure and print figures (recovery latency,
# chaos) or may skip (PID namespaces, exit 77).
crash_plain_tests = \
	tests/crash/crash-latency \
	tests/crash/crash-pidns \
	tests/crash/crash-chaos

check_PROGRAMS += $(crash_plain_tests)
TESTS += $(crash_plain_tests)

tests_crash_crash_latency_SOURCES = tests/crash/crash-latency.c $(crash_kit)
tests_crash_crash_latency_CPPFLAGS = $(bakery_test_cppflags)
tests_crash_crash_latency_LDADD = lib/libbakery.la $(URCU_LIBS) $(BAKERY_LIBS)

tests_crash_crash_pidns_SOURCES = tests/crash/crash-pidns.c $(crash_kit)
tests_crash_crash_pidns_CPPFLAGS = $(bakery_test_cppflags)
tests_crash_crash_pidns_LDADD = lib/libbakery.la $(URCU_LIBS) $(BAKERY_LIBS)

tests_crash_crash_chaos_SOURCES = tests/crash/crash-chaos.c $(crash_kit)
tests_crash_crash_chaos_CPPFLAGS = $(bakery_test_cppflags)
tests_crash_crash_chaos_LDADD = lib/libbakery-test.la $(URCU_LIBS) $(BAKERY_LIBS)

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

tests_crash_chaos_cancel_SOURCES = tests/crash/chaos-cancel.c $(crash_kit)
tests_crash_chaos_cancel_CPPFLAGS = $(bakery_test_cppflags)
tests_crash_chaos_cancel_LDADD = lib/libbakery-test.la $(URCU_LIBS) $(BAKERY_LIBS)

tests_crash_chaos_regions_SOURCES = tests/crash/chaos-regions.c $(crash_kit)
tests_crash_chaos_regions_CPPFLAGS = $(bakery_test_cppflags)
tests_crash_chaos_regions_LDADD = lib/libbakery-test.la $(URCU_LIBS) $(BAKERY_LIBS)

tests_crash_chaos_nested_SOURCES = tests/crash/chaos-nested.c $(crash_kit)
tests_crash_chaos_nested_CPPFLAGS = $(bakery_test_cppflags)
tests_crash_chaos_nested_LDADD = lib/libbakery-test.la $(URCU_LIBS) $(BAKERY_LIBS)

# chaos-dlopen dlopen()s the built shared library: it must not link it
tests_crash_chaos_dlopen_SOURCES = tests/crash/chaos-dlopen.c tests/common/occupancy.h
tests_crash_chaos_dlopen_CPPFLAGS = $(bakery_test_cppflags)
tests_crash_chaos_dlopen_LDADD = $(BAKERY_LIBS)

# Reproducers of library bugs, fixed: they stay as regression tests.
crash_bug_tests = \
	tests/crash/bug-recover-count

check_PROGRAMS += $(crash_bug_tests)
TESTS += $(crash_bug_tests)

tests_crash_bug_recover_count_SOURCES = tests/crash/bug-recover-count.c $(crash_kit)
tests_crash_bug_recover_count_CPPFLAGS = $(bakery_test_cppflags)
tests_crash_bug_recover_count_LDADD = lib/libbakery-test.la $(URCU_LIBS) $(BAKERY_LIBS)
