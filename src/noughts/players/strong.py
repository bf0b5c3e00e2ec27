"""``strong``: threat-space search and a pattern evaluation, for boards too big to solve.

Gomoku programs win by threats: a *four* (k-1 marks in a line of k with the last cell empty)
must be answered at once, and a *three* (a move after which one more move makes two fours at
once) must be answered before it becomes that double threat. Allis solved gomoku with a
search over threats only ("threat-space search"); this player uses the same idea, in order:

1. **Win** now, else **block** the opponent's win in one. The first move is the centre; the
   second player's first (five in a row and longer) is diagonally next to the first mark.
2. **VCF** (victory by continuous fours): a sequence of fours, each answered by the only block,
   that ends in a double four, or a four-three. The opponent's blocks that make fours of their
   own are answered in turn. Found, it is played.
3. **Defend against the opponent's VCF**: if the opponent would win by fours were it their
   move, play a move after which they no longer can (a block, or a four of our own that gains
   the tempo).
4. **VCT** (victory by continuous threats): fours and threes; after a three the defender may
   play any cell of the lines that threaten, or a four of their own, and must not have a VCF
   of their own; the attacker's block of such a four is forced, so it is not counted among its
   moves. Depth first with iterative deepening to 5 of our moves (2 when looking for the
   opponent's), then proof-number search (df-pn style, best first: it follows the narrow
   forcing lines first) at 7, within a share of the budget.
5. **Defend against the opponent's VCT** the same way as against their VCF; the defences tried
   include every empty cell of the opponent's proof (where its attack can be broken) and our own
   threes (a four of ours answers their next three and takes the tempo). They are checked
   breadth first: the opponent's VCF, its VCT to depth 2, then at 7 by proof-number
   search, each depth for the defences that held every shallower check, the opponent's moves
   that refuted other defences first; each round shares its budget equally between the
   defences to check (a shallow round at most half of what is left), so the budget goes to the
   defences that hold rather than to the first few tried.
6. Otherwise iterative-deepening **alpha-beta** (a transposition table; only blocks against a
   four, only defences against a three, which the side choosing the move also answers past the
   horizon; crossing threats, cells where one side makes threats in two directions at once,
   count in the evaluation) over the cells with the best **pattern score**: every
   line of k cells through the cell is worth more the more marks of one side it holds (attack
   a little more than defence, an empty line a little). The scores are kept up to date per
   move, both sides' packed in one int per cell, so ordering moves costs no rescans.

All of it works on any m×n board with any k ≥ 3: lines are the board's windows of k cells, so
"four" means k-1 and "three" means k-2 of them. Positions small enough to solve (3×3, and any
board with at most :data:`SOLVE_EMPTY` empty cells) are played by the exact solver within a
share of the budget, so on 3×3 the player never loses.

Each move searches within a :class:`~noughts.budget.Budget` (by default 40,000 positions and
1 s; a position is one mark placed during a search). Phases that run out of budget are cut
short and the best move found so far is played, so an answer always comes. There is no clock
in the result when the node budget decides first, so a seeded ``random.Random`` (used only to
break ties between equal cells) makes every game repeatable.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from typing import ClassVar

from noughts.board import Board, Geometry, keep_newest
from noughts.budget import Budget
from noughts.errors import BudgetExceeded, InvalidBudgetError
from noughts.players.base import ensure_playable, make_rng

__all__ = ["DEFAULT_MAX_NODES", "DEFAULT_MAX_SECONDS", "SOLVE_EMPTY", "StrongPlayer"]

DEFAULT_MAX_NODES = 40_000
"""Positions one move may search (about 1.6 times a ``minimax`` move of its 100,000, so under a second)."""
DEFAULT_MAX_SECONDS = 1.0
"""Seconds one move may take."""
SOLVE_EMPTY = 16
"""Positions with at most this many empty cells are first offered to the exact solver."""
_LOOK_EVERY = 32  # positions between looks at the budget
_VCF_DEPTH = 30  # attacker's fours in a row, at most
_DEFENCE_CANDIDATES = 10  # cells tried when looking for a move that stops the opponent's threats
_MAX_VCT_DEPTH = 7  # attacker moves in a VCT, at most
_DFS_VCT_DEPTH = 2  # the opponent's deeper VCTs are looked for by proof-number search (depth first costs more from 3)
_OWN_DFS_VCT_DEPTH = 5  # our own attack: depth-first further (its wins are mostly shallow and cheap), then proof-number
_FIRST_REPLY_K = 5  # from five in a row up, the second player's first move follows gomoku's openings
_COUNTER_THREES = 12  # threes of our own tried against the opponent's win by threats
_WIN = 1 << 40
_WIDTH = 6  # moves tried at each inner node of the alpha-beta search (narrower reaches depth 8: docs/strong.md item 11)
_ROOT_WIDTH = 12  # moves tried at its root
_MAX_DEPTH = 8
_QUIESCENCE = 2  # plies past the horizon the searching side may spend answering a three
_TEMPO_PERCENT = 150  # the side to move's lines count for more: it can extend them first
_THREAT_PENALTY = 20_000  # the opponent threatens two wins at once
_CROSSING_MINE = 3_000  # per cell where the side to move makes threats in two directions (two at most)
_CROSSING_THEIRS = 1_500  # per such cell of the other side (three at most)

# Pattern weights by marks in a line of k, counted from k-1 down (k-1, k-2, ...): a line with
# only our marks (attack) or only theirs (defence). An empty line is worth _EMPTY_LINE.
_ATTACK = (800_000, 15_000, 800, 35, 12, 5)
_DEFENCE = (100_000, 12_000, 700, 30, 10, 4)
_EMPTY_LINE = 7
_LINE_BASE = 8  # the evaluation: an open line with n marks is worth _LINE_BASE ** n to its owner
_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))
_PACK = 40  # bits of side 1's pattern score in the packed scores
_LOW = (1 << _PACK) - 1


class _OutOfBudget(Exception):
    """The phase used up its share of the budget."""


_PN_INFINITY = 1 << 60


class _PNode:
    """A node of the proof-number search: the move that leads to it, its proof and disproof numbers."""

    __slots__ = ("cell", "children", "dn", "dn_limit", "extra", "last", "left", "pn", "pn_limit")

    def __init__(self, cell: int, left: int, last: int | None) -> None:
        self.cell = cell
        self.left = left  # attacker moves left
        self.last = last  # the attacker's last move (threes must build on it)
        self.pn = self.dn = 1
        self.pn_limit = self.dn_limit = _PN_INFINITY  # df-pn: search below this node until a number reaches its limit
        self.children: list[_PNode] | None = None
        self.extra: tuple[int, ...] = ()  # a proved leaf: its attacker cells (first move first)

    def proved(self, cells: tuple[int, ...]) -> None:
        self.pn, self.dn, self.extra, self.children = 0, _PN_INFINITY, cells, None

    def disproved(self) -> None:
        self.pn, self.dn, self.children = _PN_INFINITY, 0, []

    def expand(self, cells: list[int], left: int, last: int | None, attacking_child: int) -> None:
        self.children = [_PNode(cell, left, cell if attacking_child else last) for cell in cells]
        if attacking_child:  # an OR node: one child proves it, all must fail to disprove it
            self.pn, self.dn = 1, len(cells)
        else:
            self.pn, self.dn = len(cells), 1


def _pn_update(node: _PNode, attacking: bool) -> None:
    children = node.children
    assert children
    if attacking:
        node.pn = min(c.pn for c in children)
        node.dn = min(_PN_INFINITY, sum(c.dn for c in children))
    else:
        node.pn = min(_PN_INFINITY, sum(c.pn for c in children))
        node.dn = min(c.dn for c in children)


def _two_best(children: list[_PNode], key: Callable[[_PNode], int]) -> tuple[_PNode, int]:
    """The child with the smallest ``key`` (the first of equals) and the second smallest ``key``."""
    best, second = None, _PN_INFINITY
    best_value = _PN_INFINITY + 1
    for child in children:
        value = key(child)
        if value < best_value:
            best, second, best_value = child, best_value, value
        elif value < second:
            second = value
    assert best is not None
    return best, min(second, _PN_INFINITY)


_EPSILON = 4  # 1 + 1/_EPSILON: how far past the second-best sibling a subtree may go (Pawlewicz and Lew's 1+ε)


def _widened(second: int) -> int:
    return second + 1 + second // _EPSILON


def _by_pn(node: _PNode) -> int:
    return node.pn


def _by_dn(node: _PNode) -> int:
    return node.dn


class _Tables:
    """Windows (the board's lines of k cells) and per-cell lookups, cached per shape."""

    _cache: ClassVar[dict[Geometry, _Tables]] = {}

    def __init__(self, geometry: Geometry) -> None:
        self.k = geometry.k
        self.size = geometry.size
        self.windows = geometry.lines
        cell_windows: list[list[int]] = [[] for _ in range(geometry.size)]
        for index, window in enumerate(self.windows):
            for cell in window:
                cell_windows[cell].append(index)
        self.cell_windows = tuple(tuple(ws) for ws in cell_windows)
        rows, cols = geometry.rows, geometry.cols
        k = self.k
        self.attack = [0] * (k + 1)
        self.defence = [0] * (k + 1)
        for marks in range(1, k):
            rank = k - 1 - marks
            self.attack[marks] = _ATTACK[min(rank, len(_ATTACK) - 1)]
            self.defence[marks] = _DEFENCE[min(rank, len(_DEFENCE) - 1)]
        self.attack[0] = self.defence[0] = 0
        self.weight = [0] + [_LINE_BASE ** marks for marks in range(1, k)] + [0]  # a whole line is a win
        # A cell's pattern score for a side sums value(own marks, their marks) over its windows;
        # when a side adds a mark to a window, every cell of it changes by these deltas, indexed
        # [mover's marks][other's marks]: for the mover's score and for the other side's.
        def value(own: int, other: int) -> int:
            if other == 0:
                return self.attack[own] if own else _EMPTY_LINE
            return self.defence[other] if own == 0 else 0

        span = range(k + 1)
        self.mover_delta = [[value(a + 1, b) - value(a, b) if a < k else 0 for b in span] for a in span]
        self.other_delta = [[value(b, a + 1) - value(b, a) if a < k else 0 for b in span] for a in span]
        # Both sides' scores of a cell live in one int, side 1's in the low _PACK bits (never negative).
        mover, other = self.mover_delta, self.other_delta
        by_1 = [[mover[a][b] + (other[a][b] << _PACK) for b in span] for a in span]
        by_2 = [[other[a][b] + (mover[a][b] << _PACK) for b in span] for a in span]
        self.packed_delta: tuple[list[list[int]], ...] = ([], by_1, by_2)  # indexed by the side that moves
        self.empty_score = tuple(_EMPTY_LINE * len(ws) * (1 + (1 << _PACK)) for ws in self.cell_windows)
        self.close = tuple(
            tuple(r * cols + c for dr, dc in _DIRECTIONS for step in (-2, -1, 1, 2)
                  for r, c in ((row + dr * step, col + dc * step),) if 0 <= r < rows and 0 <= c < cols)
            for row, col in (divmod(cell, cols) for cell in range(geometry.size)))
        # the cells sharing a window with each cell (a four that builds on the previous one lies there)
        self.related = tuple(frozenset(c for w in ws for c in self.windows[w]) for ws in self.cell_windows)
        self.step = [self.weight[marks + 1] - self.weight[marks] for marks in range(k)]
        # each window's direction as a bit (0 for a window of one cell): threats in two directions cross
        self.direction_bit = tuple(
            0 if len(w) < 2 else 1 << [1, cols, cols + 1, cols - 1].index(w[1] - w[0]) for w in self.windows)
        zobrist = random.Random(geometry.size * 1_000 + k)  # fixed: the same hashes every run
        self.zobrist = ((0,) * geometry.size, tuple(zobrist.getrandbits(64) for _ in range(geometry.size)),
                        tuple(zobrist.getrandbits(64) for _ in range(geometry.size)))

    @classmethod
    def get(cls, geometry: Geometry) -> _Tables:
        tables = cls._cache.pop(geometry, None) or cls(geometry)
        cls._cache[geometry] = tables
        keep_newest(cls._cache, 4)
        return tables


class _State:
    """A position being searched: marks per cell, marks per window, and the open windows by count.

    ``level[side][n]`` holds the windows with ``n`` marks of ``side`` and none of the other side
    (for ``n`` of k-3 and more: the counts the threat searches ask about).
    """

    def __init__(self, board: Board, budget: Budget, *, scored: bool = False) -> None:
        tables = _Tables.get(board.geometry)
        self.scored = True  # the initial position: everything, then ``scored`` for the search's moves
        self.tables = tables
        self.k = tables.k
        self.windows = tables.windows
        self.cell_windows = tables.cell_windows
        self.owner = [0] * tables.size
        count = len(tables.windows)
        self.counts = [[0] * count, [0] * count, [0] * count]
        self.level: list[list[set[int]]] = [[], [set() for _ in range(self.k + 1)],
                                            [set() for _ in range(self.k + 1)]]
        self.low = max(1, self.k - 3)  # the searches read the open windows of this many marks and more
        self.hash = 0
        self.sums = [0, 0, 0]  # per side: the weights of its open windows
        self.budget = budget
        self.nodes = 0
        self.counted = 0
        self.next_look = 1  # look at the very first position: the budget may be spent already
        self.failed_vcf: dict[tuple[int, int], int] = {}
        self.failed_vct: dict[tuple[int, int, int | None], int] = {}
        # the proof-number search's proved attacker positions, (hash, attacker): moves it had left, the proof's cells
        self.won_vct: dict[tuple[int, int], tuple[int, tuple[int, ...]]] = {}
        self.proof: set[int] = set()  # the attacker's cells in the forced wins found (where to defend)
        self.table: dict[int, tuple[int, int, int, int]] = {}  # alpha-beta: depth, value, bound, best move
        self.root = 0  # alpha-beta: the side whose move is being chosen
        self.packed = list(tables.empty_score)  # both sides' pattern scores per cell (see _Tables)
        self.frontier: set[int] = set()  # empty cells close to a mark
        self.saved: list[tuple[list[int], set[int]]] = []  # what undo restores
        self.unscored: tuple[int, int] | None = None  # the last move played, when its scores wait
        for cell in range(tables.size):
            mark = board[cell]
            if mark is not None:
                self._place(cell, 1 if mark == "X" else 2)
        self.scored = scored

    # making and unmaking moves ---------------------------------------------------------
    def _place(self, cell: int, side: int) -> None:
        self._place_lean(cell, side)
        self._score(cell, side)

    def _place_lean(self, cell: int, side: int) -> None:
        """The lines' side of a move: window counts, open windows by count, their weights; no move order."""
        mine, theirs = self.counts[side], self.counts[3 - side]
        my_levels, their_levels, low = self.level[side], self.level[3 - side], self.low
        step, weight = self.tables.step, self.tables.weight
        gain = loss = 0
        for w in self.cell_windows[cell]:
            had = mine[w]
            mine[w] = had + 1
            other = theirs[w]
            if other == 0:
                if had >= low:
                    my_levels[had].discard(w)
                    my_levels[had + 1].add(w)
                elif had + 1 == low:
                    my_levels[low].add(w)
                gain += step[had]
            elif had == 0:
                if other >= low:
                    their_levels[other].discard(w)  # the window is no longer open for them
                loss += weight[other]
        sums = self.sums
        sums[side] += gain
        sums[3 - side] -= loss
        self.owner[cell] = side
        self.hash ^= self.tables.zobrist[side][cell]

    def _undo_lean(self, cell: int, side: int) -> None:
        mine, theirs = self.counts[side], self.counts[3 - side]
        my_levels, their_levels, low = self.level[side], self.level[3 - side], self.low
        step, weight = self.tables.step, self.tables.weight
        gain = loss = 0
        for w in self.cell_windows[cell]:
            has = mine[w]
            mine[w] = has - 1
            other = theirs[w]
            if other == 0:
                if has >= low:
                    my_levels[has].discard(w)
                    if has > low:
                        my_levels[has - 1].add(w)
                gain += step[has - 1]
            elif has == 1:
                if other >= low:
                    their_levels[other].add(w)
                loss += weight[other]
        sums = self.sums
        sums[side] -= gain
        sums[3 - side] += loss
        self.owner[cell] = 0
        self.hash ^= self.tables.zobrist[side][cell]

    def _score(self, cell: int, side: int) -> None:
        """The move order's side of a move just placed: every cell's pattern scores, the frontier."""
        mine, theirs = self.counts[side], self.counts[3 - side]
        windows, packed, delta = self.windows, self.packed, self.tables.packed_delta[side]
        for w in self.cell_windows[cell]:
            had, other = mine[w] - 1, theirs[w]
            if had and other:
                continue  # a window both sides held stays dead: no score changes
            change = delta[had][other]
            for c in windows[w]:
                packed[c] += change
        frontier, owner = self.frontier, self.owner
        frontier.discard(cell)
        frontier.update(c for c in self.tables.close[cell] if not owner[c])

    def play(self, cell: int, side: int) -> None:
        self.nodes += 1
        if self.nodes >= self.next_look:
            self._look()
        if self.scored:  # the scores wait until the position orders moves (most positions searched never do)
            self._catch_up()  # one move's scores may wait: the previous one's, if its position only blocked
            self._place_lean(cell, side)
            self.unscored = (cell, side)
        else:
            self._place_lean(cell, side)

    def undo(self, cell: int, side: int) -> None:
        if self.scored:
            if self.unscored is not None:  # never scored: nothing to restore
                self.unscored = None
            else:
                self.packed, self.frontier = self.saved.pop()
        self._undo_lean(cell, side)

    def _catch_up(self) -> None:
        """Score the last move played, if it is not yet (undo restores the scores saved here)."""
        if self.unscored is not None:
            self.saved.append((self.packed[:], set(self.frontier)))
            self._score(*self.unscored)
            self.unscored = None

    def _look(self) -> None:
        try:
            self.budget.check(self.nodes - self.counted)
        except BudgetExceeded:
            raise _OutOfBudget from None
        self.counted = self.nodes
        self.next_look = self.nodes + _LOOK_EVERY

    # what the marks threaten ---------------------------------------------------------------
    def empties(self, window: int) -> list[int]:
        owner = self.owner
        return [cell for cell in self.windows[window] if not owner[cell]]

    def win_cells(self, side: int) -> set[int]:
        """Cells where ``side`` completes k in a row."""
        owner, windows = self.owner, self.windows
        found: set[int] = set()
        for w in self.level[side][self.k - 1]:
            for cell in windows[w]:
                if not owner[cell]:
                    found.add(cell)
                    break
        return found

    def four_moves(self, side: int) -> set[int]:
        """Cells where ``side`` makes a four (k-1 marks in an open window)."""
        if self.k < 2:
            return set()
        owner, windows = self.owner, self.windows
        return {cell for w in self.level[side][self.k - 2] for cell in windows[w] if not owner[cell]}

    def completions(self, side: int, cell: int) -> set[int]:
        """The cells where ``side`` would win after playing ``cell`` (played already)."""
        counts, other, need = self.counts[side], self.counts[3 - side], self.k - 1
        owner, windows = self.owner, self.windows
        found: set[int] = set()
        for w in self.cell_windows[cell]:
            if counts[w] == need and not other[w]:
                for c in windows[w]:
                    if not owner[c]:
                        found.add(c)
                        break
        return found

    def open_four_makers(self, side: int) -> set[int]:
        """Cells where ``side`` would make two wins at once (the threat a three carries)."""
        if self.k < 3:
            return set()
        owner, windows = self.owner, self.windows
        partner: dict[int, set[int]] = {}
        for w in self.level[side][self.k - 2]:
            pair = [cell for cell in windows[w] if not owner[cell]]
            if len(pair) == 2:
                a, b = pair
                partner.setdefault(a, set()).add(b)
                partner.setdefault(b, set()).add(a)
        return {cell for cell, others in partner.items() if len(others) >= 2}

    def makes_open_four_threat(self, side: int, cell: int) -> bool:
        """After ``side`` played ``cell``: can ``side`` now make two wins at once with one move?"""
        counts, other, want = self.counts[side], self.counts[3 - side], self.k - 2
        owner, windows, cell_windows = self.owner, self.windows, self.cell_windows
        for w in cell_windows[cell]:
            if counts[w] != want or other[w]:
                continue
            for e in windows[w]:
                if owner[e]:
                    continue
                partners: set[int] = set()
                for w2 in cell_windows[e]:
                    if counts[w2] == want and not other[w2]:
                        for c in windows[w2]:
                            if c != e and not owner[c]:
                                partners.add(c)
                if len(partners) >= 2:
                    return True
        return False

    def three_moves(self, side: int, focus: int | None = None) -> list[int]:
        """Cells after which ``side`` threatens to make two wins at once (k ≥ 4).

        With ``focus``, only cells sharing a window with that cell (the attacker's last move:
        threats that build on each other, as in Allis's dependency-based search).
        """
        if self.k < 4:
            return []
        owner, windows = self.owner, self.windows
        candidates = {cell for w in self.level[side][self.k - 3] for cell in windows[w] if not owner[cell]}
        if focus is not None:
            candidates &= {cell for w in self.cell_windows[focus] for cell in windows[w]}
        self.nodes += len(candidates)  # each cell tested counts as a position, as when it was placed to test it
        if self.nodes >= self.next_look:
            self._look()
        return [cell for cell in sorted(candidates) if self.makes_three(side, cell)]

    def makes_three(self, side: int, cell: int) -> bool:
        """:meth:`makes_open_four_threat` for ``cell`` not yet played (as if ``side`` had played it)."""
        counts, other, want = self.counts[side], self.counts[3 - side], self.k - 2
        owner, windows, cell_windows = self.owner, self.windows, self.cell_windows
        through = set(cell_windows[cell])
        for w in through:
            if counts[w] + 1 != want or other[w]:
                continue
            for e in windows[w]:
                if owner[e] or e == cell:
                    continue
                partners: set[int] = set()
                for w2 in cell_windows[e]:
                    if other[w2] or counts[w2] + (w2 in through) != want:
                        continue
                    for c in windows[w2]:
                        if c != e and c != cell and not owner[c]:
                            partners.add(c)
                if len(partners) >= 2:
                    return True
        return False

    def counter_threes(self, side: int, limit: int) -> list[int]:
        """Up to ``limit`` cells after which ``side`` has fours to make, in the most windows first.

        Such a move (a three of its own, open or closed) lets a defender answer a three of the
        attack with a four, so it can refute a win by threats (not one by fours).
        """
        if self.k < 4:
            return []
        owner, windows = self.owner, self.windows
        raised: dict[int, int] = {}
        for w in self.level[side][self.k - 3]:
            for cell in windows[w]:
                if not owner[cell]:
                    raised[cell] = raised.get(cell, 0) + 1
        return heapq.nsmallest(limit, raised, key=lambda c: (-raised[c], -self.cell_score(side, c), c))

    def potential(self, side: int, cell: int) -> int:
        """How much ``side`` builds at ``cell``: its marks in the open windows through it."""
        counts, other = self.counts[side], self.counts[3 - side]
        attack = self.tables.attack
        return sum(attack[counts[w]] for w in self.cell_windows[cell] if not other[w])

    # searches --------------------------------------------------------------------------
    def vcf(self, attacker: int, depth: int = _VCF_DEPTH, focus: int | None = None) -> int | None:
        """A first move of a win by continuous fours for ``attacker``, as if it were its move.

        With ``focus``, only fours sharing a window with that cell (the previous four).
        """
        defender = 3 - attacker
        wins = self.win_cells(attacker)
        if wins:
            return min(wins)
        blocks = self.win_cells(defender)
        if len(blocks) > 1 or depth <= 0:
            return None
        key = (self.hash, attacker) if focus is None else (self.hash, attacker + 2 + 4 * focus)
        if self.failed_vcf.get(key, -1) >= depth:
            return None
        moves = self.four_moves(attacker)
        if blocks:
            moves &= blocks
        if focus is not None:
            near = self.tables.related[focus]
            moves = {c for c in moves if c in near}
        for cell in sorted(moves, key=lambda c: (-self.potential(attacker, c), c)):
            self.play(cell, attacker)
            wins = self.completions(attacker, cell)
            if self.win_cells(defender):
                won = False  # they complete a line before we do
            elif len(wins) >= 2:
                won = True
            else:
                block = wins.pop()
                self.play(block, defender)
                won = self.vcf(attacker, depth - 1, cell) is not None
                self.undo(block, defender)
            self.undo(cell, attacker)
            if won:
                self.proof.add(cell)
                return cell
        self.failed_vcf[key] = depth
        return None

    def _attack_moves(self, attacker: int, focus: int | None, threes: bool, prefer: tuple[int, ...]) -> list[int]:
        """The attacker's fours (and, with ``threes``, its threes near ``focus``), the most promising
        first, the moves of ``prefer`` (refutations found earlier) before all."""
        moves = sorted(self.four_moves(attacker), key=lambda c: (-self.potential(attacker, c), c))
        if threes:
            fours = set(moves)
            moves += sorted((c for c in self.three_moves(attacker, focus) if c not in fours),
                            key=lambda c: (-self.potential(attacker, c), c))
        if prefer:
            first = [c for c in prefer if c in moves]
            moves = first + [c for c in moves if c not in first]
        return moves

    def vct(self, attacker: int, depth: int, focus: int | None = None, prefer: tuple[int, ...] = ()) -> int | None:
        """A first move of a win by fours and threes for ``attacker`` within ``depth`` of its moves.

        ``prefer``: first moves to try before the others (those that won in similar positions).
        """
        defender = 3 - attacker
        wins = self.win_cells(attacker)
        if wins:
            return min(wins)
        blocks = self.win_cells(defender)
        if len(blocks) > 1 or depth <= 0:
            return None
        if blocks:
            block = min(blocks)
            self.play(block, attacker)
            won = self._defender_loses(attacker, depth, block)  # forced by their four: costs no depth
            self.undo(block, attacker)
            if won:
                self.proof.add(block)
                return block
            return None
        makers = self.open_four_makers(attacker)
        if makers:
            self.proof.add(min(makers))
            return min(makers)
        key = (self.hash, attacker, focus)
        if self.failed_vct.get(key, -1) >= depth:
            return None
        found = self.vcf(attacker)
        if found is not None:
            return found
        moves = self._attack_moves(attacker, focus, depth > 1, prefer)
        for cell in moves:
            self.play(cell, attacker)
            won = self._defender_loses(attacker, depth - 1, cell)
            self.undo(cell, attacker)
            if won:
                self.proof.add(cell)
                return cell
        self.failed_vct[key] = depth
        return None

    def _defender_loses(self, attacker: int, depth: int, last: int) -> bool:
        """The defender is to move: does every answer still lose to ``attacker``'s threats?"""
        defender = 3 - attacker
        if self.win_cells(defender):
            return False
        wins = self.win_cells(attacker)
        if len(wins) >= 2:
            self.proof.update(wins)
            return True
        if wins:
            replies = wins
        else:
            if depth <= 0:
                return False
            makers = self.open_four_makers(attacker)
            if not makers:
                return False
            if self.vcf(defender) is not None:
                return False
            replies = self.defences(defender)
        counts, other = self.counts[attacker], self.counts[defender]
        cell_windows, low = self.cell_windows, self.k - 3

        def blocked(cell: int) -> tuple[int, int]:  # the reply that spoils most of the attacker's windows first
            return -sum(counts[w] for w in cell_windows[cell] if counts[w] >= low and not other[w]), cell

        for reply in sorted(replies, key=blocked):
            self.play(reply, defender)
            won = self.vct(attacker, depth, last) is not None
            self.undo(reply, defender)
            if not won:
                return False
        return True

    # proof-number search over threats ----------------------------------------------------------
    def pn_vct(self, attacker: int, depth: int, prefer: tuple[int, ...] = ()) -> int | None:
        """:meth:`vct` by proof-number search: the same tree (fours and threes, every defence), best first.

        Depth-first search spends most of its positions on the defender's many answers to threes
        deep in lines that fail; proof-number search (Allis) always expands the position that
        most cheaply proves or disproves the root, so the narrow forcing lines (fours: one
        answer each) are followed first and a deep win is found in a fraction of the positions.
        Disproved attacker positions go into the shared table of failed attacks.
        """
        root = _PNode(-1, depth, None)
        stack = [root]  # the path from the root; stack[i] is an attacker node for even i
        self._pn_search(root, stack, attacker, prefer)
        if root.dn:  # proved
            self._pn_collect(root, True)
            return root.extra[0] if root.children is None else min(
                (c for c in root.children if not c.pn), key=lambda c: c.cell).cell
        return None

    def _pn_search(self, root: _PNode, stack: list[_PNode], attacker: int, prefer: tuple[int, ...]) -> None:
        defender = 3 - attacker
        while root.pn and root.dn:
            node = stack[-1]
            attacking = len(stack) % 2 == 1
            if node.children is not None:  # go down to the most-proving child, with df-pn's thresholds
                children = node.children
                if attacking:
                    chosen, second = _two_best(children, _by_pn)
                    chosen.pn_limit = min(node.pn_limit, _widened(second))
                    chosen.dn_limit = node.dn_limit - node.dn + chosen.dn
                    self.play(chosen.cell, attacker)
                else:
                    chosen, second = _two_best(children, _by_dn)
                    chosen.dn_limit = min(node.dn_limit, _widened(second))
                    chosen.pn_limit = node.pn_limit - node.pn + chosen.pn
                    self.play(chosen.cell, defender)
                stack.append(chosen)
                continue
            self._pn_expand(node, attacking, attacker, prefer if len(stack) == 1 else ())
            # back up only while a node's numbers leave its thresholds (df-pn: no walk back to the root)
            while len(stack) > 1:
                top = stack[-1]
                if top.pn and top.dn and top.pn < top.pn_limit and top.dn < top.dn_limit:
                    break
                stack.pop()
                self.undo(top.cell, defender if len(stack) % 2 == 0 else attacker)
                parent = stack[-1]
                _pn_update(parent, len(stack) % 2 == 1)
                if len(stack) % 2 == 1:
                    if not parent.dn:
                        self.failed_vct[(self.hash, attacker, parent.last)] = parent.left
                    elif not parent.pn and parent.children:  # proved: kept for the same position in another order
                        saved, self.proof = self.proof, set()
                        self._pn_collect(parent, True)
                        first = min((c for c in parent.children if not c.pn), key=lambda c: c.cell).cell
                        self.proof.discard(first)
                        self.won_vct[(self.hash, attacker)] = (parent.left, (first, *sorted(self.proof)))
                        self.proof = saved

    def _pn_expand(self, node: _PNode, attacking: bool, attacker: int, prefer: tuple[int, ...]) -> None:
        """Give ``node`` (the position on the board) its children, or its value when it is decided."""
        defender = 3 - attacker
        left, last = node.left, node.last
        if attacking:
            wins = self.win_cells(attacker)
            if wins:
                node.proved((min(wins),))
                return
            blocks = self.win_cells(defender)
            if len(blocks) > 1 or left <= 0:
                node.disproved()
                return
            if blocks:
                node.expand([min(blocks)], left, None, 1)  # forced: costs no depth
                return
            makers = self.open_four_makers(attacker)
            if makers:
                node.proved((min(makers),))
                return
            won = self.won_vct.get((self.hash, attacker))
            if won is not None and won[0] <= left:
                node.proved(won[1])
                return
            key = (self.hash, attacker, last)
            if self.failed_vct.get(key, -1) >= left:
                node.disproved()
                return
            saved, self.proof = self.proof, set()
            found = self.vcf(attacker)
            cells, self.proof = self.proof, saved
            if found is not None:
                node.proved((found, *cells))
                return
            moves = self._attack_moves(attacker, last, left > 1, prefer)
            if not moves:
                self.failed_vct[key] = left
                node.disproved()
                return
            node.expand(moves, left - 1, None, 1)
            return
        if self.win_cells(defender):
            node.disproved()
            return
        wins = self.win_cells(attacker)
        if len(wins) >= 2:
            node.proved(tuple(wins))
            return
        if wins:
            node.expand(sorted(wins), left, node.cell, 0)
            return
        if left <= 0 or not self.open_four_makers(attacker) or self.vcf(defender) is not None:
            node.disproved()
            return
        counts, other = self.counts[attacker], self.counts[defender]
        cell_windows, low = self.cell_windows, self.k - 3

        def blocked(cell: int) -> tuple[int, int]:  # the reply that spoils most of the attacker's windows first
            return -sum(counts[w] for w in cell_windows[cell] if counts[w] >= low and not other[w]), cell

        node.expand(sorted(self.defences(defender), key=blocked), left, node.cell, 0)

    def _pn_collect(self, node: _PNode, attacking: bool) -> None:
        """Add the attacker's cells of a proved tree (its moves and winning cells) to :attr:`proof`."""
        self.proof.update(node.extra)
        if node.children is None:
            return
        if attacking:
            chosen = min((c for c in node.children if not c.pn), key=lambda c: c.cell)
            self.proof.add(chosen.cell)
            self._pn_collect(chosen, False)
        else:
            for child in node.children:
                self._pn_collect(child, True)

    # the pattern evaluation ------------------------------------------------------------------
    def candidates(self) -> list[int]:
        """Empty cells within two of a mark along a line (every cell, on an empty board)."""
        self._catch_up()
        if self.frontier:
            return sorted(self.frontier)
        return [c for c, mark in enumerate(self.owner) if not mark]

    def cell_score(self, side: int, cell: int) -> int:
        """The pattern score of ``side`` playing ``cell``: attack plus defence over its windows (kept up to date)."""
        self._catch_up()
        return self.packed[cell] & _LOW if side == 1 else self.packed[cell] >> _PACK

    def scores(self, side: int) -> list[int]:
        """Every cell's pattern score for ``side``."""
        self._catch_up()
        return [p & _LOW for p in self.packed] if side == 1 else [p >> _PACK for p in self.packed]

    def ranked(self, side: int) -> list[tuple[int, int]]:
        """(score, cell) for every candidate cell, best first (ties by cell)."""
        score = self.scores(side)
        scored = [(score[cell], cell) for cell in self.candidates()]
        scored.sort(key=lambda item: (-item[0], item[1]))
        return scored

    def defences(self, side: int) -> set[int]:
        """The cells where ``side`` may stop the other side's threes: the windows that carry them, its own fours."""
        attacker = 3 - side
        makers = self.open_four_makers(attacker)
        replies = set(makers)
        owner, windows, counts, other = self.owner, self.windows, self.counts[attacker], self.counts[side]
        want = self.k - 2
        for cell in makers:
            for w in self.cell_windows[cell]:
                if counts[w] == want and not other[w]:
                    replies.update(c for c in windows[w] if not owner[c])
        return replies | self.four_moves(side)

    def double_threat_cells(self, side: int) -> int:
        """How many cells give ``side`` threats in two directions at once (a four or three in each).

        A cell counts when it lies in open windows of k-3 or more of ``side``'s marks along two
        directions: playing it makes a four-three, a double three or a double four in the making.
        """
        if self.k < 4:
            return 0
        owner, windows, bit = self.owner, self.windows, self.tables.direction_bit
        directions: dict[int, int] = {}
        levels = self.level[side]
        for marks in (self.k - 3, self.k - 2):
            for w in levels[marks]:
                b = bit[w]
                for cell in windows[w]:
                    if not owner[cell]:
                        directions[cell] = directions.get(cell, 0) | b
        return sum(1 for d in directions.values() if d & (d - 1))

    def evaluate(self, side: int) -> int:
        """The position for ``side``, to move, when nobody can complete a line at once."""
        other = 3 - side
        if self.open_four_makers(side):
            return _WIN // 2  # two wins at once next move, which only fours could delay
        score = self.sums[side] * _TEMPO_PERCENT // 100 - self.sums[other]
        if self.open_four_makers(other):
            score -= _THREAT_PENALTY
        # crossing threats: the side to move can make one; several of the other side's cannot all be stopped
        score += _CROSSING_MINE * min(self.double_threat_cells(side), 2)
        score -= _CROSSING_THEIRS * min(self.double_threat_cells(other), 3)
        return score

    def moves_in_order(self, side: int, width: int, first: int | None = None) -> list[int]:
        """The ``width`` best moves for ``side`` (only the block, or only defences, when it must)."""
        blocks = self.win_cells(3 - side)
        if blocks:
            return sorted(blocks)
        self._catch_up()
        packed = self.packed
        if self.level[3 - side][self.k - 2] and self.open_four_makers(3 - side):
            cells = self.defences(side)
            width = max(width, 6)
        else:
            cells = self.frontier
        if side == 1:
            ordered = heapq.nsmallest(width, cells, key=lambda c: (-(packed[c] & _LOW), c))
        else:
            ordered = heapq.nsmallest(width, cells, key=lambda c: (-(packed[c] >> _PACK), c))
        if first is not None and first in cells:
            if first in ordered:
                ordered.remove(first)
            else:
                ordered.pop()
            ordered.insert(0, first)
        return ordered

    def alphabeta(self, side: int, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Negamax value for ``side`` to move, ``depth`` plies deep (forced blocks do not count)."""
        if self.win_cells(side):
            return _WIN - ply
        threats = self.win_cells(3 - side)
        if len(threats) >= 2:
            return -(_WIN - ply - 1)
        if depth <= 0 and not threats and (side != self.root or depth <= -_QUIESCENCE
                                           or not self.open_four_makers(3 - side) or self.open_four_makers(side)):
            # Past the horizon the searching side answers the opponent's three (its defences only,
            # for a few plies) rather than trust the penalty; its own threes keep their bonus.
            return self.evaluate(side)
        key = self.hash
        known = self.table.get(key)
        first = None
        if known is not None:
            known_depth, value, flag, first = known
            if known_depth >= depth and (flag == 0 or (flag > 0 and value >= beta) or (flag < 0 and value <= alpha)):
                return value
        start_alpha = alpha
        best, best_move = -_WIN * 2, None
        next_depth = depth if threats else depth - 1  # a forced block costs no depth
        for cell in self.moves_in_order(side, _WIDTH, first):
            self.play(cell, side)
            value = -self.alphabeta(3 - side, next_depth, -beta, -alpha, ply + 1)
            self.undo(cell, side)
            if value > best:
                best, best_move = value, cell
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        if best_move is None:
            return 0  # no move: the board is full
        if abs(best) < _WIN // 4:  # a forced result depends on the ply: kept out of the table
            flag = 1 if best >= beta else -1 if best <= start_alpha else 0
            self.table[key] = (depth, best, flag, best_move)
        else:
            self.table[key] = (-1, best, 0, best_move)
        return best


class StrongPlayer:
    """Threat-space search (VCF, VCT) for wins and defences, else the best pattern move."""

    name = "strong"

    def __init__(self, rng: random.Random | None = None, *, max_nodes: int | None = None,
                 max_seconds: float | None = None, budget: Budget | None = None) -> None:
        self.rng = make_rng(rng)
        if budget is not None and (max_nodes is not None or max_seconds is not None):
            raise InvalidBudgetError("give the strong player either budget= or max_nodes= and max_seconds=, not both")
        self.budget = budget if budget is not None else Budget(
            DEFAULT_MAX_NODES if max_nodes is None else max_nodes,
            DEFAULT_MAX_SECONDS if max_seconds is None else max_seconds)
        self.last_reason = ""  # why the last move was chosen: "win", "block", "vcf", ... (for tests and docs)

    def choose(self, board: Board) -> int:
        return self.choose_within(board, self.budget.renewed())

    def choose_within(self, board: Board, budget: Budget) -> int:
        """:meth:`choose` on ``budget`` (spent by this move) instead of a fresh copy of the player's own."""
        cells = self._candidates(board, budget)
        return cells[0] if len(cells) == 1 else cells[self.rng.randrange(len(cells))]

    def candidates(self, board: Board) -> tuple[int, ...]:
        """The cells :meth:`choose` picks among: the solver's best moves, or the one cell the search chose."""
        return self._candidates(board, self.budget.renewed())

    def _candidates(self, board: Board, budget: Budget) -> tuple[int, ...]:
        ensure_playable(board)
        solved = self._solved(board, budget)
        if solved:
            self.last_reason = "solved"
            return solved
        cell, self.last_reason = _Chooser(board, budget).choose()
        return (cell,)

    @staticmethod
    def _solved(board: Board, budget: Budget) -> tuple[int, ...] | None:
        """The exact solver's best moves when the position is small enough and it finishes in time."""
        if board.size - board.ply > SOLVE_EMPTY and (board.rows, board.cols, board.k) != (3, 3, 3):
            return None
        from noughts import solver

        seconds = budget.seconds_left()
        share = budget.limited(nodes=_share(budget.nodes_left(), 4), seconds=None if seconds is None else seconds / 4)
        try:
            return solver.best_moves(board, budget=share)
        except BudgetExceeded:
            return None
        finally:
            _charge(budget, share)


def _first_reply(board: Board) -> int:
    """The second player's first move: diagonally next to the first mark, on the side of the centre.

    Gomoku's second player answers next to the first mark (an "indirect" opening when diagonal): a
    reply two cells away, which the evaluation favours for the lines it leaves O, loses most games."""
    (mark,) = (cell for cell in range(board.size) if board[cell] is not None)
    row, col = divmod(mark, board.cols)
    centre_row, centre_col = (board.rows - 1) / 2, (board.cols - 1) / 2

    def next_to(steps: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
        return [(r, c) for dr, dc in steps if 0 <= (r := row + dr) < board.rows and 0 <= (c := col + dc) < board.cols]

    cells = next_to(((-1, -1), (-1, 1), (1, -1), (1, 1))) or next_to(((-1, 0), (1, 0), (0, -1), (0, 1)))  # 1×n
    r, c = min(cells, key=lambda rc: ((rc[0] - centre_row) ** 2 + (rc[1] - centre_col) ** 2, rc))
    return r * board.cols + c


def _share(left: int | None, parts: int) -> int | None:
    return None if left is None else left // parts


def _charge(budget: Budget, part: Budget) -> None:
    """Count what ``part`` spent against ``budget`` (never raising: the caller looks itself)."""
    budget.spent += part.spent


class _Chooser:
    """One move's search: the phases of the module docstring, each on a share of the budget."""

    def __init__(self, board: Board, budget: Budget) -> None:
        self.board = board
        self.budget = budget
        self.me = 1 if board.ply % 2 == 0 else 2
        self.them = 3 - self.me
        self.threat_depth = 0  # the depth of the opponent's VCT, when one was found
        self.searched_depth = 0  # the deepest alpha-beta iteration finished
        self.proof: set[int] = set()  # the cells of the opponent's forced win, when one was found
        self.failed_vcf: dict[tuple[int, int], int] = {}
        self.failed_vct: dict[tuple[int, int, int | None], int] = {}
        self.won_vct: dict[tuple[int, int], tuple[int, tuple[int, ...]]] = {}

    def _state(self, parts: int, *, scored: bool = False) -> _State:
        left = self.budget.nodes_left()
        seconds = self.budget.seconds_left()
        state = _State(self.board, self.budget.limited(
            nodes=_share(left, parts), seconds=None if seconds is None else seconds / parts), scored=scored)
        self._share_tables(state)
        return state

    def _share_tables(self, state: _State) -> None:
        """Every search of this move shares the tables of failed attacks: their keys are whole positions."""
        state.failed_vcf, state.failed_vct, state.won_vct = self.failed_vcf, self.failed_vct, self.won_vct

    def _run(self, state: _State, search: object) -> object:
        try:
            return search()  # type: ignore[operator]
        except _OutOfBudget:
            return None
        finally:
            _charge(self.budget, state.budget)

    def choose(self) -> tuple[int, str]:
        me, them = self.me, self.them
        if self.board.k == 1:
            return self.board.legal_moves[0], "win"  # every cell completes a line of one
        state = _State(self.board, Budget())
        wins = state.win_cells(me)
        if wins:
            return min(wins), "win"
        ranked = state.ranked(me)
        blocks = state.win_cells(them)
        if blocks:
            return max(blocks, key=lambda c: (state.cell_score(me, c), -c)), "block"
        if self.board.ply == 0:
            board = self.board
            return (board.rows - 1) // 2 * board.cols + (board.cols - 1) // 2, "centre"
        if self.board.ply == 1 and self.board.k >= _FIRST_REPLY_K:
            return _first_reply(self.board), "reply"
        # our win by fours
        vcf_state = self._state(10)
        found = self._run(vcf_state, lambda: vcf_state.vcf(me))
        if isinstance(found, int):
            return found, "vcf"
        # our win by threats, deepening
        found, _ = self._deepening_vct(me, 5, _OWN_DFS_VCT_DEPTH)
        if found is not None:
            return found, "vct"
        # their win by fours or threats, were it their move
        their_state = self._state(8)
        theirs = self._run(their_state, lambda: their_state.vcf(them))
        self.proof = their_state.proof
        reason, self.threat_depth = "defend-vcf", 0
        if not isinstance(theirs, int):
            theirs, self.threat_depth = self._deepening_vct(them, 3)
            reason = "defend-vct"
        if not isinstance(theirs, int):
            return self._searched([cell for _, cell in ranked[:_ROOT_WIDTH]]), "search"
        return self._defend(ranked, theirs), reason

    def _deepening_vct(self, attacker: int, parts: int, dfs_depth: int = _DFS_VCT_DEPTH) -> tuple[int | None, int]:
        """A VCT for ``attacker`` by iterative deepening on a share of the budget, and its depth."""
        state = self._state(parts)
        found: list[tuple[int, int]] = []

        def deepening() -> None:
            for depth in range(2, _MAX_VCT_DEPTH + 1):
                state.proof.clear()
                if depth <= dfs_depth:
                    move = state.vct(attacker, depth)
                else:  # deeper wins are found by proof-number search straight at the deepest depth
                    depth = _MAX_VCT_DEPTH
                    move = state.pn_vct(attacker, depth)
                self.proof = state.proof
                if move is not None:
                    found.append((move, depth))
                    return

        self._run(state, deepening)
        return found[0] if found else (None, 0)

    def _searched(self, options: list[int]) -> int:
        """The best of ``options`` by iterative-deepening alpha-beta on what is left of the budget."""
        if len(options) == 1:
            return options[0]
        me, them = self.me, self.them
        state = self._state(1, scored=True)
        state.root = me
        best = options[0]

        def deepening() -> None:
            nonlocal best, options
            for depth in range(1, _MAX_DEPTH + 1):
                scores: dict[int, int] = {}
                alpha = -_WIN * 2
                for cell in options:
                    state.play(cell, me)
                    value = -state.alphabeta(them, depth - 1, -_WIN * 2, -alpha, 1)
                    state.undo(cell, me)
                    scores[cell] = value
                    alpha = max(alpha, value)
                options = sorted(options, key=lambda c: -scores[c])  # stable: ties keep the pattern order
                best = options[0]
                self.searched_depth = depth
                if abs(scores[best]) >= _WIN // 4:
                    return  # a forced result either way: deeper will not change it

        self._run(state, deepening)
        return best

    def _defend(self, ranked: list[tuple[int, int]], their_first: int) -> int:
        """The best move after which the opponent has no forced win (else the one that holds longest).

        Candidates, in order: the opponent's first move, the other empty cells of its proof
        (where the attack can be broken), our fours (they gain a tempo: the opponent's block is
        played), then the best pattern cells. They are checked breadth first: the opponent's
        VCF after each, then its VCT to depth 2 and at 7, each depth for the candidates that held
        every shallower check, each on its own search state so the tables of failed attacks carry
        over from one depth to the next. Most defences fail at a shallow depth, cheaply; a shallow
        round gets at most half of what is left, in one pass (a check cut short leaves its
        candidate below those that held), so the deepest checks are not starved. Seven eighths of
        what is left of the budget is spent so; the rest chooses among the candidates that held
        deepest.
        """
        me, them = self.me, self.them
        state = _State(self.board, Budget())
        owner = state.owner

        def order(cell: int) -> tuple[int, int]:
            return -state.cell_score(me, cell), cell

        options = [their_first]
        proof = sorted((cell for cell in self.proof if not owner[cell]), key=order)
        pattern = [cell for _, cell in ranked[:_DEFENCE_CANDIDATES]]
        counters = state.counter_threes(me, _COUNTER_THREES) if self.threat_depth else []
        for cell in sorted(state.four_moves(me), key=order) + counters + proof + pattern:
            if cell not in options:
                options.append(cell)
        left, seconds = self.budget.nodes_left(), self.budget.seconds_left()
        checks = self.budget.limited(nodes=None if left is None else left * 7 // 8,
                                     seconds=None if seconds is None else seconds * 7 / 8)
        held: dict[int, int] = {}  # candidate: the depth of the opponent's attacks it is known to stop
        standing: dict[int, _State] = {}

        def trial_after(cell: int) -> _State | None:
            """The position after our ``cell`` (and their forced block, if it makes a four); None: they win at once."""
            trial = _State(self.board, checks)
            self._share_tables(trial)
            trial._place(cell, me)
            if trial.win_cells(them):  # a move that leaves their four unblocked
                return None
            fours = trial.completions(me, cell)
            if len(fours) == 1:  # a four of ours: they must block, then still find nothing
                trial._place(fours.pop(), them)
            return trial

        for cell in options:
            trial = trial_after(cell)
            if trial is None:
                held[cell] = -_MAX_VCT_DEPTH - 2
                continue
            held[cell] = 0
            standing[cell] = trial
        # VCF and VCT to depth 2 are cheap; then straight to the depth of the attack found (a defence
        # that holds only below it is no defence), trying first the attacks that refuted other defences.
        depths = [1, *range(2, _DFS_VCT_DEPTH + 1)] + ([_MAX_VCT_DEPTH] if _DFS_VCT_DEPTH < _MAX_VCT_DEPTH else [])
        refutations: dict[int, int] = {}  # the opponent's first moves that refuted a defence: how often
        try:
            for before, depth in zip([0, *depths], depths, strict=False):
                # the defences that held every check so far
                pending = [cell for cell in standing if held[cell] == before] or list(standing)
                last = depth == depths[-1]
                left = checks.nodes_left()
                # a shallow round gets half of what is left, so the deepest checks are not starved
                round_budget = checks if last or left is None else checks.limited(nodes=left // 2)
                while pending:  # each pass shares what is left equally; in the deepest round those cut short try again
                    cut_short = []
                    for index, cell in enumerate(pending):
                        if checks.exhausted:
                            raise _OutOfBudget
                        trial = standing[cell]
                        left = round_budget.nodes_left()
                        trial.budget = round_budget.limited(
                            nodes=None if left is None else max(1, left // (len(pending) - index)))
                        trial.counted = trial.nodes
                        prefer = tuple(sorted(refutations, key=lambda c: (-refutations[c], c))[:3])
                        try:
                            found = (trial.vcf(them) if depth == 1 else trial.vct(them, depth, prefer=prefer)
                                     if depth <= _DFS_VCT_DEPTH else trial.pn_vct(them, depth, prefer=prefer))
                        except _OutOfBudget:
                            rebuilt = trial_after(cell)  # the interrupted search left its moves on the board
                            assert rebuilt is not None  # it was standing: they had no win at once
                            standing[cell] = rebuilt
                            cut_short.append(cell)
                            continue
                        finally:
                            _charge(round_budget, trial.budget)
                            if round_budget is not checks:
                                _charge(checks, trial.budget)
                        if found is None:
                            held[cell] = depth
                        else:  # refuted: below every candidate still standing, deeper refutations first
                            held[cell] = depth - _MAX_VCT_DEPTH - 2
                            del standing[cell]
                            refutations[found] = refutations.get(found, 0) + 1
                    pending = cut_short if last else []  # cut short in a shallow round: below those that held
                if depth >= 2 and len(standing) <= 1:
                    break  # one defence left (or none): no need to know how deep it holds
        except _OutOfBudget:
            pass
        finally:
            _charge(self.budget, checks)
        best = max(held.values())
        return self._searched([cell for cell in options if held[cell] == best])
