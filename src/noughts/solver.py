"""Exact game-theoretic values of noughts-and-crosses positions on any board.

Every value is from the side to move: ``1`` win, ``0`` draw, ``-1`` loss. ``plies`` is how many
more moves the game lasts when both sides play perfectly: the winner hurries, the loser holds on
as long as it can, and a draw only ends when the board is full (so a draw's plies are the empty
cells). A finished game has ``plies == 0`` and the value ``-1`` if the last mover won.

>>> from noughts.board import Board
>>> solve(Board())
Solution(value=0, plies=9)
>>> solve(Board.parse("XX./OO./..."))
Solution(value=1, plies=1)
>>> analyse(Board.parse("XX./OO./...")).moves[0]
MoveAnalysis(index=2, value=1, plies=1)
>>> solve(Board.parse("X.O/.../..."))  # O's corner reply loses: X forks
Solution(value=1, plies=5)
>>> best_moves(Board.parse("X.O/.../..."))
(3, 6, 8)

How it works. 3×3 (k = 3) is small enough to solve outright: on first use a tight loop over
bitmasks scores all 4,520 unfinished positions into a dict, and every later answer is a lookup.
Any other board gets a search: negamax with alpha-beta on one integer score that carries both
the result and its distance (``size + 1 - plies`` for a win, its negative for a loss, 0 for a
draw). It first asks only "win, draw or loss?" (the window -1..1) and only then, for decided
positions, narrows in on the distance with null-window tests, shortest wins first. A
transposition table keyed by the position's canonical image under the board's symmetries keeps
lower and upper bounds between calls. Before a position is searched the lines decide a lot:
a side that can complete a line now has won; two open threats against the side to move lose;
one threat forces the block; a side with no line free of the other's marks (counting the moves
it has left) cannot win, and a position nobody can win is a draw; and the fewest marks a side
still needs bound how soon it can win; a cell that makes two threats at once wins. Moves are
tried attack-first (cells on lines with more of the mover's marks). That proves 4×4 with four
in a row a draw in about 0.3 s and 30,000 positions (5×5 with four in a row: about 5 s).

Long searches report progress, can be stopped with Ctrl-C (the table only ever holds bounds of
searches that finished, so it stays correct), and accept a node or time budget that raises
:class:`~noughts.errors.BudgetExceeded` when it runs out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

from noughts.board import Board, Geometry
from noughts.errors import BudgetExceeded

__all__ = [
    "Analysis", "MoveAnalysis", "ProgressCallback", "Solution", "analyse", "best_moves",
    "clear_cache", "solve",
]

ProgressCallback = Callable[[int, float], None]
"""Called as ``progress(nodes, elapsed_seconds)`` about every half second of a long search."""

PROGRESS_INTERVAL = 0.5  # seconds between progress reports
_CHECK_EVERY = 1024  # nodes between looks at the clock: cheap enough, and a Ctrl-C lands fast
_TABLE_BYTES = 400_000_000  # about how much the transposition table may hold before it is dropped


class Solution(NamedTuple):
    """A position's value for the side to move (1, 0, -1) and the plies left under best play."""

    value: int
    plies: int


class MoveAnalysis(NamedTuple):
    """One legal move: the result for the player who makes it, and plies from now (this move included)."""

    index: int  # type: ignore[assignment]  # the contract's name; shadows tuple.index
    value: int
    plies: int


class Analysis(NamedTuple):
    """A position's :class:`Solution` fields plus the analysis of every legal move, in cell order."""

    value: int
    plies: int
    moves: tuple[MoveAnalysis, ...]


# Scores --------------------------------------------------------------------------------------
# One int orders outcomes the way a player prefers them: size + 1 - plies for a win (sooner is
# bigger), its negative for a loss (later is bigger), 0 for a draw. A decided position's score
# is never ±1 once a mark is down, so "win/draw/loss?" is the window (-1, 1).


def _decode(score: int, size: int, empty: int) -> Solution:
    if score > 0:
        return Solution(1, size + 1 - score)
    if score < 0:
        return Solution(-1, size + 1 + score)
    return Solution(0, empty)


def _encode(value: int, plies: int, size: int) -> int:
    return value * (size + 1 - plies) if value else 0


# 3×3 -----------------------------------------------------------------------------------------
_LINES_33 = (0o7, 0o70, 0o700, 0o111, 0o222, 0o444, 0o421, 0o124)
_scores_33: dict[int, int] | None = None


def _table_33() -> dict[int, int]:
    """Score (for the side to move) of every unfinished 3×3 position, keyed by ``Board.key``."""
    global _scores_33
    if _scores_33 is not None:
        return _scores_33
    won = bytearray(512)  # won[mask]: the mask holds a line
    for line in _LINES_33:
        rest = 511 ^ line
        sub = rest
        while True:  # every superset of the line
            won[line | sub] = 1
            if not sub:
                break
            sub = (sub - 1) & rest
    scores: dict[int, int] = {}
    get = scores.get
    bits = (1, 2, 4, 8, 16, 32, 64, 128, 256)

    # one function per side to move keeps the key arithmetic free of branches
    def x_score(x: int, o: int) -> int:
        taken = x | o
        last = taken.bit_count() == 8
        o_key = o << 9
        best = -10
        for bit in bits:
            if taken & bit:
                continue
            after = x | bit
            if won[after]:
                best = 9  # a win in one ply: nothing beats it, but every child still gets a score
            elif last:
                best = 0  # the only move fills the board
            else:
                child = get(after | o_key)
                if child is None:
                    child = o_score(after, o)
                value = -child + 1 if child > 0 else -child - 1 if child < 0 else 0
                if value > best:
                    best = value
        scores[x | o_key] = best
        return best

    def o_score(x: int, o: int) -> int:
        taken = x | o
        last = taken.bit_count() == 8
        best = -10
        for bit in bits:
            if taken & bit:
                continue
            after = o | bit
            if won[after]:
                best = 9
            elif last:
                best = 0
            else:
                child = get(x | after << 9)
                if child is None:
                    child = x_score(x, after)
                value = -child + 1 if child > 0 else -child - 1 if child < 0 else 0
                if value > best:
                    best = value
        scores[x | o << 9] = best
        return best

    x_score(0, 0)
    _scores_33 = scores  # published only when complete, so an interrupted build leaves nothing
    return scores


def _is_33(geometry: Geometry) -> bool:
    return geometry.rows == 3 and geometry.cols == 3 and geometry.k == 3


# Budget --------------------------------------------------------------------------------------
class _Budget:
    """Node and time limits of one public call, and its progress reports."""

    __slots__ = ("max_nodes", "deadline", "progress", "start", "next_report", "nodes")

    def __init__(self, max_nodes: int | None, deadline: float | None,
                 progress: ProgressCallback | None) -> None:
        if max_nodes is not None and max_nodes < 0:
            raise ValueError(f"max_nodes must be zero or more, not {max_nodes}")
        self.max_nodes, self.deadline, self.progress = max_nodes, deadline, progress
        self.start = time.monotonic()
        self.next_report = self.start + PROGRESS_INTERVAL
        self.nodes = 0

    def limit(self) -> int:
        """How many more nodes before :meth:`check` must run."""
        if self.max_nodes is None:
            return _CHECK_EVERY
        return max(0, min(_CHECK_EVERY, self.max_nodes - self.nodes))

    def check(self, nodes: int) -> None:
        self.nodes += nodes
        if self.max_nodes is not None and self.nodes >= self.max_nodes:
            raise BudgetExceeded(
                f"the solver gave up after searching {self.nodes:,} positions, its budget "
                "(max_nodes); this board is too big to solve exactly in that budget")
        now = time.monotonic()
        if self.deadline is not None and now >= self.deadline:
            raise BudgetExceeded(
                f"the solver ran out of time after searching {self.nodes:,} positions "
                f"in {now - self.start:.1f} s; this board is too big to solve exactly in that time")
        if self.progress is not None and now >= self.next_report:
            self.next_report = now + PROGRESS_INTERVAL
            self.progress(self.nodes, now - self.start)


# Search --------------------------------------------------------------------------------------
class _Solver:
    """The search for one geometry; its transposition table lives as long as the module cache."""

    def __init__(self, geometry: Geometry) -> None:
        self.geometry = geometry
        self.size = geometry.size
        # canonical keys: for each non-identity symmetry, per 8-bit chunk of the key, the
        # permuted bits (a key is mover | other << size, both halves permuted alike)
        size = self.size
        chunks = (2 * size + 7) // 8
        tables: list[tuple[list[int], ...]] = []
        for perm in geometry.symmetries[1:]:
            target = [0] * size  # target[old cell] = new cell
            for new, old in enumerate(perm):
                target[old] = new
            per_chunk: list[list[int]] = []
            for chunk in range(chunks):
                moved = [0] * 9  # moved[b]: where bit b of this chunk lands
                for b in range(8):
                    bit = chunk * 8 + b
                    half, cell = divmod(bit, size)
                    moved[b] = 1 << (target[cell] + half * size) if half < 2 else 0
                row = [0] * 256
                for value in range(1, 256):
                    low = value & -value
                    row[value] = row[value ^ low] | moved[low.bit_length() - 1]
                per_chunk.append(row)
            tables.append(tuple(per_chunk))
        self._sym_tables = tables
        self._chunks = chunks
        # canonical key -> (lower bound, upper bound, best move in the canonical frame or -1)
        self.table: dict[int, tuple[int, int, int]] = {}
        self.perms = geometry.symmetries  # perm[canonical cell] = actual cell
        self.targets = tuple(tuple(perm.index(c) for c in range(size)) for perm in self.perms)
        # static order: cells on more lines first (the centre of 3×3 before corners before edges)
        self.order = sorted(range(size), key=lambda c: -len(geometry.lines_through[c]))

    def orient(self, key: int) -> tuple[int, int]:
        """The canonical key of ``key`` and the index of the symmetry that produces it."""
        best = key
        index = 0
        n = self._chunks
        parts = [key >> (8 * i) & 255 for i in range(n)]
        for s, tables in enumerate(self._sym_tables, 1):
            image = 0
            for i in range(n):
                image |= tables[i][parts[i]]
            if image < best:
                best = image
                index = s
        return best, index

    def exact(self, mover: int, other: int, budget: _Budget) -> int:
        """The exact score of an unfinished position (``mover`` to move)."""
        search = _Search(self, budget)
        size = self.size
        try:
            score = search.run(mover, other, -1, 1)
            if score == 0:
                return 0
            lo, hi = self.bounds(mover, other)
            if score > 0:
                lo = max(lo, score, 1)
                # shortest wins first: each test "a win in at most size + 1 - t plies?" is shallow
                while lo < hi:
                    t = hi
                    result = search.run(mover, other, t - 1, t)
                    if result >= t:
                        lo = result
                    else:
                        hi = result - (result - size) % 2  # win scores share size's parity
            else:
                hi = min(hi, score, -1)
                # quickest losses first: "lost within size + 1 + t plies?"
                while lo < hi:
                    t = lo
                    result = search.run(mover, other, t, t + 1)
                    if result <= t:
                        hi = result
                    else:
                        lo = result + (result - size - 1) % 2  # loss scores share size + 1's parity
            self.record(mover, other, lo)
            return lo
        except RecursionError:
            raise self._too_deep() from None
        finally:
            search.flush()

    def at_least(self, mover: int, other: int, bound: int, budget: _Budget) -> bool:
        """Whether the position's exact score is ``bound`` or more (one null-window search)."""
        search = _Search(self, budget)
        try:
            return search.run(mover, other, bound - 1, bound) >= bound
        except RecursionError:
            raise self._too_deep() from None
        finally:
            search.flush()

    def _too_deep(self) -> BudgetExceeded:
        return BudgetExceeded(
            f"the solver gave up: lines of play on this {self.geometry.rows}×{self.geometry.cols} "
            "board run deeper than Python's recursion limit")

    def bounds(self, mover: int, other: int) -> tuple[int, int]:
        entry = self.table.get(self.orient(mover | other << self.size)[0])
        return (entry[0], entry[1]) if entry is not None else (-self.size, self.size)

    def record(self, mover: int, other: int, score: int) -> None:
        """Remember a score known to be exact, so asking again costs one lookup."""
        key = self.orient(mover | other << self.size)[0]
        entry = self.table.get(key)
        self.table[key] = (score, score, entry[2] if entry is not None else -1)


class _Search:
    """A negamax search bound to one budget; ``run`` is the entry point."""

    def __init__(self, solver: _Solver, budget: _Budget) -> None:
        self.budget = budget
        geometry = solver.geometry
        size = solver.size
        full = geometry.full
        lines = geometry.line_masks
        cells_of = geometry.lines
        table = solver.table
        orient = solver.orient
        perms = solver.perms
        targets = solver.targets
        order = solver.order
        win_now = size
        lose_next = 1 - size
        win_soon = size - 2
        none = size + 1  # "no line left": more marks than any line needs
        table_limit = _TABLE_BYTES // (130 + size // 4)  # dict slot, bounds tuple, key of 2·size bits
        state = [0, budget.limit()]  # nodes since the last check, nodes allowed before the next

        def search(mover: int, other: int, alpha: int, beta: int) -> int:
            state[0] += 1
            if state[0] >= state[1]:
                budget.check(state[0])
                state[0] = 0
                state[1] = budget.limit()
            empty = full ^ (mover | other)
            n = empty.bit_count()
            mover_left = (n + 1) >> 1
            other_left = n >> 1
            mover_need = other_need = none
            threats = mover_two = double = 0
            pairs: list[int] = []  # empty cells of our lines that need two more marks
            for line in lines:
                if not line & other:
                    cells = line & empty
                    c = cells.bit_count()
                    if c == 1:
                        return win_now
                    if c <= mover_left:
                        if c < mover_need:
                            mover_need = c
                        if c == 2:
                            if cells & mover_two:
                                # overlapping windows on one row can share both empty cells
                                for pair in pairs:
                                    if pair & cells and pair != cells:
                                        double |= pair & cells
                            mover_two |= cells
                            pairs.append(cells)
                if not line & mover:
                    cells = line & empty
                    c = cells.bit_count()
                    if c == 1:
                        threats |= cells
                    elif c < other_need and c <= other_left:
                        other_need = c
            if threats:
                if threats & (threats - 1):
                    return lose_next  # two threats: block one, lose to the other
                low = 3 - size  # the block is forced, and no loss can come before ply 4
            elif double:
                return win_soon  # a cell on two of our lines needing two: two threats at once
            elif other_need < none:
                low = 2 * other_need - size - 1
            elif mover_need == none:
                return 0  # nobody can complete a line: a draw whatever happens
            else:
                low = 0
            high = size + 2 - 2 * mover_need if mover_need < none else 0
            if low >= beta:
                return low
            if high <= alpha:
                return high
            key, sym = orient(mover | other << size)
            entry = table.get(key)
            first = -1
            if entry is not None:
                lo, hi, first = entry
                if first >= 0:
                    first = perms[sym][first]
                if lo > low:
                    low = lo
                if hi < high:
                    high = hi
                if low >= beta or low == high:
                    return low
                if high <= alpha:
                    return high
            a = alpha if alpha > low else low
            b = beta if beta < high else high
            a0 = a
            if threats:
                moves: list[int] = [threats.bit_length() - 1]
            else:
                # attack first: a cell scores for every line through it that either side can
                # still complete, doubling per mark already on the line, and the mover's own
                # lines count twice the opponent's
                weight = [0] * size
                for line, line_cells in zip(lines, cells_of, strict=True):
                    if not line & other:
                        w = 2 << (line & mover).bit_count()
                        for c in line_cells:
                            weight[c] += w
                    if not line & mover:
                        w = 1 << (line & other).bit_count()
                        for c in line_cells:
                            weight[c] += w
                moves = [c for c in order if empty >> c & 1]
                moves.sort(key=weight.__getitem__, reverse=True)
                if first >= 0:
                    moves.remove(first)
                    moves.insert(0, first)
            best = -none
            best_cell = -1
            for cell in moves:
                child_alpha = -b - 1 if b > 0 else -b + 1 if b < 0 else 0
                child_beta = -a - 1 if a > 0 else -a + 1 if a < 0 else 0
                s = search(other, mover | 1 << cell, child_alpha, child_beta)
                value = -s + 1 if s > 0 else -s - 1 if s < 0 else 0
                if value > best:
                    best = value
                    best_cell = cell
                    if value > a:
                        if value >= b:
                            break
                        a = value
            if best >= b:
                low = best
            elif best <= a0:
                high = best
            else:
                low = high = best
            if len(table) >= table_limit:
                table.clear()  # memory over speed: the table only ever speeds things up
            table[key] = (low, high, targets[sym][best_cell])
            return best

        self._search = search
        self._state = state

    def run(self, mover: int, other: int, alpha: int, beta: int) -> int:
        return self._search(mover, other, alpha, beta)

    def flush(self) -> None:
        self.budget.nodes += self._state[0]
        self._state[0] = 0


_solvers: dict[Geometry, _Solver] = {}


def _solver(geometry: Geometry) -> _Solver:
    solver = _solvers.get(geometry)
    if solver is None:
        solver = _solvers[geometry] = _Solver(geometry)
    return solver


def clear_cache() -> None:
    """Forget every solved position (the 3×3 table is rebuilt on next use)."""
    global _scores_33
    _solvers.clear()
    _scores_33 = None


# Public API ----------------------------------------------------------------------------------
def _sides(board: Board) -> tuple[int, int]:
    return (board.o, board.x) if board.ply & 1 else (board.x, board.o)


def solve(board: Board, *, progress: ProgressCallback | None = None, max_nodes: int | None = None,
          deadline: float | None = None) -> Solution:
    """The value of ``board`` for the side to move and the plies left under best play.

    ``progress(nodes, elapsed)`` is called about every half second of a long search;
    ``max_nodes`` (positions searched) and ``deadline`` (a :func:`time.monotonic` time) bound
    the work, raising :class:`~noughts.errors.BudgetExceeded` when either runs out. Results
    are kept, so asking again (or about a symmetric position) is fast.
    """
    if board.winner is not None:
        return Solution(-1, 0)
    geometry = board.geometry
    empty = geometry.size - board.ply
    if empty == 0:
        return Solution(0, 0)
    if _is_33(geometry):
        return _decode(_table_33()[board.key], 9, empty)
    mover, other = _sides(board)
    budget = _Budget(max_nodes, deadline, progress)
    return _decode(_solver(geometry).exact(mover, other, budget), geometry.size, empty)


def analyse(board: Board, *, progress: ProgressCallback | None = None, max_nodes: int | None = None,
            deadline: float | None = None) -> Analysis:
    """:func:`solve` for the position and for every legal move (from the mover's side).

    A move's ``plies`` count from the current position and include the move itself.
    """
    if board.is_over:
        solution = solve(board)
        return Analysis(solution.value, solution.plies, ())
    geometry = board.geometry
    size = geometry.size
    mover, other = _sides(board)
    child_score: Callable[[int], int]  # score of the position after a move, for the opponent
    if _is_33(geometry):
        table = _table_33()
        child_score = (lambda after: table[other | after << 9]) if board.ply & 1 \
            else (lambda after: table[after | other << 9])
    else:
        solver, budget = _solver(geometry), _Budget(max_nodes, deadline, progress)
        child_score = lambda after: solver.exact(other, after, budget)
    last = board.ply == size - 1
    moves: list[MoveAnalysis] = []
    best = -size - 2
    for cell in board.legal_moves:
        after = mover | 1 << cell
        if any(after & line == line for line in geometry.lines_through[cell]):
            move = MoveAnalysis(cell, 1, 1)
        elif last:
            move = MoveAnalysis(cell, 0, 1)
        else:
            value, plies = _decode(child_score(after), size, size - board.ply - 1)
            move = MoveAnalysis(cell, -value, plies + 1)
        moves.append(move)
        best = max(best, _encode(move.value, move.plies, size))
    value, plies = _decode(best, size, size - board.ply)
    return Analysis(value, plies, tuple(moves))


def best_moves(board: Board, *, progress: ProgressCallback | None = None,
               max_nodes: int | None = None, deadline: float | None = None) -> tuple[int, ...]:
    """The legal moves that reach the position's value soonest (wins) or latest (losses).

    Cheaper than :func:`analyse` off 3×3: it solves the position exactly, then asks of each
    move only "does it keep that result?", never how much worse a worse move is.
    """
    if board.is_over:
        return ()
    geometry = board.geometry
    if _is_33(geometry):
        result = analyse(board)
        return tuple(m.index for m in result.moves if (m.value, m.plies) == (result.value, result.plies))
    size = geometry.size
    mover, other = _sides(board)
    solver, budget = _solver(geometry), _Budget(max_nodes, deadline, progress)
    score = solver.exact(mover, other, budget)
    # the opponent's score after a move that keeps ``score`` for the mover (never better)
    keeps = -score - 1 if score > 0 else -score + 1 if score < 0 else 0
    last = board.ply == size - 1
    best = []
    for cell in board.legal_moves:
        after = mover | 1 << cell
        if any(after & line == line for line in geometry.lines_through[cell]):
            good = score == size  # a win now is as good as it gets
        elif last:
            good = score == 0
        else:
            good = not solver.at_least(other, after, keeps + 1, budget)
            if good:
                solver.record(other, after, keeps)
        if good:
            best.append(cell)
    return tuple(best)
