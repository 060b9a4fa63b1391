#!/bin/sh
# SPDX-License-Identifier: MIT
# test-python.sh - `make check` for the Python package (python/bakery): its
# unittest suites (python/tests), the example examples/python/workers.py and
# the examples of docs/python.md, all against the library just built
# (BAKERY_LIBRARY) and the package's sources (PYTHONPATH), without
# installing anything.
#
# Skipped (77) without python3, or when the library is built with
# AddressSanitizer (it cannot be loaded into an interpreter built without).
set -u

build=${top_builddir:-.}
src=${top_srcdir:-.}
lib=$build/lib/.libs/libbakery.so

if ! command -v python3 >/dev/null 2>&1; then
	echo "test-python: python3 not found: skipped"
	exit 77
fi
if [ ! -e "$lib" ]; then
	echo "test-python: $lib not built (static-only build?): skipped"
	exit 77
fi
if grep -q libasan "$lib" 2>/dev/null; then
	echo "test-python: library built with AddressSanitizer: skipped"
	exit 77
fi

BAKERY_LIBRARY=$lib
PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH}
export BAKERY_LIBRARY PYTHONPATH
# no __pycache__ in the source tree (read-only under distcheck)
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

# a hung test fails instead of hanging make check (timeout: coreutils)
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout -s KILL 900"
$limit python3 -m unittest discover -v -s "$src/python/tests" -t "$src/python/tests"
