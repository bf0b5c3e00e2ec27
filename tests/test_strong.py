"""The strong player: wins in one, blocks, forced wins by fours (VCF) and by threats, 3×3 exhaustively.

Every verdict here comes from code that does not share the player's search: moves are checked
with :class:`~noughts.board.Board`, :func:`~noughts.players.base.completing_cells` and a small
VCF search over the board's line masks written below, and 3×3 with the exact solver. Budgets are
in positions, not seconds, so the moves are the same on any machine.
"""

from __future__ import annotations

import random
from functools import cache
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noughts import Board, ImpossiblePositionError, solver
from noughts.budget import Budget
from noughts.errors import BudgetExceeded, IllegalMoveError, InvalidBudgetError
from noughts.players import describe, get, label, names, unable
from noughts.players.base import completing_cells, own_and_opponent
from noughts.players.presets import HardPlayer
from noughts.players.strong import StrongPlayer

NODES = 3_000


def strong(nodes: int = NODES, seed: int = 0) -> StrongPlayer:
    return StrongPlayer(random.Random(seed), budget=Budget(nodes=nodes))


def place(rows: int, cols: int, k: int, x: list[str], o: list[str]) -> Board:
    """A position from the cells of each side (checked by Board: counts, no play after a win)."""
    geometry = Board(rows, cols, k)
    bits = [sum(1 << geometry.parse_cell(name) for name in names) for names in (x, o)]
    return Board.from_bits(bits[0], bits[1], rows, cols, k)


def threats(board: Board, of_mover: bool) -> int:
    """Bitmask of the empty cells where the mover (or the other side) completes a line."""
    mine, theirs = own_and_opponent(board)
    if not of_mover:
        mine, theirs = theirs, mine
    return completing_cells(board, mine, theirs) & ~(board.x | board.o)


def vcf_wins(board: Board, depth: int) -> bool:
    """Whether the side to move wins by a sequence of fours (each answered by the forced block)."""
    if threats(board, True):
        return True
    blocks = threats(board, False)
    if blocks.bit_count() > 1 or depth == 0:
        return False
    mine, theirs = own_and_opponent(board)
    fours = 0
    for mask in board.geometry.line_masks:  # lines one mark short of a four, the other side absent
        if not theirs & mask and (mine & mask).bit_count() == board.k - 2:
            fours |= mask & ~mine
    if blocks:
        fours &= blocks
    return any(forced_after(board.play(cell), depth) for cell in range(board.size) if fours >> cell & 1)


def forced_after(after: Board, depth: int) -> bool:
    """The attacker has just moved on ``after``: is the win by fours still forced?"""
    if after.winner is not None:
        return True
    if threats(after, True):  # the defender completes a line first
        return False
    wins = threats(after, False)
    if wins.bit_count() >= 2:
        return True
    if not wins:
        return False
    return vcf_wins(after.play(wins.bit_length() - 1), depth - 1)


# registry and basics -------------------------------------------------------------------------

def test_strong_is_registered_for_every_board() -> None:
    assert "strong" in names() and label("strong") == "Strong"
    assert describe("strong").startswith("Strong: threat search")
    for board in (Board(), Board(15, 15, 5), Board(26, 26), Board(1, 1)):
        assert unable("strong", board) is None
    budget = Budget(nodes=10)
    assert get("strong", budget=budget).budget is budget  # type: ignore[attr-defined]
    with pytest.raises(InvalidBudgetError, match="either budget="):
        StrongPlayer(budget=budget, max_nodes=5)
    with pytest.raises(IllegalMoveError, match="game is over"):
        strong().choose(Board.parse("XXX/OO./..."))


@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 5, 1), (2, 2, 2), (3, 5, 3), (5, 5, 4), (6, 7, 4), (4, 9, 5)])
def test_it_plays_whole_games_on_odd_boards(shape: tuple[int, int, int]) -> None:
    rng = random.Random(3)
    player = strong(300)
    board = Board(*shape)
    while not board.is_over:
        cell = player.choose(board) if board.ply % 2 else rng.choice(board.legal_moves)
        assert cell in board.legal_moves
        board = board.play(cell)


def test_the_same_seed_and_node_budget_give_the_same_game() -> None:
    def game() -> list[int]:
        board, moves = Board(9, 9, 5), []
        x, o = strong(1_500, seed=4), strong(1_500, seed=5)
        while not board.is_over and board.ply < 14:
            moves.append((x if board.ply % 2 == 0 else o).choose(board))
            board = board.play(moves[-1])
        return moves

    first = game()
    assert first == game()
    assert len(set(first)) == len(first)


# wins in one and blocks, on random positions --------------------------------------------------

@st.composite
def with_a_line_short(draw: st.DrawFn, mover_short: bool) -> Board:
    """A 15×15 (k=5) position where one side has k-1 marks in a line of k, plus random marks."""
    from hypothesis import assume

    geometry = Board(15, 15, 5).geometry
    line = draw(st.sampled_from(geometry.lines))
    gap = draw(st.sampled_from(line))
    short = [cell for cell in line if cell != gap]
    x_turn = draw(st.booleans())
    marks = draw(st.integers(len(short), len(short) + 12))  # the other side's marks
    counts = {"X": marks if x_turn else marks + 1, "O": marks}
    short_side = ("X" if x_turn else "O") if mover_short else ("O" if x_turn else "X")
    spare = [cell for cell in draw(st.permutations(range(geometry.size))) if cell not in line]
    extra = counts[short_side] - len(short)
    other = counts["O" if short_side == "X" else "X"]
    cells = {short_side: short + spare[:extra], ("O" if short_side == "X" else "X"): spare[extra:extra + other]}
    try:  # the random marks may already hold a line of either side
        board = Board.from_bits(sum(1 << c for c in cells["X"]), sum(1 << c for c in cells["O"]), 15, 15, 5)
    except ImpossiblePositionError:
        assume(False)
    assume(not board.is_over)
    return board


@settings(max_examples=40, deadline=None)
@given(with_a_line_short(mover_short=True))
def test_it_always_takes_a_win_in_one(board: Board) -> None:
    assert threats(board, True)
    assert board.play(strong(200).choose(board)).winner == board.turn


@settings(max_examples=40, deadline=None)
@given(with_a_line_short(mover_short=False))
def test_it_blocks_a_win_in_one_when_it_cannot_win_at_once(board: Board) -> None:
    blocks = threats(board, False)
    cell = strong(200).choose(board)
    if threats(board, True):
        assert board.play(cell).winner == board.turn
    else:
        assert blocks >> cell & 1


# forced wins ------------------------------------------------------------------------------------

FOUR_THREE = place(15, 15, 5, ["e8", "f8", "g8", "h6", "h7"], ["d8", "a1", "a15", "o1", "o15"])
"""X to move: h8 makes a four on row 8 (d8 is blocked) and an open three on column h."""


def test_it_plays_a_four_three() -> None:
    player = strong()
    cell = player.choose(FOUR_THREE)
    assert FOUR_THREE.cell_name(cell) == "h8" and player.last_reason == "vcf"
    assert forced_after(FOUR_THREE.play(cell), 10)


def test_it_plays_a_double_three() -> None:
    board = place(15, 15, 5, ["f8", "g8", "h6", "h7", "c3"], ["a1", "a15", "o1", "o15", "m2"])
    player = strong(20_000)
    cell = player.choose(board)
    assert player.last_reason == "vct" and board.cell_name(cell) == "h8"


def test_it_blocks_an_open_three_where_it_stops_the_open_four() -> None:
    board = place(15, 15, 5, ["f8", "g8", "h8", "a15"], ["a1", "c3", "o15"])
    cell = strong(6_000).choose(board)
    assert board.cell_name(cell) in ("e8", "i8")
    assert not vcf_wins(board.play(cell).play(board.parse_cell("a14")), 6)  # X to move again: no win by fours


@cache
def positions_with_a_vcf() -> tuple[Board, ...]:
    """Random 9×9 positions (k=5) where the side to move wins by fours but not at once."""
    rng = random.Random(11)
    found: list[Board] = []
    centre = [r * 9 + c for r in range(1, 8) for c in range(1, 8)]
    while len(found) < 12:
        cells = rng.sample(centre, rng.randrange(14, 26))
        x, o = cells[: (len(cells) + 1) // 2], cells[(len(cells) + 1) // 2:]
        board = Board.from_bits(sum(1 << c for c in x), sum(1 << c for c in o), 9, 9, 5)
        if board.is_over or threats(board, True) or threats(board, False):
            continue
        if vcf_wins(board, 5):
            found.append(board)
    return tuple(found)


def test_it_finds_every_win_by_fours_in_random_positions() -> None:
    for board in positions_with_a_vcf():
        player = strong(20_000)
        cell = player.choose(board)
        assert player.last_reason in ("vcf", "solved"), str(board)
        assert forced_after(board.play(cell), 14), str(board)


# 3×3: never loses ------------------------------------------------------------------------------

def test_it_never_loses_3x3_whatever_the_opponent_plays() -> None:
    player = strong(0)  # 3×3 is a table lookup in the solver: no budget needed

    def explore(board: Board, side: str, seen: set[Board]) -> None:
        if board.is_over or board in seen:
            assert board.winner in (None, side), str(board)
            return
        seen.add(board)
        if board.turn == side:
            cells = player.candidates(board)
            value = solver.solve(board).value
            for cell in cells:
                assert -solver.solve(board.play(cell)).value == value or board.play(cell).winner == side
                explore(board.play(cell), side, seen)
        else:
            for cell in board.legal_moves:
                explore(board.play(cell), side, seen)

    for side in ("X", "O"):
        seen: set[Board] = set()
        explore(Board(), side, seen)
        assert len(seen) > 500  # every reply was explored, not only one line


# hard: perfect where it can be proved, else strong ---------------------------------------------

def test_hard_plays_perfectly_where_it_can_prove_and_as_strong_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:

    hard = HardPlayer(random.Random(1), budget=Budget(nodes=1_500))
    assert hard.choose(Board.parse("XX./OO./...")) == 2 and hard.last_player == "perfect"
    assert unable("hard", Board(15, 15, 5)) is None
    from noughts import solver

    probes: list[tuple[int, bool]] = []  # (empty cells, proved): every probe the solver is asked
    real = solver.outcome

    def counted(board: Board, **options: object) -> solver.Outcome:
        try:
            found = real(board, **options)  # type: ignore[arg-type]
        except BudgetExceeded:
            probes.append((board.size - board.ply, False))
            raise
        probes.append((board.size - board.ply, True))
        return found

    monkeypatch.setattr(solver, "outcome", counted)
    board = FOUR_THREE
    cell = hard.choose(board)
    assert board.cell_name(cell) == "h8"
    board, moves = Board(9, 9, 5), 0
    while not board.is_over and moves < 24:
        board, moves = board.play(hard.choose(board)), moves + 1
    probes = [probe for probe in probes if probe[0] <= 81]  # the 9×9 game's
    assert probes[0] == (81, False) and hard.last_player in ("strong", "perfect")
    # after a probe that fails, the next comes only once a quarter of the empty cells are filled
    assert all(later <= empty * 3 // 4 for (empty, proved), (later, _) in pairwise(probes) if not proved)
    assert len(probes) < moves


# the incremental pattern scores ------------------------------------------------------------------

def test_the_scores_kept_up_to_date_equal_the_scores_recomputed_from_the_windows() -> None:
    from noughts.players.strong import _EMPTY_LINE, _State, _Tables

    def recomputed(state: _State, side: int, cell: int) -> int:
        tables: _Tables = state.tables
        total = 0
        for w in tables.cell_windows[cell]:
            own, other = state.counts[side][w], state.counts[3 - side][w]
            if not other:
                total += tables.attack[own] if own else _EMPTY_LINE
            elif not own:
                total += tables.defence[other]
        return total

    rng = random.Random(7)
    board = Board(9, 9, 5)
    state = _State(board, Budget(), scored=True)
    played: list[tuple[int, int]] = []
    for step in range(120):
        empty = [c for c in range(81) if not state.owner[c]]
        if played and (rng.random() < 0.3 or len(empty) < 40):
            state.undo(*played.pop())
        else:
            played.append((rng.choice(empty), 1 + step % 2))
            state.play(*played[-1])
        for side in (1, 2):
            assert all(state.cell_score(side, c) == recomputed(state, side, c) for c in range(81) if not state.owner[c])
        near = {c for cell, _ in played for c in state.tables.close[cell] if not state.owner[c]}
        assert state.frontier == near
        for side in (1, 2):  # the evaluation's sums: every open window's weight by its marks
            mine, theirs = state.counts[side], state.counts[3 - side]
            assert state.sums[side] == sum(state.tables.weight[mine[w]] for w in range(len(mine)) if not theirs[w])


@pytest.mark.parametrize("shape", [(15, 15, 5), (9, 11, 5), (1, 21, 5)])
def test_its_first_move_as_second_player_is_next_to_the_first_mark_and_toward_the_centre(
        shape: tuple[int, int, int]) -> None:
    """Every first mark: the reply touches it diagonally (along the row on a one-row board), and no
    other such cell is nearer the centre (a reply two cells away lost most games: docs/strong.md)."""
    rows, cols, _ = shape
    player = strong()
    for first in range(rows * cols):
        board = Board(*shape).play(first)
        reply = player.choose(board)
        (row, col), (reply_row, reply_col) = divmod(first, cols), divmod(reply, cols)
        steps = {(1, 1), (1, -1), (-1, 1), (-1, -1)} if rows > 1 else {(0, 1), (0, -1)}
        assert (reply_row - row, reply_col - col) in steps, board.cell_name(first)
        touching = [(row + dr, col + dc) for dr, dc in steps if 0 <= row + dr < rows and 0 <= col + dc < cols]

        def from_centre(rc: tuple[int, int]) -> float:
            return (rc[0] - (rows - 1) / 2) ** 2 + (rc[1] - (cols - 1) / 2) ** 2

        assert from_centre((reply_row, reply_col)) == min(map(from_centre, touching)), board.cell_name(first)
