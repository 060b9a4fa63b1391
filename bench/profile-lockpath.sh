#!/bin/sh
# SPDX-License-Identifier: MIT
# profile-lockpath.sh - where the instructions of one uncontended
# lock+unlock go, function by function: callgrind over passloop's measured
# loop (tests/unit/passloop.c, the program of the instruction budget test),
# every figure divided by the passages, so that it reads "per lock+unlock".
#
#   bench/profile-lockpath.sh [-a] [BUILDDIR] [SUBJECT...]
#
# BUILDDIR   a configured build (default: the current directory); passloop
#            is built there if it is not yet
# SUBJECT    passloop's names (default black-white/exclusive/64); e.g.
#            lamport/k-holder/64, robust-mutex, loop-alone
# -a         also the library's source, annotated line by line
#            (callgrind_annotate --auto=yes; counts for all 5000 passages)
#
# Prints, per subject, the instructions per lock+unlock, then each
# function's own (code inlined into a function counts as that function's;
# the lines add up to the total).  The raw profile
# (--dump-instr=yes: callgrind_annotate, kcachegrind) is kept as
# callgrind.passloop.SUBJECT in the current directory.
set -u
annotate=0
if [ "${1:-}" = -a ]; then
	annotate=1
	shift
fi
build=.
if [ $# -gt 0 ] && [ -d "$1" ]; then
	build=$1
	shift
fi
[ $# -gt 0 ] || set -- black-white/exclusive/64
for tool in valgrind callgrind_annotate; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "profile-lockpath: $tool not found" >&2
		exit 2
	fi
done
make -s -C "$build" tests/unit/passloop >/dev/null || exit 2
# the last of passloop's three runs of a subject (warm-up, 1000, 3000
# passages): --zero-before drops what the earlier ones counted
passes=3000

# "function count" lines of callgrind_annotate's table, summed by function
# name (a function inlined from several files appears once per file)
by_function() {
	awk '/^-+$/ { sep++ }
	     sep >= 4 && /^ *[0-9,]+ +\(/ {
		v = $1; gsub(",", "", v)
		f = $0; sub(/^ *[0-9,]+ +\([^)]*\) +/, "", f); sub(/ \[.*/, "", f)
		sub(/^.*:/, "", f)
		s[f] += v
	     }
	     END { for (f in s) print f, s[f] }'
}

for subject in "$@"; do
	out=callgrind.passloop.$(echo "$subject" | tr / -)
	"$build/libtool" --mode=execute valgrind -q --tool=callgrind --dump-instr=yes \
		--collect-atstart=no --toggle-collect=measured_passes --zero-before=measured_passes \
		--callgrind-out-file="$out" "$build/tests/unit/passloop" "$subject" >/dev/null || exit 1
	total=$(sed -n 's/^summary: *//p' "$out")
	echo "== $subject: $(awk -v t="$total" -v n=$passes 'BEGIN { printf "%.1f", t / n }') instructions per lock+unlock"
	printf '%-40s %8s\n' function self
	# (the program's frames above measured_passes are left out)
	callgrind_annotate --auto=no --inclusive=no --threshold=100 "$out" 2>/dev/null |
		by_function |
		grep -v -E '^(main|__libc_start_main[^ ]*|0x[0-9a-f]+|PROGRAM|\(below) ' | awk -v n=$passes '$2 > 0 { printf "%-40s %8.1f\n", $1, $2 / n }' |
		sort -k2 -rn
	if [ $annotate = 1 ]; then
		callgrind_annotate --auto=yes --inclusive=no --threshold=100 "$out" 2>/dev/null
	fi
done
