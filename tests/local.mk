# SPDX-License-Identifier: MIT
# Shared test settings.
#
# One pattern for every test program: it is compiled with the project's
# AM_CPPFLAGS/AM_CFLAGS (no per-program flags, so each source is compiled
# once), its source is the program's name plus .c (Automake's default), and
# it links its directory's kit.  So a test program is one line in its
# directory's list, plus one `_LDADD` line when it needs another kit than
# the default, the test build of the library (crash points, bound
# assertions: *_tb), or extra sources.
#
# The kits, each a convenience library built for `make check` only:
#   tests/common/libtk.la       names, regions, children, gates, clocks (tk.c)
#   tests/unit/libunit.la       the Check suites' helpers (unit.c)
#   tests/crash/libcrash.la     crash helpers and the Check stage (crashkit.c, scene.c)
#   tests/hostile/libhostile.la hostile participants' helpers (hostile.c)
#   tests/stress/libswarm.la    spawning and judging hammers (swarm.c)
check_LTLIBRARIES = tests/common/libtk.la
tests_common_libtk_la_SOURCES = tests/common/tk.c tests/common/tk.h tests/common/occupancy.h

bakery_test_libs = $(CHECK_LIBS) $(URCU_LIBS) $(BAKERY_LIBS)
bakery_test_ldadd = tests/common/libtk.la lib/libbakery.la $(bakery_test_libs)
bakery_test_ldadd_tb = tests/common/libtk.la lib/libbakery-test.la $(bakery_test_libs)
# the default of every program that names no _LDADD (tools, bench and
# examples all name theirs)
LDADD = $(bakery_test_ldadd)

# Tests run with the build's programs on PATH-less absolute paths.
AM_TESTS_ENVIRONMENT = \
	top_builddir='$(abs_top_builddir)'; export top_builddir; \
	top_srcdir='$(abs_top_srcdir)'; export top_srcdir; \
	CK_DEFAULT_TIMEOUT=120; export CK_DEFAULT_TIMEOUT;

# quickstart.sh's handling of BAKERY_CONFIGURE_FLAGS (stubbed configure)
TESTS += tests/test-quickstart.sh
EXTRA_DIST += tests/test-quickstart.sh
