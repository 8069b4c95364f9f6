#!/usr/bin/env python3
"""Fail if the files of src/vam include each other in a cycle.

A file X.cpp and its header X.hpp are one unit; the unit X depends on the
unit Y when either of X's files has `#include "vam/Y.hpp"`. Any cycle among
the units is reported, the shortest chain of includes first. That catches a
header cycle (a.hpp -> b.hpp -> a.hpp) and the one issue 15 §5 named,
large_region.cpp -> heap.hpp -> large_region.hpp, where a source file reaches
its own header again through a header it includes.

Usage: include_cycles.py SRC_DIR   (the repository's src/, holding vam/)
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"vam/([A-Za-z0-9_]+)\.hpp"', re.M)


def units(vam_dir):
    """unit -> {unit it includes: 'file: #include' that says so}"""
    deps = {}
    for name in sorted(os.listdir(vam_dir)):
        stem, ext = os.path.splitext(name)
        if ext not in ('.hpp', '.cpp', '.h', '.c'):
            continue
        with open(os.path.join(vam_dir, name), encoding='utf-8', errors='replace') as f:
            text = f.read()
        edges = deps.setdefault(stem, {})
        for target in INCLUDE.findall(text):
            if target != stem:
                edges.setdefault(target, name)
    return deps


def find_cycle(deps):
    """A shortest cycle as a list of units (first == last), or None."""
    best = None
    for start in sorted(deps):
        # breadth-first from start back to start
        prev = {start: None}
        queue = [start]
        found = None
        while queue and found is None:
            nxt = []
            for u in queue:
                for v in sorted(deps.get(u, {})):
                    if v == start:
                        found = u
                        break
                    if v not in prev:
                        prev[v] = u
                        nxt.append(v)
                if found is not None:
                    break
            queue = nxt
        if found is None:
            continue
        path = [start]
        u = found
        while u != start:
            path.append(u)
            u = prev[u]
        path.append(start)
        path = [start] + list(reversed(path[1:-1])) + [start]
        if best is None or len(path) < len(best):
            best = path
    return best


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    vam_dir = os.path.join(sys.argv[1], 'vam')
    deps = units(vam_dir)
    if not deps:
        print('include_cycles: no sources in %s' % vam_dir)
        return 2
    cycle = find_cycle(deps)
    if cycle is None:
        print('include_cycles: ok (%d units in %s, no cycle)' % (len(deps), vam_dir))
        return 0
    print('include_cycles: cycle among src/vam: ' + ' -> '.join(cycle))
    for a, b in zip(cycle, cycle[1:]):
        print('  %s includes vam/%s.hpp' % (deps[a][b], b))
    print('Move what one side needs into a small header both can include '
          '(as heap_hooks.hpp does), or pass it through an interface.')
    return 1


if __name__ == '__main__':
    sys.exit(main())
