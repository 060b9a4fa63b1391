# rules for tests/model (see top Makefile.am)
