#!/bin/sh
# SPDX-License-Identifier: MIT
# quickstart.sh - everything from a fresh clone, in one command.
#
#   ./quickstart.sh check   install build dependencies, build, run `make check`
#   ./quickstart.sh demo    install build dependencies, build, run examples/demo.sh
#   ./quickstart.sh build   install build dependencies and build only
#
# Missing Debian packages are installed with apt-get (as root) or sudo
# apt-get; nothing is installed when all are present.  The build goes to
# ./_build (out of tree).  Extra configure options: BAKERY_CONFIGURE_FLAGS;
# when they differ from those of the last configure in ./_build (kept in
# _build/.quickstart-flags), configure runs again with the new ones and
# everything is built again.
set -eu

cd "$(dirname "$0")"
top=$(pwd)
build="$top/_build"
jobs=$(nproc 2>/dev/null || echo 2)

# package: needed to build and test (spin: model checking; valgrind,
# gnuplot-nox, clang: hardening jobs and benchmark plots; jq, groff-base:
# the tool's JSON and the man pages are checked)
packages="build-essential autoconf automake libtool pkg-config liburcu-dev check spin
          valgrind gnuplot-nox groff-base jq python3"

missing_packages() {
	for p in $packages; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			printf '%s ' "$p"
	done
}

install_deps() {
	command -v dpkg-query >/dev/null 2>&1 || {
		echo "quickstart: not a Debian system; install by hand: $packages" >&2
		return 0
	}
	missing=$(missing_packages)
	[ -z "$missing" ] && return 0
	echo "quickstart: installing $missing"
	if [ "$(id -u)" = 0 ]; then
		sudo=
	elif command -v sudo >/dev/null 2>&1; then
		sudo=sudo
	else
		echo "quickstart: missing packages ($missing) and no root or sudo to install them" >&2
		exit 1
	fi
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	# shellcheck disable=SC2086
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
}

build() {
	if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ]; then
		echo "quickstart: bootstrapping autotools"
		# libtoolize fills m4/, which a fresh clone does not have:
		# aclocal warns about -I m4 without it
		mkdir -p "$top/m4"
		autoreconf -fi
	fi
	mkdir -p "$build"
	cd "$build"
	if [ ! -f Makefile ] || flags_changed; then
		if [ -f Makefile ]; then
			# new flags may change what make cannot see (a --prefix is
			# in every link's run path): everything is built again
			echo "quickstart: new BAKERY_CONFIGURE_FLAGS: building everything again"
			make -s clean
		fi
		# shellcheck disable=SC2086
		"$top/configure" ${BAKERY_CONFIGURE_FLAGS:-}
		printf '%s\n' "${BAKERY_CONFIGURE_FLAGS:-}" >.quickstart-flags
	fi
	make -j"$jobs"
}

# Were BAKERY_CONFIGURE_FLAGS given, and not those of the last configure?
# (Not given at all: the existing configuration stays.)
flags_changed() {
	[ -n "${BAKERY_CONFIGURE_FLAGS+set}" ] || return 1
	[ -f .quickstart-flags ] || return 0
	[ "$(cat .quickstart-flags)" != "$BAKERY_CONFIGURE_FLAGS" ]
}

case "${1:-}" in
check)
	install_deps
	build
	make -j"$jobs" check
	;;
demo)
	install_deps
	build
	make -j"$jobs" demo
	;;
build)
	install_deps
	build
	;;
*)
	echo "usage: $0 check|demo|build" >&2
	exit 2
	;;
esac
