"""The rules of m×n×k noughts and crosses: geometry, positions, moves and notation.

A :class:`Board` is an immutable position. Cells are 0-based in reading order
(``cell = row * cols + col``); people write them as ``1``-``9`` or as spreadsheet
coordinates (``a1`` top-left, ``b2`` the centre of 3×3). A position is written as its
rows joined by ``/`` with ``X``, ``O`` and ``.``:

>>> board = Board.parse("XX./OO./...")
>>> board.turn
'X'
>>> won = board.play("c1")
>>> won.winner, won.winning_line
('X', (0, 1, 2))
>>> won.play("c2")
Traceback (most recent call last):
  ...
noughts.errors.GameOver: cannot play c2: the game is over, X has won
"""

from __future__ import annotations

from collections import namedtuple
from itertools import compress

from noughts import text
from noughts.errors import (
    CellSyntaxError,
    CellTaken,
    GameOver,
    IllegalMoveError,
    ImpossiblePositionError,
    UnsupportedBoardError,
)

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from random import Random
    from typing import Any, ClassVar

__all__ = ["GEOMETRY_CACHE_SHAPES", "MOVES_CACHE_CELLS", "MAX_SIDE", "Board", "Geometry", "Result", "keep_newest"]

MAX_SIDE = 26  # one column letter per column
_MARKS = {"x": "X", "o": "O", ".": None, "-": None, "_": None}
_MARK_CHARS = frozenset("xXoO.-_")  # the characters that lowercase to a key of _MARKS (none beyond ASCII)
_X_BITS = str.maketrans("xXoO.-_", "1100000")  # a position's characters as X's binary digits
_O_BITS = str.maketrans("xXoO.-_", "0011000")  # and as O's
_SHOWN = str.maketrans("012", ".XO")  # a cell's digit in Board.__str__, as written
_BIT_BYTES = str.maketrans("01", "\x00\x01")  # binary digits as the bytes 0 and 1
GEOMETRY_CACHE_SHAPES = 16
"""Shapes whose geometry stays cached besides 3×3 (least recently used first out)."""
MOVES_CACHE_CELLS = 1 << 20
"""Cells the legal-move tuples cached by one geometry may hold in all (about 8 MB)."""


class Geometry:
    """Everything about a board that does not depend on the marks on it (cached per shape).

    Two geometries of the same shape are equal, so boards stay equal across pickling and
    after a shape has left the cache; the cache keeps the last :data:`GEOMETRY_CACHE_SHAPES`
    shapes used, and 3×3 always.
    """

    __slots__ = (
        "rows", "cols", "k", "shape", "size", "full", "lines", "line_masks", "lines_through",
        "_symmetries", "_line_of_mask", "_moves_cache", "_moves_cache_limit", "_win_table", "_hash", "_names",
    )
    _cache: ClassVar[dict[tuple[int, int, int], Geometry]] = {}  # oldest first, 3×3 kept apart

    rows: int
    cols: int
    k: int
    shape: tuple[int, int, int]
    size: int
    full: int
    lines: tuple[tuple[int, ...], ...]
    line_masks: tuple[int, ...]
    lines_through: tuple[tuple[int, ...], ...]
    _symmetries: tuple[tuple[int, ...], ...] | None

    @classmethod
    def get(cls, rows: int = 3, cols: int = 3, k: int | None = None) -> Geometry:
        """The geometry of a ``rows``×``cols`` board with ``k`` in a row (default min(rows, cols, 5))."""
        if type(rows) is not int or type(cols) is not int or (type(k) is not int and k is not None):
            for name, value in (("rows", rows), ("columns", cols), ("k", k)):
                if type(value) is not int and not (name == "k" and value is None):
                    raise UnsupportedBoardError(f"the number of {name} must be a whole number, not {value!r:.40}")
        key = (rows, cols, k if k is not None else min(rows, cols, 5))
        if key == _CLASSIC_SHAPE:
            return _CLASSIC
        cache = cls._cache
        geometry = cache.get(key)
        if geometry is not None:
            try:
                if next(reversed(cache)) == key:
                    return geometry  # already the most recently used
            except (StopIteration, RuntimeError):  # emptied or changed by another thread meanwhile
                pass
        geometry = cache.pop(key, None) or cls(*key)
        cache[key] = geometry  # the most recently used is last
        keep_newest(cache, GEOMETRY_CACHE_SHAPES)
        return geometry

    @classmethod
    def parse(cls, notation: str) -> Geometry:
        """A board shape from its notation: ``7x7k5`` (rows x columns, k in a row), ``4x5``
        (k = min(rows, columns, 5)) or ``4`` (4×4); ``×`` and capitals are read too.

        >>> Geometry.parse("7x7k5").shape, Geometry.parse("4X5").shape, Geometry.parse(" 3 ").shape
        ((7, 7, 5), (4, 5, 4), (3, 3, 3))
        >>> Geometry.parse("3x3k4")
        Traceback (most recent call last):
          ...
        noughts.errors.UnsupportedBoardError: k (marks in a row to win) must be between 1 and 3 on a 3×3 board, not 4
        """
        written = notation.strip().lower().replace("×", "x") if isinstance(notation, str) else ""
        size, has_k, k_text = written.partition("k")
        rows_text, cross, cols_text = size.partition("x")
        numbers = [rows_text, *([cols_text] if cross else []), *([k_text] if has_k else [])]
        if not all(n.isascii() and n.isdigit() and len(n) <= 3 for n in numbers):
            raise UnsupportedBoardError(f"a board is written like 3x3k3, 4x4 or 7x7k5 (rows x columns, k in a row), "
                                        f"not {str(notation).strip()[:20]!r}")
        rows = int(rows_text)
        return cls.get(rows, int(cols_text) if cross else rows, int(k_text) if has_k else None)

    @property
    def notation(self) -> str:
        """``7x7k5``: the shape as :meth:`parse` reads it, in records, arena reports and scores."""
        return f"{self.rows}x{self.cols}k{self.k}"

    def __init__(self, rows: int, cols: int, k: int) -> None:
        for name, value in (("rows", rows), ("columns", cols), ("k", k)):
            if type(value) is not int:
                raise UnsupportedBoardError(f"the number of {name} must be a whole number, not {value!r}")
        if not (1 <= rows <= MAX_SIDE and 1 <= cols <= MAX_SIDE):
            raise UnsupportedBoardError(
                f"a board has 1 to {MAX_SIDE} rows and columns, not {rows}×{cols}")
        if not 1 <= k <= max(rows, cols):
            raise UnsupportedBoardError(
                f"k (marks in a row to win) must be between 1 and {max(rows, cols)} on a "
                f"{rows}×{cols} board, not {k}")
        self.rows, self.cols, self.k = rows, cols, k
        self.shape = (rows, cols, k)
        self._hash = hash(self.shape)
        self.size = rows * cols
        self.full = (1 << self.size) - 1
        lines: list[tuple[int, ...]] = []
        masks: list[int] = []
        seen: set[int] = set()
        # Horizontal, vertical, diagonal ↘, anti-diagonal ↙: the order seeds 000 and 004 scan in.
        for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
            # the starts whose line stays on the board, in reading order
            start_rows = range(rows - d_row * (k - 1))
            start_cols = range(max(0, -d_col * (k - 1)), cols - max(0, d_col * (k - 1)))
            starts = ((r, c) for r in start_rows for c in start_cols)
            if d_row == 1 and d_col == 0:  # columns are scanned left to right
                starts = ((r, c) for c in start_cols for r in start_rows)
            step = d_row * cols + d_col  # from one cell of the line to the next
            unit = sum(1 << (i * step) for i in range(k))  # the line's mask, from cell 0
            for r, c in starts:
                first = r * cols + c
                mask = unit << first
                if mask not in seen:  # k = 1 makes every direction the same line
                    seen.add(mask)
                    lines.append(tuple(range(first, first + k * step, step)) if k > 1 else (first,))
                    masks.append(mask)
        self.lines = tuple(lines)
        self.line_masks = tuple(masks)
        self._line_of_mask = dict(zip(self.line_masks, self.lines, strict=True))
        through: list[list[int]] = [[] for _ in range(self.size)]
        for line, mask in zip(lines, self.line_masks, strict=True):  # in scan order, like line_masks
            for cell in line:
                through[cell].append(mask)
        self.lines_through = tuple(tuple(masks) for masks in through)
        self._symmetries = None  # made when first asked for: most boards never are
        self._moves_cache: dict[int, tuple[int, ...]] = {}
        self._moves_cache_limit = max(1, MOVES_CACHE_CELLS // self.size)
        self._win_table: bytes | None = None if self.size <= 12 else b""
        self._names: tuple[str, ...] | None = None  # every cell's name, made when first asked for

    @property
    def symmetries(self) -> tuple[tuple[int, ...], ...]:
        """The board's symmetries as cell permutations (``perm[cell]`` is the cell it takes its
        mark from), the identity first: 8 on a square, 4 on a rectangle, 2 on one row."""
        if self._symmetries is None:
            self._symmetries = self._make_symmetries()
        return self._symmetries

    def _make_symmetries(self) -> tuple[tuple[int, ...], ...]:
        rows, cols = self.rows, self.cols
        last_r, last_c = rows - 1, cols - 1
        all_rows, all_cols = range(rows), range(cols)
        # each map sends cell (r, c) to the cell its mark comes from, in reading order
        maps = [
            tuple(range(rows * cols)),  # (r, c)
            tuple(r * cols + last_c - c for r in all_rows for c in all_cols),  # (r, last_c - c)
            tuple((last_r - r) * cols + c for r in all_rows for c in all_cols),  # (last_r - r, c)
            tuple((last_r - r) * cols + last_c - c for r in all_rows for c in all_cols),  # (last_r - r, last_c - c)
        ]
        if rows == cols:  # the four maps that swap rows and columns need a square
            maps += [
                tuple(c * cols + r for r in all_rows for c in all_cols),  # (c, r)
                tuple(c * cols + last_r - r for r in all_rows for c in all_cols),  # (c, last_r - r)
                tuple((last_c - c) * cols + r for r in all_rows for c in all_cols),  # (last_c - c, r)
                tuple((last_c - c) * cols + last_r - r for r in all_rows for c in all_cols),  # (last_c - c, last_r - r)
            ]
        perms: list[tuple[int, ...]] = []
        for perm in maps:
            if perm not in perms:  # a 1×n board has fewer distinct maps
                perms.append(perm)
        return tuple(perms)

    def win_table(self) -> bytes | None:
        """For boards of up to 12 cells: ``table[bits]`` is 1 when ``bits`` hold a whole line."""
        if self._win_table is None:
            won = bytearray(1 << self.size)
            for line in self.line_masks:
                rest = self.full ^ line
                others = rest
                while True:  # every set of cells that holds the line
                    won[line | others] = 1
                    if not others:
                        break
                    others = (others - 1) & rest
            self._win_table = bytes(won)
        return self._win_table or None  # b"" on bigger boards, where Board.play looks at the lines

    def line_cells(self, mask: int) -> tuple[int, ...]:
        """The cells of the line with this mask."""
        return self._line_of_mask[mask]

    def moves(self, occupied: int) -> tuple[int, ...]:
        """Empty cells, ascending, given the mask of occupied cells."""
        moves = self._moves_cache.get(occupied)
        if moves is None:
            size = self.size
            if size <= 16:
                moves = tuple(c for c in range(size) if not occupied >> c & 1)
            else:  # the empty cells' bits as one byte (0 or 1) a cell, picked out in C: 4 times quicker on 26×26
                empty = format(self.full & ~occupied, "b").zfill(size)[::-1]
                moves = tuple(compress(range(size), empty.translate(_BIT_BYTES).encode()))
            if len(self._moves_cache) >= self._moves_cache_limit:  # bounded: a 26×26 tuple is 5 KB
                self._moves_cache.clear()
            self._moves_cache[occupied] = moves
        return moves

    def cell_name(self, cell: int) -> str:
        """``b2`` for cell 4 of 3×3: column letter, then row number counted from the top."""
        if type(cell) is not int or not 0 <= cell < self.size:
            raise IllegalMoveError(f"cell index {cell} is off the {self.rows}×{self.cols} board")
        names = self._names
        if names is None:
            cols = self.cols
            names = self._names = tuple(f"{chr(ord('a') + c % cols)}{c // cols + 1}" for c in range(self.size))
        return names[cell]

    def parse_cell(self, text: str) -> int:
        """Read a cell typed by a person: ``1``-``9`` (reading order) or ``a1``-``c3``."""
        if not isinstance(text, str):
            raise CellSyntaxError(f"a cell is written as text like 5 or b2, not {text!r}")
        cleaned = text.strip().lower()
        if not text.isascii():  # "K" (Kelvin sign) lowercases to "k": only ASCII names count
            raise CellSyntaxError(f"{self._shown(text)} is not a cell: {self._hint()}")
        if cleaned.isdigit() and len(cleaned) <= 4:
            number = int(cleaned)
            if 1 <= number <= self.size:
                return number - 1
            raise CellSyntaxError(f"there is no cell {number}: {self._hint()}")
        letter, digits = cleaned[:1], cleaned[1:]
        if not ("a" <= letter <= "z" and digits.isdigit() and len(digits) <= 3):
            raise CellSyntaxError(f"{self._shown(text)} is not a cell: {self._hint()}")
        col = ord(letter) - 97  # ord("a")
        row = int(digits) - 1
        if col >= self.cols or not 0 <= row < self.rows:
            raise CellSyntaxError(f"{cleaned} is off the board: {self._hint()}")
        return row * self.cols + col

    @staticmethod
    def _shown(text: str) -> str:
        """Text a person typed, as an error message quotes it."""
        return repr(text) if len(text) <= 20 else repr(text[:20]) + "…"

    def _hint(self) -> str:
        """What to type instead, for an error message."""
        last_col = chr(ord("a") + self.cols - 1)
        return f"type a number from 1 to {self.size} or a column a-{last_col} and a row 1-{self.rows}, like a1"

    def __repr__(self) -> str:
        return f"Geometry(rows={self.rows}, cols={self.cols}, k={self.k})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Geometry):
            return NotImplemented
        return self is other or self.shape == other.shape

    def __hash__(self) -> int:
        return self._hash

    # A geometry is derived from its shape: copies and pickles share the cached one.
    def __reduce__(self) -> tuple[Callable[..., Geometry], tuple[int, int, int]]:
        return Geometry.get, self.shape

    def __copy__(self) -> Geometry:
        return self

    def __deepcopy__(self, memo: object) -> Geometry:
        return self


_CLASSIC_SHAPE = (3, 3, 3)
_CLASSIC = Geometry(*_CLASSIC_SHAPE)  # the hot path: never leaves the cache


def keep_newest(cache: dict[Any, Any], count: int) -> None:
    """Drop the oldest entries of an insertion-ordered cache until at most ``count`` are left.

    Another thread may change the cache meanwhile (a window's worker thread, say): then this
    stops early, and the next call finishes the job.
    """
    while len(cache) > count:
        try:
            del cache[next(iter(cache))]
        except (KeyError, RuntimeError, StopIteration):
            return


def _winning_mask(geometry: Geometry, bits: int) -> list[int]:
    return [m for m in geometry.line_masks if bits & m == m]


class Result(namedtuple("Result", ["winner", "line", "reason"])):  # not typing.NamedTuple: typing costs ms at import
    """How a game ended: the one shape of a result in every layer (board, game, match, web room).

    ``winner`` is ``'X'``, ``'O'`` or ``None`` (a draw, or a game given up); ``line`` the winning
    cells; ``reason`` is ``"line"`` (k in a row), ``"full"`` (a draw: the board filled with no
    line) or ``"abandoned"`` (given up before its end; only a match says this).

    >>> Board.parse("XXX/OO./...").result
    Result(winner='X', line=(0, 1, 2), reason='line')
    >>> Board.parse("XOX/XOO/OXX").result.word, Board().result
    ('draw', None)
    """

    __slots__ = ()
    winner: str | None
    line: tuple[int, ...] | None
    reason: str  # "line", "full" or "abandoned"

    @property
    def word(self) -> str:
        """``'X'``, ``'O'``, ``'draw'`` or ``'abandoned'``: the result as records and stores write it."""
        return self.winner or ("draw" if self.reason == "full" else "abandoned")


class Board:
    """An immutable position on a ``rows``×``cols`` board where ``k`` in a row wins.

    >>> Board()
    Board.parse('.../.../...')
    >>> Board(4, 4).k
    4
    """

    # _over, _legal and _children are worked out once a position: the per-move API reads them.
    # Every 3×3 position is made once and kept (_INTERNED_33, at most 5,478 of them), and
    # remembers its children by cell, so play() on 3×3 is a lookup; elsewhere _legal and
    # _children are None and legal moves come from the geometry's cache.
    __slots__ = ("_geometry", "_x", "_o", "_ply", "_win_mask", "_winner", "_over", "_legal", "_children")

    _geometry: Geometry
    _x: int
    _o: int
    _ply: int
    _win_mask: int
    _winner: str | None
    _over: bool
    _legal: tuple[int, ...] | None
    _children: dict[int, Board] | None

    def __new__(cls, rows: int = 3, cols: int = 3, k: int | None = None) -> Board:
        if type(rows) is int and type(cols) is int and rows == 3 and cols == 3 and k is None and cls is Board:
            return _EMPTY_33  # Board(): the kept empty 3×3 board, a value like any other
        geometry = Geometry.get(rows, cols, k)
        if geometry is _CLASSIC and cls is Board:
            return _EMPTY_33
        return cls._make(geometry, 0, 0, 0, 0, None)

    # construction -------------------------------------------------------------------
    @classmethod
    def _make(cls, geometry: Geometry, x: int, o: int, ply: int, win_mask: int,
              winner: str | None) -> Board:
        """A position from parts already checked: on 3×3 the one kept for these marks."""
        classic = geometry is _CLASSIC and cls is Board
        if classic:
            board = _INTERNED_33.get(x | o << 9)
            if board is not None:
                return board
        board = object.__new__(cls)
        board._geometry, board._x, board._o, board._ply = geometry, x, o, ply
        board._win_mask, board._winner = win_mask, winner
        board._over = winner is not None or ply == geometry.size
        if not classic:
            board._legal = board._children = None
            return board
        board._legal = () if winner is not None else geometry.moves(x | o)
        board._children = {}
        return _INTERNED_33.setdefault(x | o << 9, board)  # another thread may have made it meanwhile

    @classmethod
    def from_bits(cls, x: int, o: int, rows: int = 3, cols: int = 3, k: int | None = None) -> Board:
        """A position from two bitmasks (bit ``i`` set: cell ``i`` holds that mark), checked."""
        geometry = Geometry.get(rows, cols, k)
        if type(x) is not int or type(o) is not int:
            raise ImpossiblePositionError("a position's marks are two whole-number bitmasks")
        if x < 0 or o < 0 or (x | o) & ~geometry.full:
            raise ImpossiblePositionError(f"marks lie outside the {rows}×{cols} board")
        if x & o:
            raise ImpossiblePositionError("a cell cannot hold both X and O")
        return cls._checked(geometry, x, o)

    @classmethod
    def _checked(cls, geometry: Geometry, x: int, o: int) -> Board:
        if geometry is _CLASSIC and cls is Board:
            known = _INTERNED_33.get(x | o << 9)
            if known is not None:  # made before, so already checked
                return known
        n_x, n_o = x.bit_count(), o.bit_count()
        if n_x not in (n_o, n_o + 1):
            raise ImpossiblePositionError(
                f"X has {n_x} marks and O has {n_o}: X moves first and the players alternate, "
                "so X has as many marks as O or one more")
        wins = geometry.win_table()  # up to 12 cells: a quick "no line at all", the usual answer
        if wins is not None and not wins[x] and not wins[o]:
            return cls._make(geometry, x, o, n_x + n_o, 0, None)
        x_lines, o_lines = _winning_mask(geometry, x), _winning_mask(geometry, o)
        k = geometry.k
        if x_lines and o_lines:
            raise ImpossiblePositionError(f"X and O both have {k} in a row, but play stops at the first win")
        winner, lines, bits = ("X", x_lines, x) if x_lines else ("O", o_lines, o)
        if lines:
            if (winner == "X") != (n_x == n_o + 1):
                loser = "O" if winner == "X" else "X"
                raise ImpossiblePositionError(
                    f"{winner} has {k} in a row but {loser} has moved since: play stops at a win")
            common = bits
            for m in lines:
                common &= m
            if not common:
                raise ImpossiblePositionError(
                    f"{winner} has separate lines of {k}: one last move cannot complete them all")
            return cls._make(geometry, x, o, n_x + n_o, lines[0], winner)
        return cls._make(geometry, x, o, n_x + n_o, 0, None)

    @classmethod
    def parse(cls, text: str, k: int | None = None) -> Board:
        """Read a position such as ``X.O/.X./..O`` (for 3×3 also ``X.O.X...O``).

        >>> str(Board.parse("x.o.x...o"))
        'X.O/.X./..O'
        >>> Board.parse("XXX/OO./...").winner
        'X'
        >>> Board.parse("XXX/.../...")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
          ...
        noughts.errors.ImpossiblePositionError: X has 3 marks and O has 0: X moves first and the players ...
        """
        if not isinstance(text, str):
            raise ImpossiblePositionError(f"a position is text like X.O/.X./..O, not {type(text).__name__}")
        if len(text) > MAX_SIDE * (MAX_SIDE + 1) + 64:
            raise ImpossiblePositionError(f"a position of {len(text)} characters is too long for any board")
        cleaned = text.strip()
        if k is None and (len(cleaned) == 9 or (len(cleaned) == 11 and cleaned[3] == "/" == cleaned[7])):
            joined = cleaned.replace("/", "")  # 3×3, written well, as the long way below would read it
            if len(joined) == 9 and _MARK_CHARS.issuperset(joined):
                backwards = joined[::-1]
                x, o = int(backwards.translate(_X_BITS), 2), int(backwards.translate(_O_BITS), 2)
                return cls._checked(_CLASSIC, x, o)
        if cleaned.endswith("/") and cleaned.count("/") == 1:  # a one-row board: "X.O./"
            rows = [cleaned[:-1]]
        elif "/" in cleaned:
            rows = cleaned.split("/")
        elif len(cleaned) == 9:
            rows = [cleaned[i:i + 3] for i in range(0, 9, 3)]
        else:
            raise ImpossiblePositionError(
                f"{cleaned[:40]!r} is not a position: write rows joined by '/' with X, O and . "
                "for empty, like X.O/.X./..O (nine characters without '/' for 3×3)")
        width = len(rows[0])
        x = o = 0
        joined = "".join(rows)
        if max(map(len, rows)) == width == min(map(len, rows)) and _MARK_CHARS.issuperset(joined):
            if joined:  # all well: the marks' bits at once, cell 0 the lowest
                backwards = joined[::-1]
                x, o = int(backwards.translate(_X_BITS), 2), int(backwards.translate(_O_BITS), 2)
            rows_left: list[str] = []
        else:
            rows_left = rows  # a problem: found row by row, cell by cell, to name the first
        for r, row in enumerate(rows_left):
            if len(row) != width:
                raise ImpossiblePositionError(
                    f"row {r + 1} has {len(row)} cells but row 1 has {width}: every row needs the same length")
            for c, char in enumerate(row):
                try:
                    mark = _MARKS[char.lower()]
                except KeyError:
                    raise ImpossiblePositionError(
                        f"unexpected {char!r} in row {r + 1}: use X, O and . for an empty cell") from None
                if mark == "X":
                    x |= 1 << (r * width + c)
                elif mark == "O":
                    o |= 1 << (r * width + c)
        if width == 0:
            raise ImpossiblePositionError("a position needs at least one cell in each row")
        try:
            geometry = Geometry.get(len(rows), width, k)
        except UnsupportedBoardError as error:
            raise ImpossiblePositionError(str(error)) from None
        return cls._checked(geometry, x, o)

    # read-only attributes -------------------------------------------------------------
    @property
    def geometry(self) -> Geometry:
        return self._geometry

    @property
    def x(self) -> int:
        """Bitmask of the cells holding X (bit ``i`` is cell ``i``)."""
        return self._x

    @property
    def o(self) -> int:
        """Bitmask of the cells holding O."""
        return self._o

    @property
    def ply(self) -> int:
        """The number of marks on the board."""
        return self._ply

    @property
    def rows(self) -> int:
        return self._geometry.rows

    @property
    def cols(self) -> int:
        return self._geometry.cols

    @property
    def k(self) -> int:
        return self._geometry.k

    @property
    def size(self) -> int:
        return self._geometry.size

    @property
    def key(self) -> int:
        """An integer that identifies the position among boards of the same geometry."""
        return self._x | self._o << self._geometry.size

    # state ----------------------------------------------------------------------------
    @property
    def winner(self) -> str | None:
        """``'X'`` or ``'O'`` once a side has ``k`` in a row, else ``None``."""
        return self._winner

    @property
    def winning_line(self) -> tuple[int, ...] | None:
        """The cells of the winning line (the first in scan order if the last move made two)."""
        return self._geometry.line_cells(self._win_mask) if self._winner else None

    @property
    def is_draw(self) -> bool:
        """Every cell is filled and nobody has won (a win on the last cell is a win)."""
        return self._over and self._winner is None

    @property
    def is_over(self) -> bool:
        return self._over

    @property
    def result(self) -> Result | None:
        """How the game ended in this position, or ``None`` while it goes on."""
        if not self._over:
            return None
        return Result(self._winner, self.winning_line, "line") if self._winner else Result(None, None, "full")

    @property
    def turn(self) -> str | None:
        """The side to move, or ``None`` once the game is over."""
        if self._over:
            return None
        return "O" if self._ply & 1 else "X"

    @property
    def legal_moves(self) -> tuple[int, ...]:
        """The empty cells, ascending; none once the game is won."""
        moves = self._legal
        if moves is not None:  # 3×3
            return moves
        if self._winner is not None:
            return ()
        occupied = self._x | self._o
        moves = self._geometry._moves_cache.get(occupied)  # Geometry.moves' cache, read here: one call fewer
        return moves if moves is not None else self._geometry.moves(occupied)

    def __getitem__(self, cell: int) -> str | None:
        if not 0 <= cell < self._geometry.size:
            raise IndexError(f"cell {cell} is off the board")
        return "X" if self._x >> cell & 1 else "O" if self._o >> cell & 1 else None

    @property
    def cells(self) -> tuple[str | None, ...]:
        """The mark in every cell, in reading order."""
        x, o = self._x, self._o  # (read here, not through self[c]: the web server draws every board it sends)
        return tuple("X" if x >> c & 1 else "O" if o >> c & 1 else None for c in range(self._geometry.size))

    # moves ----------------------------------------------------------------------------
    def play(self, cell: int | str) -> Board:
        """The position after the side to move plays ``cell`` (an index or a name like ``b2``)."""
        children = self._children
        if children is not None and type(cell) is int:  # 3×3: a child made before
            try:
                return children[cell]
            except KeyError:  # not played from here yet, or not a legal move: the long way says which
                pass
        geometry = self._geometry
        x, o = self._x, self._o
        # Every check a legal move passes, at once; anything else goes the long way, which
        # reads a cell's name or says what is wrong.
        if type(cell) is not int or self._winner is not None or not 0 <= cell < geometry.size or (x | o) >> cell & 1:
            return self._play_checked(cell)
        ply = self._ply
        if ply & 1:
            o |= 1 << cell
            bits = o
        else:
            x |= 1 << cell
            bits = x
        win_mask = 0
        wins = geometry._win_table
        if wins is None:  # the first move on a shape of up to 12 cells builds it
            wins = geometry.win_table()
        if not wins or wins[bits]:  # a line is complete (bigger boards look every time): which
            for m in geometry.lines_through[cell]:
                if bits & m == m:
                    win_mask = m
                    break
        if children is not None:
            child = Board._make(geometry, x, o, ply + 1, win_mask, ("O" if ply & 1 else "X") if win_mask else None)
            children[cell] = child
            return child
        board = _new_object(Board)
        board._geometry = geometry
        board._x = x
        board._o = o
        board._ply = ply + 1
        board._win_mask = win_mask
        if win_mask:
            board._winner = "O" if ply & 1 else "X"
            board._over = True
        else:
            board._winner = None
            board._over = ply + 1 == geometry.size
        board._legal = board._children = None
        return board

    def _play_checked(self, cell: object) -> Board:
        """:meth:`play` for a cell given by name, or an error that says why the move is not legal."""
        geometry = self._geometry
        if type(cell) is not int:
            cell = geometry.parse_cell(cell) if isinstance(cell, str) else _not_a_cell(cell)
        if self._winner is not None:
            raise GameOver(f"cannot play {_name(geometry, cell)}: the game is over, {self._winner} has won")
        if not 0 <= cell < geometry.size:
            raise IllegalMoveError(
                f"cell index {cell} is off the {geometry.rows}×{geometry.cols} board "
                f"(indices run from 0 to {geometry.size - 1})")
        if (self._x | self._o) >> cell & 1:
            mark = self[cell]
            assert mark is not None
            raise CellTaken(text.cell_taken(geometry.cell_name(cell), mark), cell=cell, mark=mark)
        return self.play(cell)

    def playout(self, rng: Random) -> Board:
        """Play uniformly random moves until the game ends and return the final position.

        The Monte Carlo primitive: the same as repeatedly playing a random legal move, on
        bitmasks, without building the positions in between.

        >>> from random import Random
        >>> Board().playout(Random(7)).is_over
        True
        """
        if self._over:
            return self
        geometry = self._geometry
        x, o, ply = self._x, self._o, self._ply
        through, random = geometry.lines_through, rng.random
        wins = geometry.win_table()
        empties = list(geometry.moves(x | o))
        left = len(empties)
        while True:
            # Draw without replacement: swap the drawn cell out of the live part of the list.
            drawn = int(random() * left)
            cell = empties[drawn]
            left -= 1
            empties[drawn] = empties[left]
            if ply & 1:
                o |= 1 << cell
                bits = o
            else:
                x |= 1 << cell
                bits = x
            ply += 1
            if wins[bits] if wins is not None else any(bits & m == m for m in through[cell]):
                line = next(m for m in through[cell] if bits & m == m)
                return Board._make(geometry, x, o, ply, line, "X" if ply & 1 else "O")
            if not left:
                return Board._make(geometry, x, o, ply, 0, None)

    # notation -------------------------------------------------------------------------
    def parse_cell(self, text: str) -> int:
        """Read a cell typed by a person (``5`` or ``b2``) on this board's geometry.

        >>> Board().parse_cell("b2"), Board().parse_cell("9")
        (4, 8)
        """
        return self._geometry.parse_cell(text)

    def cell_name(self, cell: int) -> str:
        """The name people use for a cell index.

        >>> Board().cell_name(4)
        'b2'
        """
        return self._geometry.cell_name(cell)

    def __str__(self) -> str:
        geometry = self._geometry
        cols, size = geometry.cols, geometry.size
        if size <= 640:  # the fewest digits Python may be limited to turning into an int and back
            # Read the bitmasks' binary digits as decimal numbers: X's plus twice O's has one digit
            # a cell, 0 empty, 1 X, 2 O (the marks never share a cell, so nothing carries); cell 0 last.
            digits = str(int(format(self._x, "b")) + 2 * int(format(self._o, "b"))).zfill(size)
            marks = digits[::-1].translate(_SHOWN)
        else:
            marks = "".join("X" if self._x >> c & 1 else "O" if self._o >> c & 1 else "." for c in range(size))
        text = "/".join([marks[i:i + cols] for i in range(0, size, cols)])
        return text + "/" if geometry.rows == 1 else text  # "X.." alone would read as 3×3

    def __repr__(self) -> str:
        g = self._geometry
        default_k = min(g.rows, g.cols, 5)
        return f"Board.parse({str(self)!r}{'' if g.k == default_k else f', k={g.k}'})"

    def _repr_svg_(self) -> str:
        """The position as a picture, for notebooks (see :mod:`noughts.svg`)."""
        from noughts import svg

        return svg.board(self)

    # symmetry -------------------------------------------------------------------------
    def transform(self, perm: tuple[int, ...]) -> Board:
        """The image of this position under a cell permutation from ``geometry.symmetries``."""
        x = o = 0
        for new, old in enumerate(perm):
            if self._x >> old & 1:
                x |= 1 << new
            elif self._o >> old & 1:
                o |= 1 << new
        # The first winning line in scan order, as for any other board with these marks.
        winner_bits = x if self._winner == "X" else o
        win_mask = next((m for m in self._geometry.line_masks if winner_bits & m == m), 0) if self._winner else 0
        return Board._make(self._geometry, x, o, self._ply, win_mask, self._winner)

    def symmetries(self) -> tuple[Board, ...]:
        """This position under each symmetry of the board (8 for a square, 4 for a rectangle)."""
        return tuple(self.transform(p) for p in self._geometry.symmetries)

    def canonical(self) -> Board:
        """The symmetric image with the smallest :attr:`key`: equal for all equivalent positions."""
        return min(self.symmetries(), key=lambda b: b.key)

    # value semantics ------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        g, h = self._geometry, other._geometry
        return (g is h or g.shape == h.shape) and self._x == other._x and self._o == other._o

    def __hash__(self) -> int:
        return hash((self._geometry.rows, self._geometry.cols, self._geometry.k, self._x, self._o))

    # Boards are immutable values: a copy is the board itself, and a pickle holds only the
    # shape and the two bitmasks (the geometry is looked up again, never copied).
    def __reduce__(self) -> tuple[Callable[..., Board], tuple[int, int, int, int, int]]:
        g = self._geometry
        return _unpickle_board, (g.rows, g.cols, g.k, self._x, self._o)

    def __copy__(self) -> Board:
        return self

    def __deepcopy__(self, memo: object) -> Board:
        return self


def _unpickle_board(rows: int, cols: int, k: int, x: int, o: int) -> Board:
    """A pickled board, checked like any other position (a pickle can be edited)."""
    return Board.from_bits(x, o, rows, cols, k)


_new_object = object.__new__
_INTERNED_33: dict[int, Board] = {}  # every 3×3 position made so far, by key: at most 5,478
_EMPTY_33 = Board._make(_CLASSIC, 0, 0, 0, 0, None)


def _name(geometry: Geometry, cell: int) -> str:
    return geometry.cell_name(cell) if 0 <= cell < geometry.size else f"cell index {cell}"


def _not_a_cell(cell: object) -> int:
    raise CellSyntaxError(f"a cell is a number like 4 or a name like b2, not {cell!r}")
