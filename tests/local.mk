# SPDX-License-Identifier: MIT
# Shared test settings.
#
# One pattern for every test program: it is compiled with the project's
# AM_CPPFLAGS/AM_CFLAGS (no per-program flags, so each source is compiled
# once), its source is the program's name plus .c (Automake's default), and
# it links the default below.  So a test program is one line in its
# directory's list, plus one `_SOURCES` line for extra sources, and one
# `_LDADD` line only when it links otherwise: the test build of the library
# (crash points, bound assertions: $(bakery_test_ldadd_tb)), another build
# (the mutant), or no library at all (programs that dlopen it).
#
# The kits, each a convenience library built for `make check` only:
#   tests/common/libtk.la       names, regions, slots, children, gates, clocks (tk.c)
#   tests/unit/libunit.la       the Check suites' helpers and fixture (unit.c)
#   tests/crash/libcrash.la     crash helpers (crashkit.c)
#   tests/crash/libscene.la     the Check stage of the crash suites (scene.c)
#   tests/hostile/libhostile.la hostile participants' helpers (hostile.c)
#   tests/stress/libswarm.la    spawning and judging hammers (swarm.c)
#
# The default link.  Automake has one default, LDADD, for every program of
# the tree (this build is one Makefile), not one per directory: a default
# per directory would still take a `_LDADD` line per program.  So the
# default is every kit and the library: the kits are static archives, and
# the linker takes from them only what a program calls (a unit suite the
# unit kit, a crash test the crash kit...), so linking them all costs a
# program nothing.  The kits of the Check suites exist only with Check.
# (tools, bench and examples name their own _LDADD.)
check_LTLIBRARIES = tests/common/libtk.la
tests_common_libtk_la_SOURCES = tests/common/tk.c tests/common/tk.h tests/common/occupancy.h \
	tests/common/rw_occupancy.h

if HAVE_CHECK
bakery_test_check_kits = tests/crash/libscene.la tests/unit/libunit.la
endif
bakery_test_kits = $(bakery_test_check_kits) tests/crash/libcrash.la tests/hostile/libhostile.la \
	tests/stress/libswarm.la tests/common/libtk.la
bakery_test_libs = $(CHECK_LIBS) $(URCU_LIBS) $(BAKERY_LIBS)
bakery_test_ldadd = $(bakery_test_kits) lib/libbakery.la $(bakery_test_libs)
bakery_test_ldadd_tb = $(bakery_test_kits) lib/libbakery-test.la $(bakery_test_libs)
LDADD = $(bakery_test_ldadd)

# Tests run with the build's programs on PATH-less absolute paths.
AM_TESTS_ENVIRONMENT = \
	top_builddir='$(abs_top_builddir)'; export top_builddir; \
	top_srcdir='$(abs_top_srcdir)'; export top_srcdir; \
	CK_DEFAULT_TIMEOUT=120; export CK_DEFAULT_TIMEOUT;

# quickstart.sh's handling of BAKERY_CONFIGURE_FLAGS (stubbed configure)
TESTS += tests/test-quickstart.sh
EXTRA_DIST += tests/test-quickstart.sh
