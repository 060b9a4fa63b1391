# SPDX-License-Identifier: MIT
# The `bakery` command-line tool (docs/bakery.1) and its tests.
bin_PROGRAMS += tools/bakery

tools_bakery_SOURCES = tools/bakery.c tools/cli.c tools/cli.h tools/status.c tools/run.c
tools_bakery_LDADD = lib/libbakery.la

TESTS += tools/test-cli.sh
EXTRA_DIST += tools/test-cli.sh
