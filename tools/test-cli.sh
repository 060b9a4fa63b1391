#!/bin/sh
# test-cli.sh - `make check` for the bakery tool (docs/bakery.1): every
# subcommand's error path, `status --json` parsed by a JSON parser, `run`
# passing on the command's status and holding the lock while the command
# runs, the owner-died hand-over, and `recover`.
#
# Uses jq or python3 to parse JSON; exits 77 (skipped) if neither is there.
set -u

build=${top_builddir:-.}
bakery=$build/tools/bakery
region=/bakery-cli-test-$$
junk=bakery-cli-junk-$$
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bakery-cli-test.XXXXXX")
failures=0
holder=

cleanup() {
	if [ -n "$holder" ]; then
		kill -9 "$holder" 2>/dev/null
	fi
	if [ -s "$tmp/cmd.pid" ]; then
		kill -9 "$(cat "$tmp/cmd.pid")" 2>/dev/null
	fi
	"$bakery" unlink "$region" 2>/dev/null
	rm -f "/dev/shm/$junk"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

if command -v jq >/dev/null 2>&1; then
	json() { jq -r "$1"; }
elif command -v python3 >/dev/null 2>&1; then
	# a jq subset: ".a.b", ".a[0].b", ".a | length"
	json() {
		python3 -c '
import json, re, sys
v = json.load(sys.stdin)
expr = sys.argv[1]
length = expr.endswith("| length")
for key, idx in re.findall(r"\.(\w+)|\[(\d+)\]", expr.replace("| length", "")):
    v = v[key] if key else v[int(idx)]
v = len(v) if length else v
print("null" if v is None else str(v).lower() if isinstance(v, bool) else v)' "$1"
	}
else
	echo "test-cli: neither jq nor python3: skipped"
	exit 77
fi

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# run WANT_STATUS COMMAND...: stdout in $tmp/out, stderr in $tmp/err.
run() {
	want=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" != "$want" ]; then
		fail "$* exited $got, expected $want; stderr: $(cat "$tmp/err")"
	fi
}

# error WANT_STATUS COMMAND...: fails with that status and one line on stderr
# that starts "bakery: ".
error() {
	run "$@"
	lines=$(wc -l <"$tmp/err")
	if [ "$lines" -ne 1 ] || ! grep -q '^bakery: ' "$tmp/err"; then
		shift
		fail "$*: expected one 'bakery: ' line on stderr, got: $(cat "$tmp/err")"
	fi
}

# same WHAT GOT WANT
same() {
	if [ "$2" != "$3" ]; then
		fail "$1: got '$2', expected '$3'"
	fi
}

status_json() {
	"$bakery" status "$region" --json >"$tmp/json" || fail "status --json exited $?"
	json "$1" <"$tmp/json"
}

# Start `bakery run REGION LOCK` with a command that holds the lock until
# $tmp/release exists; returns once the command runs.  Pid in $holder.
hold() {
	rm -f "$tmp/held" "$tmp/release" "$tmp/cmd.pid"
	"$bakery" run "$region" "$1" -- sh -c "echo \$\$ >'$tmp/cmd.pid'; touch '$tmp/held';
		while [ ! -e '$tmp/release' ]; do sleep 0.05; done" &
	holder=$!
	n=0
	while [ ! -e "$tmp/held" ] && [ "$n" -lt 200 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	[ -e "$tmp/held" ] || fail "bakery run never started its command"
}

# Kill the holder with SIGKILL, lock held, and its command after it.
kill_holder() {
	kill -9 "$holder"
	wait "$holder" 2>/dev/null
	holder=
	if [ -s "$tmp/cmd.pid" ]; then
		kill "$(cat "$tmp/cmd.pid")"
		rm -f "$tmp/cmd.pid"
	fi
}

test_usage_errors() {
	error 2 "$bakery"
	error 2 "$bakery" frob
	error 2 "$bakery" create
	error 2 "$bakery" create "$region" --slots 0
	error 2 "$bakery" create "$region" --locks 5000
	error 2 "$bakery" create "$region" --mode 0999
	error 2 "$bakery" create "$region" extra
	error 2 "$bakery" status
	error 2 "$bakery" status "$region" --bogus
	error 2 "$bakery" recover
	error 2 "$bakery" unlink
	error 125 "$bakery" run
	error 125 "$bakery" run "$region"
	error 125 "$bakery" run "$region" lock
	error 125 "$bakery" run "$region" lock --algo nonesuch -- true
	error 125 "$bakery" run "$region" lock --timeout -1 -- true
	error 125 "$bakery" run "$region" lock --timeout soon -- true
}

test_missing_region() {
	error 1 "$bakery" status "$region"
	same "message" "$(cat "$tmp/err")" "bakery: status $region: no such region"
	error 1 "$bakery" recover "$region"
	error 1 "$bakery" unlink "$region"
	error 1 "$bakery" create "bad/name"
	error 1 "$bakery" status "$(printf 'x%.0s' $(seq 1 250))"
}

test_create_and_json() {
	run 0 "$bakery" create "$region" --slots 8 --locks 6 --mode 0640
	error 1 "$bakery" create "$region"
	same "create twice" "$(cat "$tmp/err")" "bakery: create $region: region exists"
	same "region" "$(status_json .region)" "$region"
	same "slots_capacity" "$(status_json .slots_capacity)" 8
	same "locks_capacity" "$(status_json .locks_capacity)" 6
	same "mode" "$(status_json .mode)" 0640
	same "creator_pid > 0" "$(status_json .creator_pid | grep -c '^[1-9]')" 1
	same "slots" "$(status_json '.slots | length')" 0
	same "locks" "$(status_json '.locks | length')" 0
	run 0 "$bakery" status "$region"
	grep -q "^slots: 0 of 8 in use; locks: 0 of 6 in use" "$tmp/out" ||
		fail "status table: $(cat "$tmp/out")"
	if [ -w /dev/full ]; then
		"$bakery" status "$region" >/dev/full 2>/dev/null && fail "status >/dev/full succeeded"
	fi
}

test_run_status() {
	run 7 "$bakery" run "$region" jobs -- sh -c 'exit 7'
	run 0 "$bakery" run "$region" jobs true
	same "command output" "$("$bakery" run "$region" jobs echo hi)" hi
	run 143 "$bakery" run "$region" jobs -- sh -c 'kill -TERM $$'
	error 127 "$bakery" run "$region" jobs -- /nonexistent/command
	error 126 "$bakery" run "$region" jobs -- /dev/null
	error 125 "$bakery" run "$region" 'bad/lock' -- true
	run 0 "$bakery" run "$region" 'we"ird\name' -- true
	error 125 "$bakery" run "$region" jobs --algo jayanti -- true
	same "acquisitions" "$(status_json .locks[0].acquisitions)" 6
	same "lock name" "$(status_json .locks[0].name)" jobs
	same "escaped lock name" "$(status_json .locks[1].name)" 'we"ird\name'
	run 0 "$bakery" run "$region" jay --algo jayanti -- true
	same "algorithm" "$(status_json .locks[2].algorithm)" jayanti
}

test_run_holds_lock() {
	hold held
	run 75 "$bakery" run --timeout 0.2 "$region" held -- touch "$tmp/ran"
	run 75 "$bakery" run "$region" held --timeout 0 -- touch "$tmp/ran"
	[ -e "$tmp/ran" ] && fail "a command ran while another held its lock"
	same "holder slot" "$(status_json .locks[3].holder)" "$(status_json .slots[0].index)"
	same "holder pid" "$(status_json .slots[0].pid)" "$holder"
	same "holder pass" "$(status_json .slots[0].pass)" critical
	same "holder lock" "$(status_json .slots[0].lock)" held
	same "running holder" "$(status_json .slots[0].stopped)" false
	kill -STOP "$holder"
	same "stopped holder" "$(status_json .slots[0].stopped)" true
	"$bakery" status "$region" | grep -q " stopped " || fail "status table: no stopped owner"
	kill -CONT "$holder"
	same "continued holder" "$(status_json .slots[0].stopped)" false
	touch "$tmp/release"
	wait "$holder" || fail "the holding bakery run exited $?"
	holder=

	# SIGTERM to bakery run ends the command; the lock is released cleanly
	hold held
	kill -TERM "$holder"
	wait "$holder"
	same "status after SIGTERM" "$?" 143
	holder=
	kill -0 "$(cat "$tmp/cmd.pid")" 2>/dev/null && fail "the command outlived SIGTERM"
	same "no owner death" "$(status_json .locks[3].owner_deaths)" 0
	same "released" "$(status_json .locks[3].holder)" null
	run 0 "$bakery" run --timeout 0.2 "$region" held -- touch "$tmp/ran"
	[ -e "$tmp/ran" ] || fail "the command did not run once the lock was free"
	same "aborts" "$(status_json .locks[3].aborts)" 2
	same "acquisitions" "$(status_json .locks[3].acquisitions)" 3
}

# shellcheck disable=SC2016 # the commands' $VARIABLES are theirs to expand
test_owner_died() {
	hold dies
	kill_holder
	same "dead slot" "$(status_json .slots[0].alive)" false
	run 0 "$bakery" run "$region" dies -- sh -c 'echo "owner_dead=${BAKERY_OWNER_DEAD:-}"'
	same "after a death" "$(cat "$tmp/out")" "owner_dead=1"
	grep -q "^bakery: run $region dies: the previous holder died" "$tmp/err" ||
		fail "no owner-died warning: $(cat "$tmp/err")"
	run 0 "$bakery" run "$region" dies -- sh -c 'echo "owner_dead=${BAKERY_OWNER_DEAD:-}"'
	same "once repaired" "$(cat "$tmp/out")" "owner_dead="
	same "owner deaths" "$(status_json .locks[4].owner_deaths)" 1
	same "state" "$(status_json .locks[4].state)" ok

	hold dies
	kill_holder
	run 0 "$bakery" recover "$region"
	same "recover" "$(cat "$tmp/out")" "1 slot reclaimed"
	same "owner died" "$(status_json .locks[4].state)" owner-died
	run 3 "$bakery" run "$region" dies -- sh -c 'exit 3'
	error 125 "$bakery" run "$region" dies -- true
	same "not recoverable" "$(status_json .locks[4].state)" not-recoverable
	run 0 "$bakery" recover "$region"
	same "recover again" "$(cat "$tmp/out")" "0 slots reclaimed"
}

test_help_and_unlink() {
	run 0 "$bakery" --help
	for sub in create status recover unlink run; do
		grep -q "bakery $sub" "$tmp/out" || fail "--help does not mention $sub"
	done
	run 0 "$bakery" help
	run 0 "$bakery" run --help
	run 0 "$bakery" --version
	grep -q '^bakery (libbakery) [0-9]' "$tmp/out" || fail "--version: $(cat "$tmp/out")"
	run 0 "$bakery" unlink "$region"
	error 1 "$bakery" status "$region"
	if [ -d /dev/shm ]; then
		# not a region: status and unlink refuse it, unlink --force removes it
		head -c 8192 /dev/zero >"/dev/shm/$junk"
		error 1 "$bakery" status "/$junk"
		error 1 "$bakery" unlink "/$junk"
		[ -e "/dev/shm/$junk" ] || fail "unlink removed a non-region"
		run 0 "$bakery" unlink --force "/$junk"
		[ -e "/dev/shm/$junk" ] && fail "unlink --force left it"
	fi
}

test_usage_errors
test_missing_region
test_create_and_json
test_run_status
test_run_holds_lock
test_owner_died
test_help_and_unlink

if [ "$failures" -ne 0 ]; then
	echo "test-cli: $failures failure(s)"
	exit 1
fi
echo "test-cli: all passed"
