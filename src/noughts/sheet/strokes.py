"""What the pen draws: strokes (pen-down polylines) for the grid, the markers, X, O, the seed's dot
and a shaded square, and the order that keeps pen-up travel short.

>>> sheet = Sheet(3, 3)
>>> [s.kind for s in grid_strokes(sheet)]
['grid', 'grid', 'grid', 'grid']
>>> [s.kind for s in mark_strokes(sheet, 4, "X")], len(mark_strokes(sheet, 4, "O"))
(['X', 'X'], 1)
>>> plan = plan_strokes(grid_strokes(sheet) + mark_strokes(sheet, 0, "X"), Machine.plotter())
>>> plan.pen_up_mm < plan_strokes(grid_strokes(sheet) + mark_strokes(sheet, 0, "X"), Machine.plotter(),
...                               ordered=False).pen_up_mm
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from noughts.sheet.geometry import Machine, Point, RobotError, Sheet, distance

__all__ = [
    "MARK_STYLES", "Circle", "PenPlan", "Stroke", "dot_strokes", "grid_strokes", "mark_strokes", "marker_strokes",
    "order_strokes", "plan_strokes", "shade_strokes",
]

MARK_STYLES = ("shapes", "dot")  # real X and O, or the seed's dot for either side
MARK_SIZE = 0.6  # of the cell: an X's diagonal span and an O's diameter
CIRCLE_SEGMENTS = 36
HATCH_MM = 1.0  # spacing of the lines that fill a shaded square
MARKER_HATCH_MM = 0.6  # closer for the markers, so a felt-tip fills them solid and a camera sees one black square


@dataclass(frozen=True)
class Circle:
    """An O that a machine with arcs (G2/G3) may draw as one circle instead of the polyline."""

    centre: Point
    radius: float


@dataclass(frozen=True)
class Stroke:
    """One pen-down polyline, from ``points[0]`` to ``points[-1]``. ``kind`` says what it belongs to:
    grid, marker, X, O, dot or shade."""

    points: tuple[Point, ...]
    kind: str
    circle: Circle | None = None

    def __post_init__(self) -> None:
        if len(self.points) < 2:
            raise RobotError("a stroke needs at least two points")

    @property
    def start(self) -> Point:
        return self.points[0]

    @property
    def end(self) -> Point:
        return self.points[-1]

    @property
    def length(self) -> float:
        return sum(distance(a, b) for a, b in pairwise(self.points))

    def reversed(self) -> Stroke:
        return Stroke(self.points[::-1], self.kind, self.circle)


def _line(a: Point, b: Point, kind: str) -> Stroke:
    return Stroke((a, b), kind)


def grid_strokes(sheet: Sheet) -> list[Stroke]:
    """The lines between the cells: ``cols - 1`` down, then ``rows - 1`` across (the seed draws 2 and 2)."""
    left, top, right, bottom = sheet.grid_box
    down = [_line((left + c * sheet.cell_mm, top), (left + c * sheet.cell_mm, bottom), "grid")
            for c in range(1, sheet.cols)]
    across = [_line((left, top + r * sheet.cell_mm), (right, top + r * sheet.cell_mm), "grid")
              for r in range(1, sheet.rows)]
    return down + across


def _hatch(left: float, top: float, right: float, bottom: float, kind: str, step: float = HATCH_MM) -> list[Stroke]:
    """One zig-zag stroke filling a box: across, down a step, back (the pen stays down)."""
    points: list[Point] = []
    count = max(2, int((bottom - top) / step) + 1)
    for i in range(count):
        y = top + (bottom - top) * i / (count - 1)
        points += [(left, y), (right, y)] if i % 2 == 0 else [(right, y), (left, y)]
    return [Stroke(tuple(points), kind)]


def marker_strokes(sheet: Sheet) -> list[Stroke]:
    """The four reference markers: filled squares of ``marker_mm`` in the margin's corners, and a
    second, smaller square beside the top-left one so a camera knows which way up the sheet is."""
    strokes = []
    half = sheet.marker_mm / 2
    for x, y in sheet.marker_centres():
        strokes += _hatch(x - half, y - half, x + half, y + half, "marker", MARKER_HATCH_MM)
    (x, y), quarter = sheet.tag_centre(), sheet.tag_mm / 2
    strokes += _hatch(x - quarter, y - quarter, x + quarter, y + quarter, "marker", MARKER_HATCH_MM)
    return strokes


def _circle_points(centre: Point, radius: float, segments: int = CIRCLE_SEGMENTS, start_angle: float = 0.0
                   ) -> tuple[Point, ...]:
    cx, cy = centre
    return tuple((cx + radius * math.cos(start_angle + 2 * math.pi * i / segments),
                  cy + radius * math.sin(start_angle + 2 * math.pi * i / segments)) for i in range(segments + 1))


def dot_strokes(sheet: Sheet, cell: int) -> list[Stroke]:
    """The seed's mark: a small filled dot in the cell's centre (its pen went down once and came up)."""
    centre = sheet.cell_centre(cell)
    radius = max(1.0, sheet.cell_mm * 0.04)
    return [Stroke(_circle_points(centre, radius, 12), "dot"), Stroke(_circle_points(centre, radius / 2, 8), "dot")]


def shade_strokes(sheet: Sheet, cell: int, cover: float = 0.8) -> list[Stroke]:
    """A shaded square, as the seed's human had to draw for its light sensor: ``cover`` of the cell."""
    left, top, right, bottom = sheet.cell_box(cell)
    inset = sheet.cell_mm * (1 - cover) / 2
    return _hatch(left + inset, top + inset, right - inset, bottom - inset, "shade")


def mark_strokes(sheet: Sheet, cell: int, mark: str, style: str = "shapes") -> list[Stroke]:
    """The robot's own mark in ``cell``: an X (two diagonals) or an O (a circle), or the seed's dot."""
    if style not in MARK_STYLES:
        raise RobotError(f"unknown mark style {style!r}; choose from {', '.join(MARK_STYLES)}")
    if style == "dot":
        return dot_strokes(sheet, cell)
    cx, cy = sheet.cell_centre(cell)
    half = sheet.cell_mm * MARK_SIZE / 2
    if mark == "X":
        return [_line((cx - half, cy - half), (cx + half, cy + half), "X"),
                _line((cx + half, cy - half), (cx - half, cy + half), "X")]
    if mark == "O":
        return [Stroke(_circle_points((cx, cy), half), "O", Circle((cx, cy), half))]
    raise RobotError(f"the robot draws X or O, not {mark!r}")


def order_strokes(strokes: Sequence[Stroke], start: Point = (0.0, 0.0)) -> list[Stroke]:
    """The strokes in an order (each maybe reversed) with short pen-up travel: nearest neighbour
    from ``start``, then 2-opt (reversing runs of strokes) until nothing improves."""
    left = list(strokes)
    route: list[Stroke] = []
    here = start
    while left:
        best_index, best_reverse, best_gap = 0, False, math.inf
        for index, stroke in enumerate(left):
            for reverse, entry in ((False, stroke.start), (True, stroke.end)):
                gap = distance(here, entry)
                if gap < best_gap:
                    best_index, best_reverse, best_gap = index, reverse, gap
        chosen = left.pop(best_index)
        chosen = chosen.reversed() if best_reverse else chosen
        route.append(chosen)
        here = chosen.end
    return _two_opt(route, start)


def _two_opt(route: list[Stroke], start: Point) -> list[Stroke]:
    """Reverse any run of strokes (each stroke reversed too) that shortens the pen-up travel."""
    improved = True
    passes = 0
    while improved and passes < 50:
        improved = False
        passes += 1
        for i in range(len(route) - 1):
            before = route[i - 1].end if i > 0 else start
            for j in range(i + 1, len(route)):
                after = route[j + 1].start if j + 1 < len(route) else None
                old = distance(before, route[i].start) + (distance(route[j].end, after) if after else 0.0)
                new = distance(before, route[j].end) + (distance(route[i].start, after) if after else 0.0)
                if new < old - 1e-9:
                    route[i:j + 1] = [s.reversed() for s in reversed(route[i:j + 1])]
                    improved = True
    return route


@dataclass(frozen=True)
class PenPlan:
    """The pen's whole plan for one step: the strokes in drawing order, how far it travels with the
    pen down and up, how many times the pen is lifted, and the time that should take."""

    strokes: tuple[Stroke, ...]
    start: Point
    finish: Point
    pen_down_mm: float
    pen_up_mm: float
    pen_lifts: int
    seconds: float

    def describe(self) -> str:
        return (f"{len(self.strokes)} strokes: {self.pen_down_mm:.0f} mm drawn, {self.pen_up_mm:.0f} mm pen-up travel, "
                f"{self.pen_lifts} pen lifts, about {self.seconds:.0f} s")


def plan_strokes(strokes: Sequence[Stroke], machine: Machine, start: Point = (0.0, 0.0), *,
                 ordered: bool = True, finish: Point | None = None) -> PenPlan:
    """The plan for ``strokes`` from ``start`` (ordered to cut pen-up travel unless ``ordered`` is
    False), ending at ``finish`` (default: where the last stroke ends)."""
    route = order_strokes(strokes, start) if ordered else list(strokes)
    here = start
    up = down = 0.0
    for stroke in route:
        up += distance(here, stroke.start)
        down += stroke.length
        here = stroke.end
    end = finish if finish is not None else here
    up += distance(here, end)
    seconds = down / machine.draw_speed + up / machine.travel_speed + 2 * len(route) * machine.pen_dwell
    return PenPlan(tuple(route), start, end, down, up, len(route), seconds)
