"""The paper model: every line of ink on the sheet, who drew it, and what a sensor would see.

Every backend's pen-down moves end up here (the simulators land them on the same model), the
simulated human draws here, and the light sensor and the synthetic camera read from here. It is
drawn as SVG with the standard library only (like python-chess's ``chess.svg``).

>>> paper = Paper(Sheet(3, 3))
>>> paper.draw(((40.0, 40.0), (50.0, 50.0)), by="human")
>>> round(paper.darkness((45.0, 45.0), 1.0), 2) > 0.3, paper.darkness((80.0, 80.0), 1.0)
(True, 0.0)
>>> paper.svg().startswith('<svg xmlns="http://www.w3.org/2000/svg"')
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from xml.sax.saxutils import escape

from noughts.sheet.geometry import Point, Sheet
from noughts.sheet.strokes import Stroke, grid_strokes, mark_strokes, marker_strokes

__all__ = ["PEN_MM", "Ink", "Paper", "sheet_svg"]

# The Braille cell's dots as (x, y) in bit order: a character shows 2 × 4 dots.
_BRAILLE_DOTS = ((0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (0, 3), (1, 3))
_BRAILLE_BITS = {dot: 1 << bit for bit, dot in enumerate(_BRAILLE_DOTS)}
PEN_MM = 0.8  # a fine felt-tip's line width
ROBOT_INK = "#1b1b1b"
HUMAN_INK = "#22306e"  # a blue biro, so a picture tells whose stroke is whose


@dataclass(frozen=True)
class Ink:
    """One pen-down polyline on the paper."""

    points: tuple[Point, ...]
    by: str  # "robot" or "human"
    width: float = PEN_MM
    kind: str = ""  # the robot's stroke kind (grid, marker, X, O, dot, shade); empty for the human's


def _segment_distance(p: Point, a: Point, b: Point) -> float:
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((p[0] - ax) * dx + (p[1] - ay) * dy) / length2))
    return math.hypot(p[0] - ax - t * dx, p[1] - ay - t * dy)


class Paper:
    """A sheet and the ink on it."""

    def __init__(self, sheet: Sheet) -> None:
        self.sheet = sheet
        self.ink: list[Ink] = []

    def draw(self, points: Sequence[Point], *, by: str = "robot", width: float = PEN_MM, kind: str = "") -> None:
        """Add a pen-down polyline (a single point is a dot the width of the pen)."""
        if not points:
            return
        line = tuple((float(x), float(y)) for x, y in points)
        self.ink.append(Ink(line if len(line) > 1 else line * 2, by, width, kind))

    def draw_strokes(self, strokes: Iterable[Stroke], *, by: str = "robot") -> None:
        for stroke in strokes:
            self.draw(stroke.points, by=by, kind=stroke.kind)

    def clear(self) -> None:
        """A fresh sheet."""
        self.ink.clear()

    def inked(self, point: Point) -> bool:
        """Whether any ink covers ``point``."""
        for ink in self.ink:
            reach = ink.width / 2
            for a, b in pairwise(ink.points):
                if _segment_distance(point, a, b) <= reach:
                    return True
        return False

    def darkness(self, centre: Point, radius: float, samples: int = 9) -> float:
        """The share of a round spot of ``radius`` mm under ink, from 0 (white) to 1: what a
        reflected-light sensor looking at that spot reads, inverted."""
        cx, cy = centre
        nearby = [ink for ink in self.ink if any(
            abs(x - cx) <= radius + ink.width + 50 and abs(y - cy) <= radius + ink.width + 50 for x, y in ink.points)]
        if not nearby:
            return 0.0
        saved, self.ink = self.ink, nearby
        try:
            hits = total = 0
            for i in range(samples):
                for j in range(samples):
                    x = cx - radius + 2 * radius * (i + 0.5) / samples
                    y = cy - radius + 2 * radius * (j + 0.5) / samples
                    if (x - cx) ** 2 + (y - cy) ** 2 > radius * radius:
                        continue
                    total += 1
                    hits += self.inked((x, y))
        finally:
            self.ink = saved
        return hits / total if total else 0.0

    def text_picture(self, columns: int = 60) -> str:
        """The paper drawn in Braille dots, ``columns`` characters wide (2 × 4 dots a character), for a
        terminal: the ink is sampled along each stroke, so it takes as long as the ink is long."""
        sheet = self.sheet
        dots_x = columns * 2
        scale = dots_x / sheet.width  # dots per mm
        rows = math.ceil(sheet.height * scale / 4)
        lit: set[tuple[int, int]] = set()
        for ink in self.ink:
            for (ax, ay), (bx, by) in pairwise(ink.points):
                steps = max(1, math.ceil(math.hypot(bx - ax, by - ay) * scale * 2))
                for i in range(steps + 1):
                    t = i / steps
                    lit.add((int((ax + (bx - ax) * t) * scale), int((ay + (by - ay) * t) * scale)))
        bits = [[0] * columns for _ in range(rows)]  # each character's dots, set from the lit ones
        for x, y in lit:
            if 0 <= x < dots_x and 0 <= y < rows * 4:
                bits[y // 4][x // 2] |= _BRAILLE_BITS[x % 2, y % 4]
        lines = ["".join(chr(0x2800 + dots) for dots in row).rstrip("\u2800") for row in bits]
        return "\n".join(line.replace("\u2800", " ") for line in lines)

    def svg(self, *, size_px: int | None = None, cell_labels: bool = False) -> str:
        """The sheet as SVG in millimetres (``size_px`` sets the pixel width instead)."""
        sheet = self.sheet
        width = f'{size_px}' if size_px else f'{sheet.width:g}mm'
        height = f'{round(size_px * sheet.height / sheet.width)}' if size_px else f'{sheet.height:g}mm'
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                 f'viewBox="0 0 {sheet.width:g} {sheet.height:g}">',
                 f'<rect width="{sheet.width:g}" height="{sheet.height:g}" fill="#fbfaf5"/>']
        if cell_labels:
            for cell in range(sheet.rows * sheet.cols):
                left, top, _, _ = sheet.cell_box(cell)
                parts.append(f'<text x="{left + 1.5:.2f}" y="{top + 4:.2f}" font-size="3" fill="#999" '
                             f'font-family="sans-serif">{cell + 1}</text>')
        for ink in self.ink:
            colour = ROBOT_INK if ink.by == "robot" else HUMAN_INK
            points = " ".join(f"{x:.2f},{y:.2f}" for x, y in ink.points)
            parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="{ink.width:g}" '
                         f'stroke-linecap="round" stroke-linejoin="round" data-by="{escape(ink.by)}"/>')
        parts.append("</svg>")
        return "\n".join(parts)


def sheet_svg(sheet: Sheet, marks: Sequence[str] = (), *, style: str = "shapes") -> str:
    """The sheet as the robot draws it: markers, grid, and ``marks`` (one of X, O or empty per cell)
    in the robot's own strokes."""
    paper = Paper(sheet)
    paper.draw_strokes(marker_strokes(sheet) + grid_strokes(sheet))
    for cell, mark in enumerate(marks):
        if mark in ("X", "O"):
            paper.draw_strokes(mark_strokes(sheet, cell, mark, style))
    return paper.svg()

