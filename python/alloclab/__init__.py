"""alloclab — the lab: profile a program's allocations, litter its heap, and
compare allocators under littering (after "Reconsidering Reconsidering Custom
Memory Allocation", §3–§4), and test the papers' claims (the study).

The package, one floor on another (docs/lab.md, "The package's layout"):

    cli.py        the command line; commands/ one module per subcommand
    experiments/  compare/, study/, ablation/, drag, frag, pages, the workloads' catalog
    measure/      profile, litter, cache counts, the memory tool, memops
    present/      tables, plots, the HTML report layer (no statistics)
    stats.py      medians, spreads, intervals, paired ratios
    core/         paths, the allocator registry, levels, the one runner, results/ (the
                  results model: a dataclass per row kind, one reader and writer per format)
"""

__version__ = "0.1.0"


class LabError(Exception):
    """A problem the user can fix (bad input, missing program or library).

    The command line prints it as ``alloclab: <message>`` and exits with
    status 2.
    """
