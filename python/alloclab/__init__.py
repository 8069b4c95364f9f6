"""alloclab — the lab: profile a program's allocations, litter its heap, and
compare allocators under littering (after "Reconsidering Reconsidering Custom
Memory Allocation", §3–§4).

Modules, each importable on its own:

    alloclab.allocators  find allocators (glibc, peers, vam, any .so) and the lab's shims
    alloclab.runner      run one program with an environment; wall/user/sys/peak RSS
    alloclab.profile     run_profile(): size histogram and peak live objects
    alloclab.litter      the Table 3 presets and run_littered()
    alloclab.cache       cache-miss measurement (perf stat or cachegrind)
    alloclab.compare     run_matrix(): allocator x littering x repeat
    alloclab.report      plots (PNG) and the self-contained HTML report
    alloclab.cli         the `alloclab` command line
"""

__version__ = "0.1.0"


class LabError(Exception):
    """A problem the user can fix (bad input, missing program or library).

    The command line prints it as ``alloclab: <message>`` and exits with
    status 2.
    """
