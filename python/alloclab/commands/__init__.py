"""The subcommands of `alloclab`, one module each, all of one shape.

Every module here but two is a command (arguments.py: the argument kinds they share;
outputs.py: output directories replaced only by a run that produced results):

    NAME, HELP                     # the subcommand and its one-line help
    add_arguments(parser)          # declares its arguments (argument kinds: arguments.py)
    plan(namespace) -> Plan        # the typed plan, checked before anything runs
    run(plan) -> Result            # runs it (experiments/, measure/)
    write(plan, result) -> int     # writes and prints what it found; the exit status
    kept(result) -> bool           # optional: whether the run replaces the earlier output (outputs.py)

cli.py lists them (cli.COMMANDS), builds the parser from them and runs each the
one way: plan, run, write. A new subcommand is one more module here and its
name in that list.
"""
