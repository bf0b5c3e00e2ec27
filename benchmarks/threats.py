"""The strong player's proof-number search over threats on deep positions from games it lost as O.

Each position is X's win by threats (fours and threes), searched with X to move and no budget, as
in docs/strong.md's table: the positions of ``benchmarks/strong.py``'s games (seeded two-ply
openings, then strong at bd6b2f0 as O against ``minimax``, 40,000 / 100,000 positions a move) at
the ply named, after the O move named. Reports the positions searched (one mark placed, or one
cell tested for a three) and the process's CPU seconds, median of ``--repeat`` runs.

Run: ``python benchmarks/threats.py [--quick] [--repeat N] [--only NAME] [--json FILE]`` (``--quick``:
one run each, without the depth-10 search, which alone costs most of the time). ``make bench`` runs
it (about 15 s of CPU); options it does not know, meant for the other benchmarks, are ignored.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from noughts.board import Board
from noughts.budget import Budget
from noughts.players.strong import _State

# name: (the game's moves from the opening on, X first; the depth searched, in attacker moves)
POSITIONS = {
    "game 7, ply 9": ("f8 j6 e9 i5 d10 g7 f10 h4 k7", 7),
    "game 18, ply 9, after g5": ("f7 i6 f6 h5 f5 f4 g4 e6 g7 g5", 7),
    "game 19, ply 9, after f10": ("g10 g6 h11 e8 h10 f7 h5 h9 i10 f10", 7),
    "game 3, ply 7, after i6": ("h7 j9 g6 j7 h6 j8 j6 i6", 7),
    "game 18, ply 9, after e7": ("f7 i6 f6 h5 f5 f4 g4 e6 g7 e7", 7),
    "game 19, ply 9, after d9": ("g10 g6 h11 e8 h10 f7 h5 h9 i10 d9", 7),
    "game 19, ply 7, after h9 (depth 10)": ("g10 g6 h11 e8 h10 f7 h5 h9", 10),
}
DEEP = "game 19, ply 7, after h9 (depth 10)"


def board_of(moves: str) -> Board:
    board = Board(15, 15, 5)
    for name in moves.split():
        board = board.play(board.parse_cell(name))
    return board


def search(moves: str, depth: int) -> tuple[str | None, int, float]:
    """X's first move of a win by threats (None: none), the positions searched and the CPU seconds."""
    board = board_of(moves)
    started = time.process_time()
    state = _State(board, Budget())
    found = state.pn_vct(1, depth)
    return (None if found is None else board.cell_name(found)), state.nodes, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="runs per position, the CPU median reported (default 3)")
    parser.add_argument("--quick", action="store_true", help="one run each, without the depth-10 position")
    parser.add_argument("--only", help="only the positions whose name contains this")
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE-threats.json")
    args, _ = parser.parse_known_args()
    repeat = 1 if args.quick else args.repeat
    print("X's win by threats (proof-number search, X to move, no budget): positions and CPU seconds")
    rows = []
    for name, (moves, depth) in POSITIONS.items():
        if (args.quick and name == DEEP) or (args.only and args.only not in name):
            continue
        runs = [search(moves, depth) for _ in range(repeat)]
        found, nodes, _ = runs[0]
        cpu = statistics.median(seconds for *_, seconds in runs)
        print(f"  {name:<38} depth {depth:>2}: {'win at ' + found if found else 'no win':<10} "
              f"{nodes:>9,} positions, {cpu:6.2f} s CPU ({1e6 * cpu / max(nodes, 1):.1f} µs a position)", flush=True)
        rows.append({"position": name, "depth": depth, "win": found, "positions": nodes, "cpu_seconds": round(cpu, 3)})
    if args.json:
        with open(f"{args.json}-threats.json", "w") as out:
            json.dump({"rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
