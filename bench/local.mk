# SPDX-License-Identifier: MIT
# bench/: bakery-bench, every libbakery algorithm against the locks users
# would pick instead.  Not part of `make check`:
#   make bench        the full set (about 6 minutes), CSV in bench/results.csv,
#                     plots (if gnuplot is installed) in $(BENCH_PLOTDIR); it
#                     ends with the targets, each met or MISSED
#   make bench-quick  a short subset (about a minute) for spotting regressions
#   make bench-rw     bakery-rwbench: the shared mode and k holders against
#                     pthread_rwlock_t, flock and a POSIX semaphore (2 minutes)
#   make bench-path   bakery-pathbench and bench/pathlock.py: a lock per file,
#                     uncontended, from C and from Python, against flock (a minute)
#   make bench-slots  bakery-slotbench: a newcomer's wait for the slot a busy
#                     thread holds, against a free slot (a few seconds)
noinst_PROGRAMS += bench/bakery-bench bench/bakery-rwbench bench/bakery-pathbench \
	bench/bakery-slotbench
# ab.sh: a benchmark against two builds in alternation; profile-lockpath.sh:
# the instructions of an uncontended lock+unlock, function by function;
# cli-vs-flock.sh: bakery run and bakery flock beside flock(1)
EXTRA_DIST += bench/plot.gp bench/ab.sh bench/profile-lockpath.sh bench/cli-vs-flock.sh
CLEANFILES += bench/results.csv bench/results-quick.csv

bench_bakery_bench_SOURCES = \
	bench/bench.h \
	tests/common/occupancy.h \
	tests/common/rw_occupancy.h \
	bench/main.c \
	bench/holders.c \
	bench/mechs.c \
	bench/procs.c \
	bench/measure.c \
	bench/report.c
bench_bakery_bench_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/common
bench_bakery_bench_LDADD = lib/libbakery.la $(URCU_LIBS) $(BAKERY_LIBS) -lpthread

# Where `make bench` draws the plots: beside the CSV in the build tree, so
# that a run leaves the sources as they were.  The committed ones in docs/
# are redrawn with `make bench BENCH_PLOTDIR='$(top_srcdir)/docs'`.
BENCH_PLOTDIR = bench
CLEANFILES += bench/bench-throughput.svg bench/bench-cpu.svg bench/bench-uncontended.svg \
	bench/bench-wait.svg

bench_bakery_rwbench_SOURCES = bench/rw.c tests/common/rw_occupancy.h
bench_bakery_rwbench_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/common
bench_bakery_rwbench_LDADD = lib/libbakery.la $(URCU_LIBS) $(BAKERY_LIBS) -lpthread

bench_bakery_pathbench_SOURCES = bench/path.c
bench_bakery_pathbench_LDADD = lib/libbakery.la $(BAKERY_LIBS)

bench_bakery_slotbench_SOURCES = bench/slots.c
bench_bakery_slotbench_LDADD = lib/libbakery.la $(URCU_LIBS) $(BAKERY_LIBS) -lpthread
EXTRA_DIST += bench/pathlock.py

.PHONY: bench bench-quick bench-rw bench-path bench-slots
bench: bench/bakery-bench$(EXEEXT)
	bench/bakery-bench$(EXEEXT) --csv bench/results.csv
	@if test -n "$(GNUPLOT)"; then \
	  echo "plotting into $(BENCH_PLOTDIR)"; \
	  $(GNUPLOT) -e "csv='bench/results.csv'; outdir='$(BENCH_PLOTDIR)'" \
	    $(top_srcdir)/bench/plot.gp; \
	else \
	  echo "gnuplot not found: no plots"; \
	fi

bench-quick: bench/bakery-bench$(EXEEXT)
	bench/bakery-bench$(EXEEXT) --quick --csv bench/results-quick.csv

bench-rw: bench/bakery-rwbench$(EXEEXT)
	bench/bakery-rwbench$(EXEEXT) $(BENCH_RW_FLAGS)

bench-path: bench/bakery-pathbench$(EXEEXT)
	bench/bakery-pathbench$(EXEEXT)
	BAKERY_LIBRARY=lib/.libs/libbakery.so PYTHONPATH=$(top_srcdir)/python \
	  python3 $(top_srcdir)/bench/pathlock.py

bench-slots: bench/bakery-slotbench$(EXEEXT)
	bench/bakery-slotbench$(EXEEXT) $(BENCH_SLOTS_N)
