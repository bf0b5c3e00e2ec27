"""Pairing strategies: draws proved without search.

A *pairing* for the defender is a set of disjoint pairs of empty cells such that every line the
attacker could still complete (no defender mark on it) holds both cells of some pair. The
defender then never loses: whenever the attacker takes one cell of a pair, the defender takes
the other, so each line ends up with a defender mark; any other move is answered anywhere (an
extra mark never hurts). This is the Hales–Jewett pairing strategy (Berlekamp, Conway and Guy,
*Winning Ways*, ch. 22), which draws k in a row on a k×k board for every k ≥ 5.

Finding one is a bipartite matching. Lines along the same row, column or diagonal overlap, and
one pair in their common cells serves all of them, so the live lines of one straight line are
taken in runs of at most k − 1 consecutive windows, each run needing two of its common cells
(where the attacker's marks leave fewer than two, the run is split into the longest runs that
keep two, from its start). Each such *demand* is matched to two cells of its own, no cell
serving two demands (Kuhn's augmenting paths). The grouping is fixed, so a pairing that needs
another grouping can be missed: a pairing found proves the draw, none found proves nothing.

>>> from noughts.board import Board
>>> board = Board(5, 5, 5)
>>> pairs = find_pairing(board.geometry, board.x, board.o)
>>> len(pairs)  # 12 lines, 12 pairs
12
>>> find_pairing(Board(3, 3, 3).geometry, 0, 0) is None  # 8 lines need 16 of the 9 cells
True
"""

from __future__ import annotations

from noughts.board import Board, Geometry, keep_newest

__all__ = ["Pairs", "find_pairing", "pairing_diagram"]

Pairs = tuple[tuple[int, int], ...]
"""Pairs of cells, each pair ascending, pairs in ascending order of their first cell."""

_CARRIER_SHAPES = 8  # geometries whose straight lines are kept
_carriers_of: dict[Geometry, tuple[tuple[int, ...], ...]] = {}
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def carriers(geometry: Geometry) -> tuple[tuple[int, ...], ...]:
    """The winning lines' masks grouped by the straight line they lie on, in order along it."""
    found = _carriers_of.get(geometry)
    if found is not None:
        return found
    cols = geometry.cols
    groups: dict[tuple[int, int, int], list[tuple[int, int]]] = {}
    for cells, mask in zip(geometry.lines, geometry.line_masks, strict=True):
        r0, c0 = divmod(cells[0], cols)
        if len(cells) == 1:
            key = (0, 0, cells[0])  # k = 1: every cell is a line of its own
        else:
            r1, c1 = divmod(cells[1], cols)
            dr, dc = r1 - r0, c1 - c0
            # which straight line of that direction: the row, the column or the diagonal's offset
            intercept = r0 if dr == 0 else c0 if dc == 0 else c0 - r0 if dc == 1 else c0 + r0
            key = (dr, dc, intercept)
        groups.setdefault(key, []).append((cells[0], mask))
    result = tuple(tuple(mask for _, mask in sorted(group)) for group in groups.values())
    _carriers_of[geometry] = result
    keep_newest(_carriers_of, _CARRIER_SHAPES)
    return result


def _demands(geometry: Geometry, defender: int, empty: int, span: int) -> list[int] | None:
    """The cell sets that each need a pair of their own (see the module's docstring), or
    ``None`` when some live line has fewer than two empty cells (no pairing can cover it)."""
    demands: list[int] = []
    for carrier in carriers(geometry):
        run: list[int] = []
        for mask in (*carrier, -1):  # -1: the end of the straight line closes the last run
            if mask != -1 and not mask & defender:
                run.append(mask)
                continue
            if not run:
                continue
            count = -(-len(run) // span)  # runs of at most k - 1 windows, as even as can be
            start = 0
            for part in range(count):
                end = start + (len(run) - start) // (count - part)
                common = empty
                for window in run[start:end]:
                    common &= window
                if common.bit_count() >= 2:
                    demands.append(common)
                else:  # the marks split the part: runs as long as their common cells allow
                    common = 0
                    for window in run[start:end]:
                        cells = window & empty
                        if cells.bit_count() < 2:
                            return None
                        if (common & cells).bit_count() >= 2:
                            common &= cells
                        else:
                            if common:
                                demands.append(common)
                            common = cells
                    demands.append(common)
                start = end
            run = []
    return demands


def find_pairing(geometry: Geometry, attacker: int, defender: int) -> Pairs | None:
    """A pairing of empty cells that stops ``attacker`` completing any line, or ``None``.

    ``attacker`` and ``defender`` are the two sides' marks (bitmasks); who moves next does not
    matter (a defender to move plays anywhere first). An empty tuple means the attacker has no
    line left at all.
    """
    empty = geometry.full & ~(attacker | defender)
    return _match(_demands(geometry, defender, empty, max(1, geometry.k - 1)), empty)


def _match(demands: list[int] | None, empty: int) -> Pairs | None:
    """Two cells of its own for each demand (Kuhn's augmenting paths), as pairs, or ``None``."""
    if demands is None or 2 * len(demands) > empty.bit_count():
        return None
    # distinct demands only (two runs can share their cells), fewest candidates first
    unique = sorted(set(demands), key=lambda cells: (cells.bit_count(), cells))
    if len(unique) > 1:
        union = 0
        for cells in unique:
            union |= cells
        if 2 * len(unique) > union.bit_count():
            return None
    candidates = [_cells(cells) for cells in unique]
    owner: dict[int, int] = {}  # cell -> the slot (2 per demand) it serves

    def augment(slot: int, seen: set[int]) -> bool:
        for cell in candidates[slot >> 1]:
            if cell in seen:
                continue
            seen.add(cell)
            holder = owner.get(cell)
            if holder is None or augment(holder, seen):
                owner[cell] = slot
                return True
        return False

    for slot in range(2 * len(unique)):
        if not augment(slot, set()):
            return None
    by_demand: dict[int, list[int]] = {}
    for cell, slot in owner.items():
        by_demand.setdefault(slot >> 1, []).append(cell)
    pairs = [(min(cells), max(cells)) for cells in by_demand.values()]
    return tuple(sorted(pairs))


def _cells(mask: int) -> list[int]:
    cells = []
    while mask:
        low = mask & -mask
        cells.append(low.bit_length() - 1)
        mask ^= low
    return cells


def pairing_diagram(board: Board, pairs: Pairs) -> str:
    """The board with the marks, and each pair's two cells shown by one letter (a, b, …).

    Boards with more pairs than letters show the later pairs as ``*``.
    """
    shown = ["X" if board.x >> c & 1 else "O" if board.o >> c & 1 else "." for c in range(board.size)]
    for number, (first, second) in enumerate(pairs):
        letter = _LETTERS[number] if number < len(_LETTERS) else "*"
        shown[first] = shown[second] = letter
    cols = board.cols
    return "\n".join(" ".join(shown[r * cols:(r + 1) * cols]) for r in range(board.rows))
