"""``newell-simon`` and ``simple-rules`` (once ``seed001-rules``): rule lists for perfect-looking 3×3 play.

Both only play 3×3 with 3 in a row. The first rule that gives any cell decides; cells tied
within a rule are chosen at random. A *threat* is a line with two of one side's marks and an
empty cell; a *fork* is a move that makes two threats at once.

``newell-simon`` — Newell and Simon's complete list (1972), which never loses:

1. **Win**: complete a line of our own.
2. **Block**: fill the empty cell of the opponent's threat.
3. **Fork**: make two threats.
4. **Block the opponent's fork**: when the opponent has a fork move, make a threat whose
   forced reply does not give the opponent a fork; if there is none, take a fork cell.
5. **Centre**.
6. **Opposite corner**: a corner opposite one of the opponent's.
7. **Empty corner**.
8. **Empty side**.

``simple-rules`` — the list exactly as seed 001 (the MD_TTT article) prints it: win, block,
fork, centre, opposite corner, empty corner, empty side. It has no rule against the
opponent's fork, so it can be beaten (corner, then the opposite corner, wins against it).
"""

from __future__ import annotations

import random
from typing import NamedTuple

from noughts.board import Board
from noughts.players.base import (
    CORNERS,
    SIDES,
    completing_cells,
    empty_cells,
    ensure_classic_board,
    ensure_playable,
    make_rng,
    own_and_opponent,
)

__all__ = ["NewellSimonPlayer", "RuleDecision", "Seed001RulesPlayer"]

CENTRE = 4


class RuleDecision(NamedTuple):
    """The rule that decided and the cells it allows (ascending)."""

    rule: str
    cells: tuple[int, ...]


def _fork_cells(board: Board, mine: int, theirs: int, empty: int) -> list[int]:
    """Empty cells where ``mine`` would have two or more threats at once."""
    return [cell for cell in empty_cells(empty)
            if completing_cells(board, mine | 1 << cell, theirs).bit_count() >= 2]


def _forcing_cells(board: Board, own: int, opponent: int, empty: int) -> list[int]:
    """Cells making one threat whose forced reply leaves the opponent without a fork."""
    found = []
    for cell in empty_cells(empty):
        after = own | 1 << cell
        threats = completing_cells(board, after, opponent) & empty
        if threats.bit_count() != 1:  # two would be a fork, found by an earlier rule
            continue
        reply = opponent | threats  # the opponent must fill the threat's gap
        if completing_cells(board, reply, after).bit_count() < 2:
            found.append(cell)
    return found


class _RuleListPlayer:
    """Shared machinery: apply the rules in order, random among the winning rule's cells."""

    name = ""
    block_forks = True

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = make_rng(rng)

    def decide(self, board: Board) -> RuleDecision:
        """The rule that decides and its cells."""
        ensure_classic_board(board, self.name)
        ensure_playable(board)
        own, opponent = own_and_opponent(board)
        empty = board.geometry.full & ~(own | opponent)
        wins = completing_cells(board, own, opponent) & empty
        if wins:
            return RuleDecision("win", tuple(empty_cells(wins)))
        blocks = completing_cells(board, opponent, own) & empty
        if blocks:
            return RuleDecision("block", tuple(empty_cells(blocks)))
        forks = _fork_cells(board, own, opponent, empty)
        if forks:
            return RuleDecision("fork", tuple(forks))
        if self.block_forks:
            their_forks = _fork_cells(board, opponent, own, empty)
            if their_forks:
                forcing = _forcing_cells(board, own, opponent, empty)
                if forcing:
                    return RuleDecision("force", tuple(forcing))
                return RuleDecision("block fork", tuple(their_forks))
        if empty >> CENTRE & 1:
            return RuleDecision("centre", (CENTRE,))
        opposite = tuple(c for c in CORNERS if empty >> c & 1 and opponent >> (8 - c) & 1)
        if opposite:
            return RuleDecision("opposite corner", opposite)
        corners = tuple(c for c in CORNERS if empty >> c & 1)
        if corners:
            return RuleDecision("empty corner", corners)
        return RuleDecision("empty side", tuple(c for c in SIDES if empty >> c & 1))

    def candidates(self, board: Board) -> tuple[int, ...]:
        """The cells :meth:`choose` picks among."""
        return self.decide(board).cells

    def choose(self, board: Board) -> int:
        cells = self.candidates(board)
        return cells[0] if len(cells) == 1 else self.rng.choice(cells)


class NewellSimonPlayer(_RuleListPlayer):
    """Newell and Simon's eight rules, including blocking the opponent's fork."""

    name = "newell-simon"
    block_forks = True


class Seed001RulesPlayer(_RuleListPlayer):
    """Seed 001's seven rules: no defence against the opponent's fork."""

    name = "simple-rules"
    block_forks = False
