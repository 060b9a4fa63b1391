#!/bin/sh
# SPDX-License-Identifier: MIT
# ab.sh - one benchmark binary against two builds of the library, run after
# run in alternation (A B A B ...), so that a burst of load on a shared
# machine hits both alike: the before/after figures of a change.
#
#   bench/ab.sh [-n RUNS] [-p PROGRAM] BUILD_A BUILD_B [-- OPTIONS...]
#
# BUILD_A, BUILD_B   build directories (each with lib/.libs/libbakery.so):
#                    the library the program is run with
# -n RUNS            runs of each (default 3)
# -p PROGRAM         bakery-bench (default) or bakery-rwbench, taken from
#                    BUILD_B (the newer one: the same program for both, so
#                    only the library differs; the ABI is the same)
# OPTIONS            passed to the program (e.g. --tests holders --rounds 1)
#
# Each run's output is printed whole, after a line "### A|B RUN (BUILD):
# load average ..." that filters can split on; the programs' progress on
# stderr is dropped.  Exit status: 1 if any run failed.
set -u
runs=3 prog=bakery-bench
while getopts n:p: opt; do
	case $opt in
	n) runs=$OPTARG ;;
	p) prog=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 2 ]; then
	sed -n '3,18p' "$0"
	exit 2
fi
a=$(cd "$1" && pwd) b=$(cd "$2" && pwd)
shift 2
[ "${1:-}" = -- ] && shift
bin=$b/bench/.libs/$prog
[ -x "$bin" ] || bin=$b/bench/$prog
for d in "$a" "$b"; do
	if [ ! -e "$d/lib/.libs/libbakery.so" ]; then
		echo "ab.sh: no lib/.libs/libbakery.so in $d" >&2
		exit 2
	fi
done
# bakery-bench writes a CSV by default: not for these runs
csv=
[ "$prog" = bakery-bench ] && csv="--csv /dev/null"
status=0
i=1
while [ "$i" -le "$runs" ]; do
	for which in A B; do
		if [ $which = A ]; then dir=$a; else dir=$b; fi
		echo "### $which $i ($dir): load average $(cut -d' ' -f1-3 /proc/loadavg)"
		# shellcheck disable=SC2086
		LD_LIBRARY_PATH=$dir/lib/.libs "$bin" $csv "$@" 2>/dev/null || status=1
	done
	i=$((i + 1))
done
exit $status
