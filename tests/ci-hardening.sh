#!/bin/sh
# SPDX-License-Identifier: MIT
# ci-hardening.sh - the hardening pass of CI, in two builds out of tree:
#
#  1. AddressSanitizer + UBSan (configure --enable-sanitizers --enable-werror)
#     and the whole `make check` there.  Any sanitizer report fails the test
#     that made it: halt_on_error and abort_on_error turn it into SIGABRT.
#     LeakSanitizer is on: it runs when a process calls exit(), which every
#     test process and Check's per-test child do; children that end with
#     _exit() or are SIGKILLed (crash and multi-process tests) are not
#     checked, which is what such children want (they leave on purpose with
#     their slots and mappings held).
#  2. A plain build, and the single-process Check suites under valgrind
#     (memcheck, --leak-check=full, definite leaks are errors), with
#     CK_FORK=no so that valgrind sees the tests themselves rather than
#     Check's children.  Which suites: every test program under tests/unit/,
#     except those listed as expected failures and those whose source forks
#     or execs (multi-process tests are timing-bound, and valgrind's
#     slowdown turns their waits into timeouts); plus the fuzz corpus replay,
#     whose per-input children fork without exec and so stay under valgrind.
#     BAKERY_VALGRIND_SKIP / BAKERY_VALGRIND_EXTRA (test paths, separated by
#     spaces) take suites out or add them; each runs at most
#     BAKERY_VALGRIND_TIMEOUT seconds (default 900).  Valgrind (3.19) does
#     not know futex_waitv: it warns "unhandled syscall 449" and fails it
#     with ENOSYS, so under valgrind the library runs its fallback wait
#     (one futex word, bounded sleeps), which this pass thereby covers.
#
# Usage: tests/ci-hardening.sh [BUILD_DIR]   (default: a new temporary
# directory, removed on success).  JOBS (default 2) is make's -j.
# Exit status: 0 when both passes are clean, 1 otherwise.
set -u

srcdir=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-2}
if [ $# -gt 0 ]; then
	work=$1
	keep=1
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/bakery-hardening.XXXXXX") || exit 1
	# readable by others: tools/test-cli.sh runs the tool as another user
	chmod 0755 "$work"
	keep=0
fi
failures=

start=$(date +%s)
say() { printf '==> [%4ds] %s\n' "$(($(date +%s) - start))" "$*"; }
failed() { failures="$failures $1"; say "FAILED: $1"; }

# Configure and build in $1 with the remaining arguments to configure.
build() {
	dir=$1
	shift
	mkdir -p "$dir" || return 1
	say "configure $* (in $dir)"
	(cd "$dir" && "$srcdir/configure" -q "$@") || return 1
	say "make -j$jobs (in $dir)"
	make -s -C "$dir" -j"$jobs" >/dev/null || return 1
}

# ------------------------------------------------------------ sanitizers --

sanitizer_pass() {
	dir=$work/asan
	build "$dir" --enable-werror --enable-sanitizers || { failed "sanitizer build"; return; }
	ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:print_summary=1
	UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
	export ASAN_OPTIONS UBSAN_OPTIONS
	say "make check under ASan+UBSan (ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS)"
	if ! make -s -C "$dir" -j"$jobs" check >"$work/asan-check.log" 2>&1; then
		grep -E '^(FAIL|ERROR|XPASS):' "$work/asan-check.log" | sed 's/^[A-Z]*: //' |
		while read -r t; do
			say "--- $t.log (last 40 lines)"
			tail -n 40 "$dir/$t.log" 2>/dev/null
		done
		failed "make check with sanitizers"
	else
		grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$work/asan-check.log"
	fi
	unset ASAN_OPTIONS UBSAN_OPTIONS
}

# --------------------------------------------------------------- valgrind --

# The value of make variable $2 in build directory $1.
make_var() {
	# shellcheck disable=SC2016 # $(...) is make's, written literally
	printf 'print-var:\n\t@echo $(%s)\n' "$2" >"$work/print-var.mk"
	make -s -C "$1" -f Makefile -f "$work/print-var.mk" print-var
}

# Does the test's own source start other processes?
multi_process() {
	src=$srcdir/$1.c
	[ -f "$src" ] || return 1
	grep -Eq 'fork\(|_fork\(|holder_process\(|posix_spawn|exec[lv]p?\(|system\(' "$src"
}

listed() {
	case " $2 " in *" $1 "*) return 0 ;; esac
	return 1
}

valgrind_one() {
	dir=$1 t=$2
	say "valgrind $t"
	if (cd "$dir" && CK_FORK=no top_srcdir=$srcdir top_builddir=$dir \
		timeout "${BAKERY_VALGRIND_TIMEOUT:-900}" \
		./libtool --mode=execute valgrind -q --error-exitcode=1 --leak-check=full \
		--errors-for-leak-kinds=definite --show-leak-kinds=definite \
		"./$t") >"$work/valgrind.log" 2>&1; then
		tail -n 3 "$work/valgrind.log"
	else
		tail -n 60 "$work/valgrind.log"
		failed "valgrind $t"
	fi
}

valgrind_pass() {
	dir=$work/plain
	if ! command -v valgrind >/dev/null 2>&1; then
		failed "valgrind not installed"
		return
	fi
	build "$dir" --enable-werror || { failed "plain build"; return; }
	say "building the test programs (make check TESTS=)"
	make -s -C "$dir" -j"$jobs" check TESTS= >/dev/null 2>&1 || { failed "test programs"; return; }
	tests=$(make_var "$dir" TESTS)
	xfail=$(make_var "$dir" XFAIL_TESTS)
	picked=
	for t in $tests; do
		case $t in tests/unit/*) ;; *) continue ;; esac
		if listed "$t" "$xfail ${BAKERY_VALGRIND_SKIP:-}"; then
			say "skip $t (expected failure, or BAKERY_VALGRIND_SKIP)"
		elif multi_process "$t"; then
			say "skip $t (multi-process)"
		elif [ -x "$dir/$t" ]; then
			picked="$picked $t"
		fi
	done
	for t in tests/fuzz/bakery-fuzz-replay ${BAKERY_VALGRIND_EXTRA:-}; do
		[ -x "$dir/$t" ] && picked="$picked $t"
	done
	for t in $picked; do
		valgrind_one "$dir" "$t"
	done
}

# ------------------------------------------------------------------ main --

say "libbakery hardening: sources $srcdir, builds in $work"
sanitizer_pass
valgrind_pass
if [ -n "$failures" ]; then
	say "hardening FAILED:$failures (builds kept in $work)"
	exit 1
fi
say "hardening passed"
[ "$keep" = 1 ] || rm -rf "$work"
exit 0
