# rules for tests/hostile (included from the top Makefile.am)
