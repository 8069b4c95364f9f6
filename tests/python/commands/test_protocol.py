"""Every subcommand has one shape (commands/__init__.py): NAME, HELP, add_arguments, plan, run, write;
the command line lists every command module, and runs each the one way."""

import argparse
import inspect
import os
import pkgutil

from alloclab import cli, commands

MEMBERS = ("NAME", "HELP", "add_arguments", "plan", "run", "write")


def test_every_command_module_is_listed_and_has_the_shape():
    modules = {m.name for m in pkgutil.iter_modules([os.path.dirname(commands.__file__)])} - {"arguments", "outputs"}
    assert {c.__name__.rsplit(".", 1)[1] for c in cli.COMMANDS} == modules
    for c in cli.COMMANDS:
        missing = [m for m in MEMBERS if not hasattr(c, m)]
        assert not missing, (c.__name__, missing)
        assert [len(inspect.signature(getattr(c, f)).parameters) for f in MEMBERS[2:]] == [1, 1, 1, 2], c.__name__
        assert c.NAME == c.__name__.rsplit(".", 1)[1] and c.HELP


def test_the_command_line_plans_runs_and_writes(monkeypatch):
    """execute() is plan, then run on the plan, then write of the plan and the result: nothing else."""
    calls = []

    class Fake:
        NAME, HELP = "fake", "a fake command"

        @staticmethod
        def plan(ns):
            calls.append(("plan", ns.x))
            return "P"

        @staticmethod
        def run(p):
            calls.append(("run", p))
            return "R"

        @staticmethod
        def write(p, r):
            calls.append(("write", p, r))
            return 7

    assert cli.execute(Fake, argparse.Namespace(x=1)) == 7
    assert calls == [("plan", 1), ("run", "P"), ("write", "P", "R")]
