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
