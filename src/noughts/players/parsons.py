"""``parsons``: the computer player of Sam D Parsons' Pygame *Noughts and Crosses v3.0* (seed 004).

It is deterministic and only plays 3×3 with 3 in a row. Its own marks count 1 and the
opponent's −7, so a line's sum tells what is on it: 2 is two of its own and a gap, −14 two
of the opponent's and a gap. The first rule that applies decides:

1. An empty board (the board sums to 0): the centre.
2. Exactly one opponent mark and nothing else (the board sums to −7): the centre if it is
   empty, else the bottom-right corner.
3. **Win**: the first line that sums to 2.
4. **Block**: the first line that sums to −14.
5. The first empty corner: top-left, top-right, bottom-left, bottom-right.
6. The first empty cell in reading order.

Lines are scanned rows top to bottom (each left to right), columns left to right (each top to
bottom), the main diagonal top-left to bottom-right, then the anti-diagonal from the *bottom
left* to the top right; the move is the first empty cell of the line in that direction. (A line
summing to 2 or −14 has exactly one empty cell, so on a real board only the line order shows.)
"""

from __future__ import annotations

import random

from noughts.board import Board
from noughts.players.base import CORNERS, ensure_classic_board, ensure_playable, own_and_opponent

__all__ = ["ParsonsPlayer"]

OWN, OPPONENT = 1, -7
CENTRE, BOTTOM_RIGHT = 4, 8
SCAN_LINES = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),  # rows
    (0, 3, 6), (1, 4, 7), (2, 5, 8),  # columns
    (0, 4, 8),  # main diagonal, top-left first
    (6, 4, 2),  # anti-diagonal, bottom-left first
)
WIN_SUM, BLOCK_SUM = 2 * OWN, 2 * OPPONENT


class ParsonsPlayer:
    """Centre first, then win, block, first corner, first empty cell; no randomness."""

    name = "parsons"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng  # unused: the player is deterministic, but every player takes one

    def choose(self, board: Board) -> int:
        ensure_classic_board(board, self.name)
        ensure_playable(board)
        own, opponent = own_and_opponent(board)
        value = [OWN if own >> c & 1 else OPPONENT if opponent >> c & 1 else 0 for c in range(9)]
        total = sum(value)
        if total == 0:  # with 1 and −7 only the empty board sums to 0
            return CENTRE
        if total == OPPONENT:  # ... and only a lone opponent mark to −7
            return CENTRE if value[CENTRE] == 0 else BOTTOM_RIGHT
        for target in (WIN_SUM, BLOCK_SUM):
            for line in SCAN_LINES:
                if sum(value[c] for c in line) == target:
                    return next(c for c in line if value[c] == 0)
        for corner in CORNERS:
            if value[corner] == 0:
                return corner
        return next(c for c in range(9) if value[c] == 0)
