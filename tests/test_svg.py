"""noughts.svg and `noughts picture`: valid, complete pictures of every position, and clean errors."""

from __future__ import annotations

import random
import struct
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from noughts import Board, Game, NoughtsError, svg
from noughts.cli import main
from noughts.svg import CELL, Arrow

NS = {"svg": "http://www.w3.org/2000/svg"}


@pytest.fixture(scope="module")
def every_3x3_position() -> list[Board]:
    seen: set[Board] = set()
    stack = [Board()]
    while stack:
        board = stack.pop()
        if board not in seen:
            seen.add(board)
            if not board.is_over:
                stack.extend(board.play(c) for c in board.legal_moves)
    return sorted(seen, key=lambda b: (b.ply, b.key))


def parse(picture: str) -> ET.Element:
    root = ET.fromstring(picture)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


def of_class(root: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in root.iter() if e.get("class") == name]


def cell_centre(root: ET.Element, cell_rect: ET.Element) -> tuple[float, float]:
    return float(cell_rect.get("x", 0)) + CELL / 2, float(cell_rect.get("y", 0)) + CELL / 2


def test_every_3x3_position_is_valid_svg_with_its_marks_and_winning_line(every_3x3_position: list[Board]) -> None:
    assert len(every_3x3_position) == 5478
    for board in every_3x3_position:
        root = parse(svg.board(board))
        drawn = Counter(e.get("class") for e in root)
        assert (drawn["mark x"], drawn["mark o"]) == (board.x.bit_count(), board.o.bit_count())
        assert drawn["winning-line"] == (board.winner is not None)
        assert root[0].text.startswith(str(board))


def test_marks_sit_in_their_cells_and_the_line_runs_through_the_winners_cells() -> None:
    board = Board.parse("..X../.X.../X..O./.O.../.....", k=3)  # 5×5, k 3: X's anti-diagonal c1-a3
    root = parse(svg.board(board, coordinates=False))
    board_rect = of_class(root, "board")[0]
    left, top = float(board_rect.get("x")), float(board_rect.get("y"))

    def centre_of(cell: int) -> tuple[float, float]:
        row, col = divmod(cell, board.cols)
        return left + (col + 0.5) * CELL, top + (row + 0.5) * CELL

    circles = sorted((float(c.get("cx")), float(c.get("cy"))) for g in of_class(root, "mark o") for c in g)
    assert circles == sorted(centre_of(c) for c in range(board.size) if board[c] == "O")
    line = of_class(root, "winning-line")[0].get("d")
    start, end = (tuple(float(v) for v in part.split()) for part in line[1:].split("L"))
    first, last = centre_of(board.winning_line[0]), centre_of(board.winning_line[-1])
    # the stroke runs from beyond one end cell's centre to beyond the other's, along the line
    for point in (start, end):
        cross = (last[0] - first[0]) * (point[1] - first[1]) - (last[1] - first[1]) * (point[0] - first[0])
        assert abs(cross) < 1e-6 * CELL * CELL
    along = (last[0] - first[0], last[1] - first[1])
    assert (start[0] - first[0]) * along[0] + (start[1] - first[1]) * along[1] < 0
    assert (end[0] - last[0]) * along[0] + (end[1] - last[1]) * along[1] > 0


def test_every_shape_from_1x1_to_26x26_draws_with_all_its_coordinates() -> None:
    rng = random.Random(5)
    sides = (1, 2, 3, 4, 7, 10, 15, 26)
    for rows in sides:
        for cols in sides:
            board = Board(rows, cols).playout(rng)
            root = parse(svg.board(board, last_move=rng.randrange(board.size)))
            glyphs = len(list(of_class(root, "coordinates")[0]))
            assert glyphs == cols + sum(len(str(r)) for r in range(1, rows + 1))
            width, height = int(root.get("width")), int(root.get("height"))
            wide, high = cols * CELL + svg.MARGIN + svg.BORDER, rows * CELL + svg.MARGIN + svg.BORDER
            assert width == round(wide * min(64, 640 / cols) / CELL)
            assert abs(height / width - high / wide) < 0.01
            assert len(of_class(root, "last-move")) == 1


def test_the_last_move_hint_arrows_fill_and_flip_are_drawn_where_asked() -> None:
    board = Board.parse("X../.O./...")
    root = parse(svg.board(board, last_move="b2", hint="c3", arrows=[Arrow("a1", "c1"), "a3", ("b3", "b1")],
                           fill={0: "#ff000080"}, coordinates=False, size=300))
    assert root.get("width") == "300"
    last = of_class(root, "last-move")[0]
    assert cell_centre(root, last) == (svg.BORDER + 1.5 * CELL, svg.BORDER + 1.5 * CELL)
    hint = of_class(root, "hint")[0]
    assert (float(hint.get("cx")), float(hint.get("cy"))) == (svg.BORDER + 2.5 * CELL, svg.BORDER + 2.5 * CELL)
    assert len(of_class(root, "hint-mark")) == 1  # X's mark, faint, for X to move
    assert of_class(root, "hint-mark")[0].get("stroke") == svg.COLOURS["x"]
    arrows = of_class(root, "arrow")
    assert [a.tag.split("}")[1] for a in arrows] == ["g", "circle", "g"]  # a single cell is a ring
    filled = of_class(root, "fill")[0]
    assert (filled.get("fill"), filled.get("fill-opacity")) == ("#ff0000", "0.5")
    flipped = parse(svg.board(board, last_move="a1", flipped=True, coordinates=False))
    assert cell_centre(flipped, of_class(flipped, "last-move")[0]) == (svg.BORDER + 2.5 * CELL,
                                                                        svg.BORDER + 2.5 * CELL)


def test_a_game_shows_its_last_move_and_notebooks_draw_boards_and_games() -> None:
    game = Game.replay(["b2", "a1", "c3"])
    root = parse(game._repr_svg_())
    assert cell_centre(root, of_class(root, "last-move")[0]) == (svg.MARGIN + 2.5 * CELL, svg.MARGIN + 2.5 * CELL)
    assert of_class(parse(game.board._repr_svg_()), "last-move") == []  # a board does not know its last move
    assert of_class(parse(svg.board(Game())), "last-move") == []
    assert svg.board(game.board)._repr_svg_() == svg.board(game.board)
    dark = parse(svg.board(game, theme="dark"))
    assert of_class(dark, "background")[0].get("fill") == svg.THEMES["dark"]["background"]


def test_text_and_colours_are_escaped_into_valid_xml() -> None:
    hostile = 'a<b>&"\'\x00\x01\ud800]]></title><script>'
    picture = svg.board(Board(), title=hostile, colours={"x": 'red" onload="x'}, fill={"a1": "<blue>"})
    root = parse(picture)
    assert root.findtext("svg:title", namespaces=NS) == 'a<b>&"\'\ufffd\ufffd\ufffd]]></title><script>'
    assert "<script>" not in picture and "onload=\"x" not in picture
    assert [e.tag for e in root.iter() if e.tag.endswith("script")] == []


@pytest.mark.parametrize(("options", "message"), [
    ({"last_move": "d1"}, "off the board"),
    ({"hint": 9}, "off the 3×3 board"),
    ({"arrows": [("a1", 3.5)]}, "not 3.5"),
    ({"size": 0}, "size"),
    ({"size": True}, "size"),
    ({"theme": "neon"}, "no picture theme"),
    ({"colours": {"xx": "red"}}, "no colour named"),
    ({"colours": {"x": ""}}, "colour of 'x'"),
    ({"winning_line": ["a1", "z1"]}, "z1"),
])
def test_bad_options_raise_noughts_errors(options: dict[str, object], message: str) -> None:
    with pytest.raises(NoughtsError, match=message):
        svg.board(Board(), **options)  # type: ignore[arg-type]
    with pytest.raises(NoughtsError, match="Board or a Game"):
        svg.board("X.O/.X./...")  # type: ignore[arg-type]


# noughts picture ------------------------------------------------------------------------------

def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_picture_writes_svg_and_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["picture", "XXX/OO./...", "--last", "c1", "--out", str(tmp_path / "won.svg")]) == 0
    root = parse((tmp_path / "won.svg").read_text(encoding="utf-8"))
    assert len(of_class(root, "winning-line")) == 1 and len(of_class(root, "last-move")) == 1
    assert main(["picture", "--rows", "7", "--cols", "9", "--k", "5", "--size", "450", "--move", "e4",
                 "--out", str(tmp_path / "big.PNG")]) == 0
    assert png_size((tmp_path / "big.PNG").read_bytes()) == (450, round(450 * (700 + 60) / (900 + 60)))
    assert main(["picture", "X.O/.X./...", "--no-coordinates", "--theme", "dark"]) == 0
    out = capsys.readouterr().out
    assert of_class(parse(out), "coordinates") == []


@pytest.mark.parametrize(("arguments", "message"), [
    (["X.O/.X./...", "--out", "{tmp}/missing/x.svg"], "cannot write"),
    (["X.O/.X./...", "--out", "{tmp}"], "ends in .svg or .png"),
    (["X.O/.X./...", "--out", "{tmp}/x.gif"], "ends in .svg or .png"),
    (["X.O/.X./...", "--out", "{tmp}/dir.svg"], "cannot write"),
    (["XXX/OOO/...", "--out", "{tmp}/x.svg"], "both have 3 in a row"),
    (["X.O/.X./...", "--move", "q7"], "q7 is off the board"),
    (["--rows", "27"], "1 to 26 rows"),
])
def test_picture_errors_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                arguments: list[str], message: str) -> None:
    (tmp_path / "dir.svg").mkdir()
    assert main(["picture", *(a.replace("{tmp}", str(tmp_path)) for a in arguments)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("noughts: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.svg"]  # nothing half-written


def test_picture_usage_errors_are_argparse_lines(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["picture", "X.O/.X./...", "--size", "big"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.startswith("noughts: argument --size: invalid int value: 'big'")


def test_png_without_its_dependency_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "resvg_py", None)  # as if not installed: importing it fails
    assert main(["picture", "X.O/.X./...", "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "pip install 'noughts[picture]'" in err and err.count("\n") == 1
    assert not (tmp_path / "x.png").exists()
