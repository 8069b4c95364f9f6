#!/bin/sh
# litter_cpu.sh SHIM PROG — the litter shim's log gives the program's CPU time
# (cpu_ms) beside its wall-clock time (run_ms): 200 ms of CPU followed by a
# 300 ms sleep is about 200 of CPU and 500 of wall.
shim=$1 prog=$2
fail() { echo "litter_cpu: $*"; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
LITTER_MULTIPLIER=0 LITTER_LOG=$log LD_PRELOAD=$shim "$prog" 200 300 || fail "program failed"
line=$(grep "run_ms=" "$log") || fail "no run line: $(cat "$log")"
run=$(echo "$line" | sed -n 's/.*run_ms=\([0-9.]*\).*/\1/p')
cpu=$(echo "$line" | sed -n 's/.*cpu_ms=\([0-9.]*\).*/\1/p')
[ -n "$cpu" ] || fail "no cpu_ms in: $line"
awk -v r="$run" -v c="$cpu" 'BEGIN { exit !(c >= 150 && c <= 400 && r >= 450 && r - c >= 250) }' ||
  fail "cpu_ms=$cpu run_ms=$run: want about 200 and 500"
echo "litter_cpu: ok"
