# SPDX-License-Identifier: MIT
# Multi-process stress tests.  bakery-hammer is one participant (see
# hammer.c); bakery-hammer-test is the same program on the test build
# (crash points, bound assertions); bakery-hammer-mutant runs without the
# algorithms' barriers.  The drivers: bakery-stress (every algorithm, four
# hammers, lock and mixed modes), bakery-fifo (black-box FIFO order),
# bakery-mutants (the mutant is caught, the real library is not; its long
# form is `make check-mutants`).
check_PROGRAMS += tests/stress/bakery-hammer tests/stress/bakery-hammer-test \
	tests/stress/bakery-hammer-mutant tests/stress/bakery-stress \
	tests/stress/bakery-fifo tests/stress/bakery-mutants
EXTRA_DIST += tests/common/occupancy.h
TESTS += tests/stress/bakery-stress tests/stress/bakery-fifo tests/stress/bakery-mutants

tests_stress_bakery_hammer_SOURCES = tests/stress/hammer.c tests/common/occupancy.h
tests_stress_bakery_hammer_CPPFLAGS = $(bakery_test_cppflags)
tests_stress_bakery_hammer_LDADD = lib/libbakery.la $(URCU_LIBS) $(BAKERY_LIBS)

tests_stress_bakery_hammer_test_SOURCES = tests/stress/hammer.c tests/common/occupancy.h
tests_stress_bakery_hammer_test_CPPFLAGS = $(bakery_test_cppflags)
tests_stress_bakery_hammer_test_LDADD = lib/libbakery-test.la $(URCU_LIBS) $(BAKERY_LIBS)

tests_stress_bakery_hammer_mutant_SOURCES = tests/stress/hammer.c tests/common/occupancy.h
tests_stress_bakery_hammer_mutant_CPPFLAGS = $(bakery_test_cppflags)
tests_stress_bakery_hammer_mutant_LDADD = lib/libbakery-mutant.la $(URCU_LIBS) $(BAKERY_LIBS)

# bakery-stress and bakery-mutants spawn the hammers above (swarm.c).
stress_swarm_sources = tests/stress/swarm.c tests/stress/swarm.h tests/common/occupancy.h

tests_stress_bakery_stress_SOURCES = tests/stress/stress.c $(stress_swarm_sources)
tests_stress_bakery_stress_CPPFLAGS = $(bakery_test_cppflags)
tests_stress_bakery_stress_LDADD = lib/libbakery.la $(URCU_LIBS) $(BAKERY_LIBS)

tests_stress_bakery_fifo_SOURCES = tests/stress/fifo.c
tests_stress_bakery_fifo_CPPFLAGS = $(bakery_test_cppflags)
tests_stress_bakery_fifo_LDADD = lib/libbakery.la $(URCU_LIBS) $(BAKERY_LIBS)

tests_stress_bakery_mutants_SOURCES = tests/stress/mutants.c $(stress_swarm_sources)
tests_stress_bakery_mutants_CPPFLAGS = $(bakery_test_cppflags)
tests_stress_bakery_mutants_LDADD = lib/libbakery.la $(URCU_LIBS) $(BAKERY_LIBS)

# The full, statistical run (make check runs the short form): the
# barrier-less mutant must be caught by the occupancy check, the real
# library never.  MUTANTS_FLAGS passes options (e.g. --runs 30).
check-mutants: tests/stress/bakery-mutants$(EXEEXT) tests/stress/bakery-hammer$(EXEEXT) \
		tests/stress/bakery-hammer-mutant$(EXEEXT)
	top_builddir='$(abs_top_builddir)' tests/stress/bakery-mutants --survey $(MUTANTS_FLAGS)
.PHONY: check-mutants
