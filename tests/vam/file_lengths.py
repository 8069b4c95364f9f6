#!/usr/bin/env python3
"""Fail if a source file of src/vam holds more than 800 lines.

Issue 38 gives vam's heap one file per concept, none over 800 lines: a
file that grows past that holds more than one, and is split where its
concepts part. Every .cpp, .hpp, .c and .h under the directory counts.

Usage: file_lengths.py SRC_DIR   (the repository's src/, holding vam/)
       file_lengths.py --self-test
"""
import os
import sys
import tempfile

MAX_LINES = 800
SOURCES = ('.cpp', '.hpp', '.c', '.h')


def too_long(vam_dir, limit=MAX_LINES):
    """[(file, lines)] of the files over `limit` lines, by name."""
    found = []
    for name in sorted(os.listdir(vam_dir)):
        if os.path.splitext(name)[1] not in SOURCES:
            continue
        with open(os.path.join(vam_dir, name), encoding='utf-8', errors='replace') as f:
            lines = sum(1 for _ in f)
        if lines > limit:
            found.append((name, lines))
    return found


def self_test():
    """A file of limit + 1 lines is reported, one of limit lines is not."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, 'ok.cpp'), 'w') as f:
            f.write('x\n' * MAX_LINES)
        with open(os.path.join(d, 'long.hpp'), 'w') as f:
            f.write('x\n' * (MAX_LINES + 1))
        with open(os.path.join(d, 'notes.md'), 'w') as f:
            f.write('x\n' * (MAX_LINES * 2))
        got = too_long(d)
    if got != [('long.hpp', MAX_LINES + 1)]:
        print(f'file_lengths: self-test failed: {got}')
        return 1
    print('file_lengths: self-test ok')
    return 0


def main(argv):
    if argv[1:] == ['--self-test']:
        return self_test()
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    vam_dir = os.path.join(argv[1], 'vam')
    if not os.path.isdir(vam_dir):
        print(f'file_lengths: no directory {vam_dir}', file=sys.stderr)
        return 2
    long_files = too_long(vam_dir)
    for name, lines in long_files:
        print(f'file_lengths: src/vam/{name} has {lines} lines, more than {MAX_LINES}')
    if long_files:
        return 1
    print('file_lengths: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
