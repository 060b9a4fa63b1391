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
exit "$status"
