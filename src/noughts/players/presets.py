"""The difficulty presets of the EV3 robot (seed 003): ``easy``, ``medium`` and ``hard``.

* ``easy`` — a random empty cell every move.
* ``medium`` — every move a fair coin (from the caller's ``rng``) chooses between the perfect
  player's move and a random empty cell. The robot does this with RobotC's ``random(1)``,
  which is 0 or 1, and ``openSpots[random(openCounter - 1)]``, uniform over the open cells.
* ``hard`` — a move proved to keep the position's value wherever the solver proves that value
  within the probe's budget (:data:`noughts.players.PROBE_NODES`,
  :data:`~noughts.players.PROBE_SECONDS`), so on 3×3 and the boards it solves it never loses;
  elsewhere (15×15 with five, say) the ``strong`` player's move. All of it within
  :data:`DEFAULT_SECONDS` a move. (The robot's own hard mode is its minimax, available as the
  ``minimax`` player; both never lose on 3×3.)

``medium`` takes hard's ``budget`` for each move and is offered on any board the solver can
solve (see :func:`noughts.players.unable`); ``hard`` and ``easy`` work on any board.
"""

from __future__ import annotations

import random
from typing import TypeVar

from noughts.board import Board
from noughts.budget import Budget
from noughts.errors import BudgetExceeded
from noughts.players.base import ensure_playable, make_rng
from noughts.players.perfect import PerfectPlayer
from noughts.players.random_player import RandomPlayer
from noughts.players.strong import DEFAULT_MAX_NODES as STRONG_NODES
from noughts.players.strong import StrongPlayer

__all__ = ["DEFAULT_SECONDS", "EasyPlayer", "HardPlayer", "MediumPlayer"]

DEFAULT_SECONDS = 1.0
"""Seconds a hard move may take by default: the probe, the choice among proved moves, the strong player."""

_Limit = TypeVar("_Limit", int, float)


class EasyPlayer(RandomPlayer):
    """Seed 003's easy mode: any empty cell, uniformly."""

    name = "easy"


class HardPlayer:
    """Seed 003's hard mode: a best move where the solver can prove one, else the strong player's move.

    Each move first asks whether the solver proves the position's value within the probe's
    limits (:data:`noughts.players.PROBE_NODES`, at most half of the move's time); when it does,
    the moves proved to keep that value within :func:`~noughts.players.perfect.choice_budget`
    (:func:`~noughts.players.perfect.best_proven`: the perfect player's own choice when every
    move could be tested, else the ones proved so far), and when none is, the strong player
    moves on what is left. The solver is not asked again until a quarter of the empty cells
    have been filled since it last gave up, so a big board pays for a probe only a few times a
    game. A move takes at most :data:`DEFAULT_SECONDS`, or what ``budget`` allows.
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
        """The cells :meth:`choose` picks among: the proved best ones, or the strong player's."""
        ensure_playable(board)
        if (board.rows, board.cols, board.k) == (3, 3, 3):
            return self.perfect.candidates(board)
        budget = self._move_budget()
        cells = self._proved(board, budget)
        return cells or self.strong._candidates(board, self._strong_budget(budget))

    def choose(self, board: Board) -> int:
        ensure_playable(board)
        self.last_player = "perfect"
        if (board.rows, board.cols, board.k) == (3, 3, 3):
            return self.perfect.choose(board)  # every 3×3 position's best moves are in a table
        budget = self._move_budget()
        cells = self._proved(board, budget)
        if cells:
            return cells[0] if len(cells) == 1 else cells[self.rng.randrange(len(cells))]
        self.last_player = "strong"
        return self.strong.choose_within(board, self._strong_budget(budget))

    def _move_budget(self) -> Budget:
        return self.budget.renewed() if self.budget is not None else Budget(seconds=DEFAULT_SECONDS)

    def _strong_budget(self, budget: Budget) -> Budget:
        """What is left of the move for the strong player: within its own positions by default."""
        return budget if self.budget is not None else budget.limited(nodes=STRONG_NODES)

    def _proved(self, board: Board, budget: Budget) -> tuple[int, ...]:
        """The best moves proved on ``board`` within ``budget`` (``()``: none, or no value proved)."""
        from noughts.players.perfect import best_proven, choice_budget

        value = self._probe(board, budget)
        if value is None:
            return ()
        choice = choice_budget(board, budget)
        try:
            return best_proven(board, value, choice)
        finally:
            budget.spent += choice.spent

    def _probe(self, board: Board, budget: Budget) -> int | None:
        """The value of ``board`` if the solver proves it within the probe's limits (half of
        ``budget``'s time, and of its positions, at most), else ``None``."""
        from noughts import players, solver

        empty = board.size - board.ply
        failed_at = self._gave_up.get(board.geometry.shape)
        if failed_at is not None and empty > failed_at * 3 // 4:
            return None
        if players._verdicts.get((board.geometry.shape, board.key)) is False:
            value = None  # unable() has just probed this position and given up
        else:
            nodes, seconds = budget.nodes_left(), budget.seconds_left()
            probe = budget.limited(nodes=_at_most(players.PROBE_NODES, None if nodes is None else nodes // 2),
                                   seconds=_at_most(players.PROBE_SECONDS, None if seconds is None else seconds / 2))
            try:
                value = solver.outcome(board, budget=probe, length_budget=Budget(nodes=0)).value
            except BudgetExceeded:
                value = None
            finally:
                budget.spent += probe.spent
        if value is None:
            self._gave_up[board.geometry.shape] = empty
        return value


def _at_most(limit: _Limit | None, share: _Limit | None) -> _Limit | None:
    """The smaller of two limits, either of which may be none."""
    return share if limit is None else limit if share is None else min(limit, share)


class MediumPlayer:
    """Seed 003's medium mode: each move, heads the best move, tails a random one.

    The best move is hard's: on 3×3 the perfect player's, as the robot plays it; elsewhere a
    move proved best, else strong's, within hard's budget, so a coin flip never costs more
    than hard's second.
    """

    name = "medium"

    def __init__(self, rng: random.Random | None = None, *, budget: Budget | None = None) -> None:
        self.rng = make_rng(rng)
        self.hard = HardPlayer(self.rng, budget=budget)

    def candidates(self, board: Board) -> tuple[int, ...]:
        """The cells :meth:`choose` picks among: any legal move (tails)."""
        ensure_playable(board)
        return board.legal_moves

    def choose(self, board: Board) -> int:
        ensure_playable(board)
        if self.rng.random() < 0.5:
            return self.hard.choose(board)
        return self.rng.choice(board.legal_moves)
