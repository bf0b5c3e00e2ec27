"""Arena games per second per core, beside a bare loop of random moves, in one run.

    python benchmarks/arena.py [--quick] [--json FILE]

``make bench`` runs it with the same ``BENCH_ARGS`` as ``run.py``: ``--quick`` plays fewer games,
``--json results.json`` writes these figures to ``results-arena.json``; other options are ignored.

Rows (each the median of five runs):

* 3×3 games per CPU second in one process (``jobs=1``), ``random`` v ``arduino`` and ``perfect``
  v ``newell-simon``, played through :func:`noughts.arena.play_game` exactly as the arena plays
  them (players made from the registry with their seeded generators, every move checked), beside
  the peer: random games through the bare ``Board`` API (``rng.choice(board.legal_moves)``);
* the wall and CPU time (workers included) of a 4×4 round robin (``random``, ``arduino``,
  ``minimax`` at 10,000 positions a move) with ``jobs=1`` and with one process per core.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from noughts import Board
from noughts.arena import GameSpec, default_jobs, play_game, run_arena

RUNS = 5


def games_per_cpu_second(play: Callable[[int], None], games: int) -> float:
    """The median over RUNS of ``games`` games per second of this process's CPU time."""
    rates = []
    for _ in range(RUNS):
        started = time.process_time()
        play(games)
        rates.append(games / max(time.process_time() - started, 1e-9))
    return statistics.median(rates)


def arena_games(x: str, o: str) -> Callable[[int], None]:
    def play(games: int) -> None:
        for game in range(games):
            play_game(GameSpec(game, x, o, game), (3, 3, 3), 1)

    return play


def bare_games(games: int) -> None:
    rng = random.Random(1)
    for _ in range(games):
        board = Board()
        while not board.is_over:
            board = board.play(rng.choice(board.legal_moves))


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the arena's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def tournament_seconds(jobs: int, games: int) -> tuple[float, float]:
    """Median wall and CPU seconds (workers included) of a 4×4 round robin over three runs."""
    walls, cpus = [], []
    for _ in range(3):
        started, cpu = time.perf_counter(), cpu_seconds()
        run_arena(["random", "arduino", "minimax"], Board(4, 4), games=games, seed=1, jobs=jobs, nodes=10_000)
        walls.append(time.perf_counter() - started)
        cpus.append(cpu_seconds() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer games")
    parser.add_argument("--json", type=Path, help="also write the figures to FILE-arena.json")
    options, _ = parser.parse_known_args(argv)  # make bench passes run.py's options too
    games = 300 if options.quick else 2_000
    rows: list[dict[str, Any]] = []

    def row(name: str, unit: str, value: float, note: str = "") -> None:
        print(f"[bench arena] {name}: {value:,.2f} {unit}", file=sys.stderr, flush=True)
        rows.append({"name": name, "unit": unit, "value": value, "note": note})

    bare = games_per_cpu_second(bare_games, games)
    row("3×3 bare Board loop, random moves (peer)", "games/CPU s", bare)
    for x, o in (("random", "arduino"), ("perfect", "newell-simon")):
        rate = games_per_cpu_second(arena_games(x, o), games)
        row(f"3×3 arena game, {x} v {o}, one process", "games/CPU s", rate, f"{rate / bare:.2f}× the bare loop")
    cores = default_jobs()
    per_colour = 2 if options.quick else 6
    one, one_cpu = tournament_seconds(1, per_colour)
    many, many_cpu = tournament_seconds(cores, per_colour)
    played = 6 * per_colour
    row(f"4×4 round robin, {played} games, jobs=1", "s wall", one, f"{played / one:,.1f} games/s, {one_cpu:.2f} s CPU")
    row(f"4×4 round robin, {played} games, jobs={cores}", "s wall", many,
        f"speed-up {one / many:.2f}× over jobs=1; {many_cpu:.2f} s CPU with the workers, "
        f"{many_cpu / one_cpu:.2f}× jobs=1's (a shared machine's other work takes cores too)")

    width = max(len(r["name"]) for r in rows)
    print(f"{'arena':<{width}}  {'figure':>12}  unit")
    for r in rows:
        print(f"{r['name']:<{width}}  {r['value']:>12,.2f}  {r['unit']}" + (f"  ({r['note']})" if r["note"] else ""))
    if options.json:
        path = options.json.with_name(f"{options.json.stem}-arena{options.json.suffix or '.json'}")
        path.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
