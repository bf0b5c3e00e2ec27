"""``minimax``: the EV3 tic-tac-toe robot's search (seed 003), and a bounded version for big boards.

**Boards of up to 9 cells (3×3)** — exactly the robot's ``bestRobotMove``: every legal move is
scored by a full minimax with depth-aware values from the robot's side — a win scores
``100 - depth``, a loss ``-100 + depth``, a draw 0, where depth 0 is the position right after
the candidate move — and the lowest-numbered move with the best score wins (the robot only
replaces its choice on a strictly greater score). The robot prunes with alpha-beta, but it
opens a full window for every root move, so its scores are exact; we compute the same exact
scores with a memo instead, which is faster and gives the same move.

**Bigger boards** (any rows × cols, k in a row) — exhaustive search is out of reach, so:

1. complete our own k in a row if we can (the lowest-numbered such cell);
2. else fill the cell where the opponent would complete k in a row;
3. else iterative-deepening alpha-beta (negamax) over the empty cells next to a mark (every
   empty cell on boards of up to 16 cells), scored at the horizon by open lines: a line the
   other side has not blocked is worth 4^marks, ours plus and theirs minus; a side that can
   complete a line on its move has won, and a side facing such a threat may only block it.
   Inner nodes try their ``branching`` (10) most promising cells. A node or time budget
   (``max_nodes``, ``max_seconds``, or one :class:`~noughts.budget.Budget` for each move) stops
   the search and the move of the deepest finished iteration is played, so an answer always
   comes, and it is always legal.

There is no randomness: equal scores keep the earlier cell in the move order. The node
budget (100 000, about half a second) normally stops the search before the clock (one
second) does, so the same position gives the same move on any machine that is fast enough.
"""

from __future__ import annotations

import random
from typing import ClassVar

from noughts.board import Board, Geometry, keep_newest
from noughts.budget import Budget
from noughts.errors import BudgetExceeded, InvalidBudgetError, UnsupportedBoardError
from noughts.players.base import completing_cells, empty_cells, ensure_playable, own_and_opponent

Table = list[list[int]]  # indexed [own marks in a line][opponent marks in it]

__all__ = ["MinimaxPlayer", "robot_scores"]

EXACT_MAX_CELLS = 9  # 3^9 positions at most: the exact memo stays small
ROBOT_WIN = 100
SEARCH_WIN = 1_000_000  # bigger than any heuristic score
INFINITY = 10 * SEARCH_WIN
SMALL_BOARD = 16  # up to 4×4 every empty cell is a candidate, not only those next to a mark
DEFAULT_MAX_NODES = 100_000
DEFAULT_MAX_SECONDS = 1.0
_LOOK_WORK = 50_000  # cells of work between looks at the budget: 1,024 nodes on 7×7, 73 on 26×26

CACHE_SHAPES = 4
"""Shapes whose exact memo and search tables are kept (least recently used first out)."""
_exact_memo: dict[Geometry, dict[tuple[int, int], int]] = {}  # least recently used first


def _toward_zero(score: int) -> int:
    """A score seen one ply further from the root (a win or loss one move later)."""
    return score - 1 if score > 0 else score + 1 if score < 0 else 0


def _move_score(geometry: Geometry, me: int, them: int, cell: int, memo: dict[tuple[int, int], int]) -> int:
    """``me`` plays ``cell``: the robot's score, depth 0 being the position after the move."""
    mine = me | 1 << cell
    for line in geometry.lines_through[cell]:
        if mine & line == line:
            return ROBOT_WIN
    return -_side_value(geometry, them, mine, memo)


def _side_value(geometry: Geometry, me: int, them: int, memo: dict[tuple[int, int], int]) -> int:
    """Value for ``me`` (to move, nobody has won yet) with this position at depth 0."""
    key = (me, them)
    known = memo.get(key)
    if known is not None:
        return known
    best = 0 if not geometry.full & ~(me | them) else -INFINITY  # a full board is a draw
    for cell in geometry.moves(me | them):
        best = max(best, _toward_zero(_move_score(geometry, me, them, cell, memo)))
    memo[key] = best
    return best


def robot_scores(board: Board) -> dict[int, int]:
    """``bestRobotMove``'s score for every legal move (boards of up to 9 cells)."""
    ensure_playable(board)
    if board.size > EXACT_MAX_CELLS:
        raise UnsupportedBoardError(
            f"exact robot scores are only computed for boards of up to {EXACT_MAX_CELLS} cells, "
            f"not {board.rows}×{board.cols}")
    memo = _exact_memo.pop(board.geometry, None) or {}
    _exact_memo[board.geometry] = memo  # now the most recent
    keep_newest(_exact_memo, CACHE_SHAPES)
    me, them = own_and_opponent(board)
    return {cell: _move_score(board.geometry, me, them, cell, memo) for cell in board.legal_moves}


class _OutOfBudget(Exception):
    """The search used up its nodes or time."""


class _Tables:
    """Per-geometry lookups for the bounded search.

    Tables indexed ``[a][b]`` are for a line holding ``a`` marks of side 1 (the side to move at
    the root) and ``b`` of side 2; the search reads them instead of recomputing line values.
    """

    _cache: ClassVar[dict[Geometry, _Tables]] = {}

    def __init__(self, geometry: Geometry) -> None:
        index_of = {mask: i for i, mask in enumerate(geometry.line_masks)}
        self.lines_of_cell = tuple(tuple(index_of[m] for m in masks) for masks in geometry.lines_through)
        rows, cols = geometry.rows, geometry.cols
        self.neighbours = tuple(
            tuple(r * cols + c for r in range(max(0, row - 1), min(rows, row + 2))
                  for c in range(max(0, col - 1), min(cols, col + 2)) if (r, c) != (row, col))
            for row, col in (divmod(cell, cols) for cell in range(geometry.size)))
        k = geometry.k
        weight = [0] + [4 ** marks for marks in range(1, k + 1)]
        span = range(k + 1)

        def value(a: int, b: int) -> int:  # an open line is worth 4^marks to its owner
            return weight[a] if b == 0 else -weight[b] if a == 0 else 0

        def threat(mine: int, theirs: int) -> int:  # one more mark completes it
            return 1 if mine == k - 1 and theirs == 0 else 0

        def promise(mine: int, theirs: int) -> int:  # what a move builds plus what it spoils
            build = weight[mine + 1] - weight[mine] if theirs == 0 and mine < k else 0
            spoil = weight[theirs + 1] - weight[theirs] if mine == 0 and theirs < k else 0
            return build + spoil

        # Changes when side 1 (…_by_1) or side 2 (…_by_2) adds a mark to the line.
        self.value_by_1 = [[value(a + 1, b) - value(a, b) if a < k else 0 for b in span] for a in span]
        self.value_by_2 = [[value(a, b + 1) - value(a, b) if b < k else 0 for b in span] for a in span]
        self.threat1_by_1 = [[threat(a + 1, b) - threat(a, b) if a < k else 0 for b in span] for a in span]
        self.threat2_by_1 = [[threat(b, a + 1) - threat(b, a) if a < k else 0 for b in span] for a in span]
        self.threat1_by_2 = [[threat(a, b + 1) - threat(a, b) if b < k else 0 for b in span] for a in span]
        self.threat2_by_2 = [[threat(b + 1, a) - threat(b, a) if b < k else 0 for b in span] for a in span]
        self.promise_for_1 = [[promise(a, b) for b in span] for a in span]
        self.promise_for_2 = [[promise(b, a) for b in span] for a in span]

    @classmethod
    def get(cls, geometry: Geometry) -> _Tables:
        cache = cls._cache
        tables = cache.pop(geometry, None) or cls(geometry)
        cache[geometry] = tables  # now the most recent
        keep_newest(cache, CACHE_SHAPES)
        return tables


class _Search:
    """Alpha-beta over a mutable copy of the position, with incremental line counts."""

    def __init__(self, board: Board, budget: Budget, branching: int) -> None:
        geometry = board.geometry
        self.tables = _Tables.get(geometry)
        self.k = geometry.k
        self.size = geometry.size
        self.every_cell = geometry.size <= SMALL_BOARD
        self.branching = branching
        self.budget = budget
        self.look_every = max(1, min(1024, _LOOK_WORK // geometry.size))  # a big board's node costs more
        self.nodes = 0
        self.counted = 0  # nodes already added to the budget
        self.next_look = 0
        n_lines = len(geometry.lines)
        self.owner = [0] * self.size  # 0 empty, 1 or 2: the side (1 = side to move at the root)
        self.marks1 = [0] * n_lines  # side 1's marks on each line
        self.marks2 = [0] * n_lines
        self.threats = [0, 0, 0]  # per side: lines it completes with one more mark
        self.near = [0] * self.size  # marks among a cell's neighbours
        self.frontier: set[int] = set()  # empty cells next to a mark
        self.empty_count = self.size
        self.score = 0  # heuristic from side 1's point of view
        own, opponent = own_and_opponent(board)
        for cell in empty_cells(own):
            self.play(cell, 1)
        for cell in empty_cells(opponent):
            self.play(cell, 2)

    def _side_tables(self, side: int) -> tuple[Table, Table, Table, list[int]]:
        """The score tables for a move by ``side`` and that side's per-line mark counts."""
        tables = self.tables
        if side == 1:
            return tables.value_by_1, tables.threat1_by_1, tables.threat2_by_1, self.marks1
        return tables.value_by_2, tables.threat1_by_2, tables.threat2_by_2, self.marks2

    def play(self, cell: int, side: int) -> None:
        tables, marks1, marks2 = self.tables, self.marks1, self.marks2
        value, threat1, threat2, counts = self._side_tables(side)
        score = threats1 = threats2 = 0
        for line in tables.lines_of_cell[cell]:
            a, b = marks1[line], marks2[line]
            score += value[a][b]
            threats1 += threat1[a][b]
            threats2 += threat2[a][b]
            counts[line] += 1
        self.score += score
        self.threats[1] += threats1
        self.threats[2] += threats2
        self.owner[cell] = side
        self.empty_count -= 1
        self.frontier.discard(cell)
        near, owner, frontier = self.near, self.owner, self.frontier
        for neighbour in tables.neighbours[cell]:
            near[neighbour] += 1
            if not owner[neighbour]:
                frontier.add(neighbour)

    def undo(self, cell: int, side: int) -> None:
        tables, marks1, marks2 = self.tables, self.marks1, self.marks2
        value, threat1, threat2, counts = self._side_tables(side)
        score = threats1 = threats2 = 0
        for line in tables.lines_of_cell[cell]:
            counts[line] -= 1
            a, b = marks1[line], marks2[line]
            score += value[a][b]
            threats1 += threat1[a][b]
            threats2 += threat2[a][b]
        self.score -= score
        self.threats[1] -= threats1
        self.threats[2] -= threats2
        near, frontier = self.near, self.frontier
        for neighbour in tables.neighbours[cell]:
            near[neighbour] -= 1
            if not near[neighbour]:
                frontier.discard(neighbour)
        self.owner[cell] = 0
        self.empty_count += 1
        if near[cell]:
            frontier.add(cell)

    def candidate_cells(self) -> list[int]:
        if self.every_cell or not self.frontier:
            return [c for c in range(self.size) if not self.owner[c]]
        return sorted(self.frontier)

    def completes(self, cell: int, side: int) -> bool:
        """Would ``side`` playing ``cell`` make k in a row?"""
        mine, theirs = (self.marks1, self.marks2) if side == 1 else (self.marks2, self.marks1)
        need = self.k - 1
        return any(mine[line] == need and theirs[line] == 0 for line in self.tables.lines_of_cell[cell])

    def legal_choices(self, side: int) -> list[int]:
        """Candidate cells; only the blocks when the opponent threatens to complete a line."""
        cells = self.candidate_cells()
        if self.threats[3 - side]:
            blocks = [c for c in cells if self.completes(c, 3 - side)]
            if blocks:
                return blocks
        return cells

    def ordered_moves(self, side: int) -> list[int]:
        """Candidate cells, most promising first."""
        cells = self.legal_choices(side)
        promise = self.tables.promise_for_1 if side == 1 else self.tables.promise_for_2
        marks1, marks2, lines_of_cell = self.marks1, self.marks2, self.tables.lines_of_cell
        scored = [(-sum(promise[marks1[line]][marks2[line]] for line in lines_of_cell[cell]), cell)
                  for cell in cells]
        scored.sort()
        return [cell for _, cell in scored]

    def look(self) -> None:
        """Spend the nodes searched since the last look; :class:`_OutOfBudget` once it is gone."""
        budget = self.budget
        try:
            budget.check(self.nodes - self.counted)
        except BudgetExceeded:
            raise _OutOfBudget from None
        self.counted = self.nodes
        left = budget.nodes_left()
        self.next_look = self.nodes + (self.look_every if left is None else min(self.look_every, left))

    def negamax(self, depth: int, alpha: int, beta: int, side: int, ply: int) -> int:
        self.nodes += 1
        if self.nodes >= self.next_look:  # reading the clock every node would cost too much
            self.look()
        if self.threats[side]:
            return SEARCH_WIN - (ply + 1)  # we complete a line with our next move
        if not self.empty_count:
            return 0
        if depth == 0:
            return self.score if side == 1 else -self.score
        if depth == 1:
            return self._best_leaf(side, ply)
        best = -INFINITY
        for cell in self.ordered_moves(side)[: self.branching]:
            self.play(cell, side)
            value = -self.negamax(depth - 1, -beta, -alpha, 3 - side, ply + 1)
            self.undo(cell, side)
            if value > best:
                best = value
                alpha = max(alpha, value)
                if alpha >= beta:
                    break
        return best

    def _best_leaf(self, side: int, ply: int) -> int:
        """One ply from the horizon: score every reply from the line tables, without playing it."""
        tables, marks1, marks2 = self.tables, self.marks1, self.marks2
        if side == 1:
            value, their_threat, sign = tables.value_by_1, tables.threat2_by_1, 1
        else:
            value, their_threat, sign = tables.value_by_2, tables.threat1_by_2, -1
        their_threats = self.threats[3 - side]
        cells = self.legal_choices(side)
        self.nodes += len(cells)
        if self.empty_count == 1:
            return 0  # our move fills the board (a win would have been found before)
        best = -INFINITY
        for cell in cells:
            score, threats = self.score, their_threats
            for line in tables.lines_of_cell[cell]:
                a, b = marks1[line], marks2[line]
                score += value[a][b]
                threats += their_threat[a][b]
            leaf = -(SEARCH_WIN - (ply + 2)) if threats else sign * score  # their threat: they win
            if leaf > best:
                best = leaf
        return best


class MinimaxPlayer:
    """The robot's ``bestRobotMove`` on 3×3; bounded alpha-beta on bigger boards."""

    name = "minimax"

    def __init__(self, rng: random.Random | None = None, *, max_nodes: int | None = None,
                 max_seconds: float | None = None, branching: int = 10, budget: Budget | None = None) -> None:
        self.rng = rng  # unused: the search is deterministic, but every player takes one
        if budget is not None and (max_nodes is not None or max_seconds is not None):
            raise InvalidBudgetError("give the minimax player either budget= or max_nodes= and max_seconds=, not both")
        # a template: each move searches on a fresh copy
        self.budget = budget if budget is not None else Budget(
            DEFAULT_MAX_NODES if max_nodes is None else max_nodes,
            DEFAULT_MAX_SECONDS if max_seconds is None else max_seconds)
        self.branching = branching
        self.last_depth = 0  # deepest finished iteration of the last bounded search (0: none needed)

    @property
    def max_nodes(self) -> int | None:
        return self.budget.nodes

    @property
    def max_seconds(self) -> float | None:
        return self.budget.seconds

    def choose(self, board: Board) -> int:
        ensure_playable(board)
        if board.size <= EXACT_MAX_CELLS:
            scores = robot_scores(board)
            best_cell, best_score = -1, -INFINITY
            for cell, score in scores.items():  # ascending cells; only a greater score replaces
                if score > best_score:
                    best_cell, best_score = cell, score
            return best_cell
        return self._bounded_choice(board)

    def _bounded_choice(self, board: Board) -> int:
        self.last_depth = 0
        own, opponent = own_and_opponent(board)
        empty = board.geometry.full & ~(own | opponent)
        for mine, theirs in ((own, opponent), (opponent, own)):  # win, else block
            urgent = completing_cells(board, mine, theirs) & empty
            if urgent:
                return empty_cells(urgent)[0]
        if board.ply == 0:  # the centre (the top-left one of the middle cells when there are several)
            return (board.rows - 1) // 2 * board.cols + (board.cols - 1) // 2
        search = _Search(board, self.budget.renewed(), self.branching)
        moves = search.ordered_moves(1)
        best = moves[0]  # the most promising cell, in case not even depth 1 finishes
        for depth in range(1, search.empty_count + 1):
            try:
                scores = self._root_scores(search, moves, depth)
            except _OutOfBudget:
                break
            self.last_depth = depth
            # Best first for the next iteration; the sort is stable, so ties keep their order.
            moves = sorted(moves, key=lambda cell: -scores[cell])
            best = moves[0]
            if abs(scores[best]) > SEARCH_WIN // 2:  # a forced win, or every move loses
                break
        return best

    @staticmethod
    def _root_scores(search: _Search, moves: list[int], depth: int) -> dict[int, int]:
        scores: dict[int, int] = {}
        alpha = -INFINITY
        for cell in moves:
            search.play(cell, 1)
            # Later moves only need to show they are no better than the best so far (alpha).
            score = -search.negamax(depth - 1, -INFINITY, -alpha, 2, 1)
            search.undo(cell, 1)
            scores[cell] = score
            alpha = max(alpha, score)
        return scores
