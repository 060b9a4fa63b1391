# SPDX-License-Identifier: MIT
# Examples, built by `make` so that they cannot rot:
#   hello               the README's example program
#   producer, consumer  separate programs sharing a ring buffer under one
#                       bakery lock (ring.c, ring.h)
#   demo.sh             what `make demo` runs: kills a producer inside the
#                       lock and shows nothing is lost
#   config_table        readers (shared mode) and a writer of a configuration
#                       table; test-config-table.sh kills a reader and the
#                       writer inside the lock
#   token_pool          workers sharing K tokens through a lock of K
#                       holders; test-token-pool.sh kills a holder
noinst_PROGRAMS += examples/hello examples/producer examples/consumer \
	examples/config_table examples/token_pool

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

examples_config_table_SOURCES = examples/config_table.c
examples_config_table_LDADD = lib/libbakery.la
examples_config_table_LDFLAGS = -no-install

examples_token_pool_SOURCES = examples/token_pool.c
examples_token_pool_LDADD = lib/libbakery.la
examples_token_pool_LDFLAGS = -no-install

TESTS += examples/test-demo.sh examples/test-hello.sh examples/test-config-table.sh \
	examples/test-token-pool.sh
EXTRA_DIST += examples/demo.sh examples/test-demo.sh examples/test-hello.sh \
	examples/test-config-table.sh examples/test-token-pool.sh

.PHONY: demo
demo: examples/producer$(EXEEXT) examples/consumer$(EXEEXT) tools/bakery$(EXEEXT)
	@top_builddir='$(abs_top_builddir)' $(SHELL) '$(abs_top_srcdir)/examples/demo.sh'
