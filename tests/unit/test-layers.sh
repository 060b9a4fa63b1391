#!/bin/sh
# SPDX-License-Identifier: MIT
# test-layers.sh - `make check`: the files of lib/ depend on each other one
# way, in the order that docs/design.md "Parts" lists them.
#
# File A depends on file B when A's object uses a bakery__ name that B's
# object defines (nm), or when A #includes B's header.  A source and its
# private header (wait.c, wait.h) count as one file; a header without a
# source (handle.h, algo/algo.h) counts as a file of its own; the files of
# lib/algo/ count one by one.  So a cycle through headers (a.c calls b.c,
# whose header includes a.h) is a cycle too.
#
# The check fails, saying what to change, when
#   - the dependencies form a cycle (tsort finds it);
#   - a file of lib/ is missing from the list of "Parts" (a new file: add it
#     there, at the place the message names);
#   - the list names a file that does not exist, or names one twice;
#   - a file is listed before one it depends on (the list goes bottom up:
#     each file depends only on files listed before it).
# Skipped (77) without nm or tsort, or before the library is built.
# Usage: test-layers.sh [BUILDDIR [SRCDIR]]
set -u
top=${1:-${top_builddir:-.}}
src=${2:-${top_srcdir:-.}}
doc="$src/docs/design.md"
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

# ---------------------------------------------------------------- files --
# one line per file: its name here (the path under lib/ without .c/.h) and
# its name in the list (lib/X.c, or lib/X.h for a header without a source)
(cd "$src/lib" && ls ./*.c ./*.h algo/*.c algo/*.h) | sed 's|^\./||' |
	awk '{ m = $0; sub(/\.[ch]$/, "", m)
	       if (!(m in shown) || $0 ~ /\.c$/) shown[m] = "lib/" $0 }
	     END { for (m in shown) print m, shown[m] }' | sort >"$tmp/files"

# ---------------------------------------------------------- dependencies --
# "user definer why" lines
for o in $objs; do
	m=$(basename "$o" .o)
	m=${m#libbakery_test_la-}
	case $o in */algo/*) m=algo/$m ;; esac
	nm --defined-only -g "$o" | awk -v m="$m" 'NF == 3 && $3 ~ /^bakery__/ { print $3, m }' >>"$tmp/defs"
	nm -u "$o" | awk -v m="$m" '$2 ~ /^bakery__/ { print $2, m }' >>"$tmp/uses"
done
sort -u "$tmp/defs" >"$tmp/defs.s"
sort -u "$tmp/uses" >"$tmp/uses.s"
join "$tmp/uses.s" "$tmp/defs.s" | awk '$2 != $3 { print $2, $3, "uses " $1 }' >"$tmp/deps"
# #include "h": looked up as the compiler does (the includer's directory,
# then -I lib, then -I lib/algo); config.h and system headers are not ours
for f in $(cd "$src/lib" && ls ./*.c ./*.h algo/*.c algo/*.h | sed 's|^\./||'); do
	dir=$(dirname "$f")
	for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$src/lib/$f"); do
		for c in "$dir/$h" "$h" "algo/$h"; do
			c=${c#./}
			if [ -f "$src/lib/$c" ]; then
				echo "${f%.[ch]} ${c%.h} includes $h"
				break
			fi
		done
	done
done | awk '$1 != $2' >>"$tmp/deps"
# one line per pair, with the first reason found
sort -k1,1 -k2,2 -u "$tmp/deps" >"$tmp/edges"
awk '{ print $1, $2 }' "$tmp/edges" >"$tmp/pairs"

if ! tsort "$tmp/pairs" >"$tmp/order" 2>"$tmp/loops"; then
	echo "test-layers: the files of lib/ depend on each other in a cycle:"
	sed 's/^tsort: /  /' "$tmp/loops"
	echo "test-layers: dependencies (user -> definer: why):"
	awk '{ w = $3; for (i = 4; i <= NF; i++) w = w " " $i; print "  " $1 " -> " $2 ": " w }' "$tmp/edges"
	echo "test-layers: break the cycle (move what both need below both), then order docs/design.md \"Parts\""
	exit 1
fi

# ----------------------------------------------------- the documented order --
if [ ! -f "$doc" ]; then
	echo "test-layers: $doc not found"
	exit 1
fi
# the lines of the first code block under "## Parts" that name a lib/ file
awk '/^## / { parts = ($0 == "## Parts"); next }
     parts && /^```/ { if (block) exit; block = 1; next }
     parts && block && /^lib\// { print $1 }' "$doc" >"$tmp/listed"
awk -v doc="docs/design.md \"Parts\"" '
FILENAME == ARGV[1] { name[$1] = $2; file[$2] = $1; all[++nall] = $1; next }
FILENAME == ARGV[2] {
	n++
	if (!($1 in file)) {
		printf "test-layers: %s lists %s, which is not a file of lib/ (a source, or a header without one): remove it\n", doc, $1
		bad = 1
	} else if (file[$1] in pos) {
		printf "test-layers: %s lists %s twice: keep one\n", doc, $1
		bad = 1
	} else
		pos[file[$1]] = n
	next
}
{
	ne++; user[ne] = $1; def[ne] = $2
	w = $3; for (i = 4; i <= NF; i++) w = w " " $i
	reason[ne] = w
}
END {
	for (k = 1; k <= nall; k++) {
		m = all[k]
		if (m in pos)
			continue
		after = ""; before = ""; a = 0; b = n + 1
		for (i = 1; i <= ne; i++) {
			if (user[i] == m && (def[i] in pos) && pos[def[i]] > a) { a = pos[def[i]]; after = name[def[i]] }
			if (def[i] == m && (user[i] in pos) && pos[user[i]] < b) { b = pos[user[i]]; before = name[user[i]] }
		}
		printf "test-layers: %s is not in %s (a new file?): add it to that list (it goes bottom up)", name[m], doc
		if (after != "")
			printf ", after %s (the last there of the files it uses)", after
		if (before != "")
			printf ", before %s (the first there of the files that use it)", before
		printf "\n"
		bad = 1
	}
	for (i = 1; i <= ne; i++) {
		if (!(user[i] in pos) || !(def[i] in pos) || pos[def[i]] < pos[user[i]])
			continue
		printf "test-layers: %s lists %s after %s, which depends on it (%s %s): move %s before %s (the list goes bottom up)\n", doc, name[def[i]], name[user[i]], name[user[i]], reason[i], name[def[i]], name[user[i]]
		bad = 1
	}
	if (bad)
		exit 1
	printf "test-layers: no cycle; %s holds (%d files, %d dependencies)\n", doc, n, ne
}' "$tmp/files" "$tmp/listed" "$tmp/edges" || exit 1

# ------------------------------------------------- the README's short map --
# its "Layout" names every file of lib/ outside algo/ (in the order above)
awk '/^## / { layout = ($0 == "## Layout"); next }
     layout && /^lib\// { entry = 1 }
     layout && entry && /^[^ ]/ && !/^lib\// { exit }
     entry { print }' "$src/README.md" >"$tmp/readme"
status=0
while read -r m shown; do
	case $m in */*) continue ;; esac
	base=${shown#lib/}
	if ! grep -qwF "$base" "$tmp/readme"; then
		echo "test-layers: README.md \"Layout\" does not name $shown: add $base to its lib/ entry, where docs/design.md \"Parts\" lists it"
		status=1
	fi
done <"$tmp/files"
exit "$status"
