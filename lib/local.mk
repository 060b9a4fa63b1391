# SPDX-License-Identifier: MIT
# libbakery itself, plus two uninstalled variants built from the same sources:
#   libbakery-test.la    BAKERY_TESTING: crash points and bound assertions
#   libbakery-mutant.la  BAKERY_NO_BARRIERS: the algorithms' barriers removed,
#                        to show the stress test catches their absence
lib_LTLIBRARIES += lib/libbakery.la
noinst_LTLIBRARIES += lib/libbakery-test.la lib/libbakery-mutant.la
include_HEADERS = lib/bakery.h

bakery_sources = \
	lib/private.h \
	lib/shm_layout.h \
	lib/handle.h \
	lib/fd.h \
	lib/deadline.h \
	lib/futex.h \
	lib/exitfence.h \
	lib/guard.h \
	lib/token.h \
	lib/region.h \
	lib/recovery_ops.h \
	lib/revoke.h \
	lib/registry.h \
	lib/passage.h \
	lib/wait.h \
	lib/pass.h \
	lib/lock_recovery.h \
	lib/locktable.h \
	lib/slotwait.h \
	lib/lock.h \
	lib/lockadmin.h \
	lib/pathid.h \
	lib/fd.c \
	lib/stop.h \
	lib/futex.c \
	lib/exitfence.c \
	lib/stop.c \
	lib/guard.c \
	lib/token.c \
	lib/region.c \
	lib/revoke.c \
	lib/registry.c \
	lib/wait.c \
	lib/slotwait.c \
	lib/pass.c \
	lib/lock.c \
	lib/lock_recovery.c \
	lib/locktable.c \
	lib/lockadmin.c \
	lib/api.c \
	lib/pathid.c \
	lib/pathlock.c \
	lib/error.c \
	lib/version.c \
	lib/introspect.c \
	lib/testhooks.c \
	lib/algo/algo.h \
	lib/algo/common.h \
	lib/algo/order.h \
	lib/algo/black_white_order.h \
	lib/algo/jayanti_order.h \
	lib/algo/bias.h \
	lib/algo/bias.c \
	lib/algo/common.c \
	lib/algo/lamport.c \
	lib/algo/boulangerie.c \
	lib/algo/black_white.c \
	lib/algo/jayanti.c \
	lib/algo/table.h \
	lib/algo/table.c

lib_libbakery_la_SOURCES = $(bakery_sources)
lib_libbakery_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/algo -DBAKERY_BUILDING
lib_libbakery_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
lib_libbakery_la_LIBADD = $(URCU_LIBS) $(BAKERY_LIBS)
# NODELETE: dlclose() leaves the library loaded, since a thread that used it
# keeps a thread-exit handler, and the process a SIGBUS handler, in its code
lib_libbakery_la_LDFLAGS = -version-info $(BAKERY_LT_VERSION) -no-undefined -Wl,-z,nodelete

lib_libbakery_test_la_SOURCES = $(bakery_sources)
lib_libbakery_test_la_CPPFLAGS = $(lib_libbakery_la_CPPFLAGS) -DBAKERY_TESTING
lib_libbakery_test_la_CFLAGS = $(AM_CFLAGS)
lib_libbakery_test_la_LIBADD = $(URCU_LIBS) $(BAKERY_LIBS)

lib_libbakery_mutant_la_SOURCES = $(bakery_sources)
lib_libbakery_mutant_la_CPPFLAGS = $(lib_libbakery_la_CPPFLAGS) -DBAKERY_NO_BARRIERS
lib_libbakery_mutant_la_CFLAGS = $(AM_CFLAGS)
lib_libbakery_mutant_la_LIBADD = $(URCU_LIBS) $(BAKERY_LIBS)
