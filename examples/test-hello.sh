#!/bin/sh
# SPDX-License-Identifier: MIT
# test-hello.sh - `make check`: the README's example program (hello.c) run
# twice at once.  The lock must keep the two turns apart: each "my turn" is
# followed by the same process's "done" before the other one's turn.  And
# the copy of hello.c in README.md must be the real one.
set -eu
build=${top_builddir:-.}
region=/bakery-hello-test-$$
out=$(mktemp "${TMPDIR:-/tmp}/bakery-hello-test.XXXXXX")
trap '"$build/tools/bakery" unlink "$region" 2>/dev/null || true; rm -f "$out"' EXIT

"$build/examples/hello" "$region" >>"$out" &
first=$!
"$build/examples/hello" "$region" >>"$out"
wait "$first"
cat "$out"

# four lines: two turns, each "pid N: my turn" then "pid N: done"
awk '
	NR % 2 == 1 { if ($3 != "my") exit 1; pid = $2 }
	NR % 2 == 0 { if ($3 != "done" || $2 != pid) exit 1 }
	END { if (NR != 4) exit 1 }
' "$out" || { echo "test-hello: the two turns overlapped" >&2; exit 1; }

# The README shows hello.c (all but its opening comment): they must agree.
src=${top_srcdir:-.}
# shellcheck disable=SC2016 # backquotes of a Markdown fence, not a command
sed -n '/^```c$/,/^```$/p' "$src/README.md" | sed '1d;$d' >"$out"
sed '1,/\*\/$/d' "$src/examples/hello.c" | diff -u - "$out" ||
	{ echo "test-hello: README.md shows another hello.c" >&2; exit 1; }
