#!/bin/sh
# Real programs under LD_PRELOAD=libvam.so, output compared byte for byte
# with the same run on the C library's malloc.
#
#   real_programs.sh <python|perl|gcc|threads> <libvam.so> <mt_program> <dir of this script>
#
# Skips (exit 77) only when the program itself is absent.
set -u
what=$1 libvam=$2 mt=$3 here=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vam-real.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "SKIP: $1 is not installed"
    exit 77
  fi
}

case $what in
  python)
    py=/usr/bin/python3
    [ -x "$py" ] || { need python3; py=$(command -v python3); }
    set -- env PYTHONMALLOC=malloc "$py" "$here/alloc_heavy.py" 1 ;;
  perl)
    need perl
    set -- perl -e '
      my %h; my @keep;
      for my $i (1 .. 300000) { $h{"key$i"} = [$i, "v" x ($i % 61), {n => $i}]; }
      for my $i (1 .. 300000) { delete $h{"key$i"} if $i % 3 == 0; }
      for my $r (1 .. 5) { my %g = map { ($_ => "x" x ($_ % 500)) } 1 .. 40000; push @keep, scalar(keys %g); }
      my $s = 0; $s += $h{$_}[0] + length($h{$_}[1]) for keys %h;
      print scalar(keys %h), " $s @keep\n";' ;;
  gcc)
    need gcc
    # A large generated C file: many functions, structs, switches, strings.
    awk 'BEGIN {
      print "#include <string.h>";
      for (i = 0; i < 1500; i++) {
        printf "struct s%d { int a[%d]; char name[%d]; double d; };\n", i, i % 17 + 1, i % 29 + 3;
        printf "int f%d(int x, struct s%d *p) {\n  int r = 0;\n  switch (x %% 7) {\n", i, i;
        for (k = 0; k < 7; k++) printf "  case %d: r += x * %d + p->a[%d]; strcpy(p->name, \"n%d_%d\"); break;\n", k, i + k, k % (i % 17 + 1), i % 97, k;
        printf "  }\n  for (int j = 0; j < %d; j++) r ^= (r << 3) + j * %d;\n  return r + (int)p->d;\n}\n", i % 13 + 2, i;
      }
      print "int main(void) { return 0; }";
    }' > "$tmp/big.c"
    set -- gcc -O2 -S -o - "$tmp/big.c" ;;
  threads)
    set -- "$mt" ;;
  *)
    echo "unknown program $what"; exit 2 ;;
esac

"$@" > "$tmp/glibc.out" 2> "$tmp/glibc.err" || { echo "FAIL: $what fails on glibc malloc"; cat "$tmp/glibc.err"; exit 1; }
LD_PRELOAD="$libvam" VAM_STATS=1 "$@" > "$tmp/vam.out" 2> "$tmp/vam.err" || {
  echo "FAIL: $what fails under libvam"; tail -20 "$tmp/vam.err"; exit 1; }
if ! grep -q "vam: statistics" "$tmp/vam.err"; then
  echo "FAIL: libvam was not in use (no statistics printed)"; exit 1
fi
if ! cmp -s "$tmp/glibc.out" "$tmp/vam.out"; then
  echo "FAIL: $what output differs under libvam"
  diff "$tmp/glibc.out" "$tmp/vam.out" | head -20
  exit 1
fi
echo "OK: $what output identical under libvam ($(wc -c < "$tmp/vam.out") bytes)"
exit 0
