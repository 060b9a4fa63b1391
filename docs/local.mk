# SPDX-License-Identifier: MIT
# Manual pages, installed by `make install`, and a check that they render
# without a warning.  (The Markdown documents are distributed from the top
# Makefile.am and bench/local.mk.)
dist_man_MANS += docs/bakery.1 docs/bakery.3

TESTS += docs/test-man.sh docs/test-links.sh docs/test-samples.sh
EXTRA_DIST += docs/test-man.sh docs/test-links.sh docs/test-samples.sh

# The installed documents' links too (distcheck runs installcheck).
installcheck-local: installcheck-doc-links
installcheck-doc-links:
	$(SHELL) '$(top_srcdir)/docs/test-links.sh' '$(DESTDIR)$(docdir)'
.PHONY: installcheck-doc-links

# `man bakery_open` and the like: one ".so" page per public function of
# bakery.h (every BAKERY_API declaration), each sourcing bakery.3.
bakery_man_functions = sed -n 's/^BAKERY_API [^(]*[ *]\(bakery_[a-z_]*\)(.*/\1/p' '$(top_srcdir)/lib/bakery.h'
install-data-local: install-man-links
uninstall-local: uninstall-man-links
install-man-links:
	$(MKDIR_P) '$(DESTDIR)$(man3dir)'
	for f in `$(bakery_man_functions)`; do \
		echo '.so man3/bakery.3' >'$(DESTDIR)$(man3dir)/'$$f.3 || exit 1; \
	done
uninstall-man-links:
	for f in `$(bakery_man_functions)`; do rm -f '$(DESTDIR)$(man3dir)/'$$f.3; done
.PHONY: install-man-links uninstall-man-links
