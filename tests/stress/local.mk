# SPDX-License-Identifier: MIT
# Multi-process stress tests.  bakery-hammer is one participant (see
# hammer.c); bakery-hammer-test is the same program on the test build
# (crash points, bound assertions).  bakery-aligned runs aligned trials of
# two pinned threads (aligned.c); bakery-aligned-mutant is the same program
# on the library without its barriers.  The drivers: bakery-stress (every
# algorithm, hammers in lock and mixed modes), bakery-fifo (black-box FIFO
# order), bakery-mutants (the mutant is caught, the real library is not;
# `make check-mutants` surveys how quickly).
check_PROGRAMS += tests/stress/bakery-hammer tests/stress/bakery-hammer-test \
	tests/stress/bakery-stress tests/stress/bakery-fifo tests/stress/bakery-mutants \
	tests/stress/bakery-aligned tests/stress/bakery-aligned-mutant
TESTS += tests/stress/bakery-stress tests/stress/bakery-fifo tests/stress/bakery-mutants

# hammer.c and aligned.c are each built once and linked three ways; swarm.c
# (spawning and judging hammers) is the kit of the drivers.
check_LTLIBRARIES += tests/stress/libswarm.la
tests_stress_libswarm_la_SOURCES = tests/stress/swarm.c tests/stress/swarm.h

tests_stress_bakery_hammer_SOURCES = tests/stress/hammer.c
tests_stress_bakery_hammer_test_SOURCES = tests/stress/hammer.c
tests_stress_bakery_hammer_test_LDADD = $(bakery_test_ldadd_tb)
tests_stress_bakery_aligned_SOURCES = tests/stress/aligned.c
tests_stress_bakery_aligned_mutant_SOURCES = tests/stress/aligned.c
tests_stress_bakery_aligned_mutant_LDADD = lib/libbakery-mutant.la $(URCU_LIBS) $(BAKERY_LIBS)
tests_stress_bakery_stress_SOURCES = tests/stress/stress.c
tests_stress_bakery_mutants_SOURCES = tests/stress/mutants.c
tests_stress_bakery_fifo_SOURCES = tests/stress/fifo.c

# bakery-mutants needs two CPUs to itself to be quick (its verdict does not
# depend on load, its duration does): it runs after every other test.  The
# target is named through a variable so that this adds a prerequisite to
# Automake's rule instead of overriding it (GNU make; -Wno-portability in
# Makefile.am).
mutants_log = tests/stress/bakery-mutants.log
$(mutants_log): $(filter-out $(mutants_log),$(TEST_LOGS))

# How many litmus reorderings each mutant takes to be caught (the figure
# behind bakery-mutants' evidence budget).  MUTANTS_FLAGS passes options
# (e.g. --runs 60 --algo black-white).
check-mutants: tests/stress/bakery-mutants$(EXEEXT) tests/stress/bakery-aligned$(EXEEXT) \
		tests/stress/bakery-aligned-mutant$(EXEEXT)
	top_builddir='$(abs_top_builddir)' tests/stress/bakery-mutants --survey $(MUTANTS_FLAGS)
.PHONY: check-mutants

# Readers, writers and k holders in processes of their own, checked by
# tests/common/rw_occupancy.h: exclusion, overlap, k at once, bounded bypass.
if HAVE_CHECK
check_PROGRAMS += tests/stress/test_shared_stress
TESTS += tests/stress/test_shared_stress
endif
