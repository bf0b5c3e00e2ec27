"""The rules (noughts.board), checked against brute force written independently here.

Nothing in the expected values comes from noughts itself: 3×3 lines and symmetries are written
out literally, other geometries get their lines from a different scan (windows slid along
maximal rays), positions are plain strings, and reachability comes from playing the game tree
on those strings.
"""

from __future__ import annotations

import copy
import pickle
import random
from functools import cache
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noughts import (
    Board,
    CellSyntaxError,
    Geometry,
    IllegalMoveError,
    ImpossiblePositionError,
    NoughtsError,
    UnsupportedBoardError,
)
from noughts.board import GEOMETRY_CACHE_SHAPES, MOVES_CACHE_CELLS

# --------------------------------------------------------------------------------------
# Independent brute force
# --------------------------------------------------------------------------------------

# The 8 lines of 3×3 in the contract's scan order.
LINES_3X3 = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),  # rows, top to bottom
    (0, 3, 6), (1, 4, 7), (2, 5, 8),  # columns, left to right
    (0, 4, 8),                        # diagonal ↘
    (2, 4, 6),                        # anti-diagonal ↙
)

# The 8 symmetries of 3×3 as "new cell i takes old cell p[i]", written out.
SYMMETRIES_3X3 = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8),  # identity
    (2, 1, 0, 5, 4, 3, 8, 7, 6),  # mirror left-right
    (6, 7, 8, 3, 4, 5, 0, 1, 2),  # mirror top-bottom
    (8, 7, 6, 5, 4, 3, 2, 1, 0),  # half turn
    (0, 3, 6, 1, 4, 7, 2, 5, 8),  # transpose
    (8, 5, 2, 7, 4, 1, 6, 3, 0),  # anti-transpose
    (2, 5, 8, 1, 4, 7, 0, 3, 6),  # quarter turn
    (6, 3, 0, 7, 4, 1, 8, 5, 2),  # quarter turn the other way
)


def state_from_wins(s: str, wins: list[tuple[int, ...]]) -> dict[str, object]:
    """Winner, line, draw, over, turn and legal moves of a flat position given its complete lines."""
    winner = s[wins[0][0]] if wins else None
    full = "." not in s
    over = winner is not None or full
    return {
        "winner": winner,
        "line": wins[0] if wins else None,
        "draw": full and winner is None,
        "over": over,
        "turn": None if over else ("X" if s.count("X") == s.count("O") else "O"),
        "legal": () if over else tuple(i for i, ch in enumerate(s) if ch == "."),
    }


def brute_3x3(s: str) -> dict[str, object]:
    """Everything about a 9-character position string, from the literal lines."""
    wins = [line for line in LINES_3X3 if s[line[0]] != "." and s[line[0]] == s[line[1]] == s[line[2]]]
    return state_from_wins(s, wins)


@cache
def reachable_3x3() -> frozenset[str]:
    """Every position reachable from the empty board, by playing out the tree on strings."""
    seen = {"." * 9}
    frontier = ["." * 9]
    while frontier:
        following = []
        for s in frontier:
            info = brute_3x3(s)
            for i in info["legal"]:  # type: ignore[attr-defined]
                t = s[:i] + info["turn"] + s[i + 1:]  # type: ignore[operator]
                if t not in seen:
                    seen.add(t)
                    following.append(t)
        frontier = following
    return frozenset(seen)


@cache
def brute_lines(rows: int, cols: int, k: int) -> tuple[tuple[int, ...], ...]:
    """All lines of k, found by sliding a window along every maximal ray, in the contract's order."""
    def cell(r: int, c: int) -> int:
        return r * cols + c

    rays = {
        "h": [[(r, c) for c in range(cols)] for r in range(rows)],
        "v": [[(r, c) for r in range(rows)] for c in range(cols)],
        # ↘: r - c constant, walked downwards; ↙: r + c constant, walked downwards
        "d": [[(r, r - s) for r in range(rows) if 0 <= r - s < cols] for s in range(-(cols - 1), rows)],
        "a": [[(r, s - r) for r in range(rows) if 0 <= s - r < cols] for s in range(rows + cols - 1)],
    }
    ordered: list[tuple[int, ...]] = []
    for name in "hvda":
        found = [tuple(cell(*p) for p in ray[i:i + k]) for ray in rays[name] for i in range(len(ray) - k + 1)]
        if name == "v":  # columns left to right, then top to bottom
            found.sort(key=lambda line: (line[0] % cols, line[0] // cols))
        else:  # by the reading order of the line's first cell
            found.sort(key=lambda line: line[0])
        ordered += found
    unique, seen = [], set()
    for line in ordered:  # k = 1: every direction gives the same one-cell lines
        if frozenset(line) not in seen:
            seen.add(frozenset(line))
            unique.append(line)
    return tuple(unique)


def brute_state(s: str, rows: int, cols: int, k: int) -> dict[str, object]:
    """Like brute_3x3 for any geometry; s is the flat string of 'X', 'O', '.'."""
    wins = [line for line in brute_lines(rows, cols, k)
            if s[line[0]] != "." and all(s[c] == s[line[0]] for c in line)]
    return state_from_wins(s, wins)


def reachable_by_rule(s: str, rows: int, cols: int, k: int) -> bool:
    """Can s arise in a game? Counts alternate; at most one side won, with its last move,
    which means some one of the winner's marks lies on every winning line of the winner."""
    n_x, n_o = s.count("X"), s.count("O")
    if n_x not in (n_o, n_o + 1):
        return False
    lines = brute_lines(rows, cols, k)
    def has_line(t: str, mark: str) -> bool:
        return any(all(t[c] == mark for c in line) for line in lines)
    x_won, o_won = has_line(s, "X"), has_line(s, "O")
    if x_won and o_won:
        return False
    if not (x_won or o_won):
        return True
    mark = "X" if x_won else "O"
    if (mark == "X") != (n_x == n_o + 1):
        return False
    return any(not has_line(s[:i] + "." + s[i + 1:], mark) for i, ch in enumerate(s) if ch == mark)


def reachable_by_tree(rows: int, cols: int, k: int) -> frozenset[str]:
    seen = {"." * (rows * cols)}
    frontier = list(seen)
    while frontier:
        following = []
        for s in frontier:
            info = brute_state(s, rows, cols, k)
            for i in info["legal"]:  # type: ignore[attr-defined]
                t = s[:i] + info["turn"] + s[i + 1:]  # type: ignore[operator]
                if t not in seen:
                    seen.add(t)
                    following.append(t)
        frontier = following
    return frozenset(seen)


def flat(board: Board) -> str:
    return "".join(board[i] or "." for i in range(board.size))


def slashed(s: str, cols: int) -> str:
    return "/".join(s[i:i + cols] for i in range(0, len(s), cols))


def check_against_brute(board: Board, s: str, rows: int, cols: int, k: int) -> None:
    expected = brute_state(s, rows, cols, k) if (rows, cols, k) != (3, 3, 3) else brute_3x3(s)
    assert flat(board) == s
    assert board.winner == expected["winner"], s
    assert board.winning_line == expected["line"], s
    assert board.is_draw == expected["draw"], s
    assert board.is_over == expected["over"], s
    assert board.turn == expected["turn"], s
    assert board.legal_moves == expected["legal"], s
    assert board.ply == rows * cols - s.count(".")
    assert board.x == sum(1 << i for i, ch in enumerate(s) if ch == "X")
    assert board.o == sum(1 << i for i, ch in enumerate(s) if ch == "O")
    assert (board.rows, board.cols, board.k, board.size) == (rows, cols, k, rows * cols)


def all_boards_by_play(start: Board) -> dict[str, Board]:
    """Every position reachable from start, generated with Board.play."""
    found = {str(start): start}
    frontier = [start]
    while frontier:
        following = []
        for board in frontier:
            for cell in board.legal_moves:
                after = board.play(cell)
                if str(after) not in found:
                    found[str(after)] = after
                    following.append(after)
        frontier = following
    return found


@pytest.fixture(scope="module")
def all_3x3() -> dict[str, Board]:
    return all_boards_by_play(Board())


# --------------------------------------------------------------------------------------
# Every reachable 3×3 position
# --------------------------------------------------------------------------------------

def test_reachable_count_is_5478_both_ways(all_3x3: dict[str, Board]) -> None:
    assert len(reachable_3x3()) == 5478
    assert len(all_3x3) == 5478
    assert {s.replace("/", "") for s in all_3x3} == reachable_3x3()


def test_every_reachable_3x3_position_matches_brute_force(all_3x3: dict[str, Board]) -> None:
    keys = set()
    for s in reachable_3x3():
        text = slashed(s, 3)
        board = Board.parse(s)
        check_against_brute(board, s, 3, 3, 3)
        assert board == Board.parse(text) == Board.parse(text.lower()) == all_3x3[text]
        assert hash(board) == hash(all_3x3[text])
        assert str(board) == text
        assert Board.parse(str(board)) == board
        assert Board.from_bits(board.x, board.o) == board
        assert [board[i] for i in range(9)] == [None if ch == "." else ch for ch in s]
        assert board.cells == tuple(None if ch == "." else ch for ch in s)
        keys.add(board.key)
    assert len(keys) == 5478


def test_boards_made_by_play_match_brute_force(all_3x3: dict[str, Board]) -> None:
    # The same checks on the objects play() built (play computes the winner its own way).
    for text, board in all_3x3.items():
        check_against_brute(board, text.replace("/", ""), 3, 3, 3)


def test_every_3x3_string_accepted_exactly_when_reachable() -> None:
    reachable = reachable_3x3()
    for chars in product("XO.", repeat=9):
        s = "".join(chars)
        if s in reachable:
            Board.parse(s)
        else:
            with pytest.raises(ImpossiblePositionError):
                Board.parse(s)
            x = sum(1 << i for i, ch in enumerate(s) if ch == "X")
            o = sum(1 << i for i, ch in enumerate(s) if ch == "O")
            with pytest.raises(ImpossiblePositionError):
                Board.from_bits(x, o)


@pytest.mark.parametrize(("rows", "cols", "k"), [
    (3, 3, 2), (2, 4, 3), (4, 2, 2), (5, 1, 3), (3, 2, 3), (2, 3, 2), (2, 2, 1), (1, 6, 3), (1, 1, 1),
])
def test_small_geometries_accept_exactly_the_reachable_positions(rows: int, cols: int, k: int) -> None:
    reachable = reachable_by_tree(rows, cols, k)
    size = rows * cols
    for chars in product("XO.", repeat=size):
        s = "".join(chars)
        x = sum(1 << i for i, ch in enumerate(s) if ch == "X")
        o = sum(1 << i for i, ch in enumerate(s) if ch == "O")
        assert reachable_by_rule(s, rows, cols, k) == (s in reachable), s  # the two brute forces agree
        if s in reachable:
            check_against_brute(Board.from_bits(x, o, rows, cols, k), s, rows, cols, k)
        else:
            with pytest.raises(ImpossiblePositionError):
                Board.from_bits(x, o, rows, cols, k)


def test_canonical_classes_number_765(all_3x3: dict[str, Board]) -> None:
    independent = {min("".join(s[p[i]] for i in range(9)) for p in SYMMETRIES_3X3) for s in reachable_3x3()}
    assert len(independent) == 765
    assert len({board.canonical() for board in all_3x3.values()}) == 765


def test_symmetry_images_of_every_3x3_position(all_3x3: dict[str, Board]) -> None:
    assert set(Geometry.get(3, 3, 3).symmetries) == set(SYMMETRIES_3X3)
    canonical = {text: board.canonical() for text, board in all_3x3.items()}
    for text, board in all_3x3.items():
        s = text.replace("/", "")
        images = board.symmetries()
        assert len(images) == 8
        assert images[0] == board
        expected_images = {"".join(s[p[i]] for i in range(9)) for p in SYMMETRIES_3X3}
        assert {flat(image) for image in images} == expected_images
        assert canonical[text] in images
        assert canonical[text].key == min(image.key for image in images)
        for image in images:
            assert flat(image) in reachable_3x3()  # a valid, reachable position
            assert all_3x3[str(image)] == image
            assert image.winner == board.winner
            assert image.is_over == board.is_over
            assert image.is_draw == board.is_draw
            assert image.turn == board.turn
            assert image.ply == board.ply
            assert canonical[str(image)] == canonical[text]  # the same for every image
            if board.winner:
                assert all(image[c] == board.winner for c in image.winning_line)  # type: ignore[union-attr]


def test_symmetry_images_report_the_same_winning_line_as_the_equal_parsed_board(
        all_3x3: dict[str, Board]) -> None:
    # Equal boards must agree on winning_line: the first line in scan order when the last
    # move made two (e.g. XXX/XOO/XOO, whose transpose is itself).
    for board in all_3x3.values():
        for image in board.symmetries():
            assert image.winning_line == brute_3x3(flat(image))["line"], (str(board), str(image))


def test_double_line_win_transposed_onto_itself() -> None:
    board = Board.parse("XXX/XOO/XOO")
    assert board.winning_line == (0, 1, 2)
    for image in board.symmetries():
        if image == board:
            assert image.winning_line == board.winning_line


# --------------------------------------------------------------------------------------
# Other geometries: random reachable positions against the brute force
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("rows", "cols", "k"),
                         [(4, 4, 3), (3, 4, 3), (4, 3, 3), (5, 5, 4), (3, 5, 4), (6, 7, 4)])
def test_random_games_match_brute_force(rows: int, cols: int, k: int) -> None:
    rng = random.Random(f"{rows}x{cols}k{k}")
    size = rows * cols
    seen = 0
    games = 150 if size <= 25 else 40
    for _ in range(games):
        s = "." * size
        board = Board(rows, cols, k)
        while True:
            check_against_brute(board, s, rows, cols, k)
            assert Board.parse(slashed(s, cols), k) == board
            assert Board.from_bits(board.x, board.o, rows, cols, k) == board
            seen += 1
            info = brute_state(s, rows, cols, k)
            if info["over"]:
                break
            cell = rng.choice(info["legal"])  # type: ignore[arg-type]
            s = s[:cell] + info["turn"] + s[cell + 1:]  # type: ignore[operator]
            board = board.play(cell)
    assert seen > games * 5


@pytest.mark.parametrize(("rows", "cols", "k"), [(4, 4, 3), (3, 4, 3), (5, 5, 4), (4, 6, 3)])
def test_random_mark_patterns_accepted_exactly_when_reachable(rows: int, cols: int, k: int) -> None:
    rng = random.Random(f"patterns {rows}x{cols}k{k}")
    size = rows * cols
    accepted = rejected = 0
    for _ in range(1500):
        n_o = rng.randrange(size // 2 + 1)
        n_x = min(size - n_o, n_o + rng.choice((0, 1, 1, 0, 2, -1)))
        if n_x < 0:
            continue
        cells = rng.sample(range(size), n_x + n_o)
        marks = ["."] * size
        for i, c in enumerate(cells):
            marks[c] = "X" if i < n_x else "O"
        s = "".join(marks)
        x = sum(1 << i for i, ch in enumerate(s) if ch == "X")
        o = sum(1 << i for i, ch in enumerate(s) if ch == "O")
        if reachable_by_rule(s, rows, cols, k):
            accepted += 1
            check_against_brute(Board.from_bits(x, o, rows, cols, k), s, rows, cols, k)
        else:
            rejected += 1
            with pytest.raises(ImpossiblePositionError):
                Board.from_bits(x, o, rows, cols, k)
    assert accepted > 100 and rejected > 100


def test_wins_on_the_last_cell_are_wins_not_draws() -> None:
    # X completes the main diagonal with the ninth mark.
    board = Board.parse("XOX/OXO/OX.").play("c3")
    assert str(board) == "XOX/OXO/OXX"
    assert (board.winner, board.winning_line, board.is_draw, board.is_over) == ("X", (0, 4, 8), False, True)
    assert board.turn is None and board.legal_moves == ()
    parsed = Board.parse("XOX/XOO/XXO")  # X's last mark a3 completes column a
    assert (parsed.winner, parsed.winning_line, parsed.is_draw) == ("X", (0, 3, 6), False)
    # 4×4 with k=3: the 16th mark is O's, and it can win.
    before = Board.parse("XOXO/OOXX/XXOX/OXO.", k=3)
    assert before.turn == "O" and before.winner is None
    after = before.play(15)
    assert (after.winner, after.is_draw, after.ply) == ("O", False, 16)
    assert after.winning_line == brute_state(flat(after), 4, 4, 3)["line"] == (5, 10, 15)
    # and a real draw is a draw
    draw = Board.parse("XOX/XOO/OXX")
    assert (draw.winner, draw.is_draw, draw.is_over) == (None, True, True)
    assert draw.turn is None and draw.legal_moves == ()


# --------------------------------------------------------------------------------------
# Impossible positions
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "k", "words"), [
    ("XX./.../...", None, ["X has 2", "O has 0"]),
    ("O../.../...", None, ["X has 0", "O has 1"]),
    ("XXX/XOO/X..", None, ["X has 5", "O has 2"]),
    ("XXX/OOO/...", None, ["both"]),
    ("XXX/OO./..O", None, ["X has 3 in a row", "O has moved"]),
    ("OOO/XX./X.X", None, ["O has 3 in a row", "X has moved"]),
    ("XXXO/O.O./XXXO/.O..", 3, ["separate"]),          # two parallel lines of X
    ("XXXO/XX.O/XO../O.O.", 3, ["separate"]),          # row, column and anti-diagonal: no common cell
    ("XYZ/.../...", None, ["'Y'", "row 1"]),
    ("X../.?./...", None, ["'?'", "row 2"]),
    ("XO/.../...", None, ["row 2", "3", "2"]),
    ("XO./../...", None, ["row 2", "2", "3"]),
    ("." * 5000, None, ["too long"]),
    ("", None, ["not a position"]),
    ("   ", None, ["not a position"]),
    ("X.O.X", None, ["not a position"]),
    ("/", None, ["at least one cell"]),
    ("/".join(["."] * 27), None, ["26"]),
    ("." * 27 + "/" + "." * 27, None, ["26"]),
    ("X../.../...", 4, ["k"]),
    ("X../.../...", 0, ["k"]),
])
def test_impossible_positions_rejected_with_reason(text: str, k: int | None, words: list[str]) -> None:
    with pytest.raises(ImpossiblePositionError) as caught:
        Board.parse(text, k)
    assert isinstance(caught.value, NoughtsError) and isinstance(caught.value, ValueError)
    for word in words:
        assert word in str(caught.value), (word, str(caught.value))


def test_separate_line_examples_are_otherwise_legal() -> None:
    # Make sure the "separate lines" cases above fail for that reason only: counts are right
    # and O has no line, and removing any single X leaves a line.
    for text in ("XXXO/O.O./XXXO/.O..", "XXXO/XX.O/XO../O.O."):
        s = text.replace("/", "")
        assert s.count("X") == s.count("O") + 1
        assert not reachable_by_rule(s, 4, 4, 3)
        assert brute_state(s, 4, 4, 3)["winner"] == "X"


def test_from_bits_rejects_overlap_and_outside_marks() -> None:
    with pytest.raises(ImpossiblePositionError, match="both"):
        Board.from_bits(1, 1)
    with pytest.raises(ImpossiblePositionError, match="outside"):
        Board.from_bits(1 << 9, 0)
    with pytest.raises(ImpossiblePositionError, match="outside"):
        Board.from_bits(-1, 0)
    assert Board.from_bits(1 << 8, 1 << 0) == Board.parse("O../.../..X")


@pytest.mark.parametrize("bits", ["1", 1.0, None, [1]])
def test_from_bits_rejects_non_integer_masks_with_a_noughts_error(bits: object) -> None:
    with pytest.raises(NoughtsError):
        Board.from_bits(bits, 0)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# Cells
# --------------------------------------------------------------------------------------

def test_every_3x3_cell_by_number_and_name() -> None:
    board = Board()
    names = ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]
    for index, name in enumerate(names):
        assert board.parse_cell(str(index + 1)) == index
        assert board.parse_cell(f" {index + 1}\t") == index
        assert board.parse_cell(name) == index
        assert board.parse_cell(name.upper()) == index
        assert board.parse_cell(f"  {name.upper()}\n") == index
        assert board.cell_name(index) == name
        assert board.play(name) == board.play(index) == board.play(str(index + 1))
        assert board.play(name)[index] == "X"


def test_cell_names_round_trip_on_every_size_up_to_26() -> None:
    for rows in range(1, 27):
        for cols in range(1, 27):
            geometry = Geometry.get(rows, cols, max(rows, cols))  # few lines: quick to build
            for cell in range(rows * cols):
                r, c = divmod(cell, cols)
                name = geometry.cell_name(cell)
                assert name == "abcdefghijklmnopqrstuvwxyz"[c] + str(r + 1)
                assert geometry.parse_cell(name) == cell
                assert geometry.parse_cell(name.upper()) == cell
                assert geometry.parse_cell(str(cell + 1)) == cell
    big = Board(26, 26)
    assert big.cell_name(675) == "z26" and big.parse_cell("Z26") == 675 and big.parse_cell("676") == 675


@pytest.mark.parametrize("text", [
    "0", "10", "00", "-1", "+5", "z9", "d1", "a4", "a0", "", " ", "b", "bb2", "2b", "a 1", "1 2", "a1b",
    "٣", "a٣", "b²", "５", "ｂ２", "9" * 50, "a" + "1" * 40, "\x00", "a1\x00", "\u212a1", "b2" * 10,
])
def test_bad_cell_syntax(text: str) -> None:
    with pytest.raises(CellSyntaxError) as caught:
        Board().parse_cell(text)
    message = str(caught.value)
    assert "1 to 9" in message and "a1" in message, message  # says what to type instead
    assert len(message) < 200
    with pytest.raises(CellSyntaxError):
        Board().play(text)


def test_kelvin_sign_is_not_the_letter_k() -> None:
    # 'K' (U+212A) lowercases to ASCII 'k'; a cell name is ASCII, like its digits.
    with pytest.raises(CellSyntaxError):
        Board(11, 11).parse_cell("\u212a1")


@pytest.mark.parametrize("value", [None, 1.0, 4.5, b"b2", True, False, [4], (4,), {"cell": 4}, object(), 4j])
def test_cells_that_are_not_text_or_int(value: object) -> None:
    with pytest.raises(CellSyntaxError) as caught:
        Board().parse_cell(value)  # type: ignore[arg-type]
    assert "b2" in str(caught.value)
    with pytest.raises(CellSyntaxError) as caught:
        Board().play(value)  # type: ignore[arg-type]
    assert "b2" in str(caught.value)


def test_bad_cell_messages_name_the_input() -> None:
    with pytest.raises(CellSyntaxError, match="10"):
        Board().parse_cell("10")
    with pytest.raises(CellSyntaxError, match="z9"):
        Board().parse_cell("z9")
    with pytest.raises(CellSyntaxError, match="d1"):
        Board().parse_cell("D1")
    with pytest.raises(CellSyntaxError, match="1 to 16"):
        Board(4, 4).parse_cell("17")


def test_illegal_moves_name_the_cell() -> None:
    board = Board().play("b2")
    with pytest.raises(IllegalMoveError) as caught:
        board.play(4)
    assert "b2" in str(caught.value) and "X" in str(caught.value)
    with pytest.raises(IllegalMoveError, match="b2"):
        board.play("B2")
    with pytest.raises(IllegalMoveError, match="9"):
        board.play(9)
    with pytest.raises(IllegalMoveError, match="-1"):
        board.play(-1)
    with pytest.raises(IllegalMoveError, match=str(10**30)):
        board.play(10**30)
    draw = Board.parse("XOX/XOO/OXX")
    for cell in range(9):
        with pytest.raises(IllegalMoveError) as caught:
            draw.play(cell)
        assert draw.cell_name(cell) in str(caught.value)
    won = Board.parse("XXX/OO./...")
    for cell in (5, 6, "c2"):
        with pytest.raises(IllegalMoveError) as caught:
            won.play(cell)
        assert "over" in str(caught.value) and "X" in str(caught.value)
    with pytest.raises(IllegalMoveError):
        Board.parse("OOO/XX./X..").play(8)


def test_moves_after_a_win_name_the_cell() -> None:
    # The brief: every IllegalMoveError names the cell, including moves after a win.
    won = Board.parse("XXX/OO./...")
    for cell, name in ((5, "c2"), ("a3", "a3")):
        with pytest.raises(IllegalMoveError) as caught:
            won.play(cell)
        assert name in str(caught.value), str(caught.value)


def test_cell_name_off_the_board() -> None:
    for cell in (-1, 9, 100):
        with pytest.raises(IllegalMoveError, match=str(cell)):
            Board().cell_name(cell)


# --------------------------------------------------------------------------------------
# Geometry
# --------------------------------------------------------------------------------------

def expected_line_count(rows: int, cols: int, k: int) -> int:
    # A line of k starts where it fits: cols-k+1 starts per row, rows-k+1 per column, and
    # both diagonal directions need (rows-k+1)(cols-k+1) starts. With k = 1 all coincide.
    if k == 1:
        return rows * cols
    fit_r, fit_c = max(0, rows - k + 1), max(0, cols - k + 1)
    return rows * fit_c + cols * fit_r + 2 * fit_r * fit_c


def test_line_counts_known_values() -> None:
    assert expected_line_count(3, 3, 3) == 8
    assert expected_line_count(4, 4, 4) == 10
    assert expected_line_count(15, 15, 5) == 572  # gomoku's figure
    assert expected_line_count(7, 6, 4) == 69     # connect four's figure


@pytest.mark.parametrize("rows", range(1, 9))
def test_lines_of_every_geometry_up_to_8x8(rows: int) -> None:
    for cols in range(1, 9):
        for k in range(1, max(rows, cols) + 1):
            g = Geometry.get(rows, cols, k)
            assert (g.rows, g.cols, g.k, g.size) == (rows, cols, k, rows * cols)
            assert g.full == (1 << rows * cols) - 1
            assert len(g.lines) == expected_line_count(rows, cols, k)
            assert g.lines == brute_lines(rows, cols, k)
            assert g.line_masks == tuple(sum(1 << c for c in line) for line in g.lines)
            for cell in range(g.size):
                through = tuple(m for m, line in zip(g.line_masks, g.lines, strict=True) if cell in line)
                assert g.lines_through[cell] == through
            for line in g.lines:
                assert len(line) == k == len(set(line))


@pytest.mark.parametrize(("rows", "cols", "k"),
                         [(15, 15, 5), (26, 26, 5), (26, 1, 26), (7, 6, 4), (3, 26, 3)])
def test_lines_of_big_geometries(rows: int, cols: int, k: int) -> None:
    g = Geometry.get(rows, cols, k)
    assert len(g.lines) == expected_line_count(rows, cols, k)
    assert g.lines == brute_lines(rows, cols, k)


def dihedral(rows: int, cols: int) -> set[tuple[int, ...]]:
    """The symmetries as 'new (r, c) takes old f(r, c)', independently of noughts."""
    maps = [
        lambda r, c: (r, c), lambda r, c: (r, cols - 1 - c),
        lambda r, c: (rows - 1 - r, c), lambda r, c: (rows - 1 - r, cols - 1 - c),
    ]
    if rows == cols:
        n = rows - 1
        maps += [lambda r, c: (c, r), lambda r, c: (n - c, n - r),
                 lambda r, c: (c, n - r), lambda r, c: (n - c, r)]
    return {tuple(f(r, c)[0] * cols + f(r, c)[1] for r in range(rows) for c in range(cols)) for f in maps}


@pytest.mark.parametrize("rows", range(1, 9))
def test_symmetries(rows: int) -> None:
    for cols in range(1, 9):
        for k in {1, min(rows, cols), max(rows, cols)}:
            g = Geometry.get(rows, cols, k)
            perms = g.symmetries
            assert perms[0] == tuple(range(g.size))
            assert len(set(perms)) == len(perms)
            assert set(perms) == dihedral(rows, cols)
            if rows >= 2 and cols >= 2:
                assert len(perms) == (8 if rows == cols else 4)
            line_sets = {frozenset(line) for line in g.lines}
            for p in perms:
                assert sorted(p) == list(range(g.size))
                assert {frozenset(p[c] for c in line) for line in g.lines} == line_sets


def test_transform_moves_marks_as_the_contract_says() -> None:
    # new board cell i takes old cell p[i]
    board = Board(3, 4, 3).play(1)  # X on b1
    g = board.geometry
    for p, image in zip(g.symmetries, board.symmetries(), strict=True):
        assert image[p.index(1)] == "X" and image.ply == 1


@pytest.mark.parametrize("args", [
    (0, 3), (3, 0), (-1, 3), (3, 27), (27, 3), (27, 27), (3, 3, 0), (3, 3, 4), (3, 3, -1), (2, 5, 6),
    (3.0, 3), (3, 3.0), (3, 3, 3.0), ("3", 3), (3, "3"), (None, 3), (3, 3, "3"),
    (True, 3, 3), (3, True), (3, 3, True), (True, True), (3, 3, [3]), ([3], 3),
])
def test_invalid_geometries(args: tuple[object, ...]) -> None:
    # Make the int twins of the bool / float cases exist first, so a cache cannot hide them.
    for twin in ((1, 3, 3), (3, 1, 3), (3, 3, 1), (1, 1, 1), (3, 3, 3)):
        Geometry.get(*twin)
    with pytest.raises(UnsupportedBoardError) as caught:
        Board(*args)  # type: ignore[arg-type]
    assert isinstance(caught.value, NoughtsError)
    with pytest.raises(UnsupportedBoardError):
        Geometry.get(*args)  # type: ignore[arg-type]


def test_invalid_geometry_messages() -> None:
    with pytest.raises(UnsupportedBoardError, match="26"):
        Board(3, 27)
    with pytest.raises(UnsupportedBoardError, match="whole number"):
        Board(3, 2.5)  # type: ignore[arg-type]
    with pytest.raises(UnsupportedBoardError, match="k"):
        Board(3, 3, 4)


def test_default_k_and_extreme_geometries() -> None:
    assert Board().k == 3 and Board(4, 4).k == 4 and Board(6, 7).k == 5 and Board(2, 9).k == 2
    assert Board(1, 1).play(0).winner == "X"
    assert Board(26, 26).legal_moves == tuple(range(676))
    assert Board(2, 5, 5).k == 5  # k may exceed the short side


# --------------------------------------------------------------------------------------
# Immutability, equality, hashing, canonical
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name",
                         ["x", "o", "ply", "turn", "winner", "k", "rows", "key", "geometry", "anything"])
def test_boards_are_immutable(name: str) -> None:
    board = Board().play(4)
    with pytest.raises(AttributeError):
        setattr(board, name, 1)
    assert str(board) == ".../.X./..."


def test_play_leaves_the_original_alone() -> None:
    board = Board()
    after = board.play("b2")
    assert board == Board() and board.ply == 0 and board[4] is None and after[4] == "X"


def test_equality_and_hashing() -> None:
    a = Board().play("a1").play("b2").play("c3")
    b = Board().play("c3").play("b2").play("a1")
    assert a == b and hash(a) == hash(b)
    assert len({a: 1, b: 2}) == 1
    assert a == Board.parse("X../.O./..X") == Board.from_bits(0b100000001, 0b000010000)
    assert Board() == Board(3, 3, 3) and hash(Board()) == hash(Board(3, 3, 3))
    assert Board(3, 3, 3) != Board(3, 3, 2)
    assert Board(3, 4) != Board(4, 3)
    assert Board() != ".../.../..." and Board() != 0
    assert a != a.play("a2")
    assert len({Board(), Board(3, 3, 2), Board(3, 4), Board(4, 3), a, b}) == 5


BOARDS_TO_COPY = [
    Board(), Board().play(4), Board.parse("XXX/OO./..."), Board(4, 4).play(0).play(15), Board(1, 5, 2),
    Board(15, 15, 5).play(7).play(112).play(224), Board(26, 26, 2).play(675),
]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("board", BOARDS_TO_COPY, ids=str)
def test_pickled_boards_are_equal_hash_equal_and_share_the_geometry(board: Board, protocol: int) -> None:
    back = pickle.loads(pickle.dumps(board, protocol=protocol))
    assert back == board and hash(back) == hash(board)
    assert back.geometry is Geometry.get(board.rows, board.cols, board.k)  # the cached one, not a copy
    assert pickle.loads(pickle.dumps(board.geometry, protocol=protocol)) is back.geometry
    assert (back.winner, back.winning_line, back.turn, back.ply) == (
        board.winner, board.winning_line, board.turn, board.ply)


@pytest.mark.parametrize("board", BOARDS_TO_COPY, ids=str)
def test_copies_of_a_board_are_the_board(board: Board) -> None:
    assert copy.copy(board) is board
    assert copy.deepcopy(board) is board
    assert copy.deepcopy([board, board]) == [board, board]
    assert copy.copy(board.geometry) is copy.deepcopy(board.geometry) is board.geometry


def test_a_pickled_big_board_holds_only_its_shape_and_marks() -> None:
    board = Board(15, 15, 5).play(7).play(112)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert len(pickle.dumps(board, protocol=protocol)) < 300
    assert len(pickle.dumps(Board(26, 26, 2))) < 300


def test_an_edited_pickle_is_checked_like_any_position() -> None:
    restore, _ = Board().__reduce__()

    class Forged:  # what an edited pickle would hold: X has three marks, O none
        def __reduce__(self) -> tuple[object, tuple[int, ...]]:
            return restore, (3, 3, 3, 0b111, 0)

    with pytest.raises(ImpossiblePositionError, match="X has 3 marks and O has 0"):
        pickle.loads(pickle.dumps(Forged()))


def test_boards_stay_equal_when_their_shape_left_the_geometry_cache() -> None:
    board = Board(7, 5, 4).play(3)
    for rows in range(1, GEOMETRY_CACHE_SHAPES + 3):  # push 7×5 out of the cache
        Geometry.get(rows, 26, 2)
    again = Board(7, 5, 4).play(3)
    assert again.geometry is not board.geometry
    assert again == board and hash(again) == hash(board) and again.geometry == board.geometry
    assert len({board, again}) == 1


def test_the_geometry_cache_is_bounded_and_keeps_3x3() -> None:
    classic = Geometry.get(3, 3, 3)
    for rows in range(1, 27):
        for k in (1, 2):
            assert Board(rows, 26, k).play(0).geometry is Geometry.get(rows, 26, k)
    assert len(Geometry._cache) <= GEOMETRY_CACHE_SHAPES
    assert Board().geometry is classic is Geometry.get(3, 3)


def test_the_legal_move_cache_of_a_big_board_is_bounded() -> None:
    geometry = Geometry.get(26, 26, 5)
    board = Board(26, 26, 5)
    for cell in range(676):  # a cached tuple per position asked about, each 5 KB
        for other in (0, 1, 2):
            geometry.moves(1 << cell | 1 << other)
    assert len(geometry._moves_cache) * geometry.size <= MOVES_CACHE_CELLS
    assert board.play(0).legal_moves == tuple(range(1, 676))


def test_repr_evaluates_back() -> None:
    for board in (Board().play(4), Board(5, 5, 3).play(7), Board(4, 6).play(0).play(23)):
        assert eval(repr(board), {"Board": Board}) == board


def test_canonical_on_a_rectangle() -> None:
    board = Board.parse(".../.../..X/.../.O.", k=3)
    images = board.symmetries()
    assert len(images) == 4
    assert board.canonical() in images
    assert {image.canonical() for image in images} == {board.canonical()}
    assert board.canonical().key == min(image.key for image in images)


# --------------------------------------------------------------------------------------
# Hypothesis round trips
# --------------------------------------------------------------------------------------

@st.composite
def geometries(draw: st.DrawFn, max_side: int = 8) -> tuple[int, int, int]:
    rows = draw(st.integers(1, max_side))
    cols = draw(st.integers(1, max_side))
    return rows, cols, draw(st.integers(1, max(rows, cols)))


@st.composite
def reachable_boards(draw: st.DrawFn, max_side: int = 8) -> Board:
    rows, cols, k = draw(geometries(max_side))
    board = Board(rows, cols, k)
    for _ in range(draw(st.integers(0, rows * cols))):
        if board.is_over:
            break
        board = board.play(draw(st.sampled_from(board.legal_moves)))
    return board


@settings(max_examples=300, deadline=None)
@given(reachable_boards())
def test_position_text_round_trip(board: Board) -> None:
    text = str(board)
    assert Board.parse(text, board.k) == board
    assert Board.parse(text.lower(), board.k) == board
    assert Board.parse(f"  {text}\n", board.k) == board
    assert Board.from_bits(board.x, board.o, board.rows, board.cols, board.k) == board


@settings(max_examples=150, deadline=None)
@given(reachable_boards())
def test_random_positions_match_brute_force(board: Board) -> None:
    check_against_brute(board, flat(board), board.rows, board.cols, board.k)
    for image in board.symmetries():
        assert image.winner == board.winner and image.ply == board.ply


@pytest.mark.parametrize("cols", [1, 2, 5, 9, 26])
def test_one_row_boards_round_trip_through_text(cols: int) -> None:
    board = Board(1, cols, 1 if cols == 1 else 2).play(cols // 2)
    assert Board.parse(str(board), board.k) == board


@settings(max_examples=100, deadline=None)
@given(geometries(26), st.data())
def test_cell_round_trip(geometry: tuple[int, int, int], data: st.DataObject) -> None:
    rows, cols, k = geometry
    board = Board(rows, cols, k)
    cell = data.draw(st.integers(0, rows * cols - 1))
    name = board.cell_name(cell)
    assert board.parse_cell(name) == cell
    assert board.parse_cell(f" {name.upper()} ") == cell
    assert board.parse_cell(str(cell + 1)) == cell
    assert board.play(name) == board.play(cell)
