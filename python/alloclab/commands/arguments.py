"""The command line's argument kinds: every string becomes a typed value here, once.

Every subcommand takes its allocators, littering levels, durations, counts
and output paths through these functions, so `frag` and `compare` accept the
same spellings and reject the same mistakes with the same message.
Allocators are resolved by alloclab.core.allocators.find (the one resolver)
and littering levels by Level.parse (the one parser); nothing below the
command line takes a name where it needs an Allocator or a Level.

Each ``parse_*`` function raises LabError (the command line prints
``alloclab: <message>`` and exits 2); the ``add_*`` helpers declare an option
with its help text and the matching ``type=`` (argparse reports a bad value
through the same ``alloclab:`` error, see cli.Parser).

Output paths are checked lexically while parsing, and for real by
prepare_outputs(namespace) after parsing and before anything runs: the
directory is created and a probe file is written and removed in it.

API::

    parse_levels(text) -> list[Level]           # "0,1,3,10"; each 0 | 3 | Adv_3 | adv3 | ADV_3
    parse_duration(text) -> float | None        # 600 | 1.5s | 250ms | 2m | 1h; 0 or "none": no limit
    parse_count(text, minimum) -> int
    parse_list(text) -> list[str]               # comma-separated, blanks dropped
    parse_input_dir(text) -> str                # an existing directory
    OutputDir, OutputFile                       # str subclasses marking output paths
    prepare_outputs(namespace)                  # create and probe every output path; LabError
    command(namespace) -> list[str]             # the CMD ARGS after --
"""

from __future__ import annotations

import os
import re
import tempfile

from alloclab import LabError
from alloclab.core import allocators, runner
from alloclab.core.levels import Level
from alloclab.measure.litter import DEFAULT_SEED

REMAINDER = "..."  # nargs: every argument that is left (argparse's REMAINDER)
DEFAULT_TIMEOUT = 600.0        # a run of profile, litter, compare
DEFAULT_TOOL_TIMEOUT = 3600.0  # a run under the Valgrind tool (drag, frag, pages), some 50x slower


def typed(fn):
    """A parse function as an argument type, marked so that the command line (cli.py, the one
    module that knows argparse) turns its LabError into a usage error."""
    def conv(text):
        return fn(text)
    conv.__name__ = fn.__name__.removeprefix("parse_")
    conv.lab_parse = True
    return conv


def parse_list(text) -> list[str]:
    return [x.strip() for x in str(text).split(",") if x.strip()]


def parse_allocator(text):
    if not str(text).strip():
        raise LabError("empty allocator name")
    return allocators.find(str(text))


def parse_levels(text) -> list[Level]:
    """Comma-separated littering levels, duplicates dropped, order kept."""
    vals = [Level.parse(x) for x in parse_list(text)]
    if not vals:
        raise LabError("no littering level given")
    return list(dict.fromkeys(vals))


# ------------------------------------------------------------------- numbers

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|min|h)?\s*$", re.IGNORECASE)
_UNIT = {None: 1.0, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(text) -> float | None:
    """Seconds from "600", "1.5s", "250ms", "2m", "1h"; "0" or "none" means no limit (None)."""
    if text is None:
        return None
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        v = float(text)
    else:
        if str(text).strip().lower() in ("none", "off", "inf"):
            return None
        m = _DURATION.match(str(text))
        if not m:
            raise LabError(f"duration {str(text)!r} is not a number of seconds (e.g. 600, 1.5s, 250ms, 2m, 1h)")
        v = float(m.group(1)) * _UNIT[(m.group(2) or "").lower() or None]
    if v < 0:
        raise LabError(f"duration {text!r} is negative")
    return None if v == 0 else v


def parse_count(text, minimum: int = 1) -> int:
    try:
        v = int(str(text).strip())
    except ValueError:
        raise LabError(f"{str(text)!r} is not a whole number") from None
    if v < minimum:
        raise LabError(f"{v} is less than {minimum}")
    return v


def parse_fraction(text) -> float:
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise LabError(f"{str(text)!r} is not a number") from None
    if v != v:
        raise LabError("NaN is not a number")
    return v


def parse_scale(text) -> str:
    """A workload's --scale: a positive number, kept as the text given (it is passed on)."""
    v = parse_fraction(text)
    if not (0 < v <= 1000) or v == float("inf"):
        raise LabError(f"scale {str(text).strip()} is out of range (0 < scale <= 1000)")
    return str(text).strip()


# --------------------------------------------------------------- output paths

class OutputDir(str):
    """An output directory (checked by prepare_outputs before anything runs)."""


class OutputFile(str):
    """An output file (its directory is checked by prepare_outputs)."""


def _lexical(path: str, what: str) -> None:
    if not path or not str(path).strip():
        raise LabError(f"empty {what} path")
    # The nearest existing ancestor must be a directory.
    p = os.path.abspath(path)
    parent = p
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if parent != p and not os.path.isdir(parent):
        raise LabError(f"cannot create {what} {path!r}: {parent!r} is not a directory")


def parse_output_dir(text) -> OutputDir:
    _lexical(text, "output directory")
    if os.path.exists(text) and not os.path.isdir(text):
        raise LabError(f"output directory {text!r} exists and is not a directory")
    return OutputDir(text)


def parse_output_file(text) -> OutputFile:
    _lexical(text, "output file")
    if os.path.isdir(text):
        raise LabError(f"output file {text!r} is a directory")
    return OutputFile(text)


def parse_input_dir(text) -> str:
    """An existing directory to read from."""
    if not os.path.isdir(text):
        raise LabError(f"{text!r} is not a directory" if os.path.exists(text) else f"{text!r} does not exist")
    return str(text)


def ensure_output_dir(path: str) -> str:
    """Create `path` if needed and make sure a file can be written in it; LabError otherwise."""
    parse_output_dir(path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise LabError(f"cannot create output directory {path!r}: {e.strerror or e}") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".alloclab-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise LabError(f"cannot write in output directory {path!r}: {e.strerror or e}") from None
    return path


def ensure_output_file(path: str) -> str:
    """Make sure `path` can be written (its directory created and probed; an existing file writable)."""
    parse_output_file(path)
    ensure_output_dir(os.path.dirname(os.path.abspath(path)))
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise LabError(f"cannot write output file {path!r}: permission denied")
    return path


def prepare_outputs(ns) -> None:
    """ensure_output_dir/ensure_output_file for every OutputDir/OutputFile value of a namespace."""
    for value in vars(ns).values():
        if isinstance(value, OutputDir):
            ensure_output_dir(value)
        elif isinstance(value, OutputFile):
            ensure_output_file(value)


# ------------------------------------------------------------------ the command

def command(ns) -> list[str]:
    """The program and its arguments, given after `--` (checked: it must exist and be executable)."""
    cmd = list(getattr(ns, "cmd", None) or [])
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise LabError("no command given; put it after --, e.g. alloclab compare -- ls -l")
    runner.check_command(cmd)
    return cmd


# ------------------------------------------------------- declaring the options

def add_allocators(p, default="glibc,jemalloc,mimalloc,vam", help_extra=""):
    p.add_argument("--allocators", type=typed(allocators.find_many), default=default,
                   help="comma-separated names (glibc, jemalloc, mimalloc, tcmalloc, vam) or .so paths, or "
                        f"'all'{help_extra}; NAME@VAR=VALUE[@VAR=VALUE...] is a variant, that allocator "
                        "with VAR set for its runs (vam@VAM_ORDER=fifo) (default %(default)s)")


def add_allocator(p, help_text="allocator name or .so path to run on (default glibc)"):
    p.add_argument("--allocator", type=typed(parse_allocator), default=None, help=help_text)


def add_levels(p, default="0,1,3,10"):
    p.add_argument("--adv", type=typed(parse_levels), default=default,
                   help="littering levels, comma-separated: 0, 1, 3, 10 (also Adv_3, adv3) "
                        "(default %(default)s)")


def add_level(p, help_text="paper Table 3 preset: 0, 1, 3 or 10 (also Adv_3, adv3)"):
    p.add_argument("--adv", type=typed(Level.parse), default=None, help=help_text)


def add_timeout(p, default=None):
    d = "no limit" if default is None else f"{default:g} s"
    p.add_argument("--timeout", type=typed(parse_duration), default=default, metavar="DURATION",
                   help=f"kill a run after this long (e.g. 600, 90s, 10m; 0 or none: no limit; default {d})")


def add_seed(p):
    p.add_argument("--seed", type=count_type(0), default=DEFAULT_SEED, help="littering seed (default %(default)s)")


def add_output_dir(p, default):
    p.add_argument("-o", "--output", type=typed(parse_output_dir), default=default, metavar="DIR",
                   help="output directory, created if needed (default %(default)s)")


def add_output_file(p, default, help_text="output file"):
    p.add_argument("-o", "--output", type=typed(parse_output_file), default=default, metavar="FILE",
                   help=f"{help_text} (default %(default)s)")


def add_export(p, fmt, help_text):
    """--export-FMT FILE: a second copy of a result in another format (json, markdown, csv)."""
    p.add_argument(f"--export-{fmt}", type=typed(parse_output_file), default=None, metavar="FILE",
                   help=help_text)


def add_mode(p, quick_help: str, full_help: str):
    """--quick | --full (dest `mode`, None for the default mode), for the commands that
    come in three sizes (study, ablation)."""
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick", help=quick_help)
    mode.add_argument("--full", dest="mode", action="store_const", const="full", help=full_help)


def add_scale(p, help_text="the workloads' --scale"):
    p.add_argument("--scale", type=typed(parse_scale), default=None, metavar="X",
                   help=f"{help_text} (0 < X <= 1000; default: the mode's)")


def add_command(p):
    p.add_argument("cmd", nargs=REMAINDER, help="-- CMD ARGS...")


def count_type(minimum: int):
    return typed(lambda t: parse_count(t, minimum))


def fraction_type():
    return typed(parse_fraction)
