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
	tests/unit/test_threads \
	tests/unit/test_introspect \
	tests/unit/test_guard \
	tests/unit/test_token_list \
	tests/unit/test_wakeups \
	tests/unit/test_pass \
	tests/unit/bug-trylock-dead \
	tests/unit/bug-strerror-fixed \
	tests/unit/test_version

check_PROGRAMS += $(unit_tests)
TESTS += $(unit_tests)

unit_helpers = tests/unit/unit.c tests/unit/unit.h tests/common/tk.c tests/common/tk.h

tests_unit_test_region_SOURCES = tests/unit/test_region.c $(unit_helpers)
tests_unit_test_region_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_region_CFLAGS = $(bakery_test_cflags)
tests_unit_test_region_LDADD = $(bakery_test_ldadd)

tests_unit_test_region_crash_SOURCES = tests/unit/test_region_crash.c $(unit_helpers)
tests_unit_test_region_crash_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_region_crash_CFLAGS = $(bakery_test_cflags)
tests_unit_test_region_crash_LDADD = $(bakery_test_ldadd_tb)

tests_unit_test_pass_SOURCES = tests/unit/test_pass.c $(unit_helpers)
tests_unit_test_pass_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_pass_CFLAGS = $(bakery_test_cflags)
tests_unit_test_pass_LDADD = $(bakery_test_ldadd_tb)

tests_unit_test_wakeups_SOURCES = tests/unit/test_wakeups.c $(unit_helpers)
tests_unit_test_wakeups_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_wakeups_CFLAGS = $(bakery_test_cflags)
tests_unit_test_wakeups_LDADD = $(bakery_test_ldadd_tb)

tests_unit_test_corrupt_SOURCES = tests/unit/test_corrupt.c $(unit_helpers)
tests_unit_test_corrupt_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_corrupt_CFLAGS = $(bakery_test_cflags)
tests_unit_test_corrupt_LDADD = $(bakery_test_ldadd_tb)

tests_unit_test_registry_SOURCES = tests/unit/test_registry.c $(unit_helpers)
tests_unit_test_registry_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_registry_CFLAGS = $(bakery_test_cflags)
tests_unit_test_registry_LDADD = $(bakery_test_ldadd)

tests_unit_test_lock_api_SOURCES = tests/unit/test_lock_api.c $(unit_helpers)
tests_unit_test_lock_api_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_lock_api_CFLAGS = $(bakery_test_cflags)
tests_unit_test_lock_api_LDADD = $(bakery_test_ldadd)

tests_unit_test_timed_SOURCES = tests/unit/test_timed.c $(unit_helpers)
tests_unit_test_timed_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_timed_CFLAGS = $(bakery_test_cflags)
tests_unit_test_timed_LDADD = $(bakery_test_ldadd)

tests_unit_test_wait_handoff_SOURCES = tests/unit/test_wait_handoff.c $(unit_helpers)
tests_unit_test_wait_handoff_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_wait_handoff_CFLAGS = $(bakery_test_cflags)
tests_unit_test_wait_handoff_LDADD = $(bakery_test_ldadd_tb)

# test_dlclose dlopen()s the built shared library: it must not link it
check_PROGRAMS += tests/unit/test_dlclose
TESTS += tests/unit/test_dlclose
tests_unit_test_dlclose_SOURCES = tests/unit/test_dlclose.c
tests_unit_test_dlclose_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_dlclose_LDADD = $(BAKERY_LIBS)

tests_unit_test_errors_SOURCES = tests/unit/test_errors.c $(unit_helpers)
tests_unit_test_errors_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_errors_CFLAGS = $(bakery_test_cflags)
tests_unit_test_errors_LDADD = $(bakery_test_ldadd)

tests_unit_test_version_SOURCES = tests/unit/test_version.c $(unit_helpers)
tests_unit_test_version_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_version_CFLAGS = $(bakery_test_cflags)
tests_unit_test_version_LDADD = $(bakery_test_ldadd)

tests_unit_bug_strerror_fixed_SOURCES = tests/unit/bug-strerror-fixed.c $(unit_helpers)
tests_unit_bug_strerror_fixed_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_bug_strerror_fixed_CFLAGS = $(bakery_test_cflags)
tests_unit_bug_strerror_fixed_LDADD = $(bakery_test_ldadd)

tests_unit_test_owner_dead_SOURCES = tests/unit/test_owner_dead.c $(unit_helpers)
tests_unit_test_owner_dead_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_owner_dead_CFLAGS = $(bakery_test_cflags)
tests_unit_test_owner_dead_LDADD = $(bakery_test_ldadd)

tests_unit_test_lock_reset_SOURCES = tests/unit/test_lock_reset.c $(unit_helpers)
tests_unit_test_lock_reset_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_lock_reset_CFLAGS = $(bakery_test_cflags)
tests_unit_test_lock_reset_LDADD = $(bakery_test_ldadd)

tests_unit_test_rdonly_SOURCES = tests/unit/test_rdonly.c $(unit_helpers)
tests_unit_test_rdonly_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_rdonly_CFLAGS = $(bakery_test_cflags)
tests_unit_test_rdonly_LDADD = $(bakery_test_ldadd)

tests_unit_test_lock_lookup_SOURCES = tests/unit/test_lock_lookup.c $(unit_helpers)
tests_unit_test_lock_lookup_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_lock_lookup_CFLAGS = $(bakery_test_cflags)
tests_unit_test_lock_lookup_LDADD = $(bakery_test_ldadd)

tests_unit_bug_trylock_dead_SOURCES = tests/unit/bug-trylock-dead.c $(unit_helpers)
tests_unit_bug_trylock_dead_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_bug_trylock_dead_CFLAGS = $(bakery_test_cflags)
tests_unit_bug_trylock_dead_LDADD = $(bakery_test_ldadd)

tests_unit_test_threads_SOURCES = tests/unit/test_threads.c $(unit_helpers)
tests_unit_test_threads_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_threads_CFLAGS = $(bakery_test_cflags)
tests_unit_test_threads_LDADD = $(bakery_test_ldadd)

tests_unit_test_introspect_SOURCES = tests/unit/test_introspect.c $(unit_helpers)
tests_unit_test_introspect_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_introspect_CFLAGS = $(bakery_test_cflags)
tests_unit_test_introspect_LDADD = $(bakery_test_ldadd)

tests_unit_test_guard_SOURCES = tests/unit/test_guard.c $(unit_helpers)
tests_unit_test_guard_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_guard_CFLAGS = $(bakery_test_cflags)
tests_unit_test_guard_LDADD = $(bakery_test_ldadd_tb)

tests_unit_test_token_list_SOURCES = tests/unit/test_token_list.c $(unit_helpers)
tests_unit_test_token_list_CPPFLAGS = $(bakery_test_cppflags)
tests_unit_test_token_list_CFLAGS = $(bakery_test_cflags)
tests_unit_test_token_list_LDADD = $(bakery_test_ldadd)

endif

# The library's symbol tables (scripts, no Check needed): only bakery_ and
# bakery__ names; no cycle of calls between the files of lib/.
TESTS += tests/unit/test-symbols.sh tests/unit/test-layers.sh
EXTRA_DIST += tests/unit/test-symbols.sh tests/unit/test-layers.sh
