#!/usr/bin/env bash
# check_install.sh BUILD_DIR CONSUMER_SRC WORK_DIR
# Installs BUILD_DIR into a fresh prefix and checks the result as a user of
# the libraries would: the files, libvam's SONAME and exports, CMake's
# find_package for reap and vam (shared and static), pkg-config --static
# links from C and C++, the vam wrapper and the man pages.
set -euo pipefail
build=$1 consumer=$2 work=$3
src=$(cd "$consumer/../../.." && pwd)
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
lib=$prefix/lib
for f in include/alloclab/reap.h include/alloclab/reap.hpp include/alloclab/vam.h \
         lib/libreap.so lib/libreap.so.0 lib/libreap.a lib/libvam.so lib/libvam.so.0 lib/libvam.a lib/libvam-stats.so lib/libvam-memcheck.so lib/libvam-secure.so \
         lib/cmake/alloclab/alloclabConfig.cmake lib/pkgconfig/alloclab.pc lib/pkgconfig/vam.pc \
         bin/vam share/man/man1/alloclab.1 share/man/man1/vam.1 share/man/man3/vam.3 \
         share/man/man3/reap.3; do
  [ -e "$prefix/$f" ] || fail "missing after install: $f"
done

# ---- libvam: libvam.so -> libvam.so.0 -> the real file, whose SONAME is libvam.so.0
real=$(readlink -f "$lib/libvam.so")
case $(basename "$real") in libvam.so.0.*) ;; *) fail "libvam.so resolves to $real, not libvam.so.0.x.y" ;; esac
soname=$(readelf -d "$real" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libvam.so.0 ] || fail "libvam's SONAME is '$soname', want libvam.so.0"
# Exports: the malloc family, glibc's __libc_* names and the vam_* API, unversioned
# (a versioned malloc would not interpose on malloc@GLIBC_*), and nothing else.
exports=$(nm -D --defined-only "$real" | awk '{print $3}')
for s in malloc free calloc realloc reallocarray posix_memalign aligned_alloc memalign valloc \
         pvalloc malloc_usable_size __libc_malloc __libc_free vam_stats vam_malloc vam_usable_size; do
  grep -qx "$s" <<<"$exports" || fail "libvam.so does not export $s"
done
stray=$(grep -Ev '^(malloc|free|calloc|realloc|reallocarray|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|malloc_usable_size|free_sized|free_aligned_sized|cfree|__libc_[a-z]+|vam_[a-z_]+|_Z(nw|na|dl|da).*)$' <<<"$exports" || true)
[ -z "$stray" ] || fail "libvam.so exports symbols outside its API: $(echo $stray)"

# ---- CMake: find_package(alloclab), targets alloclab::reap, ::vam, ::vam_static
cmake -S "$consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
LD_LIBRARY_PATH=$lib "$work/consumer/consumer" | grep -qx "reap ok 3" || fail "find_package: reap consumer"
out=$(LD_LIBRARY_PATH=$lib "$work/consumer/vam_consumer")
[ "$out" = "vam ok 100" ] || fail "find_package: alloclab::vam consumer printed '$out' (malloc not libvam's?)"
out=$("$work/consumer/vam_static_consumer")
[ "$out" = "vam ok 101" ] || fail "find_package: alloclab::vam_static consumer printed '$out' (new not libvam's?)"
readelf -d "$work/consumer/vam_consumer" | grep -q 'Shared library: \[libvam.so.0\]' \
  || fail "a program linked with alloclab::vam does not record libvam.so.0"

# ---- CMake, a C-only project: the static targets bring the C++ runtime they need
cmake -S "$consumer/../c_consumer" -B "$work/c_consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/c_consumer" >/dev/null || fail "a C-only project cannot link alloclab::reap_static or ::vam_static"
"$work/c_consumer/reap_static_c" | grep -qx "reap ok 3" || fail "C-only project: reap_static consumer"
[ "$("$work/c_consumer/vam_static_c")" = "vam ok 100" ] || fail "C-only project: vam_static consumer (malloc not libvam's?)"

# ---- pkg-config --static: fully static programs, from C and from C++
export PKG_CONFIG_PATH=$lib/pkgconfig
pc() { pkg-config "$@"; }
cc -std=c11 -static "$consumer/consumer.c" -o "$work/pc_reap_c" $(pc --cflags --static --libs alloclab) \
  || fail "pkg-config --static --libs alloclab: C link"
"$work/pc_reap_c" | grep -qx "reap ok 3" || fail "static C reap consumer"
c++ -std=c++20 -static "$consumer/reap_consumer.cpp" -o "$work/pc_reap_cxx" $(pc --cflags --static --libs alloclab) \
  || fail "pkg-config --static --libs alloclab: C++ link"
"$work/pc_reap_cxx" | grep -qx "reap ok 3" || fail "static C++ reap consumer"
cc -std=c11 -static "$consumer/vam_consumer.c" -o "$work/pc_vam_c" $(pc --cflags --static --libs vam) \
  || fail "pkg-config --static --libs vam: C link"
[ "$("$work/pc_vam_c")" = "vam ok 100" ] || fail "static C vam consumer"
c++ -std=c++20 -static "$consumer/vam_consumer.cpp" -o "$work/pc_vam_cxx" $(pc --cflags --static --libs vam) \
  || fail "pkg-config --static --libs vam: C++ link"
[ "$("$work/pc_vam_cxx")" = "vam ok 101" ] || fail "static C++ vam consumer"
# and the ordinary shared link
cc -std=c11 "$consumer/consumer.c" -o "$work/pc_reap_shared" $(pc --cflags --libs alloclab)
LD_LIBRARY_PATH=$lib "$work/pc_reap_shared" | grep -qx "reap ok 3" || fail "shared pkg-config reap consumer"

# ---- the vam wrapper: the program runs with libvam.so.0 preloaded and in use
maps=$("$prefix/bin/vam" cat /proc/self/maps)
grep -q "$(basename "$real")" <<<"$maps" || fail "vam wrapper: libvam is not mapped in the program"
err=$("$prefix/bin/vam" --stats /bin/true 2>&1 >/dev/null)
grep -q "^vam: statistics" <<<"$err" || fail "vam --stats /bin/true printed no statistics: '$err'"
grep -q "^  calls  *malloc [0-9]" <<<"$err" || fail "vam --stats does not run the counting build: '$err'"
err=$("$prefix/bin/vam" --secure sh -c 'exit 0' 2>&1) || fail "vam --secure: $err"
maps=$(VAM_SECURE=1 "$prefix/bin/vam" cat /proc/self/maps)
grep -q "libvam-secure.so" <<<"$maps" || fail "VAM_SECURE=1 vam: libvam-secure.so is not mapped"
err=$(VAM_STATS=1 "$prefix/bin/vam" /bin/true 2>&1 >/dev/null)
grep -q "^vam: statistics" <<<"$err" || fail "VAM_STATS=1 vam /bin/true printed no statistics"
pre=$(LD_PRELOAD=/nonexistent-front.so "$prefix/bin/vam" sh -c 'echo "$LD_PRELOAD"' 2>/dev/null)
[ "$pre" = "/nonexistent-front.so:$lib/libvam.so.0" ] || fail "vam wrapper LD_PRELOAD is '$pre'"
set +e
"$prefix/bin/vam" >/dev/null 2>&1; rc=$?
set -e
[ "$rc" = 2 ] || fail "vam without a program: status $rc, want 2"
# the build tree's copy finds the build tree's libvam
# (the maps captured first: with pipefail, grep -q leaving early could kill cat
# with SIGPIPE between two of its writes, and fail the pipeline)
maps=$("$build/vam" cat /proc/self/maps)
grep -qF "$(readlink -f "$build")/src/vam/libvam.so" <<<"$maps" \
  || fail "the build tree's vam wrapper does not preload the build tree's libvam"
# a relocated install finds its own libvam
mv "$prefix" "$work/moved"
maps=$("$work/moved/bin/vam" cat /proc/self/maps)
grep -qF "$work/moved/lib/" <<<"$maps" || fail "relocated vam wrapper"
mv "$work/moved" "$prefix"

# ---- man pages render without warnings, and name what they document
if command -v man >/dev/null; then
  for page in man1/alloclab.1 man1/vam.1 man3/vam.3 man3/reap.3; do
    warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$prefix/share/man/$page" 2>&1 >/dev/null || true)
    [ -z "$warn" ] || fail "man $page: $warn"
  done
  text=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$prefix/share/man/man3/vam.3" 2>/dev/null)
  for opt in $(sed -n 's/^  X("\(VAM_[A-Z_]*\)".*/\1/p' "$src/src/vam/options.hpp"); do
    grep -q "$opt" <<<"$text" || fail "vam(3) does not document $opt"
  done
  # alloclab(1) describes every command the installed alloclab has (its
  # registry, read from --help; the checkout's .venv supplies the Python).
  page=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$prefix/share/man/man1/alloclab.1" 2>/dev/null)
  commands=$(PATH="$src/.venv/bin:$PATH" "$prefix/bin/alloclab" --help \
             | sed -n '/^positional arguments:/,/^options:/p' | sed -n 's/^    \([a-z][a-z-]*\).*/\1/p')
  [ -n "$commands" ] || fail "installed alloclab --help lists no commands"
  for c in $commands; do
    grep -Eq "^       $c( |\$)" <<<"$page" || fail "alloclab(1) does not describe the command '$c'"
  done
fi
echo "install ok"
