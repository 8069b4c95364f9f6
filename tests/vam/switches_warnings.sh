#!/bin/sh
# switches_warnings.sh PROBE — a malformed design switch (VAM_CLASSES,
# VAM_BLOCK_ALLOC, VAM_HEADERS, VAM_BLOCK_PAGES, VAM_BLOCK_OBJECTS, VAM_ORDER, VAM_PAGE_MAX) is reported on stderr once,
# naming the option, what it accepts and the value used; valid ones are silent.
probe=$1
fail() { echo "switches_warnings: $*"; exit 1; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT

expect_once() {  # expect_once LINE (a fixed string, a whole line of stderr)
  n=$(grep -c -F -x -- "$1" "$err")
  [ "$n" = 1 ] || { cat "$err"; fail "expected once, found $n times: $1"; }
}

env VAM_CLASSES=medium VAM_BLOCK_ALLOC=fifo VAM_HEADERS=yes VAM_BLOCK_PAGES=3 VAM_BLOCK_OBJECTS=many \
    VAM_ORDER=lifo VAM_PAGE_MAX=3000 "$probe" classes-fine >/dev/null 2>"$err" || { cat "$err"; fail "probe failed (defaults not kept?)"; }
expect_once "vam: VAM_CLASSES=medium ignored: expected fine | coarse; using fine"
expect_once "vam: VAM_BLOCK_ALLOC=fifo ignored: expected bump | lifo; using bump"
expect_once "vam: VAM_HEADERS=yes ignored: expected off | on; using off"
expect_once "vam: VAM_BLOCK_PAGES=3 ignored: expected 1 | 2 | 4 | 8 | 16; using 4"
expect_once "vam: VAM_BLOCK_OBJECTS=many ignored: expected objects, 1..512 (a decimal number, optional k/m/g suffix); using 32"
expect_once "vam: VAM_ORDER=lifo ignored: expected recent | fifo | auto; using auto"
expect_once "vam: VAM_PAGE_MAX=3000 ignored: expected 1024 | 2048 | 4096 | 8192; using 1024"
[ "$(wc -l <"$err")" -eq 7 ] || { cat "$err"; fail "expected exactly seven lines on stderr"; }

# Out of range: clamped, and said so; the default geometry's checks still pass.
env VAM_BLOCK_OBJECTS=0 "$probe" pages-4 >/dev/null 2>"$err" || { cat "$err"; fail "probe failed (VAM_BLOCK_OBJECTS=0 not clamped to 1?)"; }
expect_once "vam: VAM_BLOCK_OBJECTS=0 out of range [1, 512]; using 1"

env VAM_CLASSES=coarse VAM_BLOCK_ALLOC=lifo VAM_HEADERS=on VAM_BLOCK_PAGES=16 VAM_BLOCK_OBJECTS=128 \
    VAM_ORDER=fifo VAM_PAGE_MAX=8k "$probe" classes-coarse >/dev/null 2>"$err" || { cat "$err"; fail "probe failed"; }
[ -s "$err" ] && { cat "$err"; fail "warnings for valid switches"; }
echo "switches_warnings: ok"
