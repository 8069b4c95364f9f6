"""The `vam` command of a pip-installed lab: run a program with libvam as its malloc.

    vam PROGRAM [ARGS...]      runs PROGRAM with libvam.so preloaded
    vam --secure PROGRAM ...   on libvam-secure.so, the secure mode (so does VAM_SECURE=1)
    vam --stats PROGRAM ...    on libvam-stats.so, with VAM_STATS=1 (a report at exit,
                               with the calls and the peak of live bytes)

It behaves as the shell script `make install` puts in bin/ (scripts/vam.in),
but finds libvam as the lab finds every native part (core/paths.py: the
package's own copy first after `pip install .`). libvam goes after whatever
LD_PRELOAD already holds, so a shim preloaded in front sees it as the
allocator beneath. Allocator options come from VAM_* variables: see vam(3).
"""

from __future__ import annotations

import os
import sys

from alloclab import __version__
from alloclab.core import allocators, paths, runner

USAGE = ("usage: vam [--secure | --stats] PROGRAM [ARGS...]\n"
         "Runs PROGRAM with libvam (a locality-improving malloc) preloaded.\n"
         "Allocator options come from VAM_* environment variables: see 'man 3 vam'.")


def main(argv: list[str] | None = None) -> int:
    """The console entry point (pyproject.toml [project.scripts]); returns only on an error."""
    args = list(sys.argv[1:] if argv is None else argv)
    first = args[0] if args else ""
    if first in ("-h", "--help"):
        print(USAGE)
        return 0
    if first == "--version":
        print(f"vam (alloclab) {__version__}")
        return 0
    extra, twin = {}, ""
    if first == "--stats":
        kept = os.environ.get("VAM_STATS", "")   # a file to append the report to stays
        extra["VAM_STATS"] = kept if kept not in ("", "0") else "1"
        twin = "stats"
    if first == "--secure" or os.environ.get("VAM_SECURE", "0") not in ("", "0"):
        extra["VAM_SECURE"] = "1"
        twin = "secure"
    if first in ("--stats", "--secure", "--"):
        args = args[1:]
    if not args:
        print(USAGE, file=sys.stderr)
        return 2
    lib = allocators.vam_library(twin)
    if lib is None:
        name = f"libvam-{twin}.so" if twin else "libvam.so"
        print(f"vam: cannot find {name} ({paths.describe()})", file=sys.stderr)
        return 127
    try:
        runner.replace_process(args, env=extra, behind=[lib])
    except OSError as e:
        print(f"vam: {args[0]}: {e.strerror}", file=sys.stderr)
        return 127 if isinstance(e, FileNotFoundError) else 126  # as a shell says it
