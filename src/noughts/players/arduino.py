"""``arduino``: Nick Harvey's Arduino Uno/Mega noughts and crosses (seed 000).

Rules, in order:

1. **Win** — if a line holds k-1 of its own marks and one empty cell, play that cell.
2. **Block** — otherwise, if a line holds k-1 of the opponent's marks and one empty cell, play it.
3. **Random** — otherwise a random empty cell.

Lines are scanned as the sketch scans them: rows top to bottom, columns left to right, the
main diagonal (↘), then the anti-diagonal (↙, from the top right); the first line found
decides. The same scan works on any board with any k (``geometry.lines`` keeps that order).

Quirks of the original, and what this player does about them:

* ``randomPlay()`` draws ``random(1, squaresLeft)``, which is 1 to ``squaresLeft - 1``, and then
  counts empty squares from 1, so the last empty cell (in reading order) is never chosen by
  chance (unless it is the only one). We choose uniformly among all empty cells, as the issue
  asks; ``ArduinoPlayer(rng, faithful_random=True)`` reproduces the skew.
* In ``checkPossiblities()`` the row scan lacks the ``played == 0`` guard that every other scan
  has, so with two winning rows the Arduino lights both in one turn. One of them already wins,
  so we play only the first one found.
"""

from __future__ import annotations

import random

from noughts.board import Board
from noughts.players.base import ensure_playable, make_rng, own_and_opponent

__all__ = ["ArduinoPlayer"]


class ArduinoPlayer:
    """Win if it can, else block, else a random empty cell."""

    name = "arduino"

    def __init__(self, rng: random.Random | None = None, *, faithful_random: bool = False) -> None:
        self.rng = make_rng(rng)
        self.faithful_random = faithful_random

    def forced_move(self, board: Board) -> int | None:
        """The winning cell, else the blocking cell, from the first line found; ``None`` if neither."""
        ensure_playable(board)
        geometry = board.geometry
        own, opponent = own_and_opponent(board)
        empty = geometry.full & ~(own | opponent)
        needed = board.k - 1
        for marks in (own, opponent):  # every line for a win first, then every line for a block
            for line, mask in zip(geometry.lines, geometry.line_masks, strict=True):
                if (marks & mask).bit_count() == needed and (empty & mask).bit_count() == 1:
                    return next(cell for cell in line if empty >> cell & 1)
        return None

    def candidates(self, board: Board) -> tuple[int, ...]:
        """The cells :meth:`choose` picks among (one cell when it must win or block)."""
        forced = self.forced_move(board)
        if forced is not None:
            return (forced,)
        empty = board.legal_moves
        if self.faithful_random and len(empty) > 1:
            return empty[:-1]  # random(1, n) never reaches n: the last empty cell is skipped
        return empty

    def choose(self, board: Board) -> int:
        candidates = self.candidates(board)
        return candidates[0] if len(candidates) == 1 else self.rng.choice(candidates)
