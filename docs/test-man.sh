#!/bin/sh
# SPDX-License-Identifier: MIT
# test-man.sh - `make check`: the manual pages render without a single
# warning (groff -ww).  Skipped (77) without groff.
set -u
src=${top_srcdir:-.}
if ! command -v groff >/dev/null 2>&1; then
	echo "test-man: groff not found: skipped"
	exit 77
fi
status=0
for page in "$src/docs/bakery.1" "$src/docs/bakery.3"; do
	# -t: bakery.3 has a table; warnings go to stderr, -z drops the output
	out=$(groff -t -ww -z -man "$page" 2>&1)
	if [ -n "$out" ]; then
		echo "test-man: $page:"
		echo "$out"
		status=1
	fi
	out=$(groff -ww -z -man "$page" 2>&1)
	if [ -n "$out" ]; then
		echo "test-man: $page (without tbl):"
		echo "$out"
		status=1
	fi
done
# every public function of bakery.h is named in bakery.3 (which `make
# install` links each name to) and described in its SYNOPSIS
names=$(sed -n '/^\.SH NAME/,/^\.SH LIBRARY/p' "$src/docs/bakery.3")
for f in $(sed -n 's/^BAKERY_API [^(]*[ *]\(bakery_[a-z_]*\)(.*/\1/p' "$src/lib/bakery.h"); do
	if ! printf '%s\n' "$names" | grep -qw "$f"; then
		echo "test-man: $f is not in bakery.3's NAME section"
		status=1
	fi
	if ! grep -q "^\.BI* \"[a-z_ ]*[ *]$f(" "$src/docs/bakery.3"; then
		echo "test-man: $f is not in bakery.3's SYNOPSIS"
		status=1
	fi
done
# every subcommand of the tool has its entry in bakery.1's COMMANDS
for c in create status list recover reset rm unlink run flock; do
	if ! sed -n '/^\.SH COMMANDS/,/^\.SH OPTIONS/p' "$src/docs/bakery.1" | grep -q "^\.B $c\$"; then
		echo "test-man: bakery.1 does not describe '$c'"
		status=1
	fi
done
exit "$status"
