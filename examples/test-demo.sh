#!/bin/sh
# SPDX-License-Identifier: MIT
# test-demo.sh - `make check`: the demo, shorter, once per algorithm.  Each
# run kills a producer inside the lock and must find nothing lost or
# duplicated, the half-written record discarded, one dead holder counted.
set -eu
demo=${top_srcdir:-.}/examples/demo.sh
for algo in lamport boulangerie black-white jayanti; do
	echo "=== $algo"
	"${SHELL:-/bin/sh}" "$demo" --quick --algo "$algo"
done
