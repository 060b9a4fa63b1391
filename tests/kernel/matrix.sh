#!/bin/sh
# SPDX-License-Identifier: MIT
# matrix.sh SYSCALL ERRNO - one row of the kernel and container matrix:
# test programs run under seccomp-run with SYSCALL refused with ERRNO, as a
# kernel before 5.16 (futex_waitv: ENOSYS), a container's seccomp profile
# (EPERM) or a kernel without membarrier (ENOSYS, EPERM) would.  Each program
# must keep its verdict; then wait-cost, plain (the baseline) and filtered:
# a blocked waiter may sleep at most SLEEPS_BOUND times a second (or 4 times
# the baseline's figure, if more): without futex_waitv it naps, 10 times a
# second once its naps have grown, and naps that stopped growing would show
# here as hundreds; the count does not depend on the machine's load, which
# can delay a wake-up but never bring one forward.  And it may cost at most
# SPIN_BOUND_US microseconds of CPU per second (or 4 times the baseline):
# the busy loop this catches costs hundreds of thousands, while the CPU time
# of ten naps a second, tens to hundreds of microseconds on an idle machine,
# grew to 3,944 once under a make check at load 10, so a CPU bound near the
# idle figure judged the load, not the code.  And the holder's death must
# still reach every waiter.
#
# What each row runs (the matrix must stay near a minute and a half; both
# rows of a system call run the same code once the first refusal is
# remembered, so they share the long programs between them):
#   every futex_waitv row: waits and hand-overs (test_wait_handoff: a death
#       wake-up passed on; test_lock_queue: the order of a line;
#       test_timed: deadlines on both clocks), slot waiting (test_slot_wait)
#   futex_waitv ENOSYS: and crash recovery (crash-recover)
#   futex_waitv EPERM:  and passing (test_pass: being passed wakes a sleeper
#       through a word futex_waitv watches)
#   every membarrier row: reclamation (idle-slots: the documented answer
#       without membarrier; test_slot_reclaim asserts reclamation itself and
#       is not run), slot waiting (test_slot_wait), a wait (test_wait_handoff)
#   membarrier ENOSYS:  and crash recovery (crash-recover)
# Not run: test_wakeups, which counts the threads each release wakes: a
# waiter between two of its sleeps without futex_waitv is woken by nobody,
# by design (it looks again at the end of the sleep).
# Exit status: 0, 1 (a verdict changed or a bound was broken), 77 (no
# seccomp filter here, printed by seccomp-run).
set -u
top=${top_builddir:-.}
call=$1
err=$2
run="$top/tests/kernel/seccomp-run"
SPIN_BOUND_US=20000
SLEEPS_BOUND=50
# a program whose waits turned into a busy loop may take for ever: cut
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout 300"

waits="tests/unit/test_wait_handoff tests/unit/test_lock_queue tests/unit/test_timed
       tests/unit/test_slot_wait"
case $call-$err in
futex_waitv-ENOSYS) tests="$waits tests/crash/crash-recover" ;;
futex_waitv-*)      tests="$waits tests/unit/test_pass" ;;
membarrier-ENOSYS)  tests="tests/kernel/idle-slots tests/unit/test_slot_wait
                           tests/unit/test_wait_handoff tests/crash/crash-recover" ;;
membarrier-*)       tests="tests/kernel/idle-slots tests/unit/test_slot_wait
                           tests/unit/test_wait_handoff" ;;
*)
	echo "matrix.sh: unknown system call $call" >&2
	exit 99 ;;
esac

"$run" "$call" "$err" true
st=$?
if [ "$st" -ne 0 ]; then
	[ "$st" -eq 77 ] || echo "matrix.sh: seccomp-run cannot refuse $call here ($st)" >&2
	exit "$st"
fi

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
failed=0

# a figure wait-cost prints last: max_us_per_s or max_sleeps_per_s
figure() {
	awk -v k="$2" '$1 == k { print $2 }' "$1"
}

# larger of $1 and 4 times $2
bound_of() {
	if [ $((4 * $2)) -gt "$1" ]; then echo $((4 * $2)); else echo "$1"; fi
}

for t in $tests; do
	start=$(date +%s)
	$limit "$run" "$call" "$err" "$top/$t" >"$tmp/out" 2>&1
	st=$?
	echo "== $call -> $err: $t: exit $st, $(($(date +%s) - start)) s"
	if [ "$st" -ne 0 ]; then
		cat "$tmp/out"
		failed=1
	fi
done

$limit "$top/tests/kernel/wait-cost" >"$tmp/base" 2>&1 || failed=1
$limit "$run" "$call" "$err" "$top/tests/kernel/wait-cost" >"$tmp/row" 2>&1 || failed=1
echo "== wait-cost, no filter (the baseline):"
cat "$tmp/base"
echo "== wait-cost, $call -> $err:"
cat "$tmp/row"
base=$(figure "$tmp/base" max_us_per_s)
row=$(figure "$tmp/row" max_us_per_s)
if [ -z "$base" ] || [ -z "$row" ]; then
	echo "FAIL: wait-cost printed no figure"
	exit 1
fi
bound=$(bound_of "$SPIN_BOUND_US" "$base")
echo "blocked waiter: $row us/s with $call -> $err, $base us/s without; bound $bound us/s"
if [ "$row" -gt "$bound" ]; then
	echo "FAIL: a blocked waiter costs $row us of CPU per second"
	failed=1
fi
base=$(figure "$tmp/base" max_sleeps_per_s)
row=$(figure "$tmp/row" max_sleeps_per_s)
if [ -z "$base" ] || [ -z "$row" ]; then
	echo "blocked waiter's sleeps: not counted (no /proc/self/task)"
else
	bound=$(bound_of "$SLEEPS_BOUND" "$base")
	echo "blocked waiter: $row sleeps/s with $call -> $err, $base without; bound $bound"
	if [ "$row" -gt "$bound" ]; then
		echo "FAIL: a blocked waiter sleeps $row times a second"
		failed=1
	fi
fi
exit "$failed"
