"""Board.playout: random games must be distributed exactly like playing random legal moves."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from functools import cache

import pytest

from noughts import Board

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


@cache
def outcome_odds(cells: str) -> dict[str, Fraction]:
    """Exact chances of each result when both sides play uniformly at random (string board)."""
    for a, b, c in LINES:
        if cells[a] != "." and cells[a] == cells[b] == cells[c]:
            return {cells[a]: Fraction(1)}
    empty = [i for i, mark in enumerate(cells) if mark == "."]
    if not empty:
        return {"draw": Fraction(1)}
    mark = "X" if cells.count("X") == cells.count("O") else "O"
    odds: dict[str, Fraction] = {}
    for i in empty:
        for result, p in outcome_odds(cells[:i] + mark + cells[i + 1:]).items():
            odds[result] = odds.get(result, Fraction(0)) + p / len(empty)
    return odds


@pytest.mark.parametrize("position", [".........", "....X....", "X...O...X", "XO..X..O."])
def test_playout_results_follow_the_exact_random_game_odds(position: str) -> None:
    board = Board.parse(position)
    rng = random.Random(2024)
    games = 20_000
    counts = {"X": 0, "O": 0, "draw": 0}
    for _ in range(games):
        final = board.playout(rng)
        counts[final.winner or "draw"] += 1
    for result, p in outcome_odds(position).items():
        sigma = math.sqrt(float(p * (1 - p)) / games)
        assert abs(counts[result] / games - float(p)) <= 5 * sigma + 1e-9, (result, counts, p)


@pytest.mark.parametrize("shape", [(3, 3, 3), (4, 4, 4), (3, 5, 3), (6, 7, 4)])
def test_playout_ends_in_a_position_reachable_from_the_start(shape: tuple[int, int, int]) -> None:
    rng = random.Random(5)
    start = Board(*shape).play(0)
    for _ in range(300):
        final = start.playout(rng)
        assert final.is_over
        assert final.x & start.x == start.x and final.o & start.o == start.o
        # The final position is exactly what the text form describes: same winner and line.
        again = Board.parse(str(final), k=shape[2])
        assert (again.winner, again.winning_line, again.is_draw) == (final.winner, final.winning_line, final.is_draw)


def test_playout_is_reproducible_and_leaves_finished_games_alone() -> None:
    assert Board().playout(random.Random(9)) == Board().playout(random.Random(9))
    won = Board.parse("XXX/OO./...")
    assert won.playout(random.Random(1)) is won
