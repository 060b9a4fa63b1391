#!/bin/sh
# SPDX-License-Identifier: MIT
# test-layers.sh - `make check`: calls between the library's files go one
# way.  From each object's symbol table (nm), file A depends on file B when A
# uses a bakery__ name B defines; the files of lib/algo/ count as one module.
# The check fails when these dependencies form a cycle (tsort finds it), and
# prints the edges.  Skipped (77) without nm or tsort.
# Usage: test-layers.sh [BUILDDIR]
set -u
top=${1:-${top_builddir:-.}}
for tool in nm tsort; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "test-layers: $tool not found: skipped"
		exit 77
	fi
done
# the test build: it also has the crash points' file (testhooks.c)
objs=$(ls "$top"/lib/.libs/libbakery_test_la-*.o "$top"/lib/algo/.libs/libbakery_test_la-*.o 2>/dev/null)
if [ -z "$objs" ]; then
	objs=$(ls "$top"/lib/libbakery_test_la-*.o "$top"/lib/algo/libbakery_test_la-*.o 2>/dev/null)
fi
if [ -z "$objs" ]; then
	echo "test-layers: no object files under $top/lib: skipped"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for o in $objs; do
	m=$(basename "$o" .o)
	m=${m#libbakery_test_la-}
	case $o in */algo/*) m=algo ;; esac
	nm --defined-only -g "$o" | awk -v m="$m" 'NF == 3 && $3 ~ /^bakery__/ { print $3, m }' >>"$tmp/defs"
	nm -u "$o" | awk -v m="$m" '$2 ~ /^bakery__/ { print $2, m }' >>"$tmp/uses"
done
# "user definer" pairs, one per dependency between two different files
sort -u "$tmp/defs" >"$tmp/defs.s"
sort -u "$tmp/uses" >"$tmp/uses.s"
join "$tmp/uses.s" "$tmp/defs.s" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$tmp/edges"
if ! tsort "$tmp/edges" >"$tmp/order" 2>"$tmp/loops"; then
	echo "test-layers: the files of lib/ call each other in a cycle:"
	sed 's/^tsort: /  /' "$tmp/loops"
	echo "test-layers: dependencies (user -> definer):"
	awk '{ print "  " $1 " -> " $2 }' "$tmp/edges"
	exit 1
fi
echo "test-layers: no cycle; files bottom up:"
tac "$tmp/order" | tr '\n' ' '
echo
exit 0
