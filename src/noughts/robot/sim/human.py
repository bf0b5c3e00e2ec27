"""A simulated human with a pen: hand-drawn X, O and shaded squares on the robot's sheet.

A person's X is two strokes that cross somewhere near the middle, each a little bowed, shaky and
of its own length, sometimes running on past where it meant to stop; an O is an ellipse that
starts anywhere, does not quite close (or runs past its start) and is seldom centred; the seed's
light-sensor players shade the whole square with a back-and-forth scribble. Everything comes from
the ``random.Random`` given, so a test or a benchmark sees the same hand every run. Standard
library only: the light-sensor, EV3 and camera simulations all draw with it.

>>> import random
>>> from noughts.sheet.geometry import Sheet
>>> sheet = Sheet(3, 3)
>>> strokes = human_strokes(sheet, 4, "X", random.Random(1))
>>> len(strokes), all(s.kind == "X" for s in strokes)
(2, True)
>>> human_strokes(sheet, 4, "O", random.Random(1)) == human_strokes(sheet, 4, "O", random.Random(1))
True
>>> paper = Paper(sheet)
>>> draw_human_mark(paper, 0, "shade", random.Random(2))
>>> paper.darkness(sheet.cell_centre(0), 6.0) > 0.5, {ink.by for ink in paper.ink}
(True, {'human'})
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from noughts.sheet.geometry import Point, RobotError, Sheet
from noughts.sheet.paper import Paper
from noughts.sheet.strokes import Stroke

__all__ = ["HUMAN_MARKS", "draw_human_mark", "human_strokes"]

HUMAN_MARKS = ("X", "O", "shade")
STEP_MM = 0.6  # spacing of the points along a hand-drawn stroke, fine enough to carry the tremor


def _tremor(rng: random.Random, amplitude: float) -> Callable[[float], float]:
    """A smooth sideways shake along a stroke (a function of the distance drawn, in mm): a few
    slow waves, as a hand wanders, rather than white noise, which no hand makes."""
    waves = [(amplitude * rng.uniform(0.3, 1.0) / (i + 1), rng.uniform(4.0, 22.0) / (i + 1), rng.uniform(0, math.tau))
             for i in range(3)]
    return lambda s: sum(a * math.sin(math.tau * s / wavelength + phase) for a, wavelength, phase in waves)


def _path(points: list[Point]) -> tuple[list[Point], list[Point], list[float]]:
    """The points of a path with its unit normals and the distance travelled at each."""
    normals: list[Point] = []
    travelled = [0.0]
    for i, (x, y) in enumerate(points):
        ax, ay = points[max(i - 1, 0)]
        bx, by = points[min(i + 1, len(points) - 1)]
        length = math.hypot(bx - ax, by - ay) or 1.0
        normals.append((-(by - ay) / length, (bx - ax) / length))
        if i:
            travelled.append(travelled[-1] + math.hypot(x - points[i - 1][0], y - points[i - 1][1]))
    return points, normals, travelled


def _shaky(points: list[Point], rng: random.Random, amplitude: float) -> tuple[Point, ...]:
    """``points`` pushed sideways by a hand's tremor."""
    shake = _tremor(rng, amplitude)
    points, normals, travelled = _path(points)
    return tuple((x + nx * shake(s), y + ny * shake(s)) for (x, y), (nx, ny), s in zip(points, normals, travelled,
                                                                                      strict=True))


def _line_points(start: Point, end: Point, bow: float) -> list[Point]:
    """A stroke from ``start`` to ``end`` bent sideways by ``bow`` mm at its middle (a wrist's arc)."""
    length = math.hypot(end[0] - start[0], end[1] - start[1])
    count = max(2, int(length / STEP_MM) + 1)
    nx, ny = -(end[1] - start[1]) / (length or 1.0), (end[0] - start[0]) / (length or 1.0)
    points = []
    for i in range(count):
        t = i / (count - 1)
        side = bow * 4 * t * (1 - t)
        points.append((start[0] + (end[0] - start[0]) * t + nx * side, start[1] + (end[1] - start[1]) * t + ny * side))
    return points


def _hook(points: list[Point], rng: random.Random, size: float) -> list[Point]:
    """A little flick at the end of a stroke, where the pen leaves the paper while still moving."""
    (ax, ay), (bx, by) = points[-2], points[-1]
    heading = math.atan2(by - ay, bx - ax) + rng.choice((-1, 1)) * rng.uniform(0.5, 1.3)
    return [*points, (bx + size * math.cos(heading), by + size * math.sin(heading))]


def _x_strokes(centre: Point, cell: float, rng: random.Random, mess: float) -> list[Stroke]:
    tilt = rng.gauss(0, 0.12 * mess)
    spread = rng.uniform(-0.35, 0.35) * mess  # the strokes cross at 90° ± 20° and a bit
    size = cell * rng.uniform(0.24, 0.38)  # half a stroke's length
    strokes = []
    for angle in (math.pi / 4 + tilt + spread / 2, 3 * math.pi / 4 + tilt - spread / 2):
        half = size * rng.uniform(0.85, 1.15)
        shift = half * rng.uniform(-0.2, 0.2) * mess  # the strokes seldom cross at both their middles
        before, after = half - shift, half + shift
        if rng.random() < 0.15 * mess:  # ran on past where it meant to stop
            after += half * rng.uniform(0.15, 0.5)
        dx, dy = math.cos(angle), math.sin(angle)
        start = (centre[0] - dx * before, centre[1] - dy * before)
        end = (centre[0] + dx * after, centre[1] + dy * after)
        if rng.random() < 0.15:  # most draw downwards (top-left to bottom-right, then top-right to bottom-left)
            start, end = end, start
        points = _line_points(start, end, bow=rng.uniform(-0.06, 0.06) * mess * 2 * half)
        if rng.random() < 0.3 * mess:
            points = _hook(points, rng, cell * rng.uniform(0.02, 0.05))
        strokes.append(Stroke(_shaky(points, rng, cell * 0.012 * mess), "X"))
    rng.shuffle(strokes)
    return strokes


def _o_stroke(centre: Point, cell: float, rng: random.Random, mess: float) -> Stroke:
    radius_x = cell * rng.uniform(0.2, 0.36)
    radius_y = radius_x * rng.uniform(1 - 0.25 * mess, 1 + 0.1 * mess)
    turn = rng.uniform(0, math.pi)  # the ellipse's own tilt
    start = -math.pi / 2 + rng.gauss(0, 0.7)  # most people start at the top
    direction = -1 if rng.random() < 0.8 else 1  # most go anticlockwise (on a y-down page, decreasing angle)
    sweep = math.tau * (1 + rng.uniform(-0.16, 0.16) * mess)  # a gap, or running past the start
    drift = rng.uniform(-0.1, 0.1) * mess  # the end lands inside or outside the start
    count = max(12, int(sweep * max(radius_x, radius_y) / STEP_MM))
    cos_t, sin_t = math.cos(turn), math.sin(turn)
    points = []
    for i in range(count + 1):
        t = i / count
        angle = start + direction * sweep * t
        grow = 1 + drift * t
        ex, ey = radius_x * grow * math.cos(angle), radius_y * grow * math.sin(angle)
        points.append((centre[0] + ex * cos_t - ey * sin_t, centre[1] + ex * sin_t + ey * cos_t))
    return Stroke(_shaky(points, rng, cell * 0.01 * mess), "O")


def _clip(origin: Point, direction: Point, box: tuple[float, float, float, float]) -> tuple[float, float] | None:
    """Where the line ``origin + t·direction`` is inside ``box``: (t_in, t_out), or None if it misses."""
    t_in, t_out = -math.inf, math.inf
    for o, d, low, high in ((origin[0], direction[0], box[0], box[2]), (origin[1], direction[1], box[1], box[3])):
        if abs(d) < 1e-12:
            if not low <= o <= high:
                return None
            continue
        a, b = (low - o) / d, (high - o) / d
        t_in, t_out = max(t_in, min(a, b)), min(t_out, max(a, b))
    return (t_in, t_out) if t_in < t_out else None


def _shade_strokes(box: tuple[float, float, float, float], cell: float, rng: random.Random, mess: float
                   ) -> list[Stroke]:
    """Back-and-forth scribble over ``box`` (a pencil held sideways), once or twice across."""
    strokes = []
    passes = 2 if rng.random() < 0.4 else 1
    for layer in range(passes):
        angle = rng.uniform(-0.6, 0.6) + layer * math.pi / 2
        along = (math.cos(angle), math.sin(angle))
        across = (-along[1], along[0])
        centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        reach = math.hypot(box[2] - box[0], box[3] - box[1]) / 2
        spacing = rng.uniform(0.55, 0.9)
        points: list[Point] = []
        offset = -reach
        forward = True
        while offset <= reach:
            origin = (centre[0] + across[0] * offset, centre[1] + across[1] * offset)
            span = _clip(origin, along, box)
            if span is not None:
                ragged = 0.04 * cell * mess  # where a scribble turns is never quite on the edge
                ends = [span[0] + rng.uniform(-ragged, ragged), span[1] + rng.uniform(-ragged, ragged)]
                for t in ends if forward else ends[::-1]:
                    points.append((origin[0] + along[0] * t, origin[1] + along[1] * t))
                forward = not forward
            offset += spacing * rng.uniform(0.8, 1.2)
        if len(points) >= 2:
            strokes.append(Stroke(tuple(points), "shade"))
    return strokes


def human_strokes(sheet: Sheet, cell: int, mark: str, rng: random.Random, *, messiness: float = 1.0) -> list[Stroke]:
    """How a person would draw ``mark`` (``"X"``, ``"O"`` or ``"shade"``, the seed's shaded square)
    in ``cell``: a few wobbly polylines in sheet millimetres. ``messiness`` scales every
    irregularity (0 draws textbook marks, 1 an ordinary hurried hand, 2 a careless one)."""
    if mark not in HUMAN_MARKS:
        raise RobotError(f"a person draws {', '.join(HUMAN_MARKS[:-1])} or shades a square, not {mark!r}")
    if messiness < 0:
        raise RobotError(f"messiness is 0 (neat) or more, not {messiness:g}")
    size = sheet.cell_mm
    left, top, right, bottom = sheet.cell_box(cell)
    if mark == "shade":
        cover = rng.uniform(0.72, 0.92)
        inset = size * (1 - cover) / 2
        jitter = [rng.uniform(-0.04, 0.04) * size * messiness for _ in range(4)]
        box = (left + inset + jitter[0], top + inset + jitter[1], right - inset + jitter[2], bottom - inset + jitter[3])
        return _shade_strokes(box, size, rng, messiness)
    cx, cy = sheet.cell_centre(cell)
    off = size * 0.07 * messiness
    centre = (cx + max(-2 * off, min(2 * off, rng.gauss(0, off))), cy + max(-2 * off, min(2 * off, rng.gauss(0, off))))
    return _x_strokes(centre, size, rng, messiness) if mark == "X" else [_o_stroke(centre, size, rng, messiness)]


def draw_human_mark(paper: Paper, cell: int, mark: str, rng: random.Random, *, messiness: float = 1.0,
                    pen_mm: float | None = None) -> None:
    """Draw ``mark`` in ``cell`` on ``paper`` as a person would (``by="human"``), with a pen of
    ``pen_mm`` (a biro's 0.5 mm to a felt-tip's 1.1 mm, chosen by ``rng`` if not given)."""
    width = pen_mm if pen_mm is not None else rng.uniform(0.5, 1.1)
    for stroke in human_strokes(paper.sheet, cell, mark, rng, messiness=messiness):
        paper.draw(stroke.points, by="human", width=width)
