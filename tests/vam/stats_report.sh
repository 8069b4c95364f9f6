#!/bin/sh
# VAM_STATS's report: the counting build (libvam-stats.so) counts the probe's
# calls exactly and its peak of live bytes; libvam.so says it does not count;
# both give the peak RSS; VAM_STATS=FILE appends the report to FILE.
#   stats_report.sh PROBE LIBVAM LIBVAM_STATS
probe=$1 libvam=$2 libstats=$3
fail() { echo "stats_report: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

LD_PRELOAD=$libstats VAM_STATS=1 "$probe" 2>"$tmp/counted" || fail "probe failed on libvam-stats.so"
calls=$(grep '^  calls ' "$tmp/counted") || fail "no calls line: $(cat "$tmp/counted")"
# The probe's own calls; the C library's start-up and exit add none here, and
# at most a handful on another libc: allow 20.
num() { echo "$calls" | sed -n "s/.* $1 \([0-9]*\).*/\1/p"; }
[ "$(num malloc)" -ge 1000 ] && [ "$(num malloc)" -le 1020 ] || fail "malloc count: $calls"
[ "$(num calloc)" -ge 10 ] && [ "$(num calloc)" -le 30 ] || fail "calloc count: $calls"
[ "$(num realloc)" -ge 6 ] && [ "$(num realloc)" -le 26 ] || fail "realloc count: $calls"
[ "$(num free)" -ge 401 ] && [ "$(num free)" -le 421 ] || fail "free count: $calls"
peak=$(sed -n 's/^  peak live bytes *\([0-9]*\)$/\1/p' "$tmp/counted")
# A huge object of 6,000,000 bytes first (its usable size up to a page more),
# then at most 1000 objects of 100 bytes live at once (usable sizes of
# 100..128 bytes each): the peak is the first.
[ -n "$peak" ] && [ "$peak" -ge 6000000 ] && [ "$peak" -le 6005000 ] || fail "peak live bytes $peak"
# At exit 610 objects of 100..208 bytes: the huge one's 6,000,000 went with
# its realloc into a small one.
live=$(sed -n 's/^  live bytes *\([0-9]*\)$/\1/p' "$tmp/counted")
[ -n "$live" ] && [ "$live" -ge 61000 ] && [ "$live" -le 80000 ] || fail "live bytes at exit $live"
grep -q '^  peak RSS (KiB) *[1-9][0-9]*$' "$tmp/counted" || fail "no peak RSS: $(cat "$tmp/counted")"

LD_PRELOAD=$libvam VAM_STATS=1 "$probe" 2>"$tmp/plain" || fail "probe failed on libvam.so"
grep -q 'calls, peak live bytes: counted by libvam-stats.so only' "$tmp/plain" || fail "libvam.so: $(cat "$tmp/plain")"
grep -q '^  peak RSS (KiB) *[1-9][0-9]*$' "$tmp/plain" || fail "libvam.so: no peak RSS"

LD_PRELOAD=$libstats VAM_STATS="$tmp/report.txt" "$probe" 2>"$tmp/err" || fail "probe failed with VAM_STATS=FILE"
LD_PRELOAD=$libstats VAM_STATS="$tmp/report.txt" "$probe" 2>>"$tmp/err" || fail "probe failed with VAM_STATS=FILE"
[ ! -s "$tmp/err" ] || fail "VAM_STATS=FILE wrote to stderr: $(cat "$tmp/err")"
[ "$(grep -c '^vam: statistics pid ' "$tmp/report.txt")" -eq 2 ] || fail "VAM_STATS=FILE: two reports appended expected"
LD_PRELOAD=$libstats VAM_STATS="$tmp/no/such/dir/x" "$probe" 2>"$tmp/err" || fail "probe failed"
grep -q "cannot open VAM_STATS file $tmp/no/such/dir/x" "$tmp/err" && grep -q '^  calls ' "$tmp/err" \
  || fail "an unwritable VAM_STATS file: $(cat "$tmp/err")"
echo "stats_report: ok"
