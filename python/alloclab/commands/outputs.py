"""Output directories that a run replaces only when it produced results.

A command's output directory (an OutputDir argument, `-o DIR`) may hold an
earlier run's results. Before the new run starts, such a directory is moved aside
whole (renamed to DIR.previous-PID, beside it) and the new run writes into an
empty DIR, so the two runs' files never mix. When the new run produced results
(the command's `kept(result)`, true unless the command says otherwise), the old
directory is deleted. When it did not — it stopped at start-up, was interrupted
before any result, or every run failed — DIR is given back its earlier contents
and the new run's files, if it wrote any, go to DIR.failed (replacing an older
one), which the message names. Nothing is lost if the lab itself is killed: the
earlier results are then in DIR.previous-PID.

Only a directory the lab wrote is ever moved or deleted: one holding the marker
file every run leaves in its output directory (MARKER), or, from before the
marker, only result files (names ending in RESULT_SUFFIXES, no subdirectory).
Any other non-empty directory (`-o .`) is written into as it is, with a warning.
Another command's output nested inside (with its own marker) moves into the new
directory rather than being deleted.

Arguments that name a file inside the moved directory (`--profile DIR/profile.json`,
reusing the earlier run's profile) are pointed at its new place for the run.

API::

    with replacing(ns) as outcome:   # before the output directories are created
        ...
        mark(ns)                     # after they are: the marker in each
        outcome.kept = command's kept(result)
    MARKER, RESULT_SUFFIXES
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys

from alloclab import LabError
from alloclab.commands.arguments import OutputDir, OutputFile


MARKER = ".alloclab-output"
RESULT_SUFFIXES = (".csv", ".json", ".png", ".html", ".md", ".txt", ".log")


@dataclasses.dataclass
class _Moved:
    final: str       # the output directory as given
    previous: str    # where its earlier contents wait


@dataclasses.dataclass
class Outcome:
    kept: bool = False
    moved: list = dataclasses.field(default_factory=list)


def _holds_anything(path: str) -> bool:
    return os.path.isdir(path) and any(True for _ in os.scandir(path))


def _inside(path: str, directory: str) -> bool:
    p, d = os.path.abspath(path), os.path.abspath(directory)
    return p.startswith(d + os.sep)


def _written_by_the_lab(path: str) -> bool:
    entries = list(os.scandir(path))
    if any(e.name == MARKER for e in entries):
        return True
    return all(e.is_file(follow_symlinks=False) and e.name.endswith(RESULT_SUFFIXES) for e in entries)


def _move_aside(ns) -> list[_Moved]:
    moved = []
    for key, value in vars(ns).items():
        if not (isinstance(value, OutputDir) and _holds_anything(value)):
            continue
        if not _written_by_the_lab(value):
            print(f"alloclab: warning: {value} holds files alloclab did not write; the results go in beside "
                  "them, replacing any of the same name", file=sys.stderr)
            continue
        previous = f"{os.path.abspath(value).rstrip(os.sep)}.previous-{os.getpid()}"
        try:
            os.rename(value, previous)
        except OSError as e:
            for m in moved:
                os.rename(m.previous, m.final)
            raise LabError(f"cannot move the earlier results in {value} aside: {e.strerror or e}") from None
        moved.append(_Moved(str(value), previous))
    for key, value in vars(ns).items():
        if isinstance(value, str) and not isinstance(value, (OutputDir, OutputFile)):
            for m in moved:
                if _inside(value, m.final):
                    rel = os.path.relpath(os.path.abspath(value), os.path.abspath(m.final))
                    setattr(ns, key, os.path.join(m.previous, rel))
    return moved


def mark(ns) -> None:
    """The marker file in every output directory of the run: it says the lab wrote there."""
    for value in vars(ns).values():
        if isinstance(value, OutputDir) and os.path.isdir(value):
            with open(os.path.join(value, MARKER), "w", encoding="utf-8") as f:
                f.write("alloclab wrote this directory; a new run with this output directory replaces it\n")


def _keep_nested(m: _Moved) -> None:
    """Another command's output inside the replaced directory (`alloclab ablation -o
    out/study/ablation`, then `alloclab study -o out/study`) is that command's, not this one's:
    it moves into the new directory unless this run wrote one of the same name."""
    for e in os.scandir(m.previous):
        if e.is_dir(follow_symlinks=False) and os.path.exists(os.path.join(e.path, MARKER)) \
                and not os.path.lexists(os.path.join(m.final, e.name)):
            os.rename(e.path, os.path.join(m.final, e.name))


def _give_back(m: _Moved) -> str | None:
    """The earlier contents back in place; the new run's files (if any) to DIR.failed, whose path
    is returned."""
    failed = None
    if any(e.name != MARKER for e in os.scandir(m.final)) if os.path.isdir(m.final) else False:
        failed = os.path.abspath(m.final).rstrip(os.sep) + ".failed"
        if os.path.lexists(failed):
            shutil.rmtree(failed) if os.path.isdir(failed) and not os.path.islink(failed) else os.unlink(failed)
        os.rename(m.final, failed)
    elif os.path.isdir(m.final):
        shutil.rmtree(m.final)   # nothing in it but the marker
    os.rename(m.previous, m.final)
    return failed


class replacing:
    """Move the output directories aside on entry; on exit delete them when the run was kept,
    else give them back (see the module's text)."""

    def __init__(self, ns):
        self.ns = ns
        self.outcome = Outcome()

    def __enter__(self) -> Outcome:
        self.outcome.moved = _move_aside(self.ns)
        return self.outcome

    def __exit__(self, kind, error, tb) -> bool:
        for m in self.outcome.moved:
            if self.outcome.kept and kind is None:
                _keep_nested(m)
                shutil.rmtree(m.previous, ignore_errors=True)
                continue
            failed = _give_back(m)
            print(f"alloclab: {m.final} keeps the earlier run's results (this run produced none)"
                  + (f"; this run's files are in {failed}" if failed else ""), file=sys.stderr)
        return False
