"""solver.outcome: the proved value even when the win's length is out of reach, checked against solve."""

from __future__ import annotations

import io
import json

import pytest

from noughts import solver
from noughts.board import Board
from noughts.budget import Budget
from noughts.cli import main
from noughts.engine import handle, run
from noughts.errors import BudgetExceeded, InvalidBudgetError


def positions_after(board: Board, plies: int) -> list[Board]:
    """Every unfinished position reached in ``plies`` moves from ``board`` (each order once)."""
    found = {board.key: board}
    for _ in range(plies):
        found = {after.key: after for b in found.values() for after in map(b.play, b.legal_moves)
                 if not after.is_over}
    return list(found.values())


def assert_value_only(found: solver.Outcome, exact: solver.Solution) -> None:
    """``found`` is labelled value-only, with ``exact``'s value and bounds around its length."""
    assert found.value == exact.value != 0
    assert found.plies is None
    assert found.fewest_plies <= exact.plies <= found.most_plies
    # the winner moves on odd plies (the mover) or even ones (the other side): so do the bounds
    assert found.fewest_plies % 2 == found.most_plies % 2 == exact.plies % 2


@pytest.mark.parametrize("shape", [(4, 4, 3), (3, 5, 3)])
def test_every_position_two_plies_in_gets_its_value_when_the_length_budget_is_nil(
        shape: tuple[int, int, int]) -> None:
    # boards of up to 16 cells: the value by alpha-beta in the window -1..1, then no positions
    # at all for the length. Every answer is first taken with a cold table, then checked.
    solver.clear_cache()
    boards = positions_after(Board(*shape), 2)
    found = [solver.outcome(board, length_budget=Budget(nodes=0)) for board in boards]
    solver.clear_cache()
    exact = [solver.solve(board) for board in boards]
    value_only = 0
    for board, got, want in zip(boards, found, exact, strict=True):
        if got.plies is None:
            value_only += 1
            assert_value_only(got, want)
        else:  # a draw, or a length the value's own search already pinned down
            assert (got.value, got.plies, got.fewest_plies, got.most_plies) == (*want, want.plies, want.plies)
        assert tuple(solver.outcome(board)[:2]) == tuple(want)  # with a budget: solve's answer
    assert value_only >= len(boards) // 4  # the value-only path was taken, and often


def test_a_proved_win_and_loss_on_5x6_without_their_length() -> None:
    # 30 cells: the value by proof-number search, then the length by alpha-beta, cut off here
    empty = Board(5, 6, 4)
    lost = empty.play(14)  # O to move, after X's first move in the middle
    solver.clear_cache()
    spent = Budget()
    win = solver.outcome(empty, budget=spent, length_budget=Budget(nodes=10))
    assert spent.spent < 5_000  # the value, and at most 10 positions besides
    loss = solver.outcome(lost, length_budget=Budget(nodes=10))
    solver.clear_cache()
    exact_win, exact_loss = solver.solve(empty), solver.solve(lost)
    assert exact_win == (1, 11) and exact_loss.value == -1
    assert_value_only(win, exact_win)
    assert_value_only(loss, exact_loss)
    # the bounds found so far are kept: asking again with a budget finishes the length
    solver.clear_cache()
    assert solver.outcome(empty, length_budget=Budget(nodes=10)).plies is None
    assert solver.outcome(empty) == (1, 11, 11, 11)


def test_the_budget_running_out_before_the_value_is_proved_is_an_error() -> None:
    solver.clear_cache()
    with pytest.raises(BudgetExceeded, match="gave up after searching 100 positions"):
        solver.outcome(Board(5, 6, 4), max_nodes=100)
    with pytest.raises(InvalidBudgetError, match="length_budget must be a noughts Budget, not int"):
        solver.outcome(Board(5, 6, 4), length_budget=10)  # type: ignore[arg-type]


def test_draws_and_finished_games_are_complete_answers() -> None:
    assert solver.outcome(Board()) == (0, 9, 9, 9)
    assert solver.outcome(Board(6, 6, 5), length_budget=Budget(nodes=0)) == (0, 36, 36, 36)
    assert solver.outcome(Board.parse("XXX/OO./...")) == (-1, 0, 0, 0)
    assert solver.outcome(Board.parse("XX./OO./...")) == (1, 1, 1, 1)


def test_the_engine_and_the_command_say_the_value_only(capsys: pytest.CaptureFixture[str]) -> None:
    # the positions the value of 5×6 takes, so the command's budget runs out in the length search
    solver.clear_cache()
    spent = Budget()
    solver.outcome(Board(5, 6, 4), budget=spent, length_budget=Budget(nodes=0))
    nodes = spent.spent + 20
    solver.clear_cache()
    reply = handle({"cmd": "analyse", "rows": 5, "cols": 6, "k": 4, "value_only": True, "nodes": nodes})
    assert reply == {"value": 1, "plies": None, "fewest_plies": 7, "most_plies": 29}
    solver.clear_cache()
    assert main(["analyse", "--rows", "5", "--cols", "6", "--k", "4", "--value-only",
                 "--nodes", str(nodes)]) == 0
    assert capsys.readouterr().out == ("X to move: win (proved); the length of the win was not found "
                                       "within the budget: between 7 and 29 plies\n")
    assert main(["analyse", "X.O/.../...", "--value-only", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"value": 1, "plies": 5, "fewest_plies": 5, "most_plies": 5}
    assert main(["analyse", "--rows", "4", "--cols", "4", "--value-only"]) == 0
    assert capsys.readouterr().out == "X to move: draw in 16 plies\n"
    assert "error" in handle({"cmd": "analyse", "value_only": "yes"})
    # a 3×3 line asking for the value only is not answered from the fast path's full replies
    lines = b'{"cmd":"analyse"}\n{"cmd":"analyse","value_only":true}\n{"cmd":"analyse","value_only":false}\n'
    out = io.StringIO()
    assert run(io.BytesIO(lines), out) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert replies[1] == {"value": 0, "plies": 9, "fewest_plies": 9, "most_plies": 9}
    assert replies[0] == replies[2] and len(replies[0]["moves"]) == 9
