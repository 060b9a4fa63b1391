# SPDX-License-Identifier: MIT
# Fuzzing of the region validation and of every reader of the region.
#
# make check: bakery-fuzz-replay feeds every file of tests/fuzz/corpus through
#   fuzz_region_case(), the libFuzzer harness's entry, in the normal build.
#   Inputs that once crashed or hung the library keep their bug's name in
#   the corpus (token-kind-*, jayanti-proxy-*, close-ebusy-*, revoke-settle-*).
#   Their patches are byte offsets of one region layout: a layout that moves
#   a field moves their patches with it (layout 8 did, for the registers:
#   same fields, same bytes, the new offsets; patches of what was padding
#   dropped), or they test something else.
# make fuzz: builds the libFuzzer harness with clang and fuzzes for
#   FUZZ_SECONDS (run-fuzzer.sh; skipped without clang/libFuzzer).
check_PROGRAMS += tests/fuzz/bakery-fuzz-replay
TESTS += tests/fuzz/bakery-fuzz-replay
EXTRA_DIST += tests/fuzz/corpus tests/fuzz/region.dict \
	tests/fuzz/run-fuzzer.sh tests/fuzz/fuzz-libfuzzer.c

fuzz_replay_sources = tests/fuzz/replay.c tests/fuzz/fuzz-region.c tests/fuzz/fuzz-region.h

tests_fuzz_bakery_fuzz_replay_SOURCES = $(fuzz_replay_sources)

FUZZ_SECONDS = 120
fuzz:
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	$(SHELL) $(top_srcdir)/tests/fuzz/run-fuzzer.sh run $(FUZZ_SECONDS)
.PHONY: fuzz
