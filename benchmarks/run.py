"""noughts benchmark suite: ``python benchmarks/run.py [--quick] [--json FILE]``.

Measures, each as the median of repeated runs, next to a baseline:
  1. the perfect player's move, warm (vs OpenSpiel's Python alpha_beta_search),
  2. the whole 3×3 solve, cold in a fresh process (vs textbook minimax / alpha-beta, OpenSpiel MinimaxSolver),
  3. random full games per second through the Board API (vs pyspiel's tic_tac_toe),
  4. the 4×4 k=4 solve in a fresh process: time and peak memory (vs OpenSpiel on mnk(4,4,4), capped),
  5. ``import noughts`` in a fresh process (vs ``import pyspiel``),
  6. how far past a time budget searches run on big boards (solver, players, engine, command line),
  7. peak memory of an engine session over many board shapes, in a fresh process,
  8. a new process's first perfect move (import noughts, the players, the move; vs OpenSpiel's first alpha-beta move),
  9. requests a second through ``noughts engine`` (vs a process that only reads, decodes and writes the same lines).
Section 1 also sets choose beside a bare dict lookup, and section 3 plays random games one move at a time
through the public Board and Game APIs beside pyspiel's, next to the special ``Board.playout`` loop.
Cold figures are fresh processes (bytecode cached, as installed); warm ones repeat in one process.  Peak
memory is each child process's own high-water mark (VmHWM), never the benchmark's.
With ``--before REV`` sections 6 and 7 also run the same searches on that git revision's code, as the
baseline.  Prints one table (figures, ratios, targets, PASS/MISS); progress goes to stderr.  A missing
OpenSpiel or a missing part of noughts turns its rows into "n/a" with the reason below the table; it
never crashes.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path[:0] = [str(SRC), str(HERE)]

import baselines  # noqa: E402
import child  # noqa: E402
from revisions import older_source  # noqa: E402

# Positions for the perfect-move rows, as cell sequences (cell = row*3 + col, X first).
POSITIONS = {
    "empty board": (),
    "after X b2": (4,),
    "after X b2, O a1": (4, 0),
    "after X a1 O b2 X c3": (0, 4, 8),
    "X to block at b1": (4, 0, 8, 2),
}
OPENSPIEL_4X4_CAP = 120.0  # seconds; OpenSpiel's MinimaxSolver does not finish 4×4 in reasonable time
NOUGHTS_4X4_CAP = 300.0
CHILD_MEMORY_CAP = 8 << 30  # address-space limit for the 4×4 children, so a runaway cannot hurt the machine
GIB = 1 << 30
MIB = 1 << 20
OVERRUN_LIMIT = 0.1  # seconds a search may run past its time budget
BEFORE_CAP = 120.0  # seconds an older version's search may take before it is stopped
SESSION_SHAPES = 24  # board shapes in the engine session of section 7 (8 with --quick)


@dataclass
class Row:
    section: str
    name: str
    kind: str  # "time" (s, lower is better) | "rate" (per s, higher is better) | "memory" (bytes, lower)
    value: float | None = None  # the noughts figure
    capped: bool = False  # value is only a lower bound: noughts hit its time cap
    baseline: str = ""
    base: float | None = None
    base_capped: bool = False  # base is only a lower bound: the baseline hit its time cap
    limit: float | None = None  # absolute target for value
    min_ratio: float | None = None  # target for the speed-up over the baseline
    note: str = ""  # why a figure is missing, or a remark

    @property
    def ratio(self) -> float | None:
        """How many times better noughts is than the baseline (>1 = noughts wins)."""
        if not self.value or not self.base:
            return None
        return self.value / self.base if self.kind == "rate" else self.base / self.value

    @property
    def status(self) -> str:
        if self.value is None:
            return "n/a"
        if self.limit is None and self.min_ratio is None:
            return "info"
        checks = []
        if self.limit is not None:
            checks.append(self.value >= self.limit if self.kind == "rate" else self.value <= self.limit)
        ratio, wanted = self.ratio, self.min_ratio
        # A capped baseline only bounds the ratio from below: it can prove a PASS, never a MISS.
        if wanted is not None and ratio is not None and (ratio >= wanted or not self.base_capped):
            checks.append(ratio >= wanted)
        if not checks:
            return "n/a"
        return "PASS" if all(checks) else "MISS"


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- measuring ---------------------------------------------------------------------------------


def per_call(stmt: Any, repeat: int, min_time: float, namespace: dict[str, Any] | None = None) -> float:
    """Median seconds per call of ``stmt`` (a callable, or a statement using ``namespace``).

    The loop count grows until one sample takes ``min_time``; then ``repeat`` samples are taken."""
    timer = timeit.Timer(stmt, globals=namespace)
    number = 1
    while (elapsed := timer.timeit(number)) < min_time:
        number = max(number * 2, int(number * min_time / max(elapsed, 1e-9) * 1.2))
    samples = [elapsed / number] + [timer.timeit(number) / number for _ in range(repeat - 1)]
    return statistics.median(samples)


class ChildFailed(Exception):
    pass


class ChildTimedOut(ChildFailed):
    pass


def run_child(task: str, timeout: float, memory_cap: int | None = None, *args: str,
              src: Path = SRC) -> dict[str, Any]:
    """Run ``child.py TASK ARGS`` in a fresh interpreter on the code in ``src``; its JSON result
    (seconds, maxrss_kb, info)."""
    env = child_env(src)

    def limit_memory() -> None:
        if memory_cap:
            resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))

    try:
        proc = subprocess.run(
            [sys.executable, str(HERE / "child.py"), task, *args],
            capture_output=True, text=True, timeout=timeout, env=env, cwd=HERE, preexec_fn=limit_memory,
        )
    except subprocess.TimeoutExpired:
        raise ChildTimedOut(f"> {timeout:.0f} s (stopped)") from None
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"]
        raise ChildFailed(lines[-1])
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def child_env(src: Path = SRC) -> dict[str, str]:
    """The environment of a measured process: ``src`` first on the path, and bytecode cached as an
    installed package has it (with PYTHONDONTWRITEBYTECODE every fresh process would compile the
    package again and the cold figures would measure the compiler)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def median_child(task: str, runs: int, timeout: float = 120.0) -> tuple[float, dict[str, Any]]:
    """Median seconds of ``runs`` fresh-process runs of ``task``, and the last result."""
    run_child(task, timeout)  # once unmeasured, so that the bytecode is cached
    results = [run_child(task, timeout) for _ in range(runs)]
    return statistics.median(r["seconds"] for r in results), results[-1]


def unavailable(exc: BaseException) -> str:
    """Why a noughts figure is missing: a part not written yet, or a failure."""
    text = str(exc) if isinstance(exc, ChildFailed) else f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ImportError | AttributeError) or text.startswith(("ModuleNotFoundError", "Import")):
        return f"not available yet ({text})"
    return f"failed ({text})"


def board_text(moves: tuple[int, ...]) -> str:
    cells = ["."] * 9
    for ply, cell in enumerate(moves):
        cells[cell] = "XO"[ply % 2]
    text = "".join(cells)
    return f"{text[:3]}/{text[3:6]}/{text[6:]}"


# --- the five sections -------------------------------------------------------------------------


def bench_perfect_move(quick: bool, spiel: Any) -> list[Row]:
    rows = []
    try:
        from noughts import players
        from noughts.board import Board

        player = players.get("perfect")
        error = ""
    except Exception as exc:
        error = unavailable(exc)
    game = spiel.load_game("tic_tac_toe") if spiel else None
    for label, moves in POSITIONS.items():
        row = Row("1 perfect move (warm)", f"{label}  {board_text(moves)}", "time",
                  baseline="OpenSpiel alpha_beta_search", limit=2e-6)
        log(f"perfect move: {label}")
        if error:
            row.note = error
        else:
            try:
                board = Board()
                for move in moves:
                    board = board.play(move)
                move = player.choose(board)  # warm up: fills whatever cache the player uses
                assert move in board.legal_moves, f"perfect player chose illegal move {move}"
                row.value = per_call("choose(board)", 5 if quick else 9, 0.05 if quick else 0.2,
                                     {"choose": player.choose, "board": board})
            except Exception as exc:
                row.note = unavailable(exc)
        if game is None:
            row.note = row.note or baselines.OPENSPIEL_ERROR
        else:
            state = baselines.os_state(game, moves)
            row.base = per_call(lambda s=state: baselines.os_alpha_beta(game, s), 3 if quick else 5,
                                0.05 if quick else 0.2)
            if not error:
                os_value = baselines.os_alpha_beta(game, state)[0]
                try:
                    from noughts import solver

                    value = solver.solve(board).value
                    if value != os_value:
                        row.note = f"VALUE MISMATCH: noughts {value}, OpenSpiel {os_value}"
                        log(row.note)
                except Exception:
                    pass
        rows.append(row)
    # The speed-up target is judged on the total over all positions: late positions need so little
    # search that no lookup can be 10,000× faster than alpha-beta there.
    total = Row(rows[0].section, f"all {len(rows)} positions, summed", "time", baseline=rows[0].baseline,
                min_ratio=10_000, note=rows[0].note)
    if all(r.value for r in rows):
        total.value = sum(r.value or 0 for r in rows)
    if all(r.base for r in rows):
        total.base = sum(r.base or 0 for r in rows)
    return [*rows, total, bench_lookup_peer(quick, rows[0].section)]


def bench_lookup_peer(quick: bool, section: str) -> Row:
    """perfect.choose against the least a table player can do: a function returning ``table[board.key]``.

    Both run over the same positions, in alternating rounds, so a busy machine slows both alike."""
    row = Row(section, f"choose over all {len(POSITIONS)} positions", "time",
              baseline="lookup(board): table[board.key]", min_ratio=0.5)
    log("perfect move: beside a bare dict lookup")
    try:
        from noughts import players
        from noughts.board import Board

        player = players.get("perfect", random.Random(1))
        boards = []
        for moves in POSITIONS.values():
            board = Board()
            for move in moves:
                board = board.play(move)
            boards.append(board)
        table = {board.key: player.candidates(board) for board in boards}

        def lookup(board: Any) -> Any:
            return table[board.key]

        namespace = {"choose": player.choose, "lookup": lookup, "boards": boards}
        mine = timeit.Timer("for board in boards: choose(board)", globals=namespace)
        theirs = timeit.Timer("for board in boards: lookup(board)", globals=namespace)
        number, rounds = (2000, 15) if quick else (5000, 41)
        pairs = [(mine.timeit(number) / number, theirs.timeit(number) / number) for _ in range(rounds)]
        row.value = statistics.median(m for m, _ in pairs)
        row.base = statistics.median(t for _, t in pairs)
        ratio = statistics.median(m / t for m, t in pairs)
        row.note = f"median of {rounds} alternating rounds; choose is {ratio:.2f}× the lookup, round by round"
    except Exception as exc:
        row.note = unavailable(exc)
    return row


def bench_solve3(quick: bool, spiel: Any) -> list[Row]:
    section = "2 3×3 full solve (cold)"
    value, note = None, ""
    log("3×3 solve: noughts, fresh processes")
    try:
        value, result = median_child("solve3", 3 if quick else 9)
        note = f"noughts: {result['info']}"
    except ChildFailed as exc:
        note = unavailable(exc)

    def row(baseline: str, base: float | None = None, why: str = "") -> Row:
        return Row(section, "solve every position from empty caches", "time", value, baseline=baseline,
                   base=base, limit=10e-3, note=why or note)

    log("3×3 solve: textbook minimax")
    rows = [row("textbook minimax (no memo)",
                per_call(lambda: baselines.textbook_minimax(baselines.empty_board(), "X"), 1 if quick else 3,
                         0.0))]
    log("3×3 solve: textbook alpha-beta")
    rows.append(row("textbook alpha-beta (no memo)",
                    per_call(lambda: baselines.textbook_alphabeta(baselines.empty_board(), "X"),
                             3 if quick else 7, 0.1)))
    if spiel is None:
        rows.append(row("OpenSpiel MinimaxSolver", why=baselines.OPENSPIEL_ERROR))
    elif quick:
        rows.append(row("OpenSpiel MinimaxSolver", why="skipped with --quick"))
    else:
        log("3×3 solve: OpenSpiel MinimaxSolver")
        rows.append(row("OpenSpiel MinimaxSolver",
                        per_call(lambda: baselines.os_minimax_solver("tic_tac_toe"), 5, 0.2)))
    return rows


def bench_random_games(quick: bool, spiel: Any) -> list[Row]:
    row = Row("3 random games", "Board().playout(rng): random games/s", "rate",
              baseline="pyspiel tic_tac_toe", min_ratio=2.0)
    if spiel is not None:  # measured in the alternating rounds of the per-move games, beside pyspiel
        return bench_per_move_games(quick, spiel, row)
    row.note = baselines.OPENSPIEL_ERROR
    repeat, min_time = (3, 0.1) if quick else (9, 0.3)
    log("random games: noughts")
    try:
        from noughts.board import Board

        rng, start = random.Random(1), Board()
        row.value = 1 / per_call(lambda: start.playout(rng), repeat, min_time)
    except Exception as exc:
        row.note = unavailable(exc)
    return [row, *bench_per_move_games(quick, spiel)]


def playout_game(start: Any, rng: random.Random) -> object:
    """A random game by the special loop, which plays on bitmasks without the positions in between."""
    return start.playout(rng).winner


def board_per_move_game(board_class: Any, rng: random.Random) -> object:
    """A random game through the public per-move API, as a user writes it (``board_class`` is
    ``Board``, imported once like a user's module does: an import statement per game would cost
    more than a move)."""
    board = board_class()
    while not board.is_over:
        board = board.play(rng.choice(board.legal_moves))
    return board.winner


def game_per_move_game(game_class: Any, rng: random.Random) -> object:
    """The same through Game, which keeps the moves (undo, records, listeners)."""
    game = game_class()
    while game.result is None:
        game.play(rng.choice(game.board.legal_moves))
    return game.result


def bench_per_move_games(quick: bool, spiel: Any, playout_row: Row | None = None) -> list[Row]:
    """Random games one move at a time through each public API (and by ``playout`` when its row is
    given), beside pyspiel's, in alternating rounds."""
    section = "3 random games"
    rows = [Row(section, "Board: is_over, legal_moves, play: games/s", "rate",
                baseline="pyspiel: is_terminal, legal_actions, apply_action", min_ratio=1.5),
            Row(section, "Game: result, board.legal_moves, play: games/s", "rate",
                baseline="pyspiel: is_terminal, legal_actions, apply_action")]
    names = ["board", "game"]
    if playout_row is not None:
        rows.insert(0, playout_row)
        names.insert(0, "playout")
    if spiel is None:
        for row in rows:
            row.note = baselines.OPENSPIEL_ERROR
        return rows
    log("random games: noughts playout, Board and Game one move at a time, pyspiel")
    from noughts.board import Board
    from noughts.game import Game

    game = spiel.load_game("tic_tac_toe")
    loops = {"playout": functools.partial(playout_game, Board()),
             "board": functools.partial(board_per_move_game, Board),
             "game": functools.partial(game_per_move_game, Game),
             "pyspiel": functools.partial(baselines.os_random_game, game)}
    loops = {name: loop for name, loop in loops.items() if name in names or name == "pyspiel"}
    number, rounds = (500, 7) if quick else (2000, 21)
    rates: dict[str, list[float]] = {name: [] for name in loops}
    try:
        for _ in range(rounds):
            for name, loop in loops.items():
                rng = random.Random(1)
                started = time.process_time()  # CPU time: other work on a shared machine does not count
                for _ in range(number):
                    loop(rng)
                rates[name].append(number / (time.process_time() - started))
    except Exception as exc:
        for row in rows:
            row.note = unavailable(exc)
        return rows
    base = statistics.median(rates["pyspiel"])
    for row, name in zip(rows, names, strict=True):
        row.value, row.base = statistics.median(rates[name]), base
        ratio = statistics.median(mine / theirs for mine, theirs in zip(rates[name], rates["pyspiel"], strict=True))
        row.note = f"per CPU second, median of {rounds} alternating rounds; {ratio:.2f}× pyspiel round by round"
    return rows


def bench_solve4(quick: bool, spiel: Any) -> list[Row]:
    section = "4 4×4 k=4 solve (cold)"
    time_row = Row(section, "solve(Board(4, 4, 4)) time", "time", baseline="OpenSpiel MinimaxSolver mnk",
                   limit=30.0)
    memory_row = Row(section, "solve(Board(4, 4, 4)) peak RSS", "memory",
                     baseline="OpenSpiel MinimaxSolver mnk", limit=GIB)
    rows = [time_row, memory_row]
    if quick:
        for row in rows:
            row.note = "skipped with --quick"
        return rows
    times, memories = [], []
    for run in range(3):
        log(f"4×4 solve: noughts run {run + 1}/3 (cap {NOUGHTS_4X4_CAP:.0f} s)")
        try:
            result = run_child("solve4", NOUGHTS_4X4_CAP, CHILD_MEMORY_CAP)
        except ChildTimedOut:
            time_row.value, time_row.capped = NOUGHTS_4X4_CAP, True
            memory_row.note = f"noughts stopped at its {NOUGHTS_4X4_CAP:.0f} s cap"
            break
        except ChildFailed as exc:
            for row in rows:
                row.note = unavailable(exc)
            break
        times.append(result["seconds"])
        memories.append(result["maxrss_kb"] * 1024)
        time_row.note = f"noughts: {result['info']}"
    if times:
        time_row.value, memory_row.value = statistics.median(times), statistics.median(memories)
    if spiel is None:
        for row in rows:
            row.note = row.note or baselines.OPENSPIEL_ERROR
        return rows
    log(f"4×4 solve: OpenSpiel MinimaxSolver on mnk(m=4,n=4,k=4), cap {OPENSPIEL_4X4_CAP:.0f} s")
    try:
        result = run_child("os_mnk4", OPENSPIEL_4X4_CAP, CHILD_MEMORY_CAP)
        time_row.base, memory_row.base = result["seconds"], result["maxrss_kb"] * 1024
    except ChildTimedOut:
        time_row.base, time_row.base_capped = OPENSPIEL_4X4_CAP, True
        memory_row.note = memory_row.note or f"OpenSpiel stopped at its {OPENSPIEL_4X4_CAP:.0f} s cap"
    except ChildFailed as exc:
        memory_row.note = f"OpenSpiel failed: {exc}"
    return rows


def bench_import(quick: bool, spiel: Any) -> list[Row]:
    row = Row("5 import", "import noughts (fresh process)", "time", baseline="import pyspiel", limit=30e-3)
    log("import time: noughts")
    try:
        row.value = median_child("import_noughts", 5 if quick else 11)[0]
    except ChildFailed as exc:
        row.note = unavailable(exc)
    if spiel is None:
        row.note = row.note or baselines.OPENSPIEL_ERROR
    else:
        log("import time: pyspiel")
        row.base = median_child("import_pyspiel", 3 if quick else 11)[0]
    return [row]


BEFORE: tuple[str, Path] | None = None  # (revision, its src folder) with --before


def bench_budgets(quick: bool, spiel: Any) -> list[Row]:
    """Seconds past the time budget: each search in a fresh process, on boards it cannot finish."""
    section = "6 budgets kept: seconds past the time budget"
    seconds = 1.0 if quick else 2.0
    baseline = f"before ({BEFORE[0]})" if BEFORE else ""
    rows = []
    for case, label in child.OVERRUN_CASES.items():
        row = Row(section, f"{label}, {seconds:g} s", "time", limit=OVERRUN_LIMIT, baseline=baseline)
        log(f"budget: {label}")
        try:
            result = run_child("overrun", seconds + 60, CHILD_MEMORY_CAP, case, str(seconds))
            row.value = max(0.0, result["seconds"] - seconds)
            if result["info"].startswith("answered") and result["seconds"] < seconds:
                row.note = "answered within its budget"
        except ChildFailed as exc:
            row.note = unavailable(exc)
        if BEFORE:
            log(f"budget: {label}, before (cap {BEFORE_CAP:.0f} s)")
            try:
                old = run_child("overrun", BEFORE_CAP, CHILD_MEMORY_CAP, case, str(seconds), src=BEFORE[1])
                row.base = max(0.0, old["seconds"] - seconds)
            except ChildTimedOut:
                row.base, row.base_capped = BEFORE_CAP - seconds, True
            except ChildFailed as exc:
                row.note = row.note or f"before: {exc}"
        rows.append(row)
    rows += bench_command_budgets(section, seconds)
    return rows


def bench_command_budgets(section: str, seconds: float) -> list[Row]:
    """The same for the command line and the engine process; their start-up is measured apart."""
    env = child_env()
    noughts = [sys.executable, "-m", "noughts"]
    shape = ["--rows", "26", "--cols", "26", "--k", "2"]

    def wall(args: list[str]) -> float:
        start = time.perf_counter()
        subprocess.run([*noughts, *args], capture_output=True, env=env, timeout=seconds + 120)
        return time.perf_counter() - start

    rows = []
    for label, args in (("noughts analyse 26×26 k=2", ["analyse", *shape]),
                        ("noughts move perfect 26×26 k=3", ["move", *shape[:-1], "3", "--player", "perfect"])):
        log(f"budget: {label}")
        # the same command with nothing to spend: start-up, imports and the board, but no search
        startup = statistics.median(wall([*args, "--nodes", "0"]) for _ in range(3))
        row = Row(section, f"{label} --seconds {seconds:g}", "time", limit=OVERRUN_LIMIT,
                  note=f"less the same command with --nodes 0 (start-up, imports; {startup:.2f} s)")
        taken = statistics.median(wall([*args, "--seconds", str(seconds)]) for _ in range(3))
        row.value = max(0.0, taken - startup - seconds)  # noise on a busy machine can make it negative
        rows.append(row)

    log("budget: noughts engine, analyse 26×26 k=2")
    row = Row(section, f'engine process: analyse 26×26 k=2, "seconds": {seconds:g}', "time", limit=OVERRUN_LIMIT)
    engine = subprocess.Popen([*noughts, "engine"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env=env)
    assert engine.stdin is not None and engine.stdout is not None
    try:
        # started, the solver loaded (once per process) and the board's shape known, then the request
        for request in ({"cmd": "analyse", "rows": 26, "cols": 26, "k": 2, "nodes": 0},
                        {"cmd": "analyse", "rows": 26, "cols": 26, "k": 2, "seconds": seconds}):
            start = time.perf_counter()
            engine.stdin.write(json.dumps(request) + "\n")
            engine.stdin.flush()
            engine.stdout.readline()
        row.value = max(0.0, time.perf_counter() - start - seconds)
    finally:
        engine.stdin.close()
        engine.wait(timeout=30)
    rows.append(row)
    return rows


def bench_memory(quick: bool, spiel: Any) -> list[Row]:
    """Peak memory of an engine session over many board shapes, in a fresh process."""
    shapes = 8 if quick else SESSION_SHAPES
    row = Row("7 memory (peak RSS, fresh process)", f"engine session: {shapes} board shapes, peak RSS",
              "memory", limit=256 * MIB, baseline=f"before ({BEFORE[0]})" if BEFORE else "")
    log(f"memory: engine session over {shapes} shapes")
    try:
        result = run_child("engine_session", 900, CHILD_MEMORY_CAP, str(shapes))
        row.value = result["maxrss_kb"] * 1024
        row.note = f"{result['info']} in {result['seconds']:.0f} s"
    except ChildFailed as exc:
        row.note = unavailable(exc)
    if BEFORE:
        log("memory: engine session, before")
        try:
            old = run_child("engine_session", 1800, CHILD_MEMORY_CAP, str(shapes), src=BEFORE[1])
            row.base = old["maxrss_kb"] * 1024
        except ChildFailed as exc:
            row.note += f"; before: {exc}"
    return [row]


def bench_first_move(quick: bool, spiel: Any) -> list[Row]:
    """A new process's first perfect move on 3×3, beside OpenSpiel's first alpha-beta move."""
    section = "8 first move in a new process (cold)"
    runs = 7 if quick else 21
    total = Row(section, "import noughts + first perfect move", "time",
                baseline="import pyspiel + first alpha_beta_search move")
    move = Row(section, "first perfect move after import noughts", "time",
               baseline="alpha_beta_search after import pyspiel", limit=5e-3)
    process = Row(section, "whole process: python -c '...first perfect move'", "time",
                  baseline="python -c '...first alpha_beta_search move'")
    # the same move's CPU time: what the process itself spends, whatever else the cores are doing
    cpu = Row(section, "first perfect move after import noughts, CPU time", "time",
              baseline="alpha_beta_search after import pyspiel, CPU time", limit=5e-3)
    rows = [total, move, cpu, process]
    log("first move: noughts, fresh processes")
    try:
        run_child("first_move", 120)  # unmeasured: caches the bytecode
        results = [run_child("first_move", 120) for _ in range(runs)]
        parts = {name: statistics.median(r["parts"][name] for r in results) for name in results[0]["parts"]}
        total.value = statistics.median(r["seconds"] for r in results)
        move.value = statistics.median(r["seconds"] - r["parts"]["import noughts"] for r in results)
        cpu.value = statistics.median(r["parts"]["CPU time after import"] for r in results)
        cpu.note = f"medians of {runs} fresh processes each"
        move.note = f"noughts, medians of {runs}: " + ", ".join(
            f"{name} {value * 1e3:.2f} ms" for name, value in parts.items())
        move.note += f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    except (ChildFailed, KeyError) as exc:
        for row in rows:
            row.note = unavailable(exc)
    code = {"noughts": "import noughts; from noughts import players; players.get('perfect').choose(noughts.Board())",
            "pyspiel": "import pyspiel; from open_spiel.python.algorithms.minimax import alpha_beta_search; "
                       "alpha_beta_search(pyspiel.load_game('tic_tac_toe'))",
            "nothing": "pass"}
    if spiel is None:
        for row in rows:
            row.note = row.note or baselines.OPENSPIEL_ERROR
        del code["pyspiel"]
    else:
        log("first move: OpenSpiel, fresh processes")
        try:
            run_child("first_move_openspiel", 120)  # unmeasured: caches the bytecode
            spiel_results = [run_child("first_move_openspiel", 120) for _ in range(runs)]
            total.base = statistics.median(r["seconds"] for r in spiel_results)
            move.base = statistics.median(r["parts"]["alpha_beta_search"] for r in spiel_results)
            cpu.base = statistics.median(r["parts"]["CPU time after import"] for r in spiel_results)
        except (ChildFailed, KeyError) as exc:
            total.note = total.note or f"OpenSpiel: {exc}"
    log("first move: whole processes")
    env = child_env()
    walls: dict[str, list[float]] = {name: [] for name in code}
    for _ in range(runs + 1):  # in turns; the first round only caches bytecode
        for name, text in code.items():
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", text], env=env, capture_output=True, timeout=120)
            walls[name].append(time.perf_counter() - started if done.returncode == 0 else float("nan"))
    wall = {name: statistics.median(times[1:]) for name, times in walls.items()}
    process.value, process.base = wall["noughts"], wall.get("pyspiel")
    process.note = f"wall time, median of {runs}; Python starting and doing nothing: {wall['nothing'] * 1e3:.1f} ms"
    return rows


ENGINE_REQUESTS = 50_000  # enough that the start-up taken off (the first 200) is a small part


def engine_requests(count: int) -> list[str]:
    """Move requests on 3×3 as a client playing many games sends them: positions from random games, seeded."""
    from noughts.board import Board

    rng = random.Random(3)
    lines = []
    for number in range(count):
        board = Board()
        for _ in range(rng.randrange(9)):
            if board.is_over:
                break
            board = board.play(rng.choice(board.legal_moves))
        if board.is_over:
            board = Board()
        lines.append(json.dumps({"id": number, "cmd": "move", "position": str(board), "seed": number}))
    return lines


def bench_engine(quick: bool, spiel: Any) -> list[Row]:
    """Requests a second through ``noughts engine`` (a process reading stdin, answering on stdout),
    beside the floor: a process that reads the same lines, decodes them and writes the same replies."""
    section = "9 engine protocol (warm)"
    row = Row(section, f"noughts engine: {ENGINE_REQUESTS:,} move requests, 3×3", "rate",
              baseline="floor: read, decode, write the same replies", limit=50_000.0)
    log("engine protocol: requests a second")
    folder = Path(tempfile.mkdtemp(prefix="noughts-engine-bench-"))
    requests, few = folder / "requests.jsonl", folder / "few.jsonl"
    lines = engine_requests(ENGINE_REQUESTS)
    requests.write_text("\n".join(lines) + "\n")
    few.write_text("\n".join(lines[:200]) + "\n")  # start-up, imports and first answers: taken off
    replies = folder / "replies.jsonl"
    env = child_env()
    commands = {"noughts": [sys.executable, "-m", "noughts", "engine"],
                "floor": [sys.executable, str(HERE / "child.py"), "engine_floor", str(replies)]}

    cpu: dict[str, float] = {}  # the CPU time of the last run of each command and input

    def seconds(command: list[str], source: Path, output: Path = folder / "out.jsonl") -> float:
        with source.open("rb") as stdin, output.open("wb") as stdout:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run(command, stdin=stdin, stdout=stdout, env=env, check=True, timeout=600)
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[source.name] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            return wall

    try:
        seconds(commands["noughts"], requests, replies)  # the replies the floor writes; bytecode cached
        rates: dict[str, list[float]] = {name: [] for name in commands}
        cpu_rates: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(3 if quick else 7):
            for name, command in commands.items():
                whole = seconds(command, requests)
                whole_cpu = cpu[requests.name]
                rates[name].append((ENGINE_REQUESTS - 200) / (whole - seconds(command, few)))
                cpu_rates[name].append((ENGINE_REQUESTS - 200) / (whole_cpu - cpu[few.name]))
        # Per CPU second, as the random games: on a shared machine the wall time mostly says how
        # much of a core the process got (both figures are in the note).
        row.value, row.base = statistics.median(cpu_rates["noughts"]), statistics.median(cpu_rates["floor"])
        mine, floor = statistics.median(rates["noughts"]), statistics.median(rates["floor"])
        row.note = (f"per CPU second, less the same process answering the first 200 requests; {len(rates['floor'])} "
                    "alternating rounds; the replies are the engine's own, every request seeded; "
                    f"by wall time {mine:,.0f}/s against {floor:,.0f}/s ({mine / floor:.2f}×); "
                    f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    except Exception as exc:
        row.note = unavailable(exc)
    return [row]


SECTIONS = (bench_perfect_move, bench_solve3, bench_random_games, bench_solve4, bench_import, bench_budgets,
            bench_memory, bench_first_move, bench_engine)


# --- output ------------------------------------------------------------------------------------


def fmt(kind: str, value: float | None, capped: bool = False) -> str:
    if value is None:
        return "—"
    prefix = "> " if capped else ""
    if kind == "rate":
        return f"{prefix}{value:,.0f}/s"
    if kind == "memory":
        return f"{prefix}{value / 2**20:,.0f} MiB"
    for unit, scale in (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3)):
        if value < 1000 * scale:
            return f"{prefix}{value / scale:.3g} {unit}"
    return f"{prefix}{value:.3g} s"


def fmt_ratio(row: Row) -> str:
    ratio = row.ratio
    if ratio is None or row.capped:
        return "—"
    text = f"{ratio:,.0f}×" if ratio >= 100 else f"{ratio:.3g}×"
    return f"> {text}" if row.base_capped else text


def fmt_target(row: Row) -> str:
    parts = []
    if row.limit is not None:
        parts.append(("≥ " if row.kind == "rate" else "≤ ") + fmt(row.kind, row.limit))
    if row.min_ratio is not None:
        parts.append(f"≥ {row.min_ratio:,.3g}× faster" if row.min_ratio >= 1 else f"≤ {1 / row.min_ratio:.3g}× slower")
    return ", ".join(parts) or "—"


def table(rows: list[Row]) -> str:
    header = ("benchmark", "noughts", "baseline", "baseline figure", "speed-up", "target", "result")
    notes: list[str] = []
    body = []
    section = ""
    for row in rows:
        name = row.name
        if row.note:
            if row.note not in notes:
                notes.append(row.note)
            name += f" [{notes.index(row.note) + 1}]"
        if row.section != section:
            section = row.section
            body.append((f"{section}:", "", "", "", "", "", ""))
        body.append(("  " + name, fmt(row.kind, row.value, row.capped), row.baseline,
                      fmt(row.kind, row.base, row.base_capped), fmt_ratio(row), fmt_target(row), row.status))
    widths = [max(len(line[i]) for line in (header, *body)) for i in range(len(header))]
    right = {1, 3, 4}

    def line(cells: tuple[str, ...]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in pairs)

    out = [line(header), "  ".join("-" * w for w in widths)] + [line(b) for b in body]
    out += [f"[{i}] {note}" for i, note in enumerate(notes, 1)]
    return "\n".join(text.rstrip() for text in out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer repetitions; skip the 4×4 solve and OpenSpiel's MinimaxSolver (CI smoke)")
    parser.add_argument("--json", metavar="FILE", help="also save every figure to FILE as JSON")
    parser.add_argument("--before", metavar="REV",
                        help="also run sections 6 and 7 on the code of git revision REV, as their baseline")
    parser.add_argument("--only", metavar="N,N", help="run only these sections (numbers from 1 to 9)")
    args = parser.parse_args(argv)
    chosen = SECTIONS if not args.only else [SECTIONS[int(n) - 1] for n in args.only.split(",")]
    global BEFORE
    if args.before:
        BEFORE = (args.before, older_source(args.before))

    spiel = baselines.openspiel()
    if spiel is None:
        log(baselines.OPENSPIEL_ERROR + "; OpenSpiel rows will be n/a")
    started = time.perf_counter()
    rows: list[Row] = []
    for section in chosen:
        try:
            rows += section(args.quick, spiel)
        except Exception as exc:  # a bug in one section must not hide the others
            traceback.print_exc()
            rows.append(Row(section.__name__, "section crashed", "time", note=f"{type(exc).__name__}: {exc}"))
    print(f"noughts benchmarks — Python {platform.python_version()}, {platform.machine()}, "
          f"OpenSpiel {baselines.openspiel_version() or 'not installed'}{', --quick' if args.quick else ''}; "
          "medians of repeated runs")
    print(table(rows))
    log(f"done in {time.perf_counter() - started:.0f} s")
    if args.json:
        data = {
            "python": platform.python_version(), "machine": platform.machine(), "quick": args.quick,
            "openspiel": baselines.openspiel_version() or None, "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "rows": [asdict(r) | {"ratio": r.ratio, "status": r.status} for r in rows],
        }
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
