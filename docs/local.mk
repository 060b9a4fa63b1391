# SPDX-License-Identifier: MIT
# Manual pages, installed by `make install`, and a check that they render
# without a warning.  (The Markdown documents are distributed from the top
# Makefile.am and bench/local.mk.)
dist_man_MANS += docs/bakery.1 docs/bakery.3

TESTS += docs/test-man.sh
EXTRA_DIST += docs/test-man.sh
