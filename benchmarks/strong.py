"""The strong player on 15×15 with five in a row against minimax and arduino: win rates and time per move.

``noughts arena`` starts every game from the empty board, so two deterministic players would play
the same game every time. Here each game starts from an opening near the centre, so games differ;
then the two players alternate. By default (``--opening 1``) the opening is X's first mark alone, on
each of the 25 cells within two of the centre in turn (game n on the (n mod 25)-th): every move after
it is the players' own, as in an arena game. ``--opening 0`` plays gomoku's usual openings instead,
O's first mark next to X's: the 200 of them (25 cells, 8 neighbours) in a fixed shuffled order, game
n on the (n mod 200)-th, so any run of games is a spread of them. With ``--opening N`` for N ≥ 2 the
first N marks are random there (seeded by the game's number), O's too: a handicap for the side
playing O, whose first mark may land four cells from X's. Every pairing is played with strong as X and as O.

Budgets: ``--nodes N`` gives strong N positions a move and ``--their-nodes M`` the opponent M
(default: each player's own default); ``--seconds S`` gives both sides S seconds a move (0: no
clock, so the games do not depend on the machine). Run: ``python benchmarks/strong.py [--quick]
[--games N] [--jobs J] [--seconds S] [--nodes N] [--their-nodes M] [--each] [--json FILE]`` (``make bench``
runs it; options it does not know, meant for the other benchmarks, are ignored).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from noughts.board import Board
from noughts.budget import Budget
from noughts.players import get
from noughts.players.minimax import DEFAULT_MAX_NODES as MINIMAX_NODES
from noughts.players.strong import DEFAULT_MAX_NODES as STRONG_NODES

NEXT_TO = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
NEXT_TO_ORDER = random.Random(0).sample(range(25 * len(NEXT_TO)), 25 * len(NEXT_TO))


def opening(board: Board, rng: random.Random, plies: int, number: int = 0) -> Board:
    """Game ``number``'s opening: with one ply, X's mark on each cell within two of the centre in turn
    (game n on the (n mod 25)-th); with ``plies`` 0, X's mark there and O's next to it (the 200 such
    openings in a fixed shuffled order, game n on the (n mod 200)-th); with more, ``plies`` random marks
    there, O's too."""
    centre_row, centre_col = board.rows // 2, board.cols // 2
    near = [r * board.cols + c for r in range(centre_row - 2, centre_row + 3)
            for c in range(centre_col - 2, centre_col + 3)]
    if plies == 0:
        which = NEXT_TO_ORDER[number % len(NEXT_TO_ORDER)]
        (row_step, col_step), first = NEXT_TO[which // len(near)], near[which % len(near)]
        return board.play(first).play(first + row_step * board.cols + col_step)
    if plies == 1:
        return board.play(near[number % len(near)])
    for _ in range(plies):
        board = board.play(rng.choice([c for c in near if board[c] is None]))
    return board


def game(opponent: str, strong_is_x: bool, seed: int, budgets: tuple[Budget, Budget], plies: int,
         size: int = 15, k: int = 5) -> tuple[str, list[float], list[float], list[str], list[float]]:
    """One game: strong's result ("win", "loss", "draw"), its and the opponent's wall seconds per move,
    the moves, and strong's CPU seconds per move (the process's own: what a quiet machine would take)."""
    rng = random.Random(seed)
    board = opening(Board(size, size, k), rng, plies, seed)
    strong = get("strong", random.Random(seed), budget=budgets[0])
    other = get(opponent, random.Random(seed + 1), budget=budgets[1])
    x, o = (strong, other) if strong_is_x else (other, strong)
    mine: list[float] = []
    theirs: list[float] = []
    cpu: list[float] = []
    # the opening's marks in an order that replays it (X, O, X, ...); a mark's own order does not matter
    by_side = [[board.cell_name(c) for c in range(board.size) if board[c] == mark] for mark in "XO"]
    moves = [name for pair in zip(*by_side, strict=False) for name in pair] + by_side[0][len(by_side[1]):]
    while not board.is_over:
        player = x if board.ply % 2 == 0 else o
        started, started_cpu = time.perf_counter(), time.process_time()
        cell = player.choose(board)
        (mine if player is strong else theirs).append(time.perf_counter() - started)
        if player is strong:
            cpu.append(time.process_time() - started_cpu)
        moves.append(board.cell_name(cell))
        board = board.play(cell)
    if board.winner is None:
        return "draw", mine, theirs, moves, cpu
    return ("win" if (board.winner == "X") == strong_is_x else "loss"), mine, theirs, moves, cpu


def _play(job: tuple[str, bool, int, tuple[Budget, Budget], int]
          ) -> tuple[str, list[float], list[float], list[str], list[float]]:
    return game(*job)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=10, help="games per opponent and colour (default 10)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per move, both sides (default 1; 0: none)")
    parser.add_argument("--nodes", type=int, default=STRONG_NODES,
                        help=f"strong's positions per move (default {STRONG_NODES:,})")
    parser.add_argument("--their-nodes", type=int, default=None,
                        help=f"the opponent's positions per move (default its own: {MINIMAX_NODES:,} for minimax)")
    parser.add_argument("--opening", type=int, default=1,
                        help="opening plies (default 1: X's first mark, on each cell near the centre in turn; "
                             "0: X's mark and O's next to it, 200 openings; 2 or more: random marks, O's too)")
    parser.add_argument("--opponents", default="minimax,arduino")
    parser.add_argument("--colours", default="XO", help="strong's colours (default XO: both)")
    parser.add_argument("--first-game", type=int, default=0, help="the first game's number (its seed)")
    parser.add_argument("--jobs", type=int, default=1, help="games played at once (default 1)")
    parser.add_argument("--quick", action="store_true", help="2 games per opponent and colour")
    parser.add_argument("--verbose", action="store_true", help="print every lost or drawn game's moves")
    parser.add_argument("--each", action="store_true",
                        help="print every game's result as it ends (long runs on a busy machine)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE-strong.json")
    args, _ = parser.parse_known_args()
    if args.opening < 0:
        parser.error("--opening must be 0 or more")
    games = 2 if args.quick else args.games
    seconds = args.seconds or None
    their_nodes = MINIMAX_NODES if args.their_nodes is None else args.their_nodes
    budgets = (Budget(args.nodes, seconds), Budget(their_nodes, seconds))
    clock = "no clock" if seconds is None else f"{seconds:g} s"
    opening_words = {0: "openings: X's first mark near the centre and O's next to it",
                     1: "openings: X's first mark near the centre"}.get(args.opening,
                                                                         f"{args.opening}-ply random openings")
    print(f"strong on 15×15, five in a row: {games} games per opponent and colour, {opening_words}; "
          f"strong {args.nodes:,} positions, the opponent {their_nodes:,}, {clock} per move")
    rows = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for opponent in args.opponents.split(","):
            for strong_is_x in [colour == "X" for colour in args.colours.upper()]:
                seeds = range(args.first_game, args.first_game + games)
                jobs = [(opponent, strong_is_x, seed, budgets, args.opening) for seed in seeds]
                played = []
                for seed, outcome in zip(seeds, pool.map(_play, jobs) if args.jobs > 1 else map(_play, jobs),
                                         strict=True):
                    played.append(outcome)
                    if args.each:
                        cpu_times = outcome[4]
                        print(f"    game {seed}: {outcome[0]} in {len(outcome[3])} plies, strong's CPU median "
                              f"{1000 * statistics.median(cpu_times):.0f} ms, max {1000 * max(cpu_times):.0f}",
                              flush=True)
                results = [result for result, *_ in played]
                times = [t for _, mine, *_ in played for t in mine]
                their_times = [t for _, _, theirs, *_ in played for t in theirs]
                cpu = [t for *_, cpu_times in played for t in cpu_times]
                wins = results.count("win")
                colour = "X (first)" if strong_is_x else "O (second)"
                median_ms = 1000 * statistics.median(times)
                p95_ms = 1000 * statistics.quantiles(times, n=20)[-1] if len(times) > 1 else median_ms
                their_ms = 1000 * statistics.median(their_times)
                print(f"  vs {opponent:<8} as {colour:<10}: {wins}/{games} won ({100 * wins / games:.0f} %), "
                      f"{results.count('loss')} lost, {results.count('draw')} drawn; strong's median "
                      f"{median_ms:.0f} ms per move (95th percentile {p95_ms:.0f}, max {1000 * max(times):.0f}), "
                      f"{opponent}'s {their_ms:.0f} ms; strong's CPU median {1000 * statistics.median(cpu):.0f} ms, "
                      f"max {1000 * max(cpu):.0f}",
                      flush=True)
                if args.verbose:
                    for seed, (result, _, _, moves, _) in enumerate(played, args.first_game):
                        if result != "win":
                            print(f"    game {seed}: {result}: {' '.join(moves)}")
                rows.append({"opponent": opponent, "strong": "X" if strong_is_x else "O", "games": games,
                             "won": wins, "lost": results.count("loss"), "drawn": results.count("draw"),
                             "median_ms_per_move": round(median_ms, 1), "p95_ms_per_move": round(p95_ms, 1),
                             "max_ms_per_move": round(1000 * max(times), 1),
                             "opponent_median_ms_per_move": round(their_ms, 1), "moves": len(times),
                             "cpu_median_ms_per_move": round(1000 * statistics.median(cpu), 1),
                             "cpu_max_ms_per_move": round(1000 * max(cpu), 1)})
    if args.json:
        with open(f"{args.json}-strong.json", "w") as out:
            json.dump({"seconds_per_move": seconds, "nodes_per_move": args.nodes,
                       "opponent_nodes_per_move": their_nodes, "opening_plies": args.opening,
                       "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
