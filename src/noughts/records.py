"""Game records other programs read: SGF (as Gomoku and Renju viewers read it) and a PGN-like text.

Standard library only. A :class:`GameRecord` is one game: its start position, its moves, who
played X and O (a person or a computer player), when, and the result it claims. Records come
from the score store (:meth:`GameRecord.from_stored`) or from a :class:`~noughts.game.Game`,
and are written and read in two forms, several games to a file:

- **SGF** (``FF[4] GM[4]``, the game of gomoku): ``SZ[15]``, or ``SZ[cols:rows]`` for a board
  that is not square; X is Black (``B``, moves first) and O is White (``W``); cells are SGF's
  letter pairs, column then row from the top left (``b2`` is ``bb``, ``c1`` is ``ca``); ``PB``
  and ``PW`` name the players, ``DT`` the date (UTC) and ``RE`` the result (``B+``, ``W+``, ``0``
  for a draw, none for an unfinished game). What SGF has no property for goes in private
  properties, which viewers keep and ignore: ``NK`` is k, the marks in a row (without it, 5, or
  the board's shorter side if smaller: gomoku's rule), ``NPB``/``NPW`` say ``computer`` for a
  computer player, ``NTM`` is the time of day (UTC). A start position is ``AB``/``AW``/``PL``.
- **PGN-like text**: tag pairs (``[X "Ann"]``, ``[O "hard"]``, ``[Board "3x3k3"]``, ``[Result
  "1-0"]`` …) and the moves in noughts' own names with move numbers, ``1. b2 a1 2. c3 a3 …``.

>>> from noughts import Game
>>> game = Game.replay("b2 a1 c3 a3 a2 c1 c2".split())
>>> record = GameRecord.from_game(game, x=Participant.human("Ann"), o=Participant.computer("hard"))
>>> print(to_sgf([record]), end="")  # doctest: +ELLIPSIS
(;FF[4]GM[4]CA[UTF-8]AP[noughts:...]SZ[3]NK[3]PB[Ann]PW[hard]NPW[computer]RE[B+]
;B[bb];W[aa];B[cc];W[ac];B[ab];W[ca];B[cb])
>>> print(to_pgn([record]), end="")
[Event "noughts game"]
[Site "?"]
[Date "????.??.??"]
[X "Ann"]
[O "hard"]
[XType "human"]
[OType "program"]
[Board "3x3k3"]
[Result "1-0"]
<BLANKLINE>
1. b2 a1 2. c3 a3 3. a2 c1 4. c2 1-0
>>> read_records(to_sgf([record])) == read_records(to_pgn([record])) == [record]
True
"""

from __future__ import annotations

import codecs
import io
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from noughts import __version__
from noughts import text as sentences
from noughts.board import MAX_SIDE, Board
from noughts.errors import GameRecordError, NoughtsError
from noughts.store.scoring import Participant

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import IO, Any

    from noughts.game import Game
    from noughts.store import Store, StoredGame

__all__ = ["FORMATS", "GameRecord", "ImportReport", "format_of", "import_records", "read_pgn", "read_record_file",
           "read_records", "read_sgf", "stored_records", "to_pgn", "to_sgf", "write_records"]

FORMATS = ("pgn", "sgf")
MAX_FILE_BYTES = 20_000_000
MAX_RECORD_CHARS = 1_000_000  # one game with its comments and variations: a 26×26 game is a few thousand
MAX_DEPTH = 1000  # variations within variations
_RESULTS = ("X", "O", "draw")


@dataclass(frozen=True)
class GameRecord:
    """One game as a record: where it started, the moves, the players, when, and its result.

    ``result`` is the result the record claims: ``'X'``, ``'O'``, ``'draw'``, or ``None`` when
    unknown or unfinished. It agrees with the moves when they end the game; when they do not, a
    claimed result is a resignation or an agreement (:attr:`finished` is then ``False``).
    ``tags`` are the PGN tags the record carries besides the ones noughts writes itself.
    """

    start: Board
    moves: tuple[int, ...]
    x: Participant | None = None
    o: Participant | None = None
    played_at: datetime | None = None
    result: str | None = None
    tags: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        board = self.start
        for cell in self.moves:
            board = board.play(cell)  # raises for an illegal move
        actual = board.winner or ("draw" if board.is_draw else None)
        if self.result not in (*_RESULTS, None):
            raise GameRecordError(f"a result is 'X', 'O', 'draw' or None, not {self.result!r:.20}")
        if actual is not None and self.result not in (None, actual):
            said = "a draw" if self.result == "draw" else f"{self.result} won"
            got = "a draw" if actual == "draw" else f"{actual} has won"
            raise GameRecordError(f"the record says {said}, but after its moves {got}")
        if actual is not None:
            object.__setattr__(self, "result", actual)
        own = sorted(self.tags, key=lambda tag: ("Event", "Site").index(tag[0]) if tag[0] in ("Event", "Site") else 2)
        object.__setattr__(self, "tags", tuple(own))  # Event and Site first, as PGN writes them
        if self.played_at is not None:
            when = self.played_at if self.played_at.tzinfo else self.played_at.replace(tzinfo=UTC)
            object.__setattr__(self, "played_at", when.astimezone(UTC).replace(microsecond=0))

    # making records -----------------------------------------------------------------------
    @classmethod
    def from_game(cls, game: Game, *, x: Participant | None = None, o: Participant | None = None,
                  played_at: datetime | None = None, result: str | None = None) -> GameRecord:
        """The record of a game (player names default to the game's own ``x_name``/``o_name``, as people)."""
        if x is None and game.x_name:
            x = Participant.human(game.x_name)
        if o is None and game.o_name:
            o = Participant.human(game.o_name)
        return cls(game.start, game.moves, x, o, played_at, result)

    @classmethod
    def from_stored(cls, stored: StoredGame) -> GameRecord:
        """The record of a game kept in the score store."""
        game = stored.to_game()
        return cls(game.start, game.moves, stored.x, stored.o, stored.played_at, stored.result)

    # what it holds ------------------------------------------------------------------------
    @property
    def board(self) -> Board:
        """The position after the moves."""
        board = self.start
        for cell in self.moves:
            board = board.play(cell)
        return board

    @property
    def finished(self) -> bool:
        """The moves end the game (a win or a full board)."""
        return self.board.is_over

    def to_game(self) -> Game:
        from noughts.game import Game

        game = Game(self.start, x_name=self.x.name if self.x else None, o_name=self.o.name if self.o else None)
        for cell in self.moves:
            game.play(cell)
        return game

    def key(self) -> str:
        """A stable name for this game, the same on every machine: the store records a game once per key."""
        import hashlib
        import json

        content = [self.start.rows, self.start.cols, self.start.k, str(self.start),
                   [self.start.cell_name(c) for c in self.moves],
                   [self.x.name, self.x.kind] if self.x else None, [self.o.name, self.o.kind] if self.o else None,
                   self.played_at.isoformat() if self.played_at else None, self.result]
        digest = hashlib.sha256(json.dumps(content, ensure_ascii=False).encode("utf-8")).hexdigest()
        return f"record:{digest[:40]}"


def _side(board: Board) -> str:
    return "X" if board.ply % 2 == 0 else "O"


def _checked_name(name: str, mark: str, kind: str = "human") -> Participant:
    try:
        return Participant(name, "computer" if kind == "computer" else "human")
    except NoughtsError as error:
        raise GameRecordError(f"{mark}'s name: {error}") from None


# SGF ---------------------------------------------------------------------------------------------

def to_sgf(records: Iterable[GameRecord]) -> str:
    """The records as one SGF collection, a game tree each, one line of moves per ten."""
    trees = []
    for record in records:
        start = record.start
        rows, cols = start.rows, start.cols
        props = [("FF", "4"), ("GM", "4"), ("CA", "UTF-8"), ("AP", f"noughts:{__version__}"),
                 ("SZ", str(rows) if rows == cols else f"{cols}:{rows}"), ("NK", str(start.k))]
        tag = dict(record.tags)
        if "Event" in tag:
            props.append(("EV", tag["Event"]))
        if "Site" in tag:
            props.append(("PC", tag["Site"]))
        for participant, player, kind in ((record.x, "PB", "NPB"), (record.o, "PW", "NPW")):
            if participant is not None:
                props.append((player, participant.name))
                if participant.kind == "computer":
                    props.append((kind, "computer"))
        if record.played_at is not None:
            props += [("DT", record.played_at.strftime("%Y-%m-%d")), ("NTM", record.played_at.strftime("%H:%M:%S"))]
        if record.result is not None:
            props.append(("RE", {"X": "B+", "O": "W+", "draw": "0"}[record.result]))
        root = ";" + "".join(f"{name}[{_sgf_escape(value)}]" for name, value in props)
        if start.ply:
            black = [_sgf_point(start, c) for c in range(start.size) if start[c] == "X"]
            white = [_sgf_point(start, c) for c in range(start.size) if start[c] == "O"]
            root += "".join(f"{name}" + "".join(f"[{p}]" for p in points)
                            for name, points in (("AB", black), ("AW", white)) if points)
            root += f"PL[{'B' if _side(start) == 'X' else 'W'}]"
        moves = []
        board = start
        for cell in record.moves:
            moves.append(f";{'B' if _side(board) == 'X' else 'W'}[{_sgf_point(start, cell)}]")
            board = board.play(cell)
        lines = [root] + ["".join(moves[i:i + 10]) for i in range(0, len(moves), 10)]
        trees.append("(" + "\n".join(lines) + ")")
    return "\n".join(trees) + ("\n" if trees else "")


def _sgf_point(board: Board, cell: int) -> str:
    row, col = divmod(cell, board.cols)
    return chr(ord("a") + col) + chr(ord("a") + row)


def _sgf_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("]", "\\]")


Node = dict[str, list[str]]
_CHUNK = 1 << 16  # characters (or bytes) read at a time


class _Text:
    """Text read a chunk at a time, so a file of any length takes little memory.

    A parser looks at :attr:`buffer` from :attr:`pos` and calls :meth:`more` when it needs what
    follows (which moves both). What a record has read, from :meth:`begin_record` on, is capped:
    text that runs on and on is refused as soon as it passes :data:`MAX_RECORD_CHARS`.
    """

    def __init__(self, chunks: Iterator[str]) -> None:
        self._chunks = chunks
        self.buffer = ""
        self.pos = 0
        self.ended = False
        self._offset = 0  # characters before the buffer
        self._lines = 1  # the line the buffer starts on
        self._record: tuple[str, int] | None = None  # what is being read, and from which character

    @classmethod
    def of(cls, text: str) -> _Text:
        return cls(text[i:i + _CHUNK] for i in range(0, len(text), _CHUNK))

    def more(self) -> bool:
        """Read on (keeping one character already read, to look back at); False at the end of the text."""
        if self.ended:
            return False
        chunk = next(self._chunks, None)
        while chunk == "":
            chunk = next(self._chunks, None)
        if chunk is None:
            self.ended = True
            return False
        keep = max(self.pos - 1, 0)
        self._lines += self.buffer.count("\n", 0, keep)
        self._offset += keep
        self.buffer = self.buffer[keep:] + chunk
        self.pos -= keep
        if self._record is not None and self._offset + len(self.buffer) - self._record[1] > MAX_RECORD_CHARS + _CHUNK:
            raise GameRecordError(sentences.record_too_long(self._record[0], MAX_RECORD_CHARS))
        return True

    def begin_record(self, what: str) -> None:
        """From here on, the text is ``what`` (``SGF game 2 (line 9)``), and capped in length."""
        self._record = (what, self.offset)

    @property
    def offset(self) -> int:
        return self._offset + self.pos

    @property
    def line(self) -> int:
        return self._lines + self.buffer.count("\n", 0, self.pos)

    def peek(self, ahead: int = 0) -> str:
        """The character ``ahead`` past the next one, or '' at the end of the text."""
        while self.pos + ahead >= len(self.buffer):
            if not self.more():
                return ""
        return self.buffer[self.pos + ahead]

    def skip_space(self) -> None:
        while True:
            buffer, i = self.buffer, self.pos
            end = len(buffer)
            while i < end and buffer[i].isspace():
                i += 1
            self.pos = i
            if i < end or not self.more():
                return

    def match(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        """The pattern at the next character, read on while the text at hand may cut it short
        (where nothing matches too: the text at hand may end inside a token; the record's cap bounds it)."""
        while True:
            found = pattern.match(self.buffer, self.pos)
            if (found is None or found.end() == len(self.buffer)) and self.more():
                continue
            return found


def read_sgf(text: str) -> list[GameRecord]:
    """Every game of an SGF collection (the main line of each, variations left out).

    Raises :class:`~noughts.errors.GameRecordError` naming the game and the problem: bad SGF,
    a game other than gomoku, a move off the board, on a taken cell or out of turn, a result
    that the moves contradict.
    """
    return list(_read_sgf(_Text.of(text)))


def _read_sgf(source: _Text) -> Iterator[GameRecord]:
    for number, (nodes, line) in enumerate(_sgf_main_lines(source), start=1):
        try:
            yield _sgf_record(nodes)
        except NoughtsError as error:
            raise GameRecordError(f"SGF game {number} (line {line}): {error}") from None


_KEPT = ("B", "W", "AB", "AW", "AE")  # what a node after the first one holds that makes a record


def _sgf_main_lines(source: _Text) -> Iterator[tuple[list[Node], int]]:
    """The nodes along the main line of each game tree (those after the first only with moves or
    setup), and the line each tree starts on, a tree at a time."""
    stack: list[list[Any]] = []  # per open tree: [on the main line, children seen]
    nodes: list[Node] = []
    games = 0
    line = 1
    cells: int | None = None  # how many moves the board can hold, once the first node says
    moves = 0
    source.begin_record("the text before the first SGF game")
    while True:
        source.skip_space()
        char = source.peek()
        if not char:
            break
        if not stack and not games and char != "(":
            source.pos += 1  # text before the first tree (a mail header, a note) is skipped, as SGF readers do
            continue
        if char == "(":
            parent = stack[-1] if stack else None
            main = parent is None or (parent[0] and parent[1] == 0)
            if parent is not None:
                parent[1] += 1
            else:
                nodes, line, cells, moves = [], source.line, None, 0
                source.begin_record(f"SGF game {games + 1} (line {line})")
            if len(stack) >= MAX_DEPTH:
                raise GameRecordError(f"SGF line {source.line}: variations nested more than {MAX_DEPTH} deep")
            stack.append([main, 0])
            source.pos += 1
        elif char == ")":
            if not stack:
                raise GameRecordError(f"SGF line {source.line}: ')' closes no game tree")
            stack.pop()
            source.pos += 1
            if not stack:
                games += 1
                yield nodes, line
                nodes = []
                source.begin_record(f"the text after SGF game {games}")
        elif char == ";":
            if not stack:
                raise GameRecordError(f"SGF line {source.line}: a node ';' outside any game tree '(…)'")
            if stack[-1][1]:
                raise GameRecordError(f"SGF line {source.line}: a node after the variations of its tree")
            source.pos += 1
            node = _sgf_node(source)
            if not stack[-1][0]:
                continue
            if not nodes:
                cells = _sgf_cells(node)
            elif not any(name in node for name in _KEPT):
                continue  # a comment or markup: nothing a record keeps
            nodes.append(node)
            moves += ("B" in node) + ("W" in node)
            if cells is not None and moves > cells:
                raise GameRecordError(sentences.record_too_many_moves(f"SGF game {games + 1} (line {line})", cells))
        else:
            raise GameRecordError(f"SGF line {source.line}: unexpected {char!r} (expected '(', ';' or ')')")
    if stack:
        raise GameRecordError("the SGF text ends inside a game tree: a ')' is missing")
    if not games:
        raise GameRecordError("no SGF game tree '(;…)' in the text")


def _sgf_cells(root: Node) -> int | None:
    """How many cells the first node's board has, or None when it does not say clearly (the record then tells why)."""
    try:
        rows, cols = _sgf_size(_one(root, "SZ"))
    except GameRecordError:
        return None
    return rows * cols


_IDENT_MOST = 100
_IDENT = re.compile(f"[A-Za-z]{{1,{_IDENT_MOST}}}")


def _sgf_node(source: _Text) -> Node:
    node: Node = {}
    while True:
        source.skip_space()
        source.peek(_IDENT_MOST)  # a name is at hand whole
        match = _IDENT.match(source.buffer, source.pos)
        if match is None:
            return node
        ident = "".join(c for c in match.group() if c.isupper())  # FF[3] allowed lower case letters in names
        if not ident:
            raise GameRecordError(f"SGF line {source.line}: a property name needs a capital letter")
        if ident in node:
            raise GameRecordError(f"SGF line {source.line}: property {ident} twice in one node")
        source.pos = match.end()
        values = []
        while True:
            source.skip_space()
            if source.peek() != "[":
                break
            source.pos += 1
            values.append(_sgf_value(source))
        if not values:
            raise GameRecordError(f"SGF line {source.line}: property {ident} has no value '[…]'")
        node[ident] = values


def _sgf_value(source: _Text) -> str:
    parts = []
    while True:
        buffer, i = source.buffer, source.pos
        close, escape = buffer.find("]", i), buffer.find("\\", i)
        if close >= 0 and (escape < 0 or close < escape):
            parts.append(buffer[i:close])
            source.pos = close + 1
            return "".join(parts)
        if escape >= 0:
            if escape + 2 >= len(buffer) and source.more():  # what follows the backslash decides
                continue
            parts.append(buffer[i:escape])
            following = buffer[escape + 1:escape + 2]
            if not following:
                break
            if following not in "\r\n":  # a backslash before a line break joins the lines
                parts.append(following)
            if len(parts) > 4096:  # many escapes: one string, not a list of characters
                parts = ["".join(parts)]
            source.pos = escape + (3 if following == "\r" and buffer[escape + 2:escape + 3] == "\n" else 2)
            continue
        parts.append(buffer[i:])
        source.pos = len(buffer)
        if not source.more():
            break
    raise GameRecordError("the SGF text ends inside a property value: a ']' is missing")


def _one(node: Node, name: str) -> str | None:
    values = node.get(name)
    if values is None:
        return None
    if len(values) != 1:
        raise GameRecordError(f"property {name} takes one value, not {len(values)}")
    return values[0]


def _sgf_record(nodes: list[Node]) -> GameRecord:
    if not nodes:
        raise GameRecordError("an empty game tree")
    root = nodes[0]
    game_type = _one(root, "GM")
    if game_type is not None and game_type.strip() != "4":
        raise GameRecordError(f"GM[{game_type[:10]}] is not gomoku (GM[4]): noughts reads only m,n,k games")
    rows, cols = _sgf_size(_one(root, "SZ"))
    k_text = _one(root, "NK")
    k = None
    if k_text is not None:
        k = _small_number(k_text, "k (NK)")
        if not 1 <= k <= max(rows, cols):
            raise GameRecordError(f"k (NK) must be between 1 and {max(rows, cols)} on a {rows}×{cols} board, not {k}")
    x = o = 0
    for setup in ("AB", "AW"):
        for points in root.get(setup, []):
            for cell in _sgf_points(points, rows, cols):
                if (x | o) >> cell & 1:
                    raise GameRecordError(f"{setup} puts a second mark on {_cell_name(cell, cols)}")
                if setup == "AB":
                    x |= 1 << cell
                else:
                    o |= 1 << cell
    start = Board.from_bits(x, o, rows, cols, k)
    to_play = _one(root, "PL")
    if to_play is not None and to_play.strip().upper() != ("B" if _side(start) == "X" else "W"):
        raise GameRecordError(f"PL[{to_play[:5]}] says who is to play, but with {start.ply} marks set up "
                              f"it is {'Black (X)' if _side(start) == 'X' else 'White (O)'}")
    moves: list[int] = []
    board = start
    for number, node in enumerate(nodes):
        if number and any(name in node for name in ("AB", "AW", "AE")):
            raise GameRecordError("marks set up in the middle of a game (AB/AW/AE after the first node)")
        colours = [name for name in ("B", "W") if name in node]
        if not colours:
            continue
        if len(colours) == 2:
            raise GameRecordError("one node holds both a Black and a White move")
        colour = colours[0]
        point = _one(node, colour) or ""
        move_number = len(moves) + 1
        expected = "B" if _side(board) == "X" else "W"
        if board.is_over:
            raise GameRecordError(f"move {move_number} ({colour}[{point[:5]}]) comes after the game is over")
        if colour != expected:
            raise GameRecordError(f"move {move_number} is {'Black' if colour == 'B' else 'White'}'s, "
                                  f"but it is {'Black' if expected == 'B' else 'White'}'s turn")
        if point in ("", "tt") and (point == "" or (rows <= 19 and cols <= 19)):
            raise GameRecordError(f"move {move_number} is a pass: noughts has no passes")
        cells = _sgf_points(point, rows, cols)
        if len(cells) != 1:
            raise GameRecordError(f"move {move_number} names {len(cells)} cells, not one")
        try:
            board = board.play(cells[0])
        except NoughtsError as error:
            raise GameRecordError(f"move {move_number}: {error}") from None
        moves.append(cells[0])
    players: list[Participant | None] = []
    for name_prop, kind_prop, mark in (("PB", "NPB", "X"), ("PW", "NPW", "O")):
        name, kind = _one(root, name_prop), _one(root, kind_prop)
        players.append(_checked_name(name, mark, kind or "human") if name and name.strip() else None)
    played_at = _sgf_time(_one(root, "DT"), _one(root, "NTM"))
    tags = tuple((tag, value) for prop, tag in (("EV", "Event"), ("PC", "Site"))
                 if (value := _one(root, prop)) is not None)
    return GameRecord(start, tuple(moves), players[0], players[1], played_at, _sgf_result(_one(root, "RE")), tags)


def _sgf_size(text: str | None) -> tuple[int, int]:
    if text is None:
        return 15, 15  # SGF's default size for gomoku
    cols_text, colon, rows_text = text.partition(":")
    cols = _small_number(cols_text, "the board size (SZ)")
    rows = _small_number(rows_text, "the board size (SZ)") if colon else cols
    if not (1 <= rows <= MAX_SIDE and 1 <= cols <= MAX_SIDE):
        raise GameRecordError(f"SZ[{text}]: noughts plays boards of 1 to {MAX_SIDE} rows and columns")
    return rows, cols


def _sgf_points(value: str, rows: int, cols: int) -> list[int]:
    """The cells of a point ``bc`` or a rectangle ``aa:cc`` (a compressed point list)."""
    corner, colon, other = value.strip().partition(":")
    first = _sgf_cell(corner, rows, cols)
    if not colon:
        return [first]
    second = _sgf_cell(other, rows, cols)
    (r1, c1), (r2, c2) = divmod(first, cols), divmod(second, cols)
    return [r * cols + c for r in range(min(r1, r2), max(r1, r2) + 1) for c in range(min(c1, c2), max(c1, c2) + 1)]


def _sgf_cell(point: str, rows: int, cols: int) -> int:
    if len(point) != 2 or not all("a" <= c <= "z" for c in point):
        raise GameRecordError(f"[{point[:10]}] is not an SGF point (two letters a-z, column then row)")
    col, row = ord(point[0]) - 97, ord(point[1]) - 97
    if col >= cols or row >= rows:
        raise GameRecordError(f"[{point}] is off the {rows}×{cols} board")
    return row * cols + col


def _cell_name(cell: int, cols: int) -> str:
    row, col = divmod(cell, cols)
    return f"{chr(97 + col)}{row + 1}"


def _small_number(text: str, what: str) -> int:
    cleaned = text.strip()
    if not (cleaned.isascii() and cleaned.isdigit() and len(cleaned) <= 3):
        raise GameRecordError(f"{what} must be a whole number, not {text[:20]!r}")
    return int(cleaned)


def _sgf_result(text: str | None) -> str | None:
    if text is None:
        return None
    cleaned = text.strip().upper()
    if cleaned.startswith("B+"):
        return "X"
    if cleaned.startswith("W+"):
        return "O"
    if cleaned in ("0", "DRAW", "D", "JIGO"):
        return "draw"
    if cleaned in ("", "?", "VOID"):
        return None
    raise GameRecordError(f"RE[{text[:20]}] is not a result: B+…, W+…, 0 (a draw), ? or Void")


_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?$")


def _sgf_time(date: str | None, time: str | None) -> datetime | None:
    """The date (and time) of play, or None when the record gives no full date that can be read."""
    match = _DATE.match(date.strip()) if date else None
    if match is None:
        return None  # viewers write partial dates and lists of days: no time is better than a wrong one
    year, month, day = match.groups()
    return _when(year, month, day, time)


def _when(year: str, month: str, day: str, time: str | None) -> datetime | None:
    clock = _TIME.match(time.strip()) if time else None
    try:
        parts = [int(year), int(month), int(day)] + ([int(p) for p in clock.groups()] if clock else [])
        return datetime(*parts, tzinfo=UTC)  # type: ignore[arg-type, misc]
    except ValueError:
        return None


# PGN-like text -----------------------------------------------------------------------------------

_PGN_RESULTS = {"X": "1-0", "O": "0-1", "draw": "1/2-1/2", None: "*"}
_PGN_READ = {"1-0": "X", "0-1": "O", "1/2-1/2": "draw", "*": None}
_OWN_TAGS = ("Event", "Site", "Date", "UTCDate", "UTCTime", "X", "O", "XType", "OType", "Board", "Start", "Result")


def to_pgn(records: Iterable[GameRecord]) -> str:
    """The records as PGN-like text: tag pairs, a blank line, the moves and the result, a blank line between games."""
    games = []
    for record in records:
        start = record.start
        extra = dict(record.tags)
        tags = [("Event", extra.pop("Event", "noughts game")), ("Site", extra.pop("Site", "?"))]
        if record.played_at is not None:
            day = record.played_at.strftime("%Y.%m.%d")
            tags += [("Date", day), ("UTCDate", day), ("UTCTime", record.played_at.strftime("%H:%M:%S"))]
        else:
            tags.append(("Date", "????.??.??"))
        tags += [("X", record.x.name if record.x else "?"), ("O", record.o.name if record.o else "?")]
        for mark, participant in (("X", record.x), ("O", record.o)):
            if participant is not None:
                tags.append((f"{mark}Type", "program" if participant.kind == "computer" else "human"))
        tags.append(("Board", start.geometry.notation))
        if start.ply:
            tags.append(("Start", str(start)))
        tags.append(("Result", _PGN_RESULTS[record.result]))
        tags += [(name, value) for name, value in extra.items() if name not in _OWN_TAGS]
        header = "\n".join(f'[{name} "{_pgn_escape(value)}"]' for name, value in tags)
        games.append(f"{header}\n\n{_movetext(record)}\n")
    return "\n".join(games)


def _movetext(record: GameRecord) -> str:
    words = []
    board = record.start
    number = 1
    for index, cell in enumerate(record.moves):
        if _side(board) == "X":
            words.append(f"{number}.")
        elif index == 0:
            words.append(f"{number}...")
        words.append(board.cell_name(cell))
        if _side(board) == "O":
            number += 1
        board = board.play(cell)
    words.append(_PGN_RESULTS[record.result])
    lines, line = [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > 79:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(lines)


def _pgn_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


_PGN_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<tag>\[\s*(?P<name>[A-Za-z0-9_]+)\s*"(?P<value>(?:[^"\\]|\\.)*)"\s*\])
  | (?P<comment>\{[^}]*\}|;[^\n]*)
  | (?P<result>1-0|0-1|1/2-1/2|\*)
  | (?P<number>\d+\s*\.(?:\s*\.\s*\.)?)
  | (?P<move>[a-zA-Z]\d+)[!?]*
  | (?P<nag>\$\d+)
  | (?P<open>\()
  | (?P<close>\))
""", re.VERBOSE | re.DOTALL)


def read_pgn(text: str) -> list[GameRecord]:
    """Every game of PGN-like text (comments, NAGs and variations are skipped)."""
    return list(_read_pgn(_Text.of(text)))


def _read_pgn(source: _Text) -> Iterator[GameRecord]:
    tags: list[tuple[str, str]] = []
    moves: list[str] = []
    in_moves = False
    depth = 0
    result_token: str | None = None
    games = 0
    first = 1  # the line the game starts on
    cells = 0  # the most moves the game's board can hold, from its tags when its first move comes
    begin = source.offset
    source.begin_record("PGN game 1")

    def finish() -> GameRecord:
        nonlocal games, tags, moves, in_moves, result_token
        games += 1
        try:
            record = _pgn_record(tags, moves, result_token)
        except NoughtsError as error:
            raise GameRecordError(f"PGN game {games} (line {first}): {error}") from None
        tags, moves, in_moves, result_token = [], [], False, None
        source.begin_record(f"PGN game {games + 1}")
        return record

    while True:
        if depth == 0 and source.peek() == "%" and (source.offset == begin or source.buffer[source.pos - 1] == "\n"):
            while (newline := source.buffer.find("\n", source.pos)) < 0:  # an escaped line, for other programs' use
                source.pos = len(source.buffer)
                if not source.more():
                    break
            else:
                source.pos = newline
            continue
        if not source.peek():
            break
        match = source.match(_PGN_TOKEN)
        if match is None:
            raise GameRecordError(f"PGN line {source.line}: cannot read {source.buffer[source.pos:source.pos + 20]!r}")
        kind = match.lastgroup if match.lastgroup not in ("name", "value") else "tag"
        line = source.line
        source.pos = match.end()
        if kind in ("space", "comment", "nag"):
            continue
        if kind == "open":
            depth += 1
            continue
        if kind == "close":
            if depth == 0:
                raise GameRecordError(f"PGN line {line}: ')' closes no variation")
            depth -= 1
            continue
        if depth:
            continue
        if kind == "tag":
            if in_moves:  # a new game began without the last one's result: the last one is unfinished
                yield finish()
            if not tags:
                first = line
                source.begin_record(f"PGN game {games + 1} (line {first})")
            name = match.group("name")
            value = re.sub(r"\\(.)", r"\1", match.group("value"), flags=re.DOTALL)
            tags.append((name, value))
        elif kind == "number":
            in_moves = True
        elif kind == "move":
            if not tags and not in_moves:
                first = line
                source.begin_record(f"PGN game {games + 1} (line {first})")
            in_moves = True
            if not moves:
                cells = _pgn_cells(tags)
            moves.append(match.group("move"))
            if len(moves) > cells:
                raise GameRecordError(sentences.record_too_many_moves(f"PGN game {games + 1} (line {first})", cells))
        elif kind == "result":
            if not tags and not in_moves:
                first = line
            result_token = match.group()
            yield finish()
    if depth:
        raise GameRecordError("the PGN text ends inside a variation: a ')' is missing")
    if tags or moves:
        yield finish()
    if not games:
        raise GameRecordError("no game in the PGN text: expected tag pairs like [X \"Ann\"] and moves like 1. b2")


def _pgn_cells(tags: list[tuple[str, str]]) -> int:
    """How many moves the board the tags name can hold (any board's most where they do not say clearly)."""
    found = dict(tags)
    most = MAX_SIDE * MAX_SIDE
    if "Board" in found:
        shape = _BOARD_TAG.match(found["Board"].strip().lower())
        return min(int(shape.group(1)) * int(shape.group(2)), most) if shape else most
    return min(len(found["Start"]), most) if "Start" in found else 9  # no tags: 3×3


_BOARD_TAG = re.compile(r"(\d{1,3})x(\d{1,3})(?:k(\d{1,3}))?$")
_PGN_DATE = re.compile(r"(\d{4})\.(\d{2})\.(\d{2})$")


def _pgn_record(tag_list: list[tuple[str, str]], moves: list[str], result_token: str | None) -> GameRecord:
    tags: dict[str, str] = {}
    for name, value in tag_list:
        if name in tags:
            raise GameRecordError(f"the tag {name} is given twice")
        tags[name] = value
    board_text = tags.get("Board", "3x3k3").strip().lower()
    shape = _BOARD_TAG.match(board_text)
    if shape is None:
        raise GameRecordError(f"[Board \"{board_text[:20]}\"] is not a board: write rows x columns k, like 3x3k3")
    rows, cols = int(shape.group(1)), int(shape.group(2))
    k = int(shape.group(3)) if shape.group(3) and "Board" in tags else None
    if "Start" in tags:
        start = Board.parse(tags["Start"], k)
        if (start.rows, start.cols) != (rows, cols) and "Board" in tags:
            raise GameRecordError(f"the start position is {start.rows}×{start.cols}, but the Board tag says "
                                  f"{rows}×{cols}")
    else:
        start = Board(rows, cols, k)
    board = start
    cells = []
    for number, name in enumerate(moves, start=1):
        try:
            cell = board.parse_cell(name)
            board = board.play(cell)
        except NoughtsError as error:
            raise GameRecordError(f"move {number} ({name[:10]}): {error}") from None
        cells.append(cell)
    claimed = tags.get("Result")
    if claimed is not None and claimed.strip() not in _PGN_READ:
        raise GameRecordError(f"[Result \"{claimed[:20]}\"] is not a result: 1-0, 0-1, 1/2-1/2 or *")
    if claimed is not None and result_token is not None and claimed.strip() != result_token:
        raise GameRecordError(f"the Result tag says {claimed.strip()} but the moves end with {result_token}")
    result = _PGN_READ[(claimed or result_token or "*").strip()]
    players: list[Participant | None] = []
    for mark in ("X", "O"):
        name = tags.get(mark, "?")
        kind = tags.get(f"{mark}Type", "human").strip().lower()
        if kind not in ("human", "program", "computer"):
            raise GameRecordError(f"[{mark}Type \"{kind[:20]}\"] is human or program")
        players.append(None if name.strip() in ("", "?") else
                       _checked_name(name, mark, "computer" if kind in ("program", "computer") else "human"))
    played_at = None
    date = _PGN_DATE.match(tags.get("UTCDate", tags.get("Date", "")).strip())
    if date:
        year, month, day = date.groups()
        played_at = _when(year, month, day, tags.get("UTCTime", tags.get("Time")))
    extra = tuple((name, value) for name, value in tags.items()
                  if name not in _OWN_TAGS or (name in ("Event", "Site") and value != {"Event": "noughts game",
                                                                                      "Site": "?"}[name]))
    return GameRecord(start, tuple(cells), players[0], players[1], played_at, result, extra)


# both ---------------------------------------------------------------------------------------------

def read_records(data: str | bytes) -> list[GameRecord]:
    """The games of an SGF or PGN-like file, told apart by their first character (``(`` is SGF)."""
    if isinstance(data, bytes | bytearray):
        return list(read_record_file(io.BytesIO(data)))
    if isinstance(data, str):
        if len(data) > MAX_FILE_BYTES:
            raise GameRecordError(f"a file of game records is at most {MAX_FILE_BYTES:,} characters")
        return list(_read_text(_Text.of(data)))
    raise GameRecordError(f"game records are text, not {type(data).__name__}")


def read_record_file(file: IO[bytes], name: str = "the file") -> Iterator[GameRecord]:
    """The games of an SGF or PGN-like file open for reading bytes (and seeking), one at a time.

    It is read a piece at a time, so memory stays small whatever its size: a file larger than
    :data:`MAX_FILE_BYTES`, a game longer than :data:`MAX_RECORD_CHARS` or with more moves than
    its board has cells is refused as soon as that is known. The text is UTF-8 when it can be,
    else in the charset SGF's ``CA`` names (SGF's default: ISO-8859-1); a charset that cannot be
    read is refused, naming ``name``.
    """
    encoding = _encoding(file, name)
    decoder = codecs.getincrementaldecoder(encoding)()

    def chunks() -> Iterator[str]:
        while data := file.read(_CHUNK):
            yield decoder.decode(data)
        yield decoder.decode(b"", final=True)

    file.seek(0)
    yield from _read_text(_Text(chunks()))


def _read_text(source: _Text) -> Iterator[GameRecord]:
    while source.peek() in _LEADING:
        source.pos += 1
    source.peek(4096)  # the start of the text at hand, to tell the formats apart
    head = source.buffer[source.pos:source.pos + 4096]
    if head.startswith("(") or (not head.startswith(("[", "{", ";", "%")) and "(;" in head):
        return _read_sgf(source)
    return _read_pgn(source)


_LEADING = ("\ufeff", " ", "\t", "\r", "\n")  # a byte order mark and blank space before the first game
_CHARSET = re.compile(rb"CA\s*\[([^\]]{0,40})\]")
_ASCII = "(;)[]\\: AZaz09\n"  # what SGF's grammar needs in its usual place


def _encoding(file: IO[bytes], name: str) -> str:
    """The codec the file's text is in; refuses a file too large or in a charset that cannot be read."""
    file.seek(0)
    head = file.read(4096)
    if _decodes(file, "utf-8", name):
        return "utf-8-sig"
    found = _CHARSET.search(head)
    if found is None:
        return "latin-1"  # SGF's default charset, ISO-8859-1; old viewers wrote their own code pages
    charset = found.group(1).decode("latin-1").strip()
    try:
        info = codecs.lookup(charset)
        usable = (getattr(info, "_is_text_encoding", True)
                  and _ASCII.encode(info.name) == _ASCII.encode() and _ASCII.encode().decode(info.name) == _ASCII)
    except (LookupError, ValueError, TypeError):  # 'undefined' raises UnicodeError, a ValueError, on any use
        usable = False
    if not usable:
        raise GameRecordError(sentences.records_charset_unknown(name, charset))
    if not _decodes(file, info.name, name):
        raise GameRecordError(sentences.records_not_in_charset(name, charset))
    return info.name


def _decodes(file: IO[bytes], encoding: str, name: str) -> bool:
    """The whole file is text in this encoding (read a piece at a time; a file too large is refused)."""
    file.seek(0)
    decoder = codecs.getincrementaldecoder(encoding)()
    size = 0
    good = True
    while data := file.read(_CHUNK):
        size += len(data)
        if size > MAX_FILE_BYTES:
            raise GameRecordError(sentences.records_file_too_large(name, MAX_FILE_BYTES))
        if good:
            try:
                decoder.decode(data)
            except (ValueError, TypeError):  # UnicodeDecodeError, and what odd codecs raise
                good = False
    if good:
        try:
            decoder.decode(b"", final=True)
        except (ValueError, TypeError):
            good = False
    return good


def write_records(records: Sequence[GameRecord], fmt: str) -> str:
    if fmt == "sgf":
        return to_sgf(records)
    if fmt == "pgn":
        return to_pgn(records)
    raise GameRecordError(f"a record format is {' or '.join(FORMATS)}, not {fmt!r:.20}")


# the score store ------------------------------------------------------------------------------------

@dataclass
class ImportReport:
    """What :func:`import_records` did."""

    added: list[int] = field(default_factory=list)  # the new games' numbers
    already: int = 0  # games the store had already
    unfinished: int = 0  # games the store cannot keep: it keeps finished games only

    def summary(self) -> str:
        def games(n: int) -> str:
            return f"{n} game{'' if n == 1 else 's'}"

        parts = [f"imported {games(len(self.added))}"]
        if self.already:
            parts.append(f"{games(self.already)} already in the store")
        if self.unfinished:
            parts.append(f"{games(self.unfinished)} not finished, left out (the store keeps finished games only)")
        return "; ".join(parts)


def import_records(store: Store, records: Iterable[GameRecord]) -> ImportReport:
    """Record finished games in the store, each once: a game it already has (by its key, or the same
    players, moves and time) is left out, so importing a file twice adds nothing.

    Imported games count in the scores like games played here, in the order they are recorded.
    """
    report = ImportReport()
    existing = store.games(limit=max(store.count_games(), 1))
    known = {_identity(GameRecord.from_stored(g)) for g in existing}
    ids = {g.id for g in existing}
    for record in records:
        if not record.finished:
            report.unfinished += 1
            continue
        if _identity(record) in known:
            report.already += 1
            continue
        game = record.to_game()
        x = record.x or Participant.human("X")
        o = record.o or Participant.human("O")
        done = store.record(game, x, o, played_at=record.played_at, game_key=record.key())
        if done.game_id in ids:  # recorded before under this key (a record without a time gets the import's)
            report.already += 1
        elif done.game_id is not None:
            report.added.append(done.game_id)
            ids.add(done.game_id)
        known.add(_identity(record))
    return report


def _identity(record: GameRecord) -> tuple[object, ...]:
    start = record.start
    players = [(p.name, p.kind) if p else None for p in (record.x, record.o)]
    return (start.rows, start.cols, start.k, str(start), record.moves, *players, record.played_at)


def stored_records(store: Store, ids: Sequence[int] | None) -> list[GameRecord]:
    """The records of the stored games with these numbers, or of every game, oldest first."""
    if ids is None:
        games = store.games(limit=max(store.count_games(), 1))
        return [GameRecord.from_stored(g) for g in reversed(games)]
    return [GameRecord.from_stored(store.game(game_id)) for game_id in ids]


# file names -----------------------------------------------------------------------------------------

def format_of(path: str | None) -> str | None:
    """The record format a file name asks for by its ending (``games.sgf``: sgf), or ``None``."""
    if path is None:
        return None
    suffix = path.rpartition(".")[2].lower() if "." in path else ""
    return suffix if suffix in FORMATS else None
