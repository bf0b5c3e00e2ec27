"""Set matching: draws proved without search where pairings need too many cells.

A *pairing* (:mod:`noughts.solver.pairing`) needs two empty cells of its own for every line the
attacker could still complete; 4×4 with four in a row has 10 lines and 16 cells, so no pairing
holds it. J. W. H. M. Uiterwijk's *set matching* ("Set Matching: An Enhancement of the
Hales-Jewett Pairing Strategy", *Advances in Computer Games* 2017, LNCS 10664, 38–50; extended
in the *ICGA Journal* 40 (3), 2018, 129–148) needs fewer: a *matching set* is a set of cells
(its markers), the lines it answers for (its groups), and for every first move of the attacker
on one of its markers, a reply on another marker and a pairing of the remaining markers that
covers every group the reply does not take. Its paper proves the empty 4×4 board a draw with
one matching set; this module finds such proofs and checks them.

A :class:`SetMatching` here is a collection of *blocks* with pairwise disjoint cells; each
block answers for some lines and is either

* a pairing (:attr:`Block.pairs`): disjoint pairs of its cells, both cells of some pair on each
  of its lines, or
* a matching set (:attr:`Block.answers`): for *every* cell ``m`` of the block, an
  :class:`Answer`: a reply ``r`` (another cell of the block) and disjoint pairs of the block's
  cells other than ``m`` and ``r``, such that each of the block's lines holds ``r`` or both
  cells of one of those pairs; or, *nested*, a reply ``r`` and a set matching
  (:attr:`Answer.blocks`) of the block's cells other than ``m`` and ``r`` that answers for
  every line of the block without ``r``.

Every line the attacker could still complete (no defender mark on it) belongs to a block. When
the defender is to move it may first take one cell, :attr:`SetMatching.opening`.

Why the defender then never loses (the soundness of :func:`holds`). The defender plays: its
opening, if any; when the attacker takes a cell of a block's pair, the other cell of that pair;
when the attacker takes its first cell ``m`` of a matching-set block, the reply ``r`` of ``m``'s
answer, and from then on that block is played as the pairing (or the nested set matching) of
that answer; when the attacker
takes any other cell, or the cell prescribed is already the defender's, any empty cell.
Consider a line ``L`` the attacker could complete, in block ``B``.

1. ``B`` is a pairing: ``L`` holds both cells ``a``, ``b`` of a pair. The first time the
   attacker takes one of them the other is empty (nobody takes a pair's cell except the
   defender answering inside the pair, or the defender's arbitrary moves, which only help),
   and the defender takes it at once. So the attacker never owns both, and never completes ``L``.
2. ``B`` is a matching set and the attacker never takes a cell of ``B``: ``L`` holds ``r`` or a
   pair of the answer of any of ``B``'s cells, all cells of ``B``, so the attacker never
   completes it.
3. The attacker's first cell in ``B`` is ``m``: ``r`` was empty or the defender's (blocks are
   disjoint and the attacker took no cell of ``B`` before), so after the reply the defender
   owns ``r``; lines of ``B`` through ``r`` are dead, and every other line of ``B`` holds both
   cells of a pair of the answer, all empty or the defender's at that moment, which the
   defender defends as in case 1. A nested answer's set matching has its cells among those of
   ``B`` other than ``m`` and ``r``, all empty or the defender's at that moment, and answers for
   every line of ``B`` without ``r``: the same cases hold it (induction on the nesting depth).

Extra defender marks only ever kill lines, so the arbitrary moves cannot spoil any case, and
blocks never interfere: each reply lies in the block of the attacker's move. Hence a position
with a set matching for the defender is at worst a draw for it. :func:`holds` checks exactly
these conditions on a :class:`SetMatching` from any source; :func:`find_set_matching` finds
one (or proves nothing by returning ``None``): the live lines fall into groups that share no
empty cell, each group gets a pairing if the backtracking finds one, else a matching set over
all its empty cells, every first move answered by the first reply that leaves a pairing, or
(in sets of at most :data:`NEST_MAX_CELLS` cells, one level deep) by the first that leaves a set
matching; positions with a group of more than :data:`MAX_BLOCK_CELLS` cells are not tried.
4×5 with four falls to one matching set of 20 cells whose every answer nests a matching set of
the other 18.

>>> from noughts.board import Board
>>> board = Board(4, 4, 4)
>>> matching = find_set_matching(board.geometry, board.x, board.o)  # O answers X
>>> len(matching.blocks), len(matching.blocks[0].answers)  # one matching set, 16 first moves
(1, 16)
>>> holds(board.geometry, board.x, board.o, matching)
True
>>> find_set_matching(Board(3, 3, 3).geometry, 0, 0) is None  # 3×3: no such proof (still a draw)
True
"""

from __future__ import annotations

from typing import NamedTuple

from noughts.board import Board, Geometry
from noughts.solver.pairing import _cells

__all__ = [
    "Answer", "Block", "SetMatching", "draw_by_set_matching", "find_set_matching", "holds",
    "set_matching_text",
]

Pairs = tuple[tuple[int, int], ...]
COVER_STEPS = 1_000  # pairs tried by one pairing search before it gives up (nothing concluded)
ANSWER_STEPS = 20_000  # pairs tried by all the pairing searches of one matching set
NEST_MAX_CELLS = 20
"""Matching sets of at most this many cells may answer a first move with a nested set matching
where no pairing follows the reply (4×5 with four: 20 cells)."""
NEST_STEPS = 200_000  # pairs tried by one search for a set matching with nested matching sets
OPENINGS = 8  # the defender's first cells tried when it is to move: those on most live lines
MAX_BLOCK_CELLS = 30
"""Positions where lines linked by shared empty cells span more cells than this are not tried
(each first move and reply is: the cost grows with the square of the cells)."""
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNPQRSTUVWYZ"  # no O or X: those are marks


class Answer(NamedTuple):
    """How a matching set answers the attacker's first cell in it: a reply, then ``pairs`` or,
    nested, ``blocks`` (a set matching of the set's other cells)."""

    first: int
    reply: int
    pairs: Pairs
    blocks: tuple[Block, ...] = ()


class Block(NamedTuple):
    """Cells (a bitmask) answering for ``lines`` (line masks): by ``pairs``, or by ``answers``
    (one for every cell of the block) when it is a matching set."""

    cells: int
    lines: tuple[int, ...]
    pairs: Pairs
    answers: tuple[Answer, ...]


class SetMatching(NamedTuple):
    """The defender's opening cell (``None``: no move first) and its blocks."""

    opening: int | None
    blocks: tuple[Block, ...]


def holds(geometry: Geometry, attacker: int, defender: int, matching: SetMatching,
          defender_to_move: bool = False) -> bool:
    """Whether ``matching`` meets every condition of the module's proof in this position, so that
    the attacker cannot complete a line (independent of how the matching was found)."""
    opening = matching.opening
    empty = geometry.full & ~(attacker | defender)
    if opening is not None:
        if not defender_to_move or not empty >> opening & 1:
            return False
        defender |= 1 << opening
        empty &= ~(1 << opening)
    return _blocks_hold(matching.blocks, empty, [line for line in geometry.line_masks if not line & defender])


def _blocks_hold(blocks: tuple[Block, ...], empty: int, needed: list[int]) -> bool:
    """Whether ``blocks`` have disjoint cells among ``empty``, each meets its conditions, and
    together they answer for every line of ``needed``."""
    used = 0
    answered: set[int] = set()
    for block in blocks:
        cells = block.cells
        if cells & ~empty or cells & used:
            return False
        used |= cells
        answered.update(block.lines)
        if not block.answers:
            if not _pairs_cover(block.pairs, cells, block.lines, 0):
                return False
            continue
        if block.pairs or sorted(answer.first for answer in block.answers) != _cells(cells):
            return False
        for first, reply, pairs, nested in block.answers:
            if reply == first or not cells >> reply & 1:
                return False
            rest = cells & ~(1 << first | 1 << reply)
            if nested:
                open_lines = [line for line in block.lines if not line >> reply & 1]
                if pairs or not _blocks_hold(nested, rest, open_lines):
                    return False
            elif not _pairs_cover(pairs, rest, block.lines, 1 << reply):
                return False
    return all(line in answered for line in needed)


def _pairs_cover(pairs: Pairs, cells: int, lines: tuple[int, ...], taken: int) -> bool:
    """Whether ``pairs`` are disjoint pairs of ``cells`` and every line holds ``taken`` or a pair."""
    seen = 0
    masks = []
    for first, second in pairs:
        mask = 1 << first | 1 << second
        if first == second or mask & ~cells or mask & seen:
            return False
        seen |= mask
        masks.append(mask)
    return all(line & taken or any(line & mask == mask for mask in masks) for line in lines)


def find_set_matching(geometry: Geometry, attacker: int, defender: int,
                      defender_to_move: bool = False) -> SetMatching | None:
    """A set matching that stops ``attacker`` completing any line, or ``None`` (nothing proved).

    ``attacker`` and ``defender`` are the sides' marks (bitmasks). With ``defender_to_move`` the
    defender may open with a cell first (the :data:`OPENINGS` cells on most live lines are tried).
    """
    budget = [NEST_STEPS]
    empty = geometry.full & ~(attacker | defender)
    blocks = _split(empty, [line for line in geometry.line_masks if not line & defender], 2, budget)
    if blocks is not None or not defender_to_move:
        return None if blocks is None else SetMatching(None, blocks)
    through = geometry.lines_through
    weight = {cell: sum(1 for line in through[cell] if not line & defender) for cell in _cells(empty)}
    for cell in sorted(weight, key=lambda cell: -weight[cell])[:OPENINGS]:
        if not weight[cell]:
            break
        after = defender | 1 << cell
        live = [line for line in geometry.line_masks if not line & after]
        blocks = _split(empty & ~(1 << cell), live, 2, budget)
        if blocks is not None:
            return SetMatching(cell, blocks)
    return None


def _split(empty: int, live: list[int], depth: int, budget: list[int]) -> tuple[Block, ...] | None:
    """A block for each group of ``live`` lines that share ``empty`` cells, or ``None``; matching
    sets nest ``depth - 1`` deep at most."""
    groups: list[tuple[int, list[int]]] = []  # (empty cells, lines) of lines linked by shared cells
    for line in live:
        cells = line & empty
        if not cells & (cells - 1):
            return None  # one empty cell (or none) left on a live line: no pair and no reply fit
        merged_cells, merged_lines = cells, [line]
        kept = []
        for group in groups:
            if group[0] & merged_cells:
                merged_cells |= group[0]
                merged_lines += group[1]
            else:
                kept.append(group)
        groups = [*kept, (merged_cells, merged_lines)]
    if any(cells.bit_count() > MAX_BLOCK_CELLS for cells, _ in groups):
        return None  # too big to try here (big pairings are noughts.solver.pairing's)
    blocks = []
    for cells, lines in sorted(groups, key=lambda group: group[0] & -group[0]):
        block_lines = tuple(sorted(lines, key=lambda line: (line & -line, line)))
        own = [COVER_STEPS]
        pairs = _pairing(cells, [line & cells for line in block_lines], own)
        budget[0] -= COVER_STEPS - own[0]
        if budget[0] < 0:
            return None
        if pairs is not None:
            blocks.append(Block(cells, block_lines, pairs, ()))
            continue
        answers = _answers(cells, block_lines, depth, budget)
        if answers is None:
            return None
        blocks.append(Block(cells, block_lines, (), answers))
    return tuple(blocks)


def _answers(cells: int, lines: tuple[int, ...], depth: int, budget: list[int]) -> tuple[Answer, ...] | None:
    """A reply and a pairing (or, where none follows and ``depth`` allows, a nested set
    matching) for every first cell of the attacker in ``cells``, or ``None``."""
    by_weight = sorted(_cells(cells), key=lambda cell: -sum(1 for line in lines if line >> cell & 1))
    answers = []
    own = [ANSWER_STEPS]  # this set's pairing searches, besides the caller's budget
    nest = depth > 1 and cells.bit_count() <= NEST_MAX_CELLS
    for first in _cells(cells):
        for reply in by_weight:
            if reply == first:
                continue
            rest = cells & ~(1 << first | 1 << reply)
            open_lines = [line & rest for line in lines if not line >> reply & 1]
            spent = own[0]
            pairs = _pairing(rest, open_lines, own)
            budget[0] -= spent - own[0]
            if own[0] < 0 or budget[0] < 0:
                return None
            if pairs is not None:
                answers.append(Answer(first, reply, pairs))
                break
        else:
            if not nest:
                return None
            for reply in by_weight:
                if reply == first:
                    continue
                rest = cells & ~(1 << first | 1 << reply)
                nested = _split(rest, [line for line in lines if not line >> reply & 1], depth - 1, budget)
                if budget[0] < 0:
                    return None
                if nested is not None:
                    answers.append(Answer(first, reply, (), nested))
                    break
            else:
                return None
    return tuple(answers)


def _pairing(cells: int, lines: list[int], budget: list[int] | None = None) -> Pairs | None:
    """Disjoint pairs of ``cells``, both cells of one pair in each of ``lines`` (their cells
    within ``cells``), by backtracking from the line with the fewest cells; ``None`` if there
    are none or the search gives up (after ``budget[0]`` pairs tried, default
    :data:`COVER_STEPS`; the budget is spent in place)."""
    found: list[tuple[int, int]] = []
    if _cover(lines, found, [COVER_STEPS] if budget is None else budget):
        return tuple(sorted(found))
    return None


def _cover(lines: list[int], found: list[tuple[int, int]], budget: list[int]) -> bool:
    if not lines:
        return True
    budget[0] -= 1
    if budget[0] < 0:
        return False
    best = min(lines, key=int.bit_count)
    if best.bit_count() < 2:
        return False
    options = _cells(best)
    for i, first in enumerate(options):
        for second in options[i + 1:]:
            pair = 1 << first | 1 << second
            rest = []
            for line in lines:
                if line & pair != pair:
                    line &= ~pair  # a pair's cell serves no other pair
                    if not line & (line - 1):
                        break
                    rest.append(line)
            else:
                found.append((first, second))
                if _cover(rest, found, budget):
                    return True
                found.pop()
    return False


def draw_by_set_matching(board: Board) -> tuple[SetMatching, SetMatching] | None:
    """Set matchings with which O stops X and X stops O here, proving the game a draw with no
    search, or ``None`` when either side has none (which proves nothing).

    >>> found = draw_by_set_matching(Board(4, 4, 4))
    >>> found is not None and found[1].opening is None  # X, to move, may start anywhere
    True
    """
    if board.is_over:
        return None
    geometry = board.geometry
    x_to_move = not board.ply & 1
    against_x = find_set_matching(geometry, board.x, board.o, defender_to_move=not x_to_move)
    if against_x is None:
        return None
    against_o = find_set_matching(geometry, board.o, board.x, defender_to_move=x_to_move)
    if against_o is None:
        return None
    return against_x, against_o


def set_matching_text(board: Board, defender: str, matching: SetMatching) -> str:
    """What ``defender`` does, in words and diagrams (one for the pairings, one per first move
    of each matching set, side by side)."""
    attacker = "O" if defender == "X" else "X"
    parts = []
    x, o = board.x, board.o
    if matching.opening is not None:
        cell = matching.opening
        parts.append(f"{defender} first takes {board.cell_name(cell)}.")
        if defender == "X":
            x |= 1 << cell
        else:
            o |= 1 << cell
    elif board.turn == defender:
        parts.append(f"{defender} moves first anywhere (an extra mark only helps).")
    base = ["X" if x >> c & 1 else "O" if o >> c & 1 else "." for c in range(board.size)]
    pairs = [pair for block in matching.blocks for pair in block.pairs]
    sets = [block for block in matching.blocks if block.answers]
    if pairs:
        lines = sum(len(block.lines) for block in matching.blocks if not block.answers)
        parts.append(f"Pairs ({len(pairs)}, on {lines} lines): whenever {attacker} takes a lettered "
                     f"cell, {defender} takes the other cell with that letter.")
        parts.append(_diagram(base, board.cols, tuple(pairs), {}))
    for number, block in enumerate(sets, 1):
        parts.append(
            f"Matching set {number} ({block.cells.bit_count()} cells, {len(block.lines)} lines): "
            f"whenever {attacker} takes its first cell there (*), {defender} replies at #, then "
            f"answers inside the lettered pairs.")
        diagrams = []
        for first, reply, answer_pairs, nested in block.answers:
            marks = {first: "*", reply: "#"}
            for inner in nested:
                answer_pairs += inner.pairs
                marks.update({cell: "+" for cell in _cells(inner.cells) if inner.answers})
            diagrams.append(_diagram(base, board.cols, answer_pairs, marks).split("\n"))
        parts.append(_side_by_side(diagrams, board.cols))
        if any(answer.blocks for answer in block.answers):
            parts.append("+: a matching set of its own after * and # (explaining that position shows it).")
    return "\n".join(parts)


def _diagram(base: list[str], cols: int, pairs: Pairs, marks: dict[int, str]) -> str:
    shown = base.copy()
    for number, (first, second) in enumerate(pairs):
        letter = _LETTERS[number] if number < len(_LETTERS) else "?"
        shown[first] = shown[second] = letter
    for cell, mark in marks.items():
        shown[cell] = mark
    return "\n".join(" ".join(shown[r * cols:(r + 1) * cols]) for r in range(len(shown) // cols))


def _side_by_side(diagrams: list[list[str]], cols: int, width: int = 72) -> str:
    """Diagrams in rows of as many as fit in ``width`` characters, a blank line between rows."""
    each = 2 * cols - 1
    per_row = max(1, (width + 3) // (each + 3))
    rows = []
    for start in range(0, len(diagrams), per_row):
        chunk = diagrams[start:start + per_row]
        rows.append("\n".join("   ".join(d[line] for d in chunk) for line in range(len(chunk[0]))))
    return "\n\n".join(rows)
