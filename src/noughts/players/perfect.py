"""The perfect player: plays the exact solver's best moves (the "hard" difficulty of seed 003).

Source: :mod:`noughts.solver`, which solves positions exactly. Its rules, in order:

1. Never give away a result: play a move with the position's game-theoretic value (win, draw
   or loss for the side to move).
2. Win in the fewest moves; when lost, hold out the longest.
3. Among moves equal on 1 and 2, prefer the one that gives an imperfect opponent the most ways
   to go wrong: the most replies that are worse for them than their best reply.
4. Any tie left is broken at random, using only this player's ``rng``.

On 3×3 every position's moves come worked out in a table shipped with the package
(:mod:`noughts.players.perfect_33`, written by ``scripts/make_perfect_33.py`` from
:func:`work_out_moves_33` and checked against it by the tests), so a move is a dict lookup, the
first one too. Other boards are solved as they come with :func:`noughts.solver.best_moves`,
within a budget for each move: 2,000,000 positions (``max_nodes``) and 30 s (``time_limit``),
or any :class:`~noughts.budget.Budget` (``budget``). 4×4 with four in a row takes about a
second of CPU for the first move, 5×5 with four about 11 s, 6×6 with five about 2 s (a draw by
pairing, but the perfect player also ranks every move); if the solver cannot finish (15×15 with
five), :meth:`PerfectPlayer.choose` raises :class:`~noughts.errors.UnsupportedBoardError`
rather than play a move it cannot vouch for (:func:`noughts.players.unable` says so before a
game starts). Rule 3 gets what is left of the move's budget; if that runs out, or it would
have to test more than 2,000 replies (26×26 with two in a row, where every move is best), it
is skipped and the tie goes to rule 4.

>>> from noughts.board import Board
>>> player = PerfectPlayer(random.Random(1))
>>> player.choose(Board()) in (0, 2, 6, 8)  # a corner: O then has 7 losing replies
True
>>> player.choose(Board.parse("XX./OO./..."))
2
"""

from __future__ import annotations

import random

from noughts.board import Board, Geometry
from noughts.budget import Budget
from noughts.errors import BudgetExceeded, InvalidBudgetError, UnsupportedBoardError
from noughts.players.base import ensure_playable, make_rng
from noughts.players.perfect_33 import MOVES as _MOVES_33

__all__ = ["DEFAULT_MAX_NODES", "DEFAULT_TIME_LIMIT", "RULE_3_MAX_REPLIES", "PerfectPlayer", "work_out_moves_33"]

DEFAULT_MAX_NODES = 2_000_000
"""Positions the solver may search for one move off 3×3 (roughly 100,000 a second)."""
DEFAULT_TIME_LIMIT = 30.0
"""Seconds one move off 3×3 may take: huge boards yield positions too slowly for the node budget."""
RULE_3_MAX_REPLIES = 2_000
"""Rule 3 tests every reply to every best move; beyond this many it is skipped."""

_G33 = Geometry.get(3, 3, 3)
_BIT_LENGTH = tuple(n.bit_length() for n in range(10))  # bits random.randrange(n) draws for a 3×3 tie of n


def work_out_moves_33() -> dict[int, tuple[int, ...]]:
    """Best cells of every unfinished 3×3 position by ``Board.key``, after rules 1-3, ascending.

    What :mod:`noughts.players.perfect_33` holds, worked out from the solver (about 50 ms).
    """
    from noughts import solver  # the solver is only needed off 3×3, and here

    # the solver's raw table (score for the side to move, by key) is read directly: a board
    # object per position would make this first use several times slower
    scores = solver._table_33()
    lines = _G33.line_masks
    memo: dict[int, list[tuple[int, int, int]]] = {}

    def moves(key: int) -> list[tuple[int, int, int]]:
        """(cell, score for the mover, child key or -1 when the move ends the game)."""
        found = memo.get(key)
        if found is not None:
            return found
        x, o = key & 511, key >> 9
        x_moves = x.bit_count() == o.bit_count()
        mover, other = (x, o) if x_moves else (o, x)
        taken = x | o
        last = taken.bit_count() == 8
        found = []
        for cell in range(9):
            if taken >> cell & 1:
                continue
            after = mover | 1 << cell
            if any(after & line == line for line in lines):
                found.append((cell, 9, -1))  # a win now: score of a win in one ply
            elif last:
                found.append((cell, 0, -1))
            else:
                child = after | other << 9 if x_moves else other | after << 9
                score = scores[child]
                found.append((cell, -score + 1 if score > 0 else -score - 1 if score < 0 else 0, child))
        memo[key] = found
        return found

    def mistakes(child: int) -> int:
        if child < 0:
            return 0  # the move ends the game: no replies at all
        scores = [score for _, score, _ in moves(child)]
        top = max(scores)
        return sum(1 for score in scores if score < top)

    table: dict[int, tuple[int, ...]] = {}
    for key in scores:
        options = moves(key)
        top = max(score for _, score, _ in options)
        best = {cell: child for cell, score, child in options if score == top}
        table[key] = _most_traps({cell: mistakes(child) for cell, child in best.items()}) \
            if len(best) > 1 else tuple(best)
    return table


def _most_traps(mistakes: dict[int, int]) -> tuple[int, ...]:
    """The cells after which the opponent has the most replies worse than their best reply.

    ``mistakes[cell]`` is that number of replies after ``cell`` (0 when ``cell`` ends the game).
    """
    most = max(mistakes.values())
    return tuple(cell for cell, count in mistakes.items() if count == most)


class PerfectPlayer:
    """Never loses; wins as fast as possible; sets the most traps; breaks ties with ``rng``."""

    name = "perfect"

    def __init__(self, rng: random.Random | None = None, *, max_nodes: int | None = None,
                 time_limit: float | None = None, budget: Budget | None = None) -> None:
        self.rng = make_rng(rng)
        if budget is not None and (max_nodes is not None or time_limit is not None):
            raise InvalidBudgetError("give the perfect player either budget= or max_nodes= and time_limit=, not both")
        # a template: each move searches on a fresh copy
        self.budget = budget if budget is not None else Budget(
            DEFAULT_MAX_NODES if max_nodes is None else max_nodes,
            DEFAULT_TIME_LIMIT if time_limit is None else time_limit)

    @property
    def rng(self) -> random.Random:
        """The generator that breaks ties (rule 4); it may be replaced."""
        return self._rng

    @rng.setter
    def rng(self, rng: random.Random) -> None:
        self._rng = rng
        # random.Random draws a number below n from getrandbits, which choose() calls itself;
        # a subclass may draw differently, so choose() asks it with randrange (None here)
        self._getrandbits = rng.getrandbits if type(rng) is random.Random else None

    @property
    def max_nodes(self) -> int | None:
        return self.budget.nodes

    @property
    def time_limit(self) -> float | None:
        return self.budget.seconds

    def choose(self, board: Board) -> int:
        """A best cell for the side to move on ``board``."""
        if board._geometry is not _G33:
            cells = self.candidates(board)
            return cells[0] if len(cells) == 1 else cells[self._rng.randrange(len(cells))]
        # The 3×3 hot path: one lookup, and a random draw on a tie. It reads the board's own
        # slots: the properties would add half as much again to a move.
        try:
            cells = _MOVES_33[board._x | board._o << 9]
        except KeyError:
            ensure_playable(board)  # every unfinished position is in the table
            raise
        count = len(cells)
        if count == 1:
            return cells[0]
        getrandbits = self._getrandbits
        if getrandbits is None:
            return cells[self._rng.randrange(count)]
        # what random.Random.randrange(count) does, without its two Python-level calls: the same
        # bits drawn the same way, so a seeded game plays the same moves (the tests compare them)
        bits = _BIT_LENGTH[count]
        drawn = getrandbits(bits)
        while drawn >= count:
            drawn = getrandbits(bits)
        return cells[drawn]

    def candidates(self, board: Board) -> tuple[int, ...]:
        """The cells :meth:`choose` picks among (rules 1-3), ascending."""
        ensure_playable(board)
        if board.geometry is _G33:
            return _MOVES_33[board.key]
        import contextlib

        from noughts import solver  # only off 3×3: the solver takes a while to import

        budget = self.budget.renewed()
        try:
            cells = solver.best_moves(board, budget=budget)
        except BudgetExceeded:
            g = board.geometry
            raise UnsupportedBoardError(
                f"the perfect player cannot solve this {g.rows}×{g.cols} board (k={g.k}) within "
                f"{_limits(self.budget)}; use a player that searches to a limited depth, "
                "such as minimax") from None
        if len(cells) > 1 and len(cells) * (len(board.legal_moves) - 1) <= RULE_3_MAX_REPLIES:
            left = budget.nodes_left()
            share = None if left is None else max(1, left // len(cells))  # split between the moves
            # rule 3 is a nicety: out of budget, keep every best move and let rule 4 pick
            with contextlib.suppress(BudgetExceeded):
                cells = _most_traps({cell: _mistakes(board.play(cell), budget.limited(nodes=share))
                                     for cell in cells})
        return cells


def _limits(budget: Budget) -> str:
    """``2,000,000 positions or 30 seconds``: what one move may spend."""
    parts = []
    if budget.nodes is not None:
        parts.append(f"{budget.nodes:,} positions")
    if budget.seconds is not None:
        parts.append(f"{budget.seconds:g} seconds")
    return " or ".join(parts) or "any budget"


def _mistakes(board: Board, budget: Budget) -> int:
    """How many moves on ``board`` are worse than its best (none once the game is over)."""
    if board.is_over:
        return 0
    from noughts import solver

    return len(board.legal_moves) - len(solver.best_moves(board, budget=budget))
