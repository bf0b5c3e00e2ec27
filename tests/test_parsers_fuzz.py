"""Garbage in, NoughtsError out: every reader either succeeds or raises a NoughtsError.

Any other exception (TypeError, KeyError, RecursionError, UnicodeError, ...) is a bug: a
person or a program fed noughts bad input and got a crash instead of an explanation.
"""

from __future__ import annotations

import encodings.aliases
import json
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noughts import Board, NoughtsError
from noughts.game import Game

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def survive(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call function; a NoughtsError is a fine answer, any other exception fails the test."""
    try:
        return function(*args, **kwargs)
    except NoughtsError as error:
        assert str(error), "a NoughtsError needs a message for the person"
        return None


# --------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------

big_ints = st.integers(min_value=-(1 << 70), max_value=1 << 70)
surrogate_text = st.binary(max_size=200).map(lambda b: b.decode("utf-8", errors="surrogateescape"))
position_like = st.text(alphabet="XOxo.-_/ \n\t0K", max_size=120)
cell_like = st.text(alphabet="abcxyzABZ0123456789 -+.٣²\u212a\x00", max_size=8)
garbage_text = st.one_of(st.text(max_size=200), surrogate_text, position_like)

weird = st.one_of(
    st.none(), st.booleans(), st.floats(), st.complex_numbers(), st.binary(max_size=8),
    st.integers(min_value=-(10**30), max_value=10**30), st.lists(st.integers(0, 9), max_size=3),
    st.tuples(st.integers(0, 9)), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.fractions(), st.decimals(allow_nan=False), st.sets(st.integers(0, 3), max_size=2),
    st.just(object()), st.just(Fraction(4, 1)), st.just(Decimal(4)), st.text(max_size=6),
)

json_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20), cell_like, position_like,
)
json_values = st.recursive(
    json_leaves,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=25,
)
cells_in_records = st.one_of(cell_like, st.integers(-20, 80), st.sampled_from(["a1", "b2", "c3", "5", "9"]))
records = st.fixed_dictionaries({}, optional={
    "format": st.one_of(st.just("noughts-game"), json_values),
    "version": st.one_of(st.integers(-2, 3), json_values),
    "rows": st.one_of(st.integers(-2, 30), json_values),
    "cols": st.one_of(st.integers(-2, 30), json_values),
    "k": st.one_of(st.integers(-2, 30), json_values),
    "moves": st.one_of(st.lists(cells_in_records, max_size=12), json_values),
    "result": st.one_of(st.sampled_from(["X", "O", "draw", None]), json_values),
    "start": st.one_of(position_like, st.sampled_from(["X../.../...", "X.O/.X./..O", "XO"]), json_values),
    "x": st.one_of(st.text(max_size=5), json_values),
    "o": st.one_of(st.text(max_size=5), json_values),
})


@st.composite
def boards(draw: st.DrawFn) -> Board:
    rows, cols = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    board = Board(rows, cols, draw(st.integers(1, max(rows, cols))))
    for _ in range(draw(st.integers(0, rows * cols))):
        if board.is_over:
            break
        board = board.play(draw(st.sampled_from(board.legal_moves)))
    return board


# --------------------------------------------------------------------------------------
# Positions
# --------------------------------------------------------------------------------------

@FUZZ
@given(garbage_text, st.none() | st.integers(-3, 30))
def test_parse_garbage_text(text: str, k: int | None) -> None:
    board = survive(Board.parse, text, k)
    if board is not None:
        assert isinstance(board, Board)
        marks = "".join(ch for ch in text.strip().upper() if ch in "XO")
        assert board.ply == len(marks) == board.x.bit_count() + board.o.bit_count()


@settings(FUZZ, max_examples=40)
@given(st.text(alphabet="XO./", min_size=600, max_size=3000))
def test_parse_long_text(text: str) -> None:
    survive(Board.parse, text)


@pytest.mark.parametrize("text", [
    "." * 1_000_000, "/" * 100_000, ("." * 26 + "/") * 26, "/".join(["." * 26] * 26), "X" * 766, "\x00" * 9,
    "\udcff" * 9, "x" * 9, "..." + "\u200b" + "/.../...",
])
def test_parse_extreme_text(text: str) -> None:
    survive(Board.parse, text)


@FUZZ
@given(st.sampled_from(["X../.../...", ".", "..../....", "X.O.X...O"]), weird)
def test_parse_with_weird_k(text: str, k: object) -> None:
    survive(Board.parse, text, k)


@FUZZ
@given(weird)
def test_parse_of_things_that_are_not_text(value: object) -> None:
    survive(Board.parse, value)


@FUZZ
@given(big_ints, big_ints, st.integers(1, 5), st.integers(1, 5))
def test_from_bits_with_any_integers(x: int, o: int, rows: int, cols: int) -> None:
    survive(Board.from_bits, x, o, rows, cols, None)
    full = (1 << rows * cols) - 1
    survive(Board.from_bits, x & full, o & ~x & full, rows, cols, None)


@FUZZ
@given(weird, weird, st.none() | weird)
def test_board_constructor_with_weird_geometry(rows: object, cols: object, k: object) -> None:
    board = survive(Board, rows, cols, k)
    if board is not None:  # only real whole numbers make a board
        assert type(rows) is int and type(cols) is int and (k is None or type(k) is int)


# --------------------------------------------------------------------------------------
# Cells and moves
# --------------------------------------------------------------------------------------

@FUZZ
@given(boards(), st.one_of(garbage_text, cell_like, st.text(max_size=5000)))
def test_parse_cell_garbage(board: Board, text: str) -> None:
    cell = survive(board.parse_cell, text)
    if cell is not None:
        assert type(cell) is int and 0 <= cell < board.size
        assert text.strip().isascii()


@FUZZ
@given(boards(), weird)
def test_parse_cell_weird_objects(board: Board, value: object) -> None:
    cell = survive(board.parse_cell, value)
    assert cell is None or isinstance(value, str)


@FUZZ
@given(boards(), st.one_of(weird, garbage_text, cell_like))
def test_play_weird_objects(board: Board, value: object) -> None:
    after = survive(board.play, value)
    if after is not None:
        assert after.ply == board.ply + 1
        assert type(value) is int or isinstance(value, str)


# --------------------------------------------------------------------------------------
# Game records
# --------------------------------------------------------------------------------------

header_like = st.text(alphabet="sizek=tar x0123456789:/.XOabc-", max_size=80)


@FUZZ
@given(st.one_of(garbage_text, header_like, st.text(max_size=3000)))
def test_text_record_garbage(text: str) -> None:
    game = survive(Game.from_text, text)
    if game is not None:
        assert Game.from_text(game.to_text()).moves == game.moves


@FUZZ
@given(st.one_of(garbage_text, st.binary(max_size=300), st.binary(max_size=300).map(bytearray)))
def test_json_record_garbage_text(text: str | bytes) -> None:
    survive(Game.from_json, text)


@FUZZ
@given(json_values)
def test_json_record_any_json_value(value: object) -> None:
    survive(Game.from_json, json.dumps(value))
    survive(Game.from_dict, value)


@settings(FUZZ, max_examples=120)
@given(records)
def test_json_record_shaped_garbage(record: dict[str, Any]) -> None:
    game = survive(Game.from_json, json.dumps(record))
    same = survive(Game.from_dict, record)
    assert (game is None) == (same is None)
    if game is not None:
        assert Game.from_json(game.to_json()).moves == game.moves


@pytest.mark.parametrize("depth", [10, 500, 900, 990, 1000, 1100, 5000, 49_000])
@pytest.mark.parametrize("field", ["format", "version", "rows", "moves", "result", "start", "x"])
def test_json_record_deeply_nested(depth: int, field: str) -> None:
    for opening, closing in (("[", "]"), ('{"a":', "}")):
        survive(Game.from_json, f'{{"{field}": {opening * depth}{closing * depth}}}')
    survive(Game.from_json, "[" * depth + "]" * depth)


@FUZZ
@given(weird)
def test_record_readers_given_weird_objects(value: object) -> None:
    survive(Game.from_text, value)
    survive(Game.from_json, value)
    survive(Game.from_dict, value)


@FUZZ
@given(st.lists(st.one_of(weird, cell_like), max_size=6))
def test_game_play_weird_objects(values: list[object]) -> None:
    game = Game()
    for value in values:
        before = game.moves
        if survive(game.play, value) is None:
            assert game.moves == before


# game record files: whatever charset an SGF file names ----------------------------------------------

CODEC_NAMES = sorted(set(encodings.aliases.aliases) | set(encodings.aliases.aliases.values())
                     | {"undefined", "idna", "punycode", "rot13", "hex", "utf-16", "utf-32", "mbcs", "x-nonsense", ""})


@pytest.mark.parametrize("charset", CODEC_NAMES)
def test_sgf_in_any_charset_python_names_is_records_or_a_record_error(charset: str) -> None:
    from noughts.records import read_records

    for body in (b"PB[\xe9l\xe8ve\x81\xff]", b"PB[Zo\xc3\xab]", b"PB[plain]"):
        survive(read_records, b"(;GM[4]CA[" + charset.encode() + b"]SZ[3]" + body + b";B[bb])")
