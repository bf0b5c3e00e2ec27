"""Drawing: a :class:`~noughts.desktop.controller.ViewState` onto a pygame surface.

Everything is drawn from the view and the surface's size (the geometry comes from
:mod:`noughts.desktop.layout`), nothing is remembered between frames except fonts, so any
window size draws crisply: X and O are vector strokes scaled to the cell, anti-aliased.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # no banner on the person's terminal

import pygame

from noughts.desktop.controller import ViewState
from noughts.desktop.layout import (
    BoardGeometry,
    Box,
    GameLayout,
    StartLayout,
    Target,
    game_layout,
    start_layout,
)
from noughts.text import MARK_COLOURS, WINDOW_WORDS

__all__ = [
    "BACKGROUND", "CELL", "COLOURS", "GRID", "HINT", "HOVER", "LAST", "O_COLOUR", "PLAIN_MARK", "STRIKE",
    "X_COLOUR", "Palette", "draw", "forget_fonts", "layout_for", "palette", "target_at",
]

Colour = tuple[int, int, int]


def _rgb(hex_colour: str) -> Colour:
    return int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16)


BACKGROUND: Colour = (243, 239, 230)  # warm paper
CELL: Colour = (253, 251, 246)
GRID: Colour = (72, 76, 96)
X_COLOUR: Colour = _rgb(MARK_COLOURS["X"])  # the one pair of mark colours every front end uses
O_COLOUR: Colour = _rgb(MARK_COLOURS["O"])
HOVER: Colour = (229, 234, 242)
LAST: Colour = (255, 238, 184)
HINT: Colour = (198, 236, 196)
STRIKE: Colour = (36, 38, 50)
TEXT: Colour = (38, 40, 52)
MUTED: Colour = (112, 114, 128)
FAINT: Colour = (176, 176, 184)
BUTTON: Colour = (226, 221, 208)
BUTTON_HOVER: Colour = (214, 208, 192)
SELECTED: Colour = (52, 86, 150)
SELECTED_TEXT: Colour = (255, 255, 255)
PLAY: Colour = (46, 138, 86)
PROBLEM: Colour = (178, 52, 46)
TONES: dict[str, Colour] = {"win": (40, 138, 80), "loss": (196, 58, 52), "draw": (92, 96, 116), "none": MUTED}
COLOURS = {"X": X_COLOUR, "O": O_COLOUR}
PLAIN_MARK: Colour = (58, 60, 72)  # with NO_COLOR: both marks in one plain ink, told apart by their shapes


@dataclass(frozen=True)
class Palette:
    """The colours that carry meaning; with NO_COLOR they are all greys, and shapes and words carry it."""

    marks: dict[str, Colour]
    last: Colour
    hint: Colour
    tones: dict[str, Colour]
    selected: Colour
    play: Colour
    problem: Colour


COLOURED = Palette(COLOURS, LAST, HINT, TONES, SELECTED, PLAY, PROBLEM)
PLAIN = Palette({"X": PLAIN_MARK, "O": PLAIN_MARK}, (236, 234, 228), (214, 212, 206),
                {tone: TEXT for tone in TONES}, (70, 72, 84), (70, 72, 84), TEXT)


def palette(view: ViewState) -> Palette:
    return COLOURED if view.colour else PLAIN


def layout_for(view: ViewState, size: tuple[int, int]) -> GameLayout | StartLayout:
    """The geometry of the screen ``view`` shows, in a window of ``size``."""
    width, height = size
    if view.screen == "game":
        return game_layout(width, height, view.board.rows, view.board.cols)
    return start_layout(width, height, len(view.opponents), len(view.sides), view.can_resume,
                        names=view.names is not None)


def target_at(view: ViewState, size: tuple[int, int], pos: tuple[int, int]) -> Target | None:
    """What a click at ``pos`` would hit."""
    layout = layout_for(view, size)
    if isinstance(layout, GameLayout):
        return layout.target_at(pos)
    return layout.target_at(pos, tuple(c.key for c in view.opponents), tuple(c.key for c in view.sides))


def draw(surface: pygame.Surface, view: ViewState) -> None:
    """Draw one whole frame."""
    surface.fill(BACKGROUND)
    layout = layout_for(view, surface.get_size())
    if isinstance(layout, GameLayout):
        _draw_game(surface, view, layout)
    else:
        _draw_start(surface, view, layout)


# text ------------------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def _font(size: int) -> pygame.font.Font:
    return pygame.font.Font(None, size)  # pygame's bundled font: the same on every machine


def forget_fonts() -> None:
    """Drop the cached fonts: they die with ``pygame.font.quit()``."""
    _font.cache_clear()
    _fitting_size.cache_clear()
    _coordinate_size.cache_clear()
    _paragraph_layout.cache_clear()


@lru_cache(maxsize=512)
def _fitting_size(text: str, width: int, height: int) -> int:
    """The biggest font size whose rendering of ``text`` fits ``width``×``height``."""
    low, high = 8, max(9, height * 2)
    while low < high:  # binary search: the rendered size grows with the font size
        middle = (low + high + 1) // 2
        w, h = _font(middle).size(text)
        if w <= width and h <= height:
            low = middle
        else:
            high = middle - 1
    return low


def _blit_text(surface: pygame.Surface, text: str, box: Box, colour: Colour, *, size: int | None = None,
               align: str = "centre") -> None:
    """One line of text in ``box``, vertically centred, shrunk to fit if need be."""
    if not text or box.w <= 0 or box.h <= 0:
        return
    fit = _fitting_size(text, box.w, box.h)
    image = _font(min(size, fit) if size is not None else fit).render(text, True, colour)
    y = box.y + (box.h - image.get_height()) // 2
    x = (box.x if align == "left" else box.right - image.get_width() if align == "right"
         else box.x + (box.w - image.get_width()) // 2)
    surface.blit(image, (x, y))


def _wrap(text: str, font: pygame.font.Font, width: int) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        trial = f"{current} {word}" if current else word
        if current and font.size(trial)[0] > width:
            lines.append(current)
            current = word
        else:
            current = trial
    if current:
        lines.append(current)
    return lines


def _paragraph(surface: pygame.Surface, text: str, box: Box, colour: Colour, *, max_size: int,
               align: str = "centre") -> None:
    """Text wrapped to ``box``: the font shrinks until every line fits, nothing is cut off."""
    if not text or box.w <= 0 or box.h <= 0:
        return
    size, lines, height = _paragraph_layout(text, box.w, box.h, max_size)
    font = _font(size)
    y = box.y + (box.h - height) // 2
    for line in lines:
        image = font.render(line, True, colour)
        x = box.x if align == "left" else box.x + (box.w - image.get_width()) // 2
        surface.blit(image, (x, y))
        y += font.get_linesize()


@lru_cache(maxsize=256)
def _paragraph_layout(text: str, width: int, height: int, max_size: int) -> tuple[int, tuple[str, ...], int]:
    """The font size, the lines and their height of ``text`` wrapped to ``width``×``height`` (see
    _paragraph): worked out once, not measured word by word and size by size in every frame."""
    size = max_size
    while True:
        font = _font(size)
        lines = _wrap(text, font, width)
        total = len(lines) * font.get_linesize()
        widest = max(font.size(line)[0] for line in lines)
        if (total <= height and widest <= width) or size <= 9:
            return size, tuple(lines), total
        size -= 1


def _label_box(box: Box) -> Box:
    pad = max(4, box.h // 7)
    return Box(box.x + pad, box.y + pad // 2, box.w - 2 * pad, box.h - pad)


def _group_size(labels: list[str], boxes: list[Box]) -> int:
    """One font size for a row of buttons, so that their labels match: the largest all of them fit."""
    sizes = [min(_fitting_size(text, inner.w, inner.h), int(box.h * 0.72))
             for text, box in zip(labels, boxes, strict=False) for inner in (_label_box(box),)]
    return min(sizes, default=12)


def _button(surface: pygame.Surface, box: Box, text: str, *, enabled: bool = True, selected: bool = False,
            hovered: bool = False, fill: Colour | None = None, size: int | None = None,
            selected_fill: Colour = SELECTED) -> None:
    rect = pygame.Rect(box.x, box.y, box.w, box.h)
    radius = max(4, box.h // 4)
    colour = fill or (selected_fill if selected else BUTTON_HOVER if hovered else BUTTON)
    pygame.draw.rect(surface, colour, rect, border_radius=radius)
    if hovered and enabled and fill is not None:
        pygame.draw.rect(surface, TEXT, rect, width=2, border_radius=radius)
    ink = (SELECTED_TEXT if (selected or fill is not None) and enabled else FAINT if selected
           else TEXT if enabled else FAINT)
    _blit_text(surface, text, _label_box(box), ink, size=size or int(box.h * 0.72))


# the board ---------------------------------------------------------------------------------------
def _thick_line(surface: pygame.Surface, colour: Colour, start: tuple[float, float], end: tuple[float, float],
                width: int) -> None:
    """An anti-aliased stroke of the same ``width`` at any angle, with round ends.

    pygame's own wide lines are measured along an axis, so diagonals come out thinner: the
    stroke is drawn as a polygon offset perpendicular to it, its edges smoothed by aalines.
    """
    (x0, y0), (x1, y1) = start, end
    dx, dy = x1 - x0, y1 - y0
    length = max(1e-6, (dx * dx + dy * dy) ** 0.5)
    half = width / 2
    nx, ny = -dy / length * half, dx / length * half
    corners = [(x0 + nx, y0 + ny), (x1 + nx, y1 + ny), (x1 - nx, y1 - ny), (x0 - nx, y0 - ny)]
    pygame.draw.polygon(surface, colour, corners)
    pygame.draw.aalines(surface, colour, True, corners)
    for point in (start, end):
        pygame.draw.aacircle(surface, colour, point, half)


def draw_mark(surface: pygame.Surface, mark: str, centre: tuple[int, int], geometry: BoardGeometry,
              colours: Palette = COLOURED) -> None:
    """X (a cross) or O (a ring), scaled to the cell, centred on ``centre``: the shape tells them apart
    without the colour."""
    cx, cy = centre
    width = geometry.mark_width
    ink = colours.marks[mark]
    if mark == "X":
        reach = geometry.x_reach
        _thick_line(surface, ink, (cx - reach, cy - reach), (cx + reach, cy + reach), width)
        _thick_line(surface, ink, (cx - reach, cy + reach), (cx + reach, cy - reach), width)
    else:
        pygame.draw.aacircle(surface, ink, centre, geometry.o_radius, width)


def draw_board(surface: pygame.Surface, view: ViewState, geometry: BoardGeometry) -> None:
    board = view.board
    colours = palette(view)
    for cell in range(board.size):
        box = geometry.cell_box(cell)
        fill = (colours.hint if cell == view.hint else colours.last if cell == view.last
                else HOVER if cell == view.hover else CELL)
        pygame.draw.rect(surface, fill, pygame.Rect(box.x, box.y, box.w, box.h))
    grid = geometry.grid_width
    outer = geometry.box
    for col in range(1, board.cols):  # the lines between cells only, as on paper
        x = outer.x + col * geometry.cell - grid // 2
        pygame.draw.rect(surface, GRID, pygame.Rect(x, outer.y, grid, outer.h))
    for row in range(1, board.rows):
        y = outer.y + row * geometry.cell - grid // 2
        pygame.draw.rect(surface, GRID, pygame.Rect(outer.x, y, outer.w, grid))
    if view.cursor is not None:
        box = geometry.cell_box(view.cursor).inset(grid + 2)
        pygame.draw.rect(surface, colours.selected, pygame.Rect(box.x, box.y, box.w, box.h),
                         width=max(2, grid), border_radius=max(2, box.w // 16))
    for cell, mark in enumerate(board.cells):
        if mark is not None:
            draw_mark(surface, mark, geometry.centre(cell), geometry, colours)
    draw_coordinates(surface, geometry)
    if view.line:
        start, end = geometry.strike_ends(view.line)
        # a paper-coloured edge first, so the stroke stands clear of the marks it crosses
        _thick_line(surface, CELL, start, end, geometry.strike_width + 2 * max(2, geometry.strike_width // 3))
        _thick_line(surface, STRIKE, start, end, geometry.strike_width)


def draw_coordinates(surface: pygame.Surface, geometry: BoardGeometry) -> None:
    """Column letters above the board and row numbers beside it: the names the hints, the results and
    the keyboard use (a1 top-left), as the terminal and the web page show them."""
    if geometry.band <= 0:
        return
    size = _coordinate_size(geometry.rows, geometry.cols, geometry.cell, geometry.band)
    for col in range(geometry.cols):
        _blit_text(surface, chr(ord("a") + col), geometry.column_label(col), MUTED, size=size)
    for row in range(geometry.rows):
        box = geometry.row_label(row)
        _blit_text(surface, str(row + 1), Box(box.x, box.y, box.w - max(2, box.w // 6), box.h), MUTED, size=size,
                   align="right")


@lru_cache(maxsize=64)
def _coordinate_size(rows: int, cols: int, cell: int, band: int) -> int:
    """One font size for all the coordinates: the widest row number fits the band, a letter the cell."""
    widest = str(rows)
    return min(_fitting_size(widest, band - max(2, band // 6) - 1, min(cell, band)),
               _fitting_size("m", max(1, cell - 2), band - 2), int(band * 0.9))


def _draw_names(surface: pygame.Surface, view: ViewState, layout: StartLayout, label_size: int) -> None:
    """The two people's names as fields: the one being typed into outlined, with a caret."""
    assert view.names is not None and layout.names_label is not None
    _blit_text(surface, WINDOW_WORDS["names"], layout.names_label, TEXT, align="left", size=label_size)
    colours = palette(view)
    for seat, (name, box) in enumerate(zip(view.names, layout.name_fields, strict=False)):
        rect = pygame.Rect(box.x, box.y, box.w, box.h)
        radius = max(4, box.h // 6)
        focused = view.name_focus == seat
        pygame.draw.rect(surface, CELL, rect, border_radius=radius)
        outline = colours.selected if focused else BUTTON_HOVER if view.pointer == ("name", str(seat)) else FAINT
        pygame.draw.rect(surface, outline, rect, width=3 if focused else 2, border_radius=radius)
        pad = max(6, box.h // 4)
        inner = Box(box.x + pad, box.y + 2, box.w - 2 * pad, box.h - 4)
        size = min(int(box.h * 0.72), _fitting_size("Mg", inner.w, inner.h))
        font = _font(size)
        shown = name + ("|" if focused else "")
        while shown and font.size(shown)[0] > inner.w:  # a long name shows its end, where the typing is
            shown = shown[1:]
        _blit_text(surface, shown, inner, TEXT, size=size, align="left")


# screens -----------------------------------------------------------------------------------------
def _draw_game(surface: pygame.Surface, view: ViewState, layout: GameLayout) -> None:
    colours = palette(view)
    if view.banner:
        _blit_text(surface, view.banner, layout.header, colours.tones[view.tone])
    else:
        _blit_text(surface, view.header, layout.header.inset(layout.header.h // 5), TEXT)
    draw_board(surface, view, layout.board)
    _paragraph(surface, view.status, layout.status, TEXT, max_size=max(14, layout.status.h // 2))
    boxes = [layout.buttons[button.name] for button in view.buttons]
    size = _group_size([button.label for button in view.buttons], boxes)
    for button, box in zip(view.buttons, boxes, strict=True):
        _button(surface, box, button.label, enabled=button.enabled, size=size,
                hovered=view.pointer == ("button", button.name), fill=colours.play if button.primary else None)
    info = layout.info
    half = info.h // 2
    _blit_text(surface, view.tally, Box(info.x, info.y, info.w, half), TEXT, size=int(half * 1.1))
    _blit_text(surface, view.scores, Box(info.x, info.y + half, info.w, info.h - half), MUTED,
               size=int(half * 1.1))


def _draw_start(surface: pygame.Surface, view: ViewState, layout: StartLayout) -> None:
    colours = palette(view)
    _draw_title(surface, layout.title, colours)
    _blit_text(surface, WINDOW_WORDS["subtitle"], layout.subtitle, MUTED)
    board = view.board
    words = tuple(WINDOW_WORDS[what].format(n=n) for what, n in (("rows", board.rows), ("cols", board.cols),
                                                                 ("k", board.k)))
    step_size = _group_size(["−", "+"], [box for _, box in layout.board_steps])
    for (step, box) in layout.board_steps:
        _button(surface, box, "−" if step.endswith("-") else "+", size=step_size,
                hovered=view.pointer == ("board", step))
    size = _group_size(list(words), list(layout.board_labels))
    for text, box in zip(words, layout.board_labels, strict=False):
        _blit_text(surface, text, box, TEXT, size=size)
    label_size = min(30, int(layout.opponent_label.h * 1.1))
    _blit_text(surface, WINDOW_WORDS["play_against"], layout.opponent_label, TEXT, align="left", size=label_size)
    size = _group_size([c.label for c in view.opponents], list(layout.opponents))
    for choice, box in zip(view.opponents, layout.opponents, strict=False):
        _button(surface, box, choice.label, selected=choice.selected, size=size, enabled=choice.enabled,
                hovered=view.pointer == ("opponent", choice.key), selected_fill=colours.selected)
    # why Play was refused, else what the chosen opponent does
    _paragraph(surface, view.problem or view.description, layout.description,
               colours.problem if view.problem else MUTED, max_size=min(26, max(12, int(layout.description.h * 0.62))))
    if view.names is not None and layout.names_label is not None:
        _draw_names(surface, view, layout, label_size)
    _blit_text(surface, view.side_heading, layout.side_label, TEXT, align="left", size=label_size)
    size = _group_size([c.label for c in view.sides], list(layout.sides))
    for choice, box in zip(view.sides, layout.sides, strict=False):
        _button(surface, box, choice.label, selected=choice.selected, size=size,
                hovered=view.pointer == ("side", choice.key), selected_fill=colours.selected)
    # with a game to resume, Play starts another one: say so
    _button(surface, layout.play, WINDOW_WORDS["new_game" if view.can_resume else "play"], fill=colours.play,
            hovered=view.pointer == ("button", "play"))
    if layout.resume is not None:
        _button(surface, layout.resume, WINDOW_WORDS["resume"], fill=colours.selected,
                hovered=view.pointer == ("button", "resume"))
    notes = layout.notes
    tally = WINDOW_WORDS["session"].format(tally=view.tally) if view.tally else ""
    sentences = " ".join(text if text.endswith((".", "…", "!", "?")) else f"{text}."
                         for text in (view.notes, tally, view.scores) if text)
    _paragraph(surface, sentences, notes, MUTED, max_size=max(14, min(26, notes.h // 3)))


def _draw_title(surface: pygame.Surface, box: Box, colours: Palette) -> None:
    """"noughts" with its o's drawn as noughts and an X beside it, as a small logo."""
    text_box = Box(box.x, box.y, box.w, box.h)
    size = _fitting_size("noughts", box.w // 2, int(box.h * 0.95))
    font = _font(size)
    image = font.render("noughts", True, TEXT)
    mark = int(image.get_height() * 0.8)
    total = image.get_width() + mark * 2 + mark // 2
    x = text_box.x + (text_box.w - total) // 2
    y = text_box.y + (text_box.h - image.get_height()) // 2
    mini = BoardGeometry(Box(x, y, mark, mark), 1, 1, mark)
    draw_mark(surface, "X", (x + mark // 2, y + image.get_height() // 2), mini, colours)
    surface.blit(image, (x + mark + mark // 4, y))
    draw_mark(surface, "O", (x + mark + mark // 2 + image.get_width() + mark // 2, y + image.get_height() // 2), mini,
              colours)
