#!/bin/sh
# SPDX-License-Identifier: MIT
# test-instructions.sh - `make check`: the instructions of one uncontended
# lock+unlock stay within their budget, for every algorithm, 64 and 1024
# slots, the shared and k-holder modes, and biased locks (whose passages
# take the owner's fast path: a count above the budget may also mean the
# bias was never granted).  A count, not a time: callgrind
# counts the instructions the library executes, the same on any machine and
# under any load, so a change that makes the common path longer fails here
# however fast the machine.
#
# passloop runs each subject twice, PASSES_SHORT and PASSES_LONG passages,
# each run a callgrind dump of its own (--dump-before/--dump-after on
# measured_passes); the cost of one passage is the difference of the two
# dumps divided by the difference of the passages, so that setup and first
# calls cancel.  The count includes passloop's loop and its checks of the
# return values (a few instructions: the robust mutex's line, printed for
# comparison, has the same loop around pthread_mutex_lock/unlock).
#
# The budgets hold for the default optimised build (-O2 or -O3, no
# sanitizer, no coverage): other builds are skipped (77), as are systems
# without valgrind.  Usage: test-instructions.sh [BUILDDIR]
set -u
top=${1:-${top_builddir:-.}}

# The budget of each subject, in instructions per lock+unlock with
# passloop's loop (its own cost, 23 with GCC 12, is the loop-alone line):
# the count when it was set (GCC 12, -O2) plus 5 %, rounded up to a
# multiple of 5 - room for another compiler's layout and for Debian's
# hardening flags (stack protector, fortify: +4 to 5 %), not for a longer
# path.  Lower a budget when a change makes its path shorter (the lean
# common path aims at 160 instructions of the library's for every subject,
# 183 here with the loop); never raise one to make a change pass.
budgets='
lamport/exclusive/64          350
lamport/exclusive/1024        350
boulangerie/exclusive/64      360
boulangerie/exclusive/1024    360
black-white/exclusive/64      385
black-white/exclusive/1024    385
jayanti/exclusive/64          395
jayanti/exclusive/1024        395
lamport/shared/64             360
lamport/shared/1024           360
boulangerie/shared/64         370
boulangerie/shared/1024       370
black-white/shared/64         385
black-white/shared/1024       385
lamport/k-holder/64           380
lamport/k-holder/1024         380
boulangerie/k-holder/64       385
boulangerie/k-holder/1024     385
lamport/biased/64             290
lamport/biased/1024           290
boulangerie/biased/64         290
boulangerie/biased/1024       290
'

skip() {
	echo "test-instructions: $*: skipped"
	exit 77
}

if ! command -v valgrind >/dev/null 2>&1; then
	skip "valgrind not found (quickstart.sh installs it)"
fi
# the flags the library was built with (tests/unit/local.mk passes them)
flags=${BAKERY_BUILD_CFLAGS-}
case " $flags " in
*-fsanitize*|*--coverage*|*-fprofile-arcs*|*" -pg "*|*-finstrument-functions*)
	skip "the budgets are for the plain optimised build, not for CFLAGS '$flags'" ;;
esac
opt=O0
for f in $flags; do
	case $f in -O*) opt=${f#-} ;; esac
done
case $opt in
O2|O3) ;;
*) skip "the budgets are for -O2 or -O3 builds, not -$opt" ;;
esac
prog=$top/tests/unit/passloop
if [ ! -x "$prog" ]; then
	echo "test-instructions: $prog not built"
	exit 1
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

if ! "$top/libtool" --mode=execute valgrind -q --tool=callgrind \
	--callgrind-out-file="$tmp/cg" \
	--dump-before=measured_passes --dump-after=measured_passes \
	"$prog" >"$tmp/runs" 2>"$tmp/valgrind"; then
	if grep -q 'debuginfo reader' "$tmp/valgrind"; then
		skip "valgrind cannot read this build's debugging information (DWARF 5?)"
	fi
	echo "test-instructions: passloop under callgrind failed:"
	cat "$tmp/runs" "$tmp/valgrind"
	exit 1
fi
if grep -q ' error: ' "$tmp/runs"; then
	echo "test-instructions: a call of passloop failed:"
	cat "$tmp/runs"
	exit 1
fi

# Each subject is three calls (warm-up, short, long), two dumps each: the
# short run is dump 6k+4, the long one 6k+6 (counting from 1).
status=0 k=0 checked=0
printf '%-28s %9s %8s\n' subject "instr/op" budget
while read -r name short long; do
	total_short=$(sed -n 's/^totals: *//p' "$tmp/cg.$((6 * k + 4))")
	total_long=$(sed -n 's/^totals: *//p' "$tmp/cg.$((6 * k + 6))")
	k=$((k + 1))
	if [ -z "$total_short" ] || [ -z "$total_long" ]; then
		echo "test-instructions: no callgrind dump for $name"
		status=1
		continue
	fi
	# rounded to the nearest instruction
	per=$(( (2 * (total_long - total_short) + (long - short)) / (2 * (long - short)) ))
	budget=$(printf '%s\n' "$budgets" | awk -v n="$name" '$1 == n { print $2 }')
	if [ -z "$budget" ]; then
		printf '%-28s %9d %8s\n' "$name" "$per" "-"
		case $name in */*) echo "  no budget for $name"; status=1 ;; esac
		continue
	fi
	checked=$((checked + 1))
	if [ "$per" -le "$budget" ]; then
		printf '%-28s %9d %8d\n' "$name" "$per" "$budget"
	else
		printf '%-28s %9d %8d  OVER BUDGET\n' "$name" "$per" "$budget"
		status=1
	fi
done <"$tmp/runs"
expected=$(printf '%s\n' "$budgets" | grep -c /)
if [ "$checked" -ne "$expected" ]; then
	echo "test-instructions: $checked subjects counted, $expected budgeted"
	status=1
fi
exit $status
