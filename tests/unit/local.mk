# SPDX-License-Identifier: MIT
# Check unit suites, one program per concern.  unit.c/unit.h are the suites'
# helpers (regions, the one-lock fixture, a lock-holding thread) on top of
# the test kit tests/common/tk.c (names, slots, children with time limits,
# gates, clocks).  Those listed below with the test build need it (crash
# and stop points; the shared-memory layout and its hash; the hidden
# bakery__guard_add/bakery__guard_remove, which only a convenience library
# lets a program link).
if HAVE_CHECK

unit_tests = \
	tests/unit/test_region \
	tests/unit/test_region_crash \
	tests/unit/test_corrupt \
	tests/unit/test_registry \
	tests/unit/test_lock_api \
	tests/unit/test_timed \
	tests/unit/test_acquire \
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
	tests/unit/test_bias \
	tests/unit/test_guard \
	tests/unit/test_token_list \
	tests/unit/test_wakeups \
	tests/unit/test_pass \
	tests/unit/test_shm_full \
	tests/unit/test_std_fds \
	tests/unit/test_pathlock \
	tests/unit/bug-trylock-dead \
	tests/unit/bug-strerror-fixed \
	tests/unit/test_version

check_PROGRAMS += $(unit_tests)
TESTS += $(unit_tests)

check_LTLIBRARIES += tests/unit/libunit.la
tests_unit_libunit_la_SOURCES = tests/unit/unit.c tests/unit/unit.h

# the test build of the library (the others link the default)
tests_unit_test_region_crash_LDADD = $(bakery_test_ldadd_tb)
tests_unit_test_corrupt_LDADD = $(bakery_test_ldadd_tb)
tests_unit_test_wait_handoff_LDADD = $(bakery_test_ldadd_tb)
tests_unit_test_lock_unlink_LDADD = $(bakery_test_ldadd_tb)
tests_unit_test_slot_wait_LDADD = $(bakery_test_ldadd_tb)
tests_unit_test_slot_reclaim_LDADD = $(bakery_test_ldadd_tb)
tests_unit_test_guard_LDADD = $(bakery_test_ldadd_tb)
tests_unit_test_wakeups_LDADD = $(bakery_test_ldadd_tb)
tests_unit_test_pass_LDADD = $(bakery_test_ldadd_tb)
tests_unit_test_pathlock_LDADD = $(bakery_test_ldadd_tb)

# test_dlclose dlopen()s the built shared library: it must not link it
check_PROGRAMS += tests/unit/test_dlclose
TESTS += tests/unit/test_dlclose
tests_unit_test_dlclose_LDADD = $(BAKERY_LIBS)

endif

# The layout of the public structs, as the compiler builds them, for the
# Python test that compares the ctypes mirrors with it (python/tests/test_abi.py)
check_PROGRAMS += tests/unit/abi-layout

# The library's symbol tables and sources (scripts, no Check needed): only
# bakery_ and bakery__ names; the files of lib/ depend on each other one way,
# in the order docs/design.md "Parts" lists them.
TESTS += tests/unit/test-symbols.sh tests/unit/test-layers.sh
EXTRA_DIST += tests/unit/test-symbols.sh tests/unit/test-layers.sh

# The instruction budget of an uncontended lock+unlock (callgrind):
# passloop runs the passages, the script counts them.  The script skips
# builds the budgets are not for, so it is told the compiler flags.
check_PROGRAMS += tests/unit/passloop
TESTS += tests/unit/test-instructions.sh
EXTRA_DIST += tests/unit/test-instructions.sh
AM_TESTS_ENVIRONMENT += BAKERY_BUILD_CFLAGS='$(CFLAGS) $(BAKERY_CFLAGS)'; export BAKERY_BUILD_CFLAGS;
