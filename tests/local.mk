# SPDX-License-Identifier: MIT
# Shared test settings.  Every test program gets Check and the library;
# tests that need crash points link lib/libbakery-test.la instead.
bakery_test_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/common -I$(top_srcdir)/tests -I$(top_srcdir)/tests/stress
bakery_test_cflags = $(AM_CFLAGS) $(CHECK_CFLAGS)
bakery_test_ldadd = lib/libbakery.la $(CHECK_LIBS) $(URCU_LIBS) $(BAKERY_LIBS)
bakery_test_ldadd_tb = lib/libbakery-test.la $(CHECK_LIBS) $(URCU_LIBS) $(BAKERY_LIBS)

# Tests run with the build's programs on PATH-less absolute paths.
AM_TESTS_ENVIRONMENT = \
	top_builddir='$(abs_top_builddir)'; export top_builddir; \
	top_srcdir='$(abs_top_srcdir)'; export top_srcdir; \
	CK_DEFAULT_TIMEOUT=120; export CK_DEFAULT_TIMEOUT;

# quickstart.sh's handling of BAKERY_CONFIGURE_FLAGS (stubbed configure)
TESTS += tests/test-quickstart.sh
EXTRA_DIST += tests/test-quickstart.sh
