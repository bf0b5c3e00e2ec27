"""One cold measurement in a fresh process: ``python benchmarks/child.py TASK``.

Prints one JSON line: {"seconds": wall time of the measured part, "maxrss_kb": this process's peak
resident memory (its own high-water mark, VmHWM), "info": a short note, and for some tasks "parts":
seconds of each step}.  run.py starts it, so every figure starts from empty caches.
Some tasks take arguments: ``child.py overrun CASE SECONDS``, ``child.py engine_session [SHAPES [NODES SECONDS]]``.
``child.py engine_floor REPLIES`` is not a measurement but the engine protocol's floor: it reads request
lines on stdin, decodes each and writes the engine's reply (from the JSON-lines file REPLIES) for it.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable


def import_noughts() -> str:
    import noughts

    return noughts.__version__


def import_pyspiel() -> str:
    import pyspiel  # noqa: F401

    return ""


PARTS: dict[str, float] = {}  # seconds of each step of a task that reports them


def first_move() -> str:
    """``import noughts``, then the perfect player's first move on 3×3: a new process's first answer."""
    start = time.perf_counter()
    import noughts

    imported, imported_cpu = time.perf_counter(), time.process_time()
    from noughts import players

    player = players.get("perfect")
    ready = time.perf_counter()
    cell = player.choose(noughts.Board())
    done, done_cpu = time.perf_counter(), time.process_time()
    # CPU time as well: on a shared machine the wall time also counts waiting for a core
    PARTS.update({"import noughts": imported - start, "players, table and player": ready - imported,
                  "choose": done - ready, "CPU time after import": done_cpu - imported_cpu})
    return f"cell {cell}"


def first_move_openspiel() -> str:
    """The same for OpenSpiel: import it, then its alpha-beta's move on the empty board."""
    start = time.perf_counter()
    import pyspiel
    from open_spiel.python.algorithms.minimax import alpha_beta_search

    imported, imported_cpu = time.perf_counter(), time.process_time()
    _, action = alpha_beta_search(pyspiel.load_game("tic_tac_toe"))
    done, done_cpu = time.perf_counter(), time.process_time()
    PARTS.update({"import pyspiel": imported - start, "alpha_beta_search": done - imported,
                  "CPU time after import": done_cpu - imported_cpu})
    return f"action {action}"


def engine_floor(replies_file: str) -> None:
    """Read each request line, decode it and write the engine's reply to it: the protocol's own work,
    with the engine's own way of reading and writing (what has come, in one read; replies in one
    write and a flush once every complete line is answered)."""
    with open(replies_file, encoding="utf-8") as replies:
        answers = iter([json.loads(line) for line in replies])
    read_some, stdout = sys.stdin.buffer.read1, sys.stdout
    start = b""
    while chunk := read_some(65536):
        lines = (start + chunk).split(b"\n")
        start = lines.pop()
        out = []
        for line in lines:
            json.loads(line)
            out.append(json.dumps(next(answers), separators=(",", ":")))
        stdout.write("\n".join(out) + "\n")
        stdout.flush()


def peak_rss_kb() -> int:
    """This process's peak resident memory in KiB: VmHWM, its own high-water mark since it started.

    Not ru_maxrss: Linux carries the parent's resident size over to a forked child, so a child of
    a big benchmark process would report the parent's size as its own peak.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS


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


# budgets: one search each, in a fresh process, with a time budget it cannot finish in
OVERRUN_CASES = {
    "solver-analyse-26x26k2": "solver.analyse, 26×26 k=2",
    "solver-best-26x26k2": "solver.best_moves, 26×26 k=2",
    "solver-solve-26x26k5": "solver.solve, 26×26 k=5",
    "solver-analyse-15x15k5": "solver.analyse, 15×15 k=5",
    "solver-solve-20x20k4": "solver.solve, 20×20 k=4",
    "perfect-26x26k3": "perfect move, 26×26 k=3",
    "hard-19x19k5": "hard move, 19×19 k=5",
    "medium-26x26k4": "medium move, 26×26 k=4",
    "minimax-26x26k5": "minimax move, 26×26 k=5 (no node limit)",
    "engine-analyse-26x26k2": "engine analyse request, 26×26 k=2",
}


def overrun(case: str, seconds: str) -> tuple[str, float]:
    """One search of ``case`` with ``seconds`` to spend, and the seconds it took.

    The boards are made before the clock starts (a request's board is part of the engine case).
    Only the arguments every version has (``deadline=``, ``time_limit=``, ``max_seconds=``, the
    engine's ANALYSE_MAX_SECONDS) are used, so ``run.py --before REV`` runs the same searches on
    older code.
    """
    import random

    from noughts import Board, engine, solver
    from noughts.errors import NoughtsError
    from noughts.players.minimax import MinimaxPlayer
    from noughts.players.perfect import PerfectPlayer
    from noughts.players.presets import HardPlayer, MediumPlayer

    limit = float(seconds)
    engine.ANALYSE_MAX_NODES = None
    engine.ANALYSE_MAX_SECONDS = limit
    boards = {shape: Board(*shape) for shape in ((26, 26, 2), (26, 26, 3), (26, 26, 4), (15, 15, 5),
                                                  (20, 20, 4), (19, 19, 5))}
    mid_game = Board(26, 26, 5)
    for cell in (337, 338, 312, 365, 363, 311):  # a few marks near the centre, no threats
        mid_game = mid_game.play(cell)

    def preset(kind: type[HardPlayer] | type[MediumPlayer]) -> HardPlayer | MediumPlayer:
        player = kind(random.Random(1))  # seed 1: medium's first coin says "best move"
        player.perfect = PerfectPlayer(player.rng, time_limit=limit)
        return player

    players = {"perfect": PerfectPlayer(random.Random(1), time_limit=limit), "hard": preset(HardPlayer),
               "medium": preset(MediumPlayer), "minimax": MinimaxPlayer(max_nodes=10**12, max_seconds=limit)}
    start = time.monotonic()
    deadline = start + limit
    searches = {
        "solver-analyse-26x26k2": lambda: solver.analyse(boards[26, 26, 2], deadline=deadline),
        "solver-best-26x26k2": lambda: solver.best_moves(boards[26, 26, 2], deadline=deadline),
        "solver-solve-26x26k5": lambda: solver.solve(mid_game, deadline=deadline),
        "solver-analyse-15x15k5": lambda: solver.analyse(boards[15, 15, 5], deadline=deadline),
        "solver-solve-20x20k4": lambda: solver.solve(boards[20, 20, 4], deadline=deadline),
        "perfect-26x26k3": lambda: players["perfect"].choose(boards[26, 26, 3]),
        "hard-19x19k5": lambda: players["hard"].choose(boards[19, 19, 5]),
        "medium-26x26k4": lambda: players["medium"].choose(boards[26, 26, 4]),
        "minimax-26x26k5": lambda: players["minimax"].choose(mid_game),
        "engine-analyse-26x26k2": lambda: engine.handle({"cmd": "analyse", "rows": 26, "cols": 26, "k": 2}),
    }
    try:
        outcome = f"answered {searches[case]()!s:.40}"
    except NoughtsError as error:
        outcome = f"gave up: {str(error)[:60]}"
    return outcome, time.monotonic() - start


def engine_session(shapes: str = "24", nodes: str = "50000", seconds: str = "3") -> str:
    """Requests about many board shapes through the engine's handler, as a long-running client sends them.

    Uses only what every version of the protocol has, so older code can run the same session:
    each shape gets status, analyse (within ``nodes`` positions and ``seconds``, set through the
    module's limits) and a minimax and an arduino move.
    """
    import random

    from noughts import engine
    from noughts.board import Board

    engine.ANALYSE_MAX_NODES = int(nodes)
    engine.ANALYSE_MAX_SECONDS = float(seconds)
    sides = (4, 5, 6, 7, 8, 10, 12, 15, 19, 20, 26)
    every = [(rows, cols, k) for rows in sides for cols in sides if rows <= cols
             for k in (3, 4, 5) if k <= cols]
    chosen = random.Random(5).sample(every, int(shapes))
    answered = errors = 0
    for rows, cols, k in chosen:
        board = Board(rows, cols, k)
        for request in ({"cmd": "status"}, {"cmd": "analyse"}, {"cmd": "move", "player": "minimax", "seed": 1},
                        {"cmd": "move", "player": "arduino", "seed": 1}):
            reply = engine.handle({**request, "rows": board.rows, "cols": board.cols, "k": board.k})
            answered += 1
            errors += "error" in reply
    return f"{len(chosen)} shapes, {answered} requests, {errors} gave up"


def os_mnk4() -> str:
    from baselines import os_minimax_solver

    return f"{os_minimax_solver('mnk(m=4,n=4,k=4)')} states"


# Imports the task needs but that are not part of the measured work.
SETUP = {
    "solve3": ("noughts.solver", "noughts.board"),
    "solve4": ("noughts.solver", "noughts.board"),
    "os_mnk4": ("pyspiel", "open_spiel.python.algorithms.minimax_solver"),
    "overrun": ("noughts.solver", "noughts.players", "noughts.engine"),
    "engine_session": ("noughts.solver", "noughts.players", "noughts.engine"),
}
TASKS: dict[str, Callable[..., str | tuple[str, float]]] = {
    f.__name__: f for f in (import_noughts, import_pyspiel, solve3, solve4, os_mnk4, overrun, engine_session,
                            first_move, first_move_openspiel)}


def main(task: str, *args: str) -> None:
    if task == "engine_floor":
        engine_floor(*args)
        return
    for module in SETUP.get(task, ()):
        __import__(module)
    start = time.perf_counter()
    info = TASKS[task](*args)
    seconds = time.perf_counter() - start
    if isinstance(info, tuple):  # the task timed its own measured part
        info, seconds = info
    print(json.dumps({"seconds": seconds, "maxrss_kb": peak_rss_kb(), "info": info, "parts": PARTS}))


if __name__ == "__main__":
    main(*sys.argv[1:])
