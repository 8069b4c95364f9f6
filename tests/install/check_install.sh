#!/usr/bin/env bash
# check_install.sh BUILD_DIR CONSUMER_SRC WORK_DIR
# Installs BUILD_DIR into a fresh prefix, then builds a consumer with
# find_package(alloclab) and a C program with pkg-config, and runs both.
set -euo pipefail
build=$1 consumer=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/alloclab/reap.h include/alloclab/reap.hpp lib/libreap.so lib/libreap.a \
         lib/cmake/alloclab/alloclabConfig.cmake lib/pkgconfig/alloclab.pc; do
  [ -e "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
cmake -S "$consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
LD_LIBRARY_PATH=$prefix/lib "$work/consumer/consumer" | grep -qx "reap ok 3"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig cc -std=c11 "$consumer/consumer.c" -o "$work/pc_consumer" \
  $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs alloclab)
LD_LIBRARY_PATH=$prefix/lib "$work/pc_consumer" | grep -qx "reap ok 3"
echo "install ok"
