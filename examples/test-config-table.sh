#!/bin/sh
# SPDX-License-Identifier: MIT
# test-config-table.sh - `make check`: examples/config_table.c, three
# readers and a writer.  One reader is killed (SIGKILL) inside the lock,
# then the writer half-way through an update; a second writer must be told
# (EOWNERDEAD) and repair, the surviving readers must carry on, never see a
# torn table unless told of the writer's death, and end on the last version.
set -u
build=${top_builddir:-.}
prog=$build/examples/config_table
region=/bakery-config-test-$$
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bakery-config-test.XXXXXX")
table=$tmp/table
pids=
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	"$build/tools/bakery" unlink "$region" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
status=0
fail() { echo "FAIL: $*"; status=1; }

# wait_for FILE PATTERN: until FILE has a line matching PATTERN (60 s at most)
wait_for() {
	n=0
	until grep -q "$2" "$1" 2>/dev/null || [ "$n" -ge 600 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	grep -q "$2" "$1" 2>/dev/null || fail "never: '$2' in $1"
}

# kill_inside PID: SIGKILL, and reap it
kill_inside() {
	kill -9 "$1"
	wait "$1" 2>/dev/null
}

# the readers; reader 3 stops inside the lock at its 20th read
for i in 1 2; do
	"$prog" "$region" "$table" reader >"$tmp/reader.$i" &
	eval "reader_$i=\$!"
	pids="$pids $!"
done
"$prog" "$region" "$table" reader 0 20 >"$tmp/reader.3" &
reader_3=$!
pids="$pids $!"
wait_for "$tmp/reader.3" "stopped inside"
kill_inside "$reader_3"

# the first writer stops half-way through its 10th update
"$prog" "$region" "$table" writer 50 10 >"$tmp/writer.1" &
writer_1=$!
pids="$pids $!"
wait_for "$tmp/writer.1" "stopped inside"
kill_inside "$writer_1"

"$prog" "$region" "$table" writer 50 >"$tmp/writer.2" || fail "the second writer failed"
touch "$table.stop"
# shellcheck disable=SC2154 # set by eval
for p in "$reader_1" "$reader_2"; do
	wait "$p" || fail "a surviving reader exited $?"
done
cat "$tmp/reader.1" "$tmp/reader.2" "$tmp/writer.1" "$tmp/writer.2"

grep -q "the previous writer died in version 10 (entry 32 torn): repaired" "$tmp/writer.2" ||
	fail "the second writer was not told of the first one's death"
grep -q "done at version 60" "$tmp/writer.2" || fail "the second writer did not finish"
for i in 1 2; do
	grep -q ": [0-9]* reads, 0 torn, last version 60," "$tmp/reader.$i" ||
		fail "reader $i: $(cat "$tmp/reader.$i")"
done
json=$("$build/tools/bakery" status "$region" --json)
for field in reader_deaths owner_deaths; do
	got=$(printf '%s\n' "$json" | sed -n "s/.*\"$field\": \([0-9]*\).*/\1/p")
	[ "$got" = 1 ] || fail "$field: $got, expected 1"
done
exit "$status"
