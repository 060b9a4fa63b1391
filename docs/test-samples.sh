#!/bin/sh
# SPDX-License-Identifier: MIT
# test-samples.sh - the sample output in README.md and docs/*.md names the
# region layout this library makes (BAKERY_LAYOUT_VERSION in
# lib/shm_layout.h): `bakery status` prints "layout version N", and a
# sample that says another N was taken from an older build.
#
# Usage: test-samples.sh [SRCDIR]   (default: $top_srcdir, else .)
set -u
src=${1:-${top_srcdir:-.}}

version=$(sed -n 's/^#define BAKERY_LAYOUT_VERSION \([0-9]*\)u$/\1/p' "$src/lib/shm_layout.h")
if [ -z "$version" ]; then
	echo "test-samples: no BAKERY_LAYOUT_VERSION in $src/lib/shm_layout.h"
	exit 1
fi
stale=$(grep -n 'layout version [0-9]' "$src/README.md" "$src"/docs/*.md |
	grep -v "layout version $version\b")
if [ -n "$stale" ]; then
	echo "test-samples: sample output of another layout than $version:"
	echo "$stale"
	exit 1
fi
echo "test-samples: the samples name layout version $version"
exit 0
