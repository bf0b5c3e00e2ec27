"""Where things are on the robot's sheet, in millimetres, and whether the machine can reach them.

Sheet coordinates have their origin at the sheet's top-left corner, x to the right and y down
(as in SVG and in a photo). A :class:`Machine` says how big its travel is, where the sheet lies in
it and which way its y axis points; backends turn sheet points into machine points with it, and
nothing is sent that :meth:`Machine.check` refuses.

>>> sheet = Sheet(3, 3)
>>> sheet.width, sheet.height, sheet.cell_centre(4)
(120.0, 120.0, (60.0, 60.0))
>>> Machine.plotter(travel=(100, 100)).fit(3, 3).cell_mm < 30
True
>>> Machine.plotter(travel=(40, 40)).fit(9, 9)  # doctest: +ELLIPSIS
Traceback (most recent call last):
  ...
noughts.sheet.geometry.RobotError: a 9×9 sheet does not fit this machine: ...
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from noughts.errors import NoughtsError

__all__ = ["MIN_CELL_MM", "Machine", "Point", "RobotError", "Sheet", "distance"]

Point = tuple[float, float]
MIN_CELL_MM = 12.0  # smaller than this and a hand-drawn X or O stops being readable
MAX_CELL_MM = 30.0


class RobotError(NoughtsError):
    """Something the robot cannot do (a sheet that does not fit, a move outside its travel), with the reason."""


def distance(a: Point, b: Point) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


@dataclass(frozen=True)
class Sheet:
    """The layout of one game's sheet: a grid of ``rows`` × ``cols`` cells of ``cell_mm``, with a
    ``margin_mm`` border that holds the four reference markers the camera looks for."""

    rows: int
    cols: int
    cell_mm: float = MAX_CELL_MM
    margin_mm: float = 15.0
    marker_mm: float = 8.0

    def __post_init__(self) -> None:
        if self.rows < 1 or self.cols < 1:
            raise RobotError(f"a sheet needs at least one row and column, not {self.rows}×{self.cols}")
        if self.marker_mm >= self.margin_mm:
            raise RobotError("the reference markers must fit inside the margin")

    @property
    def width(self) -> float:
        return self.cols * self.cell_mm + 2 * self.margin_mm

    @property
    def height(self) -> float:
        return self.rows * self.cell_mm + 2 * self.margin_mm

    @property
    def grid_box(self) -> tuple[float, float, float, float]:
        """The playing area: left, top, right, bottom."""
        m = self.margin_mm
        return m, m, m + self.cols * self.cell_mm, m + self.rows * self.cell_mm

    def cell_box(self, cell: int) -> tuple[float, float, float, float]:
        """Cell ``cell`` (reading order from the top-left, as everywhere in noughts): left, top, right, bottom."""
        if not 0 <= cell < self.rows * self.cols:
            raise RobotError(f"cell {cell} is not on a {self.rows}×{self.cols} sheet")
        row, col = divmod(cell, self.cols)
        left = self.margin_mm + col * self.cell_mm
        top = self.margin_mm + row * self.cell_mm
        return left, top, left + self.cell_mm, top + self.cell_mm

    def cell_centre(self, cell: int) -> Point:
        left, top, right, bottom = self.cell_box(cell)
        return (left + right) / 2, (top + bottom) / 2

    def cell_at(self, point: Point) -> int | None:
        """The cell under ``point``, or None off the grid."""
        left, top, right, bottom = self.grid_box
        x, y = point
        if not (left <= x < right and top <= y < bottom):
            return None
        return int((y - top) // self.cell_mm) * self.cols + int((x - left) // self.cell_mm)

    def marker_centres(self) -> tuple[Point, Point, Point, Point]:
        """The reference markers' centres, clockwise from the top-left: half a margin outside the grid."""
        left, top, right, bottom = self.grid_box
        half = self.margin_mm / 2
        return ((left - half, top - half), (right + half, top - half),
                (right + half, bottom + half), (left - half, bottom + half))

    @property
    def tag_mm(self) -> float:
        """The side of the orientation tag: half a marker."""
        return self.marker_mm / 2

    def tag_centre(self) -> Point:
        """The orientation tag's centre: right of the top-left marker along the top margin, half a
        marker clear of it (a blurred photo still shows the gap), so a camera knows which way up
        the sheet is."""
        x, y = self.marker_centres()[0]
        return x + self.marker_mm / 2 + self.marker_mm / 2 + self.tag_mm / 2, y


@dataclass(frozen=True)
class Machine:
    """A pen robot's reach: ``travel`` (width, height in mm), the sheet's top-left corner in machine
    coordinates (``sheet_origin``), whether the machine's y grows down the sheet (``y_down``), its
    drawing and travelling speeds (mm/s) and the dwell after each pen change (s)."""

    travel: tuple[float, float]
    sheet_origin: Point = (0.0, 0.0)
    y_down: bool = True
    draw_speed: float = 25.0
    travel_speed: float = 80.0
    pen_dwell: float = 0.15
    arcs: bool = False  # the machine draws circles itself (G2/G3); else Os go as polylines

    @classmethod
    def plotter(cls, travel: tuple[float, float] = (200.0, 200.0), **settings: object) -> Machine:
        return cls(travel=(float(travel[0]), float(travel[1])), **settings)  # type: ignore[arg-type]

    def to_machine(self, point: Point) -> Point:
        """A sheet point in machine coordinates (checked against the travel)."""
        x = self.sheet_origin[0] + point[0]
        y = self.sheet_origin[1] + point[1] if self.y_down else self.sheet_origin[1] - point[1]
        self.check((x, y))
        return x, y

    def check(self, point: Point) -> None:
        x, y = point
        width, height = self.travel
        if not (-1e-6 <= x <= width + 1e-6 and -1e-6 <= y <= height + 1e-6):
            raise RobotError(f"({x:.1f}, {y:.1f}) mm is outside the machine's travel of {width:g} × {height:g} mm")

    def room(self) -> tuple[float, float]:
        """The width and height available for the sheet from its origin."""
        width, height = self.travel
        x0, y0 = self.sheet_origin
        return width - x0, (height - y0) if self.y_down else y0

    def fit(self, rows: int, cols: int) -> Sheet:
        """The largest sheet for ``rows`` × ``cols`` (cells up to 30 mm) that fits, or the reason it cannot."""
        room_w, room_h = self.room()
        margin, marker = Sheet.margin_mm, Sheet.marker_mm
        cell = min(MAX_CELL_MM, (room_w - 2 * margin) / cols, (room_h - 2 * margin) / rows)
        if cell < MIN_CELL_MM:
            need_w = cols * MIN_CELL_MM + 2 * margin
            need_h = rows * MIN_CELL_MM + 2 * margin
            raise RobotError(
                f"a {rows}×{cols} sheet does not fit this machine: it needs {need_w:g} × {need_h:g} mm "
                f"(cells of at least {MIN_CELL_MM:g} mm) and the machine has {room_w:g} × {room_h:g} mm")
        return Sheet(rows, cols, cell_mm=math.floor(cell * 10) / 10, margin_mm=margin, marker_mm=marker)
