"""The difficulty presets of the EV3 robot (seed 003): ``easy``, ``medium`` and ``hard``.

* ``easy`` — a random empty cell every move.
* ``medium`` — every move a fair coin (from the caller's ``rng``) chooses between the perfect
  player's move and a random empty cell. The robot does this with RobotC's ``random(1)``,
  which is 0 or 1, and ``openSpots[random(openCounter - 1)]``, uniform over the open cells.
* ``hard`` — the perfect player's move wherever the solver can prove the position within the
  probe's budget (:data:`noughts.players.PROBE_NODES`, :data:`~noughts.players.PROBE_SECONDS`),
  so on 3×3 and the boards it solves it never loses; elsewhere (15×15 with five, say) the
  ``strong`` player's move. (The robot's own hard mode is its minimax, available as the
  ``minimax`` player; both never lose on 3×3.)

``medium`` takes the perfect player's ``budget`` for each move and works on any board it can
solve (see :func:`noughts.players.unable`); ``hard`` and ``easy`` work on any board.
"""

from __future__ import annotations

import contextlib
import random

from noughts.board import Board
from noughts.budget import Budget
from noughts.errors import UnsupportedBoardError
from noughts.players.base import ensure_playable, make_rng
from noughts.players.perfect import PerfectPlayer
from noughts.players.random_player import RandomPlayer
from noughts.players.strong import StrongPlayer

__all__ = ["EasyPlayer", "HardPlayer", "MediumPlayer"]


class EasyPlayer(RandomPlayer):
    """Seed 003's easy mode: any empty cell, uniformly."""

    name = "easy"


class HardPlayer:
    """Seed 003's hard mode: a best move where the solver can prove one, else the strong player's move.

    Each move first asks whether the solver decides the position within the probe's budget
    (the verdict :func:`noughts.players.unable` keeps, so a game's first position costs nothing
    more); when it does not, the strong player moves. The solver is not asked again until a
    quarter of the empty cells have been filled since it last gave up, so a big board pays
    for a probe only a few times a game. With a ``budget``, the probe gets at most half of
    each move's budget and the strong player the rest.
    """

    name = "hard"

    def __init__(self, rng: random.Random | None = None, *, budget: Budget | None = None) -> None:
        self.rng = make_rng(rng)
        self.budget = budget
        self.perfect = PerfectPlayer(self.rng, budget=budget)
        self.strong = StrongPlayer(self.rng, budget=budget)
        self._gave_up: dict[tuple[int, int, int], int] = {}  # shape -> empty cells when the probe last failed
        self.last_player = ""  # which player made the last move: "perfect" or "strong"

    def candidates(self, board: Board) -> tuple[int, ...]:
        """The cells :meth:`choose` picks among: the perfect player's, or the strong player's."""
        ensure_playable(board)
        budget = self.budget.renewed() if self.budget is not None else None
        if self._provable(board, budget):
            with contextlib.suppress(UnsupportedBoardError):  # the value was proved, but not the moves
                return self.perfect.candidates(board)
        return self.strong.candidates(board) if budget is None else self.strong._candidates(board, budget)

    def choose(self, board: Board) -> int:
        ensure_playable(board)
        budget = self.budget.renewed() if self.budget is not None else None
        if self._provable(board, budget):
            self.last_player = "perfect"
            try:
                return self.perfect.choose(board)
            except UnsupportedBoardError:  # the value was proved, but not which moves keep it
                pass
        self.last_player = "strong"
        return self.strong.choose(board) if budget is None else self.strong.choose_within(board, budget)

    def _provable(self, board: Board, budget: Budget | None) -> bool:
        """Whether the solver decides ``board`` within the probe's budget (half of ``budget`` at most)."""
        from noughts import players

        if (board.rows, board.cols, board.k) == (3, 3, 3):
            return True
        empty = board.size - board.ply
        failed_at = self._gave_up.get(board.geometry.shape)
        if failed_at is not None and empty > failed_at * 3 // 4:
            return False
        probe = None
        if budget is not None:
            nodes, seconds = budget.nodes_left(), budget.seconds_left()
            probe = budget.limited(nodes=min(players.PROBE_NODES, nodes // 2) if nodes is not None else
                                   players.PROBE_NODES,
                                   seconds=min(players.PROBE_SECONDS, seconds / 2) if seconds is not None else
                                   players.PROBE_SECONDS)
        provable = players._solvable(board, probe)
        if budget is not None and probe is not None:
            budget.spent += probe.spent
        if not provable:
            self._gave_up[board.geometry.shape] = empty
        return provable


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
