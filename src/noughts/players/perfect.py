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
first one too. Other boards are solved as they come, within a budget for each move: 2,000,000
positions (``max_nodes``) and 30 s (``time_limit``), or any :class:`~noughts.budget.Budget`
(``budget``). First the position's value is proved (rule 1 needs it); if the solver cannot
(15×15 with five), :meth:`PerfectPlayer.choose` raises :class:`~noughts.errors.UnsupportedBoardError`
rather than play a move it cannot vouch for (:func:`noughts.players.unable` says so before a
game starts). Then the choice among the moves gets :func:`choice_budget`: :data:`CHOICE_WORK`
(about 5,000 positions on 7×7 with five) and, on a budget with a clock, until :data:`MOVE_SECONDS`
into the move. Within it :func:`best_proven` tests the moves one by one, cheapest first, and
keeps the ones proved to keep the value: when every move is tested that is rules 1-3 exactly;
when not (7×7 with five, where telling which of 44 moves keep a draw takes 2,500,000
positions), the tie goes to rule 4 among the moves proved. If none is proved by then, the
search goes on with what is left of the move's budget until one is. Rule 3 gets what is left
of the choice; if that runs out, or it would have to test more than 2,000 replies (26×26 with
two in a row, where every move is best), it is skipped and the tie goes to rule 4.

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
from noughts.players.base import SeededOnFirstDraw, ensure_playable, make_rng
from noughts.players.perfect_33 import MOVES as _MOVES_33

__all__ = [
    "CHOICE_WORK", "DEFAULT_MAX_NODES", "DEFAULT_TIME_LIMIT", "FIRST_SHARE", "MOVE_SECONDS", "RULE_3_MAX_REPLIES",
    "PerfectPlayer", "best_proven", "choice_budget", "work_out_moves_33",
]

DEFAULT_MAX_NODES = 2_000_000
"""Positions the solver may search for one move off 3×3 (roughly 100,000 a second)."""
DEFAULT_TIME_LIMIT = 30.0
"""Seconds one move off 3×3 may take: huge boards yield positions too slowly for the node budget."""
RULE_3_MAX_REPLIES = 2_000
"""Rule 3 tests every reply to every best move; beyond this many it is skipped."""
CHOICE_WORK = 2_000_000
"""How much the choice among a position's moves may search once its value is proved, in cells of
lines looked at (about half a second): positions cost more on boards of more and longer lines,
so this is about 30,000 positions on 4×4 with four and 5,000 on 7×7 with five."""
MOVE_SECONDS = 1.0
"""Seconds into a move when the choice among its moves stops (for budgets with a clock)."""
FIRST_SHARE = 4
"""Positions each move is first tested on: enough for one an earlier proof left in the tables."""

_G33 = Geometry.get(3, 3, 3)
_PLAIN_GENERATORS = (random.Random, SeededOnFirstDraw)  # whose randrange(n) is getrandbits' way
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
        # random.Random draws a number below n from getrandbits, which choose() calls itself
        # (SeededOnFirstDraw is the same generator); another subclass may draw differently, so
        # choose() asks it with randrange (None here)
        self._getrandbits = rng.getrandbits if type(rng) in _PLAIN_GENERATORS else None

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
        """The cells :meth:`choose` picks among (rules 1-3 as far as the move's budget goes), ascending."""
        ensure_playable(board)
        if board.geometry is _G33:
            return _MOVES_33[board.key]
        return self._candidates(board, self.budget.renewed())

    def _candidates(self, board: Board, budget: Budget) -> tuple[int, ...]:
        """:meth:`candidates` off 3×3, spending ``budget``."""
        value = self._value(board, budget)
        choice = choice_budget(board, budget)
        try:
            cells = best_proven(board, value, choice)
        finally:
            budget.spent += choice.spent
        if cells:
            return cells
        if value < 0:  # every move keeps a loss; how long each holds out is out of reach
            return tuple(_promising(board)[:1])
        # rule 1 comes before the time the choice aims at: search on until one move is proved
        try:
            cells = best_proven(board, value, budget, enough=1)
        except BudgetExceeded:
            cells = ()
        if not cells:
            raise self._unable(board)
        return cells

    def _value(self, board: Board, budget: Budget) -> int:
        """The value of ``board`` for the side to move, proved on ``budget`` (rule 1 needs it)."""
        from noughts import solver  # only off 3×3: the solver takes a while to import

        try:
            return solver.outcome(board, budget=budget, length_budget=Budget(nodes=0)).value
        except BudgetExceeded:
            raise self._unable(board) from None

    def _unable(self, board: Board) -> UnsupportedBoardError:
        g = board.geometry
        return UnsupportedBoardError(
            f"the perfect player cannot solve this {g.rows}×{g.cols} board (k={g.k}) within "
            f"{_limits(self.budget)}; use a player that searches to a limited depth, such as minimax")


def choice_budget(board: Board, budget: Budget) -> Budget:
    """What of ``budget`` the choice among a position's moves may spend once its value is known:
    :data:`CHOICE_WORK`, and, if ``budget`` has a clock, until :data:`MOVE_SECONDS` into the move."""
    g = board.geometry
    nodes = max(1, CHOICE_WORK // (len(g.lines) * (g.k + 1) + g.size))  # a position costs about its lines' cells
    if budget.seconds is None:  # positions only: the same moves on any machine
        return budget.limited(nodes=nodes)
    return budget.limited(nodes=nodes, seconds=max(0.0, MOVE_SECONDS - budget.elapsed()))


def best_proven(board: Board, value: int, budget: Budget, *, enough: int | None = None) -> tuple[int, ...]:
    """The best cells of ``board`` (off 3×3, its ``value`` proved) that ``budget`` suffices to prove.

    Ascending; ``()`` if none. When the budget suffices these are exactly rules 1-3's cells
    (rule 3 as far as it goes). Otherwise they are the moves proved to keep the position's
    value: a draw's are all equally good, a win's may win later than the fastest, and a loss's
    are not told apart, so none are returned. Each move is asked on a small share first, the
    most promising first, and the moves still open again on four times as much, so one
    expensive move cannot use up the budget before the cheap ones are proved. With ``enough``,
    it stops once that many are proved, and raises :class:`~noughts.errors.BudgetExceeded` if
    the budget runs out first.
    """
    from noughts import solver

    if value and enough is None:
        # rule 2 (the length of a win or loss) exactly, if half of the budget suffices
        nodes, seconds = budget.nodes_left(), budget.seconds_left()
        part = budget.limited(nodes=None if nodes is None else nodes // 2,
                              seconds=None if seconds is None else seconds / 2)
        try:
            return _traps(board, solver.best_moves(board, budget=part), budget)
        except BudgetExceeded:
            pass
        finally:
            budget.spent += part.spent
        if value < 0:
            return ()  # every move keeps the loss: nothing proved tells them apart
    open_cells = _promising(board)
    kept: list[int] = []
    share = FIRST_SHARE
    while open_cells:
        for cell in list(open_cells):
            if budget.exhausted:
                if enough is not None:
                    budget.check()  # raises
                return tuple(sorted(kept))
            part = budget.limited(nodes=share)
            try:
                if solver.keeps_value(board, cell, budget=part):
                    kept.append(cell)
                    if enough is not None and len(kept) >= enough:
                        return tuple(sorted(kept))
                open_cells.remove(cell)
            except BudgetExceeded:
                pass
            finally:
                budget.spent += part.spent
        share *= 4
    # every move tested: for a draw (every draw lasts as long) these are rules 1-2's cells
    return _traps(board, tuple(sorted(kept)), budget) if value == 0 else tuple(sorted(kept))


def _traps(board: Board, cells: tuple[int, ...], budget: Budget) -> tuple[int, ...]:
    """Rule 3 among ``cells`` on what is left of ``budget`` (all of ``cells`` if it runs out)."""
    if len(cells) > 1 and len(cells) * (len(board.legal_moves) - 1) <= RULE_3_MAX_REPLIES:
        left = budget.nodes_left()
        share = None if left is None else max(1, left // len(cells))  # split between the moves
        parts = []
        try:
            mistakes = {}
            for cell in cells:
                parts.append(budget.limited(nodes=share))
                mistakes[cell] = _mistakes(board.play(cell), parts[-1])
            return _most_traps(mistakes)
        except BudgetExceeded:
            pass  # rule 3 is a nicety: out of budget, keep every best move and let rule 4 pick
        finally:
            budget.spent += sum(part.spent for part in parts)
    return cells


def _promising(board: Board) -> list[int]:
    """The legal cells, most promising first (ties in cell order): a cell scores for every line
    through it that a side can still complete, doubling per mark on it, the mover's twice."""
    mover, other = (board.o, board.x) if board.ply & 1 else (board.x, board.o)
    through = board.geometry.lines_through
    weight = {}
    for cell in board.legal_moves:
        score = 0
        for line in through[cell]:
            if not line & other:
                score += 2 << (line & mover).bit_count()
            if not line & mover:
                score += 1 << (line & other).bit_count()
        weight[cell] = score
    return sorted(weight, key=lambda cell: -weight[cell])


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
