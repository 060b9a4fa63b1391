#!/bin/sh
# SPDX-License-Identifier: MIT
# run-fuzzer.sh - builds the libFuzzer harness of the region validation
# (fuzz-libfuzzer.c + fuzz-region.c + the library, all instrumented) with
# clang, and fuzzes.  Called by `make fuzz`; needs clang with libFuzzer
# (exits 77, "skipped", without it).  configure does not look for clang:
# `make check` only replays the corpus (replay.c), with the normal compiler.
#
#   run-fuzzer.sh build             build WORK/bakery-fuzz
#   run-fuzzer.sh seeds DIR         write the template seeds into DIR
#   run-fuzzer.sh run [SECONDS]     fuzz (default 120 s) from the corpus and
#                                   the seeds; new inputs go to WORK/corpus,
#                                   crashes to WORK/artifacts, logs to
#                                   WORK/logs; status 1 if anything crashed
#   run-fuzzer.sh merge [--update]  minimize the repository corpus plus
#                                   WORK/corpus into WORK/merged; --update
#                                   instead adds to tests/fuzz/corpus the
#                                   inputs of WORK/corpus with new coverage
#                                   (removing none: named inputs stay)
#
# Environment: top_srcdir, top_builddir (config.h; default: the current
# directory), FUZZ_WORK (default top_builddir/tests/fuzz/work), CLANG,
# FUZZ_FLAGS (more libFuzzer flags for `run`).
set -eu

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$(pwd)}
work=${FUZZ_WORK:-$top_builddir/tests/fuzz/work}
clang=${CLANG:-clang}
fuzzdir=$top_srcdir/tests/fuzz
bin=$work/bakery-fuzz

log() { printf '%s\n' "run-fuzzer: $*" >&2; }

have_libfuzzer() {
	probe=$work/probe.c
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
		>"$probe"
	"$clang" -fsanitize=fuzzer "$probe" -o "$work/probe" >/dev/null 2>&1
}

build() {
	mkdir -p "$work"
	if ! command -v "$clang" >/dev/null 2>&1 || ! have_libfuzzer; then
		log "clang with libFuzzer not found: skipped"
		exit 77
	fi
	if [ ! -f "$top_builddir/config.h" ]; then
		log "no config.h in $top_builddir: configure first"
		exit 1
	fi
	# shellcheck disable=SC2046 # pkg-config's words are separate flags
	set -- $(pkg-config --cflags --libs liburcu)
	log "building $bin"
	"$clang" -g -O1 -std=gnu11 -pthread \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-I"$top_builddir" -I"$top_srcdir/lib" -I"$top_srcdir/lib/algo" -I"$fuzzdir" \
		"$top_srcdir"/lib/*.c "$top_srcdir"/lib/algo/*.c \
		"$fuzzdir/fuzz-region.c" "$fuzzdir/fuzz-libfuzzer.c" \
		"$@" -lrt -o "$bin"
}

# Template inputs without patches: every slot count, lock count, scenario
# and algorithm of L0 (L1 takes the next one).
seeds() {
	dir=$1
	mkdir -p "$dir"
	for ctl in $(seq 0 63); do
		for a in 0 1 2 3; do
			alg=$(( a | (((a + 1) % 4) << 2) ))
			# shellcheck disable=SC2059 # the format is the octal escapes
			printf "\\$(printf %03o "$ctl")\\$(printf %03o "$alg")" \
				>"$dir/seed-$ctl-$alg"
		done
	done
	# raw: an empty object, a short one, a page of zeros
	: >"$dir/raw-empty"
	printf '\200BAKERY' >"$dir/raw-short"
	{ printf '\200'; head -c 4096 /dev/zero; } >"$dir/raw-zeros"
	# raw: whole regions made by the tool (past validation; FIXHASH set)
	tool=$top_builddir/tools/bakery
	[ -x "$tool" ] || return 0
	raw_region "$dir/raw-region-2-1" 2 1 jayanti
	raw_region "$dir/raw-region-4-2" 4 2 lamport black-white
}

# raw_region FILE SLOTS LOCKS ALGO...: a region with one lock per ALGO.
raw_region() {
	out=$1 slots=$2 locks=$3
	shift 3
	name=bakery-fuzz-seed-$$
	"$tool" unlink "$name" >/dev/null 2>&1 || :
	"$tool" create "$name" --slots "$slots" --locks "$locks"
	n=0
	for algo in "$@"; do
		"$tool" run "$name" "L$n" --algo "$algo" -- true
		n=$((n + 1))
	done
	{ printf '\210'; cat "/dev/shm/$name"; } >"$out"
	"$tool" unlink "$name"
}

# Fuzz until SECONDS have passed.  libFuzzer stops at the first crash, so
# it is started again (the corpus kept) until the time is spent, each run
# logged to WORK/logs; then every crash found is listed with its first
# error line, and the status is 1 if there was any.
run() {
	seconds=${1:-120}
	build
	rm -rf "$work/logs"
	mkdir -p "$work/corpus" "$work/artifacts" "$work/logs"
	seeds "$work/seeds"
	log "fuzzing for $seconds s"
	end=$(($(date +%s) + seconds))
	n=0
	while [ "$(date +%s)" -lt "$end" ]; do
		n=$((n + 1))
		# shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags
		"$bin" ${FUZZ_FLAGS:-} -max_total_time=$((end - $(date +%s) + 1)) \
			-max_len=16384 -timeout=10 -rss_limit_mb=4096 \
			-dict="$fuzzdir/region.dict" -use_value_profile=1 -print_final_stats=1 \
			-artifact_prefix="$work/artifacts/" \
			"$work/corpus" "$fuzzdir/corpus" "$work/seeds" >"$work/logs/run-$n.log" 2>&1 &
		pid=$!
		wait "$pid" || :        # a crash: logged, listed below, and fuzzing goes on
		# the objects of a case that crashed (named after the fuzzer's pid)
		rm -f "/dev/shm/bakery-fuzz-$pid" "/dev/shm/bakery-fuzz-tpl-$pid"
	done
	report
}

report() {
	execs=$(cat "$work"/logs/*.log | sed -n 's/^stat::number_of_executed_units: //p' |
		awk '{ s += $1 } END { print s + 0 }')
	log "$n runs, $execs executions, corpus $(find "$work/corpus" -type f | wc -l) files"
	crashes=0
	for f in "$work"/logs/*.log; do
		a=$(sed -n 's/.*Test unit written to //p' "$f" | head -n 1)
		[ -n "$a" ] || continue
		crashes=$((crashes + 1))
		why=$(grep -m 1 -E 'Assertion|^fuzz-region.c|ERROR: [A-Za-z]*Sanitizer|runtime error|#[0-9]+ 0x[0-9a-f]+ in [a-z_]+ [^(]*lib/' "$f")
		log "crash: $a: $why"
	done
	[ "$crashes" -eq 0 ]
}

merge() {
	build
	mkdir -p "$work/corpus"
	if [ "${1:-}" = --update ]; then
		# into the repository corpus itself: libFuzzer adds the inputs
		# of WORK/corpus that bring new coverage and removes nothing,
		# so the inputs named after the bug they found keep their names
		before=$(find "$fuzzdir/corpus" -type f | wc -l)
		"$bin" -merge=1 -max_len=16384 -timeout=10 "$fuzzdir/corpus" "$work/corpus"
		log "tests/fuzz/corpus: $(($(find "$fuzzdir/corpus" -type f | wc -l) - before))" \
			"inputs added"
		return
	fi
	rm -rf "$work/merged"
	mkdir -p "$work/merged"
	"$bin" -merge=1 -max_len=16384 -timeout=10 "$work/merged" \
		"$fuzzdir/corpus" "$work/corpus"
	log "minimized corpus: $(find "$work/merged" -type f | wc -l) files," \
		"$(cat "$work"/merged/* | wc -c) bytes"
}

case ${1:-run} in
build) build ;;
seeds) seeds "${2:?seeds DIR}" ;;
run) run "${2:-120}" ;;
merge) merge "${2:-}" ;;
*) log "unknown command $1"; exit 2 ;;
esac
