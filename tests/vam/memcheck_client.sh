#!/bin/sh
# libvam-memcheck.so under Valgrind's memcheck with the user intercepts off
# (`--soname-synonyms=somalloc=nouserintercepts`: memcheck then leaves the
# program's malloc to vam): memcheck sees vam's objects through the client
# requests and finds the probe's read after free, uninitialised branch and
# leaks; a real program (CPython) runs with no error reported (no false
# positive from vam's own writes into freed objects). With plain libvam.so the
# same run reports nothing: memcheck cannot see vam's objects without them.
#   memcheck_client.sh PROBE LIBVAM_MEMCHECK LIBVAM
probe=$1 libmc=$2 libvam=$3
fail() { echo "memcheck_client: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vg() { valgrind --soname-synonyms=somalloc=nouserintercepts --leak-check=full "$@"; }

LD_PRELOAD=$libmc VAM_STATS=1 vg "$probe" >/dev/null 2>"$tmp/mc" || fail "probe failed: $(tail -5 "$tmp/mc")"
grep -q '^vam: statistics' "$tmp/mc" || fail "vam did not run under memcheck"
grep -q 'Invalid read of size 1' "$tmp/mc" || fail "no read after free reported: $(cat "$tmp/mc")"
grep -q 'Conditional jump or move depends on uninitialised value' "$tmp/mc" || fail "no uninitialised branch"
lost=$(sed -n 's/.*definitely lost: [0-9,]* bytes in \([0-9]*\) blocks.*/\1/p' "$tmp/mc")
[ -n "$lost" ] && [ "$lost" -ge 2 ] || fail "leaks: $(grep -A6 'LEAK SUMMARY' "$tmp/mc")"
grep -q 'ERROR SUMMARY: [1-9]' "$tmp/mc" || fail "no errors counted"

LD_PRELOAD=$libvam vg "$probe" >/dev/null 2>"$tmp/plain" || fail "probe failed on libvam.so"
grep -q 'ERROR SUMMARY: 0 errors' "$tmp/plain" || fail "plain libvam.so: memcheck saw objects it cannot see"

if [ -x /usr/bin/python3 ]; then   # Debian's own, not a wrapper script
  LD_PRELOAD=$libmc vg --leak-check=no /usr/bin/python3 -c \
    'import json, re; d = [{"a": str(i) * 5, "b": list(range(i % 50))} for i in range(2000)]; s = json.dumps(d); assert json.loads(s) == d; print(len(re.findall("1+", s)))' \
    >/dev/null 2>"$tmp/py" || fail "python3 failed under memcheck: $(tail -5 "$tmp/py")"
  grep -q 'ERROR SUMMARY: 0 errors' "$tmp/py" || fail "python3: $(grep -B2 -A10 -m1 'Invalid\|uninitialised' "$tmp/py")"
fi
echo "memcheck_client: ok"
