# SPDX-License-Identifier: MIT
# Examples, built by `make` so that they cannot rot:
#   hello               the README's example program
#   producer, consumer  separate programs sharing a ring buffer under one
#                       bakery lock (ring.c, ring.h)
#   demo.sh             what `make demo` runs: kills a producer inside the
#                       lock and shows nothing is lost
noinst_PROGRAMS += examples/hello examples/producer examples/consumer

# -no-install: real binaries, not libtool wrapper scripts, so that the
# demo's pids and signals reach the programs themselves
examples_hello_SOURCES = examples/hello.c
examples_hello_LDADD = lib/libbakery.la
examples_hello_LDFLAGS = -no-install

examples_producer_SOURCES = examples/producer.c examples/ring.c examples/ring.h
examples_producer_LDADD = lib/libbakery.la
examples_producer_LDFLAGS = -no-install

examples_consumer_SOURCES = examples/consumer.c examples/ring.c examples/ring.h
examples_consumer_LDADD = lib/libbakery.la
examples_consumer_LDFLAGS = -no-install

TESTS += examples/test-demo.sh examples/test-hello.sh
EXTRA_DIST += examples/demo.sh examples/test-demo.sh examples/test-hello.sh

.PHONY: demo
demo: examples/producer$(EXEEXT) examples/consumer$(EXEEXT) tools/bakery$(EXEEXT)
	@top_builddir='$(abs_top_builddir)' $(SHELL) '$(abs_top_srcdir)/examples/demo.sh'
