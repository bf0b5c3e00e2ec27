"""One cold measurement in a fresh process: ``python benchmarks/child.py TASK``.

Prints one JSON line: {"seconds": wall time of the measured part, "maxrss_kb": this process's peak
resident memory, "info": a short note}.  run.py starts it, so every figure starts from empty caches.
"""

from __future__ import annotations

import json
import resource
import sys
import time


def import_noughts() -> str:
    import noughts

    return noughts.__version__


def import_pyspiel() -> str:
    import pyspiel  # noqa: F401

    return ""


def solve3() -> str:
    """Solve every position reachable from the empty 3×3 board, starting with empty caches."""
    from noughts import solver
    from noughts.board import Board

    solution = solver.solve(Board())
    return f"value {solution.value}, plies {solution.plies}"


def solve4() -> str:
    from noughts import solver
    from noughts.board import Board

    solution = solver.solve(Board(4, 4, 4))
    return f"value {solution.value}, plies {solution.plies}"


def os_mnk4() -> str:
    from baselines import os_minimax_solver

    return f"{os_minimax_solver('mnk(m=4,n=4,k=4)')} states"


# Imports the task needs but that are not part of the measured work.
SETUP = {
    "solve3": ("noughts.solver", "noughts.board"),
    "solve4": ("noughts.solver", "noughts.board"),
    "os_mnk4": ("pyspiel", "open_spiel.python.algorithms.minimax_solver"),
}
TASKS = {f.__name__: f for f in (import_noughts, import_pyspiel, solve3, solve4, os_mnk4)}


def main(task: str) -> None:
    for module in SETUP.get(task, ()):
        __import__(module)
    start = time.perf_counter()
    info = TASKS[task]()
    seconds = time.perf_counter() - start
    maxrss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"seconds": seconds, "maxrss_kb": maxrss_kb, "info": info}))


if __name__ == "__main__":
    main(sys.argv[1])
