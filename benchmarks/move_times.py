"""CPU seconds per move of the players that search, on every board shape a front end offers.

One row per shape and player: the players :func:`noughts.players.able` offers for the shape's
empty board, among medium, hard, perfect, strong and minimax (the others answer at once). Each
is asked for a move in the same positions: the empty board, the shape's fixed positions (7×7
with five: the one of issue 28), and positions after seeded random play; in each, the first
move is cold (the solver's tables cleared, as in a new process) and ``--moves`` more follow in
self-play (warm, as in a game). A row gives the median and the most CPU seconds a move took (the
process's own, so a busy machine does not inflate them) beside the limit the player is held to:
hard :data:`~noughts.players.presets.DEFAULT_SECONDS` a move; strong and minimax their own
positions and seconds; perfect and medium the time their choice among equal moves stops at
(:data:`~noughts.players.perfect.MOVE_SECONDS`; the value itself may take up to their budget,
30 s). A row whose slowest move is over the limit by more than 0.1 s is marked OVER, and one
where the player gave up (perfect on a position it cannot prove) says so.

Run: ``python benchmarks/move_times.py [--quick] [--positions N] [--moves M] [--shapes 7x7k5,...]
[--players hard,...] [--jobs J] [--before REV] [--json FILE]``. ``--before REV`` also plays every
row on git revision REV's code, each row in a process of its own stopped after ``--cap`` seconds.
``make bench`` runs it (about two minutes on two cores); options it does not know, meant for the
other benchmarks, are ignored.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from revisions import older_source

HERE = Path(__file__).resolve().parent
SHAPES = ("3x3k3", "4x4k3", "4x4k4", "5x5k4", "6x6k4", "7x7k5", "9x9k5", "15x15k5")
PLAYERS = ("medium", "hard", "perfect", "strong", "minimax")
FIXED = {"7x7k5": ("......./......./..O.X../..OXX../......./......./.......",)}  # issue 28's position
OVERRUN = 0.1  # seconds a move may run past its limit before the row is marked


def use_source(src: Path, wall: bool) -> None:
    """Import noughts from ``src``; unless ``wall``, every budget counts the process's CPU seconds."""
    sys.path.insert(0, str(src))
    if not wall:
        # on a busy machine the wall clock runs out before a quiet machine's would: this way the
        # budgets spend what the rows report
        from noughts.budget import Budget

        for make in (Budget.__init__, Budget.until.__func__):  # type: ignore[attr-defined]
            defaults = make.__kwdefaults__
            assert defaults is not None
            defaults["clock"] = time.process_time


def limits() -> dict[str, tuple[str, float]]:
    """Each player's limit as people read it, and its seconds."""
    from noughts.players import minimax, perfect, presets, strong

    hard_seconds = getattr(presets, "DEFAULT_SECONDS", None)  # older code: no limit of its own
    choice_seconds = getattr(perfect, "MOVE_SECONDS", None)
    perfect_words = (f"choice to {choice_seconds:g} s; value {perfect.DEFAULT_MAX_NODES:,} pos., "
                     f"{perfect.DEFAULT_TIME_LIMIT:g} s" if choice_seconds is not None else
                     f"{perfect.DEFAULT_MAX_NODES:,} pos., {perfect.DEFAULT_TIME_LIMIT:g} s")
    return {
        "hard": (f"{hard_seconds:g} s" if hard_seconds is not None else "none", hard_seconds or 1.0),
        "perfect": (perfect_words, choice_seconds or 1.0),
        "medium": (f"hard's, {hard_seconds:g} s" if hard_seconds is not None else perfect_words, hard_seconds or 1.0),
        "strong": (f"{strong.DEFAULT_MAX_NODES:,} pos., {strong.DEFAULT_MAX_SECONDS:g} s", strong.DEFAULT_MAX_SECONDS),
        "minimax": (f"{minimax.DEFAULT_MAX_NODES:,} pos., {minimax.DEFAULT_MAX_SECONDS:g} s",
                    minimax.DEFAULT_MAX_SECONDS),
    }


def positions(shape: str, count: int) -> list[str]:
    """The empty board, the shape's fixed positions, then random play's (seeded by the shape), ``count`` in all."""
    from noughts.board import Board, Geometry

    geometry = Geometry.parse(shape)
    empty = Board(geometry.rows, geometry.cols, geometry.k)
    found = [str(empty), *FIXED.get(shape, ())]
    rng = random.Random(shape)
    while len(found) < count:
        board = empty
        for _ in range(rng.randrange(1, max(2, geometry.size // 2))):
            board = board.play(rng.choice(board.legal_moves))
            if board.is_over:
                break
        if not board.is_over:
            found.append(str(board))
    return found[:count]


def row(shape: str, player_name: str, position_count: int, moves: int) -> dict[str, Any]:
    """Time ``player_name``'s moves on ``shape``: each position cold, then ``moves`` - 1 more in self-play."""
    from noughts import players, solver
    from noughts.board import Board, Geometry
    from noughts.errors import UnsupportedBoardError

    k = Geometry.parse(shape).k
    seconds: list[float] = []
    gave_up = 0
    for number, text in enumerate(positions(shape, position_count)):
        board = Board.parse(text, k=k)
        solver.clear_cache()
        player = players.get(player_name, random.Random(number))
        for _ in range(moves):
            if board.is_over:
                break
            started = time.process_time()
            try:
                cell = player.choose(board)
            except UnsupportedBoardError:
                seconds.append(time.process_time() - started)
                gave_up += 1
                break
            seconds.append(time.process_time() - started)
            board = board.play(cell)
    return {"shape": shape, "player": player_name, "moves": len(seconds), "gave_up": gave_up,
            "median": statistics.median(seconds), "max": max(seconds)}


def _row(job: tuple[str, str, int, int]) -> dict[str, Any]:
    return row(*job)


def before_row(src: Path, shape: str, player_name: str, position_count: int, moves: int,
               cap: float, wall: bool) -> dict[str, Any] | None:
    """The same row on the code in ``src``, in a process of its own; ``None`` if it took over ``cap`` seconds
    or failed (its error goes to stderr)."""
    command = [sys.executable, str(Path(__file__).resolve()), "--src", str(src), "--shapes", shape,
               *(["--wall"] if wall else []),
               "--players", player_name, "--positions", str(position_count), "--moves", str(moves),
               "--jobs", "1", "--rows-only"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=cap, check=True)
    except subprocess.TimeoutExpired:
        return None
    except subprocess.CalledProcessError as error:
        print(f"{shape} {player_name} on the older code failed:\n{error.stderr}", file=sys.stderr)
        return None
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])[0]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="2 positions, 2 moves from each")
    parser.add_argument("--positions", type=int, default=4, help="positions per shape (default 4)")
    parser.add_argument("--moves", type=int, default=3, help="moves from each position, the first cold (default 3)")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="board shapes, like 7x7k5 (default: all)")
    parser.add_argument("--players", default=",".join(PLAYERS), help="players (default: the five that search)")
    parser.add_argument("--jobs", type=int, default=2, help="rows measured at once (default 2)")
    parser.add_argument("--before", metavar="REV", help="also play every row on git revision REV's code")
    parser.add_argument("--cap", type=float, default=300.0, help="seconds a row may take on --before's code")
    parser.add_argument("--wall", action="store_true", help="budgets on the wall clock, as in play (default: CPU)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE-move-times.json")
    parser.add_argument("--src", type=Path, default=HERE.parent / "src", help=argparse.SUPPRESS)
    parser.add_argument("--rows-only", action="store_true", help=argparse.SUPPRESS)  # --before's child
    args, _ = parser.parse_known_args()
    use_source(args.src, args.wall)
    from noughts.board import Board, Geometry
    from noughts.players import able

    position_count, moves = (2, 2) if args.quick else (args.positions, args.moves)
    wanted = args.players.split(",")
    jobs = []
    for shape in args.shapes.split(","):
        g = Geometry.parse(shape)
        offered = set(able(Board(g.rows, g.cols, g.k)))
        jobs += [(shape, name, position_count, moves) for name in wanted if name in offered]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs, initializer=use_source, initargs=(args.src, args.wall)) as pool:
            rows = list(pool.map(_row, jobs))
    else:
        rows = [_row(job) for job in jobs]
    if args.rows_only:
        print(json.dumps(rows))
        return
    if args.before:
        older = older_source(args.before)
        with ThreadPoolExecutor(args.jobs) as threads:  # each row is a process of its own
            befores = threads.map(lambda found: before_row(older, found["shape"], found["player"], position_count,
                                                           moves, args.cap, args.wall), rows)
            for found, before in zip(rows, befores, strict=True):
                found["before"] = before
    limit_of = limits()
    print(f"CPU seconds per move: {position_count} positions a shape, {moves} moves from each (the first cold)")
    header = f"{'shape':<8} {'player':<8} {'moves':>5} {'median':>7} {'max':>7}  {'limit':<44}"
    if args.before:
        header += f" {'before: median':>14} {'max':>7}"
    print(header)
    for found in rows:
        words, seconds = limit_of[found["player"]]
        over = found["max"] > seconds + OVERRUN
        line = (f"{found['shape']:<8} {found['player']:<8} {found['moves']:>5} {found['median']:>7.3f} "
                f"{found['max']:>7.3f}  {words:<44}")
        if args.before:
            old = found["before"]
            line += f" {old['median']:>14.3f} {old['max']:>7.3f}" if old else f" {'n/a':>14} {'':>7}"
        notes = (["OVER"] if over else []) + ([f"gave up {found['gave_up']}"] if found["gave_up"] else [])
        if args.before and (not found["before"] or found["before"]["max"] > seconds + OVERRUN):
            notes.append("before: OVER" if found["before"] else f"before: over {args.cap:g} s or failed")
        found["limit_seconds"], found["over"] = seconds, over
        print(line + ("  " + ", ".join(notes) if notes else ""), flush=True)
    if args.json:
        with open(f"{args.json}-move-times.json", "w") as out:
            json.dump({"positions": position_count, "moves": moves, "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
