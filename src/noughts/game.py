"""A game: a start position, the moves played since, undo/redo, and listeners.

Front ends never poll the board: they register a listener (MD_TTT's callback idea) and are
told about every move, undo, redo and the end of the game, with the winning line.

>>> game = Game()
>>> seen = []
>>> _ = game.add_listener(lambda event: seen.append((event.kind, event.cell, event.mark)))
>>> for cell in "a1 b1 a2 b2 a3".split():
...     _ = game.play(cell)
>>> game.result, game.board.winning_line
('X', (0, 3, 6))
>>> seen[-2:]
[('move', 6, 'X'), ('end', 6, 'X')]
>>> game.to_text()
'a1 b1 a2 b2 a3'
>>> Game.from_json(game.to_json()).moves == game.moves
True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from noughts.board import Board
from noughts.errors import GameRecordError, IllegalMoveError, NoughtsError

__all__ = ["Game", "GameEvent", "Listener"]

RECORD_FORMAT = "noughts-game"
RECORD_VERSION = 1
MAX_RECORD_CHARS = 100_000


@dataclass(frozen=True)
class GameEvent:
    """What changed. ``board`` is the position after the change.

    ``kind`` is ``move`` (``cell`` was played by ``mark``), ``undo`` (``cell``, played by
    ``mark``, was taken back), ``redo`` (like ``move``, replayed) or ``end`` (sent after the
    move that ends the game; ``winner`` and ``line`` are ``None`` for a draw).
    """

    kind: Literal["move", "undo", "redo", "end"]
    board: Board
    cell: int | None = None
    mark: str | None = None
    winner: str | None = None
    line: tuple[int, ...] | None = None


Listener = Callable[[GameEvent], object]


class Chooser(Protocol):
    def choose(self, board: Board) -> int: ...


class Game:
    """A sequence of moves from a start position (by default the empty 3×3 board)."""

    def __init__(self, start: Board | None = None, *, x_name: str | None = None,
                 o_name: str | None = None) -> None:
        self.start = start if start is not None else Board()
        self.x_name = x_name
        self.o_name = o_name
        self._positions = [self.start]
        self._moves: list[int] = []
        self._redo: list[int] = []
        self._listeners: list[Listener] = []

    # state ----------------------------------------------------------------------------
    @property
    def board(self) -> Board:
        """The current position."""
        return self._positions[-1]

    @property
    def moves(self) -> tuple[int, ...]:
        """The cells played since the start, in order."""
        return tuple(self._moves)

    @property
    def positions(self) -> tuple[Board, ...]:
        """The start position and the position after each move."""
        return tuple(self._positions)

    @property
    def result(self) -> str | None:
        """``'X'`` or ``'O'`` for a win, ``'draw'``, or ``None`` while the game goes on: the word of
        ``game.board.result`` (:class:`~noughts.board.Result`), as records and the store keep it."""
        result = self._positions[-1].result
        return result.word if result is not None else None

    @property
    def can_undo(self) -> bool:
        return bool(self._moves)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    # copies ---------------------------------------------------------------------------
    # A copy (copy.copy, copy.deepcopy, pickle) is an independent game with the same moves,
    # undone moves and names. Listeners are not copied: they belong to whoever watches the
    # original (a window, a socket), and a pickle could not hold them anyway.
    def __getstate__(self) -> dict[str, Any]:
        return {"start": self.start, "x_name": self.x_name, "o_name": self.o_name,
                "positions": list(self._positions), "moves": list(self._moves), "redo": list(self._redo)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.start, self.x_name, self.o_name = state["start"], state["x_name"], state["o_name"]
        self._positions = list(state["positions"])
        self._moves = list(state["moves"])
        self._redo = list(state["redo"])
        self._listeners = []

    # listeners ------------------------------------------------------------------------
    def add_listener(self, listener: Listener) -> Listener:
        """Call ``listener(event)`` on every change; returns it so it can be removed later."""
        self._listeners.append(listener)
        return listener

    def remove_listener(self, listener: Listener) -> None:
        self._listeners.remove(listener)

    def _tell(self, event: GameEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    # moves ----------------------------------------------------------------------------
    def play(self, cell: int | str) -> Board:
        """Play ``cell`` (index or name) for the side to move; the redo list is cleared."""
        return self._advance(cell, "move")

    def play_computer(self, player: Chooser) -> int:
        """Ask ``player`` for a move in the current position, play it and return the cell."""
        cell = player.choose(self.board)
        self.play(cell)
        return cell

    def _advance(self, cell: int | str, kind: Literal["move", "redo"]) -> Board:
        before = self._positions[-1]
        board = before.play(cell)
        index = cell if isinstance(cell, int) else before.parse_cell(cell)
        self._positions.append(board)
        self._moves.append(index)
        if kind == "move":  # a new move abandons the undone line, even if a listener fails below
            self._redo.clear()
        if self._listeners:  # nobody to tell: no events to make
            mark = before.turn
            self._tell(GameEvent(kind, board, index, mark))
            if board.is_over:
                self._tell(GameEvent("end", board, index, mark, board.winner, board.winning_line))
        return board

    def undo(self, count: int = 1) -> tuple[int, ...]:
        """Take back the last ``count`` moves (they can be redone); returns their cells."""
        if type(count) is not int or count < 1:
            raise IllegalMoveError(f"undo takes a number of moves of at least 1, not {count!r:.20}")
        if count > len(self._moves):
            raise IllegalMoveError(
                "there is no move to undo" if not self._moves
                else f"only {len(self._moves)} move(s) can be undone, not {count}")
        undone = []
        for _ in range(count):
            cell = self._moves.pop()
            mark = self._positions.pop()[cell]
            self._redo.append(cell)
            undone.append(cell)
            self._tell(GameEvent("undo", self.board, cell, mark))
        return tuple(undone)

    def redo(self) -> Board:
        """Play again the move most recently undone."""
        if not self._redo:
            raise IllegalMoveError("there is no undone move to redo")
        return self._advance(self._redo.pop(), "redo")

    def _repr_svg_(self) -> str:
        """The current position with the last move marked, for notebooks (see :mod:`noughts.svg`)."""
        from noughts import svg

        return svg.board(self)

    # records --------------------------------------------------------------------------
    def to_text(self) -> str:
        """The moves as cell names, ``b2 a1 c3``; a header names a non-default start.

        >>> game = Game(Board(4, 4)); _ = game.play("d4"); game.to_text()
        'size=4x4 k=4: d4'
        """
        start = self.start
        header = []
        if (start.rows, start.cols) != (3, 3) or start.k != 3:
            header.append(f"size={start.rows}x{start.cols} k={start.k}")
        if start.ply:
            header.append(f"start={start}")
        moves = " ".join(start.cell_name(c) for c in self._moves)
        return f"{' '.join(header)}: {moves}".rstrip() if header else moves

    @classmethod
    def from_text(cls, text: str) -> Game:
        """Read :meth:`to_text`'s form; cells may also be numbers (``5 1 9``)."""
        if not isinstance(text, str):
            raise GameRecordError(f"a game record is text, not {type(text).__name__}")
        if len(text) > MAX_RECORD_CHARS:
            raise GameRecordError(f"a game record of {len(text)} characters is too long")
        header, _, moves = text.rpartition(":")
        fields: dict[str, str] = {}
        for item in header.split():
            name, equals, value = item.partition("=")
            if not equals or name not in ("size", "k", "start") or name in fields:
                raise GameRecordError(
                    f"cannot read {item[:40]!r} in the record header: expected size=RxC, k=N or start=POSITION")
            fields[name] = value
        try:
            rows_text, _, cols_text = fields.get("size", "3x3").lower().partition("x")
            start = _start_board(_whole_number(rows_text, "rows"), _whole_number(cols_text, "columns"),
                                 _whole_number(fields.get("k"), "k"), fields.get("start"))
            game = cls(start)
            for cell in moves.split():
                game.play(cell)
        except GameRecordError:
            raise
        except NoughtsError as error:
            raise GameRecordError(f"bad game record: {error}") from None
        return game

    def to_dict(self) -> dict[str, Any]:
        start = self.start
        record: dict[str, Any] = {
            "format": RECORD_FORMAT, "version": RECORD_VERSION,
            "rows": start.rows, "cols": start.cols, "k": start.k,
            "moves": [start.cell_name(c) for c in self._moves], "result": self.result,
        }
        if start.ply:
            record["start"] = str(start)
        if self.x_name is not None:
            record["x"] = self.x_name
        if self.o_name is not None:
            record["o"] = self.o_name
        return record

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, record: object) -> Game:
        if not isinstance(record, dict):
            raise GameRecordError("a game record is a JSON object")
        if record.get("format", RECORD_FORMAT) != RECORD_FORMAT:
            raise GameRecordError(f"not a noughts game record (format {record.get('format')!r})")
        version = record.get("version", RECORD_VERSION)
        if type(version) is not int or version > RECORD_VERSION:
            raise GameRecordError(f"game record version {version!r} is newer than this noughts understands")
        moves = record.get("moves", [])
        if not isinstance(moves, list) or not all(isinstance(m, str | int) for m in moves):
            raise GameRecordError("'moves' must be a list of cells such as \"b2\" or 4")
        names = {key: record.get(key) for key in ("x", "o")}
        if any(v is not None and not isinstance(v, str) for v in names.values()):
            raise GameRecordError("player names 'x' and 'o' must be text")
        try:
            start = _start_board(record.get("rows"), record.get("cols"), record.get("k"), record.get("start"))
            game = cls(start, x_name=names["x"], o_name=names["o"])
            for cell in moves:
                game.play(cell if type(cell) is not bool else str(cell))
        except GameRecordError:
            raise
        except NoughtsError as error:
            raise GameRecordError(f"bad game record: {error}") from None
        result = record.get("result", game.result)
        if result != game.result:
            raise GameRecordError(f"the record says the result is {result!r} but its moves give {game.result!r}")
        return game

    @classmethod
    def from_json(cls, text: str | bytes) -> Game:
        if not isinstance(text, str | bytes | bytearray):
            raise GameRecordError(f"a game record is JSON text, not {type(text).__name__}")
        if len(text) > MAX_RECORD_CHARS:
            raise GameRecordError(f"a game record of {len(text)} characters is too long")
        try:
            record = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise GameRecordError(f"a game record must be valid JSON: {error}") from None
        return cls.from_dict(record)

    @classmethod
    def replay(cls, moves: Iterable[int | str], start: Board | None = None) -> Game:
        """A game with ``moves`` played from ``start``."""
        game = cls(start)
        for cell in moves:
            game.play(cell)
        return game


def _start_board(rows: object, cols: object, k: object, start: object) -> Board:
    """The start position named by a record's rows / cols / k / start fields."""
    for name, value in (("rows", rows), ("cols", cols), ("k", k)):
        if value is not None and type(value) is not int:
            raise GameRecordError(f"{name} must be a whole number, not {str(value)[:20]!r}")
    if start is None:
        return Board(rows if rows is not None else 3, cols if cols is not None else 3, k)  # type: ignore[arg-type]
    if not isinstance(start, str):
        raise GameRecordError("the start position must be text like X.O/.X./..O")
    board = Board.parse(start, k=k)  # type: ignore[arg-type]
    if (rows is not None and rows != board.rows) or (cols is not None and cols != board.cols):
        said = (f"{rows}×{cols}" if rows is not None and cols is not None
                else f"{rows} rows" if rows is not None else f"{cols} columns")
        raise GameRecordError(f"the start position is {board.rows}×{board.cols}, but the record says {said}")
    return board


def _whole_number(text: str | None, name: str) -> int | None:
    if text is None:
        return None
    if not (text.isascii() and text.isdigit() and len(text) <= 3):
        raise GameRecordError(f"{name} must be a whole number, not {text[:20]!r}")
    return int(text)
