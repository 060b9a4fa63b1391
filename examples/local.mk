# rules for examples (see top Makefile.am)
