"""``random``: a uniformly random legal move (seed 003's *easy* mode).

Rules: every empty cell is equally likely. Works on any board.
"""

from __future__ import annotations

import random

from noughts.board import Board
from noughts.players.base import ensure_playable, make_rng

__all__ = ["RandomPlayer"]


class RandomPlayer:
    """Plays any empty cell, each with the same chance."""

    name = "random"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = make_rng(rng)

    def candidates(self, board: Board) -> tuple[int, ...]:
        """The cells :meth:`choose` picks among: every legal move."""
        ensure_playable(board)
        return board.legal_moves

    def choose(self, board: Board) -> int:
        return self.rng.choice(self.candidates(board))
