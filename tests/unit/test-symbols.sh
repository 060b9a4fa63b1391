#!/bin/sh
# SPDX-License-Identifier: MIT
# test-symbols.sh - `make check`: the library's names cannot clash with an
# application's.  Every global symbol the static archives define is public
# (bakery_) or private (bakery__), and the shared library exports the public
# ones only.  Names with two leading underscores are the compiler's own
# (AddressSanitizer's __odr_asan.* indicators, for one) and are not checked.
# In a source tree with the Debian packaging, debian/libbakery0.symbols
# lists exactly the exported names (a call missing there gets no versioned
# dependency, and dpkg-gensymbols warns).
# Skipped (77) without nm.  Usage: test-symbols.sh [LIBDIR]
set -u
libs=${1:-${top_builddir:-.}/lib/.libs}
if ! command -v nm >/dev/null 2>&1; then
	echo "test-symbols: nm not found: skipped"
	exit 77
fi
status=0 checked=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for a in "$libs"/libbakery.a "$libs"/libbakery-test.a "$libs"/libbakery-mutant.a; do
	[ -f "$a" ] || continue
	checked=$((checked + 1))
	# archive listings hold "member.o:" lines and blank lines: keep symbols
	bad=$(nm -g --defined-only "$a" | awk 'NF == 3 { print $3 }' |
	      grep -v '^bakery_' | grep -v '^__' | sort -u)
	if [ -n "$bad" ]; then
		echo "test-symbols: $a defines names without the bakery_ prefix:"
		echo "$bad" | sed 's/^/  /'
		status=1
	fi
done
so="$libs/libbakery.so"
if [ -f "$so" ]; then
	checked=$((checked + 1))
	bad=$(nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }' |
	      grep -v '^bakery_[a-z0-9]' | grep -v '^__' | sort -u)
	if [ -n "$bad" ]; then
		echo "test-symbols: $so exports names that are not public:"
		echo "$bad" | sed 's/^/  /'
		status=1
	fi
	syms=${top_srcdir:-.}/debian/libbakery0.symbols
	if [ -f "$syms" ]; then
		nm -D --defined-only "$so" | awk 'NF == 3 && $3 ~ /^bakery_/ { print $3 }' |
			sort -u >"$tmp/exported"
		awk '$1 ~ /^bakery_/ { sub(/@.*/, "", $1); print $1 }' "$syms" | sort -u >"$tmp/listed"
		for side in "23 exported but not in $syms" "13 in $syms but not exported"; do
			diff=$(comm -"${side%% *}" "$tmp/exported" "$tmp/listed")
			if [ -n "$diff" ]; then
				echo "test-symbols: ${side#* }:"
				echo "$diff" | sed 's/^/  /'
				status=1
			fi
		done
	fi
fi
if [ "$checked" = 0 ]; then
	echo "test-symbols: no library in $libs: skipped"
	exit 77
fi
exit "$status"
