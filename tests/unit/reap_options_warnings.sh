#!/bin/sh
# reap_options_warnings.sh PROBE — a REAP_* option libreap cannot use is reported
# on stderr once, naming the option, what it accepts and what is used instead;
# a malformed REAP_MODE never switches the mode in silence.
probe=$1
fail() { echo "reap_options_warnings: $*"; exit 1; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT

expect_once() {  # expect_once LINE (fixed string, a whole line of stderr)
  n=$(grep -c -F -x -- "$1" "$err")
  [ "$n" = 1 ] || { cat "$err"; fail "expected once, found $n times: $1"; }
}

out=$(env REAP_MODE=MALLOC REAP_CHECK=maybe REAP_CACHE_KB=12q REAP_MDOE=malloc "$probe" 2>"$err") ||
  fail "probe failed"
[ "$out" = "emulated 0" ] || fail "REAP_MODE=MALLOC changed the mode: $out"
expect_once "reap: REAP_MODE=MALLOC ignored: expected reap | malloc; using reap"
expect_once "reap: REAP_CACHE_KB=12q ignored: expected KiB (a decimal number below 2^40); using 8192"
grep -q -x "reap: REAP_CHECK=maybe ignored: expected 0 | 1 (or off | on); using [01]" "$err" ||
  { cat "$err"; fail "no warning for REAP_CHECK=maybe"; }
expect_once "reap: unknown option REAP_MDOE ignored; known: REAP_MODE REAP_CHECK REAP_CACHE_KB"
[ "$(wc -l <"$err")" -eq 4 ] || { cat "$err"; fail "expected exactly four lines on stderr"; }

# Well-formed options: the mode they name, and not a word on stderr.
out=$(env REAP_MODE=malloc REAP_CHECK=on REAP_CACHE_KB=64 "$probe" 2>"$err") || fail "probe failed"
[ "$out" = "emulated 1" ] || fail "REAP_MODE=malloc did not emulate: $out"
[ -s "$err" ] && { cat "$err"; fail "warnings for valid options"; }
out=$(env REAP_MODE=reap REAP_CHECK=0 "$probe" 2>"$err") || fail "probe failed"
[ "$out" = "emulated 0" ] || fail "REAP_MODE=reap emulated: $out"
[ -s "$err" ] && { cat "$err"; fail "warnings for valid options"; }
echo "reap_options_warnings: ok"
