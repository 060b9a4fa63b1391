#!/bin/sh
# SPDX-License-Identifier: MIT
# test-quickstart.sh - quickstart.sh honours BAKERY_CONFIGURE_FLAGS when
# ./_build exists already: configure runs again when the flags differ from
# the last configure's, and not when they are the same or not given.
#
# Runs a copy of quickstart.sh in a scratch tree whose configure only
# records its arguments, with make and dpkg-query stubbed on PATH: nothing
# is built or installed.
set -u

top=${top_srcdir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bakery-quickstart-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

mkdir "$tmp/top" "$tmp/bin"
cp "$top/quickstart.sh" "$tmp/top/"
touch "$tmp/top/configure.ac"
sleep 1     # configure must not look older than configure.ac
cat >"$tmp/top/configure" <<'STUB'
#!/bin/sh
echo "$*" >>"$(dirname "$0")/configured"
echo "all:" >Makefile
STUB
printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/make"
printf '#!/bin/sh\nprintf "install ok installed"\n' >"$tmp/bin/dpkg-query"
chmod +x "$tmp/top/configure" "$tmp/bin/make" "$tmp/bin/dpkg-query"

# quickstart FLAGS|-: run `quickstart.sh build` with those flags (- : unset)
quickstart() {
	if [ "$1" = - ]; then
		# unset even when the caller's environment has it (CI sets it)
		env -u BAKERY_CONFIGURE_FLAGS PATH="$tmp/bin:$PATH" \
			sh "$tmp/top/quickstart.sh" build >/dev/null 2>&1
	else
		BAKERY_CONFIGURE_FLAGS=$1 PATH="$tmp/bin:$PATH" \
			sh "$tmp/top/quickstart.sh" build >/dev/null 2>&1
	fi || fail "quickstart.sh build ($1) exited $?"
}

# configured N LAST: configure ran N times, the last with LAST
configured() {
	n=$(wc -l <"$tmp/top/configured")
	last=$(tail -n 1 "$tmp/top/configured")
	[ "$n" -eq "$1" ] || fail "configure ran $n times, expected $1"
	[ "$last" = "$2" ] || fail "configure's last flags '$last', expected '$2'"
}

quickstart "--prefix=$tmp/a"
configured 1 "--prefix=$tmp/a"
quickstart "--prefix=$tmp/a"
configured 1 "--prefix=$tmp/a"           # same flags: not again
quickstart "--prefix=$tmp/b --enable-werror"
configured 2 "--prefix=$tmp/b --enable-werror"
quickstart -
configured 2 "--prefix=$tmp/b --enable-werror"   # none given: kept

if [ "$failures" -ne 0 ]; then
	echo "test-quickstart: $failures failure(s)"
	exit 1
fi
echo "test-quickstart: all passed"
