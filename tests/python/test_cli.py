"""The command line (cli.py): every subcommand comes from its list, and the launcher and
`python -m alloclab` agree."""

import argparse
import os
import subprocess
import sys


from conftest import ROOT, run_cli

from alloclab import cli


def test_every_subcommand_comes_from_the_registry():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == cli.command_names()
    r = run_cli("--help")
    for c in cli.COMMANDS:
        assert c.NAME in r.stdout
    assert len(set(cli.command_names())) == len(cli.COMMANDS)


def test_the_launcher_and_python_m_agree(tmp_path):
    a = run_cli("--help").stdout
    b = subprocess.run([sys.executable, "-m", "alloclab", "--help"],
                       capture_output=True, text=True, cwd=os.path.join(ROOT, "python")).stdout
    assert a == b and "compare" in a


def _man_commands(page: str) -> list[str]:
    """The commands alloclab(1) describes: each `.TP` + `.B NAME` entry of its DESCRIPTION."""
    with open(page, encoding="utf-8") as f:
        lines = f.read().splitlines()
    section, out = None, []
    for i, line in enumerate(lines):
        if line.startswith(".SH "):
            section = line[4:].strip()
        elif section == "DESCRIPTION" and line == ".TP" and i + 1 < len(lines) \
                and lines[i + 1].startswith(".B "):
            out.append(lines[i + 1][3:].strip())
    return out


def test_the_man_page_describes_every_command_in_order():
    """alloclab(1) has an entry for each command of COMMANDS, in the registry's order, and none
    for a command the lab does not have."""
    described = _man_commands(os.path.join(ROOT, "docs", "man", "man1", "alloclab.1"))
    assert described == cli.command_names()
