"""The strong player on 15×15 with five in a row against minimax and arduino: win rates and time per move.

Each game starts from a short random opening near the centre (two plies by default: one mark each),
so games differ; then the two players alternate, each with the same budget per move. Every pairing
is played with strong as X and as O. Run: ``python benchmarks/strong.py [--quick] [--games N] [--seconds S]
[--json FILE]`` (``make bench`` runs it; options it does not know, meant for the other benchmarks, are ignored).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from noughts.board import Board
from noughts.budget import Budget
from noughts.players import get


def opening(board: Board, rng: random.Random, plies: int) -> Board:
    """``plies`` random marks within two cells of the centre."""
    centre_row, centre_col = board.rows // 2, board.cols // 2
    near = [r * board.cols + c for r in range(centre_row - 2, centre_row + 3)
            for c in range(centre_col - 2, centre_col + 3)]
    for _ in range(plies):
        board = board.play(rng.choice([c for c in near if board[c] is None]))
    return board


def game(opponent: str, strong_is_x: bool, seed: int, budget: Budget, plies: int,
         times: list[float], size: int = 15, k: int = 5) -> str:
    """Plays one game; returns "win", "loss" or "draw" for strong."""
    rng = random.Random(seed)
    board = opening(Board(size, size, k), rng, plies)
    strong = get("strong", random.Random(seed), budget=budget)
    other = get(opponent, random.Random(seed + 1), budget=budget)
    x, o = (strong, other) if strong_is_x else (other, strong)
    while not board.is_over:
        player = x if board.ply % 2 == 0 else o
        started = time.perf_counter()
        cell = player.choose(board)
        if player is strong:
            times.append(time.perf_counter() - started)
        board = board.play(cell)
    if board.winner is None:
        return "draw"
    return "win" if (board.winner == "X") == strong_is_x else "loss"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=10, help="games per opponent and colour (default 10)")
    parser.add_argument("--seconds", type=float, default=0.3, help="seconds per move, both sides (default 0.3)")
    parser.add_argument("--nodes", type=int, default=None, help="positions per move, both sides (default: none)")
    parser.add_argument("--opening", type=int, default=2, help="random opening plies (default 2)")
    parser.add_argument("--opponents", default="minimax,arduino")
    parser.add_argument("--quick", action="store_true", help="2 games per opponent and colour")
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE-strong.json")
    args, _ = parser.parse_known_args()
    games = 2 if args.quick else args.games
    budget = Budget(args.nodes, args.seconds)
    print(f"strong on 15×15, five in a row: {games} games per opponent and colour, "
          f"{args.seconds:g} s{'' if args.nodes is None else f' / {args.nodes:,} positions'} per move "
          f"for both sides, {args.opening}-ply random openings")
    rows = []
    for opponent in args.opponents.split(","):
        for strong_is_x in (True, False):
            times: list[float] = []
            results = [game(opponent, strong_is_x, seed, budget, args.opening, times) for seed in range(games)]
            wins = results.count("win")
            colour = "X (first)" if strong_is_x else "O (second)"
            median_ms = 1000 * statistics.median(times)
            print(f"  vs {opponent:<8} as {colour:<10}: {wins}/{games} won ({100 * wins / games:.0f} %), "
                  f"{results.count('loss')} lost, {results.count('draw')} drawn; "
                  f"median {median_ms:.0f} ms per move (max {1000 * max(times):.0f})", flush=True)
            rows.append({"opponent": opponent, "strong": "X" if strong_is_x else "O", "games": games, "won": wins,
                         "lost": results.count("loss"), "drawn": results.count("draw"),
                         "median_ms_per_move": round(median_ms, 1), "moves": len(times)})
    if args.json:
        with open(f"{args.json}-strong.json", "w") as out:
            json.dump({"seconds_per_move": args.seconds, "nodes_per_move": args.nodes, "opening_plies": args.opening,
                       "rows": rows}, out, indent=1)

if __name__ == "__main__":
    main()
