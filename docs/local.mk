# rules for docs (see top Makefile.am)
