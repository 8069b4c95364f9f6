#!/usr/bin/env python3
"""doc_quotes.py DOC ROOT — the code a document quotes is the code.

A fenced block preceded by a line `<!-- quote: PATH -->` (PATH relative to
ROOT) claims to be quoted from that file: every non-blank line of the block,
trailing spaces ignored, must appear in the file, in the block's order (other
lines may come between). Prints `doc_quotes: ok (N blocks)` or each mismatch,
and exits non-zero on any.
"""
import re
import sys
from pathlib import Path

MARK = re.compile(r"^<!--\s*quote:\s*(\S+)\s*-->\s*$")


def blocks(doc_lines):
    """(line number, path, [lines]) for each quoted block."""
    i = 0
    while i < len(doc_lines):
        m = MARK.match(doc_lines[i])
        if not m:
            i += 1
            continue
        start = i + 1
        if start >= len(doc_lines) or not doc_lines[start].startswith("```"):
            yield i + 1, m.group(1), None
            i += 1
            continue
        body = []
        j = start + 1
        while j < len(doc_lines) and not doc_lines[j].startswith("```"):
            body.append(doc_lines[j])
            j += 1
        yield i + 1, m.group(1), body
        i = j + 1


def check(doc, root):
    lines = Path(doc).read_text(encoding="utf-8").splitlines()
    errors, n = [], 0
    for lineno, rel, body in blocks(lines):
        where = f"{doc}:{lineno}"
        if body is None:
            errors.append(f"{where}: a quote mark must be followed by a fenced block")
            continue
        src = Path(root) / rel
        if not src.is_file():
            errors.append(f"{where}: {rel} does not exist")
            continue
        code = [l.rstrip() for l in src.read_text(encoding="utf-8").splitlines()]
        at = 0
        for q in (l.rstrip() for l in body):
            if not q.strip():
                continue
            try:
                at = code.index(q, at) + 1
            except ValueError:
                errors.append(f"{where}: not in {rel} (in this order): {q.strip()}")
                break
        n += 1
    if n == 0 and not errors:
        errors.append(f"{doc}: no quoted block found")
    return n, errors


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    n, errors = check(argv[1], argv[2])
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"doc_quotes: ok ({n} blocks)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
