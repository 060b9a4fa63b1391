# rules for bench (see top Makefile.am)
