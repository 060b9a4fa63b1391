# rules for tests/unit (included from the top Makefile.am)
