"""Proof-number search: does one side force a win? (df-pn, Nagai 2002)

The question "can the *attacker* force a win from here?" has a yes/no answer, and proof-number
search answers it by growing the proof tree where it is cheapest: at the attacker's turn one good
move proves the node (an OR node), at the defender's turn every reply must be refuted (an AND
node). Each position keeps a *proof number* (how many leaves must still be proved to prove it)
and a *disproof number*; the depth-first variant (df-pn) dives into the most promising child
with thresholds, as far as the sibling's numbers allow, with Pawlewicz and Lew's 1 + ε trick so
it does not bounce between two close children.

What makes it fast on k-in-a-row boards:

* Positions are decided before any search when the lines say so: a side that can complete a
  line now wins; two open threats against the side to move win for the other; a single threat
  forces the block; a cell that makes two threats at once wins (for the side to move); a side
  with no line left cannot win; and the defender's *pairing* (:mod:`noughts.solver.pairing`,
  any shape: :func:`~noughts.solver.pairing.covered_by_pairs`) proves the attacker cannot win,
  and so does a pairing the defender to move leaves with its move.
* Relevance zones: when the opponent has a cell that would make two threats at once, the side
  to move must take one of the cells of that double (of every such double) or make a threat of
  its own; every other move loses, so it is not searched. Cells on no line that either side can
  still complete are never played either (a mark there changes nothing, and a mark anywhere
  else is never worse).
* Moves are tried attack first (cells on lines with more of the mover's marks), and positions
  in the opening are looked up by their canonical image under the board's symmetries.
* On 4×n boards a defender's move not yet searched starts with as many disproof steps as the
  attacker has live cells (1 if the move makes a threat and so forces the reply): with 1 for
  every move, df-pn dropped a defender's reply once searched for every untried one.
* The transposition table stays within a memory limit: when full, the entries whose subtrees
  cost least to search again are dropped (Nagai's SmallTreeGC), never the whole table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import islice

from noughts.board import Geometry
from noughts.solver.pairing import covered_by_pairs, find_pairing

__all__ = ["INFINITE", "Prover"]

INFINITE = 1 << 40
"""A proof or disproof number that says "cannot be done"."""

EPSILON = 0.25  # the 1 + ε trick: stay in the best child until it is this much worse than the second
ENTRY_BYTES = 220  # a table entry: dict slot, key of 2·size bits, a (pn, dn, work) tuple
SYMMETRIC_PLIES = 6
"""Positions with fewer marks are keyed by their canonical image; deeper, symmetric positions are
rare and a plain key is cheaper (measured: the same positions searched, a third less time)."""
_GC_KEEP = 0.5  # a collection keeps about this share of the table, the most costly subtrees
_PROVEN = 1
_DISPROVEN = 2

class Prover:
    """Proof-number search on one geometry; its table lives as long as the prover.

    ``orient(key)`` gives a position key's canonical image under the board's symmetries and the
    symmetry's index (the solver's). Keys are ``attacker | defender << size``, so one table
    answers "X wins?" and "O wins?" alike.
    """

    def __init__(self, geometry: Geometry, orient: Callable[[int], tuple[int, int]],
                 table_bytes: int = 200_000_000, symmetric_plies: int = SYMMETRIC_PLIES,
                 canonical_children: Callable[[int, Sequence[int], int], list[int]] | None = None) -> None:
        self.geometry = geometry
        self.orient = orient
        # canonical_children(key, cells, offset): the canonical keys of key | 1 << (cell + offset)
        self.canonical_children = canonical_children or (
            lambda key, cells, offset: [orient(key | 1 << (cell + offset))[0] for cell in cells])
        self.size = geometry.size
        self.full = geometry.full
        self.lines = geometry.line_masks
        self.through = geometry.lines_through
        self.k = geometry.k
        # move-ordering scores are fields of one integer (see evaluate), wide enough for a cell
        # on every line through it, each scoring its most (2^k + 1)
        most = max(len(lines) for lines in geometry.lines_through) * ((2 << geometry.k) + 1)
        self.weight_bits = most.bit_length()
        self.line_spreads = tuple((mask, sum(1 << cell * self.weight_bits for cell in cells))
                                  for mask, cells in zip(geometry.line_masks, geometry.lines, strict=True))
        # (canonical key << 1 | attacker to move) -> (proof number, disproof number, work)
        self.table: dict[int, tuple[int, int, int]] = {}
        self.table_limit = max(10_000, table_bytes // ENTRY_BYTES)
        self.collections = 0  # how often the table was thinned
        self.nodes = 0  # positions expanded, over the prover's life
        self.symmetric_plies = symmetric_plies
        self.use_pairing = self.k >= 3  # below that no pairing covers a live line of two cells
        # pairings of any shape, and the defender's move before one: measured to pay on boards only
        # k high, with four (4×7: 332k → 94k positions); on 5×6 with four the search took twice as
        # long, and on 7×7 with five each check cost twenty positions' time: there the fixed-shape
        # pairing where the attacker moves is kept
        self.any_shape = self.k <= 4 and min(geometry.rows, geometry.cols) <= self.k
        # df-pn's numbers for a defender's move not yet searched: as many as the attacker's moves
        # after it (the live cells), or 1 if the move makes a threat (the reply is forced), so a
        # defender's reply once searched is not dropped for every untried one (measured on 4×7:
        # 91,990 → 40,336 positions; on 5×5 and 5×6 with four it searched more, so 4×n only)
        self.guess_moves = self.any_shape
        self.live_cells = 1  # at the last position evaluated

    # ------------------------------------------------------------------------------------
    def proves(self, attacker: int, defender: int, attacker_to_move: bool, tick: Callable[[], None]) -> bool:
        """Whether ``attacker`` forces a win.

        ``tick()`` is called once for every position searched: it spends the caller's budget
        (and raises when that runs out) and reports progress.
        """
        run = _Run(self, tick)
        key = self._key(attacker, defender, attacker_to_move)
        entry = self.table.get(key)
        if entry is not None and (entry[0] == 0 or entry[1] == 0):
            return entry[0] == 0
        pn, _ = run.mid(attacker, defender, attacker_to_move, key, INFINITE - 1, INFINITE - 1)
        return pn == 0

    def _key(self, attacker: int, defender: int, attacker_to_move: bool) -> int:
        marks = attacker | defender << self.size
        if (attacker | defender).bit_count() < self.symmetric_plies:
            marks = self.orient(marks)[0]
        return marks << 1 | attacker_to_move

    def known(self, attacker: int, defender: int, attacker_to_move: bool) -> bool | None:
        """The answer if the table holds it (``None`` otherwise)."""
        entry = self.table.get(self._key(attacker, defender, attacker_to_move))
        if entry is None or (entry[0] and entry[1]):
            return None
        return entry[0] == 0

    # ------------------------------------------------------------------------------------
    def evaluate(self, attacker: int, defender: int, attacker_to_move: bool) -> int | list[int]:
        """``_PROVEN``, ``_DISPROVEN``, or the moves worth searching, best first."""
        empty = self.full & ~(attacker | defender)
        if not empty:
            return _DISPROVEN  # a full board: a draw
        if attacker_to_move:
            mover, other = attacker, defender
        else:
            mover, other = defender, attacker
        n = empty.bit_count()
        mover_left = (n + 1) >> 1
        other_left = n >> 1
        k = self.k
        threats = 0  # cells where the other side completes a line
        # cells on a line of two empty cells (playing one makes a threat), and those on two such
        # lines with different partners (playing one makes two threats at once)
        mover_two = mover_double = other_two = other_double = 0
        mover_pairs: set[int] = set()  # overlapping windows of one row can share both empty cells
        other_pairs: set[int] = set()
        mover_alive = other_alive = False
        live = 0  # cells on a line either side can still complete
        # attack first: a cell scores for each line through it either side can still complete,
        # doubling per mark already on it; the mover's own lines count twice. The scores are
        # fields of one integer, so a line adds to all its cells at once
        weight = 0
        # the attacker's lines count twice: its own for the attacker, the ones to block for the defender
        own, theirs = (2, 1) if attacker_to_move or not self.any_shape else (1, 2)
        for line, spread in self.line_spreads:
            if not line & other:
                cells = line & empty
                c = cells.bit_count()
                if c == 1:
                    return _PROVEN if attacker_to_move else _DISPROVEN  # the mover completes it now
                if c <= mover_left:
                    live |= cells
                    mover_alive = True
                    w = own << (k - c)
                    if c == 2 and cells not in mover_pairs:
                        mover_double |= mover_two & cells
                        mover_two |= cells
                        mover_pairs.add(cells)
                    if not line & mover and c <= other_left:  # an empty line: the other side's too
                        other_alive = True
                        if c == 2 and cells not in other_pairs:
                            other_double |= other_two & cells
                            other_two |= cells
                            other_pairs.add(cells)
                        w += theirs
                    weight += w * spread
                    continue
            if not line & mover:
                cells = line & empty
                c = cells.bit_count()
                if c == 1:
                    threats |= cells
                elif c <= other_left:
                    live |= cells
                    other_alive = True
                    if c == 2 and cells not in other_pairs:
                        other_double |= other_two & cells
                        other_two |= cells
                        other_pairs.add(cells)
                    weight += (theirs << (k - c)) * spread
        self.live_cells = live.bit_count()
        if threats:
            if threats & (threats - 1):
                # two threats: the mover blocks one and the other side completes the other
                return _DISPROVEN if attacker_to_move else _PROVEN
            return [threats.bit_length() - 1]  # the block is forced
        if mover_double:  # two threats at once win for the mover (the other has no threat)
            return _PROVEN if attacker_to_move else _DISPROVEN
        if not (mover_alive if attacker_to_move else other_alive):
            return _DISPROVEN  # the attacker has no line it can complete in time
        if self.use_pairing and self._paired(attacker, defender, attacker_to_move):
            return _DISPROVEN
        zone = live
        if other_double:
            # the other side's doubles: the mover must take a cell of each, or one the double
            # would make a threat of, or make a threat of its own
            made: dict[int, int] = {}  # a double's cell -> the cells it makes threats on
            for cells in other_pairs:
                if cells & other_double:
                    low = cells & -cells
                    high = cells ^ low
                    made[low] = made.get(low, 0) | high
                    made[high] = made.get(high, 0) | low
            for cell_bit, threatened in made.items():
                if cell_bit & other_double:
                    zone &= cell_bit | threatened
            zone |= mover_two
        if not zone:
            return _DISPROVEN if attacker_to_move else _PROVEN
        moves = []
        while zone:
            low = zone & -zone
            moves.append(low.bit_length() - 1)
            zone ^= low
        width = self.weight_bits
        field = (1 << width) - 1
        moves.sort(key=lambda cell: weight >> cell * width & field, reverse=True)
        return moves

    def _paired(self, attacker: int, defender: int, attacker_to_move: bool) -> bool:
        """Whether the defender holds a pairing: disjoint pairs of empty cells, one pair on every
        line the attacker can still complete, each answered inside its pair (the defender to move
        first takes a cell that leaves one)."""
        geometry = self.geometry
        if not self.any_shape:
            return attacker_to_move and find_pairing(geometry, attacker, defender) is not None
        n = (self.full & ~(attacker | defender)).bit_count()
        if attacker_to_move:
            return covered_by_pairs(geometry, attacker, defender, (n + 1) >> 1) is not None
        return covered_by_pairs(geometry, attacker, defender, n >> 1, spare=True) is not None

    def trim(self, size_before: int, collections_before: int, most: int) -> None:
        """After a search that gave up: forget what it added if that is more than ``most`` entries
        (new keys come last in the table; all of them if the table was thinned meanwhile)."""
        table = self.table
        if self.collections != collections_before:
            size_before = 0
        if len(table) - size_before > most:
            if size_before == 0:
                table.clear()
            else:
                for key in list(islice(table, size_before, None)):
                    del table[key]

    # ------------------------------------------------------------------------------------
    def collect(self) -> None:
        """Thin the table to about half: keep the entries whose subtrees cost most to redo."""
        table = self.table
        works = sorted(entry[2] for entry in _sample(table, 2001))
        cutoff = works[int(len(works) * (1 - _GC_KEEP))] if works else 0
        for key in [key for key, entry in table.items() if entry[2] <= cutoff]:
            del table[key]
        if len(table) > self.table_limit * 3 // 4:  # many equal works: drop the oldest too
            for key in list(table)[: len(table) - self.table_limit // 2]:
                del table[key]
        self.collections += 1


def _sample(table: dict[int, tuple[int, int, int]], count: int) -> list[tuple[int, int, int]]:
    values = list(table.values())
    step = max(1, len(values) // count)
    return values[::step]


class _Run:
    """One question to the prover: the search, counting its positions with ``tick``."""

    def __init__(self, prover: Prover, tick: Callable[[], None]) -> None:
        self.prover = prover
        self.tick = tick

    def mid(self, attacker: int, defender: int, attacker_to_move: bool, key: int,
            th_pn: int, th_dn: int) -> tuple[int, int]:
        """Search until the node's proof number reaches ``th_pn`` or its disproof number ``th_dn``."""
        prover = self.prover
        prover.nodes += 1
        self.tick()
        table = prover.table
        nodes_before = prover.nodes
        found = prover.evaluate(attacker, defender, attacker_to_move)
        if found in (_PROVEN, _DISPROVEN):
            result = (0, INFINITE) if found == _PROVEN else (INFINITE, 0)
            old = table.get(key)
            if old is None and len(table) >= prover.table_limit:
                prover.collect()
            table[key] = (*result, old[2] if old is not None else 1)
            return result
        assert isinstance(found, list)
        size = prover.size
        children: list[tuple[int, int, int]] = []  # (child key, attacker, defender)
        seen: set[int] = set()
        child_turn = not attacker_to_move
        # symmetric positions are common in the opening only: deeper, a plain key is cheaper
        marks = attacker | defender << size
        offset = 0 if attacker_to_move else size
        if (attacker | defender).bit_count() < prover.symmetric_plies:
            keys = prover.canonical_children(marks, found, offset)
        else:
            keys = [marks | 1 << (cell + offset) for cell in found]
        for cell, child_marks in zip(found, keys, strict=True):
            bit = 1 << cell
            if attacker_to_move:
                a, d = attacker | bit, defender
            else:
                a, d = attacker, defender | bit
            child_key = child_marks << 1 | child_turn
            if child_key in seen:
                continue  # a symmetric move: the same position
            seen.add(child_key)
            children.append((child_key, a, d))
        # the children's numbers as this node sees them: "mine" is what this node minimises
        # (proof numbers at an OR node), "theirs" what it adds up; after a child's search its own
        # answer replaces its numbers (a transposition may leave another's stale for a while: a
        # stale number is never more decided than the truth, so answers stay right)
        get = table.get
        or_node = attacker_to_move
        mine: list[int] = []
        theirs: list[int] = []
        guess = 1
        if prover.guess_moves and not or_node:
            guess = max(1, prover.live_cells - 1)
            taken = attacker | defender
        for child_key, _, d in children:
            entry = get(child_key)
            if entry is None:
                if guess > 1:
                    bit = d ^ defender
                    for line in prover.through[bit.bit_length() - 1]:
                        if not line & attacker and (line & ~(taken | bit)).bit_count() == 1:
                            mine.append(1)  # a threat: the attacker's reply is forced
                            break
                    else:
                        mine.append(guess)
                else:
                    mine.append(1)
                theirs.append(1)
            elif or_node:
                mine.append(entry[0])
                theirs.append(entry[1])
            else:
                mine.append(entry[1])
                theirs.append(entry[0])
        grow = 1 + EPSILON
        while True:
            best = min(mine)
            total = sum(theirs)
            if total > INFINITE:
                total = INFINITE
            if or_node:
                pn, dn = best, total
            else:
                pn, dn = total, best
            if pn >= th_pn or dn >= th_dn or pn == 0 or dn == 0:
                break
            best_i = mine.index(best)
            mine[best_i] = INFINITE
            second = min(mine)
            mine[best_i] = best
            child_key, a, d = children[best_i]
            # thresholds for the chosen child (its own "mine" and "theirs" numbers)
            if or_node:
                child_th_pn = min(th_pn, int(second * grow) + 1)
                child_th_dn = th_dn - dn + theirs[best_i]
                cpn, cdn = self.mid(a, d, child_turn, child_key, child_th_pn, min(child_th_dn, INFINITE - 1))
                mine[best_i] = cpn
                theirs[best_i] = cdn
            else:
                child_th_dn = min(th_dn, int(second * grow) + 1)
                child_th_pn = th_pn - pn + theirs[best_i]
                cpn, cdn = self.mid(a, d, child_turn, child_key, min(child_th_pn, INFINITE - 1), child_th_dn)
                mine[best_i] = cdn
                theirs[best_i] = cpn
        if len(table) >= prover.table_limit:
            prover.collect()
        table[key] = (pn, dn, prover.nodes - nodes_before + 1)
        return pn, dn
