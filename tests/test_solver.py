"""The exact solver against a plain, obviously correct negamax, plus budgets and interrupts."""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Iterator

import pytest

from noughts import solver
from noughts.board import Board, Geometry
from noughts.budget import Budget
from noughts.errors import BudgetExceeded, InvalidBudgetError
from noughts.solver import Analysis, MoveAnalysis, Solution, analyse, best_moves, solve

Result = tuple[int, int]  # (value for the side to move, plies to the end)


def lines_of(rows: int, cols: int, k: int) -> list[int]:
    """Every k-in-a-row as a bitmask, worked out here rather than taken from Geometry."""
    masks = set()
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + dr * i, c + dc * i) for i in range(k)]
                if all(0 <= rr < rows and 0 <= cc < cols for rr, cc in cells):
                    masks.add(sum(1 << (rr * cols + cc) for rr, cc in cells))
    return sorted(masks)


def preference(result: Result) -> tuple[int, int]:
    """Higher is better for the player: win sooner, lose later; a draw is a draw."""
    value, plies = result
    return value, -plies if value > 0 else plies if value < 0 else 0


@functools.cache  # one memo per shape, shared by every test that asks about it
def negamax(rows: int, cols: int, k: int) -> Callable[[int, int], Result]:
    """Plain negamax over every move, memoised by (x, o) only so that it finishes."""
    lines = lines_of(rows, cols, k)
    size = rows * cols
    full = (1 << size) - 1
    memo: dict[tuple[int, int], Result] = {}
    complete: dict[int, bool] = {}  # marks -> whether they hold a whole line (one side's marks recur)

    def value(x: int, o: int) -> Result:
        result = memo.get((x, o))
        if result is not None:
            return result
        x_to_move = x.bit_count() == o.bit_count()
        last_mover = o if x_to_move else x
        won = complete.get(last_mover)
        if won is None:
            won = complete[last_mover] = any(last_mover & line == line for line in lines)
        if won:
            result = (-1, 0)
        elif x | o == full:
            result = (0, 0)
        else:
            best: Result | None = None
            best_rank = (0, 0)
            taken = x | o
            for cell in range(size):
                if taken >> cell & 1:
                    continue
                child_x, child_o = (x | 1 << cell, o) if x_to_move else (x, o | 1 << cell)
                child = memo.get((child_x, child_o)) or value(child_x, child_o)
                option = (-child[0], child[1] + 1)
                rank = preference(option)
                if best is None or rank > best_rank:  # the first of the best, as max() would pick
                    best, best_rank = option, rank
            assert best is not None
            result = best
        memo[x, o] = result
        return result

    return value


def reachable(board: Board) -> Iterator[Board]:
    """Every position reachable from ``board``, each once."""
    seen = {(board.x, board.o)}  # one board's positions: its marks tell them apart
    stack = [board]
    while stack:
        position = stack.pop()
        yield position
        for cell in position.legal_moves:
            child = position.play(cell)
            if (child.x, child.o) not in seen:
                seen.add((child.x, child.o))
                stack.append(child)


def random_position(rows: int, cols: int, k: int, marks: int, rng: random.Random) -> Board:
    board = Board(rows, cols, k)
    while board.ply < marks and not board.is_over:
        board = board.play(rng.choice(board.legal_moves))
    return board


def check(board: Board, brute: Callable[[int, int], Result]) -> None:
    """solve, analyse and best_moves of ``board`` all agree with the brute force."""
    x, o = board.x, board.o
    expected = brute(x, o)
    assert tuple(solve(board)) == expected, str(board)
    result = analyse(board)
    expected_moves = []
    x_to_move = x.bit_count() == o.bit_count()
    for cell in board.legal_moves:  # the position after each move, worked out here
        value, plies = brute(x | 1 << cell, o) if x_to_move else brute(x, o | 1 << cell)
        expected_moves.append(MoveAnalysis(cell, -value, plies + 1))
    assert result.moves == tuple(expected_moves), str(board)
    assert (result.value, result.plies) == expected, str(board)
    assert best_moves(board) == tuple(
        m.index for m in expected_moves if (m.value, m.plies) == (result.value, result.plies))


# 3×3 -----------------------------------------------------------------------------------------
def test_every_reachable_3x3_position_and_move_matches_negamax() -> None:
    brute = negamax(3, 3, 3)
    positions = list(reachable(Board()))
    assert len(positions) == 5478
    for board in positions:
        check(board, brute)


def test_general_search_agrees_on_every_3x3_position() -> None:
    """3×3 answers come from a table; the search used on other boards must agree with it too."""
    brute = negamax(3, 3, 3)
    general = solver._Solver(Geometry.get(3, 3, 3))
    search = solver._Search(general, Budget(), None)
    for board in reachable(Board()):
        if board.is_over:
            continue
        mover, other = (board.o, board.x) if board.ply & 1 else (board.x, board.o)
        got = solver._decode(general.exact(mover, other, search), 9, 9 - board.ply)
        assert tuple(got) == brute(board.x, board.o), str(board)


def test_known_3x3_values() -> None:
    assert solve(Board()) == Solution(0, 9)
    assert solve(Board.parse("X../.../...")) == Solution(0, 8)
    assert solve(Board.parse("XX./OO./...")) == Solution(1, 1)  # X completes the top row
    assert solve(Board.parse("X../.O./...").play(8)) == Solution(0, 6)
    # X's edge opening answered badly by O: X forks and wins on ply 5 of the game
    assert solve(Board.parse(".X./..O/...")) == Solution(1, 5)
    assert best_moves(Board()) == tuple(range(9))  # everything draws


def test_finished_positions() -> None:
    won = Board.parse("XXX/OO./...")
    assert solve(won) == Solution(-1, 0)
    assert analyse(won) == Analysis(-1, 0, ())
    assert best_moves(won) == ()
    drawn = Board.parse("XOX/XOO/OXX")
    assert solve(drawn) == Solution(0, 0)
    assert analyse(drawn) == Analysis(0, 0, ())
    big_won = Board.parse("XXXX/OOO./..../....")
    assert solve(big_won) == Solution(-1, 0)


# other small boards --------------------------------------------------------------------------
@pytest.mark.parametrize(("rows", "cols", "k", "marks", "count"), [
    (3, 3, 2, 0, 40), (3, 4, 3, 2, 60), (4, 3, 3, 2, 60), (2, 5, 3, 0, 60), (1, 6, 3, 0, 30),
    (1, 1, 1, 0, 1), (2, 2, 2, 0, 10), (3, 5, 4, 5, 40), (4, 4, 3, 6, 30), (2, 3, 3, 0, 20),
])
def test_small_boards_match_negamax(rows: int, cols: int, k: int, marks: int, count: int) -> None:
    brute = negamax(rows, cols, k)
    rng = random.Random(f"{rows}x{cols}k{k}")
    for _ in range(count):
        check(random_position(rows, cols, k, rng.randint(marks, rows * cols), rng), brute)


# every shape of up to 12 cells, every k ----------------------------------------------------------
def shapes(fewest: int, most: int) -> list[tuple[int, int, int]]:
    """Every rows×cols with ``fewest`` to ``most`` cells, with every k it allows."""
    return [(rows, cols, k) for rows in range(1, most + 1) for cols in range(1, most + 1)
            if fewest <= rows * cols <= most for k in range(1, max(rows, cols) + 1)]


def shape_id(shape: tuple[int, int, int]) -> str:
    return "{}x{}k{}".format(*shape)


@pytest.mark.slow
@pytest.mark.parametrize("shape", shapes(1, 9), ids=shape_id)
def test_every_position_of_every_board_of_up_to_9_cells_matches_negamax(shape: tuple[int, int, int]) -> None:
    """solve, analyse and best_moves on every reachable position (1×2 with 2 in a row once crashed)."""
    brute = negamax(*shape)
    for board in reachable(Board(*shape)):
        check(board, brute)


@pytest.mark.parametrize("shape", shapes(10, 12), ids=shape_id)
def test_late_positions_of_every_board_of_10_to_12_cells_match_negamax(shape: tuple[int, int, int]) -> None:
    """Every position with at most 8 empty cells along random games (the negamax of an earlier
    position would take seconds per shape)."""
    brute = negamax(*shape)
    rng = random.Random(shape_id(shape))
    for _ in range(4):
        board = Board(*shape)
        while True:
            if board.size - board.ply <= 8:
                check(board, brute)
            if board.is_over:
                break
            board = board.play(rng.choice(board.legal_moves))


def test_symmetric_positions_share_values() -> None:
    rng = random.Random(3)
    for _ in range(20):
        board = random_position(4, 5, 4, 9, rng)
        if board.is_over:
            continue
        results = {solve(image) for image in board.symmetries()}
        assert len(results) == 1, str(board)


# 4×4, four in a row --------------------------------------------------------------------------
def test_empty_4x4_is_a_draw() -> None:
    assert solve(Board(4, 4, 4)) == Solution(0, 16)


@pytest.mark.parametrize("seed", range(3))
def test_4x4_mid_game_matches_negamax(seed: int) -> None:
    brute = negamax(4, 4, 4)
    rng = random.Random(seed)
    checked = 0
    while checked < 12:
        board = random_position(4, 4, 4, rng.choice((9, 10, 11)), rng)
        if not board.is_over:
            check(board, brute)
            checked += 1


def test_4x4_seven_marks_matches_negamax() -> None:
    """Nine empty cells: the deepest mid-game 4×4 check that the plain negamax does quickly."""
    brute = negamax(4, 4, 4)
    for text in ("XO../.X../..O./X.OX", "X..O/.OX./.X../O..X"):
        check(Board.parse(text), brute)


def test_4x4_openings_are_consistent() -> None:
    """A few plies in (too deep for the negamax): every move's result is its child's solution."""
    rng = random.Random(11)
    for marks in (1, 2, 3, 4, 5):
        board = random_position(4, 4, 4, marks, rng)
        result = analyse(board)
        for move in result.moves:
            child = solve(board.play(move.index))
            assert (move.value, move.plies) == (-child.value, child.plies + 1)
        best = max(result.moves, key=lambda m: preference((m.value, m.plies)))
        assert (result.value, result.plies) == (best.value, best.plies) == tuple(solve(board))


def test_4x4_forced_wins() -> None:
    # X to move has two ways to finish the top row: win now
    assert solve(Board.parse("XXX./OOO./..../....")) == Solution(1, 1)
    # O to move faces two X threats (a1-d1 needs d1, the diagonal needs d4): O loses next ply
    board = Board.parse("XXX./.XOO/.OX./.O..")
    assert solve(board) == Solution(-1, 2)
    assert {m.value for m in analyse(board).moves} == {-1}


@pytest.mark.parametrize(("rows", "cols", "k"), [(4, 4, 4), (4, 5, 3), (5, 5, 3), (4, 4, 3)])
def test_best_moves_keeps_the_value_that_analyse_finds(rows: int, cols: int, k: int) -> None:
    """Off 3×3, best_moves only tests each move against the position's value: it must pick the
    same moves as a full analysis, in a fresh cache and in a warm one."""
    rng = random.Random(f"best{rows}{cols}{k}")
    for marks in (1, 2, 3, 4, 6):
        board = random_position(rows, cols, k, marks, rng)
        solver.clear_cache()
        fast = best_moves(board)
        result = analyse(board)
        slow = tuple(m.index for m in result.moves if (m.value, m.plies) == (result.value, result.plies))
        assert fast == slow == best_moves(board), str(board)


# budgets, progress and interrupts ------------------------------------------------------------
def test_node_budget_on_a_huge_board_raises_and_leaves_the_cache_usable() -> None:
    board = Board(15, 15, 5)
    with pytest.raises(BudgetExceeded, match="gave up"):
        solve(board, max_nodes=100)
    with pytest.raises(BudgetExceeded):
        analyse(board, max_nodes=100)
    # the same geometry still answers a position it can finish
    near_end = Board.parse("XXXX" + "." * 11 + "/OOOO" + "." * 11 + ("/" + "." * 15) * 13, k=5)
    assert solve(near_end) == Solution(1, 1)
    assert solve(Board(4, 4, 4)) == Solution(0, 16)


def test_deadline_raises() -> None:
    with pytest.raises(BudgetExceeded, match="time"):
        solve(Board(15, 15, 5), deadline=time.monotonic())


def test_progress_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solver, "PROGRESS_INTERVAL", 0.0)
    solver.clear_cache()
    reports: list[tuple[int, float]] = []
    assert solve(Board(4, 4, 4), progress=lambda n, t: reports.append((n, t))) == Solution(0, 16)
    assert reports
    assert all(n > 0 and t >= 0 for n, t in reports)
    assert [n for n, _ in reports] == sorted(n for n, _ in reports)


def test_interrupt_propagates_and_leaves_only_true_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solver, "ALPHA_BETA_MAX_SIZE", 30)  # the alpha-beta table (test_proofs: the prover)
    monkeypatch.setattr(solver, "PROGRESS_INTERVAL", 0.0)
    solver.clear_cache()
    calls = 0

    def interrupt(nodes: int, elapsed: float) -> None:
        nonlocal calls
        calls += 1
        if calls == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        solve(Board(4, 5, 4), progress=interrupt)
    geometry = Geometry.get(4, 5, 4)
    table = solver._solver(geometry).table
    assert table
    # every bound left behind holds: compare a sample with a separate, uninterrupted search
    fresh = solver._Solver(geometry)
    search = solver._Search(fresh, Budget(), None)
    size = geometry.size
    for key in random.Random(0).sample(sorted(table), 15):
        low, high, _ = table[key]
        mover, other = key & geometry.full, key >> size
        assert low <= fresh.exact(mover, other, search) <= high
    # and the interrupted cache goes on to give the right answers
    assert solve(Board(4, 5, 4)) == Solution(0, 20)


class WatchedBudget(Budget):
    """A budget on a clock that moves only when the test says, noting when it is looked at."""

    def __init__(self, nodes: int | None = None, seconds: float | None = None,
                 times: Callable[[int], float] | None = None) -> None:
        self.looks: list[int] = []  # positions spent at each look
        self.times = times or (lambda look: 0.0)  # the clock's reading at the n-th look (0: creation)
        super().__init__(nodes, seconds, clock=lambda: self.times(len(self.looks)))

    def check(self, nodes: int = 0) -> None:
        self.looks.append(self.spent + nodes)
        super().check(nodes)


@pytest.mark.parametrize(("shape", "call", "nodes"), [
    ((4, 4, 4), solve, None), ((4, 5, 4), best_moves, 20_000), ((15, 15, 5), solve, 100),
    ((26, 26, 2), analyse, 100), ((26, 26, 2), best_moves, 100), ((26, 26, 5), solve, 50),
    ((20, 20, 3), analyse, 100),
])  # big boards look every 8 positions or fewer: even 50 positions make many looks, at ~2 ms a position
def test_the_budget_is_looked_at_every_few_positions(
        shape: tuple[int, int, int], call: Callable[..., object], nodes: int | None) -> None:
    solver.clear_cache()
    geometry = Geometry.get(*shape)
    every = solver.check_interval(geometry)
    budget = WatchedBudget(nodes)
    try:
        call(Board(*shape), budget=budget)
    except BudgetExceeded:
        assert nodes is not None and budget.spent >= nodes
    gaps = [b - a for a, b in zip([0, *budget.looks], budget.looks, strict=False)]
    assert gaps and max(gaps) <= every
    assert budget.spent - budget.looks[-1] <= every  # the positions after the last look, too


def test_big_boards_look_at_the_budget_more_often() -> None:
    assert solver.check_interval(Geometry.get(3, 3, 3)) >= 500
    assert solver.check_interval(Geometry.get(4, 4, 4)) >= 500
    assert solver.check_interval(Geometry.get(26, 26, 2)) <= 8
    assert solver.check_interval(Geometry.get(26, 26, 5)) <= 4


@pytest.mark.parametrize(("shape", "call"), [
    ((26, 26, 2), analyse), ((26, 26, 2), best_moves), ((26, 26, 5), solve), ((15, 15, 5), analyse),
    ((5, 5, 4), solve), ((10, 10, 4), best_moves),
])
def test_a_search_stops_at_the_first_look_after_its_time_is_up(
        shape: tuple[int, int, int], call: Callable[..., object]) -> None:
    """Three looks within the time, then the clock jumps past it: the fourth look stops the search.

    Before, analyse on 26×26 with 2 in a row searched each move's few positions apart and never
    looked at the clock: 3 minutes against a 5 s deadline."""
    solver.clear_cache()
    budget = WatchedBudget(seconds=10.0, times=lambda look: 0.0 if look == 0 else 1.0 if look <= 3 else 11.0)
    with pytest.raises(BudgetExceeded, match="ran out of time") as caught:
        call(Board(*shape), budget=budget)
    assert len(budget.looks) == 4
    assert caught.value.reason == "time" and caught.value.elapsed == 11.0
    assert budget.spent <= 4 * solver.check_interval(Geometry.get(*shape))


def test_the_older_budget_arguments_still_work() -> None:
    with pytest.raises(BudgetExceeded, match="gave up after searching 100 positions, its budget"):
        solve(Board(15, 15, 5), max_nodes=100)
    with pytest.raises(BudgetExceeded, match="ran out of time"):
        analyse(Board(26, 26, 2), deadline=time.monotonic() - 1)
    with pytest.raises(InvalidBudgetError, match="either"):
        solve(Board(4, 4, 4), max_nodes=10, budget=Budget(10))
    assert best_moves(Board.parse("XX./OO./..."), max_nodes=0) == (2,)  # 3×3 is a lookup


def test_one_budget_spent_by_several_calls() -> None:
    solver.clear_cache()
    budget = Budget(nodes=1_000_000)
    solve(Board(4, 4, 4), budget=budget)
    first = budget.spent
    assert first > 0
    solve(Board(4, 5, 3), budget=budget)
    assert budget.spent > first
    part = budget.limited(nodes=10)  # a part of what is left, spent apart
    with pytest.raises(BudgetExceeded, match="10 positions"):
        solve(Board(15, 15, 5), budget=part)
    assert part.spent == 10 and budget.nodes_left() == 1_000_000 - budget.spent


def test_big_boards_need_no_long_precomputation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Canonical keys came from per-byte tables that took 0.3 s and 60 MB to build on 26×26, before
    the search first looked at its budget; past 64 cells key bits are now moved one by one."""
    big = solver._Solver(Geometry.get(26, 26, 2))
    assert big._sym_tables == [] and [len(t) for t in big._bit_targets] == [2 * 676] * 7
    assert len(solver._Solver(Geometry.get(8, 8, 5))._sym_tables) == 7
    # both ways find the same canonical key and symmetry
    for shape in ((8, 8, 5), (5, 7, 4), (9, 9, 3)):
        geometry = Geometry.get(*shape)
        monkeypatch.setattr(solver, "_TABLE_MAX_SIZE", 100)
        by_chunks = solver._Solver(geometry)
        monkeypatch.setattr(solver, "_TABLE_MAX_SIZE", 1)
        bit_by_bit = solver._Solver(geometry)
        rng = random.Random(str(shape))
        for _ in range(200):
            board = random_position(*shape, rng.randrange(geometry.size), rng)
            mover, other = (board.o, board.x) if board.ply & 1 else (board.x, board.o)
            key = mover | other << geometry.size
            assert by_chunks.orient(key) == bit_by_bit.orient(key)
    monkeypatch.setattr(solver, "_TABLE_MAX_SIZE", 1)  # and solve alike
    solver.clear_cache()
    position = Board.parse("XO../.X../..../...O")
    assert tuple(solve(position)) == negamax(4, 4, 4)(position.x, position.o)
    assert best_moves(position) == best_moves_by_negamax(position)
    solver.clear_cache()


def best_moves_by_negamax(board: Board) -> tuple[int, ...]:
    brute = negamax(board.rows, board.cols, board.k)
    results = {cell: brute(board.play(cell).x, board.play(cell).o) for cell in board.legal_moves}
    best = max(results.values(), key=lambda r: preference((-r[0], r[1] + 1)))
    return tuple(cell for cell, result in results.items() if result == best)


# memory ---------------------------------------------------------------------------------------
def test_tables_are_kept_for_a_few_shapes_only() -> None:
    solver.clear_cache()
    for rows in range(1, 9):
        for cols in (3, 4):
            solve(Board(rows, cols, 3))
            assert len(solver._solvers) <= solver.SOLVER_CACHE_SHAPES
    assert Geometry.get(8, 4, 3) in solver._solvers  # the most recent stays
    assert solve(Board(4, 4, 4)) == Solution(0, 16)


def test_all_tables_together_stay_within_their_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solver, "_TABLE_BYTES", 1_500_000)  # about 10,000 entries
    solver.clear_cache()
    for shape in ((4, 4, 4), (4, 5, 3), (3, 7, 4), (4, 4, 3), (5, 4, 3)):
        assert solve(Board(*shape)) == tuple(solve(Board(*shape)))
        total = sum(s.table_bytes() for s in solver._solvers.values())
        assert total <= 2 * 1_500_000
        assert all(len(s.table) <= s.table_limit for s in solver._solvers.values())


def test_a_search_that_gives_up_forgets_what_it_added(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solver, "ALPHA_BETA_MAX_SIZE", 30)  # the alpha-beta table (test_proofs: the prover)
    monkeypatch.setattr(solver, "TRIM_ENTRIES", 500)
    solver.clear_cache()
    geometry = Geometry.get(5, 5, 4)
    with pytest.raises(BudgetExceeded):
        solve(Board(5, 5, 4), max_nodes=20_000)
    assert len(solver._solver(geometry).table) == 0
    # a search that gives up early keeps its few bounds: they are true, and cheap to keep
    with pytest.raises(BudgetExceeded):
        solve(Board(5, 5, 4), max_nodes=300)
    assert 0 < len(solver._solver(geometry).table) <= 500


def test_a_search_that_gives_up_keeps_what_earlier_searches_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solver, "ALPHA_BETA_MAX_SIZE", 30)  # the alpha-beta table (test_proofs: the prover)
    monkeypatch.setattr(solver, "TRIM_ENTRIES", 500)
    solver.clear_cache()
    solve(Board(4, 5, 4).play(0).play(19))
    table = solver._solver(Geometry.get(4, 5, 4)).table
    found = dict(table)
    assert len(found) > 500
    added: list[int] = []
    trim = solver._Solver.trim

    def noting_trim(self: solver._Solver, size_before: int, clears_before: int) -> None:
        added.append(len(self.table) - size_before)
        trim(self, size_before, clears_before)

    monkeypatch.setattr(solver._Solver, "trim", noting_trim)
    with pytest.raises(BudgetExceeded):
        solve(Board(4, 5, 4).play(9), max_nodes=5_000)
    assert added[0] > 500  # the failed search had added plenty
    assert table.keys() == found.keys()
    # the table was full and emptied during the search: everything in it is the search's own
    monkeypatch.setattr(solver._solver(Geometry.get(4, 5, 4)), "table_limit", 2_000)
    with pytest.raises(BudgetExceeded):
        solve(Board(4, 5, 4).play(7), max_nodes=8_000)
    assert len(table) == 0


def test_bad_budget() -> None:
    with pytest.raises(ValueError, match="max_nodes"):
        solve(Board(4, 4, 4), max_nodes=-1)
    for bad in ({"nodes": -1}, {"seconds": -0.5}, {"seconds": float("nan")}, {"nodes": 1.5}, {"nodes": True}):
        with pytest.raises(InvalidBudgetError):
            Budget(**bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidBudgetError, match="Budget"):
        solve(Board(4, 4, 4), budget=100)  # type: ignore[arg-type]
