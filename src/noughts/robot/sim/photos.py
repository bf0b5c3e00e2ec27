"""Synthetic photos of the robot's sheet, standing in for a camera: no public set of photos of such
sheets is reachable here, so the camera's tests and benchmark read these, and real photos are still
needed to confirm the figures.

A :class:`~noughts.sheet.paper.Paper` (the robot's markers, grid and marks, the simulated human's
marks) is rendered at a resolution a little finer than the camera's, with the human's ink in a
biro, felt-tip, pencil or red pen of uneven pressure, on paper a little bigger than the sheet. A
random :class:`Camera` then photographs it lying on a table: a pinhole camera anywhere above it
(the sheet turned any way, even upside down, tilted up to 35°, the whole sheet in view), lens
barrel distortion, light brighter on one side and darker in the corners, a tinted lamp, sometimes
an arm's or the gantry's shadow and a glare spot, things on the table, defocus or motion blur,
sensor noise and JPEG compression. :func:`photograph` returns the decoded BGR picture with the
truth (which mark is in each cell, where the sheet lies in the picture).

Needs numpy and OpenCV (``pip install 'noughts[robot]'``); only tests, benchmarks and
documentation scripts import this module.

>>> import random
>>> from noughts.sheet.geometry import Sheet
>>> photo = random_photo(random.Random(3), Sheet(3, 3), size=(640, 480))
>>> photo.image.shape, photo.image.dtype.name, len(photo.marks)
((480, 640, 3), 'uint8', 9)
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from noughts.robot.sim.human import _line_points, _shaky, draw_human_mark
from noughts.sheet.geometry import Point, RobotError, Sheet
from noughts.sheet.paper import Paper
from noughts.sheet.strokes import grid_strokes, mark_strokes, marker_strokes

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["STRAY_MARKS", "Camera", "Photo", "marked_paper", "photograph", "random_marks", "random_photo",
           "random_stray_photo", "render_paper", "sheet_homography", "stray_strokes", "write_sequence", "write_video"]

IMAGE_SIZES = ((1280, 960), (1280, 720), (1920, 1080), (1600, 1200), (1024, 768), (800, 600))
IMAGE_SIZE_WEIGHTS = (35, 20, 15, 10, 10, 10)
ROBOT_INK_BGR = (32, 30, 28)  # a black felt-tip
HUMAN_INKS_BGR = {"biro": (120, 52, 30), "black": (40, 38, 36), "pencil": (95, 92, 90), "red": (45, 40, 185)}
HUMAN_INK_WEIGHTS = (50, 25, 15, 10)
TABLES = ("wood", "dark", "light", "grey")


@dataclass(frozen=True)
class Camera:
    """One camera set-up and the light in the room: everything :func:`photograph` varies.

    ``size`` is the picture's width and height in pixels; the sheet's bounding box fills ``fill``
    of the picture (along whichever side is tighter), at ``shift`` (-1 to 1 each way) within the
    room left. The sheet is turned by ``roll_deg`` in the picture and the camera tilted by
    ``tilt_deg`` (about the sheet's x and y axes), with a focal length of ``focal`` picture widths
    and barrel distortion ``distortion`` (k1). Light: ``exposure`` (1 is right), a ``gradient``
    across the picture at ``gradient_deg``, ``vignette`` in the corners, a colour ``tint`` (blue,
    red), a ``shadow`` that multiplies the light by that much (1: none) with edges ``shadow_soft``
    pixels wide, and a ``glare`` spot that adds that much. Then ``blur`` (Gaussian sigma, pixels),
    ``motion`` (pixels of shake), ``noise`` (sigma, grey levels) and JPEG at ``jpeg_quality``. The
    human's pen is ``ink`` at ``pressure`` (1 is a firm hand); the table is ``table``; ``seed``
    drives the textures and the noise.
    """

    size: tuple[int, int] = (1280, 960)
    fill: float = 0.7
    shift: tuple[float, float] = (0.0, 0.0)
    roll_deg: float = 0.0
    tilt_deg: tuple[float, float] = (0.0, 0.0)
    focal: float = 1.0
    distortion: float = 0.0
    exposure: float = 1.0
    gradient: float = 0.0
    gradient_deg: float = 0.0
    vignette: float = 0.0
    tint: tuple[float, float] = (0.0, 0.0)
    shadow: float = 1.0
    shadow_soft: float = 10.0
    glare: float = 0.0
    blur: float = 0.0
    motion: int = 0
    noise: float = 2.0
    jpeg_quality: int = 90
    ink: str = "biro"
    pressure: float = 1.0
    table: str = "wood"
    seed: int = 0

    @classmethod
    def random(cls, rng: random.Random, *, size: tuple[int, int] | None = None, hard: bool = True) -> Camera:
        """A camera and room drawn at random from what people's set-ups look like; ``hard=False``
        keeps the light even and the camera square above the sheet (for pictures in the docs)."""
        picture = size or rng.choices(IMAGE_SIZES, IMAGE_SIZE_WEIGHTS)[0]
        roll = rng.gauss(0, 8) if rng.random() < 0.55 else rng.uniform(-180, 180)
        tilt_size, tilt_way = rng.uniform(0, 35 if hard else 12), rng.uniform(0, math.tau)
        return cls(
            size=picture,
            fill=rng.uniform(0.35, 0.92),
            shift=(rng.uniform(-1, 1), rng.uniform(-1, 1)),
            roll_deg=roll if hard else rng.gauss(0, 4),
            tilt_deg=(tilt_size * math.cos(tilt_way), tilt_size * math.sin(tilt_way)),
            focal=rng.uniform(0.7, 1.3),
            distortion=rng.uniform(-0.12, 0.02),
            exposure=rng.uniform(0.7, 1.1) if hard else rng.uniform(0.9, 1.05),
            gradient=rng.uniform(0, 0.5 if hard else 0.15),
            gradient_deg=rng.uniform(0, 360),
            vignette=rng.uniform(0, 0.35),
            tint=(rng.uniform(-0.08, 0.08), rng.uniform(-0.08, 0.08)),
            shadow=rng.uniform(0.35, 0.8) if hard and rng.random() < 0.55 else 1.0,
            shadow_soft=rng.uniform(2, 40),
            glare=rng.uniform(20, 70) if hard and rng.random() < 0.15 else 0.0,
            blur=rng.uniform(0, 1.5) if rng.random() < 0.8 else 0.0,
            motion=rng.randint(3, 7) if hard and rng.random() < 0.1 else 0,
            noise=rng.uniform(1, 8) if hard else rng.uniform(1, 3),
            jpeg_quality=rng.randint(50, 95) if hard else rng.randint(80, 92),
            ink=rng.choices(list(HUMAN_INKS_BGR), HUMAN_INK_WEIGHTS)[0],
            pressure=rng.uniform(0.55, 1.0),
            table=rng.choice(TABLES),
            seed=rng.getrandbits(32),
        )


@dataclass(frozen=True)
class Photo:
    """A synthetic photo and its truth: the BGR picture (as decoded from ``jpeg``), the sheet, the
    mark in each cell (``"X"``, ``"O"``, ``"?"`` for a shaded square, ``""`` empty), where sheet
    millimetres land in the picture (``homography``, before the lens distortion) and the camera."""

    image: NDArray[np.uint8] = field(repr=False)
    sheet: Sheet
    marks: tuple[str, ...]
    homography: NDArray[np.float64] = field(repr=False)
    camera: Camera
    jpeg: bytes = field(repr=False)

    def project(self, points: Sequence[Point]) -> list[Point]:
        """Where sheet points (mm) are in the picture, lens distortion included."""
        width, height = self.camera.size
        focal = self.camera.focal * width
        ideal = cv2.perspectiveTransform(np.array([points], np.float64), self.homography)[0]
        seen = []
        for x, y in ideal:
            ix, iy = (x - width / 2) / focal, (y - height / 2) / focal
            dx, dy = ix, iy
            for _ in range(20):  # the lens map divides by (1 + k1 r²) of the distorted point: solve for it
                grow = 1 + self.camera.distortion * (dx * dx + dy * dy)
                dx, dy = ix * grow, iy * grow
            seen.append((float(width / 2 + dx * focal), float(height / 2 + dy * focal)))
        return seen

    def notation(self) -> str:
        """The true position in the usual notation (``X.O/.X./..O``; a shaded square or a stray mark is ``?``)."""
        cells = [mark if mark in ("X", "O", "?") else ("?" if mark else ".") for mark in self.marks]
        cols = self.sheet.cols
        return "/".join("".join(cells[i:i + cols]) for i in range(0, len(cells), cols))


# --- marks that are neither an X nor an O ------------------------------------------------------

STRAY_MARKS = ("tick", "triangle", "square", "plus", "squiggle", "letter", "star", "scribble", "hatching", "word")
"""What else a person may put in a square (issue 29): the camera must never be sure it is an X or an O."""

# Capital letters as pen paths in a unit box (x right, y down), one list of points a stroke; none is
# an X or an O (nor a D, Q or C, which are nearly one).
LETTERS: dict[str, tuple[tuple[Point, ...], ...]] = {
    "A": (((0, 1), (0.5, 0), (1, 1)), ((0.25, 0.55), (0.75, 0.55))),
    "E": (((1, 0), (0, 0), (0, 1), (1, 1)), ((0, 0.5), (0.8, 0.5))),
    "F": (((1, 0), (0, 0), (0, 1)), ((0, 0.5), (0.8, 0.5))),
    "H": (((0, 0), (0, 1)), ((1, 0), (1, 1)), ((0, 0.5), (1, 0.5))),
    "K": (((0, 0), (0, 1)), ((1, 0), (0, 0.55), (1, 1))),
    "L": (((0, 0), (0, 1), (1, 1)),),
    "M": (((0, 1), (0, 0), (0.5, 0.6), (1, 0), (1, 1)),),
    "N": (((0, 1), (0, 0), (1, 1), (1, 0)),),
    "T": (((0, 0), (1, 0)), ((0.5, 0), (0.5, 1))),
    "V": (((0, 0), (0.5, 1), (1, 0)),),
    "W": (((0, 0), (0.25, 1), (0.5, 0.4), (0.75, 1), (1, 0)),),
    "Y": (((0, 0), (0.5, 0.5), (1, 0)), ((0.5, 0.5), (0.5, 1))),
    "Z": (((0, 0), (1, 0), (0, 1), (1, 1)),),
}


def _stray_paths(kind: str, rng: random.Random) -> list[list[Point]]:
    """The pen paths of a stray mark ``kind`` round (0, 0), about 2 across (-1 to 1 each way)."""
    def polygon(corners: int, turn: float) -> list[Point]:
        points = [(math.cos(turn + math.tau * i / corners), math.sin(turn + math.tau * i / corners))
                  for i in range(corners + 1)]
        return [p for a, b in itertools.pairwise(points) for p in _line_points(a, b, 0)[:-1]] + [points[-1]]

    if kind == "tick":
        bend = (rng.uniform(-0.5, -0.1), rng.uniform(0.4, 0.8))
        return [_line_points((rng.uniform(-1, -0.7), rng.uniform(-0.1, 0.3)), bend, 0)
                + _line_points(bend, (rng.uniform(0.6, 1), rng.uniform(-1, -0.6)), rng.uniform(-0.1, 0.1))[1:]]
    if kind == "triangle":
        return [polygon(3, rng.uniform(0, math.tau))]
    if kind == "square":
        turn = rng.choice((math.pi / 4, math.pi / 4 + rng.gauss(0, 0.12), rng.uniform(0, math.pi / 2)))
        return [polygon(4, turn)]
    if kind == "plus":  # an upright cross: an X turned by 45°, or a letter t
        tilt = rng.gauss(0, 0.08)
        across, down = (math.cos(tilt), math.sin(tilt)), (-math.sin(tilt), math.cos(tilt))
        return [_line_points((-across[0], -across[1]), across, rng.uniform(-0.1, 0.1)),
                _line_points((-down[0], -down[1]), down, rng.uniform(-0.1, 0.1))]
    if kind == "squiggle":
        waves, height = rng.uniform(1.5, 3.5), rng.uniform(0.2, 0.5)
        return [[(-1 + 2 * i / 60, height * math.sin(math.pi * waves * i / 30)) for i in range(61)]]
    if kind == "letter":
        strokes = LETTERS[rng.choice(sorted(LETTERS))]
        return [[(2 * x - 1, 2 * y - 1) for x, y in stroke] for stroke in strokes]
    if kind == "star":  # a five-pointed star in one stroke
        turn = -math.pi / 2 + rng.gauss(0, 0.2)
        tips = [(math.cos(turn + math.tau * 2 * i / 5), math.sin(turn + math.tau * 2 * i / 5)) for i in range(6)]
        return [[p for a, b in itertools.pairwise(tips) for p in _line_points(a, b, 0)[:-1]] + [tips[-1]]]
    if kind == "scribble":  # a tangle of loops, as when a mark is crossed out
        points: list[Point] = []
        x, y, heading = rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5), rng.uniform(0, math.tau)
        for _ in range(rng.randint(120, 220)):
            heading += rng.gauss(0, 0.5)
            x, y = x + 0.08 * math.cos(heading), y + 0.08 * math.sin(heading)
            if abs(x) > 0.9 or abs(y) > 0.9:
                heading += math.pi
                x, y = max(-0.9, min(0.9, x)), max(-0.9, min(0.9, y))
            points.append((x, y))
        return [points]
    if kind == "hatching":
        angle, lines = rng.uniform(0, math.pi), rng.randint(3, 6)
        along, across = (math.cos(angle), math.sin(angle)), (-math.sin(angle), math.cos(angle))
        paths = []
        for i in range(lines):
            offset = -0.8 + 1.6 * i / (lines - 1)
            half = math.sqrt(max(0.2, 1 - offset * offset))
            centre = (across[0] * offset, across[1] * offset)
            paths.append(_line_points((centre[0] - along[0] * half, centre[1] - along[1] * half),
                                      (centre[0] + along[0] * half, centre[1] + along[1] * half), 0))
        return paths
    if kind == "word":  # joined-up writing: a run of loops along a line
        loops, height = rng.randint(3, 5), rng.uniform(0.25, 0.45)
        return [[(-1 + 2 * t / (loops * math.tau) - 0.12 * math.sin(t), height * -math.cos(t) * 0.9 + 0.2)
                 for t in (loops * math.tau * i / 160 for i in range(161))]]
    raise RobotError(f"a stray mark is one of {', '.join(STRAY_MARKS)}, not {kind!r}")


def stray_strokes(sheet: Sheet, cell: int, kind: str, rng: random.Random) -> list[list[Point]]:
    """A stray mark ``kind`` (one of :data:`STRAY_MARKS`) in ``cell`` as a person's hand would draw
    it: pen paths in sheet millimetres, a little off-centre, of any size an X or an O has, shaky."""
    cell_mm = sheet.cell_mm
    cx, cy = sheet.cell_centre(cell)
    centre = (cx + rng.gauss(0, 0.05) * cell_mm, cy + rng.gauss(0, 0.05) * cell_mm)
    size = cell_mm * rng.uniform(0.24, 0.36)
    squash = rng.uniform(0.85, 1.1)
    paths = []
    for path in _stray_paths(kind, rng):
        points = [(centre[0] + x * size, centre[1] + y * size * squash) for x, y in path]
        paths.append(list(_shaky(points, rng, cell_mm * 0.01)))
    return paths


# --- what is on the paper ---------------------------------------------------------------------

def random_marks(rng: random.Random, sheet: Sheet, count: int | None = None) -> tuple[str, ...]:
    """A plausible position: ``count`` marks (0 to 9 at random if not given), X and O alternating
    from X, in random cells."""
    cells = sheet.rows * sheet.cols
    count = rng.randint(0, min(9, cells)) if count is None else min(count, cells)
    marks = [""] * cells
    for turn, cell in enumerate(rng.sample(range(cells), count)):
        marks[cell] = "XO"[turn % 2]
    return tuple(marks)


def marked_paper(sheet: Sheet, marks: Sequence[str], rng: random.Random, *, robot: str | None = "O",
                 messiness: float = 1.0) -> Paper:
    """A sheet as it looks mid-game: the robot's markers and grid, the ``robot`` side's marks in
    the robot's strokes, every other mark by the simulated human (``"?"`` is a shaded square)."""
    paper = Paper(sheet)
    paper.draw_strokes(marker_strokes(sheet) + grid_strokes(sheet))
    for cell, mark in enumerate(marks):
        if mark and mark == robot:
            paper.draw_strokes(mark_strokes(sheet, cell, mark))
        elif mark in ("X", "O", "?"):
            draw_human_mark(paper, cell, "shade" if mark == "?" else mark, rng, messiness=messiness)
        elif mark in STRAY_MARKS:
            width = rng.uniform(0.5, 1.1)
            for path in stray_strokes(sheet, cell, mark, rng):
                paper.draw(path, by="human", width=width)
        elif mark:
            raise RobotError(f"a cell holds X, O, ? (a shaded square), a stray mark ({', '.join(STRAY_MARKS)}) "
                             f"or nothing, not {mark!r}")
    return paper


# --- rendering the paper ----------------------------------------------------------------------

def _smooth_noise(np_rng: np.random.Generator, shape: tuple[int, int], cells: int) -> NDArray[np.float32]:
    """Noise that varies over about ``cells`` blobs across, from -1 to 1 (for light, pressure, wood)."""
    coarse = np_rng.uniform(-1, 1, (max(2, cells * shape[0] // max(shape)) + 1, cells + 1)).astype(np.float32)
    return np.asarray(cv2.resize(coarse, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC), np.float32)


def _polyline(points: Sequence[Point], to_px: tuple[float, float, float]) -> NDArray[np.int32]:
    scale, dx, dy = to_px
    return np.array([[(x + dx) * scale * 16, (y + dy) * scale * 16] for x, y in points], np.int32)  # 4 bits of shift


def render_paper(paper: Paper, px_per_mm: float, *, border_mm: tuple[float, float, float, float] = (10, 10, 10, 10),
                 ink: str = "biro", pressure: float = 1.0, seed: int = 0) -> NDArray[np.uint8]:
    """The paper as a flat BGR picture at ``px_per_mm``: the sheet with ``border_mm`` of blank
    paper round it (left, top, right, bottom), the robot's ink black, the human's in ``ink``
    (a key of ``HUMAN_INKS_BGR``) pressed with ``pressure``, both a little uneven."""
    return np.asarray(cv2.merge(_paper_planes(paper, px_per_mm, border_mm, ink, pressure, seed)), np.uint8)


def _paper_planes(paper: Paper, px_per_mm: float, border_mm: tuple[float, float, float, float], ink: str,
                  pressure: float, seed: int) -> list[NDArray[np.uint8]]:
    """:func:`render_paper`'s picture as its blue, green and red planes.

    The pictures are worked on a colour plane at a time: numpy is quick over a whole plane, and
    slow over the three values of each pixel of an interleaved picture."""
    if ink not in HUMAN_INKS_BGR:
        raise RobotError(f"the human's pen is one of {', '.join(HUMAN_INKS_BGR)}, not {ink!r}")
    np_rng = np.random.default_rng(seed)
    left, top, right, bottom = border_mm
    width = round((paper.sheet.width + left + right) * px_per_mm)
    height = round((paper.sheet.height + top + bottom) * px_per_mm)
    to_px = (px_per_mm, left, top)
    base = (np_rng.uniform(225, 245), np_rng.uniform(232, 248), np_rng.uniform(236, 250))
    grain = 1 + 0.015 * _smooth_noise(np_rng, (height, width), 40)
    planes = [grain * np.float32(level) for level in base]
    layers = {"robot": np.zeros((height, width), np.uint8), "human": np.zeros((height, width), np.uint8)}
    for line in paper.ink:
        human = line.by != "robot"
        # A pen's ink is there or not (pressure changes its width); a pencil's darkness follows the hand.
        firmness = pressure if ink == "pencil" else 0.9 + 0.1 * pressure
        strength = firmness * np_rng.uniform(0.8, 1.0) if human else np_rng.uniform(0.9, 1.0)
        thickness = max(1, round(line.width * px_per_mm * (0.8 + 0.3 * pressure if human else 1.0)))
        cv2.polylines(layers["human" if human else "robot"], [_polyline(line.points, to_px)], False,
                      round(255 * min(1.0, strength)), thickness, cv2.LINE_AA, 4)
    colours = {"robot": ROBOT_INK_BGR, "human": HUMAN_INKS_BGR[ink]}
    for who, mask in layers.items():
        box = cv2.boundingRect(mask)  # only the box round the ink changes
        x, y, box_width, box_height = box
        rows, cols = slice(y, y + box_height), slice(x, x + box_width)
        alpha = mask[rows, cols].astype(np.float32) * np.float32(1 / 255)
        if who == "human":  # pressure wanders along the strokes; pencil is grainy too
            wander = 0.15 if ink == "pencil" else 0.08
            alpha *= 1 - wander + wander * _smooth_noise(np_rng, (height, width), 12)[rows, cols]
            if ink == "pencil":
                grit = np.empty((height, width), np.float32)
                cv2.randn(grit, np.full(1, 0.85), np.full(1, 0.2))
                alpha *= np.clip(grit[rows, cols], 0.5, 1.0)
        for plane, level in zip(planes, colours[who], strict=True):
            inked = plane[rows, cols]
            inked += alpha * (np.float32(level) - inked)
    return [_bytes(plane) for plane in planes]


def _bytes(plane: NDArray[np.float32]) -> NDArray[np.uint8]:
    return np.clip(plane, 0, 255, out=plane).astype(np.uint8)


# --- the camera -------------------------------------------------------------------------------

def _rotation(camera: Camera) -> NDArray[np.float64]:
    ax, ay = (math.radians(a) for a in camera.tilt_deg)
    az = math.radians(camera.roll_deg)
    rx = np.array([[1, 0, 0], [0, math.cos(ax), -math.sin(ax)], [0, math.sin(ax), math.cos(ax)]])
    ry = np.array([[math.cos(ay), 0, math.sin(ay)], [0, 1, 0], [-math.sin(ay), 0, math.cos(ay)]])
    rz = np.array([[math.cos(az), -math.sin(az), 0], [math.sin(az), math.cos(az), 0], [0, 0, 1]])
    return np.asarray(rz @ ry @ rx, np.float64)


def sheet_homography(sheet: Sheet, camera: Camera) -> NDArray[np.float64]:
    """Where sheet millimetres land in the picture (before lens distortion): a pinhole camera
    looking at the tilted, turned sheet, scaled and moved so the sheet fills and sits as asked."""
    width, height = camera.size
    focal = camera.focal * width
    corners = np.array([(0, 0), (sheet.width, 0), (sheet.width, sheet.height), (0, sheet.height)], np.float64)
    centred = np.column_stack([corners - (sheet.width / 2, sheet.height / 2), np.zeros(4)])
    distance = focal * math.hypot(sheet.width, sheet.height) / (camera.fill * min(width, height))
    points = centred @ _rotation(camera).T + (0, 0, distance)
    projected = focal * points[:, :2] / points[:, 2:3]
    span = projected.max(axis=0) - projected.min(axis=0)
    scale = camera.fill * min(width / span[0], height / span[1])
    projected = (projected - projected.min(axis=0)) * scale
    room = np.array([width, height]) - span * scale
    projected += room / 2 * (1 + 0.9 * np.array(camera.shift))
    return np.asarray(cv2.getPerspectiveTransform(corners.astype(np.float32), projected.astype(np.float32)),
                      np.float64)


def _table(camera: Camera, np_rng: np.random.Generator) -> list[NDArray[np.float32]]:
    """What the paper lies on, with a pen and something dark and square-ish lying about: its blue,
    green and red planes."""
    width, height = camera.size
    small = (height // 4, width // 4)
    if camera.table == "wood":
        yy, xx = np.mgrid[0:small[0], 0:small[1]].astype(np.float32)
        angle = np_rng.uniform(0, math.pi)
        along = xx * math.cos(angle) + yy * math.sin(angle)
        grain = np.sin(along / np_rng.uniform(3, 9) + 4 * _smooth_noise(np_rng, small, 6))
        base = [np_rng.uniform(40, 90), np_rng.uniform(80, 130), np_rng.uniform(120, 180)]
        shade = 1 + 0.12 * grain
    else:
        level = {"dark": np_rng.uniform(25, 60), "light": np_rng.uniform(200, 235), "grey": np_rng.uniform(100, 160)}
        base = list(level[camera.table] * np_rng.uniform(0.92, 1.08, 3))
        shade = 1 + 0.05 * _smooth_noise(np_rng, small, 8)
    shade = np.asarray(cv2.resize(shade.astype(np.float32), (width, height), interpolation=cv2.INTER_LINEAR),
                       np.float32)
    planes = [shade * np.float32(level) for level in base]
    things = []
    if np_rng.random() < 0.5:  # a pen
        centre = np_rng.uniform(0, 1, 2) * (width, height)
        length, thick = np_rng.uniform(0.1, 0.3) * width, np_rng.uniform(6, 14)
        angle = np_rng.uniform(0, 180)
        box = cv2.boxPoints(((float(centre[0]), float(centre[1])), (float(length), float(thick)), float(angle)))
        things.append((box, np_rng.uniform(10, 120, 3)))
    if np_rng.random() < 0.3:  # an eraser, a phone, a sticky note: dark and square-ish
        centre = np_rng.uniform(0, 1, 2) * (width, height)
        side = np_rng.uniform(0.02, 0.12) * width
        shape = (float(side), float(side * np_rng.uniform(0.8, 1.6)))
        box = cv2.boxPoints(((float(centre[0]), float(centre[1])), shape, float(np_rng.uniform(0, 90))))
        things.append((box, np_rng.uniform(10, 60, 3)))
    for box, colour in things:
        for plane, level in zip(planes, colour, strict=True):
            cv2.fillConvexPoly(plane, box.astype(np.int32), float(level), cv2.LINE_AA)
    return planes


def _light(camera: Camera, np_rng: np.random.Generator) -> tuple[NDArray[np.float32], NDArray[np.float32] | None]:
    """The light falling on each pixel (a multiplier, before the lamp's tint) and the glare added on top."""
    width, height = camera.size
    small = (height // 8 + 1, width // 8 + 1)
    yy, xx = np.mgrid[0:small[0], 0:small[1]].astype(np.float32)
    xx, yy = xx / (small[1] - 1) - 0.5, yy / (small[0] - 1) - 0.5
    way = math.radians(camera.gradient_deg)
    light = camera.exposure * (1 + camera.gradient * (xx * math.cos(way) + yy * math.sin(way)))
    light *= 1 - camera.vignette * (xx * xx + yy * yy) * 2
    light *= 1 + 0.04 * _smooth_noise(np_rng, small, 4)
    if camera.shadow < 1:  # an arm reaching in from one edge, or the gantry's bar across the picture
        mask = np.zeros(small, np.float32)
        edge = np_rng.integers(4)
        start = [(np_rng.uniform(0, small[1]), -5), (small[1] + 5, np_rng.uniform(0, small[0])),
                 (np_rng.uniform(0, small[1]), small[0] + 5), (-5, np_rng.uniform(0, small[0]))][edge]
        reach = np_rng.uniform(0.3, 0.9) * np.array([small[1], small[0]])
        end = np.array([small[1], small[0]]) / 2 + (np_rng.uniform(-0.5, 0.5, 2) * reach)
        if np_rng.random() < 0.35:
            end = np.array(start) + (np.array([small[1], small[0]]) / 2 - start) * 3  # right across
        thick = int(np_rng.uniform(0.08, 0.3) * min(small))
        cv2.line(mask, (int(start[0]), int(start[1])), (int(end[0]), int(end[1])), 1.0, thick)
        cv2.circle(mask, (int(end[0]), int(end[1])), int(thick * 0.7), 1.0, -1)
        soft = max(0.5, camera.shadow_soft / 8)
        mask = np.asarray(cv2.GaussianBlur(mask, (0, 0), soft), np.float32)
        light *= 1 - (1 - camera.shadow) * mask
    glare = None
    if camera.glare > 0:
        gx, gy = np_rng.uniform(-0.4, 0.4, 2)
        radius = np_rng.uniform(0.08, 0.25)
        spot = camera.glare * np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * radius ** 2)).astype(np.float32)
        glare = np.asarray(cv2.resize(spot, (width, height)), np.float32)
    return np.asarray(cv2.resize(light.astype(np.float32), (width, height)), np.float32), glare


def _lens_map(camera: Camera, to_paper: NDArray[np.float64]) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """For each picture pixel, the paper pixel it sees (through the barrel distortion)."""
    width, height = camera.size
    step = 4  # the map is smooth: work it out on a coarse grid and interpolate
    ys, xs = np.mgrid[0:height + step:step, 0:width + step:step].astype(np.float64)
    focal = camera.focal * width
    dx, dy = (xs - width / 2) / focal, (ys - height / 2) / focal
    undistort = 1 / (1 + camera.distortion * (dx * dx + dy * dy))
    ideal = np.stack([width / 2 + dx * focal * undistort, height / 2 + dy * focal * undistort, np.ones_like(xs)], -1)
    paper = ideal @ to_paper.T
    map_x = (paper[..., 0] / paper[..., 2]).astype(np.float32)
    map_y = (paper[..., 1] / paper[..., 2]).astype(np.float32)
    size = (xs.shape[1] * step, xs.shape[0] * step)
    map_x = np.asarray(cv2.resize(map_x, size, interpolation=cv2.INTER_LINEAR), np.float32)[:height, :width]
    map_y = np.asarray(cv2.resize(map_y, size, interpolation=cv2.INTER_LINEAR), np.float32)[:height, :width]
    return map_x, map_y


def photograph(paper: Paper, rng: random.Random, *, marks: Sequence[str] = (), camera: Camera | None = None
               ) -> Photo:
    """Photograph ``paper`` with ``camera`` (a random one if not given). ``marks`` is the truth
    to carry along (what is in each cell), if the caller knows it."""
    camera = camera or Camera.random(rng)
    np_rng = np.random.default_rng(camera.seed)
    sheet = paper.sheet
    width, height = camera.size
    to_picture = sheet_homography(sheet, camera)
    corners = cv2.perspectiveTransform(np.array([[(0, 0), (sheet.width, 0), (sheet.width, sheet.height),
                                                  (0, sheet.height)]], np.float64), to_picture)[0]
    picture_px_per_mm = math.sqrt(cv2.contourArea(corners.astype(np.float32)) / (sheet.width * sheet.height))
    px_per_mm = min(10.0, max(2.5, 1.3 * picture_px_per_mm))  # a little finer than the camera sees
    left, top, right, bottom = (rng.uniform(3, 25) for _ in range(4))  # the paper is bigger than the sheet
    border = (left, top, right, bottom)
    flat = _paper_planes(paper, px_per_mm, border, camera.ink, camera.pressure, camera.seed)
    mm_to_flat = np.array([[px_per_mm, 0, border[0] * px_per_mm], [0, px_per_mm, border[1] * px_per_mm], [0, 0, 1]])
    to_flat = mm_to_flat @ np.linalg.inv(to_picture)
    map_x, map_y = _lens_map(camera, to_flat)
    # Remapped with black all round, the paper comes out already weighted by how much of each pixel
    # it covers (the fourth plane): the table shows through the rest.
    opaque = np.full_like(flat[0], 255)
    seen = cv2.split(cv2.remap(cv2.merge([*flat, opaque]), map_x, map_y, cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0)))
    table_share = 1 - seen[3].astype(np.float32) * np.float32(1 / 255)
    table = _table(camera, np_rng)
    light, glare = _light(camera, np_rng)
    tint = (1 + camera.tint[0], 1.0, 1 + camera.tint[1])
    kernel = None
    if camera.motion:
        kernel = np.zeros((camera.motion, camera.motion), np.float32)
        kernel[camera.motion // 2, :] = 1 / camera.motion
        middle = (camera.motion - 1) / 2
        rotation = cv2.getRotationMatrix2D((middle, middle), np_rng.uniform(0, 180), 1)
        kernel = np.asarray(cv2.warpAffine(kernel, rotation, kernel.shape[::-1]), np.float32)
        kernel /= max(float(kernel.sum()), 1e-6)
    cv2.setRNGSeed(camera.seed & 0x7FFFFFFF)  # OpenCV's generator is quicker than numpy's for a whole picture
    grey_noise = np.empty((height, width), np.float32)
    cv2.randn(grey_noise, np.zeros(1), np.full(1, 0.8 * camera.noise))
    colour_noise = np.empty((height // 2, width // 2), np.float32)  # colour noise comes out blotchy from demosaicing
    planes = []
    for table_plane, seen_plane, lamp in zip(table, seen[:3], tint, strict=True):
        picture = table_plane
        picture *= table_share
        picture += seen_plane
        picture *= light if lamp == 1 else light * np.float32(lamp)
        if glare is not None:
            picture += glare
        if camera.blur > 0.2:
            picture = np.asarray(cv2.GaussianBlur(picture, (0, 0), camera.blur), np.float32)
        if kernel is not None:
            picture = np.asarray(cv2.filter2D(picture, -1, kernel), np.float32)
        picture += grey_noise
        cv2.randn(colour_noise, np.zeros(1), np.full(1, 0.6 * camera.noise))
        picture += cv2.resize(colour_noise, (width, height), interpolation=cv2.INTER_NEAREST)
        planes.append(_bytes(picture))
    raw = cv2.merge(planes)
    ok, encoded = cv2.imencode(".jpg", raw, [cv2.IMWRITE_JPEG_QUALITY, camera.jpeg_quality])
    if not ok:
        raise RobotError("OpenCV could not encode the synthetic photo as JPEG")
    jpeg = encoded.tobytes()
    image = cv2.imdecode(encoded, cv2.IMREAD_COLOR)
    truth = tuple(marks) if marks else ("",) * (sheet.rows * sheet.cols)
    return Photo(np.asarray(image, np.uint8), sheet, truth, to_picture, camera, jpeg)


def random_photo(rng: random.Random, sheet: Sheet | None = None, *, marks: Sequence[str] | None = None,
                 size: tuple[int, int] | None = None, hard: bool = True) -> Photo:
    """A photo of a random position (or ``marks``) on ``sheet`` (3×3 if not given), the robot
    playing one side, taken by a random camera (see :meth:`Camera.random`)."""
    sheet = sheet or Sheet(3, 3)
    position = tuple(marks) if marks is not None else random_marks(rng, sheet)
    robot = rng.choice(("X", "O", None))
    paper = marked_paper(sheet, position, rng, robot=robot)
    return photograph(paper, rng, marks=position, camera=Camera.random(rng, size=size, hard=hard))


def random_stray_photo(rng: random.Random, sheet: Sheet | None = None, *, size: tuple[int, int] | None = None,
                       hard: bool = True) -> Photo:
    """A photo of a random position with one to three of its empty cells holding a stray mark
    (:data:`STRAY_MARKS`), taken by a random camera: what the camera must not be sure of."""
    sheet = sheet or Sheet(3, 3)
    marks = list(random_marks(rng, sheet, rng.randint(0, min(6, sheet.rows * sheet.cols - 1))))
    empty = [cell for cell, mark in enumerate(marks) if not mark]
    for cell in rng.sample(empty, min(len(empty), rng.randint(1, 3))):
        marks[cell] = rng.choice(STRAY_MARKS)
    paper = marked_paper(sheet, marks, rng, robot=rng.choice(("X", "O", None)))
    return photograph(paper, rng, marks=marks, camera=Camera.random(rng, size=size, hard=hard))


# --- files a VideoCapture can read ------------------------------------------------------------

def write_sequence(images: Iterable[NDArray[np.uint8]], folder: str | Path, pattern: str = "photo_%03d.png") -> str:
    """Write ``images`` as a numbered sequence (``photo_000.png``, ``photo_001.png`` …) in
    ``folder``; returns the pattern's path, which ``cv2.VideoCapture`` opens as a source."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for number, image in enumerate(images):
        path = folder / (pattern % number)
        if not cv2.imwrite(str(path), image):
            raise RobotError(f"could not write {path}")
    return str(folder / pattern)


def write_video(images: Iterable[NDArray[np.uint8]], path: str | Path, fps: float = 5.0) -> Path:
    """Write ``images`` as a Motion-JPEG AVI video (every frame scaled to the first one's size)
    that ``cv2.VideoCapture`` plays back frame by frame."""
    path = Path(path)
    writer: cv2.VideoWriter | None = None
    size = (0, 0)
    try:
        for image in images:
            if writer is None:
                size = (image.shape[1], image.shape[0])
                writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), fps, size)
                if not writer.isOpened():
                    raise RobotError(f"OpenCV cannot write a video to {path}")
            frame = image if (image.shape[1], image.shape[0]) == size else cv2.resize(image, size)
            writer.write(frame)
    finally:
        if writer is not None:
            writer.release()
    if writer is None:
        raise RobotError("a video needs at least one picture")
    return path
