#!/bin/sh
# apr_pools.sh SHIM PROG — liballoclab_apr.so counts every request a program's
# APR pools serve (count), or serves each with malloc in their place (emulate),
# with the program's output unchanged and nothing left to the pools.
shim=$1 prog=$2
fail() { echo "apr_pools: $*"; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
plain=$("$prog") || fail "program failed"
counted=$(ALLOCLAB_APR=count ALLOCLAB_APR_LOG=$log LD_PRELOAD=$shim "$prog") || fail "count run failed"
emulated=$(ALLOCLAB_APR=emulate ALLOCLAB_APR_LOG=$log LD_PRELOAD=$shim "$prog") || fail "emulate run failed"
[ "$counted" = "$plain" ] && [ "$emulated" = "$plain" ] || fail "output changed: $plain / $counted / $emulated"
# the program's 4,020 requests and APR's own few at start-up, each counted once
pool_ops=$(sed -n '1s/.* pool_ops=\([0-9]*\) malloc_ops=0$/\1/p' "$log")
[ -n "$pool_ops" ] && [ "$pool_ops" -ge 4020 ] && [ "$pool_ops" -le 4100 ] ||
  fail "count: $(sed -n 1p "$log") (want pool_ops 4020..4100, malloc_ops 0)"
sed -n 2p "$log" | grep -q " pool_ops=0 malloc_ops=$pool_ops\$" ||
  fail "emulate: $(sed -n 2p "$log") (want pool_ops=0 malloc_ops=$pool_ops)"
if ALLOCLAB_APR=bogus LD_PRELOAD=$shim "$prog" >/dev/null 2>&1; then fail "a bad ALLOCLAB_APR was accepted"; fi
echo "apr_pools: ok"
