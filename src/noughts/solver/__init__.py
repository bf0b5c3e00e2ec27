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

Boards of more than 16 cells first settle win, draw or loss by proof-number search
(:mod:`noughts.solver.proof`: "does the mover force a win?", then "does the other side?"),
which stops wherever the defender holds a *pairing* (:mod:`noughts.solver.pairing`; on boards
k high with four in a row, of any shape, or after the defender's move), and searches only the
moves that answer the opponent's double threats; a draw is then known exactly (its plies are
the empty cells), and only a win or loss goes on to the alpha-beta search above for its
distance, with its sign already known. That proves 5×5 and 6×6 with five in a row draws in
milliseconds, 5×5 with four in about half a second, 4×7 with four in about 6 s and 4×8 with
four in about 2 minutes of CPU (see docs/proofs.md). Where the value is proved but the length
is out of reach (4×9 with four: the value in seven to eight minutes, the length not in ten),
:func:`outcome` still answers with the value, labelled, and the bounds found on the length.

Long searches report progress, can be stopped with Ctrl-C (the table only ever holds bounds of
searches that finished, so it stays correct), and accept a :class:`~noughts.budget.Budget` of
positions and seconds that raises :class:`~noughts.errors.BudgetExceeded` when it runs out. The
search looks at the budget every few positions, fewer on big boards where a position costs more,
so it stops within milliseconds of its limit on any board. Tables are kept for the last few
shapes only, and a search that gives up forgets what it added if that is a lot, rather than keep
what it could not finish.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import islice
from types import TracebackType
from typing import NamedTuple

from noughts.board import Board, Geometry, keep_newest
from noughts.budget import Budget
from noughts.errors import BudgetExceeded, IllegalMoveError, InvalidBudgetError
from noughts.solver.pairing import Pairs, find_pairing, pairing_diagram
from noughts.solver.proof import ENTRY_BYTES as PROVER_ENTRY_BYTES
from noughts.solver.proof import Prover

__all__ = [
    "Analysis", "MoveAnalysis", "Outcome", "Pairs", "ProgressCallback", "Solution", "analyse", "best_moves",
    "check_interval", "clear_cache", "keeps_value", "outcome", "pairing", "pairing_diagram", "solve",
]

ProgressCallback = Callable[[int, float], None]
"""Called as ``progress(nodes, elapsed_seconds)`` about every half second of a long search."""

PROGRESS_INTERVAL = 0.5  # seconds between progress reports
_CHECK_EVERY = 1024  # most nodes between looks at the budget: cheap enough, and a Ctrl-C lands fast
# Work (line visits) between looks at the budget: about 10 ms on 3×3; a 26×26 node costs 300 times more.
_CHECK_WORK = 40_000
_TABLE_BYTES = 300_000_000  # about how much the transposition tables of every shape may hold together
SOLVER_CACHE_SHAPES = 4
"""Shapes whose solver tables are kept (least recently used first out)."""
TRIM_ENTRIES = 100_000
"""A search that gives up forgets the entries it added if they are more than this (about 15 MB)."""
PROVER_TABLE_BYTES = 150_000_000
"""About how much the proof-number search's table of one shape may hold."""
ALPHA_BETA_MAX_SIZE = 16
"""Boards of up to this many cells are solved by the alpha-beta search alone (fast enough, and exact)."""
_TABLE_MAX_SIZE = 64  # boards up to this many cells canonicalise keys by table lookups, bigger ones bit by bit
_WIDE_LINES = 64  # boards with more lines than this look at the lines through the marks only (_Wide)
# Canonical keys of the positions asked about through the public calls (not the search's own), kept on
# boards of up to _CANONICAL_MAX_SIZE cells: analysing a position asks about every child, and a lookup
# costs a tenth of working the key out again. At most this many per shape (about 100 bytes each).
_CANONICAL_MEMO = 1 << 14
_CANONICAL_MAX_SIZE = 16
_CANONICAL_ENTRY_BYTES = 100


class Solution(NamedTuple):
    """A position's value for the side to move (1, 0, -1) and the plies left under best play."""

    value: int
    plies: int


class Outcome(NamedTuple):
    """A position's proved value for the side to move (1, 0, -1) and, if found in time, the plies left.

    ``plies`` is ``None`` when the budget ran out while looking for the length of a proved win
    or loss; ``fewest_plies`` and ``most_plies`` bound it all the same (both equal ``plies``
    when it is known). See :func:`outcome`.
    """

    value: int
    plies: int | None
    fewest_plies: int
    most_plies: int


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


# Search --------------------------------------------------------------------------------------
class _Solver:
    """The search for one geometry; its transposition table lives as long as the module cache."""

    def __init__(self, geometry: Geometry) -> None:
        self.geometry = geometry
        size = self.size = geometry.size
        self.perms = geometry.symmetries  # perm[canonical cell] = actual cell
        inverses = []
        for perm in self.perms:
            inverse = [0] * size  # inverse[actual cell] = canonical cell
            for new, old in enumerate(perm):
                inverse[old] = new
            inverses.append(tuple(inverse))
        self.targets = tuple(inverses)
        # canonical keys (a key is mover | other << size, both halves permuted alike): small boards
        # look up the image of each 8-bit chunk of the key; on big boards such tables would take
        # seconds to build and megabytes to hold, and their keys have few bits, so bits are moved
        # one by one
        self._chunks = (2 * size + 7) // 8
        self._sym_tables: list[tuple[list[int], ...]] = []
        self._bit_targets: list[tuple[int, ...]] = []
        for target in self.targets[1:]:
            moved_bits = tuple(target[cell] + half * size for half in (0, 1) for cell in range(size))
            if size > _TABLE_MAX_SIZE:
                self._bit_targets.append(moved_bits)
                continue
            per_chunk: list[list[int]] = []
            for chunk in range(self._chunks):
                moved = [0] * 9  # moved[b]: where bit b of this chunk lands
                for b in range(8):
                    bit = chunk * 8 + b
                    moved[b] = 1 << moved_bits[bit] if bit < 2 * size else 0
                row = [0] * 256
                for value in range(1, 256):
                    low = value & -value
                    row[value] = row[value ^ low] | moved[low.bit_length() - 1]
                per_chunk.append(row)
            self._sym_tables.append(tuple(per_chunk))
        # the images under every symmetry at once: one int per chunk value holds the chunk's image
        # under symmetry s in bits s·2·size onwards, so a key's images are one OR per chunk
        width = 2 * size
        self._key_mask = (1 << width) - 1
        self._fields = tuple((s, (s - 1) * width) for s in range(1, len(self._sym_tables) + 1))
        self._packed: list[list[int]] = []
        if self._sym_tables:
            for chunk in range(self._chunks):
                row = [0] * 256
                for s, shift in self._fields:
                    table = self._sym_tables[s - 1][chunk]
                    for value in range(1, 256):
                        row[value] |= table[value] << shift
                self._packed.append(row)
        self.orient: Callable[[int], tuple[int, int]] = (
            self._orient_bit_by_bit if size > _TABLE_MAX_SIZE else self._orient_by_chunks)
        # canonical key -> (lower bound, upper bound, best move in the canonical frame or -1)
        self.table: dict[int, tuple[int, int, int]] = {}
        self.clears = 0  # how often the table was emptied for being full
        self.entry_bytes = 130 + size // 4  # dict slot, bounds tuple, key of 2·size bits
        self.table_limit = _TABLE_BYTES // self.entry_bytes
        # static order: cells on more lines first (the centre of 3×3 before corners before edges)
        self.order = sorted(range(size), key=lambda c: -len(geometry.lines_through[c]))
        self.check_every = check_interval(geometry)
        self.wide = _Wide(geometry) if len(geometry.line_masks) > _WIDE_LINES else None
        self._prover: Prover | None = None  # made on first use: many solvers only read the table
        self._canonical: dict[int, int] | None = {} if size <= _CANONICAL_MAX_SIZE else None

    @property
    def prover(self) -> Prover:
        """The proof-number search of this geometry (win, draw or loss), sharing the symmetries."""
        if self._prover is None:
            self._prover = Prover(self.geometry, self.orient, PROVER_TABLE_BYTES,
                                  canonical_children=self.canonical_children)
        return self._prover

    def value(self, mover: int, other: int, search: _Search) -> int:
        """The value (1, 0, -1) of an unfinished position for ``mover``, by proof-number search:
        first "does the mover force a win?", then "does the other side?"
        """
        prover = self.prover
        if prover.proves(mover, other, True, search.tick):
            return 1
        if prover.proves(other, mover, False, search.tick):
            return -1
        return 0

    # orient(key): the canonical key of ``key`` and the index of the symmetry that produces it
    def _orient_by_chunks(self, key: int) -> tuple[int, int]:
        images = 0
        shift = 0
        for row in self._packed:
            images |= row[key >> shift & 255]
            shift += 8
        best = key
        index = 0
        mask = self._key_mask
        for s, field in self._fields:
            image = images >> field & mask
            if image < best:
                best = image
                index = s
        return best, index

    def canonical(self, key: int) -> int:
        """``orient(key)[0]``, remembered for the positions the public calls ask about on small boards."""
        memo = self._canonical
        if memo is None:
            return self.orient(key)[0]
        found = memo.get(key)
        if found is None:
            found = self.orient(key)[0]
            if len(memo) >= _CANONICAL_MEMO:
                memo.clear()
            memo[key] = found
        return found

    def canonical_children(self, key: int, cells: Sequence[int], offset: int) -> list[int]:
        """The canonical keys of ``key`` with one more bit, ``cell + offset``, for each of ``cells``.

        The images of ``key`` are worked out once, and each child's from its parent's with one OR.
        """
        packed = self._packed
        if not packed or self.size > _TABLE_MAX_SIZE:
            orient = self.orient
            return [orient(key | 1 << (cell + offset))[0] for cell in cells]
        images = 0
        shift = 0
        for row in packed:
            images |= row[key >> shift & 255]
            shift += 8
        mask = self._key_mask
        shifts = [field for _, field in self._fields]
        keys = []
        for cell in cells:
            bit = cell + offset
            child = key | 1 << bit
            child_images = images | packed[bit >> 3][1 << (bit & 7)]
            best = min([child_images >> field & mask for field in shifts])
            keys.append(child if child < best else best)
        return keys

    def _orient_bit_by_bit(self, key: int) -> tuple[int, int]:
        bits = []
        rest = key
        while rest:
            low = rest & -rest
            bits.append(low.bit_length() - 1)
            rest ^= low
        best = key
        index = 0
        for s, moved in enumerate(self._bit_targets, 1):
            image = 0
            for bit in bits:
                image |= 1 << moved[bit]
            if image < best:
                best = image
                index = s
        return best, index

    def exact(self, mover: int, other: int, search: _Search) -> int:
        """The exact score of an unfinished position (``mover`` to move)."""
        state = search._state  # search.tick(), inline: most calls end at the lookup below
        state[0] += 1
        if state[0] >= state[1]:
            search._check()
        size = self.size
        raw = mover | other << size
        memo = self._canonical
        key = memo.get(raw) if memo is not None else None
        if key is None:
            key = self.canonical(raw)
        table = self.table
        entry = table.get(key)
        if entry is not None and entry[0] == entry[1]:
            # known exactly: the search would count this one position and return it at once
            state[0] += 1
            if state[0] >= state[1]:
                search._check()
            return entry[0]
        try:
            # win, draw or loss first: proof-number search, or (small boards) the search below
            score = self.value(mover, other, search) if self.size > ALPHA_BETA_MAX_SIZE \
                else search.run(mover, other, -1, 1)
            if score == 0:
                self._record(key, 0)
                return 0
            bounds = self.known_bounds(key, score)
            self.narrow(mover, other, bounds, search)
            self._record(key, bounds[0])
            return bounds[0]
        except RecursionError:
            raise self._too_deep() from None

    def known_bounds(self, key: int, score: int) -> list[int]:
        """[lower, upper] bounds of the score of a won (``score`` > 0) or lost (< 0) position, from
        its sign and the table."""
        size = self.size
        entry = self.table.get(key)
        lo, hi = (entry[0], entry[1]) if entry is not None else (-size, size)
        if score > 0:
            return [max(lo, score, 1), hi]
        return [lo, min(hi, score, -1)]

    def narrow(self, mover: int, other: int, bounds: list[int], search: _Search) -> None:
        """Narrow ``bounds`` (of a won or lost position's score) until they meet, by null-window tests.

        ``bounds`` is updated after every test, so a caller whose budget runs out part way still
        holds true bounds (the length of a win: see :func:`outcome`).
        """
        size = self.size
        lo, hi = bounds
        if lo > 0:
            # shortest wins first: each test "a win in at most size + 1 - t plies?" is shallow
            while lo < hi:
                t = hi
                result = search.run(mover, other, t - 1, t)
                if result >= t:
                    lo = bounds[0] = result
                else:
                    hi = bounds[1] = result - (result - size) % 2  # win scores share size's parity
        else:
            # quickest losses first: "lost within size + 1 + t plies?"
            while lo < hi:
                t = lo
                result = search.run(mover, other, t, t + 1)
                if result <= t:
                    hi = bounds[1] = result
                else:
                    lo = bounds[0] = result + (result - size - 1) % 2  # loss scores share size + 1's parity

    def at_least(self, mover: int, other: int, bound: int, search: _Search, key: int | None = None) -> bool:
        """Whether the position's exact score is ``bound`` or more (one null-window search).

        ``key``: the position's canonical key, if the caller has it already.
        """
        state = search._state  # search.tick(), inline, as in exact
        state[0] += 1
        if state[0] >= state[1]:
            search._check()
        if key is None:
            key = self.canonical(mover | other << self.size)
        entry = self.table.get(key)
        if entry is not None and entry[0] == entry[1]:
            # known exactly: the search would count this one position, as in exact
            state[0] += 1
            if state[0] >= state[1]:
                search._check()
            return entry[0] >= bound
        try:
            if self.size > ALPHA_BETA_MAX_SIZE:
                # the value alone settles most questions: a draw scores 0, a win 1 or more,
                # a loss -1 or less
                value = self.value(mover, other, search)
                if value == 0:
                    self._record(key, 0)
                    return bound <= 0
                if value > 0 and bound <= 1:
                    return True
                if value < 0 and bound > -1:
                    return False
            return search.run(mover, other, bound - 1, bound) >= bound
        except RecursionError:
            raise self._too_deep() from None

    def _too_deep(self) -> BudgetExceeded:
        return BudgetExceeded(
            f"the solver gave up: lines of play on this {self.geometry.rows}×{self.geometry.cols} "
            "board run deeper than Python's recursion limit")

    def bounds(self, mover: int, other: int) -> tuple[int, int]:
        entry = self.table.get(self.canonical(mover | other << self.size))
        return (entry[0], entry[1]) if entry is not None else (-self.size, self.size)

    def record(self, mover: int, other: int, score: int) -> None:
        """Remember a score known to be exact, so asking again costs one lookup."""
        self._record(self.canonical(mover | other << self.size), score)

    def _record(self, key: int, score: int) -> None:
        entry = self.table.get(key)
        if entry is None or entry[0] != score or entry[1] != score:
            self.table[key] = (score, score, entry[2] if entry is not None else -1)

    def table_bytes(self) -> int:
        return len(self.table) * self.entry_bytes

    def trim(self, size_before: int, clears_before: int) -> None:
        """After a search that gave up: forget what it added, if that is a lot.

        Memory over a head start next time; what earlier searches found stays. Entries keep
        their insertion order, so the search's own are those past ``size_before`` (all of
        them if the table was cleared meanwhile).
        """
        table = self.table
        if self.clears != clears_before:
            size_before = 0
        if len(table) - size_before > TRIM_ENTRIES:
            if size_before == 0:
                table.clear()
            else:
                for key in list(islice(table, size_before, None)):
                    del table[key]


class _Wide:
    """What a search needs on a board of many lines: the lines through the marks, one by one,
    and what all the others (empty, ``k`` cells to fill) add up to.

    A position's lines are looked at in no particular order: each either wins at once or adds
    to minimums and unions, so the empty lines can be taken together. This is the same search,
    position for position, only faster while few cells are marked.
    """

    def __init__(self, geometry: Geometry) -> None:
        self.k = geometry.k
        self.through = geometry.lines_through
        self.cells_of = dict(zip(geometry.line_masks, geometry.lines, strict=True))
        counts = [len(lines) for lines in geometry.lines_through]
        self.base = [3 * count for count in counts]  # an empty line adds 2 + 1 to each of its cells
        self.counts = counts
        self.multi = sum(1 << cell for cell, count in enumerate(counts) if count >= 2)
        # below this many marks the lines through them are fewer than half of all lines
        self.few_marks = len(geometry.line_masks) // (2 * max(counts))

    def touched(self, marks: int) -> tuple[list[int], list[int]]:
        """The marked cells, and every line through one of them (each once)."""
        cells: list[int] = []
        lines: list[int] = []
        seen: set[int] = set()
        through = self.through
        while marks:
            bit = marks & -marks
            cell = bit.bit_length() - 1
            cells.append(cell)
            for line in through[cell]:
                if line not in seen:
                    seen.add(line)
                    lines.append(line)
            marks ^= bit
        return cells, lines

    def double(self, empty: int, touched: Sequence[int]) -> bool:
        """k = 2: whether an empty cell lies on two empty lines (two threats at once)."""
        covered = 0
        for line in touched:
            covered |= line
        if self.multi & empty & ~covered:
            return True  # a cell away from every mark: all its lines are empty
        hits: dict[int, int] = {}
        for line in touched:
            for cell in self.cells_of[line]:
                hits[cell] = hits.get(cell, 0) + 1
        counts = self.counts
        return any(empty >> cell & 1 and counts[cell] - n >= 2 for cell, n in hits.items())

    def weights(self, mover: int, other: int, touched: Sequence[int]) -> list[int]:
        """The move-ordering weights of every cell (see the search), from the touched lines only."""
        weight = list(self.base)
        cells_of = self.cells_of
        for line in touched:
            w = -3
            if not line & other:
                w += 2 << (line & mover).bit_count()
            if not line & mover:
                w += 1 << (line & other).bit_count()
            if w:
                for c in cells_of[line]:
                    weight[c] += w
        return weight


def check_interval(geometry: Geometry) -> int:
    """How many positions the search visits between looks at its budget on ``geometry``.

    A position costs about one visit per line and cell of each line, so big boards look
    more often: 1,024 positions on 3×3, 8 on 26×26 with 2 in a row.
    """
    work = len(geometry.lines) * (geometry.k + 1) + geometry.size
    return max(1, min(_CHECK_EVERY, _CHECK_WORK // work))


class _Search:
    """The negamax search of one public call, spending its budget; ``run`` is the entry point.

    Positions are counted across every ``run`` of the call, so a call that makes many small
    searches (one per move, say) looks at its budget as often as one long search.
    """

    def __init__(self, solver: _Solver, budget: Budget, progress: ProgressCallback | None) -> None:
        self.budget = budget
        self.solver = solver
        self.progress = progress
        self.check_every = solver.check_every
        self.next_report = budget.clock() + PROGRESS_INTERVAL
        # nodes since the last check, nodes allowed before the next
        self._state = [0, self._allowance()]
        # the search itself is built on the first run: many calls only ask the table
        self._search: Callable[[int, int, int, int], int] | None = None

    def _allowance(self) -> int:
        left = self.budget.nodes_left()
        return self.check_every if left is None else min(self.check_every, left)

    def _check(self) -> None:
        state = self._state
        budget = self.budget
        nodes, state[0] = state[0], 0
        budget.check(nodes)
        state[1] = self._allowance()
        if self.progress is not None:
            now = budget.clock()
            if now >= self.next_report:
                self.next_report = now + PROGRESS_INTERVAL
                self.progress(budget.spent, now - budget.started)

    def _build(self) -> Callable[[int, int, int, int], int]:
        solver = self.solver
        geometry = solver.geometry
        size = solver.size
        full = geometry.full
        lines = geometry.line_masks
        line_pairs = tuple(zip(lines, geometry.lines, strict=True))  # (mask, cells) of each line
        table = solver.table
        orient = solver.orient
        perms = solver.perms
        targets = solver.targets
        order = solver.order
        win_now = size
        lose_next = 1 - size
        win_soon = size - 2
        none = size + 1  # "no line left": more marks than any line needs
        table_limit = solver.table_limit
        state = self._state
        check = self._check
        # Wide boards (many lines, few marks): only the lines through a mark are looked at one by
        # one; every other line is empty, and they all say the same (see _Wide)
        wide = solver.wide

        def search(mover: int, other: int, alpha: int, beta: int) -> int:
            state[0] += 1
            if state[0] >= state[1]:
                check()
            empty = full ^ (mover | other)
            n = empty.bit_count()
            mover_left = (n + 1) >> 1
            other_left = n >> 1
            mover_need = other_need = none
            threats = mover_two = double = 0
            pairs: set[int] = set()  # empty cells of our lines that need two more marks
            scan: Sequence[int] = lines
            marked: list[int] | None = None
            if wide is not None and size - n < wide.few_marks:
                marked, scan = wide.touched(mover | other)
            for line in scan:
                if not line & other:
                    cells = line & empty
                    c = cells.bit_count()
                    if c == 1:
                        return win_now
                    if c <= mover_left:
                        if c < mover_need:
                            mover_need = c
                        # two pairs sharing one cell: playing it makes two threats (overlapping
                        # windows on one row can share both empty cells, which is no double)
                        if c == 2 and cells not in pairs:
                            double |= mover_two & cells
                            mover_two |= cells
                            pairs.add(cells)
                if not line & mover and other_left:  # a side with no move left threatens nothing
                    cells = line & empty
                    c = cells.bit_count()
                    if c == 1:
                        threats |= cells
                    elif c < other_need and c <= other_left:
                        other_need = c
            if marked is not None and len(scan) < len(lines):  # the empty lines, all alike
                assert wide is not None
                k = wide.k
                if k == 1:
                    return win_now
                if k <= mover_left:
                    if k < mover_need:
                        mover_need = k
                    if k == 2 and wide.double(empty, scan):
                        double = 1  # only its truth counts: two threats at once
                if other_left and k < other_need and k <= other_left:
                    other_need = k
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
                if marked is None:
                    weight = [0] * size
                    for line, line_cells in line_pairs:
                        if not line & other:
                            # an empty line adds 1 << 0 for the opponent too: both in one pass
                            w = 2 << (line & mover).bit_count() if line & mover else 3
                        elif not line & mover:
                            w = 1 << (line & other).bit_count()
                        else:
                            continue  # both have marks on it: nobody can complete it
                        for c in line_cells:
                            weight[c] += w
                    moves = [c for c in order if empty >> c & 1]
                else:
                    assert wide is not None
                    weight = wide.weights(mover, other, scan)
                    taken = set(marked)
                    moves = [c for c in order if c not in taken]
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
                # memory over speed: forget the older half (the table only ever speeds things up)
                for old in list(islice(table, len(table) // 2)):
                    del table[old]
                solver.clears += 1
            table[key] = (low, high, targets[sym][best_cell])
            return best

        self._search = search
        return search

    def run(self, mover: int, other: int, alpha: int, beta: int) -> int:
        search = self._search
        if search is None:
            search = self._build()
        return search(mover, other, alpha, beta)

    def tick(self) -> None:
        """Count one position outside the search proper (a question asked of the table)."""
        state = self._state
        state[0] += 1
        if state[0] >= state[1]:
            self._check()

    def flush(self) -> None:
        """Add the positions not yet counted to the budget (at the end of the call)."""
        self.budget.spent += self._state[0]
        self._state[0] = 0


_solvers: dict[Geometry, _Solver] = {}  # least recently used first


def _solver(geometry: Geometry) -> _Solver:
    """The solver of ``geometry``, now the most recently used; older shapes make room for it."""
    solvers = _solvers
    solver = solvers.get(geometry)
    try:
        newest = next(reversed(solvers))
    except (StopIteration, RuntimeError):  # empty, or changed by another thread meanwhile
        newest = None
    if solver is None or (newest is not geometry and newest != geometry):  # the newest already stays last
        solver = solvers.pop(geometry, None) or _Solver(geometry)
        solvers[geometry] = solver
        keep_newest(solvers, SOLVER_CACHE_SHAPES)
        _keep_within_limit()
    return solver


def _keep_within_limit() -> None:
    """Forget the least recently used shapes while all the tables together hold more than their limit.

    Looked at when a shape becomes the newest and after each call whose tables grew: the tables
    change nowhere else.
    """
    solvers = _solvers
    kept = len(solvers)
    while kept > 1 and _tables_bytes(list(solvers.values())) > _TABLE_BYTES:
        kept -= 1
        keep_newest(solvers, kept)


def _tables_bytes(solvers: list[_Solver]) -> int:
    total = 0
    for solver in solvers:
        total += len(solver.table) * solver.entry_bytes  # solver.table_bytes(), without the calls
        if solver._canonical:
            total += len(solver._canonical) * _CANONICAL_ENTRY_BYTES
        if solver._prover is not None:
            total += len(solver._prover.table) * PROVER_ENTRY_BYTES
    return total


def clear_cache() -> None:
    """Forget every solved position (the 3×3 table is rebuilt on next use)."""
    global _scores_33
    _solvers.clear()
    _scores_33 = None


def _budget(budget: Budget | None, max_nodes: int | None, deadline: float | None) -> Budget:
    """The budget of one call: ``budget``, or one made of the older ``max_nodes`` and ``deadline``."""
    if budget is not None:
        if max_nodes is not None or deadline is not None:
            raise InvalidBudgetError("give either budget= or max_nodes= and deadline=, not both")
        if not isinstance(budget, Budget):
            raise InvalidBudgetError(f"budget must be a noughts Budget, not {type(budget).__name__}")
        return budget
    if max_nodes is None and deadline is None:
        return Budget()
    if max_nodes is not None and (type(max_nodes) is not int or max_nodes < 0):
        raise InvalidBudgetError(f"max_nodes must be a whole number, zero or more, not {max_nodes!r:.40}")
    return Budget.until(deadline, max_nodes)


class _searching:  # named as what it is used as: with _searching(...) as (solver, search)
    """The solver and search of one public call, and what happens when it gives up.

    A class rather than a generator-based context manager: it is entered on every call,
    and most calls (a position already in the table) take microseconds.
    """

    __slots__ = ("solver", "search", "size", "clears", "proved", "collections", "remembered")

    def __init__(self, geometry: Geometry, budget: Budget, progress: ProgressCallback | None) -> None:
        solver = self.solver = _solver(geometry)
        self.search = _Search(solver, budget, progress)
        self.size, self.clears = len(solver.table), solver.clears
        prover = solver._prover
        self.proved, self.collections = (len(prover.table), prover.collections) if prover else (0, 0)
        self.remembered = len(solver._canonical) if solver._canonical is not None else 0

    def __enter__(self) -> tuple[_Solver, _Search]:
        return self.solver, self.search

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        try:
            if error is not None:  # Ctrl-C too: the bounds found are true, but a lot of them go
                self.solver.trim(self.size, self.clears)
                if self.solver._prover is not None:
                    self.solver._prover.trim(self.proved, self.collections, TRIM_ENTRIES)
                if isinstance(error, BudgetExceeded):
                    raise _gave_up(error) from None
        finally:
            self.search.flush()
            solver = self.solver
            prover = solver._prover
            memo = solver._canonical
            proved = (len(prover.table), prover.collections) if prover is not None else (0, 0)
            if (len(solver.table) != self.size or solver.clears != self.clears
                    or proved != (self.proved, self.collections)
                    or (memo is not None and len(memo) != self.remembered)):
                _keep_within_limit()


def _gave_up(error: BudgetExceeded) -> BudgetExceeded:
    """The budget's complaint, told as the solver's."""
    if error.reason == "nodes":
        message = (f"the solver gave up after searching {error.spent:,} positions, its budget (max_nodes); "
                   "this board is too big to solve exactly in that budget")
    elif error.reason == "time":
        message = (f"the solver ran out of time after searching {error.spent:,} positions in "
                   f"{error.elapsed:.1f} s; this board is too big to solve exactly in that time")
    else:
        return error
    return BudgetExceeded(message, reason=error.reason, spent=error.spent, elapsed=error.elapsed)


# Public API ----------------------------------------------------------------------------------
def _sides(board: Board) -> tuple[int, int]:
    return (board.o, board.x) if board.ply & 1 else (board.x, board.o)


def solve(board: Board, *, progress: ProgressCallback | None = None, max_nodes: int | None = None,
          deadline: float | None = None, budget: Budget | None = None) -> Solution:
    """The value of ``board`` for the side to move and the plies left under best play.

    ``budget`` (a :class:`~noughts.budget.Budget`) bounds the positions searched and the time
    taken, raising :class:`~noughts.errors.BudgetExceeded` when it runs out; the older
    ``max_nodes`` (positions) and ``deadline`` (a :func:`time.monotonic` time) still work in
    its place. ``progress(nodes, elapsed)`` is called about every half second of a long
    search. Results are kept, so asking again (or about a symmetric position) is fast.
    """
    spend = _budget(budget, max_nodes, deadline)
    if board.winner is not None:
        return Solution(-1, 0)
    geometry = board.geometry
    empty = geometry.size - board.ply
    if empty == 0:
        return Solution(0, 0)
    if _is_33(geometry):
        return _decode(_table_33()[board.key], 9, empty)
    mover, other = _sides(board)
    with _searching(geometry, spend, progress) as (solver, search):
        return _decode(solver.exact(mover, other, search), geometry.size, empty)


def outcome(board: Board, *, progress: ProgressCallback | None = None, max_nodes: int | None = None,
            deadline: float | None = None, budget: Budget | None = None,
            length_budget: Budget | None = None) -> Outcome:
    """:func:`solve`, but a proved value is not lost when the length of the win is out of reach.

    The value (win, draw or loss) is proved first; then the length of a win or loss is
    searched for with what is left of the budget, and within what is left of ``length_budget``
    too, if given (a :class:`~noughts.budget.Budget`: its positions, and its seconds counted
    from its making). If the
    budget runs out before the value is proved, :class:`~noughts.errors.BudgetExceeded` is
    raised as by :func:`solve`; if it runs out while the length is searched for, the answer is
    the value with ``plies=None`` and the bounds found on the length so far. A draw's length is
    the empty cells, so a draw is always complete. The other arguments are :func:`solve`'s.

    >>> outcome(Board(4, 4, 3))
    Outcome(value=1, plies=5, fewest_plies=5, most_plies=5)
    >>> clear_cache()  # a cold start: nothing solved before
    >>> outcome(Board(5, 6, 4), length_budget=Budget(nodes=10))  # the value, proved; the length not found
    Outcome(value=1, plies=None, fewest_plies=7, most_plies=29)

    On the empty 4×9 board with four in a row this proves "the first player wins" in seven to
    eight minutes of CPU, where :func:`solve` does not finish (docs/proofs.md).
    """
    spend = _budget(budget, max_nodes, deadline)
    if length_budget is not None and not isinstance(length_budget, Budget):
        raise InvalidBudgetError(f"length_budget must be a noughts Budget, not {type(length_budget).__name__}")
    geometry = board.geometry
    if board.is_over or _is_33(geometry):
        value, plies = solve(board)
        return Outcome(value, plies, plies, plies)
    size = geometry.size
    empty = size - board.ply
    mover, other = _sides(board)
    searching = _searching(geometry, spend, progress)
    with searching as (solver, search):
        key = solver.canonical(mover | other << size)
        try:
            entry = solver.table.get(key)
            if entry is not None and entry[0] == entry[1]:
                score = entry[0]  # known exactly
            else:
                score = solver.value(mover, other, search) if size > ALPHA_BETA_MAX_SIZE \
                    else search.run(mover, other, -1, 1)
            if score == 0:
                solver._record(key, 0)
                return Outcome(0, empty, empty, empty)
            bounds = solver.known_bounds(key, score)
            if bounds[0] < bounds[1]:
                if length_budget is not None:
                    search.flush()
                    search.budget = spend.limited(length_budget.nodes_left(), length_budget.seconds_left())
                    search._state[1] = search._allowance()
                # the length search's table and the proof's share the tables' memory (on 4×9 the
                # alpha-beta table alone, at its own limit, took the process from 132 MB to 658 MB)
                limit = solver.table_limit
                prover = solver._prover
                if prover is not None:
                    room = (_TABLE_BYTES - len(prover.table) * PROVER_ENTRY_BYTES) // solver.entry_bytes
                    solver.table_limit = max(TRIM_ENTRIES, min(limit, room))
                try:
                    solver.narrow(mover, other, bounds, search)
                except BudgetExceeded:
                    # the value stands; the length search's partial table goes, its bounds stay
                    solver.trim(searching.size, searching.clears)
                    solver.table[key] = (bounds[0], bounds[1], -1)
                    return _length_not_found(score, bounds, size, empty)
                finally:
                    solver.table_limit = limit
                    if search.budget is not spend:
                        search.flush()
                        spend.spent += search.budget.spent
                        search.budget = spend
        except RecursionError:
            raise solver._too_deep() from None
        solver._record(key, bounds[0])
        value, plies = _decode(bounds[0], size, empty)
        return Outcome(value, plies, plies, plies)


def _length_not_found(score: int, bounds: list[int], size: int, empty: int) -> Outcome:
    """The value of a won or lost position whose score is known to lie within ``bounds`` only."""
    plies = sorted((_decode(bounds[0], size, empty).plies, _decode(bounds[1], size, empty).plies))
    # the winner moves on odd plies from here when it is the mover, on even ones when it is not
    parity = 1 if score > 0 else 0
    fewest = max(plies[0], 2 - parity)
    fewest += (fewest - parity) % 2
    most = min(plies[1], empty)
    most -= (most - parity) % 2
    return Outcome(1 if score > 0 else -1, None, fewest, most)


def analyse(board: Board, *, progress: ProgressCallback | None = None, max_nodes: int | None = None,
            deadline: float | None = None, budget: Budget | None = None) -> Analysis:
    """:func:`solve` for the position and for every legal move (from the mover's side).

    A move's ``plies`` count from the current position and include the move itself. The
    budget and progress arguments are :func:`solve`'s.
    """
    spend = _budget(budget, max_nodes, deadline)
    if board.is_over:
        solution = solve(board)
        return Analysis(solution.value, solution.plies, ())
    geometry = board.geometry
    if _is_33(geometry):
        table = _table_33()
        other = _sides(board)[1]
        child_score: Callable[[int], int] = (lambda after: table[other | after << 9]) if board.ply & 1 \
            else (lambda after: table[after | other << 9])
        return _analysis(board, child_score)
    with _searching(geometry, spend, progress) as (solver, search):
        other = _sides(board)[1]
        return _analysis(board, lambda after: solver.exact(other, after, search))


def _analysis(board: Board, child_score: Callable[[int], int]) -> Analysis:
    """Every move's result, given the score (for the opponent) of the position after each."""
    geometry = board.geometry
    size = geometry.size
    through = geometry.lines_through
    mover = _sides(board)[0]
    ply = board.ply
    last = ply == size - 1
    moves: list[MoveAnalysis] = []
    best = -size - 2
    for cell in board.legal_moves:
        after = mover | 1 << cell
        for line in through[cell]:
            if after & line == line:
                move = MoveAnalysis(cell, 1, 1)
                score = size
                break
        else:
            if last:
                move = MoveAnalysis(cell, 0, 1)
                score = 0
            else:
                child = child_score(after)  # the opponent's: the move's result is its negation
                if child > 0:
                    move = MoveAnalysis(cell, -1, size + 2 - child)
                    score = 1 - child
                elif child < 0:
                    move = MoveAnalysis(cell, 1, size + 2 + child)
                    score = -child - 1
                else:
                    move = MoveAnalysis(cell, 0, size - ply)
                    score = 0
        moves.append(move)
        if score > best:
            best = score
    value, plies = _decode(best, size, size - ply)
    return Analysis(value, plies, tuple(moves))


def best_moves(board: Board, *, progress: ProgressCallback | None = None,
               max_nodes: int | None = None, deadline: float | None = None,
               budget: Budget | None = None) -> tuple[int, ...]:
    """The legal moves that reach the position's value soonest (wins) or latest (losses).

    Cheaper than :func:`analyse` off 3×3: it solves the position exactly, then asks of each
    move only "does it keep that result?", never how much worse a worse move is. The budget
    and progress arguments are :func:`solve`'s.
    """
    spend = _budget(budget, max_nodes, deadline)
    if board.is_over:
        return ()
    geometry = board.geometry
    if _is_33(geometry):
        result = analyse(board)
        return tuple(m.index for m in result.moves if (m.value, m.plies) == (result.value, result.plies))
    size = geometry.size
    mover, other = _sides(board)
    with _searching(geometry, spend, progress) as (solver, search):
        score = solver.exact(mover, other, search)
        # the opponent's score after a move that keeps ``score`` for the mover (never better)
        keeps = -score - 1 if score > 0 else -score + 1 if score < 0 else 0
        last = board.ply == size - 1
        best = []
        through = geometry.lines_through
        for cell in board.legal_moves:
            after = mover | 1 << cell
            if _completes(after, through[cell]):
                good = score == size  # a win now is as good as it gets
            elif last:
                good = score == 0
            else:
                key = solver.canonical(other | after << size)
                good = not solver.at_least(other, after, keeps + 1, search, key)
                if good:
                    solver._record(key, keeps)
            if good:
                best.append(cell)
        return tuple(best)


def keeps_value(board: Board, cell: int, *, budget: Budget | None = None) -> bool:
    """Whether playing ``cell`` keeps the value of ``board`` (win, draw or loss for the mover).

    One question per move where :func:`best_moves` asks two and then the length: after a move
    in a won position, "does the mover still force a win?"; in a drawn one, "can the other side
    not force a win?"; in a lost one every move keeps the value. The position's own value is
    proved first, on the same ``budget`` (a lookup once it is known). Many moves are answered
    by the tables an earlier proof left, so a player short of time can ask move by move, each
    on a small budget, and keep the moves proved.

    >>> keeps_value(Board.parse("XX./OO./..."), 2), keeps_value(Board.parse("XX./OO./..."), 8)
    (True, False)
    """
    spend = _budget(budget, None, None)
    if cell not in board.legal_moves:
        raise IllegalMoveError(f"cell {cell!r:.20} is not a legal move on this board")
    geometry = board.geometry
    mover, other = _sides(board)
    after = mover | 1 << cell
    if _completes(after, geometry.lines_through[cell]):
        return True  # a win now keeps any value
    if board.ply == geometry.size - 1:
        return True  # the only move
    if _is_33(geometry):
        table = _table_33()
        child = table[other | after << 9] if board.ply & 1 else table[after | other << 9]
        return _sign(child) == -_sign(table[board.key])
    size = geometry.size
    with _searching(geometry, spend, None) as (solver, search):
        try:
            entry = solver.table.get(solver.canonical(mover | other << size))
            if entry is not None and (entry[0] > 0 or entry[1] < 0 or entry[0] == entry[1]):
                value = _sign(entry[0])
            elif size > ALPHA_BETA_MAX_SIZE:
                value = solver.value(mover, other, search)
            else:
                value = _sign(search.run(mover, other, -1, 1))
            if value < 0:
                return True
            if size > ALPHA_BETA_MAX_SIZE:
                prover = solver.prover
                if value > 0:
                    return prover.proves(after, other, False, search.tick)
                return not prover.proves(other, after, True, search.tick)
            # the other side's score after the move: below 0 keeps a win, below 1 a draw
            return not solver.at_least(other, after, 0 if value > 0 else 1, search)
        except RecursionError:
            raise solver._too_deep() from None


def _sign(score: int) -> int:
    return (score > 0) - (score < 0)


def _completes(marks: int, lines: tuple[int, ...]) -> bool:
    """Whether ``marks`` hold one of ``lines`` whole (a loop: any() and a generator cost more)."""
    for line in lines:  # noqa: SIM110
        if marks & line == line:
            return True
    return False


def pairing(board: Board, defender: str) -> Pairs | None:
    """A pairing with which ``defender`` ("X" or "O") stops the other side completing any line.

    Whenever the other side takes one cell of a pair, the defender takes the other one; the
    pairs cover every line the other side could still complete, so it never does. ``None``
    when none is found (see :mod:`noughts.solver.pairing`), ``()`` when the other side has no
    line left at all.

    >>> len(pairing(Board(5, 5, 5), "O"))
    12
    """
    if defender not in ("X", "O"):
        raise ValueError(f"the defender is X or O, not {defender!r:.20}")
    mine, theirs = (board.x, board.o) if defender == "X" else (board.o, board.x)
    return find_pairing(board.geometry, theirs, mine)

