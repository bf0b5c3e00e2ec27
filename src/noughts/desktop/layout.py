"""Where everything goes in the window, computed from its size alone.

Pure functions of plain numbers (no pygame), so the geometry can be tested on its own and the
drawing code and the click handling always agree on it.

>>> geometry = board_geometry(Box(0, 0, 300, 300), 3, 3)
>>> geometry.cell, geometry.cell_at((150, 150)), geometry.cell_at((299, 0)), geometry.cell_at((301, 5))
(100, 4, 2, None)
>>> layout = game_layout(640, 760, 3, 3)
>>> layout.board.cell_at(layout.board.centre(8))
8
>>> layout.target_at(layout.buttons["undo"].centre)
('button', 'undo')
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Box", "BoardGeometry", "GameLayout", "MIN_SIZE", "StartLayout", "Target", "board_geometry",
    "game_layout", "start_layout",
]

MIN_SIZE = (320, 400)  # smaller than this and the text no longer fits; the window is kept at least this big

# What a point in the window is over: ("cell", index), ("button", name), ("opponent", name), ("side", key),
# ("board", step), ("name", "0" or "1").
Target = tuple[str, int] | tuple[str, str]


@dataclass(frozen=True)
class Box:
    """A rectangle in window pixels: left, top, width, height."""

    x: int
    y: int
    w: int
    h: int

    @property
    def right(self) -> int:
        return self.x + self.w

    @property
    def bottom(self) -> int:
        return self.y + self.h

    @property
    def centre(self) -> tuple[int, int]:
        return self.x + self.w // 2, self.y + self.h // 2

    def contains(self, pos: tuple[int, int]) -> bool:
        return self.x <= pos[0] < self.right and self.y <= pos[1] < self.bottom

    def inset(self, by: int) -> Box:
        return Box(self.x + by, self.y + by, max(0, self.w - 2 * by), max(0, self.h - 2 * by))


@dataclass(frozen=True)
class BoardGeometry:
    """The board: ``rows``×``cols`` square cells of ``cell`` pixels, top-left at ``box``, with a
    band ``band`` pixels deep above it (column letters) and to its left (row numbers)."""

    box: Box
    rows: int
    cols: int
    cell: int
    band: int = 0

    def column_label(self, col: int) -> Box:
        """Where column ``col``'s letter goes: above the board, over the column."""
        return Box(self.box.x + col * self.cell, self.box.y - self.band, self.cell, self.band)

    def row_label(self, row: int) -> Box:
        """Where row ``row``'s number goes: left of the board, beside the row."""
        return Box(self.box.x - self.band, self.box.y + row * self.cell, self.band, self.cell)

    def cell_box(self, index: int) -> Box:
        row, col = divmod(index, self.cols)
        return Box(self.box.x + col * self.cell, self.box.y + row * self.cell, self.cell, self.cell)

    def centre(self, index: int) -> tuple[int, int]:
        return self.cell_box(index).centre

    def cell_at(self, pos: tuple[int, int]) -> int | None:
        """The cell under a point, or ``None`` off the board."""
        if not self.box.contains(pos) or self.cell <= 0:
            return None
        col = (pos[0] - self.box.x) // self.cell
        row = (pos[1] - self.box.y) // self.cell
        return row * self.cols + col

    @property
    def grid_width(self) -> int:
        """Thickness of the lines between cells."""
        return max(2, self.cell // 28)

    @property
    def mark_width(self) -> int:
        """Stroke width of X and O."""
        return max(3, self.cell // 10)

    @property
    def o_radius(self) -> int:
        """Radius of an O's ring, to the outside of its stroke."""
        return max(2, int(self.cell * 0.31))

    @property
    def x_reach(self) -> int:
        """Half the width of an X, from its centre to the end of a stroke."""
        return max(2, int(self.cell * 0.27))

    @property
    def strike_width(self) -> int:
        return max(4, self.cell // 13)

    def strike_ends(self, line: tuple[int, ...]) -> tuple[tuple[float, float], tuple[float, float]]:
        """The ends of the stroke through a winning line: past its end cells' centres, inside the cells."""
        (x0, y0), (x1, y1) = self.centre(line[0]), self.centre(line[-1])
        dx, dy = x1 - x0, y1 - y0
        length = max(1.0, (dx * dx + dy * dy) ** 0.5)
        reach = self.cell * 0.36
        ux, uy = dx / length * reach, dy / length * reach
        return (x0 - ux, y0 - uy), (x1 + ux, y1 + uy)


def board_geometry(area: Box, rows: int, cols: int, labels: bool = False) -> BoardGeometry:
    """The largest board of square cells that fits ``area``, centred in it; with ``labels``, room
    for the column letters above it and the row numbers beside it (on both sides, so that the
    board stays centred)."""
    cell = max(1, min(area.w // cols, area.h // rows))
    band = 0
    if labels:  # the labels scale with the cells, and stay legible on a 26×26 board
        band = _clamp(cell * 0.45, LABEL_BAND[0], LABEL_BAND[1])
        cell = max(1, min((area.w - 2 * band) // cols, (area.h - band) // rows))
    w, h = cell * cols, cell * rows
    y = area.y + band + (area.h - band - h) // 2
    return BoardGeometry(Box(area.x + (area.w - w) // 2, y, w, h), rows, cols, cell, band)


LABEL_BAND = (22, 36)  # the depth of the coordinates' band round the board, in pixels


def _clamp(value: float, low: int, high: int) -> int:
    return int(max(low, min(high, value)))


@dataclass(frozen=True)
class GameLayout:
    """The game screen: header (whose game, the result banner), board, status line, buttons, scores."""

    size: tuple[int, int]
    header: Box
    board: BoardGeometry
    status: Box
    buttons: dict[str, Box]
    info: Box

    def target_at(self, pos: tuple[int, int]) -> Target | None:
        for name, box in self.buttons.items():
            if box.contains(pos):
                return ("button", name)
        cell = self.board.cell_at(pos)
        return ("cell", cell) if cell is not None else None


GAME_BUTTONS = ("menu", "undo", "hint", "again")


def game_layout(width: int, height: int, rows: int, cols: int) -> GameLayout:
    """The game screen for a window of ``width``×``height``: the board takes whatever is left."""
    margin = max(6, min(width, height) // 40)
    header_h = _clamp(height * 0.085, 30, 72)
    status_h = _clamp(height * 0.085, 34, 64)
    buttons_h = _clamp(height * 0.065, 28, 48)
    info_h = _clamp(height * 0.075, 30, 56)
    content_w = min(width - 2 * margin, 900)  # text lines much wider than this are hard to read
    left = (width - content_w) // 2
    y = margin
    header = Box(left, y, content_w, header_h)
    y += header_h + margin // 2
    board_h = height - y - margin // 2 - status_h - buttons_h - info_h - 2 * margin
    board = board_geometry(Box(margin, y, width - 2 * margin, max(1, board_h)), rows, cols, labels=True)
    y = board.box.bottom + margin // 2 + max(0, board_h - board.band - board.box.h) // 2
    status = Box(left, y, content_w, status_h)
    y += status_h + margin // 2
    row_w = min(content_w, 640)
    gap = margin
    each = (row_w - gap * (len(GAME_BUTTONS) - 1)) // len(GAME_BUTTONS)
    x0 = (width - (each * len(GAME_BUTTONS) + gap * (len(GAME_BUTTONS) - 1))) // 2
    buttons = {name: Box(x0 + i * (each + gap), y, each, buttons_h) for i, name in enumerate(GAME_BUTTONS)}
    y += buttons_h + margin
    info = Box(left, y, content_w, info_h)
    return GameLayout((width, height), header, board, status, buttons, info)


@dataclass(frozen=True)
class StartLayout:
    """The start screen: title, opponent grid and its description, the side to play, Play/Resume, notes."""

    size: tuple[int, int]
    title: Box
    subtitle: Box
    opponent_label: Box
    opponents: tuple[Box, ...]
    description: Box
    side_label: Box
    sides: tuple[Box, ...]
    play: Box
    resume: Box | None
    notes: Box
    # the board: for rows, columns and k, a box showing the number between − and + buttons
    board_labels: tuple[Box, ...] = ()
    board_steps: tuple[tuple[str, Box], ...] = ()  # ("rows-", box), ("rows+", box), …
    # the two people's names (when two people play): a label, then a field for each
    names_label: Box | None = None
    name_fields: tuple[Box, ...] = ()

    def target_at(self, pos: tuple[int, int], opponents: tuple[str, ...] = (),
                  sides: tuple[str, ...] = ()) -> Target | None:
        """``opponents`` and ``sides`` name the boxes, in order."""
        for step, box in self.board_steps:
            if box.contains(pos):
                return ("board", step)
        for seat, box in enumerate(self.name_fields):
            if box.contains(pos):
                return ("name", str(seat))
        for name, box in zip(opponents, self.opponents, strict=False):
            if box.contains(pos):
                return ("opponent", name)
        for key, box in zip(sides, self.sides, strict=False):
            if box.contains(pos):
                return ("side", key)
        if self.play.contains(pos):
            return ("button", "play")
        if self.resume is not None and self.resume.contains(pos):
            return ("button", "resume")
        return None


def _grid(area_x: int, y: int, width: int, rows: list[int], h: int, gap: int) -> tuple[list[Box], int]:
    """Boxes in rows of the given lengths, each row as wide as ``width`` would allow its number of boxes
    (the boxes of a shorter last row keep the width of the row above, centred); returns them and the y below."""
    boxes: list[Box] = []
    widest = 0
    for row, count in enumerate(rows):
        each = (width - gap * (count - 1)) // count
        if row > 0 and count < rows[row - 1]:
            each = widest  # a short last row: boxes as wide as those above, centred
        widest = each
        x0 = area_x + (width - (each * count + gap * (count - 1))) // 2
        top = y + row * (h + gap)
        boxes.extend(Box(x0 + col * (each + gap), top, each, h) for col in range(count))
    return boxes, y + len(rows) * h + (len(rows) - 1) * gap


def _rows(count: int, per_row: int) -> list[int]:
    return [min(per_row, count - start) for start in range(0, count, per_row)]


def _side_rows(count: int) -> list[int]:
    """Who starts: the two that name a person on a row of their own (a name can be long), the rest by three."""
    return [min(2, count), *_rows(count - 2, 3)] if count > 2 else [count]


def start_layout(width: int, height: int, n_opponents: int, n_sides: int, resume: bool = False,
                 names: bool = False) -> StartLayout:
    """The start screen for a window of ``width``×``height`` (with ``names``: a row of two name fields).

    Every height is a multiple of one unit, chosen so that the whole screen fits the window
    (nothing is ever cut off) and capped so that a tall window centres a screen of normal size.
    """
    margin = max(8, min(width, height) // 32)
    content_w = min(width - 2 * margin, 820)
    left = (width - content_w) // 2
    per_row = 4 if content_w >= 700 else 3  # labels such as "Newell–Simon rules" need the width
    opp_rows = len(_rows(n_opponents, per_row))
    side_rows = len(_side_rows(n_sides))
    button, gap = 0.85, 0.2
    parts = {  # in units, top to bottom
        "title": 1.3, "subtitle": 0.55, "space0": 0.35, "board": button, "space1": 0.35,
        "opponent_label": 0.6, "space2": gap,
        "opponents": opp_rows * button + (opp_rows - 1) * gap, "space3": gap, "description": 0.95,
        **({"space_names": gap, "names": button} if names else {}),
        "space4": 0.3, "side_label": 0.6, "space5": gap, "sides": side_rows * button + (side_rows - 1) * gap,
        "space6": 0.45, "play": 1.05, "space7": 0.3, "notes": 1.6,
    }
    unit = min((height - 2 * margin) / sum(parts.values()), 58.0)
    y = margin + (height - 2 * margin - unit * sum(parts.values())) / 2
    boxes: dict[str, Box] = {}
    tops: dict[str, float] = {}
    for name, share in parts.items():
        tops[name] = y
        boxes[name] = Box(left, round(y), content_w, round(share * unit))
        y += share * unit
    button_h, gap_px = round(button * unit), max(2, round(gap * unit))
    opponents, _ = _grid(left, round(tops["opponents"]), content_w, _rows(n_opponents, per_row), button_h, gap_px)
    sides, _ = _grid(left, round(tops["sides"]), content_w, _side_rows(n_sides), button_h, gap_px)
    play_row = boxes["play"]
    play_w = min(content_w, 260 if not resume else 520)
    x0 = (width - play_w) // 2
    if resume:
        half = (play_w - gap_px) // 2
        resume_box: Box | None = Box(x0, play_row.y, half, play_row.h)
        play = Box(x0 + half + gap_px, play_row.y, half, play_row.h)
    else:
        resume_box = None
        play = Box(x0, play_row.y, play_w, play_row.h)
    # three groups side by side: [−] rows [+]   [−] columns [+]   [−] in a row [+]
    row = boxes["board"]
    group_w = (content_w - 2 * gap_px * 2) // 3
    step_w = min(row.h, group_w // 4)
    labels, steps = [], []
    for n, what in enumerate(BOARD_STEPS):
        x = left + n * (group_w + 2 * gap_px)
        steps.append((f"{what}-", Box(x, row.y, step_w, row.h)))
        labels.append(Box(x + step_w, row.y, group_w - 2 * step_w, row.h))
        steps.append((f"{what}+", Box(x + group_w - step_w, row.y, step_w, row.h)))
    names_label: Box | None = None
    fields: tuple[Box, ...] = ()
    if names:  # Names  [first person]  [second person]
        row = boxes["names"]
        label_w = content_w // 5
        field_w = (content_w - label_w - 2 * gap_px) // 2
        names_label = Box(left, row.y, label_w, row.h)
        fields = tuple(Box(left + label_w + gap_px + n * (field_w + gap_px), row.y, field_w, row.h) for n in (0, 1))
    return StartLayout((width, height), boxes["title"], boxes["subtitle"], boxes["opponent_label"],
                       tuple(opponents), boxes["description"], boxes["side_label"], tuple(sides), play,
                       resume_box, boxes["notes"], tuple(labels), tuple(steps), names_label, fields)


BOARD_STEPS = ("rows", "cols", "k")
