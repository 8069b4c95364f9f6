"""The `alloclab` command line: the only module the entry points import.

The subcommands are the modules of alloclab.commands, listed in COMMANDS, each
of one shape: its arguments declared, a typed plan built from them, run,
written (commands/__init__.py). ``alloclab --help`` lists them; docs/lab.md describes
each. Strings become typed values here and in commands/arguments.py, once:
an Allocator, a littering Level, a cell; nothing below takes a name where it
needs one of them. Output paths are created and probed after parsing, before
anything runs; an output directory holding an earlier run's results is replaced
only when the new run produced results (commands/outputs.py).

Exit status: 0 success; 2 bad input (message ``alloclab: ...`` on stderr);
profile and litter pass on the program's own non-zero status (128+signal when
it was killed); compare returns 1 when some cell has no successful run, 130
when interrupted.
"""

from __future__ import annotations

import argparse
import sys

from alloclab import LabError, __version__
from alloclab.commands import (ablation, allocators, arguments, compare, diff, drag, frag, litter, outputs,
                               pages, profile, report, sites, study)

# In the order `alloclab --help` lists them.
COMMANDS = (profile, sites, diff, litter, allocators, compare, report, drag, frag, pages, study, ablation)


def command_names() -> list[str]:
    return [c.NAME for c in COMMANDS]


def execute(command, ns, outcome=None) -> int:
    """plan, run, write: the one way every subcommand goes. `outcome` (outputs.replacing) learns
    whether the run produced results: the command's kept(result), true when it has none."""
    plan = command.plan(ns)
    result = command.run(plan)
    if outcome is not None:
        outcome.kept = getattr(command, "kept", lambda r: True)(result)
    return command.write(plan, result)


class Parser(argparse.ArgumentParser):
    """argparse with the lab's error convention: `alloclab: <message>` and exit 2."""

    def error(self, message):
        self.exit(2, f"alloclab: {message} (see `{self.prog} --help`)\n")


def _usage_errors(parse):
    """An argument type whose LabError argparse reports as a usage error (exit 2, the message kept)."""
    def conv(text):
        try:
            return parse(text)
        except LabError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    conv.__name__ = parse.__name__
    return conv


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="alloclab", description="Profile, litter and compare memory allocators.",
               epilog="Each command has its own --help. Native parts are found as docs/lab.md describes "
                      "(ALLOCLAB_PREFIX first).")
    p.add_argument("--version", action="version", version=f"alloclab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for c in COMMANDS:
        sp = sub.add_parser(c.NAME, help=c.HELP, description=c.HELP)
        c.add_arguments(sp)
        for action in sp._actions:  # the argument types the commands declared (arguments.typed)
            if getattr(action.type, "lab_parse", False):
                action.type = _usage_errors(action.type)
        sp.set_defaults(func=c)
    return p


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser()
        ns = parser.parse_args(args)
        ns.command_line = ["alloclab", *args]   # what the run records (the study's run record)
        with outputs.replacing(ns) as outcome:
            arguments.prepare_outputs(ns)
            outputs.mark(ns)
            return execute(ns.func, ns, outcome)
    except LabError as e:
        print(f"alloclab: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("alloclab: interrupted", file=sys.stderr)
        return 130


def main_exit() -> None:
    """The console entry point (pyproject.toml [project.scripts])."""
    sys.exit(main())
