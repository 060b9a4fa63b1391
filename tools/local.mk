# rules for tools (see top Makefile.am)
