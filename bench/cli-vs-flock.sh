#!/bin/sh
# SPDX-License-Identifier: MIT
# cli-vs-flock.sh - `bakery run`/`bakery flock` against util-linux flock(1)
# as a shell user sees them, side by side.  Not part of `make check`.
#
#   bench/cli-vs-flock.sh [-r REPEATS] BAKERY [OTHER-BAKERY]
#
# BAKERY (and OTHER-BAKERY, say the tool of another build, measured
# alternately in the same session) run each scene REPEATS times (default
# 3), flock(1) too.  Give the programs themselves (an installed bakery, or
# a build's tools/.libs/bakery with LD_LIBRARY_PATH set to its lib/.libs),
# not libtool's tools/bakery wrapper: that one is a shell script, which
# would add a shell's start to every job that flock(1) does not pay.  Each
# tool runs every scene; one line per scene and tool, with every repeat's
# figure (a shared machine's figures vary: read ranges, not one number).
# The tools: "new" (and "old") is `bakery run REGION LOCK`, a named lock in
# a region of the scene's own, one per tool (two builds may not share a
# region layout); "file" is BAKERY's `bakery flock FILE`, the
# file's path lock (in a region of path locks of the scene's own,
# BAKERY_PATH_REGION); "flock" is flock(1) on the same file.
#   order      20 jobs queued one after another behind a holder: how many
#              entered out of arrival order (inversions), and how many -n
#              tries made while the queue drained got in ahead of it
#   writer     a stream of overlapping readers (-s, one every 50 ms, each
#              200 ms) and a writer arriving 0.5 s in: seconds the writer
#              waited (the stream stops after 6 s)
#   jobs-200   wall seconds for 200 jobs started at once, each `true`
#   jobs-400   the same with 400
#   kill       seconds from SIGKILL of the holding job (its process group)
#              to the start of the job queued behind it
#   kill-wrap  (bakery only) the same when only the wrapper is killed
set -u

repeats=3
if [ "${1:-}" = -r ]; then
	repeats=$2
	shift 2
fi
if [ $# -lt 1 ] || ! command -v flock >/dev/null 2>&1; then
	echo "usage: cli-vs-flock.sh [-r REPEATS] BAKERY [OTHER-BAKERY] (needs flock(1))" >&2
	exit 2
fi
main=$1
tools="new:$main file:$main flock:flock"
[ $# -ge 2 ] && tools="new:$main old:$2 file:$main flock:flock"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cli-vs-flock.XXXXXX")
region=/cli-vs-flock-$$
BAKERY_PATH_REGION=/cli-vs-flock-paths-$$
export BAKERY_PATH_REGION
trap 'rm -rf "$tmp"; "$main" unlink "$BAKERY_PATH_REGION" 2>/dev/null
	for t in $tools; do [ "${t%%:*}" = flock ] || "${t#*:}" unlink "$region-${t%%:*}" 2>/dev/null; done' EXIT
touch "$tmp/lockfile"
# the name of the file's path lock, for `status`
pathlock=$("$main" run --verbose --file "$tmp/lockfile" -- true 2>&1 |
	sed -n 's/^bakery: run .*: the path lock \(path:[^ ]*\) of .*/\1/p')

now() { date +%s%N; }
secs() { echo "$1" | awk '{ printf "%.3f", $1 / 1e9 }'; }

# locker TOOL [-s|-n] -- COMMAND...: take the scene's lock with TOOL
locker() {
	name=${1%%:*}
	bin=${1#*:}
	shift
	mode=
	while [ "$1" != -- ]; do
		mode="$mode $1"
		shift
	done
	shift
	# shellcheck disable=SC2086 # the options
	case $name in
	flock) flock $mode "$tmp/lockfile" "$@" ;;
	file) "$bin" flock $mode "$tmp/lockfile" "$@" 2>/dev/null ;;
	*) "$bin" run $mode -E 1 "$region-$name" scene -- "$@" 2>/dev/null ;;
	esac
}

# How many jobs wait for the scene's lock (flock's: /proc/locks' blocked
# requests on the file).
waiters() {
	case ${1%%:*} in
	flock) grep -c -- "-> .*:$(stat -c %i "$tmp/lockfile") " /proc/locks ;;
	file) "${1#*:}" status "$BAKERY_PATH_REGION" --json 2>/dev/null | python3 -c '
import json, sys
print(sum(l["waiters"] for l in json.load(sys.stdin)["locks"] if l["name"] == sys.argv[1]))' \
		"$pathlock" ;;
	*) "${1#*:}" status "$region-${1%%:*}" --json 2>/dev/null | python3 -c '
import json, sys
print(sum(l["waiters"] for l in json.load(sys.stdin)["locks"] if l["name"] == "scene"))' ;;
	esac
}

# Wait (10 s at most) until N jobs wait for the lock.
queued() {
	n=0
	while [ "$(waiters "$1")" -lt "$2" ] && [ "$n" -lt 1000 ]; do
		sleep 0.01
		n=$((n + 1))
	done
}

# A holder until $tmp/release exists; returns once it holds the lock.
hold() {
	rm -f "$tmp/held" "$tmp/release"
	locker "$1" -- sh -c "touch '$tmp/held'; while [ ! -e '$tmp/release' ]; do sleep 0.01; done" &
	while [ ! -e "$tmp/held" ]; do sleep 0.01; done
}

scene_order() {
	rm -f "$tmp/entered" "$tmp/jumps"
	touch "$tmp/lockfile"
	hold "$1"
	pids=
	for i in $(seq 20); do
		locker "$1" -- sh -c "echo $i >>'$tmp/entered'; sleep 0.02" &
		pids="$pids $!"
		queued "$1" "$i"        # in line before the next one comes
	done
	touch "$tmp/release"
	# -n tries while the queue drains: each that gets in jumps the queue
	tries=0
	# (bounded: a tool that lets nobody in must not hang the bench)
	while [ "$(cat "$tmp/entered" 2>/dev/null | wc -l)" -lt 18 ] && [ "$tries" -lt 3000 ]; do
		locker "$1" -n -- sh -c "echo jump >>'$tmp/jumps'" && true
		tries=$((tries + 1))
	done
	wait
	inversions=$(awk '{ a[NR] = $1 } END { n = 0; for (i = 1; i <= NR; i++)
		for (j = i + 1; j <= NR; j++) if (a[i] > a[j]) n++; print n }' "$tmp/entered")
	echo "$inversions/$(cat "$tmp/jumps" 2>/dev/null | wc -l)of$tries"
}

scene_writer() {
	rm -f "$tmp/stop" "$tmp/writer"
	(
		while [ ! -e "$tmp/stop" ]; do
			locker "$1" -s -- sleep 0.2 &
			sleep 0.05
		done
		wait
	) &
	stream=$!
	sleep 0.5
	asked=$(now)
	locker "$1" -- sh -c "date +%s%N >'$tmp/writer'" &
	writer=$!
	n=0
	while [ ! -s "$tmp/writer" ] && [ "$n" -lt 550 ]; do
		sleep 0.01
		n=$((n + 1))
	done
	touch "$tmp/stop"
	wait "$writer"
	wait "$stream"
	secs $(($(cat "$tmp/writer") - asked))
}

scene_jobs() {
	start=$(now)
	for i in $(seq "$2"); do
		locker "$1" -- true &
	done
	wait
	secs $(($(now) - start))
}

# kill WHOM: the holder's process group, or (bakery) its wrapper only
scene_kill() {
	rm -f "$tmp/held" "$tmp/next"
	setsid sh -c "exec $(holder_cmd "$1")" &
	holder=$!
	while [ ! -e "$tmp/held" ]; do sleep 0.01; done
	locker "$1" -- sh -c "date +%s%N >'$tmp/next'" &
	next=$!
	queued "$1" 1
	killed=$(now)
	if [ "$2" = group ]; then
		/bin/kill -KILL -- "-$holder"
	else
		kill -9 "$holder"
	fi
	wait "$next"
	wait "$holder" 2>/dev/null
	secs $(($(cat "$tmp/next") - killed))
}

# The holder of scene_kill as one shell word list (run by setsid's sh).
holder_cmd() {
	body="touch '$tmp/held'; exec sleep 60"
	case ${1%%:*} in
	flock) echo "flock '$tmp/lockfile' sh -c \"$body\"" ;;
	file) echo "'${1#*:}' flock '$tmp/lockfile' sh -c \"$body\"" ;;
	*) echo "'${1#*:}' run '$region-${1%%:*}' scene -- sh -c \"$body\"" ;;
	esac
}

for scene in order writer jobs-200 jobs-400 kill kill-wrap; do
	for t in $tools; do
		eval "out_${t%%:*}="
	done
	for r in $(seq "$repeats"); do
		# alternate: each repeat starts with the next tool
		# shellcheck disable=SC2086 # the tools, a word each
		set -- $tools
		k=$(( (r - 1) % $# ))
		while [ "$k" -gt 0 ]; do
			first=$1
			shift
			set -- "$@" "$first"
			k=$((k - 1))
		done
		for t in "$@"; do
			# shellcheck disable=SC2034 # v is read by the eval below
			case $scene in
			order) v=$(scene_order "$t") ;;
			writer) v=$(scene_writer "$t") ;;
			jobs-*) v=$(scene_jobs "$t" "${scene#jobs-}") ;;
			kill) v=$(scene_kill "$t" group) ;;
			kill-wrap) [ "${t%%:*}" = flock ] && continue
				v=$(scene_kill "$t" wrapper) ;;
			esac
			eval "out_${t%%:*}=\"\$out_${t%%:*} \$v\""
		done
	done
	for t in $tools; do
		[ "$scene" = kill-wrap ] && [ "${t%%:*}" = flock ] && continue
		eval "printf '%-9s %-6s%s\n' \"\$scene\" \"${t%%:*}\" \"\$out_${t%%:*}\""
	done
done
