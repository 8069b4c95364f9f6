#!/usr/bin/env python3
"""run_examples.py --include DIR --libdir DIR DOC... — the docs' examples run as printed.

A fenced block preceded by a line `<!-- example: NAME.c -->` (or `.cpp`) is a
whole program: it is compiled exactly as printed (C11, or C++17 — the
standards the docs promise), linked with libreap from LIBDIR, and run with
REAP_CHECK=1, so a misuse of the API in an example (a double free, a foreign
pointer) aborts it. Every other C or C++ block in DOC must say what it is:
`<!-- quote: PATH -->` (checked by tests/vam/doc_quotes.py) or
`<!-- excerpt: PATH -->` (a part of a file, not meant to compile alone).

Prints one line per example and `run_examples: ok (N examples)`; exits 1 on
any failure.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

MARK = re.compile(r"^<!--\s*(example|quote|excerpt):\s*(\S+)\s*-->\s*$")
FENCE = re.compile(r"^```(\w*)\s*$")
COMPILED = {"c", "cpp", "c++"}
COMPILERS = {".c": ["cc", "-std=c11"], ".cpp": ["c++", "-std=c++17"]}


def blocks(path):
    """(line, language, mark kind or None, mark name, body) for each fenced block."""
    lines = Path(path).read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        prev = MARK.match(lines[start - 1]) if start > 0 else None
        yield (start + 1, lang, prev.group(1) if prev else None, prev.group(2) if prev else None,
               "\n".join(lines[start + 1:j]) + "\n")
        i = j + 1


def run_example(doc, line, name, body, include, libdir, work):
    ext = Path(name).suffix
    if ext not in COMPILERS:
        return f"{doc}:{line}: example {name}: only .c and .cpp examples are compiled"
    src = work / name
    src.write_text(body)
    exe = work / Path(name).stem
    cmd = COMPILERS[ext] + ["-Wall", "-Wextra", "-Werror", f"-I{include}", str(src), "-o", str(exe),
                            f"-L{libdir}", "-lreap", f"-Wl,-rpath,{libdir}"]
    c = subprocess.run(cmd, capture_output=True, text=True)
    if c.returncode != 0:
        return f"{doc}:{line}: example {name} does not compile:\n{c.stderr}"
    env = dict(os.environ, REAP_CHECK="1")
    r = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=120)
    if r.returncode != 0:
        return (f"{doc}:{line}: example {name} exited with {r.returncode}:\n{r.stdout}{r.stderr}")
    print(f"run_examples: {doc}:{line} {name}: {r.stdout.strip().splitlines()[-1] if r.stdout.strip() else 'ok'}")
    return None


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--include", required=True)
    ap.add_argument("--libdir", required=True)
    ap.add_argument("docs", nargs="+")
    a = ap.parse_args(argv)
    errors, n = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for doc in a.docs:
            for line, lang, kind, name, body in blocks(doc):
                if lang not in COMPILED:
                    continue
                if kind is None:
                    errors.append(f"{doc}:{line}: a {lang} block that is neither an example, "
                                  "a quote nor an excerpt (mark it)")
                elif kind == "example":
                    n += 1
                    err = run_example(doc, line, name, body, a.include, a.libdir, work)
                    if err:
                        errors.append(err)
    for e in errors:
        print(f"run_examples: {e}")
    if errors:
        return 1
    print(f"run_examples: ok ({n} examples)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
