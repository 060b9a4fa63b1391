# SPDX-License-Identifier: MIT
# Check unit suites, one program per concern.  unit.c/unit.h are the suites'
# helpers (regions, a lock-holding thread) on top of the test kit
# tests/common/tk.c (names, children with time limits, gates, clocks).
# test_region_crash, test_corrupt, test_guard and test_wait_handoff need the
# test build (crash and stop points; the shared-memory layout and its hash; the hidden
# bakery__guard_add/bakery__guard_remove, which only a convenience library lets a program
# link).
if HAVE_CHECK

unit_tests = \
	tests/unit/test_region \
	tests/unit/test_region_crash \
	tests/unit/test_corrupt \
	tests/unit/test_registry \
	tests/unit/test_lock_api \
	tests/unit/test_timed \
	tests/unit/test_wait_handoff \
	tests/unit/test_errors \
	tests/unit/test_owner_dead \
	tests/unit/test_lock_reset \
	tests/unit/test_rdonly \
	tests/unit/test_lock_lookup \
	tests/unit/test_lock_unlink \
	tests/unit/test_lock_queue \
	tests/unit/test_slot_wait \
	tests/unit/test_slot_reclaim \
	tests/unit/test_threads \
	tests/unit/test_introspect \
	tests/unit/test_shared \
	tests/unit/test_guard \
	tests/unit/test_token_list \
	tests/unit/test_wakeups \
	tests/unit/test_pass \
	tests/unit/bug-trylock-dead \
	tests/unit/bug-strerror-fixed \
	tests/unit/test_version

check_PROGRAMS += $(unit_tests)
TESTS += $(unit_tests)

check_LTLIBRARIES += tests/unit/libunit.la
tests_unit_libunit_la_SOURCES = tests/unit/unit.c tests/unit/unit.h
unit_ldadd = tests/unit/libunit.la $(bakery_test_ldadd)
unit_ldadd_tb = tests/unit/libunit.la $(bakery_test_ldadd_tb)

# every suite links the unit kit; these the test build of the library
tests_unit_test_region_LDADD = $(unit_ldadd)
tests_unit_test_region_crash_LDADD = $(unit_ldadd_tb)
tests_unit_test_corrupt_LDADD = $(unit_ldadd_tb)
tests_unit_test_registry_LDADD = $(unit_ldadd)
tests_unit_test_lock_api_LDADD = $(unit_ldadd)
tests_unit_test_timed_LDADD = $(unit_ldadd)
tests_unit_test_wait_handoff_LDADD = $(unit_ldadd_tb)
tests_unit_test_errors_LDADD = $(unit_ldadd)
tests_unit_test_owner_dead_LDADD = $(unit_ldadd)
tests_unit_test_lock_reset_LDADD = $(unit_ldadd)
tests_unit_test_rdonly_LDADD = $(unit_ldadd)
tests_unit_test_lock_lookup_LDADD = $(unit_ldadd)
tests_unit_test_lock_unlink_LDADD = $(unit_ldadd_tb)
tests_unit_test_lock_queue_LDADD = $(unit_ldadd)
tests_unit_test_slot_wait_LDADD = $(unit_ldadd_tb)
tests_unit_test_slot_reclaim_LDADD = $(unit_ldadd_tb)
tests_unit_test_threads_LDADD = $(unit_ldadd)
tests_unit_test_introspect_LDADD = $(unit_ldadd)
tests_unit_test_shared_LDADD = $(unit_ldadd)
tests_unit_test_guard_LDADD = $(unit_ldadd_tb)
tests_unit_test_token_list_LDADD = $(unit_ldadd)
tests_unit_test_wakeups_LDADD = $(unit_ldadd_tb)
tests_unit_test_pass_LDADD = $(unit_ldadd_tb)
tests_unit_bug_trylock_dead_LDADD = $(unit_ldadd)
tests_unit_bug_strerror_fixed_LDADD = $(unit_ldadd)
tests_unit_test_version_LDADD = $(unit_ldadd)

# test_dlclose dlopen()s the built shared library: it must not link it
check_PROGRAMS += tests/unit/test_dlclose
TESTS += tests/unit/test_dlclose
tests_unit_test_dlclose_LDADD = $(BAKERY_LIBS)

endif

# The library's symbol tables (scripts, no Check needed): only bakery_ and
# bakery__ names; no cycle of calls between the files of lib/.
TESTS += tests/unit/test-symbols.sh tests/unit/test-layers.sh
EXTRA_DIST += tests/unit/test-symbols.sh tests/unit/test-layers.sh

# The instruction budget of an uncontended lock+unlock (callgrind):
# passloop runs the passages, the script counts them.  The script skips
# builds the budgets are not for, so it is told the compiler flags.
check_PROGRAMS += tests/unit/passloop
TESTS += tests/unit/test-instructions.sh
EXTRA_DIST += tests/unit/test-instructions.sh
AM_TESTS_ENVIRONMENT += BAKERY_BUILD_CFLAGS='$(CFLAGS) $(BAKERY_CFLAGS)'; export BAKERY_BUILD_CFLAGS;
