"""The perfect player: never loses, wins fastest, sets traps, and draws ties only from its rng."""

from __future__ import annotations

import random
import runpy
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from noughts import solver
from noughts.board import Board
from noughts.budget import Budget
from noughts.errors import IllegalMoveError, UnsupportedBoardError
from noughts.players import perfect_33
from noughts.players.perfect import PerfectPlayer, work_out_moves_33

Result = tuple[int, int]  # (value for the side to move, plies to the end)


def preference(result: Result) -> tuple[int, int]:
    """Higher is better for the player: win sooner, lose later."""
    value, plies = result
    return value, -plies if value > 0 else plies if value < 0 else 0


def negamax(rows: int, cols: int, k: int) -> Callable[[int, int], Result]:
    """Plain memoised negamax over (x, o) bitmasks, with its own list of lines."""
    size = rows * cols
    lines = {sum(1 << ((r + dr * i) * cols + c + dc * i) for i in range(k))
             for r in range(rows) for c in range(cols) for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1))
             if 0 <= r + dr * (k - 1) < rows and 0 <= c + dc * (k - 1) < cols}

    @cache
    def value(x: int, o: int) -> Result:
        x_to_move = x.bit_count() == o.bit_count()
        if any((o if x_to_move else x) & line == line for line in lines):
            return (-1, 0)
        if (x | o).bit_count() == size:
            return (0, 0)
        children = (value(x | 1 << c, o) if x_to_move else value(x, o | 1 << c)
                    for c in range(size) if not (x | o) >> c & 1)
        return max(((-v, p + 1) for v, p in children), key=preference)

    return value


def reachable(board: Board) -> list[Board]:
    """Every position reachable from ``board``, each once."""
    seen = {board}
    found = []
    stack = [board]
    while stack:
        position = stack.pop()
        found.append(position)
        for cell in position.legal_moves:
            child = position.play(cell)
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return found


brute = negamax(3, 3, 3)


def best_cells(board: Board) -> set[int]:
    """The cells the negamax rates best: right result, then fastest win or slowest loss."""
    mover = {}
    for cell in board.legal_moves:
        child = board.play(cell)
        value, plies = brute(child.x, child.o)
        mover[cell] = (-value, plies + 1)
    top = max(mover.values(), key=preference)
    return {cell for cell, result in mover.items() if result == top}


PLAYER = PerfectPlayer(random.Random(0))


def options(board: Board) -> tuple[int, ...]:
    """Every cell the player may pick here (its random tie-break chooses among these)."""
    return PLAYER.candidates(board)


def test_every_choice_is_optimal_in_every_3x3_position() -> None:
    for board in reachable(Board()):
        if board.is_over:
            continue
        cells = options(board)
        assert cells, str(board)
        assert set(cells) <= best_cells(board), str(board)
        assert len(set(cells)) == len(cells)


@cache
def outcomes(board: Board, perfect_side: str) -> frozenset[tuple[str | None, int]]:
    """(winner, plies to the end) of every game from here: the player may take any of its tied
    choices, the opponent any legal move."""
    if board.is_over:
        return frozenset({(board.winner, 0)})
    cells = options(board) if board.turn == perfect_side else board.legal_moves
    return frozenset((winner, plies + 1) for cell in cells
                     for winner, plies in outcomes(board.play(cell), perfect_side))


@pytest.mark.parametrize("side", ["X", "O"])
def test_never_loses_and_wins_won_positions_in_the_fewest_plies(side: str) -> None:
    # every game from the empty board, whatever the opponent does and whichever tie it takes
    games = outcomes(Board(), side)
    assert {winner for winner, _ in games} == {side, None}  # it wins some, loses none
    other = "O" if side == "X" else "X"
    for board in reachable(Board()):
        if board.is_over or board.turn != side:
            continue
        results = outcomes(board, side)
        value, plies = brute(board.x, board.o)
        if value >= 0:  # not lost already: never loses from here
            assert all(winner != other for winner, _ in results), str(board)
        if value == 1:  # won: always won, never later than the best line allows
            assert all(winner == side for winner, _ in results), str(board)
            assert max(p for _, p in results) == plies, str(board)


def test_picks_the_shortest_win() -> None:
    player = PerfectPlayer(random.Random(0))
    # X can win at once on c1 or set up a slower win: it must take c1
    board = Board.parse("XX./OO./...")
    assert {player.choose(board) for _ in range(20)} == {2}
    # O to move is lost but holds out longest: the block on a1 loses in 4 plies, not 2
    assert options(Board.parse(".../.X./.OX")) == (0,)


def test_prefers_moves_that_leave_the_opponent_more_ways_to_go_wrong() -> None:
    # every first move draws; after a corner only O's centre reply draws (7 losing replies),
    # after the centre 4 replies lose, after an edge fewer
    assert options(Board()) == (0, 2, 6, 8)


def test_the_shipped_3x3_table_is_what_the_script_writes_from_the_solver() -> None:
    worked_out = work_out_moves_33()
    assert worked_out == perfect_33.MOVES
    script = runpy.run_path(str(Path(__file__).resolve().parent.parent / "scripts" / "make_perfect_33.py"))
    assert Path(perfect_33.__file__).read_text(encoding="utf-8") == script["render"](worked_out)


def traps(board: Board) -> int:
    """How many of the side to move's replies are worse than its best, by the negamax."""
    return 0 if board.is_over else len(board.legal_moves) - len(best_cells(board))


def test_every_3x3_entry_is_every_best_move_that_sets_the_most_traps_by_the_negamax() -> None:
    assert len(perfect_33.MOVES) == sum(not board.is_over for board in reachable(Board()))
    for key, cells in perfect_33.MOVES.items():
        board = Board.from_bits(key & 511, key >> 9)
        set_traps = {cell: traps(board.play(cell)) for cell in best_cells(board)}
        most = max(set_traps.values())
        assert cells == tuple(sorted(cell for cell, count in set_traps.items() if count == most)), str(board)


def test_ties_are_drawn_exactly_as_randrange_draws_them_in_every_3x3_position() -> None:
    # choose() draws the bits itself for speed: a seeded game must play the moves it always did
    boards = [Board.from_bits(key & 511, key >> 9) for key in perfect_33.MOVES]
    for seed in range(3):
        player, reference = PerfectPlayer(random.Random(seed)), random.Random(seed)
        for board in boards:
            cells = perfect_33.MOVES[board.key]
            expected = cells[0] if len(cells) == 1 else cells[reference.randrange(len(cells))]
            assert player.choose(board) == expected, str(board)
        assert player.rng.getstate() == reference.getstate()

    class Floats(random.Random):  # draws below n from random(), not getrandbits
        def random(self) -> float:
            return super().random() ** 2

    player = PerfectPlayer(Floats(3))
    player.rng = Floats(4)  # a generator given later is the one used
    reference = Floats(4)
    draws = [player.choose(Board()) for _ in range(40)]
    assert draws == [(0, 2, 6, 8)[reference.randrange(4)] for _ in range(40)]
    player.rng = random.Random(5)
    reference = random.Random(5)
    assert [player.choose(Board()) for _ in range(40)] == [(0, 2, 6, 8)[reference.randrange(4)] for _ in range(40)]


def test_ties_are_broken_by_its_own_rng_only() -> None:
    board = Board()
    picks = [PerfectPlayer(random.Random(7)).choose(board) for _ in range(3)]
    assert len(set(picks)) == 1  # same seed, same choice
    player = PerfectPlayer(random.Random(1))
    assert {player.choose(board) for _ in range(200)} == {0, 2, 6, 8}
    random.seed(5)
    state = random.getstate()
    PerfectPlayer(random.Random(2)).choose(board)
    assert random.getstate() == state  # the global generator is untouched


def test_name_and_finished_games() -> None:
    player = PerfectPlayer()
    assert player.name == "perfect"
    with pytest.raises(IllegalMoveError):
        player.choose(Board.parse("XXX/OO./..."))
    with pytest.raises(IllegalMoveError):
        player.choose(Board.parse("XXXX/OOO./..../...."))


def test_plays_4x4_from_the_solver() -> None:
    big_brute = negamax(4, 4, 4)
    rng = random.Random(4)
    player = PerfectPlayer(random.Random(0))
    checked = 0
    while checked < 8:
        board = Board(4, 4, 4)
        while board.ply < 9 and not board.is_over:
            board = board.play(rng.choice(board.legal_moves))
        if board.is_over:
            continue
        cell = player.choose(board)
        assert cell in player.candidates(board)
        value, plies = big_brute(board.x, board.o)
        child = board.play(cell)
        child_value, child_plies = big_brute(child.x, child.o)
        assert (-child_value, child_plies + 1) == (value, plies), str(board)
        checked += 1


def test_refuses_a_board_it_cannot_solve_in_budget() -> None:
    player = PerfectPlayer(random.Random(0), max_nodes=200)
    with pytest.raises(UnsupportedBoardError, match="15×15"):
        player.choose(Board(15, 15, 5))


@pytest.mark.parametrize(("rows", "cols", "k"), [(1, 2, 2), (2, 1, 2), (1, 2, 1), (1, 3, 2), (2, 2, 2), (1, 4, 3)])
def test_plays_every_position_of_tiny_boards(rows: int, cols: int, k: int) -> None:
    """Two cells with 2 in a row once had no best move at all ("choosing among no moves")."""
    tiny_brute = negamax(rows, cols, k)
    player = PerfectPlayer(random.Random(0))
    for board in reachable(Board(rows, cols, k)):
        if board.is_over:
            continue
        cell = player.choose(board)
        child = board.play(cell)
        child_value, child_plies = tiny_brute(child.x, child.o)
        assert (-child_value, child_plies + 1) == tiny_brute(board.x, board.o), str(board)


# off 3×3 within a budget (issue 28) ---------------------------------------------------------------

ISSUE_28 = "......./......./..O.X../..OXX../......./......./......."  # 7×7 with five, X to move: a draw


def test_chooses_among_the_moves_it_proved_when_proving_them_all_would_take_too_long() -> None:
    # 44 moves: a few keep the draw provably at once, others take 20,000 positions and more each
    solver.clear_cache()
    board = Board.parse(ISSUE_28, k=5)
    player = PerfectPlayer(random.Random(0), budget=Budget(nodes=10_000))
    cells = player.candidates(board)
    assert cells
    for cell in cells:
        assert solver.outcome(board.play(cell), length_budget=Budget(nodes=0)).value == 0, cell


def test_the_choice_stops_at_its_budget_with_the_moves_proved_so_far() -> None:
    from noughts.players.perfect import best_proven

    solver.clear_cache()
    board = Board.parse(ISSUE_28, k=5)
    assert solver.outcome(board, length_budget=Budget(nodes=0)).value == 0
    small, large = Budget(nodes=100), Budget(nodes=5_000)
    few = best_proven(board, 0, small)
    more = best_proven(board, 0, large)
    assert small.spent <= 100 and large.spent <= 5_000
    assert 31 in few and set(few) <= set(more)  # d5: the move the proof of the draw found
    for cell in more:
        assert solver.keeps_value(board, cell)


@pytest.mark.parametrize(("rows", "cols", "k", "plies"), [(3, 4, 3, 3), (4, 5, 3, 5), (5, 5, 4, 8), (4, 4, 4, 5)])
def test_keeps_value_says_what_analyse_says(rows: int, cols: int, k: int, plies: int) -> None:
    rng = random.Random(rows * 100 + cols * 10 + k)
    checked = 0
    while checked < 25:
        board = Board(rows, cols, k)
        for _ in range(plies + rng.randrange(4)):
            if not board.is_over:
                board = board.play(rng.choice(board.legal_moves))
        if board.is_over:
            continue
        solver.clear_cache()  # each answer from nothing: no analysis done before it
        kept = [cell for cell in board.legal_moves if solver.keeps_value(board, cell)]
        analysis = solver.analyse(board)
        assert kept == [move.index for move in analysis.moves if move.value == analysis.value], str(board)
        checked += 1
