#!/bin/sh
# SPDX-License-Identifier: MIT
# matrix.sh SYSCALL ERRNO - one row of the kernel and container matrix:
# test programs run under seccomp-run with SYSCALL refused with ERRNO, as a
# kernel before 5.16 (futex_waitv: ENOSYS), a container's seccomp profile
# (EPERM) or a kernel without membarrier (ENOSYS, EPERM) would.  Each program
# must keep its verdict; then wait-cost, plain (the baseline) and filtered:
# a blocked waiter may cost at most BOUND_US microseconds of CPU per second
# (or 4 times the baseline on a machine so loaded that the baseline itself
# comes near it: the busy loop this catches costs hundreds of milliseconds),
# and the holder's death must still reach every waiter.
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
BOUND_US=2000
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

# the figure wait-cost prints last
cost() {
	awk '$1 == "max_us_per_s" { print $2 }' "$1"
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
base=$(cost "$tmp/base")
row=$(cost "$tmp/row")
if [ -z "$base" ] || [ -z "$row" ]; then
	echo "FAIL: wait-cost printed no figure"
	exit 1
fi
bound=$BOUND_US
[ $((4 * base)) -gt "$bound" ] && bound=$((4 * base))
echo "blocked waiter: $row us/s with $call -> $err, $base us/s without; bound $bound us/s"
if [ "$row" -gt "$bound" ]; then
	echo "FAIL: a blocked waiter costs $row us of CPU per second"
	failed=1
fi
exit "$failed"
