#!/bin/sh
# Times every workload x variant (those its `--variants` lists) at the
# study's default size (--scale 0.5): median of 3 runs of wall time and of
# peak RSS, with /usr/bin/time. Prints a Markdown table. For sizing inputs.
#
#   workloads/time_defaults.sh [DIR] [SCALE]   DIR: the built workloads
#                                              (default build/release/workloads)
set -eu
dir=${1:-build/release/workloads}
scale=${2:-0.5}
runs=3
median() { sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
out_file=$(mktemp)
trap 'rm -f "$out_file"' EXIT

echo "| workload | variant | wall s (median of $runs) | max RSS KiB (median) | checksum |"
echo "|---|---|---:|---:|---|"
for w in boxed_sim freelist_micro compiler compiler_partial interp xalloc_parser server mempool_iter gp_mix; do
  for a in $("$dir/$w" --variants); do
    times=""; rss=""; sum=""
    i=0
    while [ $i -lt $runs ]; do
      out=$(/usr/bin/time -f "time %e %M" "$dir/$w" --alloc "$a" --scale "$scale" 2>&1 >"$out_file")
      sum=$(grep '^checksum' "$out_file" | cut -d' ' -f2)
      set -- $(echo "$out" | grep '^time ')
      times="$times$2
"
      rss="$rss$3
"
      i=$((i + 1))
    done
    t=$(printf '%s' "$times" | median)
    m=$(printf '%s' "$rss" | median)
    echo "| $w | $a | $t | $m | $sum |"
  done
done
