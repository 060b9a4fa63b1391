#!/bin/sh
# SPDX-License-Identifier: MIT
# test-token-pool.sh - `make check`: examples/token_pool.c, five workers
# sharing three tokens.  One worker is killed (SIGKILL) holding a unit and a
# resource: the others must finish, never be more than three inside at once
# (by the log of entries and exits they append to), one of them be told of
# the death, and one reset the dead worker's resource.  Then three holders
# must get in at once: the dead worker's unit came back.
set -u
build=${top_builddir:-.}
prog=$build/examples/token_pool
bakery=$build/tools/bakery
region=/bakery-pool-test-$$
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bakery-pool-test.XXXXXX")
pids=
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	"$bakery" unlink "$region" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
status=0
fail() { echo "FAIL: $*"; status=1; }

# The victim runs alone first, so its last turn takes resource 0 (every
# resource is free then) and stops holding it.  Two workers start while it
# is stopped (they go on with the two units left), two more once it is
# dead: the first worker in after the death is told of it, and the first
# that tries resource 0 after it resets it, whoever runs faster.
"$prog" "$region" "$tmp/log" 3 40 10 >"$tmp/victim" &
victim=$!
pids=$victim
n=0
until grep -q "stopped holding" "$tmp/victim" || [ "$n" -ge 600 ]; do
	sleep 0.1
	n=$((n + 1))
done
grep -q "stopped holding resource 0" "$tmp/victim" ||
	fail "the victim never stopped inside holding resource 0: $(cat "$tmp/victim")"
for i in 1 2; do
	"$prog" "$region" "$tmp/log" 3 40 >"$tmp/worker.$i" &
	pids="$pids $!"
done
kill -9 "$victim"
wait "$victim" 2>/dev/null
for i in 3 4; do
	"$prog" "$region" "$tmp/log" 3 40 >"$tmp/worker.$i" &
	pids="$pids $!"
done
for p in $pids; do
	[ "$p" = "$victim" ] && continue
	wait "$p" || fail "a worker exited $?"
done
cat "$tmp"/worker.*
grep -q "40 turns" "$tmp/worker.1" "$tmp/worker.2" "$tmp/worker.3" "$tmp/worker.4" ||
	fail "the workers did not finish"
[ "$(cat "$tmp"/worker.* | grep -c ': 40 turns')" = 4 ] || fail "not every worker took 40 turns"
# the most live workers inside at once (the victim's entry is left out: it
# never leaves)
most=$(awk -v victim="$victim" '$2 == victim { next }
	$1 == "+" { n++; if (n > most) most = n } $1 == "-" { n-- } END { print most + 0 }' "$tmp/log")
[ "$most" -le 3 ] || fail "$most workers inside a lock of 3 holders at once"
[ "$(grep -c '^+' "$tmp/log")" = 170 ] || fail "log: $(grep -c '^+' "$tmp/log") entries, expected 4 * 40 + 10"
grep -q "left by a dead worker, reset" "$tmp"/worker.* || fail "nobody reset the dead worker's resource"
grep -q "told of a dead holder [1-9]" "$tmp"/worker.* || fail "nobody was told of the dead holder"

# three at once: each holder waits (30 s at most) to see the other two
for i in 1 2 3; do
	"$bakery" run -w 60 "$region" tokens -- sh -c "touch '$tmp/in.$i'; n=0
		while [ \$(ls '$tmp' | grep -c '^in\.') -lt 3 ] && [ \$n -lt 300 ]; do
			sleep 0.1; n=\$((n + 1)); done
		[ \$(ls '$tmp' | grep -c '^in\.') -eq 3 ]" 2>"$tmp/run.$i" &
	eval "run_$i=\$!"
done
# shellcheck disable=SC2154 # set by eval
for p in "$run_1" "$run_2" "$run_3"; do
	wait "$p" || fail "three holders were not inside at once: $(cat "$tmp"/run.*)"
done
exit "$status"
