#!/bin/sh
# SPDX-License-Identifier: MIT
# demo.sh - what `make demo` (and `./quickstart.sh demo`) runs.
#
# One consumer and four producers, each a separate program, share a ring
# buffer (its own shared-memory object) guarded by one bakery lock.  One
# producer is stopped half-way through writing a record while it holds the
# lock, and killed there with SIGKILL.  The next holder of the lock is told
# that the owner died, discards the half-written record and marks the lock
# consistent; the others carry on.  At the end the consumer proves that every
# committed record was consumed exactly once.
#
#   demo.sh [--quick] [--algo ALGO]
#
# --quick: fewer records (for `make check`); --algo: the lock's algorithm
# (lamport, boulangerie, black-white, jayanti; default: the library's).
#
# The programs are taken from the build directory $top_builddir (default:
# the current directory), as `make demo` sets it.  Exit status 0 only if
# nothing was lost or duplicated.
set -eu

records=3000                    # per producer
deadline=60                     # seconds before the demo gives up
algo=default
while [ $# -gt 0 ]; do
	case $1 in
	--quick) records=300 ;;
	--algo) algo=${2:?--algo needs a value}; shift ;;
	*) echo "usage: $0 [--quick] [--algo ALGO]" >&2; exit 2 ;;
	esac
	shift
done
nproducers=4
victim=3                        # the producer that is killed
stall_at=$((records / 2))       # ... half-way through its record number stall_at

build=${top_builddir:-.}
bakery=$build/tools/bakery
producer=$build/examples/producer
consumer=$build/examples/consumer
for prog in "$bakery" "$producer" "$consumer"; do
	if [ ! -x "$prog" ]; then
		echo "demo: $prog not found; run make first, or set top_builddir" >&2
		exit 1
	fi
done

region=/bakery-demo-$$
ring=/bakery-demo-$$-ring
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bakery-demo.XXXXXX")
pids=
stalled=
watchdog=

cleanup() {
	for p in $pids $stalled; do
		kill -9 "$p" 2>/dev/null || true
	done
	if [ -n "$watchdog" ]; then
		kill "$watchdog" 2>/dev/null || true
	fi
	"$bakery" unlink "$region" 2>/dev/null || true
	# the consumer removes the ring when it ends; it may not have
	rm -f "/dev/shm/${ring#/}"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "demo: interrupted" >&2; exit 1' INT TERM HUP
trap 'echo "demo: gave up after $deadline s" >&2; exit 1' ALRM

# Send SIGALRM to this script after $deadline seconds, unless killed first.
start_watchdog() {
	(
		sleep "$deadline" &
		nap=$!
		trap 'kill "$nap" 2>/dev/null; exit 0' TERM
		wait "$nap" && kill -s ALRM $$
	) >/dev/null 2>&1 &
	watchdog=$!
}

# Wait until file $1 contains the text $2.
wait_for_line() {
	until grep -q "$2" "$1" 2>/dev/null; do
		sleep 0.05
	done
}

# The value of NAME=value in the consumer's summary line.
summary() {
	sed -n "s/.*summary.* $1=\([0-9]*\).*/\1/p" "$tmp/consumer.out"
}

# The number the consumer reports for producer $1, field $2 (committed/consumed).
per_producer() {
	sed -n "s/^consumer: producer $1: committed \([0-9]*\), consumed \([0-9]*\).*/\\$2/p" \
		"$tmp/consumer.out"
}

# A column of the lock "ring" in `bakery status`, by its heading:
# ACQUISITIONS, RECOVERIES (dead slots cleared), OWNER-DEATHS.
lock_column() {
	"$bakery" status "$region" | awk -v name="$1" '
		$1 == "LOCK" { for (i = 1; i <= NF; i++) if ($i == name) col = i }
		$1 == "ring" && col { print $col }'
}

start_watchdog
"$bakery" create "$region" --slots 16 --locks 4
echo "demo: region $region created; 1 consumer and $nproducers producers of $records records" \
	"each share a ring buffer under the lock \"ring\" (algorithm: $algo)"

"$consumer" --region "$region" --ring "$ring" --algo "$algo" >"$tmp/consumer.out" &
consumer_pid=$!
pids="$consumer_pid"
i=0
while [ "$i" -lt "$nproducers" ]; do
	out=$tmp/producer$i.out
	if [ "$i" -eq "$victim" ]; then
		# started from a subshell that exits at once, so that this shell
		# is not its parent and has no "Killed" to say about it
		("$producer" --region "$region" --ring "$ring" --id "$i" --count "$records" \
			--algo "$algo" --stall-at "$stall_at" >"$out" &)
	else
		"$producer" --region "$region" --ring "$ring" --id "$i" --count "$records" \
			--algo "$algo" >"$out" &
		pids="$pids $!"
	fi
	i=$((i + 1))
done

wait_for_line "$tmp/producer$victim.out" stalled
victim_pid=$(sed -n 's/.*(pid \([0-9]*\)).*/\1/p' "$tmp/producer$victim.out")
stalled=$victim_pid              # for cleanup, until it is killed
sleep 0.2                       # let the others line up behind it
echo "demo: producer $victim (pid $victim_pid) stopped half-way through record $stall_at," \
	"holding the lock; everyone else waits:"
"$bakery" status "$region" | sed 's/^./    &/'
kill -9 "$victim_pid"
stalled=
echo "demo: producer $victim killed with SIGKILL"

failed=0
for p in $pids; do
	if [ "$p" != "$consumer_pid" ]; then
		wait "$p" || failed=1
	fi
done
kill -s USR1 "$consumer_pid"
wait "$consumer_pid" || failed=1
pids=                           # all reaped: their numbers may be reused
sed 's/^./    &/' "$tmp/consumer.out"

# Every finished producer committed all its records, the killed one exactly
# the stall_at records before the one it was killed in.
i=0
committed=0
while [ "$i" -lt "$nproducers" ]; do
	want=$records
	if [ "$i" -eq "$victim" ]; then
		want=$stall_at
	fi
	got=$(per_producer "$i" 2)
	if [ "$got" != "$want" ]; then
		echo "demo: producer $i: consumed ${got:-none}, expected $want" >&2
		failed=1
	fi
	committed=$((committed + $(per_producer "$i" 1)))
	i=$((i + 1))
done

echo "demo: report"
echo "    records committed by producers   $committed"
echo "    records consumed                 $(summary consumed)" \
	"(lost $(summary lost), duplicated $(summary duplicated), corrupt $(summary corrupt))"
echo "    half-written records repaired    $(summary repaired)"
echo "    lock hand-offs (acquisitions)    $(lock_column ACQUISITIONS)"
echo "    holders that died in the lock    $(lock_column OWNER-DEATHS)"
echo "    dead slots reclaimed             $(lock_column RECOVERIES)"
echo "    left over for bakery recover     $("$bakery" recover "$region")"
echo "demo: the region at the end:"
"$bakery" status "$region" | sed 's/^./    &/'

if [ "$(summary repaired)" != 1 ] || [ "$(lock_column OWNER-DEATHS)" != 1 ]; then
	echo "demo: expected exactly one repaired record and one dead holder" >&2
	failed=1
fi
if [ "$failed" -ne 0 ]; then
	echo "demo: FAILED" >&2
	exit 1
fi
echo "demo: OK: every committed record was consumed exactly once"
