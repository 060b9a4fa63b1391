# rules for tests/crash (included from the top Makefile.am)
