# rules for tests/fuzz (included from the top Makefile.am)
