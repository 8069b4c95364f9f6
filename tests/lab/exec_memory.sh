#!/bin/sh
# exec_memory.sh EXEC PROG — alloclab-exec --memory reports the program's
# memory at its end (Private_Dirty, LazyFree, AnonHugePages from smaps_rollup)
# and changes nothing else: exit codes, signals and their handlers pass through.
exe=$1 prog=$2
fail() { echo "exec_memory: $*"; exit 1; }
res=$(mktemp)
trap 'rm -f "$res"' EXIT
field() { awk -v i="$1" '{print $i}' "$res"; }

for mode in exit thread signal; do
  "$exe" --memory "$res" -- "$prog" $mode || fail "$mode: launcher failed"
  [ "$(wc -w <"$res")" = 9 ] || fail "$mode: expected 9 fields: $(cat "$res")"
  [ "$(field 1)" = 7 ] || fail "$mode: exit code $(field 1), want 7"
  dirty=$(field 7) lazy=$(field 8)
  # 48 MiB dirtied, 16 of them MADV_FREE'd: those are clean now (LazyFree, still in RSS)
  [ "$dirty" -ge 32768 ] && [ "$dirty" -le 40000 ] || fail "$mode: Private_Dirty $dirty KiB, want ~32768"
  [ "$lazy" -ge 16000 ] && [ "$lazy" -le 16500 ] || fail "$mode: LazyFree $lazy KiB, want 16384"
  [ "$(field 9)" -ge 0 ] || fail "$mode: AnonHugePages $(field 9)"
done
"$exe" --memory "$res" -- "$prog" crash || fail "crash: launcher failed"
[ "$(field 1) $(field 2)" = "-1 11" ] || fail "crash: want exit -1 signal 11, got $(cat "$res")"
# without --memory, the six fields as before
"$exe" "$res" -- "$prog" exit || fail "plain: launcher failed"
[ "$(wc -w <"$res")" = 6 ] || fail "plain: expected 6 fields: $(cat "$res")"
echo "exec_memory: ok"
