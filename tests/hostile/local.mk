# SPDX-License-Identifier: MIT
# Hostile and careless participants, permissions and misuse.
#   test_*  Check suites: what the library does with garbage in its registers
#           and tables, forged tokens, misuse of the API, other users.
#   bug-*   reproducers of library bugs, each file's opening comment says
#           which.  Fixed ones stay as regression tests (hostile_fixed);
#           open ones are expected failures (hostile_bugs, XFAIL_TESTS):
#           once one passes it XPASSes, which fails `make check`, and moves
#           to hostile_fixed.
hostile_helpers = tests/hostile/hostile.c tests/hostile/hostile.h tests/common/tk.c tests/common/tk.h
# the sanitizer and valgrind pass of CI (run by .ci/run, not by make check)
EXTRA_DIST += tests/ci-hardening.sh
hostile_cppflags = $(bakery_test_cppflags) -I$(top_srcdir)/tests/hostile

if HAVE_CHECK
hostile_suites = \
	tests/hostile/test_registers \
	tests/hostile/test_tables \
	tests/hostile/test_tokens \
	tests/hostile/test_misuse \
	tests/hostile/test_perm
check_PROGRAMS += $(hostile_suites)
TESTS += $(hostile_suites)

tests_hostile_test_registers_SOURCES = tests/hostile/test_registers.c $(hostile_helpers)
tests_hostile_test_registers_CPPFLAGS = $(hostile_cppflags)
tests_hostile_test_registers_CFLAGS = $(bakery_test_cflags)
tests_hostile_test_registers_LDADD = $(bakery_test_ldadd)

tests_hostile_test_tables_SOURCES = tests/hostile/test_tables.c $(hostile_helpers)
tests_hostile_test_tables_CPPFLAGS = $(hostile_cppflags)
tests_hostile_test_tables_CFLAGS = $(bakery_test_cflags)
tests_hostile_test_tables_LDADD = $(bakery_test_ldadd)

tests_hostile_test_tokens_SOURCES = tests/hostile/test_tokens.c $(hostile_helpers)
tests_hostile_test_tokens_CPPFLAGS = $(hostile_cppflags)
tests_hostile_test_tokens_CFLAGS = $(bakery_test_cflags)
tests_hostile_test_tokens_LDADD = $(bakery_test_ldadd)

tests_hostile_test_misuse_SOURCES = tests/hostile/test_misuse.c $(hostile_helpers)
tests_hostile_test_misuse_CPPFLAGS = $(hostile_cppflags)
tests_hostile_test_misuse_CFLAGS = $(bakery_test_cflags)
tests_hostile_test_misuse_LDADD = $(bakery_test_ldadd)

tests_hostile_test_perm_SOURCES = tests/hostile/test_perm.c $(hostile_helpers)
tests_hostile_test_perm_CPPFLAGS = $(hostile_cppflags)
tests_hostile_test_perm_CFLAGS = $(bakery_test_cflags)
tests_hostile_test_perm_LDADD = $(bakery_test_ldadd)
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

hostile_bug_ldadd = lib/libbakery.la $(URCU_LIBS) $(BAKERY_LIBS)

tests_hostile_bug_token_kind_SOURCES = tests/hostile/bug-token-kind.c $(hostile_helpers)
tests_hostile_bug_token_kind_CPPFLAGS = $(hostile_cppflags)
tests_hostile_bug_token_kind_LDADD = $(hostile_bug_ldadd)

tests_hostile_bug_robust_list_SOURCES = tests/hostile/bug-robust-list.c $(hostile_helpers)
tests_hostile_bug_robust_list_CPPFLAGS = $(hostile_cppflags)
tests_hostile_bug_robust_list_LDADD = $(hostile_bug_ldadd)

tests_hostile_bug_shrink_sigbus_SOURCES = tests/hostile/bug-shrink-sigbus.c $(hostile_helpers)
tests_hostile_bug_shrink_sigbus_CPPFLAGS = $(hostile_cppflags)
tests_hostile_bug_shrink_sigbus_LDADD = $(hostile_bug_ldadd)

tests_hostile_bug_table_mutex_hang_SOURCES = tests/hostile/bug-table-mutex-hang.c $(hostile_helpers)
tests_hostile_bug_table_mutex_hang_CPPFLAGS = $(hostile_cppflags)
tests_hostile_bug_table_mutex_hang_LDADD = $(hostile_bug_ldadd)

# crash points: the test build
tests_hostile_bug_jayanti_abort_SOURCES = tests/hostile/bug-jayanti-abort.c $(hostile_helpers)
tests_hostile_bug_jayanti_abort_CPPFLAGS = $(hostile_cppflags)
tests_hostile_bug_jayanti_abort_LDADD = lib/libbakery-test.la $(URCU_LIBS) $(BAKERY_LIBS)

tests_hostile_bug_jayanti_abort_live_SOURCES = tests/hostile/bug-jayanti-abort-live.c $(hostile_helpers)
tests_hostile_bug_jayanti_abort_live_CPPFLAGS = $(hostile_cppflags)
tests_hostile_bug_jayanti_abort_live_LDADD = $(hostile_bug_ldadd)
