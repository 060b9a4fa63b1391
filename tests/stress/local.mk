# Multi-process stress tests.  bakery-hammer is one participant (see
# hammer.c); bakery-hammer-test is the same program on the test build
# (crash points, bound assertions); bakery-hammer-mutant runs without the
# algorithms' barriers, for `make check-mutants`.
check_PROGRAMS += tests/stress/bakery-hammer tests/stress/bakery-hammer-test \
	tests/stress/bakery-hammer-mutant
EXTRA_DIST += tests/stress/occupancy.h

tests_stress_bakery_hammer_SOURCES = tests/stress/hammer.c tests/stress/occupancy.h
tests_stress_bakery_hammer_CPPFLAGS = $(bakery_test_cppflags)
tests_stress_bakery_hammer_LDADD = lib/libbakery.la $(URCU_LIBS) $(BAKERY_LIBS)

tests_stress_bakery_hammer_test_SOURCES = tests/stress/hammer.c tests/stress/occupancy.h
tests_stress_bakery_hammer_test_CPPFLAGS = $(bakery_test_cppflags)
tests_stress_bakery_hammer_test_LDADD = lib/libbakery-test.la $(URCU_LIBS) $(BAKERY_LIBS)

tests_stress_bakery_hammer_mutant_SOURCES = tests/stress/hammer.c tests/stress/occupancy.h
tests_stress_bakery_hammer_mutant_CPPFLAGS = $(bakery_test_cppflags)
tests_stress_bakery_hammer_mutant_LDADD = lib/libbakery-mutant.la $(URCU_LIBS) $(BAKERY_LIBS)
