"""The audit: the seed players' known facts, checked exhaustively on 3×3 and replayed independently.

Every finding of the audit is checked here by code that does not share its walk: forced lines are
replayed against every choice the player may make, their length is confirmed minimal by a
depth-limited search, shortest losses are replayed and confirmed minimal, and blunders are
recounted from the solver move by move.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import pytest

from noughts import Board, players, solver
from noughts.arena import ArenaError
from noughts.audit import (
    TABLE_BEGIN,
    TABLE_END,
    AuditReport,
    SideAudit,
    audit,
    builtin_names,
    loss_rate_bound,
    markdown_table,
    moves_of,
    report_json,
    report_text,
    write_pictures,
)
from noughts.errors import UnsupportedBoardError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def reports() -> dict[str, AuditReport]:
    """The exhaustive 3×3 audit of every built-in player, made once (about 2 s)."""
    return {name: audit(name) for name in builtin_names()}


def side_of(report: AuditReport, side: str) -> SideAudit:
    return next(part for part in report.sides if part.side == side)


def player_moves(name: str) -> object:
    player = players.get(name, random.Random(0))

    @cache
    def moves(board: Board) -> tuple[int, ...]:
        return moves_of(player, board)

    return moves


def replay_strategy(name: str, side: str, strategy: dict[str, int]) -> list[tuple[int, ...]]:
    """The opponent follows ``strategy`` against every choice of the player; every game must be lost."""
    moves = player_moves(name)
    games: list[tuple[int, ...]] = []
    used: set[str] = set()

    def follow(board: Board, line: tuple[int, ...]) -> None:
        if board.is_over:
            assert board.winner not in (None, side), f"{name} escapes with {line}"
            games.append(line)
            return
        if board.turn == side:
            cells = moves(board)  # type: ignore[operator]
        else:
            assert str(board) in strategy, f"the strategy has no reply in {board}"
            used.add(str(board))
            cells = (strategy[str(board)],)
        for cell in cells:
            follow(board.play(cell), (*line, cell))

    follow(Board(), ())
    assert used == set(strategy), "the strategy holds positions the games never reach"
    return games


def can_force_within(name: str, side: str, plies: int) -> bool:
    """Whether the opponent can win within ``plies`` whatever the player picks (a plain search)."""
    moves = player_moves(name)

    @cache
    def forces(board: Board, left: int) -> bool:
        if board.is_over:
            return board.winner not in (None, side)
        if left == 0:
            return False
        if board.turn == side:
            return all(forces(board.play(cell), left - 1) for cell in moves(board))  # type: ignore[operator]
        return any(forces(board.play(cell), left - 1) for cell in board.legal_moves)

    return forces(Board(), plies)


def can_lose_within(name: str, side: str, plies: int) -> bool:
    moves = player_moves(name)

    @cache
    def loses(board: Board, left: int) -> bool:
        if board.is_over:
            return board.winner not in (None, side)
        if left == 0:
            return False
        cells = moves(board) if board.turn == side else board.legal_moves  # type: ignore[operator]
        return any(loses(board.play(cell), left - 1) for cell in cells)

    return loses(Board(), plies)


# the facts ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["parsons", "mdttt", "simple-rules"])
def test_the_weak_rule_players_lose_to_a_forced_line_as_o(reports: dict[str, AuditReport], name: str) -> None:
    o = side_of(reports[name], "O")
    assert o.can_lose and o.forced is not None and o.forced_plies is not None
    games = replay_strategy(name, "O", o.forced)
    assert sorted(games) == sorted(o.forced_games)
    assert max(len(game) for game in games) == o.forced_plies
    assert can_force_within(name, "O", o.forced_plies)
    assert not can_force_within(name, "O", o.forced_plies - 1)  # the fastest there is


@pytest.mark.parametrize("name", ["parsons", "mdttt", "simple-rules"])
def test_the_weak_rule_players_never_lose_as_x(reports: dict[str, AuditReport], name: str) -> None:
    # What our reproductions really do: as X (centre or the win matrix first) none of them can be beaten.
    x = side_of(reports[name], "X")
    assert not x.can_lose and x.forced is None
    assert not can_lose_within(name, "X", 9)


def test_the_old_name_audits_the_same_player() -> None:
    old = audit("seed001-rules", sides="O")
    assert old.name == "simple-rules"
    assert old.sides[0].forced is not None
    replay_strategy("simple-rules", "O", old.sides[0].forced)


@pytest.mark.parametrize("name", ["arduino", "random", "easy", "medium"])
@pytest.mark.parametrize("side", ["X", "O"])
def test_random_players_can_lose_but_not_by_force(reports: dict[str, AuditReport], name: str, side: str) -> None:
    part = side_of(reports[name], side)
    assert part.can_lose and part.forced is None and part.shortest_loss is not None
    assert not can_force_within(name, side, 9)
    # the shortest loss is a real game of the player's, lost, and none is shorter
    moves = player_moves(name)
    board = Board()
    for cell in part.shortest_loss:
        if board.turn == side:
            assert cell in moves(board)  # type: ignore[operator]
        board = board.play(cell)
    assert board.winner not in (None, side)
    assert not can_lose_within(name, side, len(part.shortest_loss) - 1)


@pytest.mark.parametrize("name", ["newell-simon", "perfect", "hard", "minimax", "strong"])
def test_the_strong_players_never_lose(reports: dict[str, AuditReport], name: str) -> None:
    assert reports[name].never_loses
    for part in reports[name].sides:
        assert part.shortest_loss is None and part.forced is None and not part.throws_draw
        assert not can_lose_within(name, part.side, 9)


def test_the_perfect_player_never_throws_anything_away(reports: dict[str, AuditReport]) -> None:
    for part in reports["perfect"].sides:
        assert part.moves > part.positions  # it does break ties, so there was something to choose
        assert not part.throws_win and not part.throws_draw


def test_the_loss_check_can_fail() -> None:
    # A player that always takes the lowest free cell loses; the audit must say so.
    class FirstFree:
        name = "first-free"

        def choose(self, board: Board) -> int:
            return board.legal_moves[0]

    from noughts.audit import _exhaustive

    part = _exhaustive(FirstFree(), Board(), "O")  # type: ignore[arg-type]
    assert part.can_lose and part.forced is not None and part.forced_plies is not None


# counts and blunders, recounted -----------------------------------------------------------------

def reachable(name: str, side: str) -> dict[int, Board]:
    moves = player_moves(name)
    seen: dict[int, Board] = {}
    stack = [Board()]
    while stack:
        board = stack.pop()
        if board.key in seen:
            continue
        seen[board.key] = board
        if not board.is_over:
            cells = moves(board) if board.turn == side else board.legal_moves  # type: ignore[operator]
            stack.extend(board.play(cell) for cell in cells)
    return seen


@pytest.mark.parametrize(("name", "side"), [("random", "X"), ("arduino", "O"), ("mdttt", "O"), ("parsons", "X")])
def test_positions_and_blunders_match_a_recount(reports: dict[str, AuditReport], name: str, side: str) -> None:
    moves = player_moves(name)
    mine = [b for b in reachable(name, side).values() if not b.is_over and b.turn == side]
    part = side_of(reports[name], side)
    assert part.positions == len(mine)
    assert part.moves == sum(len(moves(b)) for b in mine)  # type: ignore[operator]
    throws_win, throws_draw = set(), set()
    for board in mine:
        before = solver.solve(board).value
        for cell in moves(board):  # type: ignore[operator]
            after = board.play(cell)
            value = 1 if after.winner else 0 if after.is_over else -solver.solve(after).value
            if before == 1 and value < 1:
                throws_win.add((board.key, cell))
            elif before == 0 and value < 0:
                throws_draw.add((board.key, cell))
    assert {(b.position.key, b.cell) for b in part.throws_win} == throws_win
    assert {(b.position.key, b.cell) for b in part.throws_draw} == throws_draw


def test_random_reaches_every_position(reports: dict[str, AuditReport]) -> None:
    every = reachable("random", "X")
    assert len(every) == 5478  # every legal 3×3 position
    x = side_of(reports["random"], "X")
    assert x.positions == sum(1 for b in every.values() if not b.is_over and b.turn == "X")


# sampled audits --------------------------------------------------------------------------------

def test_sampled_findings_are_a_subset_of_the_exhaustive_ones(reports: dict[str, AuditReport]) -> None:
    sampled = audit("arduino", samples=60, seed=4, jobs=1)
    assert sampled.sides[0].games == sampled.sides[1].games == 60
    for part in sampled.sides:
        assert part.wins + part.draws + part.losses == part.games
        assert not part.exhaustive and part.unchecked == 0
        full = side_of(reports["arduino"], part.side)
        for found, every in ((part.throws_win, full.throws_win), (part.throws_draw, full.throws_draw)):
            assert {(b.position.key, b.cell) for b in found} <= {(b.position.key, b.cell) for b in every}
        assert part.loss_bound == loss_rate_bound(part.losses, part.games, 0.95)
    assert any(part.losses for part in sampled.sides)  # arduino does lose to random sometimes


def test_sampled_audit_on_a_board_the_solver_cannot_settle() -> None:
    assert players.unable("perfect", Board(7, 7)) is not None
    report = audit("arduino", Board(7, 7), samples=4, opponent="random", seed=1, jobs=1)
    for part in report.sides:
        assert part.games == 4 and part.unchecked == part.moves > 0
    assert "not judged" in report_text(report)


@pytest.mark.parametrize(("losses", "games", "confidence"), [(0, 10, 0.95), (0, 1000, 0.95), (3, 50, 0.9),
                                                             (20, 100, 0.99), (1, 2, 0.5)])
def test_the_loss_rate_bound_is_clopper_pearson(losses: int, games: int, confidence: float) -> None:
    bound = loss_rate_bound(losses, games, confidence)
    tail = sum(math.comb(games, i) * bound ** i * (1 - bound) ** (games - i) for i in range(losses + 1))
    assert tail == pytest.approx(1 - confidence, rel=1e-6)
    assert loss_rate_bound(losses, games, confidence + (1 - confidence) / 2) > bound


def test_rule_of_three() -> None:
    assert loss_rate_bound(0, 1000, 0.95) == pytest.approx(3 / 1000, rel=0.01)


# refusals, output ------------------------------------------------------------------------------

def test_a_player_that_cannot_play_the_board_is_refused() -> None:
    with pytest.raises(UnsupportedBoardError, match=r"only plays 3×3.*players that can: easy"):
        audit("parsons", Board(4, 4))
    with pytest.raises(ArenaError, match="X, O or both"):
        audit("parsons", sides="Z")
    with pytest.raises(ArenaError, match="between 0 and 1"):
        audit("random", Board(4, 4), confidence=1.5)


def test_text_and_json_say_the_same(reports: dict[str, AuditReport]) -> None:
    report = reports["mdttt"]
    text = report_text(report, show=1)
    data = json.loads(json.dumps(report_json(report)))
    o = data["sides"][1]
    assert o["side"] == "O" and o["forced_plies"] == 7
    for game in o["forced_games"]:
        assert game in text
    assert "never loses" in text and "X wins within 7 plies" in text
    # the strategy in cell names replays like the one in cells
    strategy = {position: Board().parse_cell(cell) for position, cell in o["forced_strategy"].items()}
    replay_strategy("mdttt", "O", strategy)


def test_pictures_are_written(reports: dict[str, AuditReport], tmp_path: Path) -> None:
    written = write_pictures(reports["simple-rules"], str(tmp_path), show=2)
    assert written and all(Path(path).exists() for path in written)
    for path in written:
        ET.parse(path)  # SVG from noughts.svg
    assert any("as-o-loss-1" in path for path in written)
    assert any("throws-draw" in path for path in written)


def test_the_docs_table_is_a_fresh_audit(reports: dict[str, AuditReport]) -> None:
    text = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    committed = text.split(TABLE_BEGIN, 1)[1].split(TABLE_END, 1)[0]
    fresh = markdown_table([reports[name] for name in builtin_names()])
    assert committed.strip() == fresh.strip(), "regenerate it: python scripts/audit_docs.py"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "noughts", *args], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})


def test_command_line() -> None:
    done = run_cli("audit", "seed001-rules", "--as", "O", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["player"] == "simple-rules" and data["never_loses"] is False
    refused = run_cli("audit", "mdttt", "--board", "5x5")
    assert refused.returncode == 2 and refused.stderr.startswith("noughts: Win matrix (mdttt) cannot play 5x5k5")
    assert "Traceback" not in refused.stderr
