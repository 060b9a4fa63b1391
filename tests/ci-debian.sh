#!/bin/sh
# SPDX-License-Identifier: MIT
# ci-debian.sh - CI's packaging pass, on a Debian machine:
#
#  1. installs what building the packages needs (apt-get build-dep on
#     debian/control, without the test-only packages: make check has run
#     already in CI's first step, so the build uses DEB_BUILD_OPTIONS=nocheck)
#     and lintian;
#  2. builds libbakery0, libbakery-dev, bakery-tools and python3-bakery with
#     dpkg-buildpackage -us -uc -b in a copy of the tracked files, in a
#     temporary directory (so that ./_build and the source tree are left
#     alone), and runs lintian on them (errors and warnings fail);
#  3. installs them with apt-get install ./...deb, then, against the
#     installed files only: compiles examples/hello.c with pkg-config and
#     runs it, runs `bakery status` (and --json) on its region, imports the
#     installed Python package with the system's python3 and takes a lock;
#  4. purges the packages (also when a step fails).
#
# Usage: tests/ci-debian.sh   (as root, or with sudo for apt-get)
# Exit status: 0 when every step passed.
set -eu

srcdir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bakery-ci-debian.XXXXXX")
region=/bakery-ci-debian-$$
packages="libbakery0 libbakery-dev bakery-tools python3-bakery"
start=$(date +%s)

say() { printf '==> [%4ds] %s\n' "$(($(date +%s) - start))" "$*"; }
fail() { say "FAILED: $*"; exit 1; }

if [ "$(id -u)" = 0 ]; then
	sudo=
else
	sudo=sudo
fi
apt() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get -y -qq "$@"; }

purge() {
	installed=
	for p in $packages; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" &&
			installed="$installed $p"
	done
	# shellcheck disable=SC2086
	[ -z "$installed" ] || apt purge $installed >/dev/null
}

cleanup() {
	status=$?
	set +e
	[ -x /usr/bin/bakery ] && /usr/bin/bakery unlink "$region" 2>/dev/null
	purge
	rm -rf "$work"
	say "done, exit status $status"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# ------------------------------------------------------------------ build --

say "copy the tracked files to $work/src"
mkdir "$work/src"
git -C "$srcdir" ls-files -z | (cd "$srcdir" && tar --null -T - -cf -) | tar -xf - -C "$work/src"

say "install the build dependencies"
purge                   # start from a machine without them
apt update
apt install --no-install-recommends dpkg-dev lintian git >/dev/null
apt build-dep --no-install-recommends -P nocheck "$work/src" >/dev/null

say "dpkg-buildpackage -us -uc -b"
(cd "$work/src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
	dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1) ||
	{ tail -50 "$work/build.log"; fail "dpkg-buildpackage"; }
debs=
for p in $packages; do
	set -- "$work/${p}_"*.deb
	[ -f "$1" ] || fail "no package $p"
	debs="$debs ./${1##*/}"
done

say "lintian"
# shellcheck disable=SC2086
(cd "$work" && lintian --fail-on error,warning $debs) || fail "lintian"

# ---------------------------------------------------------------- install --

say "apt-get install$debs"
# shellcheck disable=SC2086
(cd "$work" && apt install --no-install-recommends $debs) >/dev/null

say "compile examples/hello.c against the installed package"
[ -f /usr/include/bakery.h ] || fail "bakery.h not installed"
# shellcheck disable=SC2046
cc -o "$work/hello" "$srcdir/examples/hello.c" $(pkg-config --cflags --libs bakery)
ldd "$work/hello" | grep -Eq "libbakery\.so\.0 => /(usr/)?lib/" || fail "hello does not use the installed library"
"$work/hello" "$region" | tee "$work/hello.out"
grep -q "my turn" "$work/hello.out" || fail "hello did not take its turn"

say "the installed documents' links"
sh "$srcdir/docs/test-links.sh" /usr/share/doc/libbakery-dev ||
	fail "a link of the installed README or docs leads nowhere"
[ -f /usr/share/doc/python3-bakery/docs/python.md ] ||
	fail "python3-bakery does not ship docs/python.md"
sh "$srcdir/docs/test-links.sh" /usr/share/doc/python3-bakery ||
	fail "a link of python3-bakery's python.md leads nowhere"

say "bakery status $region"
[ "$(command -v bakery)" = /usr/bin/bakery ] || fail "bakery is not the installed /usr/bin/bakery"
bakery --version
bakery status "$region"
bakery status "$region" --json >"$work/status.json"
for page in /usr/share/man/man1/bakery.1.gz /usr/share/man/man3/bakery.3.gz; do
	[ -f "$page" ] || fail "$page not installed"
done

say "the installed Python package"
(cd "$work" && env -u PYTHONPATH -u BAKERY_LIBRARY /usr/bin/python3 - "$region" "$work/status.json") <<'PY'
import json
import sys

import bakery

region_name, status_file = sys.argv[1], sys.argv[2]
assert bakery.__file__.startswith("/usr/lib/python3/dist-packages/"), bakery.__file__
with open(status_file) as f:
    before = json.load(f)
with bakery.Region(region_name) as region:
    lock = region.lock("greeting")
    with lock:
        assert lock.locked()
    after = region.status()
print("python3 %s: bakery %s, library %s, greeting acquired %d times" % (
    sys.version.split()[0], bakery.__version__, bakery.library_version(),
    after["locks"][0]["acquisitions"]))
assert before["locks"][0]["acquisitions"] == 1, before
assert after["locks"][0]["acquisitions"] == 2, after
bakery.unlink(region_name)
PY

say "apt-get purge"
purge
if dpkg-query -W -f='${Status}' libbakery0 2>/dev/null | grep -q "ok installed"; then
	fail "libbakery0 still installed"
fi
