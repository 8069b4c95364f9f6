"""A Subversion repository made from a generated dump: the same revisions, dates, authors
and texts on every machine, so `svn log` over it prints the same bytes everywhere (the
study's APR-pool program reads it through file://).

The history: a trunk of C-like source files; each revision edits about a quarter of them
(a few lines changed, one appended) and every tenth adds a file, so `svn log -v --diff`
has paths and diffs to print for every revision.

API::

    dump(revisions, files=12, lines=120) -> bytes     # an `svnadmin dump` stream (format 2)
    make_repo(path, revisions, timeout=120) -> str    # svnadmin create + load; kept when already made
"""

from __future__ import annotations

import os
import shutil
import subprocess

from alloclab import LabError

UUID = "6c1f0a52-2e8b-4a8c-9d7e-a110c1ab0001"
STAMP = "alloclab-repo"   # written last, with the dump's size: a repository cut short is made again


def _props(pairs) -> bytes:
    out = b""
    for k, v in pairs:
        k, v = k.encode(), v.encode()
        out += b"K %d\n%s\nV %d\n%s\n" % (len(k), k, len(v), v)
    return out + b"PROPS-END\n"


def _revision(n: int, pairs) -> bytes:
    p = _props(pairs)
    return b"Revision-number: %d\nProp-content-length: %d\nContent-length: %d\n\n%s\n" % (n, len(p), len(p), p)


def _node(path: str, kind: str, action: str, text: bytes | None = None) -> bytes:
    head = b"Node-path: %s\nNode-kind: %s\nNode-action: %s\n" % (path.encode(), kind.encode(), action.encode())
    props = _props(()) if action == "add" else b""
    body = props + (text or b"")
    if props:
        head += b"Prop-content-length: %d\n" % len(props)
    if text is not None:
        head += b"Text-content-length: %d\n" % len(text)
    return head + b"Content-length: %d\n\n%s\n\n" % (len(body), body)


def _date(rev: int) -> str:
    day, hour = divmod(rev * 7, 24)
    return f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T{hour:02d}:{rev % 60:02d}:00.000000Z"


def _line(f: int, i: int, rev: int) -> str:
    return f"  v{i} = f{f}_{(f * 7919 + i * 104729 + rev * 31) % 100003}(v{max(i - 1, 0)}, {rev});"


def dump(revisions: int, files: int = 12, lines: int = 120) -> bytes:
    """The dump of a repository of REVISIONS revisions over FILES files of about LINES lines."""
    texts: dict = {}
    out = [b"SVN-fs-dump-format-version: 2\n\n", b"UUID: %s\n\n" % UUID.encode(),
           _revision(0, [("svn:date", _date(0))])]
    for rev in range(1, revisions + 1):
        nodes = []
        if rev == 1:
            nodes.append(_node("trunk", "dir", "add"))
        grow = files + (rev - 1) // 10
        for f in range(grow):
            path = f"trunk/mod{f:03d}.c"
            if path not in texts:
                texts[path] = [f"/* mod{f:03d}.c */", f"int f{f}(int v0) {{"] + \
                              [_line(f, i, 0) for i in range(1, lines)] + ["}"]
                action = "add"
            elif (f + rev) % 4 == 0:
                body = texts[path]
                for i in range(2, len(body) - 1):
                    if (i * 7 + rev) % 13 == 0:
                        body[i] = _line(f, i, rev)
                body.insert(len(body) - 1, _line(f, len(body), rev))
                action = "change"
            else:
                continue
            nodes.append(_node(path, "file", action, ("\n".join(texts[path]) + "\n").encode()))
        log = f"r{rev}: " + ("the first files" if rev == 1 else f"edit {len(nodes)} files")
        out.append(_revision(rev, [("svn:log", log), ("svn:author", f"dev{rev % 3}"), ("svn:date", _date(rev))]))
        out.extend(nodes)
    return b"".join(out)


def _run(cmd, timeout, stdin=None):
    try:
        r = subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LabError(f"{cmd[0]} {cmd[1]}: {e}") from None
    if r.returncode != 0:
        tail = r.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise LabError(f"{cmd[0]} {cmd[1]} failed with status {r.returncode}: {tail[0][:200]}")


def make_repo(path: str, revisions: int, timeout: float = 120) -> str:
    """The repository at PATH, made from dump(REVISIONS) unless the same one is there; its
    file:// URL. LabError when svnadmin is missing or fails."""
    svnadmin = shutil.which("svnadmin")
    if not svnadmin:
        raise LabError("svnadmin is not installed (Debian package subversion)")
    data = dump(revisions)
    stamp = os.path.join(path, STAMP)
    want = f"{revisions} {len(data)}\n"
    try:
        with open(stamp) as f:
            if f.read() == want:
                return "file://" + os.path.abspath(path)
    except OSError:
        pass
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    _run([svnadmin, "create", path], timeout)
    _run([svnadmin, "load", "--quiet", "--bypass-prop-validation", path], timeout, stdin=data)
    with open(stamp, "w") as f:
        f.write(want)
    return "file://" + os.path.abspath(path)
