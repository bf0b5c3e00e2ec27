"""The computer players: registry, shared behaviour, and each seed player's rules on chosen positions.

Exhaustive strength checks (never losing, forced wins against the weaker players, the robot's
minimax against a plain re-implementation) are in ``test_players_strength.py``.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter

import pytest

from noughts import (
    Board,
    Budget,
    BudgetExceeded,
    IllegalMoveError,
    InvalidBudgetError,
    NoughtsError,
    UnsupportedBoardError,
    players,
    solver,
)
from noughts.players import UnknownPlayerError, able, describe, get, names, unable
from noughts.players.arduino import ArduinoPlayer
from noughts.players.mdttt import FALLBACK_MODE, MdtttPlayer, cell_counts
from noughts.players.minimax import MinimaxPlayer, robot_scores
from noughts.players.newell_simon import NewellSimonPlayer, Seed001RulesPlayer
from noughts.players.parsons import SCAN_LINES, ParsonsPlayer
from noughts.players.perfect import PerfectPlayer
from positions import every_3x3_position

CLASSIC_ONLY = ["parsons", "mdttt", "newell-simon", "simple-rules"]
ANY_BOARD = ["random", "arduino", "minimax"]


def reachable_positions() -> list[Board]:
    """Every position of 3×3 noughts and crosses that can arise in a game, finished or not."""
    return list(every_3x3_position().values())


# registry ---------------------------------------------------------------------------------------

def test_names_come_in_menu_order_presets_first() -> None:
    assert names() == ["easy", "medium", "hard", "random", "arduino", "parsons", "mdttt",
                       "newell-simon", "simple-rules", "minimax", "perfect", "strong"]
    assert names() is not names()  # callers may not change the registry through the list


@pytest.mark.parametrize("name", names())
def test_every_name_gives_a_player_of_that_name_with_a_one_line_description(name: str) -> None:
    player = get(name, random.Random(0))
    assert player.name == name
    line = describe(name)
    assert line and "\n" not in line and len(line) <= 110


@pytest.mark.parametrize("name", names())
def test_every_player_chooses_a_legal_move_and_refuses_a_finished_game(name: str) -> None:
    player = get(name, random.Random(0))
    board = Board.parse("XO./XO./...")
    assert player.choose(board) in board.legal_moves
    for finished in (Board.parse("XXX/OO./..."), Board.parse("XOX/XOO/OXX")):  # a win, a draw
        with pytest.raises(IllegalMoveError) as caught:
            player.choose(finished)
        if name != "perfect":  # perfect's wording is its own module's business
            assert "game is over" in str(caught.value)


def test_unknown_name_lists_the_names() -> None:
    with pytest.raises(UnknownPlayerError) as caught:
        get("deep-blue")
    assert isinstance(caught.value, NoughtsError)
    assert "deep-blue" in str(caught.value)
    for name in names():
        assert name in str(caught.value)
    with pytest.raises(UnknownPlayerError):
        describe("")


def test_names_are_read_forgivingly() -> None:
    assert get(" Newell-Simon ").name == "newell-simon"


def test_importing_the_registry_loads_no_player_module() -> None:
    code = ("import sys, noughts.players; "
            "print(sorted(m for m in sys.modules if m.startswith('noughts.players.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


@pytest.mark.parametrize("name", names())
def test_same_seed_same_game(name: str) -> None:
    def game(seed: int) -> list[int]:
        player, opponent = get(name, random.Random(seed)), random.Random(seed + 1)
        board, moves = Board(), []
        while not board.is_over:
            cell = player.choose(board) if board.ply % 2 == seed % 2 else opponent.choice(board.legal_moves)
            moves.append(cell)
            board = board.play(cell)
        return moves

    for seed in range(6):
        assert game(seed) == game(seed)


def test_random_players_differ_with_the_seed() -> None:
    # Guards the test above: a player ignoring its rng would also replay the same game.
    games = {tuple(get("random", random.Random(seed)).choose(Board()) for _ in range(5))
             for seed in range(10)}
    assert len(games) > 1


@pytest.mark.parametrize("name", CLASSIC_ONLY)
def test_classic_only_players_refuse_other_boards(name: str) -> None:
    player = get(name, random.Random(0))
    for board in (Board(4, 4), Board(3, 3, 2), Board(3, 4, 3)):
        with pytest.raises(UnsupportedBoardError, match="only plays 3×3") as caught:
            player.choose(board)
        assert f"{board.rows}×{board.cols} with {board.k} in a row" in str(caught.value)


@pytest.mark.parametrize("name", ANY_BOARD)
def test_any_board_players_play_a_whole_game_on_other_boards(name: str) -> None:
    rng = random.Random(5)
    player = get(name, rng) if name != "minimax" else MinimaxPlayer(max_nodes=3_000)
    for shape in ((4, 4, 4), (3, 5, 3), (5, 5, 4), (2, 2, 2)):
        board = Board(*shape)
        while not board.is_over:
            cell = player.choose(board) if board.ply % 2 else rng.choice(board.legal_moves)
            assert cell in board.legal_moves
            board = board.play(cell)


# random ---------------------------------------------------------------------------------------

def test_random_player_is_uniform() -> None:
    player, board = get("random", random.Random(7)), Board.parse("X../.O./...")
    counts = Counter(player.choose(board) for _ in range(7_000))
    assert set(counts) == set(board.legal_moves)
    assert all(800 < n < 1200 for n in counts.values())  # 1000 expected each


# difficulty presets (seed 003) ----------------------------------------------------------------

def test_medium_plays_the_best_move_half_the_time_and_a_random_one_otherwise() -> None:
    board = Board.parse("XX./OO./...")  # X to move: only cell 2 is best (it wins)
    player = get("medium", random.Random(4))
    counts = Counter(player.choose(board) for _ in range(2_000))
    assert set(counts) == set(board.legal_moves)
    # heads (1/2) plays 2; tails plays each of the 5 empty cells with 1/10: 2 gets 0.6 in all.
    assert abs(counts[2] / 2_000 - 0.6) < 0.04
    assert all(abs(counts[cell] / 2_000 - 0.1) < 0.03 for cell in (5, 6, 7, 8))


def test_easy_is_random_and_hard_only_plays_best_moves() -> None:
    board = Board.parse("XX./OO./...")
    assert get("easy", random.Random(0)).candidates(board) == board.legal_moves  # type: ignore[attr-defined]
    hard = get("hard", random.Random(0))
    assert {hard.choose(board) for _ in range(50)} == {2}


# arduino (seed 000) ---------------------------------------------------------------------------

@pytest.mark.parametrize(("position", "expected", "why"), [
    ("XX./XOO/.O.", 2, "wins on row 1 (cell 2) and column a (cell 6): rows are scanned first"),
    (".XO/OXO/..X", 7, "wins on column b (cell 7) and the main diagonal (cell 0): columns first"),
    ("XO./OXO/X..", 8, "wins on the main diagonal (cell 8) and the anti-diagonal (cell 2)"),
    ("OO./XX./...", 5, "its own win on row 2 beats blocking row 1, though row 1 is scanned first"),
    (".X./OXX/OO.", 8, "blocks row 3 (cell 8) before column a (cell 0)"),
])
def test_arduino_wins_then_blocks_first_line_in_scan_order(position: str, expected: int, why: str) -> None:
    player = ArduinoPlayer(random.Random(0))
    board = Board.parse(position)
    assert player.candidates(board) == (expected,), why
    assert player.choose(board) == expected, why


def sketch_win_or_block(game: list[list[int]]) -> int | None:
    """The seed's checkPossiblities() then checkBlockers(), transcribed: 0 empty, 1 person, 2 Arduino.

    Returns the first cell the sketch lights (None: it goes on to randomPlay)."""
    lit: list[int] = []

    def play(x: int, y: int) -> None:
        game[x][y] = 2
        lit.append(3 * x + y)

    for mark in (2, 1):  # possibilities (own marks), then blockers (the person's)
        for i in range(3):  # rows; only checkPossiblities lacks the "not played yet" guard here
            poss = space = x = y = 0
            for j in range(3):
                poss += game[i][j] == mark
                if game[i][j] == 0:
                    space, x, y = 1, i, j
                if poss == 2 and space == 1 and (mark == 2 or not lit):
                    play(x, y)
        for i in range(3):  # columns
            poss = space = x = y = 0
            for j in range(3):
                poss += game[j][i] == mark
                if game[j][i] == 0:
                    space, x, y = 1, j, i
                if poss == 2 and space == 1 and not lit:
                    play(x, y)
        for diagonal in (((0, 0), (1, 1), (2, 2)), ((0, 2), (1, 1), (2, 0))):
            poss = space = x = y = 0
            for r, c in diagonal:
                poss += game[r][c] == mark
                if game[r][c] == 0:
                    space, x, y = 1, r, c
                if poss == 2 and space == 1 and not lit:
                    play(x, y)
        if lit:
            return lit[0]
    return None


def test_arduino_matches_the_sketch_in_every_position() -> None:
    player = ArduinoPlayer()
    checked = 0
    for board in reachable_positions():
        if board.is_over:
            continue
        arduino = board.turn
        game = [[0 if board[3 * r + c] is None else 2 if board[3 * r + c] == arduino else 1
                 for c in range(3)] for r in range(3)]
        assert player.forced_move(board) == sketch_win_or_block(game), str(board)
        checked += 1
    assert checked == 4520


def test_arduino_works_with_k_in_a_row_on_any_board() -> None:
    player = ArduinoPlayer(random.Random(0))
    # 4×4, four in a row: X (to move) has three on the bottom row, O three in column b.
    board = Board.parse(".O../.O../.O../XXX.", k=4)
    assert board.turn == "X" and player.choose(board) == 15  # X completes the bottom row
    board = Board.parse(".O../.O../.O../XX.X", k=4)
    assert player.choose(board) == 14
    board = Board.parse("XO../.O../XO../X..X", k=4)  # O to move: O wins in column b, not block a2
    assert board.turn == "O" and player.choose(board) == 13
    big = Board(15, 15, 5)
    for cell in ("a1", "h8", "b1", "h9", "c1", "h10", "d1"):  # X four on row 1, O three in column h
        big = big.play(cell)
    assert big.turn == "O" and big.cell_name(player.choose(big)) == "e1"  # O blocks
    big = big.play("h11")
    assert big.cell_name(player.choose(big)) == "e1"  # X wins rather than block h7 or h12
    big = big.play("o15")
    # O wins rather than block e1; column h's lines run top to bottom, so h7-h11 comes before h8-h12.
    assert big.cell_name(player.choose(big)) == "h7"


def test_arduino_random_move_is_uniform_by_default_and_skips_the_last_cell_when_faithful() -> None:
    board = Board.parse("X../.O./...")
    assert ArduinoPlayer().candidates(board) == board.legal_moves
    faithful = ArduinoPlayer(random.Random(3), faithful_random=True)
    assert faithful.candidates(board) == board.legal_moves[:-1]  # random(1, n) never gives n
    assert 8 not in {faithful.choose(board) for _ in range(300)}
    last = Board.parse("XOX/XOO/OX.")  # a single empty cell is still played
    assert faithful.candidates(last) == (8,)


# parsons (seed 004) ---------------------------------------------------------------------------

@pytest.mark.parametrize(("position", "expected", "why"), [
    (".../.../...", 4, "rule 1: an empty board, the centre"),
    ("X../.../...", 4, "rule 2: a lone opponent mark, the centre"),
    (".../.X./...", 8, "rule 2: a lone opponent mark in the centre, the bottom-right corner"),
    ("XX./XOO/.O.", 2, "rule 3: wins on row 1 and column a; rows come first"),
    ("XO./OXO/X..", 8, "rule 3: wins on both diagonals; the main diagonal comes first"),
    ("O.X/XXO/..O", 6, "rule 3: the only win is on the anti-diagonal (scanned from the bottom left)"),
    ("OO./XX./...", 5, "rule 3 before rule 4: win on row 2 rather than block row 1"),
    (".X./OXX/OO.", 8, "rule 4: blocks row 3 (cell 8) before column a (cell 0)"),
    ("X../.O./...", 2, "rule 5: top-left is taken, so top-right"),
    (".X./.O./.X.", 0, "rule 5: the top-left corner"),
    ("XXO/O../...", 6, "rule 5: top corners taken, so bottom-left"),
    ("XOX/.../OXO", 3, "rule 6: no win, block or corner: the first empty cell"),
])
def test_parsons_rules(position: str, expected: int, why: str) -> None:
    assert ParsonsPlayer().choose(Board.parse(position)) == expected, why


def test_parsons_scans_lines_in_the_seed_order_with_the_anti_diagonal_from_the_bottom_left() -> None:
    # On a real board a line summing to 2 or −14 has one gap, so the direction cannot show in a
    # move; the order is still the seed's, and it decides which line wins when several do.
    assert SCAN_LINES == ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8),
                          (0, 4, 8), (6, 4, 2))


def test_parsons_is_deterministic_and_plays_either_side() -> None:
    player = ParsonsPlayer()
    for board in reachable_positions():
        if not board.is_over:
            assert player.choose(board) == player.choose(board) in board.legal_moves


# mdttt (seed 001) -----------------------------------------------------------------------------

@pytest.mark.parametrize(("position", "mode", "cells", "why"), [
    ("XX./XOO/.O.", 0, (6,), "two wins (cells 2 and 6): the library keeps the last one"),
    ("XO./.../...", 1, (4,), "only the centre makes a 2 and leaves O no line of its own"),
    (".../.../O.X", 2, (0, 2, 4),
     "cells 0, 2, 4 and 5 each make one 2; cell 5 leaves two opp-1 lines, the others one"),
    ("X.O/.O./..X", 2, (6,), "every other cell leaves O's 2 on the anti-diagonal: a block"),
    (".../.../.X.", 3, (4,), "cells 0, 2 and 4 each make three own-1; the centre leaves one opp-1, not two"),
    (".../.X./...", 3, (0, 2, 6, 8), "the four corners tie"),
    (".../.XX/OOX", 4, (1,), "every cell leaves an X 2, so O takes the most own-1 lines"),
])
def test_mdttt_modes(position: str, mode: int, cells: tuple[int, ...], why: str) -> None:
    decision = MdtttPlayer().decide(Board.parse(position))
    assert (decision.mode, decision.cells) == (mode, cells), why


def test_mdttt_counts_every_line_after_the_imagined_move() -> None:
    board = Board.parse("X../.O./..X")  # O to move
    # O imagines cell 1. Line sums, O +1 and X −1: row 1 (X O .) 0, row 2 (. O .) +1,
    # row 3 (. . X) −1, column a (X . .) −1, column b (O O .) +2, column c (. . X) −1,
    # diagonal (X O X) −1, anti-diagonal (. O .) +1. Lines the move does not touch count too.
    assert tuple(cell_counts(board, 1)) == (0, 1, 2, 4, 0)  # own-3, own-2, own-1, opp-1, opp-2


def test_mdttt_never_needs_its_fallback_and_uses_every_mode() -> None:
    player = MdtttPlayer()
    modes = Counter(player.decide(b).mode for b in reachable_positions() if not b.is_over)
    assert FALLBACK_MODE not in modes  # the library would hang there; no game reaches it
    assert set(modes) == {0, 1, 2, 3, 4}


def test_mdttt_coin_flip_favours_later_cells() -> None:
    board = Board.parse(".../.X./...")  # four corners tie (mode 3)
    player = MdtttPlayer(random.Random(11), coin_flip=True)
    counts = Counter(player.choose(board) for _ in range(4_000))
    # Walking 0, 2, 6, 8 with a coin at each tie: 8 wins half the time, 6 a quarter, 0 and 2 an eighth.
    for cell, share in ((0, 1 / 8), (2, 1 / 8), (6, 1 / 4), (8, 1 / 2)):
        assert abs(counts[cell] / 4_000 - share) < 0.025
    plain = MdtttPlayer(random.Random(11))
    uniform = Counter(plain.choose(board) for _ in range(4_000))
    assert all(abs(n / 4_000 - 1 / 4) < 0.025 for n in uniform.values())


# newell-simon and simple-rules ---------------------------------------------------------------

@pytest.mark.parametrize(("position", "rule", "cells", "why"), [
    ("XX./OO./...", "win", (2,), "X completes the top row"),
    (".../..O/.XX", "block", (6,), "O (to move) fills X's gap on the bottom row"),
    (".../O../XOX", "fork", (2, 4), "cell 2 or 4 gives X two threats"),
    ("X../.O./..X", "force", (1, 3, 5, 7),
     "X forks at 2 or 6; a side forces X to answer without a fork (a corner would lose)"),
    ("X../.OX/...", "force", (1, 2, 7), "threats whose forced answers give X no fork"),
    (".../O.X/X..", "block fork", (2, 8), "no forcing move is safe, so O takes one of X's fork cells"),
    ("X../.../...", "centre", (4,), "nothing urgent: the centre"),
    (".../.X./..O", "opposite corner", (0,), "O holds cell 8, so X takes cell 0"),
    (".../.X./...", "empty corner", (0, 2, 6, 8), "any corner"),
    ("XOX/.X./OXO", "empty side", (3, 5), "only sides are left"),
])
def test_newell_simon_rules(position: str, rule: str, cells: tuple[int, ...], why: str) -> None:
    decision = NewellSimonPlayer().decide(Board.parse(position))
    assert (decision.rule, decision.cells) == (rule, cells), why


def test_seed001_rules_have_no_fork_defence() -> None:
    player = Seed001RulesPlayer()
    assert player.decide(Board.parse("X../.O./..X")) == ("empty corner", (2, 6))  # the losing move
    assert player.decide(Board.parse("X../.OX/...")) == ("opposite corner", (8,))
    assert player.decide(Board.parse(".../O../XOX")) == ("fork", (2, 4))  # it does fork


def test_rule_players_pick_every_tied_cell_from_the_rng() -> None:
    board = Board.parse(".../.X./...")
    player = NewellSimonPlayer(random.Random(2))
    assert {player.choose(board) for _ in range(200)} == {0, 2, 6, 8}


# minimax (seed 003) on 3×3 --------------------------------------------------------------------

def test_minimax_takes_the_lowest_cell_among_equal_scores() -> None:
    assert MinimaxPlayer().choose(Board()) == 0  # every first move draws: the robot plays cell 0


def test_minimax_prefers_the_quicker_win() -> None:
    # X wins at once with cell 6 (column a): 100. Cells 1 and 2 also win, by a fork, but two
    # moves later: 98. The robot takes 6 although 1 and 2 come first.
    board = Board.parse("X../XO./..O")
    scores = robot_scores(board)
    assert (scores[1], scores[2], scores[6]) == (98, 98, 100)
    assert MinimaxPlayer().choose(board) == 6


# minimax on other boards ----------------------------------------------------------------------

def test_minimax_on_4x4_wins_blocks_and_stays_legal() -> None:
    player = MinimaxPlayer()
    assert player.choose(Board.parse("XXX./OOO./..../....", k=4)) == 3  # win beats block
    assert player.choose(Board.parse("XX../OOO./X.../....", k=4)) == 7  # must block row 2
    board = Board.parse("X.../.O../..X./....", k=4)
    assert player.choose(board) in board.legal_moves


def big_board(*cells: str) -> Board:
    board = Board(15, 15, 5)
    for cell in cells:
        board = board.play(cell)
    return board


def test_minimax_on_15x15_wins_and_blocks_at_once() -> None:
    player = MinimaxPlayer()
    # X (to move) has four on row 8 with both ends open, O four in column c: X wins.
    board = big_board("d8", "c1", "e8", "c2", "f8", "c3", "g8", "c4")
    assert board.cell_name(player.choose(board)) in ("c8", "h8")
    # O (to move) must stop X's four on row 8; it has nothing of its own that wins.
    board = big_board("d8", "a1", "e8", "o15", "f8", "a15", "g8")
    assert board.cell_name(player.choose(board)) in ("c8", "h8")
    assert player.last_depth == 0  # answered before any search


def test_minimax_on_15x15_answers_within_a_second() -> None:
    # The node budget (about 0.5 s) stops it, not the clock (1 s): counted, not timed. With the
    # budget's clock stopped, the search reads it every few hundred nodes, so at most a few
    # hundred times; a search that overran its budget would go on reading it, until this clock ends it.
    from noughts.budget import Budget

    reads = 0

    def stopped_clock() -> float:
        nonlocal reads
        reads += 1
        return 0.0 if reads <= 10_000 else float("inf")

    board = big_board("h8", "g7", "h6", "h5", "i7", "g5", "g9", "j6")
    player = MinimaxPlayer(budget=Budget(nodes=100_000, seconds=1.0, clock=stopped_clock))
    cell = player.choose(board)
    assert cell in board.legal_moves
    assert player.last_depth >= 2
    assert reads < 2_000, reads  # the node budget ended the search (about 400 looks), not the backstop


def test_minimax_respects_a_tiny_budget() -> None:
    board = big_board("h8", "g7", "h6")
    player = MinimaxPlayer(max_nodes=50)
    assert player.choose(board) in board.legal_moves
    assert player.last_depth <= 2
    assert MinimaxPlayer(max_seconds=0.0).choose(board) in board.legal_moves


def test_minimax_finds_a_two_move_win_on_a_big_board() -> None:
    # X has an open three on row 8 (e8 f8 g8) and O nothing: extending to four with both ends
    # open (d8 or h8) wins next move whatever O does.
    board = big_board("e8", "a1", "f8", "a15", "g8", "o1")
    assert board.cell_name(MinimaxPlayer().choose(board)) in ("d8", "h8")


# budgets ----------------------------------------------------------------------------------------

class LookedAtBudget(Budget):
    """A budget on a clock that never moves, noting the positions spent at each look."""

    def __init__(self, nodes: int | None = None) -> None:
        self.looks: list[int] = []
        super().__init__(nodes, clock=lambda: 0.0)

    def renewed(self) -> LookedAtBudget:
        fresh = LookedAtBudget(self.nodes)
        self.looks = fresh.looks  # the test reads the last move's looks through the template
        return fresh

    def check(self, nodes: int = 0) -> None:
        self.looks.append(self.spent + nodes)
        super().check(nodes)


def test_get_hands_a_budget_to_the_players_that_search() -> None:
    budget = Budget(nodes=500, seconds=2)
    assert get("perfect", budget=budget).budget is budget  # type: ignore[attr-defined]
    assert get("minimax", budget=budget).budget is budget  # type: ignore[attr-defined]
    assert get("hard", budget=budget).perfect.budget is budget  # type: ignore[attr-defined]
    assert get("medium", budget=budget).hard.budget is budget  # type: ignore[attr-defined]
    for name in ("easy", "random", "arduino", *CLASSIC_ONLY):
        assert get(name, random.Random(1), budget=budget).choose(Board()) in range(9)


def test_solver_players_give_up_within_their_budget() -> None:
    player = get("perfect", random.Random(2), budget=Budget(nodes=100))  # a position on 15×15 costs ~2 ms
    board = Board(15, 15, 5)
    with pytest.raises(UnsupportedBoardError, match="within 100 positions") as caught:
        board = board.play(player.choose(board))
    assert "15×15" in str(caught.value)
    with pytest.raises(UnsupportedBoardError, match="within 2 seconds"):
        PerfectPlayer(budget=Budget(seconds=2, clock=iter(range(0, 100, 3)).__next__)).choose(Board(15, 15, 5))


def test_medium_moves_within_hards_budget_where_the_perfect_player_would_search_for_long() -> None:
    # the issue's 7×7 position: the perfect player settles every move's value (millions of
    # positions); medium's heads is hard's move, proved to keep the draw within hard's budget
    solver.clear_cache()
    board = Board.parse(ISSUE_28, k=5)
    budget = MoveBudgets(nodes=10_000)
    medium = get("medium", random.Random(1), budget=budget)
    heads = 0
    for _ in range(8):
        cell = medium.choose(board)
        if budget.moves:  # heads: hard moved, on one budget
            heads += 1
            assert sum(move.spent for move in budget.moves) <= 10_000
            assert medium.hard.last_player == "perfect"  # type: ignore[attr-defined]
            assert solver.outcome(board.play(cell), length_budget=Budget(nodes=0)).value == 0
        budget.moves.clear()
    assert heads


def test_the_older_player_limits_still_work() -> None:
    assert PerfectPlayer(max_nodes=5, time_limit=7).budget.nodes == 5
    assert (PerfectPlayer().max_nodes, PerfectPlayer().time_limit) == (2_000_000, 30.0)
    assert (MinimaxPlayer(max_seconds=0.5).max_seconds, MinimaxPlayer().max_nodes) == (0.5, 100_000)
    for make in (PerfectPlayer, MinimaxPlayer):
        with pytest.raises(InvalidBudgetError, match="either"):
            make(max_nodes=5, budget=Budget(5))


def test_each_move_gets_the_whole_budget() -> None:
    template = Budget(nodes=100_000, seconds=60)
    player = PerfectPlayer(random.Random(0), budget=template)
    board = Board(4, 4, 4).play(0).play(5).play(10)  # a few moves in: each move still searches, for less long
    for _ in range(3):
        board = board.play(player.choose(board))
    assert template.spent == 0  # each move spent a fresh copy


def test_minimax_looks_at_its_budget_every_few_nodes() -> None:
    board = big_board("h8", "g7", "h6")
    budget = LookedAtBudget(nodes=20_000)
    player = MinimaxPlayer(budget=budget)
    assert player.choose(board) in board.legal_moves
    every = max(1, min(1024, 50_000 // board.size))
    gaps = [b - a for a, b in zip([0, *budget.looks], budget.looks, strict=False)]
    assert len(gaps) > 10 and max(gaps) <= every + board.size  # a leaf adds its replies at once
    assert budget.looks[-1] >= 20_000  # it stopped on the node budget


def test_minimax_stops_at_the_first_look_after_its_time() -> None:
    board = big_board("h8", "g7", "h6")
    readings = iter([0.0, 0.0, 0.0, 5.0])  # the template made, the move's copy, one look, then past it
    player = MinimaxPlayer(budget=Budget(seconds=1.0, clock=lambda: next(readings, 5.0)))
    assert player.choose(board) in board.legal_moves
    assert player.last_depth <= 1


def test_rule_3_is_skipped_when_every_move_is_best(monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts.players import perfect

    board = Board(2, 5, 3)  # every first move draws; c1 and c2 leave O the most ways to go wrong
    assert PerfectPlayer(random.Random(0)).candidates(board) == (2, 7)
    monkeypatch.setattr(perfect, "RULE_3_MAX_REPLIES", 10 * 9 - 1)  # one reply too few to test
    assert PerfectPlayer(random.Random(0)).candidates(board) == tuple(range(10))


# who can play which board ----------------------------------------------------------------------

@pytest.fixture
def probe_by_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe without its clock, so the verdicts do not depend on the machine's speed."""
    monkeypatch.setattr(players, "PROBE_SECONDS", None)
    monkeypatch.setattr(players, "_verdicts", {})


@pytest.mark.parametrize("name", CLASSIC_ONLY)
def test_3x3_players_say_they_cannot_play_other_boards(name: str) -> None:
    assert unable(name, Board()) is None
    assert unable(name, Board.parse("X../.O./...")) is None
    for board in (Board(4, 4), Board(3, 3, 2), Board(3, 4, 3)):
        assert unable(name, board) == "it only plays 3×3 with 3 in a row"
        with pytest.raises(UnsupportedBoardError) as caught:
            get(name, random.Random(0)).choose(board)
        assert f"the {name} player only plays 3×3" in str(caught.value)  # and it says so at its first move


def test_players_for_any_board_can_play_any_board() -> None:
    for name in ("easy", *ANY_BOARD):
        assert unable(name, Board(26, 26)) is None
        assert unable(name, Board(1, 1)) is None


@pytest.mark.usefixtures("probe_by_nodes")
def test_solver_players_play_the_boards_the_solver_finishes_quickly(monkeypatch: pytest.MonkeyPatch) -> None:
    assert able(Board()) == names()
    every = [name for name in names() if name not in CLASSIC_ONLY]
    assert able(Board(4, 4)) == every  # about 30,000 positions
    assert able(Board(26, 26, 2)) == every  # a win in 3 plies, found at once
    assert able(Board(5, 5)) == every  # a draw by pairing, proved without search
    # 4×7 with four in a row takes about 94,000 positions: a probe of 2,000 gives up on it quickly
    monkeypatch.setattr(players, "PROBE_NODES", 2_000)
    assert able(Board(4, 7, 4)) == ["easy", "hard", "random", "arduino", "minimax", "strong"]
    reason = unable("perfect", Board(4, 7, 4))
    assert reason == "it works out every move exactly, and this board is too big for that"
    # a position late in a 5×5 game is small enough
    late = Board.parse("XOXOX/OXOXO/XOXO./...../.....", k=4)
    assert unable("perfect", late) is None


def test_unable_probes_within_the_probe_budget_once_per_position(monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts import solver

    monkeypatch.setattr(players, "_verdicts", {})
    budgets: list[Budget] = []

    def out_of_budget(board: Board, *, budget: Budget) -> None:
        budgets.append(budget)
        raise BudgetExceeded("out of budget", reason="time")

    monkeypatch.setattr(solver, "solve", out_of_budget)
    board = Board(9, 9, 5)
    assert unable("perfect", board) is not None
    assert [(b.nodes, b.seconds) for b in budgets] == [(players.PROBE_NODES, players.PROBE_SECONDS)]
    assert players.PROBE_SECONDS <= 1.0
    assert unable("medium", board) is not None
    assert unable("hard", board) is None  # where nothing is proved it plays as the strong player
    assert able(board) == ["easy", "hard", "random", "arduino", "minimax", "strong"]
    assert len(budgets) == 1  # the verdict is kept for the shape and position
    for cell in range(81):  # many positions: the verdicts kept stay few
        unable("perfect", Board(9, 9, 5).play(cell))
    assert len(players._verdicts) <= 64
    custom = Budget(nodes=7)
    unable("perfect", board, budget=custom)
    assert budgets[-1] is custom  # a caller's own budget is used, and its verdict not kept


def test_unable_knows_only_registered_players() -> None:
    with pytest.raises(UnknownPlayerError, match="no computer player called 'gandalf'"):
        unable("gandalf", Board())
    assert unable(" Perfect ", Board()) is None


# hard within its budget (issue 28) -------------------------------------------------------------

ISSUE_28 = "......./......./..O.X../..OXX../......./......./......."  # 7×7 with five, X to move: a draw


class MoveBudgets(Budget):
    """A budget template that keeps the copy each move searches on, to add up what a move spent."""

    def __init__(self, nodes: int | None = None) -> None:
        super().__init__(nodes)
        self.moves: list[Budget] = []

    def renewed(self) -> Budget:
        fresh = super().renewed()
        self.moves.append(fresh)
        return fresh


@pytest.mark.usefixtures("probe_by_nodes")
def test_hard_proves_a_move_of_a_7x7_draw_within_its_budget() -> None:
    # the solver proves the draw at once, but telling which of the 44 moves keep it takes
    # 2,500,000 positions: hard searched for 26-30 s, gave up and played the strong player's move
    solver.clear_cache()  # as in a new process
    board = Board.parse(ISSUE_28, k=5)
    budget = MoveBudgets(nodes=10_000)
    hard = get("hard", random.Random(0), budget=budget)
    cell = hard.choose(board)
    assert hard.last_player == "perfect"  # type: ignore[attr-defined]
    assert sum(move.spent for move in budget.moves) <= 10_000
    assert solver.outcome(board.play(cell), length_budget=Budget(nodes=0)).value == 0  # still a draw


@pytest.mark.usefixtures("probe_by_nodes")
def test_every_part_of_a_hard_move_spends_one_budget() -> None:
    budget = MoveBudgets(nodes=3_000)
    hard = get("hard", random.Random(0), budget=budget)
    board = Board(9, 9, 5)  # the probe gives up, and the strong player moves on what is left
    assert hard.choose(board) in board.legal_moves
    assert hard.last_player == "strong"  # type: ignore[attr-defined]
    assert len(budget.moves) == 1 and budget.moves[0].spent <= 3_000


def test_hard_never_gives_a_value_away_in_any_3x3_position() -> None:
    hard = get("hard", random.Random(0))
    for board in reachable_positions():
        if board.is_over:
            continue
        analysis = solver.analyse(board)
        value_of = {move.index: move.value for move in analysis.moves}
        assert {value_of[cell] for cell in hard.candidates(board)} == {analysis.value}, str(board)  # type: ignore[attr-defined]


def every_position(board: Board) -> list[Board]:
    """Every unfinished position reachable from ``board``."""
    found = {board.key: board}
    stack = [board]
    while stack:
        position = stack.pop()
        for cell in () if position.is_over else position.legal_moves:
            child = position.play(cell)
            if child.key not in found:
                found[child.key] = child
                stack.append(child)
    return [position for position in found.values() if not position.is_over]


@pytest.mark.parametrize(("rows", "cols", "k"), [(3, 3, 2), (1, 7, 3), (2, 5, 3)])
def test_hard_plays_only_best_moves_in_every_position_of_tiny_boards(rows: int, cols: int, k: int) -> None:
    hard = get("hard", random.Random(0), budget=Budget(nodes=20_000))
    for board in every_position(Board(rows, cols, k)):
        analysis = solver.analyse(board)
        best = {move.index for move in analysis.moves if (move.value, move.plies) == (analysis.value, analysis.plies)}
        assert set(hard.candidates(board)) <= best, str(board)  # type: ignore[attr-defined]
