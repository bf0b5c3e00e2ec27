"""Game (noughts.game): moves, undo/redo, listeners and the text / JSON records."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noughts
from noughts import (
    Board,
    CellSyntaxError,
    GameRecordError,
    IllegalMoveError,
    NoughtsError,
)
from noughts.game import Game, GameEvent


def replay(start: Board, moves: list[int] | tuple[int, ...]) -> list[Board]:
    positions = [start]
    for cell in moves:
        positions.append(positions[-1].play(cell))
    return positions


class Recorder:
    def __init__(self) -> None:
        self.events: list[GameEvent] = []

    def __call__(self, event: GameEvent) -> None:
        self.events.append(event)

    def summary(self) -> list[tuple[Any, ...]]:
        return [(e.kind, e.cell, e.mark, e.winner, e.line) for e in self.events]


# --------------------------------------------------------------------------------------
# Playing
# --------------------------------------------------------------------------------------

def test_new_game() -> None:
    game = Game()
    assert game.board == Board() and game.start == Board()
    assert game.moves == () and game.positions == (Board(),)
    assert game.result is None and not game.can_undo and not game.can_redo
    assert game.x_name is None and game.o_name is None


def test_lazy_export_from_the_package() -> None:
    assert noughts.Game is Game and noughts.GameEvent is GameEvent
    with pytest.raises(AttributeError):
        noughts.NoSuchThing  # noqa: B018


def test_play_by_index_name_and_number() -> None:
    game = Game()
    assert game.play("b2") == Board.parse(".../.X./...")
    assert game.play(0) == Board.parse("O../.X./...")
    assert game.play("9") == Board.parse("O../.X./..X")
    assert game.play(" C1 ") == Board.parse("O.O/.X./..X")
    assert game.moves == (4, 0, 8, 2)
    assert game.positions == tuple(replay(Board(), [4, 0, 8, 2]))
    assert game.board.turn == "X" and game.can_undo


@pytest.mark.parametrize(("moves", "result"), [
    ("a1 b1 a2 b2 a3", "X"),
    ("b2 a1 c3 a3 a2 c1 c2", "X"),
    ("a2 a1 b2 b1 a3 c1", "O"),
    ("a1 b2 c3 b1 b3 a3 c1 c2 a2", "draw"),
])
def test_results(moves: str, result: str) -> None:
    game = Game()
    for i, cell in enumerate(moves.split()):
        assert game.result is None
        game.play(cell)
        assert game.board.ply == i + 1
    assert game.result == result
    assert game.board.is_over
    with pytest.raises(IllegalMoveError):
        game.play(game.board.legal_moves[0] if game.board.legal_moves else 0)


def test_illegal_moves_change_nothing() -> None:
    game = Game()
    recorder = Recorder()
    game.add_listener(recorder)
    game.play("b2")
    game.play("a1")
    game.undo()
    before = (game.board, game.moves, game.positions, game.can_redo)
    for bad, error in (("b2", IllegalMoveError), (4, IllegalMoveError), (9, IllegalMoveError),
                       (-1, IllegalMoveError), ("z9", CellSyntaxError), ("", CellSyntaxError),
                       (None, CellSyntaxError), (1.0, CellSyntaxError), (True, CellSyntaxError)):
        events = len(recorder.events)
        with pytest.raises(error):
            game.play(bad)  # type: ignore[arg-type]
        assert (game.board, game.moves, game.positions, game.can_redo) == before
        assert len(recorder.events) == events
    assert game.redo() == Board.parse("O../.X./...")


def test_game_from_a_start_position() -> None:
    start = Board.parse("X.O/.X./..O")
    game = Game(start)
    assert game.board == start and game.positions == (start,)
    game.play("c2")  # X blocks column c; O to move next
    game.play("a3")
    assert game.moves == (5, 6)
    assert game.board == Board.parse("X.O/.XX/O.O")
    game.undo(2)
    assert game.board == start
    with pytest.raises(IllegalMoveError):
        game.undo()


def test_start_position_already_over() -> None:
    game = Game(Board.parse("XXX/OO./..."))
    assert game.result == "X" and not game.can_undo
    with pytest.raises(IllegalMoveError):
        game.play("c2")


def test_replay() -> None:
    game = Game.replay(["b2", 0, "9"])
    assert game.moves == (4, 0, 8) and game.board == Board.parse("O../.X./..X")
    start = Board(4, 4, 3)
    game = Game.replay([5, "a1"], start)
    assert game.start == start and game.moves == (5, 0)


def test_play_computer() -> None:
    class FirstEmpty:
        name = "first"

        def __init__(self) -> None:
            self.seen: list[Board] = []

        def choose(self, board: Board) -> int:
            self.seen.append(board)
            return board.legal_moves[0]

    player = FirstEmpty()
    game = Game()
    game.play("a1")
    assert game.play_computer(player) == 1
    assert player.seen == [Board.parse("X../.../...")]
    assert game.moves == (0, 1) and game.board[1] == "O"

    class Cheater:
        name = "cheater"

        def choose(self, board: Board) -> int:
            return 0

    with pytest.raises(IllegalMoveError):
        game.play_computer(Cheater())
    assert game.moves == (0, 1)


# --------------------------------------------------------------------------------------
# Undo and redo
# --------------------------------------------------------------------------------------

def test_undo_and_redo() -> None:
    game = Game()
    for cell in (4, 0, 8, 2):
        game.play(cell)
    assert game.undo() == (2,)
    assert game.moves == (4, 0, 8) and game.board == replay(Board(), [4, 0, 8])[-1]
    assert game.can_redo
    assert game.undo(2) == (8, 0)
    assert game.moves == (4,) and game.board == Board.parse(".../.X./...")
    assert game.redo() == Board.parse("O../.X./...")
    assert game.redo() == Board.parse("O../.X./..X")
    assert game.redo() == Board.parse("O.O/.X./..X")
    assert not game.can_redo and game.moves == (4, 0, 8, 2)
    with pytest.raises(IllegalMoveError, match="redo"):
        game.redo()
    assert game.undo(4) == (2, 8, 0, 4)
    assert game.board == Board() and not game.can_undo
    with pytest.raises(IllegalMoveError, match="no move"):
        game.undo()


def test_undo_too_many_changes_nothing() -> None:
    game = Game.replay([4, 0])
    with pytest.raises(IllegalMoveError) as caught:
        game.undo(3)
    assert "2" in str(caught.value) and "3" in str(caught.value)
    assert game.moves == (4, 0) and not game.can_redo


def test_playing_clears_redo() -> None:
    game = Game.replay([4, 0, 8])
    game.undo(2)
    assert game.can_redo
    game.play("c3")
    assert not game.can_redo and game.moves == (4, 8)
    with pytest.raises(IllegalMoveError):
        game.redo()


def test_undo_after_the_end_and_play_on() -> None:
    game = Game.replay(["a1", "b1", "a2", "b2", "a3"])
    assert game.result == "X"
    game.undo()
    assert game.result is None and game.board.turn == "X"
    game.play("c3")
    assert game.moves == (0, 1, 3, 4, 8) and game.result is None


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["play", "play", "play", "undo", "redo", "bad"]),
                          st.integers(0, 1000)), max_size=40),
       st.sampled_from([(3, 3, 3), (4, 4, 3), (2, 5, 2), (1, 4, 2)]))
def test_undo_redo_against_a_model(ops: list[tuple[str, int]], geometry: tuple[int, int, int]) -> None:
    start = Board(*geometry)
    game = Game(start)
    recorder = Recorder()
    game.add_listener(recorder)
    moves: list[int] = []
    redo: list[int] = []
    for op, n in ops:
        board = replay(start, moves)[-1]
        before_events = len(recorder.events)
        if op == "play" and board.legal_moves:
            cell = board.legal_moves[n % len(board.legal_moves)]
            assert game.play(cell) == board.play(cell)
            moves.append(cell)
            redo.clear()
            expected = [("move", cell, board.turn)]
            if board.play(cell).is_over:
                expected.append(("end", cell, board.turn))
            assert [(e.kind, e.cell, e.mark) for e in recorder.events[before_events:]] == expected
        elif op == "undo":
            count = n % 3 + 1
            if count > len(moves):
                with pytest.raises(IllegalMoveError):
                    game.undo(count)
            else:
                undone = tuple(reversed(moves[-count:]))
                assert game.undo(count) == undone
                del moves[-count:]
                redo.extend(undone)
                events = recorder.events[before_events:]
                assert [(e.kind, e.cell) for e in events] == [("undo", c) for c in undone]
                positions = replay(start, moves + list(reversed(undone)))
                for i, e in enumerate(events):  # board after each undo, mark taken back
                    assert e.board == positions[-2 - i]
                    assert e.mark == positions[-1 - i][e.cell]
        elif op == "redo":
            if not redo:
                with pytest.raises(IllegalMoveError):
                    game.redo()
            else:
                cell = redo.pop()
                assert game.redo() == board.play(cell)
                moves.append(cell)
                assert recorder.events[before_events].kind == "redo"
                assert recorder.events[before_events].cell == cell
        else:  # "bad", or "play" once the game is over: an occupied cell or off the board
            bad = (moves[n % len(moves)] if moves and n % 2 else board.size + n)
            with pytest.raises(IllegalMoveError):
                game.play(bad)
            assert len(recorder.events) == before_events
        assert game.moves == tuple(moves)
        assert game.positions == tuple(replay(start, moves))
        assert game.board == game.positions[-1]
        assert game.can_undo == bool(moves) and game.can_redo == bool(redo)
        for event in recorder.events[before_events:]:
            if event.kind != "undo":  # move, redo and end carry the position after the change
                assert event.board == game.board


# --------------------------------------------------------------------------------------
# Listeners
# --------------------------------------------------------------------------------------

def test_listener_events_for_a_win() -> None:
    game = Game()
    recorder = Recorder()
    assert game.add_listener(recorder) is recorder
    for cell in ["a1", "b1", "a2", "b2", "a3"]:
        game.play(cell)
    assert recorder.summary() == [
        ("move", 0, "X", None, None), ("move", 1, "O", None, None), ("move", 3, "X", None, None),
        ("move", 4, "O", None, None), ("move", 6, "X", None, None), ("end", 6, "X", "X", (0, 3, 6)),
    ]
    assert [e.board for e in recorder.events] == [*replay(Board(), [0, 1, 3, 4, 6])[1:], game.board]
    recorder.events.clear()
    game.undo()
    assert recorder.summary() == [("undo", 6, "X", None, None)]
    assert recorder.events[0].board == replay(Board(), [0, 1, 3, 4])[-1]
    recorder.events.clear()
    game.redo()
    assert recorder.summary() == [("redo", 6, "X", None, None), ("end", 6, "X", "X", (0, 3, 6))]
    assert recorder.events[0].board == recorder.events[1].board == game.board


def test_listener_events_for_a_draw_and_an_o_win() -> None:
    game = Game()
    recorder = Recorder()
    game.add_listener(recorder)
    for cell in ["a1", "b2", "c3", "b1", "b3", "a3", "c1", "c2", "a2"]:
        game.play(cell)
    assert recorder.summary()[-2:] == [("move", 3, "X", None, None), ("end", 3, "X", None, None)]
    assert [e.kind for e in recorder.events].count("end") == 1
    game = Game()
    recorder = Recorder()
    game.add_listener(recorder)
    for cell in ["a2", "a1", "b2", "b1", "a3", "c1"]:
        game.play(cell)
    assert recorder.summary()[-1] == ("end", 2, "O", "O", (0, 1, 2))


def test_several_listeners_and_removal() -> None:
    game = Game()
    calls: list[tuple[str, str]] = []
    first = game.add_listener(lambda e: calls.append(("first", e.kind)))
    game.add_listener(lambda e: calls.append(("second", e.kind)))
    game.play(4)
    assert calls == [("first", "move"), ("second", "move")]
    game.remove_listener(first)
    calls.clear()
    game.play(0)
    assert calls == [("second", "move")]
    with pytest.raises(ValueError):
        game.remove_listener(first)


def test_listener_may_remove_itself_or_add_another() -> None:
    game = Game()
    calls: list[str] = []

    def once(event: GameEvent) -> None:
        calls.append("once")
        game.remove_listener(once)
        game.add_listener(lambda e: calls.append("later"))

    game.add_listener(once)
    game.play(4)
    assert calls == ["once"]
    game.play(0)
    assert calls == ["once", "later"]


def test_listener_sees_the_game_already_updated() -> None:
    game = Game()
    seen: list[tuple[tuple[int, ...], Board]] = []
    game.add_listener(lambda e: seen.append((game.moves, game.board)))
    game.play("b2")
    assert seen == [((4,), Board.parse(".../.X./..."))]


def test_a_failing_listener_does_not_leave_a_stale_redo() -> None:
    # A move that gets recorded must clear the redo list even if a listener raises,
    # otherwise redo() replays a move from a line of play that was abandoned.
    game = Game.replay([4, 0])
    game.undo()  # redo list: [0]

    def broken(event: GameEvent) -> None:
        raise RuntimeError("front end crashed")

    game.add_listener(broken)
    with pytest.raises(RuntimeError):
        game.play(8)
    game.remove_listener(broken)
    if game.moves == (4, 8):
        assert not game.can_redo
    else:
        assert game.moves == (4,) and game.board == Board.parse(".../.X./...")


# --------------------------------------------------------------------------------------
# Text records
# --------------------------------------------------------------------------------------

# copies --------------------------------------------------------------------------------

def a_game_with_history() -> Game:
    game = Game(Board(15, 15, 5), x_name="Ann", o_name="Bob")
    game.add_listener(lambda event: None)  # a lambda cannot be pickled: it must not be copied
    for cell in (112, 113, 97, 98, 82, 83):
        game.play(cell)
    game.undo(2)
    return game


def is_a_copy(copied: Game, game: Game) -> None:
    assert copied is not game
    assert copied.start == game.start and copied.board == game.board and hash(copied.board) == hash(game.board)
    assert copied.positions == game.positions and copied.moves == game.moves
    assert (copied.x_name, copied.o_name, copied.result) == (game.x_name, game.o_name, game.result)
    assert copied.redo() == game.redo()  # the undone moves came along


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_pickled_game_is_the_same_game_without_the_listeners(protocol: int) -> None:
    game = a_game_with_history()
    data = pickle.dumps(game, protocol=protocol)
    assert len(data) < 1500  # the boards hold their marks, not their geometry
    copied = pickle.loads(data)
    seen: list[str] = []
    copied.add_listener(lambda event: seen.append(event.kind))
    is_a_copy(copied, game)
    assert seen == ["redo"]


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy])
def test_a_copied_game_is_independent_of_the_original(copier: Callable[[Game], Game]) -> None:
    game = a_game_with_history()
    told: list[str] = []
    game.add_listener(lambda event: told.append(event.kind))
    copied = copier(game)
    copied.play(0)
    copied.undo()
    copied.undo()
    assert told == []  # the original's listeners hear nothing from the copy
    assert len(game.moves) == 4 and len(game.positions) == 5 and game.can_redo
    assert len(copied.moves) == 3
    is_a_copy(copier(game), game)


def test_text_record_default_board() -> None:
    game = Game.replay(["b2", "a1", "c3"])
    assert game.to_text() == "b2 a1 c3"
    assert Game().to_text() == ""
    back = Game.from_text("b2 a1 c3")
    assert back.moves == (4, 0, 8) and back.start == Board()
    assert Game.from_text("5 1 9").moves == (4, 0, 8)
    assert Game.from_text("  B2\tA1\n c3 ").moves == (4, 0, 8)
    assert Game.from_text("").moves == ()


def test_text_record_header() -> None:
    game = Game(Board(4, 4))
    game.play("d4")
    assert game.to_text() == "size=4x4 k=4: d4"
    game = Game(Board(3, 5, 3))
    assert game.to_text() == "size=3x5 k=3:"
    game = Game(Board(3, 3, 2))
    assert game.to_text() == "size=3x3 k=2:"
    game = Game(Board.parse("X../.O./..."))
    game.play("c3")
    assert game.to_text() == "start=X../.O./...: c3"
    back = Game.from_text("start=X../.O./...: c3")
    assert back.start == Board.parse("X../.O./...") and back.moves == (8,)
    back = Game.from_text("size=4x5 k=3: a1 e4")
    assert (back.start.rows, back.start.cols, back.start.k) == (4, 5, 3) and back.moves == (0, 19)
    assert Game.from_text("size=4X4: a1").start == Board(4, 4, 4)  # k defaults like Board's
    assert Game.from_text("k=2: a1 a2 b1").result == "X"


@pytest.mark.parametrize(("text", "words"), [
    ("a1 a1", ["a1", "taken"]),
    ("a1 z9", ["z9"]),
    ("a1 b1 a2 b2 a3 c3", ["over"]),
    ("0", ["0"]),
    ("colour=red: a1", ["colour=red"]),
    ("size: a1", ["size"]),
    ("size=3x3 size=3x3: a1", ["size=3x3"]),
    ("size=4: a1", ["columns"]),
    ("size=ax3: a1", ["rows"]),
    ("size=0x3:", ["rows"]),
    ("size=27x3:", ["26"]),
    ("size=3x3 k=4:", ["k"]),
    ("k=-1:", ["k"]),
    ("size=١x٣:", ["rows"]),
    ("start=XX./.../...:", ["X has 2"]),
    ("start=X../.../... size=4x4:", ["3×3", "4×4"]),
    ("a1" * 60000, ["too long"]),
])
def test_bad_text_records(text: str, words: list[str]) -> None:
    with pytest.raises(GameRecordError) as caught:
        Game.from_text(text)
    assert isinstance(caught.value, NoughtsError)
    for word in words:
        assert word in str(caught.value), (word, str(caught.value))


@pytest.mark.parametrize("value", [None, 5, b"a1", ["a1"]])
def test_text_record_that_is_not_text(value: object) -> None:
    with pytest.raises(GameRecordError, match="text"):
        Game.from_text(value)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# JSON records
# --------------------------------------------------------------------------------------

def test_json_record() -> None:
    game = Game(x_name="Ada", o_name="Bob")
    for cell in ["a1", "b1", "a2", "b2", "a3"]:
        game.play(cell)
    record = json.loads(game.to_json())
    assert record == {
        "format": "noughts-game", "version": 1, "rows": 3, "cols": 3, "k": 3,
        "moves": ["a1", "b1", "a2", "b2", "a3"], "result": "X", "x": "Ada", "o": "Bob",
    }
    assert game.to_dict() == record
    back = Game.from_json(game.to_json())
    assert (back.moves, back.x_name, back.o_name, back.result) == (game.moves, "Ada", "Bob", "X")
    assert Game.from_json(game.to_json().encode()).moves == game.moves
    started = Game(Board.parse("X../.../...", k=2))
    assert started.to_dict()["start"] == "X../.../..." and started.to_dict()["k"] == 2
    assert "start" not in Game().to_dict() and "x" not in Game().to_dict()


def test_json_record_minimal_and_lenient_fields() -> None:
    assert Game.from_json("{}").moves == ()
    assert Game.from_json('{"moves": ["b2", 0, "9"]}').moves == (4, 0, 8)
    game = Game.from_json('{"rows": 4, "cols": 5, "k": 3, "moves": ["e4"], "result": null}')
    assert (game.start.rows, game.start.cols, game.start.k, game.moves) == (4, 5, 3, (19,))
    assert Game.from_json('{"moves": ["a1", "b2", "c3", "b1", "b3", "a3", "c1", "c2", "a2"],'
                          ' "result": "draw"}').result == "draw"


@pytest.mark.parametrize(("text", "words"), [
    ("", ["JSON"]),
    ("{", ["JSON"]),
    ("[]", ["object"]),
    ('"a1 b2"', ["object"]),
    ("null", ["object"]),
    ('{"format": "chess"}', ["chess"]),
    ('{"version": 2}', ["version", "2"]),
    ('{"version": "1"}', ["version"]),
    ('{"moves": "a1 b2"}', ["moves"]),
    ('{"moves": [1.5]}', ["moves"]),
    ('{"moves": [null]}', ["moves"]),
    ('{"moves": [[0]]}', ["moves"]),
    ('{"moves": [true]}', ["True"]),
    ('{"moves": ["a1", "a1"]}', ["a1", "taken"]),
    ('{"moves": [9]}', ["9"]),
    ('{"moves": [-1]}', ["-1"]),
    ('{"moves": ["z9"]}', ["z9"]),
    ('{"x": 5}', ["names"]),
    ('{"o": ["Bob"]}', ["names"]),
    ('{"rows": "3"}', ["rows"]),
    ('{"rows": 3.0}', ["rows"]),
    ('{"cols": true}', ["cols"]),
    ('{"k": null, "rows": 0}', ["rows"]),
    ('{"k": 4}', ["k"]),
    ('{"start": 5}', ["start"]),
    ('{"start": "XX./.../..."}', ["X has 2"]),
    ('{"start": "X../.../...", "rows": 4}', ["3×3"]),
    ('{"moves": ["a1", "b1", "a2", "b2", "a3"], "result": "O"}', ["result", "'O'", "'X'"]),
    ('{"moves": ["a1"], "result": "X"}', ["result"]),
    ('{"moves": [' + "9" * 5000 + "]}", ["JSON"]),
    ("[" * 5000 + "]" * 5000, ["JSON"]),
    ('{"moves": ["' + "a" * 100_000 + '"]}', ["too long"]),
])
def test_bad_json_records(text: str, words: list[str]) -> None:
    with pytest.raises(GameRecordError) as caught:
        Game.from_json(text)
    for word in words:
        assert word in str(caught.value), (word, str(caught.value))
    if text.startswith("{") and not text.endswith("{"):
        try:
            record = json.loads(text)
        except ValueError:
            return
        with pytest.raises(GameRecordError):
            Game.from_dict(record)


@pytest.mark.parametrize("value", [None, 5, 1.5, ["a1"], {"moves": []}])
def test_json_reader_given_something_that_is_not_json_text(value: object) -> None:
    with pytest.raises(GameRecordError):
        Game.from_json(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [None, 5, "a1", ["a1"], ("a1",)])
def test_dict_reader_given_something_that_is_not_a_dict(value: object) -> None:
    with pytest.raises(GameRecordError):
        Game.from_dict(value)


# --------------------------------------------------------------------------------------
# Hypothesis round trips
# --------------------------------------------------------------------------------------

names = st.none() | st.text(max_size=12)


@st.composite
def games(draw: st.DrawFn, min_side: int = 1) -> Game:
    rows = draw(st.integers(min_side, 8))
    cols = draw(st.integers(min_side, 8))
    k = draw(st.integers(1, max(rows, cols)))
    start = Board(rows, cols, k)
    if draw(st.booleans()):
        for _ in range(draw(st.integers(0, 6))):
            if start.is_over:
                break
            start = start.play(draw(st.sampled_from(start.legal_moves)))
    game = Game(start, x_name=draw(names), o_name=draw(names))
    for _ in range(draw(st.integers(0, rows * cols))):
        if game.board.is_over:
            break
        game.play(draw(st.sampled_from(game.board.legal_moves)))
    if game.moves and draw(st.booleans()):
        game.undo(draw(st.integers(1, len(game.moves))))
    return game


def same_game(a: Game, b: Game) -> None:
    assert a.start == b.start
    assert (a.start.rows, a.start.cols, a.start.k) == (b.start.rows, b.start.cols, b.start.k)
    assert a.moves == b.moves
    assert a.positions == b.positions
    assert a.board == b.board and a.result == b.result


@settings(max_examples=200, deadline=None)
@given(games())
def test_text_record_round_trip(game: Game) -> None:
    back = Game.from_text(game.to_text())
    same_game(back, game)
    assert back.to_text() == game.to_text()


@settings(max_examples=200, deadline=None)
@given(games())
def test_json_record_round_trip(game: Game) -> None:
    back = Game.from_json(game.to_json())
    same_game(back, game)
    assert (back.x_name, back.o_name) == (game.x_name, game.o_name)
    assert back.to_dict() == game.to_dict()
    same_game(Game.from_dict(game.to_dict()), game)


@pytest.mark.parametrize("cols", [2, 5, 9])
def test_records_of_a_one_row_start_position(cols: int) -> None:
    game = Game(Board(1, cols, 2).play(0))
    same_game(Game.from_text(game.to_text()), game)
    same_game(Game.from_json(game.to_json()), game)
