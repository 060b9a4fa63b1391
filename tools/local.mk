# SPDX-License-Identifier: MIT
# The `bakery` command-line tool (docs/bakery.1) and its tests.
bin_PROGRAMS += tools/bakery

tools_bakery_SOURCES = tools/bakery.c tools/cli.c tools/cli.h tools/status.c tools/list.c \
	tools/reset.c tools/rm.c tools/run.c tools/run.h tools/flock.c tools/run_job.c \
	tools/run_file.c tools/run_lock.c tools/run_life.c tools/run_hold.c tools/run_exec.c
tools_bakery_LDADD = lib/libbakery.la -lpthread -lrt

# test-cli.sh's helper: a library user that leaves a lock not recoverable
check_PROGRAMS += tools/test-unrepaired
tools_test_unrepaired_SOURCES = tools/test-unrepaired.c
tools_test_unrepaired_LDADD = lib/libbakery.la

# and a participant under a chosen process name, which the test build of
# the library can stop while it holds the lock table
check_PROGRAMS += tools/test-participant
tools_test_participant_SOURCES = tools/test-participant.c
tools_test_participant_LDADD = lib/libbakery-test.la

TESTS += tools/test-cli.sh tools/test-job-control.py
EXTRA_DIST += tools/test-cli.sh tools/test-job-control.py

# Bash completion, installed where bash-completion looks for it by command
# name (the file must be called `bakery`).
bashcompletiondir = $(datadir)/bash-completion/completions
EXTRA_DIST += tools/bakery.bash-completion
install-data-local: install-bash-completion
uninstall-local: uninstall-bash-completion
install-bash-completion:
	$(MKDIR_P) '$(DESTDIR)$(bashcompletiondir)'
	$(INSTALL_DATA) '$(srcdir)/tools/bakery.bash-completion' '$(DESTDIR)$(bashcompletiondir)/bakery'
uninstall-bash-completion:
	rm -f '$(DESTDIR)$(bashcompletiondir)/bakery'
.PHONY: install-bash-completion uninstall-bash-completion
