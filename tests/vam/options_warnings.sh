#!/bin/sh
# options_warnings.sh PROBE — VAM_* options that libvam cannot use are reported
# on stderr, once each, naming the option and what it accepts; VAM_STATS=1
# names the process its statistics belong to.
probe=$1
fail() { echo "options_warnings: $*"; exit 1; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT

expect_once() {  # expect_once PATTERN (a fixed string, on its own line of stderr)
  n=$(grep -c -F -x -- "$1" "$err")
  [ "$n" = 1 ] || { cat "$err"; fail "expected once, found $n times: $1"; }
}

env VAM_DISCARD=bogus VAM_HUGEPAGES=maybe VAM_HUGE_CACHE=12q VAM_LARGE_MAX=10 \
    VAM_NO_SUCH_OPTION=1 "$probe" pid >/dev/null 2>"$err" || fail "probe failed"
expect_once "vam: VAM_DISCARD=bogus ignored: expected off | eager | delayed; using delayed"
expect_once "vam: VAM_HUGEPAGES=maybe ignored: expected off | auto | threshold | always; using auto"
expect_once "vam: VAM_HUGE_CACHE=12q ignored: expected bytes (a decimal number, optional k/m/g suffix); using 8388608"
expect_once "vam: VAM_LARGE_MAX=10 out of range [1024, 1048576]; using 1024"
grep -q "^vam: unknown option VAM_NO_SUCH_OPTION ignored; known: VAM_DISCARD " "$err" ||
  { cat "$err"; fail "no warning for an unknown option"; }
[ "$(wc -l <"$err")" -eq 5 ] || { cat "$err"; fail "expected exactly five lines on stderr"; }

# Well-formed options: not a word on stderr.
env VAM_DISCARD=eager VAM_HUGE_CACHE=16m VAM_LARGE_MAX=64k "$probe" pid >/dev/null 2>"$err" ||
  fail "probe failed"
[ -s "$err" ] && { cat "$err"; fail "warnings for valid options"; }

# VAM_STATS=1: the report names the pid and the program.
out=$(VAM_STATS=1 "$probe" pid 2>"$err") || fail "probe failed"
pid=${out##* }
expect_once "vam: statistics pid $pid program $(basename "$probe")"
echo "options_warnings: ok"
