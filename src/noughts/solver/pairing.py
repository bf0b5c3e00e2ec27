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

__all__ = ["Pairs", "covered_by_pairs", "find_pairing", "pairing_diagram"]

Pairs = tuple[tuple[int, int], ...]
"""Pairs of cells, each pair ascending, pairs in ascending order of their first cell."""

_CARRIER_SHAPES = 8  # geometries whose straight lines are kept
_carriers_of: dict[Geometry, tuple[tuple[int, ...], ...]] = {}
COVER_STEPS = 100  # pairs tried by the backtracking before it gives up
SPARE_CELLS = 8
"""The defender's first moves tried for a pairing after it: those on most of the attacker's lines."""
_cells_of: dict[int, list[int]] = {}  # a mask's cells, for the masks seen lately (read only)
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
    owner = _two_cells_each(unique)
    if owner is None:
        return None
    by_demand: dict[int, list[int]] = {}
    for cell, demand in owner.items():
        by_demand.setdefault(demand, []).append(cell)
    pairs = [(min(cells), max(cells)) for cells in by_demand.values()]
    return tuple(sorted(pairs))


def covered_by_pairs(geometry: Geometry, attacker: int, defender: int, attacker_moves: int,
                     spare: bool = False, steps: int = COVER_STEPS) -> int | None:
    """The cells of a pairing of any shape against the lines ``attacker`` can still complete
    with ``attacker_moves`` more marks (those with more empty cells need no pair), or ``None``.

    Two straight lines share at most one cell, so a pair serves the windows of one straight line
    only: each straight line needs as many pairs of its own cells as its windows' greedy cover
    takes, and a matching of cells to those needs rules most positions out at once. The rest are
    searched: pairs chosen by backtracking from the window with the fewest empty cells, giving up
    (``None``: nothing proved) after ``steps`` pairs tried. ``spare``: the defender moves first,
    and any cell it takes now that leaves a pairing will do (that cell is among those returned).
    """
    empty = geometry.full & ~(attacker | defender)
    groups: list[list[int]] = []  # per straight line, its live windows' empty cells, in order
    for carrier in carriers(geometry):
        windows = []
        for mask in carrier:
            if not mask & defender:
                cells = mask & empty
                if cells.bit_count() <= attacker_moves:
                    if not cells & (cells - 1) and not spare:
                        return None  # a live line with one empty cell (or none): no pair fits
                    windows.append(cells)
        if windows:
            groups.append(windows)
    if not groups:
        return 0
    if not spare:
        needs = [_need(windows) for windows in groups]
        return _covered(groups, needs, empty, steps)
    needs = [_need(windows) for windows in groups]
    reaches = []
    for windows in groups:
        reach = 0
        for cells in windows:
            reach |= cells
        reaches.append(reach)
    total = sum(needs)
    room = empty.bit_count() - 1
    counts: dict[int, int] = {}  # the defender's candidate cells: on most live lines first
    for windows in groups:
        for cells in windows:
            while cells:
                low = cells & -cells
                counts[low] = counts.get(low, 0) + 1
                cells ^= low
    # a cell frees at most the needs of the straight lines through it: most cells cannot free enough
    excess = total - room
    if excess > 0:
        frees: dict[int, int] = {}
        for need, reach in zip(needs, reaches, strict=True):
            while reach:
                low = reach & -reach
                frees[low] = frees.get(low, 0) + need
                reach ^= low
        counts = {bit: count for bit, count in counts.items() if frees.get(bit, 0) >= excess}
    for bit in sorted(counts, key=counts.__getitem__, reverse=True)[:SPARE_CELLS]:
        # only the straight lines through the cell change
        after_groups = []
        after_needs = []
        after_total = total
        for windows, need, reach in zip(groups, needs, reaches, strict=True):
            if reach & bit:
                kept = [cells for cells in windows if not cells & bit]
                after_total -= need
                if kept:
                    need = _need(kept)
                    after_total += need
                    after_groups.append(kept)
                    after_needs.append(need)
            else:
                after_groups.append(windows)
                after_needs.append(need)
        if after_total <= room:
            paired = _covered(after_groups, after_needs, empty ^ bit, steps)
            if paired is not None:
                return paired | bit
    return None


def _need(windows: list[int]) -> int:
    """Cells a straight line's windows need: two per pair of the fewest pairs covering them in
    order (each pair the two last empty cells of the first window not yet covered, the pair
    that reaches furthest along the line); more than the board has if one has a single cell."""
    count = 0
    covers = 0
    for cells in windows:
        if count and cells & covers == covers:
            continue
        if not cells & (cells - 1):
            return 1 << 20  # one empty cell (or none): no pair fits
        count += 1
        last = 1 << (cells.bit_length() - 1)
        rest = cells ^ last
        covers = last | 1 << (rest.bit_length() - 1)
    return 2 * count


def _covered(groups: list[list[int]], needs: list[int], empty: int, steps: int) -> int | None:
    """The cells of disjoint pairs covering every window of ``groups`` (per straight line, in
    order), or ``None``: first a matching that must exist (the windows that start the greedy
    runs pairwise share fewer than two empty cells, so each needs a pair of its own), then one
    that suffices (a pair in each greedy run's common cells), then backtracking."""
    if sum(needs) > empty.bit_count():
        return None
    starts: list[int] = []
    commons: list[int] = []
    for windows in groups:
        covers = common = 0
        for cells in windows:
            if covers and cells & covers == covers:
                common &= cells
                continue
            if covers:
                commons.append(common)
            starts.append(cells)
            last = 1 << (cells.bit_length() - 1)
            covers = last | 1 << ((cells ^ last).bit_length() - 1)
            common = cells
        commons.append(common)
    if _matched(starts) is None:
        return None
    paired = _matched(commons)
    if paired is not None:
        return paired
    return _cover([cells for windows in groups for cells in windows], [steps])


def _matched(demands: list[int]) -> int | None:
    """Two cells of its own for each demand: the cells, or ``None``."""
    owner = _two_cells_each(demands)
    if owner is None:
        return None
    found = 0
    for cell in owner:
        found |= 1 << cell
    return found


def _two_cells_each(demands: list[int]) -> dict[int, int] | None:
    """Two cells of its own for each demand (Kuhn's augmenting paths): each cell's demand, or ``None``."""
    candidates = [_cells(cells) for cells in demands for _ in (0, 1)]  # two slots per demand
    owner: dict[int, int] = {}  # cell -> the slot it serves

    def augment(slot: int, seen: set[int]) -> bool:
        for cell in candidates[slot]:
            if cell in seen:
                continue
            seen.add(cell)
            holder = owner.get(cell)
            if holder is None or augment(holder, seen):
                owner[cell] = slot
                return True
        return False

    placed = set()
    for slot, cells in enumerate(candidates):  # free cells first: few augmenting paths left
        for cell in cells:
            if cell not in owner:
                owner[cell] = slot
                placed.add(slot)
                break
    for slot in range(len(candidates)):
        if slot not in placed and not augment(slot, set()):
            return None
    return {cell: slot >> 1 for cell, slot in owner.items()}


def _cover(lines: list[int], budget: list[int]) -> int | None:
    """Disjoint pairs, one inside each of ``lines`` (their empty cells), by backtracking: the
    cells of the pairs, or ``None``."""
    if not lines:
        return 0
    budget[0] -= 1
    if budget[0] < 0:
        return None
    best = lines[0]
    fewest = best.bit_count()
    for line in lines:
        c = line.bit_count()
        if c < fewest:
            best, fewest = line, c
            if c <= 2:
                break
    cells = _cells(best)
    for i, first in enumerate(cells):
        for second in cells[i + 1:]:
            pair = 1 << first | 1 << second
            rest = []  # the other lines, without the pair's cells (no other pair may use them)
            for line in lines:
                if line & pair != pair:
                    line &= ~pair
                    if not line & (line - 1):
                        break  # fewer than two cells left: no pair fits it
                    rest.append(line)
            else:
                paired = _cover(rest, budget)
                if paired is not None:
                    return paired | pair
    return None


def _cells(mask: int) -> list[int]:
    found = _cells_of.get(mask)
    if found is not None:
        return found
    found_key = mask
    cells = []
    while mask:
        low = mask & -mask
        cells.append(low.bit_length() - 1)
        mask ^= low
    if len(_cells_of) > 100_000:
        _cells_of.clear()
    _cells_of[found_key] = cells
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
