#!/bin/sh
# SPDX-License-Identifier: MIT
# test-links.sh - every relative link of the Markdown documents in DIR
# (README.md and NEWS's neighbours at the top, docs/*.md) names a file or
# folder that exists, relative to the document.  `make check` runs it on
# the source tree; `make installcheck` (and so distcheck) on the installed
# documents, so that the README read from share/doc sends nowhere that was
# not installed.  Links with a scheme (https:, man:) and anchors within a
# document are not checked.
#
# Usage: test-links.sh [DIR]   (default: $top_srcdir, else .)
# DIR holds a README.md, or a docs/ folder (python3-bakery's documents).
set -u
dir=${1:-${top_srcdir:-.}}

if [ ! -f "$dir/README.md" ] && [ ! -d "$dir/docs" ]; then
	echo "test-links: neither README.md nor docs/ in $dir"
	exit 1
fi
bad=0
checked=0
for doc in "$dir"/*.md "$dir"/docs/*.md; do
	[ -f "$doc" ] || continue
	base=$(dirname "$doc")
	# one target a line: the part between "](" and the next ")"
	targets=$(grep -o '](\([^)]*\))' "$doc" | sed 's/^](//; s/)$//')
	set -f          # the targets are split into words, never globbed
	for t in $targets; do
		case $t in
		*:*|'#'*) continue ;;   # a scheme, or an anchor in this document
		esac
		path=${t%%#*}
		checked=$((checked + 1))
		if [ ! -e "$base/$path" ]; then
			echo "test-links: ${doc#"$dir"/}: link to $t: no such file"
			bad=$((bad + 1))
		fi
	done
	set +f
done
if [ "$bad" -ne 0 ]; then
	echo "test-links: $bad of $checked links in $dir lead nowhere"
	exit 1
fi
echo "test-links: $checked links in $dir, all found"
exit 0
