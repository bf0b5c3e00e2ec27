"""Positions as SVG pictures, standard library only (in the spirit of python-chess's ``chess.svg``).

:func:`board` draws any board from 1×1 to 26×26: the grid, X and O as shapes, the last move
highlighted, the winning line struck through its ``k`` cells, coordinates (columns ``a``…
left to right, rows ``1``… top to bottom, so ``a1`` is the top-left cell), arrows and rings
for hints. Marks and coordinates are drawn as strokes, not text, so a picture looks the same
in every browser and converter, with or without fonts. The result is a complete SVG document;
notebooks draw it (it has ``_repr_svg_``), and so do :class:`~noughts.board.Board` and
:class:`~noughts.game.Game` themselves.

>>> from noughts import Board
>>> picture = board(Board.parse("XXX/OO./..."))
>>> picture.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
True
>>> 'class="winning-line"' in picture, 'class="mark x"' in picture
(True, True)
"""

from __future__ import annotations

import functools
import math
import re
import xml.etree.ElementTree as ET

from noughts.board import Board
from noughts.errors import CellSyntaxError, NoughtsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from noughts.game import Game

    Cell = int | str

__all__ = ["COLOURS", "THEMES", "Arrow", "Svg", "board"]

CELL = 100  # a cell's side in the picture's own units; everything else is a fraction of it
MARGIN = 52  # room for the coordinates, two digits wide
BORDER = 8  # the edge around a board drawn without coordinates
MAX_SIZE_PX = 20_000

COLOURS = {
    "background": "#ffffff",
    "board": "#fbf8f0",
    "grid": "#4a4a4a",
    "coordinates": "#6b6b6b",
    "x": "#1d4f91",
    "o": "#b5332b",
    "last move": "#ffe27a",
    "winning line": "#2d8a4e",
    "hint": "#1a9c8c",
    "arrow": "#1a9c8ccc",
}
"""The default colours, by the names :func:`board` takes in ``colours`` (``#rrggbbaa`` sets opacity)."""

THEMES: dict[str, dict[str, str]] = {
    "light": COLOURS,
    "dark": {
        "background": "#1e1f22", "board": "#2b2d31", "grid": "#a0a4ab", "coordinates": "#9aa0a6",
        "x": "#7cb7ff", "o": "#ff8a80", "last move": "#5c5224", "winning line": "#59d18a",
        "hint": "#4fd1c5", "arrow": "#4fd1c5cc",
    },
}

# Coordinates as strokes on a small grid: x from 0 to 4 (6 for m and w), the x-height from y=3
# to the baseline at y=7, ascenders from y=0, descenders to y=9. Round caps make "i"'s dot.
_GLYPHS = {
    "a": (4, "M4 3V7M4 5A2 2 0 1 1 0 5A2 2 0 1 1 4 5"),
    "b": (4, "M0 0V7M0 5A2 2 0 1 1 4 5A2 2 0 1 1 0 5"),
    "c": (4, "M3.64 3.85A2 2 0 1 0 3.64 6.15"),
    "d": (4, "M4 0V7M4 5A2 2 0 1 0 0 5A2 2 0 1 0 4 5"),
    "e": (4, "M0 5H4A2 2 0 1 0 3.64 6.15"),
    "f": (3.5, "M3.5 0.7A1.7 1.7 0 0 0 1.2 2V7M0 3.2H3"),
    "g": (4, "M4 3V7.3A1.9 1.7 0 0 1 0.3 8.2M4 5A2 2 0 1 0 0 5A2 2 0 1 0 4 5"),
    "h": (4, "M0 0V7M0 5A2 2 0 0 1 4 5V7"),
    "i": (1, "M0.5 3V7M0.5 1.2V1.3"),
    "j": (2.5, "M2 3V7.6A1.6 1.6 0 0 1 0 8.6M2 1.2V1.3"),
    "k": (4, "M0 0V7M3.6 3L0 5.6M1.4 4.6L4 7"),
    "l": (1.5, "M0.5 0V6A1 1 0 0 0 1.5 7"),
    "m": (6, "M0 7V3M0 4.6A1.5 1.5 0 0 1 3 4.6V7M3 4.6A1.5 1.5 0 0 1 6 4.6V7"),
    "n": (4, "M0 7V3M0 5A2 2 0 0 1 4 5V7"),
    "o": (4, "M4 5A2 2 0 1 1 0 5A2 2 0 1 1 4 5"),
    "p": (4, "M0 3V9M0 5A2 2 0 1 1 4 5A2 2 0 1 1 0 5"),
    "q": (4, "M4 3V9M4 5A2 2 0 1 0 0 5A2 2 0 1 0 4 5"),
    "r": (3.5, "M0 7V3M0 5.2A2.4 2.4 0 0 1 3.5 3.4"),
    "s": (4, "M3.7 3.7C3 2.8 0.3 2.8 0.3 4.1C0.3 5.3 3.8 4.7 3.8 5.9C3.8 7.3 0.9 7.3 0 6.3"),
    "t": (3.5, "M1.2 1V6A1 1 0 0 0 3.2 6.8M0 3.2H3.2"),
    "u": (4, "M0 3V5A2 2 0 0 0 4 5M4 3V7"),
    "v": (4, "M0 3L2 7L4 3"),
    "w": (6, "M0 3L1.5 7L3 4L4.5 7L6 3"),
    "x": (4, "M0 3L4 7M4 3L0 7"),
    "y": (4, "M0 3L2.1 7M4 3L1.1 9"),
    "z": (4, "M0 3H4L0 7H4"),
    "0": (4, "M2 0A2 3.5 0 1 0 2 7A2 3.5 0 1 0 2 0"),
    "1": (4, "M0.8 1.6L2.4 0V7M0.8 7H4"),
    "2": (4, "M0.2 1.7A1.9 1.8 0 1 1 3.3 3.6L0 7H4"),
    "3": (4, "M0.3 0.9A1.9 1.7 0 1 1 1.8 3.4A2 1.8 0 1 1 0.1 6.1"),
    "4": (4, "M3 7V0L0 5H4"),
    "5": (4, "M3.7 0H0.6L0.3 3.3A2.1 2 0 1 1 0.2 6.3"),
    "6": (4, "M3.3 0.4C1.5 0.2 0 1.8 0 4.9M4 4.9A2 2 0 1 1 0 4.9A2 2 0 1 1 4 4.9"),
    "7": (4, "M0 0H4L1.4 7"),
    "8": (4, "M2 3.4A1.7 1.7 0 1 1 2 0A1.7 1.7 0 1 1 2 3.4A2 1.8 0 1 1 2 7A2 1.8 0 1 1 2 3.4"),
    "9": (4, "M0.7 6.6C2.5 6.8 4 5.2 4 2.1M4 2.1A2 2 0 1 1 0 2.1A2 2 0 1 1 4 2.1"),
}
_GLYPH_GAP = 1.6  # between the glyphs of one label, in glyph units


class Svg(str):
    """An SVG document as text; notebooks (IPython, Jupyter) show it as a picture."""

    __slots__ = ()

    def _repr_svg_(self) -> str:
        return str(self)


class Arrow:
    """An arrow from ``tail`` to ``head`` (cells as indices or names); when both are the same
    cell it is a ring around that cell. ``colour`` is a colour, or ``None`` for the theme's."""

    __slots__ = ("colour", "head", "tail")

    def __init__(self, tail: Cell, head: Cell | None = None, *, colour: str | None = None) -> None:
        self.tail = tail
        self.head = tail if head is None else head
        self.colour = colour

    def __repr__(self) -> str:
        colour = "" if self.colour is None else f", colour={self.colour!r}"
        return f"Arrow({self.tail!r}, {self.head!r}{colour})"


def board(position: Board | Game | None = None, *, size: int | None = None, last_move: Cell | None = None,
          winning_line: Iterable[Cell] | bool = True, coordinates: bool = True,
          arrows: Iterable[Arrow | Cell | tuple[Cell, Cell]] = (), hint: Cell | None = None,
          fill: Mapping[Cell, str] | None = None, flipped: bool = False, theme: str = "light",
          colours: Mapping[str, str] | None = None, title: str | None = None) -> Svg:
    """A picture of ``position`` (a board or a game; the empty 3×3 board by default) as an SVG document.

    - ``size``: the width in pixels (the height follows the board's shape); by default 64 pixels
      a cell up to 10 columns, then 640 pixels in all.
    - ``last_move``: the cell to highlight; for a game, its last move unless given.
    - ``winning_line``: ``True`` strikes through the winner's ``k`` cells, ``False`` draws no
      line, or give the cells of a line to draw.
    - ``coordinates``: letters ``a``… above the columns and numbers ``1``… left of the rows.
    - ``arrows``: :class:`Arrow` objects, ``(tail, head)`` pairs or single cells (a ring).
    - ``hint``: a cell where the side to move is advised to play: its mark drawn faintly, ringed.
    - ``fill``: colours for the background of chosen cells.
    - ``flipped``: the board turned half a turn (``a1`` at the bottom right).
    - ``theme`` (``light`` or ``dark``) and ``colours``: named colours (see :data:`COLOURS`).
    - ``title``: the picture's title (tooltips, screen readers); by default the position's text.

    Cells are indices or names like ``b2``; a cell off the board raises a
    :class:`~noughts.errors.NoughtsError`, and so do unknown colour names and sizes out of range.

    >>> picture = board(Board.parse("X../.O./..X"), last_move="c3", size=300, coordinates=False)
    >>> import xml.etree.ElementTree as ET
    >>> root = ET.fromstring(picture)
    >>> root.get("width"), root.get("height"), len(root.findall(".//{*}g[@class='mark x']"))
    ('300', '300', 2)
    """
    from noughts.game import Game

    game_last: int | None = None
    if position is None:
        position = Board()
    if isinstance(position, Game):
        game_last = position.moves[-1] if position.moves else None
        position = position.board
    if not isinstance(position, Board):
        raise NoughtsError(f"a picture is drawn of a Board or a Game, not {type(position).__name__}")
    shown = position
    palette = _palette(theme, colours)
    rows, cols = shown.rows, shown.cols
    margin = MARGIN if coordinates else BORDER  # left and top: the coordinates' side
    width_units, height_units = cols * CELL + margin + BORDER, rows * CELL + margin + BORDER
    width_px = _size(size, cols, width_units)
    height_px = round(width_px * height_units / width_units)

    def at(cell: int) -> tuple[float, float]:
        """The centre of a cell in picture units."""
        row, col = divmod(cell, cols)
        if flipped:
            row, col = rows - 1 - row, cols - 1 - col
        return margin + (col + 0.5) * CELL, margin + (row + 0.5) * CELL

    svg = ET.Element("svg", {
        "xmlns": "http://www.w3.org/2000/svg", "version": "1.1",
        "width": str(width_px), "height": str(height_px),
        "viewBox": f"0 0 {width_units} {height_units}",
    })
    ET.SubElement(svg, "title").text = _xml_text(title) if title is not None else _default_title(shown)
    _rect(svg, 0, 0, width_units, height_units, palette["background"], "background")
    _rect(svg, margin, margin, cols * CELL, rows * CELL, palette["board"], "board")

    for cell, colour in (fill or {}).items():
        x, y = at(_cell(shown, cell))
        _rect(svg, x - CELL / 2, y - CELL / 2, CELL, CELL, _colour(colour, "a filled cell"), "fill")
    last = _cell(shown, last_move) if last_move is not None else game_last
    if last is not None:
        x, y = at(last)
        _rect(svg, x - CELL / 2, y - CELL / 2, CELL, CELL, palette["last move"], "last-move")

    _grid(svg, rows, cols, margin, palette["grid"])
    if coordinates:
        _coordinates(svg, rows, cols, margin, flipped, palette["coordinates"])

    for cell in range(shown.size):
        mark = shown[cell]
        if mark is not None:
            _mark(svg, mark, *at(cell), palette[mark.lower()], f"mark {mark.lower()}")

    if hint is not None:
        cell = _cell(shown, hint)
        if shown[cell] is None and shown.turn is not None:
            _mark(svg, shown.turn, *at(cell), palette[shown.turn.lower()], "hint-mark", opacity=0.35)
        _ring(svg, *at(cell), palette["hint"], "hint")

    line = _winning_cells(shown, winning_line)
    if line:
        _strike(svg, [at(c) for c in line], palette["winning line"])

    for arrow in [arrows] if isinstance(arrows, str | int) else arrows:
        tail, head, arrow_colour = _arrow(arrow)
        start, end = at(_cell(shown, tail)), at(_cell(shown, head))
        _arrow_shape(svg, start, end,
                     _colour(arrow_colour, "an arrow") if arrow_colour is not None else palette["arrow"])

    return Svg(_serialised(svg))


# parts of the picture -----------------------------------------------------------------------

def _rect(parent: ET.Element, x: float, y: float, width: float, height: float, colour: str, kind: str) -> None:
    ET.SubElement(parent, "rect", {"class": kind, "x": _n(x), "y": _n(y), "width": _n(width),
                                   "height": _n(height), **_paint("fill", colour)})


def _grid(parent: ET.Element, rows: int, cols: int, margin: float, colour: str) -> None:
    width, height = cols * CELL, rows * CELL
    steps = [f"M{_n(margin + c * CELL)} {_n(margin)}v{_n(height)}" for c in range(cols + 1)]
    steps += [f"M{_n(margin)} {_n(margin + r * CELL)}h{_n(width)}" for r in range(rows + 1)]
    ET.SubElement(parent, "path", {"class": "grid", "d": "".join(steps), "fill": "none", "stroke-width": "3",
                                   "stroke-linecap": "square", **_paint("stroke", colour)})


def _coordinates(parent: ET.Element, rows: int, cols: int, margin: float, flipped: bool, colour: str) -> None:
    group = ET.SubElement(parent, "g", {"class": "coordinates", "fill": "none", "stroke-width": "0.75",
                                        "stroke-linecap": "round", "stroke-linejoin": "round",
                                        **_paint("stroke", colour)})
    for path, transform in _coordinate_glyphs(rows, cols, margin, flipped):
        ET.SubElement(group, "path", {"d": path, "transform": transform})


@functools.lru_cache(maxsize=64)
def _coordinate_glyphs(rows: int, cols: int, margin: float, flipped: bool) -> tuple[tuple[str, str], ...]:
    """Every glyph of the coordinates: its path and where it goes (the same for every board of a shape)."""
    scale = 3.6  # glyph units to picture units: a digit is 25 units (a quarter of a cell) tall
    glyphs: list[tuple[str, str]] = []
    for col in range(cols):
        shown_col = cols - 1 - col if flipped else col
        glyphs += _label(chr(ord("a") + col), margin + (shown_col + 0.5) * CELL, margin / 2, scale)
    for row in range(rows):
        shown_row = rows - 1 - row if flipped else row
        glyphs += _label(str(row + 1), margin / 2, margin + (shown_row + 0.5) * CELL, scale)
    return tuple(glyphs)


def _label(text: str, centre_x: float, centre_y: float, scale: float) -> list[tuple[str, str]]:
    """``text`` in the stroke glyphs, centred on a point (digits and x-height letters alike)."""
    width = sum(_GLYPHS[c][0] for c in text) + _GLYPH_GAP * (len(text) - 1)
    x = centre_x - width * scale / 2
    glyphs = []
    for char in text:
        advance, path = _GLYPHS[char]
        middle = 3.5 if char.isdigit() else 5  # the middle of a digit, of a small letter's x-height
        y = centre_y - middle * scale
        glyphs.append((path, f"translate({_n(x)} {_n(y)}) scale({_n(scale)})"))
        x += (advance + _GLYPH_GAP) * scale
    return glyphs


def _mark(parent: ET.Element, mark: str, x: float, y: float, colour: str, kind: str,
          opacity: float | None = None) -> None:
    group = ET.SubElement(parent, "g", {"class": kind, "fill": "none", "stroke-width": "10",
                                        "stroke-linecap": "round", **_paint("stroke", colour)})
    if opacity is not None:
        group.set("opacity", _n(opacity))
    if mark == "X":
        r = CELL * 0.27
        ET.SubElement(group, "path", {"d": f"M{_n(x - r)} {_n(y - r)}L{_n(x + r)} {_n(y + r)}"
                                           f"M{_n(x + r)} {_n(y - r)}L{_n(x - r)} {_n(y + r)}"})
    else:
        ET.SubElement(group, "circle", {"cx": _n(x), "cy": _n(y), "r": _n(CELL * 0.3)})


def _ring(parent: ET.Element, x: float, y: float, colour: str, kind: str) -> None:
    ET.SubElement(parent, "circle", {"class": kind, "cx": _n(x), "cy": _n(y), "r": _n(CELL * 0.44),
                                     "fill": "none", "stroke-width": "6", **_paint("stroke", colour)})


def _strike(parent: ET.Element, centres: list[tuple[float, float]], colour: str) -> None:
    """A line through the centres of a winning line's cells, a little past the end cells."""
    (x1, y1), (x2, y2) = centres[0], centres[-1]
    length = math.hypot(x2 - x1, y2 - y1)
    if length:
        dx, dy = (x2 - x1) / length * CELL * 0.3, (y2 - y1) / length * CELL * 0.3
    else:  # k = 1: one cell, struck through left to right
        dx, dy = CELL * 0.38, 0.0
    ET.SubElement(parent, "path", {
        "class": "winning-line", "d": f"M{_n(x1 - dx)} {_n(y1 - dy)}L{_n(x2 + dx)} {_n(y2 + dy)}",
        "fill": "none", "stroke-width": "12", "stroke-linecap": "round", "opacity": "0.85",
        **_paint("stroke", colour)})


def _arrow_shape(parent: ET.Element, start: tuple[float, float], end: tuple[float, float], colour: str) -> None:
    (x1, y1), (x2, y2) = start, end
    length = math.hypot(x2 - x1, y2 - y1)
    if not length:
        _ring(parent, x1, y1, colour, "arrow")
        return
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    head_length, head_half_width, shaft = CELL * 0.35, CELL * 0.2, CELL * 0.1
    tip_x, tip_y = x2 + ux * CELL * 0.15, y2 + uy * CELL * 0.15
    base_x, base_y = tip_x - ux * head_length, tip_y - uy * head_length
    group = ET.SubElement(parent, "g", {"class": "arrow"})
    ET.SubElement(group, "path", {"d": f"M{_n(x1)} {_n(y1)}L{_n(base_x)} {_n(base_y)}", "fill": "none",
                                  "stroke-width": _n(shaft), "stroke-linecap": "butt", **_paint("stroke", colour)})
    points = [(tip_x, tip_y), (base_x - uy * head_half_width, base_y + ux * head_half_width),
              (base_x + uy * head_half_width, base_y - ux * head_half_width)]
    ET.SubElement(group, "polygon", {"points": " ".join(f"{_n(px)},{_n(py)}" for px, py in points),
                                     **_paint("fill", colour)})


# checking what was asked for ---------------------------------------------------------------

def _palette(theme: str, colours: Mapping[str, str] | None) -> dict[str, str]:
    if theme not in THEMES:
        raise NoughtsError(f"there is no picture theme {theme!r:.30}: choose {' or '.join(THEMES)}")
    palette = dict(THEMES[theme])
    for name, colour in (colours or {}).items():
        if name not in palette:
            raise NoughtsError(f"there is no colour named {name!r:.30} in a picture: "
                               f"the names are {', '.join(palette)}")
        palette[name] = _colour(colour, repr(name))
    return palette


def _colour(colour: object, what: str) -> str:
    if not isinstance(colour, str) or not colour.strip():
        raise NoughtsError(f"the colour of {what} is a text such as '#1d4f91' or 'red', not {colour!r:.30}")
    return _xml_text(colour)


def _serialised(element: ET.Element) -> str:
    """``ET.tostring(element, encoding="unicode")``, the same text, for the plain trees drawn here (no
    namespaces, no tails): ElementTree's general writer took most of the time of drawing a picture."""
    parts: list[str] = []
    _write(element, parts.append)
    return "".join(parts)


def _write(element: ET.Element, out: Callable[[str], object]) -> None:
    tag = element.tag
    out("<" + tag)
    for name, value in element.items():
        out(f' {name}="{_escaped(value, _ATTRIBUTE_ESCAPES)}"')
    text = element.text
    if text or len(element):
        out(">")
        if text:
            out(_escaped(text, _TEXT_ESCAPES))
        for child in element:
            _write(child, out)
        out(f"</{tag}>")
    else:
        out(" />")
    if element.tail:
        out(_escaped(element.tail, _TEXT_ESCAPES))


# as ElementTree escapes them ("&" first)
_TEXT_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
_ATTRIBUTE_ESCAPES = (*_TEXT_ESCAPES, ('"', "&quot;"), ("\r", "&#13;"), ("\n", "&#10;"), ("\t", "&#09;"))


def _escaped(text: str, escapes: tuple[tuple[str, str], ...]) -> str:
    for char, entity in escapes:
        if char in text:
            text = text.replace(char, entity)
    return text


def _xml_text(text: str) -> str:
    """Text XML 1.0 can hold: the characters it forbids (most control characters) become U+FFFD."""
    return _NOT_XML.sub("\ufffd", str(text))


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _size(size: int | None, cols: int, width_units: int) -> int:
    if size is None:
        return round(width_units * min(64, 640 / cols) / CELL)
    if type(size) is not int or not 1 <= size <= MAX_SIZE_PX:
        raise NoughtsError(f"a picture's size is a whole number of pixels from 1 to {MAX_SIZE_PX}, not {size!r:.20}")
    return size


def _cell(position: Board, cell: object) -> int:
    if type(cell) is int:
        if not 0 <= cell < position.size:
            raise CellSyntaxError(f"cell index {cell} is off the {position.rows}×{position.cols} board "
                                  f"(indices run from 0 to {position.size - 1})")
        return cell
    if isinstance(cell, str):
        return position.parse_cell(cell)
    raise CellSyntaxError(f"a cell is a number like 4 or a name like b2, not {cell!r:.30}")


def _arrow(arrow: object) -> tuple[object, object, str | None]:
    if isinstance(arrow, Arrow):
        return arrow.tail, arrow.head, arrow.colour
    if isinstance(arrow, tuple) and len(arrow) == 2:
        return arrow[0], arrow[1], None
    return arrow, arrow, None


def _winning_cells(position: Board, winning_line: Iterable[Cell] | bool) -> list[int]:
    if winning_line is True:
        return list(position.winning_line or ())
    if winning_line is False:
        return []
    if isinstance(winning_line, str):  # one cell's name, not a line of one-letter cells
        return [_cell(position, winning_line)]
    return sorted(_cell(position, c) for c in winning_line)


def _paint(attribute: str, colour: str) -> dict[str, str]:
    """``fill``/``stroke`` and, for ``#rrggbbaa``, its opacity (SVG 1.1 viewers do not read that form)."""
    if len(colour) == 9 and colour.startswith("#"):
        try:
            alpha = int(colour[7:], 16) / 255
        except ValueError:
            return {attribute: colour}
        return {attribute: colour[:7], f"{attribute}-opacity": _n(round(alpha, 3))}
    return {attribute: colour}


def _default_title(position: Board) -> str:
    state = (f"{position.winner} has won" if position.winner else "a draw" if position.is_draw
             else f"{position.turn} to move")
    return f"{position} ({position.rows}×{position.cols}, {position.k} in a row): {state}"


def _n(value: float) -> str:
    """A number as short as SVG allows: 50, 12.5."""
    if value == int(value):
        return str(int(value))
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
