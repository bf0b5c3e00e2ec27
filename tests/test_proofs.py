"""Pairing strategies and proof-number search, checked against a plain memoised search."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable

import pytest

from noughts import solver
from noughts.board import Board, Geometry
from noughts.budget import Budget
from noughts.errors import BudgetExceeded
from noughts.solver.pairing import covered_by_pairs, find_pairing, pairing_diagram
from noughts.solver.proof import Prover

pairing_module = sys.modules["noughts.solver.pairing"]  # (solver.pairing is the function of that name)

# every board of up to 10 cells with 3 or more in a row, where a plain search is cheap, and 3×4
SMALL = [(r, c, k) for r in range(1, 4) for c in range(r, 11) if r * c <= 10
         for k in range(3, max(r, c) + 1)] + [(3, 4, 3), (4, 3, 3)]


def plain_values(geometry: Geometry) -> Callable[[int, int], int]:
    """value(mover, other): 1, 0 or -1 for the side to move, by memoised search of every move."""
    lines = geometry.line_masks
    full = geometry.full
    memo: dict[tuple[int, int], int] = {}

    def value(mover: int, other: int) -> int:
        found = memo.get((mover, other))
        if found is not None:
            return found
        empty = full & ~(mover | other)
        best = 0 if not empty else -1
        while empty and best < 1:
            bit = empty & -empty
            empty ^= bit
            after = mover | bit
            if any(after & line == line for line in lines):
                best = 1
            elif (after | other) == full:
                best = max(best, 0)
            else:
                best = max(best, -value(other, after))
        memo[(mover, other)] = best
        return best

    return value


def prover_value(prover: Prover, mover: int, other: int) -> int:
    tick = Budget().check
    if prover.proves(mover, other, True, tick):
        return 1
    return -1 if prover.proves(other, mover, False, tick) else 0


def positions(geometry: Geometry, rng: random.Random, count: int) -> list[Board]:
    """The empty board, every first move, and ``count`` random unfinished positions."""
    board = Board(geometry.rows, geometry.cols, geometry.k)
    found = [board, *(board.play(cell) for cell in board.legal_moves)]
    while len(found) < count:
        b = board
        for _ in range(rng.randrange(geometry.size)):
            b = b.play(rng.choice(b.legal_moves))
            if b.is_over:
                break
        if not b.is_over:
            found.append(b)
    return [b for b in found if not b.is_over]


def sides(board: Board) -> tuple[int, int]:
    return (board.o, board.x) if board.ply & 1 else (board.x, board.o)


@pytest.mark.parametrize("shape", SMALL, ids=lambda s: f"{s[0]}x{s[1]}k{s[2]}")
def test_the_prover_agrees_with_plain_search_on_small_boards(shape: tuple[int, int, int]) -> None:
    geometry = Geometry.get(*shape)
    plain = plain_values(geometry)
    prover = Prover(geometry, solver._solver(geometry).orient)
    rng = random.Random(str(shape))
    for board in positions(geometry, rng, 40):
        mover, other = sides(board)
        assert prover_value(prover, mover, other) == plain(mover, other), str(board)


def test_pairings_are_pairings_and_hold() -> None:
    """Every pairing found covers every live line with a pair of empty cells, and where a plain
    search is cheap the attacker indeed cannot win, whoever moves."""
    rng = random.Random(7)
    found = 0
    for shape in [(5, 5, 5), (6, 6, 6), (7, 7, 5), (4, 4, 4), (3, 4, 3), (2, 5, 3), (3, 3, 3)]:
        geometry = Geometry.get(*shape)
        plain = plain_values(geometry) if geometry.size <= 12 else None
        for board in positions(geometry, rng, 60):
            for attacker, defender in ((board.x, board.o), (board.o, board.x)):
                pairs = find_pairing(geometry, attacker, defender)
                if pairs is None:
                    continue
                found += 1
                cells = [cell for pair in pairs for cell in pair]
                assert len(set(cells)) == len(cells)
                assert not any((attacker | defender) >> cell & 1 for cell in cells)
                for line in geometry.line_masks:
                    if not line & defender:
                        assert any(line >> a & 1 and line >> b & 1 for a, b in pairs), str(board)
                if plain is not None:
                    attacker_moves = (attacker == board.x) == (board.ply % 2 == 0)
                    result = plain(attacker, defender) if attacker_moves else -plain(defender, attacker)
                    assert result <= 0, str(board)
    assert found > 30  # the check saw many pairings


def test_k_by_k_boards_from_5_are_draws_by_pairing_without_search() -> None:
    for k in (5, 6, 7, 8):
        board = Board(k, k, k)
        pairs = solver.pairing(board, "O")
        assert pairs is not None and len(pairs) == 2 * k + 2  # a pair per row, column and diagonal
    assert solver.pairing(Board(3, 3, 3), "O") is None
    diagram = pairing_diagram(Board(5, 5, 5), solver.pairing(Board(5, 5, 5), "O") or ())
    assert diagram.count(".") == 1 and len(diagram.splitlines()) == 5  # 24 of 25 cells paired


def test_big_draws_are_proved_in_few_positions() -> None:
    for shape in ((5, 5, 5), (6, 6, 5), (6, 6, 6)):
        solver.clear_cache()
        budget = Budget(nodes=2_000)
        assert solve_value(Board(*shape), budget) == 0
    assert solver.solve(Board(6, 6, 5)) == solver.Solution(0, 36)


def solve_value(board: Board, budget: Budget) -> int:
    return solver.solve(board, budget=budget).value


def test_the_table_stays_within_its_limit_and_answers_right() -> None:
    geometry = Geometry.get(4, 5, 4)
    prover = Prover(geometry, solver._solver(geometry).orient)
    prover.table_limit = 40
    highest = 0

    def tick() -> None:
        nonlocal highest
        highest = max(highest, len(prover.table))

    assert not prover.proves(0, 0, True, tick)  # 4×5 with four in a row: a draw
    assert prover.collections > 0 and highest <= 40


def test_a_proof_that_gives_up_forgets_what_it_added(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solver, "TRIM_ENTRIES", 300)
    solver.clear_cache()
    with pytest.raises(BudgetExceeded):
        solver.solve(Board(4, 7, 4), max_nodes=3_000)
    prover = solver._solver(Geometry.get(4, 7, 4)).prover
    assert len(prover.table) == 0
    with pytest.raises(BudgetExceeded):
        solver.solve(Board(4, 7, 4), max_nodes=100)
    assert 0 < len(prover.table) <= 300  # a few entries are cheap to keep


def test_an_interrupted_proof_leaves_only_true_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solver, "TRIM_ENTRIES", 10**9)
    solver.clear_cache()
    with pytest.raises(BudgetExceeded):
        solver.solve(Board(4, 5, 4), max_nodes=60)
    geometry = Geometry.get(4, 5, 4)
    table = solver._solver(geometry).prover.table
    solved = [key for key, (pn, dn, _) in table.items() if pn == 0 or dn == 0]
    assert solved
    fresh = solver._Solver(geometry)
    search = solver._Search(fresh, Budget(), None)
    size = geometry.size
    for key in solved[:40]:
        attacker_to_move = key & 1
        marks = key >> 1
        attacker, defender = marks & geometry.full, marks >> size
        mover, other = (attacker, defender) if attacker_to_move else (defender, attacker)
        value = fresh.exact(mover, other, search) if (mover | other) != geometry.full else 0
        attacker_wins = value > 0 if attacker_to_move else value < 0
        assert attacker_wins == (table[key][0] == 0)


def test_childrens_canonical_keys_from_the_parents_images_match_orient() -> None:
    for shape in ((5, 6, 4), (4, 7, 4), (6, 6, 5), (9, 9, 5)):  # 9×9: past the tables, key by key
        geometry = Geometry.get(*shape)
        search = solver._Solver(geometry)
        rng = random.Random(str(shape))
        size = geometry.size
        for board in positions(geometry, rng, 20)[-12:]:
            mover, other = sides(board)
            key = mover | other << size
            cells = list(board.legal_moves)
            for offset in (0, size):
                expected = [search.orient(key | 1 << (cell + offset))[0] for cell in cells]
                assert search.canonical_children(key, cells, offset) == expected, str(board)


def any_pairing(geometry: Geometry, attacker: int, defender: int, moves: int, spare: bool) -> bool:
    """Brute force: disjoint pairs of empty cells, one inside every line ``attacker`` can still
    complete with ``moves`` marks (with ``spare``, one line may hold a single cell instead)."""
    empty = geometry.full & ~(attacker | defender)
    lines = [line & empty for line in geometry.line_masks
             if not line & defender and (line & empty).bit_count() <= moves]

    def cover(lines: list[int], spare: bool) -> bool:
        if not lines:
            return True
        cells = [c for c in range(geometry.size) if lines[0] >> c & 1]
        options = [1 << c for c in cells] if spare else []
        options += [1 << a | 1 << b for i, a in enumerate(cells) for b in cells[i + 1:]]
        for taken in options:
            single = taken.bit_count() == 1
            rest = [line & ~taken for line in lines if line & taken != taken]
            if all((line.bit_count() >= 2) or (spare and not single and line) for line in rest) \
                    and cover(rest, spare and not single):
                return True
        return False

    return cover(lines, spare)


def test_pairings_of_any_shape_are_found_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """covered_by_pairs against brute force, whoever moves, on positions of boards with four in a row."""
    monkeypatch.setattr(pairing_module, "SPARE_CELLS", 100)  # every first move of the defender
    rng = random.Random(11)
    found = {False: 0, True: 0}
    for shape in ((4, 4, 4), (4, 5, 4), (3, 5, 3)):
        geometry = Geometry.get(*shape)
        for board in positions(geometry, rng, 20)[-12:]:
            n = geometry.size - board.ply
            for attacker, defender in ((board.x, board.o), (board.o, board.x)):
                for spare in (False, True):
                    moves = n >> 1 if spare else (n + 1) >> 1
                    expected = any_pairing(geometry, attacker, defender, moves, spare)
                    got = covered_by_pairs(geometry, attacker, defender, moves, spare=spare, steps=10**6)
                    assert (got is not None) == expected, (str(board), spare)
                    found[expected] += 1
    assert found[True] > 10 and found[False] > 10


@pytest.mark.parametrize("shape", [(4, 4, 4), (4, 4, 3), (3, 4, 4)], ids=lambda s: f"{s[0]}x{s[1]}k{s[2]}")
def test_the_prover_agrees_with_plain_search_from_mid_game(shape: tuple[int, int, int]) -> None:
    """Positions of 6 to 12 marks (every line of play the plain search needs is memoised once)."""
    geometry = Geometry.get(*shape)
    plain = plain_values(geometry)
    prover = Prover(geometry, solver._solver(geometry).orient)
    rng = random.Random(str(shape) + "mid")
    checked = 0
    while checked < 25:
        board = Board(*shape)
        for _ in range(rng.randrange(6, 13)):
            board = board.play(rng.choice(board.legal_moves))
            if board.is_over:
                break
        if board.is_over:
            continue
        mover, other = sides(board)
        assert prover_value(prover, mover, other) == plain(mover, other), str(board)
        checked += 1


@pytest.mark.parametrize(("rows", "cols", "k"), [(5, 5, 5), (4, 5, 5), (7, 7, 6)])
def test_analyse_explain_draws_a_pairing_that_blocks_every_line(rows: int, cols: int, k: int,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from noughts.cli import main

    assert main(["analyse", "--rows", str(rows), "--cols", str(cols), "--k", str(k), "--explain"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("O stops X by pairing"))
    grid = [line.split() for line in lines[start + 1:start + 1 + rows]]
    assert all(len(row) == cols for row in grid), grid
    cells_of: dict[str, list[int]] = {}
    for r, row in enumerate(grid):
        for c, letter in enumerate(row):
            if letter != ".":
                cells_of.setdefault(letter, []).append(r * cols + c)
    assert all(len(cells) == 2 for cells in cells_of.values()), cells_of
    pairs = [set(cells) for cells in cells_of.values()]
    for window in Geometry(rows, cols, k).lines:
        assert any(pair <= set(window) for pair in pairs), window


def test_the_defenders_move_guess_steers_the_search_but_never_the_answer() -> None:
    """On boards k high with four or fewer df-pn starts an untried defender's move at the
    attacker's live cells (1 for a threat): the same values as the plain search with the guess on
    and off, in other numbers of positions (so the guess is in play)."""
    nodes = {True: 0, False: 0}
    for shape in ((3, 4, 3), (4, 3, 3)):
        geometry = Geometry.get(*shape)
        plain = plain_values(geometry)
        boards = positions(geometry, random.Random(str(shape) + "guess"), 30)
        for guess in (True, False):
            prover = Prover(geometry, solver._solver(geometry).orient)
            assert prover.guess_moves  # on by default here
            prover.guess_moves = guess
            for board in boards:
                mover, other = sides(board)
                assert prover_value(prover, mover, other) == plain(mover, other), str(board)
            nodes[guess] += prover.nodes
    assert nodes[True] != nodes[False], nodes
    assert not Prover(Geometry.get(5, 5, 4), solver._solver(Geometry.get(5, 5, 4)).orient).guess_moves
