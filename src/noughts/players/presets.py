"""The difficulty presets of the EV3 robot (seed 003): ``easy``, ``medium`` and ``hard``.

* ``easy`` — a random empty cell every move.
* ``medium`` — every move a fair coin (from the caller's ``rng``) chooses between the perfect
  player's move and a random empty cell. The robot does this with RobotC's ``random(1)``,
  which is 0 or 1, and ``openSpots[random(openCounter - 1)]``, uniform over the open cells.
* ``hard`` — always the perfect player's move. (The robot's own hard mode is its minimax,
  available as the ``minimax`` player; both never lose.)

``medium`` and ``hard`` take the perfect player's ``budget`` for each move, and work on any
board it can solve (see :func:`noughts.players.unable`); ``easy`` works on any board.
"""

from __future__ import annotations

import random

from noughts.board import Board
from noughts.budget import Budget
from noughts.players.base import ensure_playable, make_rng
from noughts.players.perfect import PerfectPlayer
from noughts.players.random_player import RandomPlayer

__all__ = ["EasyPlayer", "HardPlayer", "MediumPlayer"]


class EasyPlayer(RandomPlayer):
    """Seed 003's easy mode: any empty cell, uniformly."""

    name = "easy"


class HardPlayer:
    """Seed 003's hard mode: always a best move."""

    name = "hard"

    def __init__(self, rng: random.Random | None = None, *, budget: Budget | None = None) -> None:
        self.rng = make_rng(rng)
        self.perfect = PerfectPlayer(self.rng, budget=budget)

    def candidates(self, board: Board) -> tuple[int, ...]:
        """The cells :meth:`choose` picks among: the perfect player's."""
        return self.perfect.candidates(board)

    def choose(self, board: Board) -> int:
        ensure_playable(board)
        return self.perfect.choose(board)


class MediumPlayer:
    """Seed 003's medium mode: each move, heads the best move, tails a random one."""

    name = "medium"

    def __init__(self, rng: random.Random | None = None, *, budget: Budget | None = None) -> None:
        self.rng = make_rng(rng)
        self.perfect = PerfectPlayer(self.rng, budget=budget)

    def candidates(self, board: Board) -> tuple[int, ...]:
        """The cells :meth:`choose` picks among: any legal move (tails)."""
        ensure_playable(board)
        return board.legal_moves

    def choose(self, board: Board) -> int:
        ensure_playable(board)
        if self.rng.random() < 0.5:
            return self.perfect.choose(board)
        return self.rng.choice(board.legal_moves)
