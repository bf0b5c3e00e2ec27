"""``mdttt``: the win-matrix method of Marco Colli's MD_TTT Arduino library (seed 001).

Only 3×3 with 3 in a row. The game keeps one sum per line (8 lines): +1 for each of the
player's own marks, −1 for each of the opponent's. For every empty cell it imagines the move
and counts, over all 8 lines, how many sums become own-3, own-2, own-1, opp-1 and opp-2
(a sum of ±1 may also be a line holding two of one side and one of the other). Then it tries
these modes in order; the first mode with any candidate decides:

0. some own-3 (a win): the highest-numbered such cell (the library keeps the last one found);
1. own-2 > 0 with no opp-2 and no opp-1: the most own-2;
2. own-2 > 0 with no opp-2: the most own-2, then the fewest opp-1;
3. own-1 > 0 with no opp-2: the most own-1, then the fewest opp-1;
4. own-1 > 0: the most own-1, then the fewest opp-1.

Cells still tied are chosen at random (uniformly). The library instead walks the cells in
order and, at each cell tied with the best so far, flips a coin (``micros() & 7 > 3``) to keep
the old one or take the new one, which favours later cells: of n tied cells the last wins
half the time and the first only 1/2ⁿ⁻¹. ``MdtttPlayer(rng, coin_flip=True)`` does that.

If no mode had a candidate (no empty cell leaving any own-1 line) the library would keep
trying mode 4 for ever and hang; this player would then pick any empty cell at random
(mode 5). No position of a real game gets there: the tests check all 4520 of them.
"""

from __future__ import annotations

import random
from typing import NamedTuple

from noughts.board import Board
from noughts.players.base import ensure_classic_board, ensure_playable, make_rng, own_and_opponent

__all__ = ["FALLBACK_MODE", "MdtttDecision", "MdtttPlayer", "cell_counts"]

FALLBACK_MODE = 5  # no mode had a candidate: any empty cell


class LineCounts(NamedTuple):
    """How many of the 8 line sums have each value after an imagined move."""

    own3: int
    own2: int
    own1: int
    opp1: int
    opp2: int


class MdtttDecision(NamedTuple):
    """The mode that decided and the cells tied under it (ascending)."""

    mode: int
    cells: tuple[int, ...]


def cell_counts(board: Board, cell: int) -> LineCounts:
    """The counts after the side to move imagines playing ``cell``."""
    own, opponent = own_and_opponent(board)
    tally = {3: 0, 2: 0, 1: 0, -1: 0, -2: 0}
    own |= 1 << cell
    for mask in board.geometry.line_masks:
        line_sum = (own & mask).bit_count() - (opponent & mask).bit_count()
        if line_sum in tally:
            tally[line_sum] += 1
    return LineCounts(tally[3], tally[2], tally[1], tally[-1], tally[-2])


def _mode_key(mode: int, c: LineCounts) -> tuple[int, int] | None:
    """The cell's key under ``mode`` (bigger is better), or ``None`` if it does not qualify."""
    if mode == 1:
        return (c.own2, 0) if c.own2 and not c.opp2 and not c.opp1 else None
    if mode == 2:  # most own-2, then fewest opp-1
        return (c.own2, -c.opp1) if c.own2 and not c.opp2 else None
    if mode == 3:  # most own-1, then fewest opp-1
        return (c.own1, -c.opp1) if c.own1 and not c.opp2 else None
    return (c.own1, -c.opp1) if c.own1 else None


class MdtttPlayer:
    """MD_TTT's ``doAutoMove``: score every empty cell with the win matrix, try five modes."""

    name = "mdttt"

    def __init__(self, rng: random.Random | None = None, *, coin_flip: bool = False) -> None:
        self.rng = make_rng(rng)
        self.coin_flip = coin_flip

    def decide(self, board: Board) -> MdtttDecision:
        """Which mode decides and which cells it leaves tied."""
        ensure_classic_board(board, self.name)
        ensure_playable(board)
        counts = {cell: cell_counts(board, cell) for cell in board.legal_moves}
        wins = [cell for cell, c in counts.items() if c.own3]
        if wins:
            return MdtttDecision(0, (max(wins),))
        for mode in (1, 2, 3, 4):
            scored = [(key, cell) for cell, c in counts.items() if (key := _mode_key(mode, c)) is not None]
            if scored:
                top = max(key for key, _ in scored)
                return MdtttDecision(mode, tuple(cell for key, cell in scored if key == top))
        return MdtttDecision(FALLBACK_MODE, board.legal_moves)

    def candidates(self, board: Board) -> tuple[int, ...]:
        """The cells :meth:`choose` picks among."""
        return self.decide(board).cells

    def choose(self, board: Board) -> int:
        cells = self.candidates(board)
        if len(cells) == 1:
            return cells[0]
        if self.coin_flip:
            chosen = cells[0]
            for cell in cells[1:]:  # the library's walk: each later tie may replace the keeper
                if self.rng.random() < 0.5:
                    chosen = cell
            return chosen
        return self.rng.choice(cells)
