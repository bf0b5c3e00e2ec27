"""Reading the sheet with a camera: find the robot's reference markers, straighten the sheet out and
decide, cell by cell, whether it is empty or holds an X or an O, and how sure that is.

The robot (or the printed sheet, in paper mode) has four filled squares in the corners of the margin
and a smaller tag right of the top-left one (:func:`~noughts.sheet.strokes.marker_strokes`).
:func:`read_image` finds them in a picture taken from anywhere above the sheet, any way round and a
little tilted: it flattens the light (dividing by the paper's own brightness, so shadows and uneven
lamps drop out), picks the solid squares, and keeps the four corners and the tag whose arrangement a
homography from the sheet's layout explains. It rectifies the grid and looks at the ink in each
cell: an X's ink spreads from the middle out along its arms, an O's lies on a ring round an empty
middle, a shaded square fills its cell. Only the layout's proportions matter, not its size in
millimetres.

A cell that does not look clearly like one of these gets a low confidence (below :data:`SURE`),
never a confident guess. The game decides what a reading means (one new mark expected); this
module only says what it sees. :class:`CameraSensor` reads frames through the real
``cv2.VideoCapture`` (a camera's index, a video file or a numbered image sequence such as
``photo_%03d.png``), :func:`what_i_saw` draws the straightened sheet with each cell's verdict,
and :func:`sense_photo` is the ``noughts robot sense PHOTO`` command.

OpenCV and numpy are optional (``pip install 'noughts[robot]'``): they are imported when a picture
is read, and their absence is a :class:`~noughts.sheet.geometry.RobotError` saying so.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noughts.sheet.geometry import Point, RobotError, Sheet
from noughts.sheet.reading import SURE, CellReading, SheetReading

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from noughts.board import Board

    Image = NDArray[np.uint8]
    Matrix = NDArray[np.float64]

__all__ = ["MAX_PIXELS", "MISSING_OPENCV", "SURE", "CameraSensor", "load_photo", "read_image", "save_picture",
           "sense_photo", "what_i_saw"]

MISSING_OPENCV = "reading the sheet with a camera needs OpenCV: pip install 'noughts[robot]'"

WORK_PX = 1280  # longest side the markers are looked for at; bigger pictures are shrunk first
CELL_PX = 64  # a cell's side in the straightened sheet
MARKER_RATIO = 0.62  # the markers are darker than this share of the paper's brightness round them, even under glare
HALF_LINES = 4  # pixels each way a pen line must have paper within (a line here is at most about 5 wide)
# Ink is darker than the paper round it by more than these (floor, times the paper's noise, plus): a
# stroke must reach STRONG somewhere and is followed down to WEAK.
WEAK = (0.035, 3.0, 0.02)
STRONG = (0.055, 5.0, 0.025)
STROKE_AREA = 0.012  # pieces of ink smaller than this share of a cell must be long and narrow to count:
STROKE_LENGTH = 3.0  # their longer side squared at least this many times their area


def _opencv() -> Any:
    """OpenCV, or the reason it is missing."""
    try:
        import cv2
        import numpy  # noqa: F401  # OpenCV's pictures are numpy arrays
    except ImportError as error:
        raise RobotError(MISSING_OPENCV) from error
    return cv2


# --- finding the sheet ------------------------------------------------------------------------

@dataclass(frozen=True)
class _Blob:
    """A solid dark square-ish patch: a marker, the tag, or something that looks like one."""

    centre: Point
    area: float  # pixels
    outline: Any  # its contour (for the "what I saw" picture)

    @property
    def side(self) -> float:
        return math.sqrt(self.area)


@dataclass(frozen=True)
class _Found:
    """Where the sheet is: sheet millimetres to working-picture pixels, and the blobs used."""

    to_picture: Matrix
    blobs: tuple[_Blob, ...]  # top-left, top-right, bottom-right, bottom-left, tag
    error: float  # how badly the layout fits them (0 is perfect)


def _grey(image: Image) -> Image:
    """The picture's darkness, one channel: for a colour picture the darkest of its three colours at
    each pixel, so a red or blue pen shows as dark as it is (in plain grey, red is a light grey)."""
    import cv2
    import numpy as np

    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim not in (2, 3) or min(
            image.shape[:2]) < 16:
        raise RobotError("a photo is an 8-bit picture (a numpy array as OpenCV reads it), at least 16 pixels each way")
    if image.ndim == 2:
        return image
    channels = image.shape[2]
    if channels in (3, 4):
        blue, green, red = cv2.split(image)[:3]
        return np.asarray(cv2.min(cv2.min(blue, green), red), np.uint8)
    if channels == 1:
        return np.ascontiguousarray(image[:, :, 0])
    raise RobotError(f"a photo has 1, 3 or 4 colour channels, not {channels}")


def _flat(grey: Image, feature_px: float) -> NDArray[np.float32]:
    """Each pixel's share of the paper's brightness round it (ink ≈ 0.1–0.6, paper ≈ 1). The paper's
    brightness is a morphological closing, which wipes out dark things narrower than
    ``feature_px`` but keeps a shadow's edge where it is, so shadows and lamps drop out."""
    import cv2
    import numpy as np

    height, width = grey.shape
    shrink = max(1.0, feature_px / 12)  # the closing works on a small copy: the paper's light varies slowly
    small = cv2.resize(grey, (max(2, round(width / shrink)), max(2, round(height / shrink))),
                       interpolation=cv2.INTER_AREA)
    side = 2 * math.ceil(feature_px / shrink / 2) + 1
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side))
    paper = cv2.morphologyEx(small, cv2.MORPH_CLOSE, kernel)
    paper = cv2.resize(paper, (width, height), interpolation=cv2.INTER_LINEAR)
    return np.asarray(cv2.divide(grey.astype(np.float32), np.maximum(paper, 8).astype(np.float32)), np.float32)


def _blobs(flat: NDArray[np.float32], min_side: float, max_side: float) -> list[_Blob]:
    """The solid, square-ish, really dark patches between ``min_side`` and ``max_side`` pixels across
    (a marker's hatching is nearly black; a speck of noise or the grain of a table is not)."""
    import cv2
    import numpy as np

    dark = (flat < MARKER_RATIO).astype(np.uint8)
    if min_side >= 4:  # bridge the stripes of a marker hatched with a fine pen
        dark = np.asarray(cv2.morphologyEx(dark, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3))),
                          np.uint8)
    count, labels, stats, centroids = cv2.connectedComponentsWithStats(dark, connectivity=8)
    areas = stats[:, cv2.CC_STAT_AREA].astype(np.float64)
    box_w, box_h = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT]
    span = np.maximum(box_w, box_h)
    plausible = ((areas >= min_side * min_side * 0.6) & (span <= max_side * 1.5) & (span >= min_side)
                 & (areas >= 0.4 * box_w * box_h) & (np.minimum(box_w, box_h) * 3 >= span))
    plausible[0] = False  # the background
    chosen = np.nonzero(plausible)[0]
    if len(chosen) == 0:
        return []
    darkness = np.bincount(labels.ravel(), weights=flat.ravel(), minlength=count)[chosen] / areas[chosen]
    chosen, darkness = chosen[darkness < 0.52], darkness[darkness < 0.52]
    if len(chosen) > 120:  # a pattern of dark squares all over (a tiled table?): the darkest are likeliest
        chosen = chosen[np.argsort(darkness)[:120]]
    found = []
    for label in chosen:
        x, y, w, h = (int(v) for v in stats[label, :4])
        patch = (labels[y:y + h, x:x + w] == label).astype(np.uint8)
        contours, _ = cv2.findContours(patch, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        outline = max(contours, key=cv2.contourArea) + np.array([x, y], np.int32)
        (_, _), (rect_w, rect_h), _ = cv2.minAreaRect(outline)
        if min(rect_w, rect_h) < 1:
            continue
        solid = areas[label] / (rect_w * rect_h)
        if solid < 0.72 or max(rect_w, rect_h) / min(rect_w, rect_h) > 2.2:
            continue
        cx, cy = centroids[label]
        found.append(_Blob((float(cx), float(cy)), float(areas[label]), outline))
    return found


def _layout(sheet: Sheet) -> tuple[list[Point], Point]:
    """The four markers' centres (clockwise from the top-left) and the tag's, in sheet millimetres."""
    return list(sheet.marker_centres()), sheet.tag_centre()


def _projected_area(to_picture: Matrix, centre: Point, side: float) -> float:
    import cv2
    import numpy as np

    half = side / 2
    square = np.array([[(centre[0] - half, centre[1] - half), (centre[0] + half, centre[1] - half),
                        (centre[0] + half, centre[1] + half), (centre[0] - half, centre[1] + half)]], np.float64)
    return float(abs(cv2.contourArea(cv2.perspectiveTransform(square, to_picture)[0].astype(np.float32))))


def _angle_between(a: Point, b: Point) -> float:
    dot = a[0] * b[0] + a[1] * b[1]
    return math.acos(max(-1.0, min(1.0, dot / ((math.hypot(*a) * math.hypot(*b)) or 1.0))))


def _match(blobs: list[_Blob], sheet: Sheet, min_marker: float) -> _Found | None:
    """The four corner markers and the tag among ``blobs``, or None: every top-left marker and tag
    pair (the tag half the size, a marker's width away) fixes which way the sheet's x axis runs;
    top-right and bottom-left markers are sought along it and across it, bottom-right where the
    other three put it; the homography through the four must then land the tag on its blob and
    give every marker its size. Markers are at least ``min_marker`` pixels across."""
    corners, tag = _layout(sheet)
    ink_pad = 0.8  # a pen's width added round the hatched squares
    marker_side, tag_side = sheet.marker_mm + ink_pad, sheet.tag_mm + ink_pad
    across = math.dist(corners[0], corners[1])
    down = math.dist(corners[0], corners[3])
    tag_gap = math.dist(corners[0], tag)
    best: _Found | None = None
    for anchor in blobs:
        if anchor.side < min_marker:
            continue
        for small in blobs:
            ratio = small.side / anchor.side
            gap = math.dist(anchor.centre, small.centre) / anchor.side
            if not (0.3 <= ratio <= 0.85 and 0.5 * tag_gap / marker_side <= gap <= 1.6 * tag_gap / marker_side):
                continue
            x_way = (small.centre[0] - anchor.centre[0], small.centre[1] - anchor.centre[1])
            y_way = (-x_way[1], x_way[0])  # the picture's y runs down, as the sheet's does
            scale = math.dist(anchor.centre, small.centre) / tag_gap  # pixels per mm near the anchor, roughly
            others = [b for b in blobs if b is not anchor and b is not small and b.side >= min_marker
                      and 0.45 <= b.side / anchor.side <= 2.2]
            rights = [b for b in others if _angle_between(x_way, _offset(anchor, b)) < 0.8
                      and 0.35 <= math.dist(anchor.centre, b.centre) / (across * scale) <= 2.8]
            lows = [b for b in others if _angle_between(y_way, _offset(anchor, b)) < 0.8
                    and 0.35 <= math.dist(anchor.centre, b.centre) / (down * scale) <= 2.8]
            for right in rights:
                for low in lows:
                    if low is right:
                        continue
                    guess = (right.centre[0] + low.centre[0] - anchor.centre[0],
                             right.centre[1] + low.centre[1] - anchor.centre[1])
                    reach = 0.5 * min(math.dist(anchor.centre, right.centre), math.dist(anchor.centre, low.centre))
                    far = [b for b in others if b is not right and b is not low and math.dist(b.centre, guess) < reach]
                    for opposite in far:
                        found = _check(sheet, (anchor, right, opposite, low, small), marker_side, tag_side)
                        if found is not None and (best is None or found.error < best.error):
                            best = found
    return best


def _offset(a: _Blob, b: _Blob) -> Point:
    return b.centre[0] - a.centre[0], b.centre[1] - a.centre[1]


def _check(sheet: Sheet, blobs: tuple[_Blob, ...], marker_side: float, tag_side: float) -> _Found | None:
    """The homography through the four markers, if it explains the tag and every size."""
    import cv2
    import numpy as np

    corners, tag = _layout(sheet)
    source = np.array(corners, np.float32)
    target = np.array([b.centre for b in blobs[:4]], np.float32)
    if cv2.contourArea(target) <= 0:  # mirrored or folded: not a sheet seen from above
        return None
    to_picture = np.asarray(cv2.getPerspectiveTransform(source, target), np.float64)
    predicted = cv2.perspectiveTransform(np.array([[tag]], np.float64), to_picture)[0, 0]
    tag_blob = blobs[4]
    tag_error = math.dist((float(predicted[0]), float(predicted[1])), tag_blob.centre) / blobs[0].side
    if tag_error > 0.45:
        return None
    size_error = 0.0
    for blob, (centre, side) in zip(blobs, [(c, marker_side) for c in corners] + [(tag, tag_side)], strict=True):
        expected = _projected_area(to_picture, centre, side)
        if expected <= 0:
            return None
        log_ratio = abs(math.log(blob.area / expected))
        if log_ratio > math.log(2.2):
            return None
        size_error += log_ratio
    return _Found(_refine(sheet, blobs), blobs, tag_error + size_error / 5)


def _refine(sheet: Sheet, blobs: tuple[_Blob, ...]) -> Matrix:
    """The homography through all five centres, least squares."""
    import cv2
    import numpy as np

    corners, tag = _layout(sheet)
    source = np.array([*corners, tag], np.float64)
    target = np.array([b.centre for b in blobs], np.float64)
    matrix, _ = cv2.findHomography(source, target, 0)
    return np.asarray(matrix, np.float64)


def _find_sheet(grey: Image, sheet: Sheet) -> tuple[_Found | None, list[_Blob]]:
    """The sheet in ``grey`` (at working size) and the blobs looked at. The markers' size in the
    picture is not known, and the paper's brightness has to be measured over a little more than a
    marker (wider, and a narrow shadow would count as ink; narrower, and the markers would count as
    paper), so the search tries a ladder of sizes, a factor √2 apart, on the picture halved and
    halved again (big markers are found as well in a small copy, and much faster), from the
    coarsest, and stops at the first size where the markers and the tag are found."""
    import cv2
    import numpy as np

    levels = [grey]
    while min(levels[-1].shape) >= 96 and len(levels) < 5:
        height, width = levels[-1].shape
        levels.append(np.asarray(cv2.resize(levels[-1], (width // 2, height // 2), interpolation=cv2.INTER_AREA),
                                 np.uint8))
    most: list[_Blob] = []  # the most candidates any size saw, to show when nothing fits
    for depth in range(len(levels) - 1, -1, -1):
        factor = 2 ** depth
        for feature in ((24, 17, 12) if depth == 0 else (24, 17)):
            blobs = _blobs(_flat(levels[depth], feature), 0.16 * feature, 0.9 * feature)
            found = _match(blobs, sheet, min_marker=0.33 * feature)
            if found is not None:
                return _scaled(found, factor), [_scaled_blob(b, factor) for b in blobs]
            if len(blobs) > len(most):
                most = [_scaled_blob(b, factor) for b in blobs]
    return None, most


def _scaled_blob(blob: _Blob, factor: int) -> _Blob:
    cx, cy = blob.centre
    return _Blob(((cx + 0.5) * factor - 0.5, (cy + 0.5) * factor - 0.5), blob.area * factor * factor,
                 blob.outline * factor)


def _scaled(found: _Found, factor: int) -> _Found:
    """``found`` (in a picture ``factor`` times smaller) in the working picture's pixels."""
    import numpy as np

    if factor == 1:
        return found
    offset = 0.5 * factor - 0.5  # pixel centres: x_full = (x_small + 0.5) * factor - 0.5
    shift = np.array([[factor, 0, offset], [0, factor, offset], [0, 0, 1]], np.float64)
    return _Found(shift @ found.to_picture, tuple(_scaled_blob(b, factor) for b in found.blobs), found.error)


# --- reading the cells ------------------------------------------------------------------------

@dataclass(frozen=True)
class _Rectified:
    """The sheet straightened out: ``grey`` at ``CELL_PX`` pixels a cell (the whole sheet, margins
    too), and the matrix that takes working-picture pixels there."""

    grey: Image
    from_picture: Matrix
    px_per_mm: float


def _rectify(grey: Image, found: _Found, sheet: Sheet) -> _Rectified:
    import cv2
    import numpy as np

    px_per_mm = CELL_PX / sheet.cell_mm
    size = (round(sheet.width * px_per_mm), round(sheet.height * px_per_mm))
    from_picture = np.diag([px_per_mm, px_per_mm, 1.0]) @ np.linalg.inv(found.to_picture)
    to_rectified, source = from_picture, grey
    cell_in_picture = math.sqrt(_projected_area(found.to_picture, sheet.cell_centre(0), sheet.cell_mm))
    if cell_in_picture > 1.6 * CELL_PX:  # shrink first, so thin lines are averaged rather than skipped
        shrink = 1.25 * CELL_PX / cell_in_picture
        height, width = grey.shape
        source = np.asarray(cv2.resize(grey, (max(1, round(width * shrink)), max(1, round(height * shrink))),
                                       interpolation=cv2.INTER_AREA), np.uint8)
        to_rectified = to_rectified @ np.diag([1 / shrink, 1 / shrink, 1.0])
    flat = cv2.warpPerspective(source, to_rectified, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return _Rectified(np.asarray(flat, np.uint8), from_picture, px_per_mm)


def _half_lines(length: int) -> list[tuple[Any, Any]]:
    """Pairs of one-sided line kernels (each half of a line through the centre, the centre
    included), across, down and along both diagonals."""
    import numpy as np

    pairs = []
    size = 2 * length + 1
    for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
        halves = []
        for sign in (1, -1):
            kernel = np.zeros((size, size), np.uint8)
            for step in range(length + 1):
                kernel[length + sign * step * dy, length + sign * step * dx] = 1
            halves.append(kernel)
        pairs.append((halves[0], halves[1]))
    return pairs



def _inkness(grey: Image) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """How much darker than the paper round it each pixel is (0 paper, towards 1 black), for thin
    lines and, with the lines wiped out, for solid patches (a shaded square).

    For lines, the paper's brightness at a pixel is the brightest it gets within a few pixels on
    *both* sides, in whichever of four directions that is brightest: a pen line has paper close on
    both sides, while the edge of a shadow has it on one side only and a soft shadow's darkest
    stretch is too wide, so shadows do not count however sharp. For patches, the picture with its
    lines closed over is divided by the paper's brightness measured over more than a cell."""
    import cv2
    import numpy as np

    smooth = cv2.GaussianBlur(grey, (0, 0), 1.0).astype(np.float32)  # a pen line is 2-4 pixels wide here
    paper = smooth.copy()
    for one_side, other_side in _half_lines(HALF_LINES):
        both = cv2.min(cv2.dilate(smooth, one_side), cv2.dilate(smooth, other_side))
        paper = np.asarray(cv2.max(paper, both), np.float32)
    thin = 1 - smooth / np.maximum(paper, 1.0)
    side = 2 * round(CELL_PX * 0.08) + 1  # wipe out lines up to a sixth of a cell wide, shading stays
    no_lines = cv2.morphologyEx(smooth, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side)))
    solid = 1 - _flat(np.clip(no_lines, 0, 255).astype(np.uint8), CELL_PX * 1.15)
    return np.asarray(thin, np.float32), np.asarray(solid, np.float32)


def _line_positions(thin: NDArray[np.float32], sheet: Sheet, px_per_mm: float
                    ) -> tuple[list[list[float]], list[list[float]], float]:
    """Where the grid's lines really are, row band by row band and column band by column band:
    ``columns[row]`` holds the x of every column edge (outer edges extrapolated a cell out) and
    ``rows[col]`` the y of every row edge. The homography from the markers is close; a lens
    bends the lines a little, so each line is found again near where it should be. Also the share
    of the line pieces found (1 when the sheet has no inner lines): a sheet with other rows and
    columns has its lines elsewhere."""
    import numpy as np

    cell = sheet.cell_mm * px_per_mm
    left, top = sheet.margin_mm * px_per_mm, sheet.margin_mm * px_per_mm
    reach = int(cell * 0.2)

    def find(profile_of: Any, expected: float) -> float | None:
        start = max(0, round(expected) - reach)
        profile = profile_of(start, round(expected) + reach + 1)
        if profile.size < 3:
            return None
        peak = int(np.argmax(profile))
        if profile[peak] < 0.12:  # no line there (or washed out): keep the homography's word
            return None
        offset = 0.0
        if 0 < peak < profile.size - 1:  # the top of a parabola through the peak and its neighbours
            a, b, c = profile[peak - 1], profile[peak], profile[peak + 1]
            offset = 0.5 * (a - c) / (a - 2 * b + c) if a - 2 * b + c < 0 else 0.0
        return start + peak + offset

    def edges(origin: float, measured: list[float | None]) -> list[float]:
        found = [origin + j * cell if m is None else m for j, m in enumerate(measured)]
        if len(measured) > 2 and measured[1] is not None:  # the outer edges have no line: a cell beyond
            found[0] = found[1] - cell
        if len(measured) > 2 and measured[-2] is not None:
            found[-1] = found[-2] + cell
        return found

    columns = []
    seen = expected = 0
    for row in range(sheet.rows):
        y0, y1 = round(top + (row + 0.2) * cell), round(top + (row + 0.8) * cell)
        measured: list[float | None] = [None]
        for j in range(1, sheet.cols):
            measured.append(find(lambda a, b, y0=y0, y1=y1: np.median(thin[y0:y1, a:b], axis=0),
                                 left + j * cell))
        measured.append(None)
        seen += sum(m is not None for m in measured)
        expected += sheet.cols - 1
        columns.append(edges(left, measured))
    rows = []
    for col in range(sheet.cols):
        x0, x1 = round(left + (col + 0.2) * cell), round(left + (col + 0.8) * cell)
        measured = [None]
        for i in range(1, sheet.rows):
            measured.append(find(lambda a, b, x0=x0, x1=x1: np.median(thin[a:b, x0:x1], axis=1),
                                 top + i * cell))
        measured.append(None)
        seen += sum(m is not None for m in measured)
        expected += sheet.rows - 1
        rows.append(edges(top, measured))
    return columns, rows, seen / expected if expected else 1.0


@dataclass(frozen=True)
class _Cell:
    """What one cell's ink looks like, measured in cells (so the sheet's size does not matter)."""

    box: tuple[int, int, int, int]  # the part of the straightened sheet looked at: x0, y0, x1, y1
    ink: float  # the share of the cell under ink (lines a pen draws)
    spread: float  # how unevenly far the ink lies from its centre (std / mean): an O's ring is even
    middle: float  # the share of the ink near its own centre: an X crosses there, an O has a hole
    thinness: float  # the ink's narrower spread over its wider one: a lone stroke is thin, X and O are not
    coverage: float  # the share of directions the outer ink lies in: an X's four arms, all round for an O
    reach: float  # the ink's mean distance from its centre, in cells
    off_centre: float  # how far the ink's centre is from the cell's, in cells
    patch: float  # the share of the cell covered by a solid dark patch lying inside it (a shaded square)
    ring: float = 0.0  # the share of the ink near the ellipse fitted to it: an O's ring
    corners: float = 0.0  # how much the ring bulges into corners (3rd–6th harmonics of its radius): a polygon's
    lines: float = 0.0  # the share of the ink near two straight lines fitted to it: an X's two strokes
    diagonal: float = 0.0  # how far those lines lie from level and upright (degrees, the two's mean): an X's ≈ 45
    balance: float = 0.0  # each line's shorter arm from the crossing over its longer (the lesser): a tick's is ≈ 0
    crossing: float = 0.0  # the angle between the two lines (degrees, 0–90): an X's strokes cross at 70° or more
    faint: float = 0.0  # how like an X or O the cell's faint ink is (looked for only when it has little firm ink)


def _ring(px: Any, py: Any) -> tuple[float, float]:
    """How well an ellipse fitted to the ink carries it (the share within a pen's width or so of it)
    and how cornered it is (the 3rd to 6th harmonics of its radius round the ellipse, over the mean
    radius): an O is a smooth ring, a triangle, square or star is not."""
    import cv2
    import numpy as np

    if len(px) < 6:
        return 0.0, 1.0
    (cx, cy), (width, height), angle = cv2.fitEllipse(np.column_stack([px, py]).astype(np.float32))
    if min(width, height) <= 1e-3:
        return 0.0, 1.0
    turn = math.radians(angle)
    u = (px - cx) * math.cos(turn) + (py - cy) * math.sin(turn)
    v = -(px - cx) * math.sin(turn) + (py - cy) * math.cos(turn)
    radius = np.hypot(u / (width / 2), v / (height / 2))
    pen = 0.05 / max(1e-3, min(width, height) / 2)  # a pen line's half width (cells) over the ellipse's radius
    share = float(np.mean(np.abs(radius - 1) < pen + 0.08))
    bins = ((np.arctan2(v / height, u / width) + math.pi) / math.tau * 32).astype(int) % 32
    sums, counts = np.bincount(bins, radius, 32), np.bincount(bins, minlength=32)
    filled = np.nonzero(counts)[0]
    if len(filled) < RING_OPEN_BINS:
        return share, 1.0
    profile = sums[filled] / counts[filled]
    if len(filled) < RING_CLOSED_BINS:
        # An O left open: the harmonics need the whole way round. What a smooth curve (the radius's
        # first two harmonics) leaves unexplained over the part drawn is as small as a closed O's corners.
        angles = filled * (math.tau / 32)
        smooth = np.column_stack([np.ones_like(angles)] + [f(k * angles) for k in (1, 2) for f in (np.cos, np.sin)])
        fit, *_ = np.linalg.lstsq(smooth, profile, rcond=None)
        return share, float(np.sqrt(np.mean((profile - smooth @ fit) ** 2)) / max(float(fit[0]), 1e-6))
    spectrum = np.abs(np.fft.rfft(np.where(counts > 0, sums / np.maximum(counts, 1), 1.0))) / 32
    return share, float(np.sqrt(np.sum(spectrum[3:7] ** 2)) / max(spectrum[0], 1e-6))


RING_CLOSED_BINS, RING_OPEN_BINS = 24, 16  # of 32 directions round a ring: a closed O's, and an open one's at least


CROSS_ANGLES = 60  # directions the two-line fit tries (every 3°)
CROSS_STEP = 0.02  # its offsets' step, in cells
CROSS_NEAR = 0.06  # ink this close to a line (in cells: half a felt-tip's line and a hand's wobble) is on it


def _two_lines(px: Any, py: Any) -> tuple[float, float, float, float]:
    """Fit two straight lines to the ink (the strongest line by a Hough vote, then the strongest of
    the rest at least 40° from it, each refined by least squares) and say how X-like they are:
    the share of the ink on them, their mean angle from level or upright (degrees: 45 for an X,
    near 0 for an upright cross), how evenly the crossing splits each (the lesser of their shorter
    arm over their longer: a tick's strokes meet at an end) and the angle they cross at."""
    import numpy as np

    if len(px) < 12:
        return 0.0, 0.0, 0.0, 0.0
    cx, cy = px.mean(), py.mean()
    dx, dy = px - cx, py - cy
    turn = np.arange(CROSS_ANGLES) * math.pi / CROSS_ANGLES
    offsets = np.outer(dy, np.cos(turn)) - np.outer(dx, np.sin(turn))  # each pixel's side-offset from each line
    half = 40  # offset steps each way (0.8 of a cell)
    votes_at = (np.clip(np.round(offsets / CROSS_STEP).astype(int) + half, 0, 2 * half)
                + (2 * half + 1) * np.arange(CROSS_ANGLES)).ravel()

    def strongest(weights: Any, allowed: Any) -> tuple[int, float]:
        votes = np.bincount(votes_at, np.repeat(weights, CROSS_ANGLES), CROSS_ANGLES * (2 * half + 1))
        votes = votes.reshape(CROSS_ANGLES, -1)
        band = votes[:, :-4] + votes[:, 1:-3] + votes[:, 2:-2] + votes[:, 3:-1] + votes[:, 4:]  # a line's width
        band[~allowed] = -1
        angle, step = np.unravel_index(int(np.argmax(band)), band.shape)
        return int(angle), (int(step) + 2 - half) * CROSS_STEP

    first, first_offset = strongest(np.ones(len(px)), np.ones(CROSS_ANGLES, bool))
    rest = np.abs(offsets[:, first] - first_offset) >= CROSS_NEAR
    apart = np.abs((np.arange(CROSS_ANGLES) - first + CROSS_ANGLES // 2) % CROSS_ANGLES - CROSS_ANGLES // 2)
    second, second_offset = strongest(rest.astype(np.float64), apart >= CROSS_ANGLES * 40 // 180)
    lines = [(cx - math.sin(turn[a]) * r, cy + math.cos(turn[a]) * r, math.cos(turn[a]), math.sin(turn[a]))
             for a, r in ((first, first_offset), (second, second_offset))]
    for _ in range(2):  # refine: each line through the ink nearer it than the other, by least squares
        distance = np.stack([np.abs((py - y) * c - (px - x) * s) for x, y, c, s in lines])
        nearer = distance.argmin(0)
        refined = []
        for k in range(2):
            on = (nearer == k) & (distance[k] < CROSS_NEAR)
            if np.count_nonzero(on) < 5:
                return 0.0, 0.0, 0.0, 0.0
            qx, qy = px[on], py[on]
            mx, my = float(qx.mean()), float(qy.mean())
            qx, qy = qx - mx, qy - my
            heading = 0.5 * math.atan2(2 * float(qx @ qy), float(qx @ qx) - float(qy @ qy))  # the principal axis
            refined.append((mx, my, math.cos(heading), math.sin(heading)))
        lines = refined
    distance = np.stack([np.abs((py - y) * c - (px - x) * s) for x, y, c, s in lines])
    share = float(np.mean(distance.min(0) < CROSS_NEAR))
    (x1, y1, c1, s1), (x2, y2, c2, s2) = lines
    across = c2 * s1 - c1 * s2
    if abs(across) < 0.2:  # nearly parallel: no crossing
        return share, 0.0, 0.0, 0.0
    along = ((x1 - x2) * s2 - (y1 - y2) * c2) / across
    meet_x, meet_y = x1 + along * c1, y1 + along * s1
    nearer = distance.argmin(0)
    balance = 1.0
    for k, (_, _, c, s) in enumerate(lines):
        on = (nearer == k) & (distance[k] < CROSS_NEAR)
        reach = np.sort((px[on] - meet_x) * c + (py[on] - meet_y) * s)
        trim = len(reach) // 32  # a few pixels at each end: a speck or a flick of the pen
        ahead, behind = float(reach[-1 - trim]), -float(reach[trim])
        balance = min(balance, max(0.0, min(ahead, behind)) / max(ahead, behind, 1e-6))
    slants = [math.degrees(math.atan2(s, c)) % 90 for _, _, c, s in lines]
    diagonal = sum(min(slant, 90 - slant) for slant in slants) / 2
    crossing = math.degrees(math.acos(min(1.0, abs(c1 * c2 + s1 * s2))))
    return share, diagonal, balance, crossing


def _ink_mask(window: NDArray[np.float32], weak: float, strong: float) -> NDArray[np.bool_]:
    """The ink in a cell: pixels above ``weak`` joined to one above ``strong`` (hysteresis, so a
    faint stretch of a firm stroke counts and a speck of noise does not), in pieces big enough to be
    pen strokes and shaped like them (long and narrow: noise clumps together in blobs), and reaching
    into the cell's middle (a stroke only along the edge is a neighbour's mark running over, or the
    grid line). A small round blob right in the middle stays: the robot's dot."""
    import cv2
    import numpy as np

    height, width = window.shape
    count, labels, stats, centroids = cv2.connectedComponentsWithStats((window > weak).astype(np.uint8),
                                                                       connectivity=8)
    strong_hits = np.bincount(labels.ravel(), weights=(window > strong).ravel(), minlength=count)
    keep = np.zeros(count, bool)
    edge_x, edge_y = width * 0.22, height * 0.22
    for label in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[label])
        if strong_hits[label] == 0 or area < CELL_PX * CELL_PX * 0.003:
            continue
        if x + w < edge_x or x > width - edge_x or y + h < edge_y or y > height - edge_y:
            continue
        cx, cy = centroids[label]
        in_middle = math.hypot(cx - width / 2, cy - height / 2) < CELL_PX * 0.1
        if area < CELL_PX * CELL_PX * STROKE_AREA and max(w, h) ** 2 < STROKE_LENGTH * area and not in_middle:
            continue  # a small clump, not a piece of stroke
        keep[label] = True
    return np.asarray(keep[labels], np.bool_)


def _patch_share(solid: NDArray[np.float32]) -> float:
    """The share of the window covered by solid dark patches that lie wholly inside it and are
    darker than the paper just round them: a shaded square. A shadow is dark too, but it does not
    stop short of the window's edges."""
    import cv2
    import numpy as np

    height, width = solid.shape
    count, labels, stats, _ = cv2.connectedComponentsWithStats((solid > 0.3).astype(np.uint8), connectivity=8)
    near = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (11, 11))
    far = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (25, 25))
    covered = 0
    for label in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[label])
        if area < 0.05 * width * height or x == 0 or y == 0 or x + w >= width or y + h >= height:
            continue
        patch = (labels == label).astype(np.uint8)
        around = (cv2.dilate(patch, far) > 0) & (cv2.dilate(patch, near) == 0)
        if np.count_nonzero(around) and float(solid[patch > 0].mean()) - float(solid[around].mean()) < 0.12:
            continue
        covered += area
    return covered / (width * height) if width and height else 0.0


def _measure_cell(thin: NDArray[np.float32], solid: NDArray[np.float32], box: tuple[int, int, int, int],
                  around: tuple[int, int, int, int], noise: float) -> _Cell:
    """Measure the ink inside ``box`` (the cell less a band along its lines); shaded patches are
    looked for in ``around`` (the cell and a little of its neighbours, as shading spills over)."""
    import numpy as np

    x0, y0, x1, y1 = box
    window = thin[y0:y1, x0:x1]
    if window.size == 0:
        return _Cell(box, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    # The paper's own noise sets the bar: a photo's median, or this cell's if it is in a shadow (noisier).
    level = max(noise, float(np.median(window)))
    weak, strong = max(WEAK[0], WEAK[1] * level + WEAK[2]), max(STRONG[0], STRONG[1] * level + STRONG[2])
    mask = _ink_mask(window, weak, strong)
    ax0, ay0, ax1, ay1 = around
    patch = _patch_share(solid[ay0:ay1, ax0:ax1]) * (
        (ax1 - ax0) * (ay1 - ay0) / max(1, (x1 - x0) * (y1 - y0)))
    cell = _shape(box, mask, patch)
    if cell.ink < MARK_INK:  # too little firm ink for a mark: is a faint one there (a light pencil)?
        faint = _shape(box, _ink_mask(window, weak * FAINT, strong * FAINT), patch)
        if faint.ink >= MARK_INK:
            # An X's strokes only if clean: nearly all the faint ink on the two lines (noise's is not).
            clean_x = min(_x_likeness(faint), _ramp(faint.lines, *FAINT_LINES))
            cell = replace(cell, faint=max(clean_x, _o_likeness(faint)))
    return cell


def _shape(box: tuple[int, int, int, int], mask: NDArray[np.bool_], patch: float) -> _Cell:
    """The shape of the ink in ``mask`` (a cell's window)."""
    import numpy as np

    x0, y0, x1, y1 = box
    ys, xs = np.nonzero(mask)
    ink = len(xs) / (CELL_PX * CELL_PX)
    if len(xs) < 3:
        return _Cell(box, ink, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, patch)
    px, py = xs.astype(np.float64) / CELL_PX, ys.astype(np.float64) / CELL_PX
    cx, cy = px.mean(), py.mean()
    distances = np.hypot(px - cx, py - cy)
    reach = float(distances.mean())
    spread = float(distances.std() / reach) if reach > 0 else 0.0
    middle = float(np.mean(distances < 0.35 * reach))
    eigen = np.linalg.eigvalsh(np.cov(np.vstack([px, py])))
    thinness = float(math.sqrt(max(eigen[0], 0.0) / eigen[1])) if eigen[1] > 0 else 0.0
    off_centre = math.hypot(cx - (x1 - x0) / 2 / CELL_PX, cy - (y1 - y0) / 2 / CELL_PX)
    outer = distances > 0.6 * reach
    angles = np.arctan2(py[outer] - cy, px[outer] - cx)
    sectors = np.bincount(((angles + math.pi) / (2 * math.pi) * 16).astype(int) % 16, minlength=16)
    coverage = float(np.mean(sectors >= max(2, 0.02 * np.count_nonzero(outer))))
    ring, corners = _ring(px, py)
    lines = diagonal = balance = crossing = 0.0
    if ink >= EMPTY_INK and spread > X_SPREAD[0] and coverage < X_COVERAGE[0]:  # could be an X: worth the fit
        lines, diagonal, balance, crossing = _two_lines(px, py)
    return _Cell(box, ink, spread, middle, thinness, coverage, reach, off_centre, patch, ring, corners, lines,
                 diagonal, balance, crossing)


def _ramp(value: float, low: float, high: float) -> float:
    """0 at ``low``, 1 at ``high``, straight in between (either way round)."""
    return max(0.0, min(1.0, (value - low) / (high - low)))


# What the synthetic photos taught (see benchmarks/robot_camera.py): an empty cell's ink stays below
# 0.02 of the cell (stray bits of a neighbour's mark), a mark's is 0.05 or more; an X's ink lies
# unevenly far from its centre (spread 0.43 or more) with a tenth of it crossing in the middle, its
# outer ink points four ways (coverage at most 0.7 of the directions, nearly always) and it is not a
# lone stroke (thinness 0.55 or more, less when a stroke is faint); an O's ring is even (spread at
# most 0.34) round an empty middle and goes most of the way round (coverage 0.75 or more, less when
# part of it is faint; a ring left open is judged on its arc, see _ring). An X is also two straight
# strokes (nine-tenths of its ink or more within 0.06 of a cell of two lines), slanting (their mean
# angle from level or upright 28° or more; an upright cross's at most 11°), crossing at 70° or more
# and each split by the crossing into arms of which the shorter is half the longer or more (a tick's
# meet at an end: 0.35 at most); a squiggle, a word, a letter or a scribble fails one of those
# (issue 29, the stray marks of benchmarks/robot_camera.py). The ramps below leave a margin either
# side of those; an X drawn over an O satisfies neither and stays undecided.
EMPTY_INK, MARK_INK = 0.015, 0.035
X_SPREAD, X_COVERAGE = (0.36, 0.42), (0.85, 0.76)
# A light pencil's mark can stay under the bar for ink everywhere (its darkest 0.04 below the
# paper where the bar is 0.055): ink past FAINT times the bars that has an X's or an O's shape makes
# an empty-looking cell unsure. Specks of noise past those bars are common, shaped like a mark rare.
# Seed 11's empty cells' faint ink scored up to 1.0 as an X but lay at most 0.95 on the two lines;
# the faint X of photo 68 lies wholly on them.
FAINT, FAINT_LINES, FAINT_SURE = 0.5, (0.95, 0.98), (0.8, 0.9)
SHADED = 0.2


def _x_likeness(cell: _Cell) -> float:
    return min(_ramp(cell.spread, *X_SPREAD), _ramp(cell.middle, 0.03, 0.06), _ramp(cell.thinness, 0.15, 0.28),
               _ramp(cell.coverage, *X_COVERAGE), _ramp(cell.lines, 0.84, 0.9), _ramp(cell.diagonal, 14, 20),
               _ramp(cell.balance, 0.3, 0.42), _ramp(cell.crossing, 55, 62))


def _o_likeness(cell: _Cell) -> float:
    return min(_ramp(cell.spread, 0.39, 0.35), _ramp(cell.middle, 0.09, 0.06), _ramp(cell.coverage, 0.4, 0.55),
               _ramp(cell.ring, 0.8, 0.88), _ramp(cell.corners, 0.05, 0.036))


def _verdict(cell: _Cell) -> CellReading:
    """A cell's verdict and how sure it is."""
    if cell.patch >= SHADED:  # a shaded square, as the seed's light-sensor players drew: a mark of no shape
        return CellReading("?", round(0.5 + 0.5 * _ramp(cell.patch, SHADED, 2 * SHADED), 3))
    if 0 < cell.reach < 0.06 and cell.off_centre < 0.06 and cell.thinness > 0.5 and cell.ink >= 0.005:
        return CellReading("?", 0.9)  # a small round dot right in the middle: the robot's dot mark
    present = _ramp(cell.ink, EMPTY_INK, MARK_INK)
    if present < 0.5:  # empty, unless faint ink there has an X's or an O's shape: then ask
        return CellReading("", round(0.99 * min(1 - present, 1 - 0.4 * _ramp(cell.faint, *FAINT_SURE)), 3))
    like_x, like_o = _x_likeness(cell), _o_likeness(cell)
    shape, likeness = ("X", like_x) if like_x >= like_o else ("O", like_o)
    if likeness < 0.5:  # a mark, but neither a clear X nor a clear O
        return CellReading("?", round(0.3 * present, 3))
    return CellReading(shape, round(min(present, likeness) * 0.99, 3))


@dataclass(frozen=True)
class _Look:
    """Everything one reading found, for the reading itself and for the "what I saw" picture."""

    reading: SheetReading
    work: Image | None = None  # the picture at working size (colour if it was)
    found: _Found | None = None
    rectified: _Rectified | None = None
    cells: tuple[_Cell, ...] = ()
    blobs: tuple[_Blob, ...] = ()


def _working(image: Image) -> tuple[Image, Image]:
    """The picture at working size, in colour (as given) and grey."""
    import cv2
    import numpy as np

    grey = _grey(image)
    height, width = grey.shape
    shrink = min(1.0, WORK_PX / max(height, width))
    if shrink < 1:
        size = (max(16, round(width * shrink)), max(16, round(height * shrink)))
        return (np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_AREA), np.uint8),
                np.asarray(cv2.resize(grey, size, interpolation=cv2.INTER_AREA), np.uint8))
    return image, grey


def _look(image: Image, sheet: Sheet) -> _Look:
    """Find the sheet in ``image``, straighten it out and measure and judge every cell."""
    import numpy as np

    _opencv()
    colour, grey = _working(image)
    found, blobs = _find_sheet(grey, sheet)
    if found is None:
        return _Look(SheetReading((), found=False, message=_not_found_message(blobs)), colour, blobs=tuple(blobs))
    outline = _outline(found, sheet, image.shape[1] / grey.shape[1], image.shape[0] / grey.shape[0])
    rectified = _rectify(grey, found, sheet)
    thin, solid = _inkness(rectified.grey)
    columns, rows, lines_found = _line_positions(thin, sheet, rectified.px_per_mm)
    if lines_found < 0.5:
        message = (f"the grid's lines are not where a {sheet.rows}×{sheet.cols} sheet has them: is the sheet in the "
                   f"picture a {sheet.rows}×{sheet.cols} one?")
        return _Look(SheetReading((), found=False, message=message, outline=outline), colour, blobs=tuple(blobs))
    left, top, right, bottom = (round(v * rectified.px_per_mm) for v in sheet.grid_box)
    noise = float(np.median(thin[top:bottom, left:right]))
    inset = CELL_PX * 0.09
    cells = []
    for cell in range(sheet.rows * sheet.cols):
        row, col = divmod(cell, sheet.cols)
        x0, x1 = columns[row][col] + inset, columns[row][col + 1] - inset
        y0, y1 = rows[col][row] + inset, rows[col][row + 1] - inset
        box = _clipped((x0, y0, x1, y1), thin.shape)
        around = _clipped((x0 - 2 * inset, y0 - 2 * inset, x1 + 2 * inset, y1 + 2 * inset), thin.shape)
        cells.append(_measure_cell(thin, solid, box, around, noise))
    readings = tuple(_verdict(cell) for cell in cells)
    return _Look(SheetReading(readings, outline=outline), colour, found, rectified, tuple(cells), tuple(blobs))


def _outline(found: _Found, sheet: Sheet, scale_x: float, scale_y: float) -> tuple[tuple[float, float], ...]:
    """The sheet's four corners (clockwise from the top-left) in the given picture's pixels: the
    homography lands them in the working picture, ``scale_x``/``scale_y`` times smaller."""
    import cv2
    import numpy as np

    corners = np.array([[(0.0, 0.0), (sheet.width, 0.0), (sheet.width, sheet.height), (0.0, sheet.height)]],
                       np.float64)
    working = cv2.perspectiveTransform(corners, found.to_picture)[0]
    # pixel centres: x_given = (x_working + 0.5) * scale - 0.5
    return tuple((round(float((x + 0.5) * scale_x - 0.5), 1), round(float((y + 0.5) * scale_y - 0.5), 1))
                 for x, y in working)


def _clipped(box: tuple[float, float, float, float], shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = box
    return max(0, round(x0)), max(0, round(y0)), min(shape[1], round(x1)), min(shape[0], round(y1))


def _not_found_message(blobs: list[_Blob]) -> str:
    if not blobs:
        return ("the sheet is not in the picture: no black corner squares were found (is the whole sheet in view, "
                "in focus and lit?)")
    return ("the sheet is not in the picture: its four black corner squares and the small square beside the "
            "top-left one were not all found (is the whole sheet in view, in focus and lit?)")


def unsure_cells(reading: SheetReading) -> list[int]:
    """The cells a person has to be asked about: read with a confidence below :data:`SURE`, or
    holding a mark that is neither an X nor an O (``?``, however sure)."""
    return [cell for cell, r in enumerate(reading.cells) if r.confidence < SURE or r.mark == "?"]


def best_position(reading: SheetReading, cols: int) -> str:
    """The reading in the usual notation, ``?`` for every cell in :func:`unsure_cells`."""
    doubtful = set(unsure_cells(reading))
    marks = ["?" if cell in doubtful else (r.mark or ".") for cell, r in enumerate(reading.cells)]
    return "/".join("".join(marks[i:i + cols]) for i in range(0, len(marks), cols))


# --- the public face --------------------------------------------------------------------------

def read_image(image: Image, sheet: Sheet) -> SheetReading:
    """Read the sheet in ``image`` (a BGR, BGRA or grey picture as OpenCV gives it): each cell's
    verdict (``"X"``, ``"O"``, ``""`` empty, ``"?"`` a mark of no clear shape) and confidence, in
    reading order. A sheet that cannot be found gives ``found=False`` and a sentence saying why.
    Only the proportions of ``sheet`` matter, not its size in millimetres."""
    return _look(image, sheet).reading


def what_i_saw(image: Image, sheet: Sheet) -> Image:
    """A picture of what :func:`read_image` makes of ``image``: the sheet straightened out, each
    cell framed green (sure) or orange (not sure) with its verdict and confidence; or, when the
    sheet is not found, the photo with the dark squares that were considered and the reason."""
    return _picture(_look(image, sheet), image, sheet)


def _picture(look: _Look, image: Image, sheet: Sheet) -> Image:
    """The "what I saw" picture of ``look`` (one reading of ``image``): the same verdicts, the same
    position and the same cells in doubt as :func:`sense_photo` reports from it."""
    import cv2
    import numpy as np

    colour = look.work if look.work is not None else image
    if colour.ndim == 2:
        colour = np.asarray(cv2.cvtColor(colour, cv2.COLOR_GRAY2BGR), np.uint8)
    elif colour.shape[2] == 4:
        colour = np.asarray(cv2.cvtColor(colour, cv2.COLOR_BGRA2BGR), np.uint8)
    if look.found is None or look.rectified is None:
        picture = np.ascontiguousarray(colour)
        for blob in look.blobs:
            cv2.drawContours(picture, [np.asarray(blob.outline, np.int32)], -1, (0, 140, 255), 2)
        return _caption(picture, look.reading.message, (0, 0, 200))
    scale = 2  # the straightened sheet is small; draw it bigger so the writing is legible
    size = (look.rectified.grey.shape[1] * scale, look.rectified.grey.shape[0] * scale)
    matrix = np.diag([scale, scale, 1.0]) @ look.rectified.from_picture
    picture = np.ascontiguousarray(cv2.warpPerspective(colour, matrix, size, flags=cv2.INTER_LINEAR,
                                                       borderMode=cv2.BORDER_REPLICATE))
    doubtful = unsure_cells(look.reading)
    for number, (cell, reading) in enumerate(zip(look.cells, look.reading.cells, strict=True)):
        x0, y0, x1, y1 = (v * scale for v in cell.box)
        sure = number not in doubtful
        colour_bgr = (40, 160, 40) if sure else (0, 140, 255)
        cv2.rectangle(picture, (x0, y0), (x1, y1), colour_bgr, 2)
        label = f"{reading.mark or 'empty'} {reading.confidence:.2f}"
        (text_w, text_h), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.5, 1)
        cv2.rectangle(picture, (x0, y1 - text_h - 8), (x0 + text_w + 8, y1), colour_bgr, -1)
        cv2.putText(picture, label, (x0 + 4, y1 - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1, cv2.LINE_AA)
    unsure = len(doubtful)
    position = best_position(look.reading, sheet.cols)
    caption = f"read {position}" + (f" ({unsure} cell{'s' if unsure > 1 else ''} not sure)" if unsure else "")
    return _caption(picture, caption, (40, 120, 40) if not unsure else (0, 110, 220))


def _caption(picture: Image, text: str, colour: tuple[int, int, int]) -> Image:
    """``picture`` with a white strip below it carrying ``text`` (wrapped to fit)."""
    import cv2
    import numpy as np

    width = picture.shape[1]
    scale = max(0.45, min(1.0, width / 900))
    words, lines, line = text.split(), [], ""
    for word in words:
        trial = f"{line} {word}".strip()
        if cv2.getTextSize(trial, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)[0][0] > width - 16 and line:
            lines.append(line)
            line = word
        else:
            line = trial
    lines.append(line)
    step = int(30 * scale) + 6
    strip = np.full((step * len(lines) + 10, width, 3), 255, np.uint8)
    for number, words_line in enumerate(lines):
        cv2.putText(strip, words_line, (8, step * (number + 1)), cv2.FONT_HERSHEY_SIMPLEX, scale, colour, 1,
                    cv2.LINE_AA)
    return np.vstack([picture, strip])


MAX_PIXELS = 120_000_000
"""The most pixels a photo file may have (the biggest phone cameras take 108 million): its header is
read first, and a bigger one is refused before it is decoded (decoding 900 million takes gigabytes)."""
JPEG_FRAME_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # SOF0–SOF15 (not DHT, JPG, DAC)


def _jpeg_layout(data: bytes) -> tuple[tuple[int, int] | None, str]:
    """A JPEG's width and height (from its frame header) and how it ends: ``"end"`` (its EOI marker
    comes after the last scan), ``"short"`` (the file stops first) or ``"broken"`` (not a JPEG's
    layout: the decoder will say). The segments are walked by their lengths and each scan's data to
    the next marker, so an EOI inside a thumbnail does not count and bytes after the end are ignored."""
    size: tuple[int, int] | None = None
    at = 2
    while at + 2 <= len(data):
        if data[at] != 0xFF:
            return size, "broken"
        marker = data[at + 1]
        if marker == 0xFF:  # fill bytes before a marker
            at += 1
            continue
        if marker == 0xD9:
            return size, "end"
        if 0xD0 <= marker <= 0xD7 or marker == 0x01:  # markers with no length
            at += 2
            continue
        if at + 4 > len(data):
            break
        length = int.from_bytes(data[at + 2:at + 4], "big")
        if length < 2:
            return size, "broken"
        if marker in JPEG_FRAME_MARKERS and at + 9 <= len(data):
            size = (int.from_bytes(data[at + 7:at + 9], "big"), int.from_bytes(data[at + 5:at + 7], "big"))
        at += 2 + length
        if marker == 0xDA:  # a scan: its coded data runs to the next marker that is not a stuffed byte or restart
            while True:
                at = data.find(b"\xff", at)
                if at < 0 or at + 1 >= len(data):
                    return size, "short"
                follower = data[at + 1]
                if follower == 0 or 0xD0 <= follower <= 0xD7:
                    at += 2
                elif follower == 0xFF:
                    at += 1
                else:
                    break
    return size, "short"


def _png_size(data: bytes) -> tuple[int, int] | None:
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def picture_size(data: bytes) -> tuple[tuple[int, int] | None, bool]:
    """A picture's width and height from its header, without decoding it (None: not known), and
    whether it is a format taken whole (JPEG not cut short, PNG, WebP): a frame or photo is sized up
    before the decoder is given it.

    >>> header = b"\\x89PNG\\r\\n\\x1a\\n" + bytes(4) + b"IHDR"
    >>> picture_size(header + (640).to_bytes(4, "big") + (480).to_bytes(4, "big"))
    ((640, 480), True)
    >>> picture_size(b"GIF89a")
    (None, False)
    """
    if data.startswith(b"\xff\xd8"):
        size, ending = _jpeg_layout(data)
        return size, ending != "short"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return _png_size(data), True
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data), True
    return None, False


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:  # extended: the canvas, less one, in 24 bits each
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    if chunk == b"VP8 " and len(data) >= 30:  # lossy: 14 bits each after the frame tag
        return (int.from_bytes(data[26:28], "little") & 0x3FFF, int.from_bytes(data[28:30], "little") & 0x3FFF)
    if chunk == b"VP8L" and len(data) >= 25:  # lossless: 14 bits each, less one
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def decode_picture(data: bytes) -> Image | None:
    """The picture in ``data`` (JPEG, PNG, WebP...) as OpenCV decodes it, its decoder's own warnings
    kept quiet; None if it is not one."""
    image = _decode_quietly(_opencv(), data)
    return None if image is None else image


def _decode_quietly(cv2: Any, data: bytes) -> Any:
    """``cv2.imdecode`` with the decoder's own warnings (libjpeg's "Corrupt JPEG data: …", written
    straight to the process's stderr) kept off the terminal: what went wrong is said in our words."""
    import os
    import sys
    import tempfile

    import numpy as np

    buffer = np.frombuffer(data, np.uint8)
    stderr = 2  # the C library's stderr, whatever sys.stderr is
    if sys.stderr is not None:
        sys.stderr.flush()
    try:
        saved = os.dup(stderr)
    except OSError:  # no stderr at all: nothing to keep quiet
        return cv2.imdecode(buffer, cv2.IMREAD_COLOR)
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), stderr)
            try:
                return cv2.imdecode(buffer, cv2.IMREAD_COLOR)
            finally:
                os.dup2(saved, stderr)
    finally:
        os.close(saved)


def load_photo(path: str | Path) -> Image:
    """A photo from a file (JPEG, PNG, or anything else OpenCV reads), or a :class:`RobotError`
    saying why not: missing, unreadable, not a picture, cut short, or more than :data:`MAX_PIXELS`
    (known from a JPEG's or PNG's header, before it is decoded). Bytes after a JPEG's end (some
    cameras pad their files) are ignored."""
    _opencv()
    import cv2
    import numpy as np

    from noughts import text

    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise RobotError(f"cannot read the photo {path}: {error.strerror or error}") from None
    if not data:
        raise RobotError(f"the photo {path} is an empty file")
    size: tuple[int, int] | None = None
    if data.startswith(b"\xff\xd8"):
        size, ending = _jpeg_layout(data)
        if ending == "short":
            raise RobotError(f"the photo {path} is cut short: the JPEG ends before the picture does")
    elif data.startswith(b"\x89PNG"):
        size = _png_size(data)
        if b"IEND" not in data[-64:]:
            raise RobotError(f"the photo {path} is cut short: the PNG ends before the picture does")
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise RobotError(text.photo_too_big(str(path), size[0], size[1], MAX_PIXELS))
    image = _decode_quietly(cv2, data)
    if image is None:
        raise RobotError(f"{path} is not a picture OpenCV can read (a JPEG or PNG photo of the sheet is)")
    if image.shape[0] * image.shape[1] > MAX_PIXELS:  # another format, decoded after all: not read further
        raise RobotError(text.photo_too_big(str(path), image.shape[1], image.shape[0], MAX_PIXELS))
    return np.asarray(image, np.uint8)


def save_picture(picture: Image, path: str | Path) -> Path:
    """Write a picture (a "what I saw", or a frame) to ``path``; the file's ending picks the format
    (``.png``, ``.jpg``)."""
    cv2 = _opencv()
    path = Path(path)
    try:
        written = bool(cv2.imwrite(str(path), picture))
    except cv2.error:
        written = False
    if not written:
        raise RobotError(f"could not write the picture to {path} (does the folder exist, and is the ending .png "
                         "or .jpg?)")
    return path


class CameraSensor:
    """Reads the sheet through ``cv2.VideoCapture``: ``source`` is a camera's index (0 is the first),
    a video file, or a numbered image sequence such as ``photos/photo_%03d.png``. Each
    :meth:`read` takes the next frame (a live camera's newest: ``skip`` stale frames are dropped
    first, the driver keeps a few). Implements the robot's ``Sensor``; also keeps the last frame and
    reading for :meth:`what_i_saw`."""

    def __init__(self, source: int | str | Path, sheet: Sheet, *, skip: int | None = None) -> None:
        cv2 = _opencv()
        if isinstance(source, str) and source.strip().isdigit():  # "0" from a command line or a config file
            source = int(source)
        self.sheet = sheet
        self.source = source
        shown = f"camera {source}" if isinstance(source, int) else str(source)
        if not isinstance(source, int) and "%" not in str(source) and not Path(source).exists():
            raise RobotError(f"there is no video or picture at {shown}")
        self.capture = cv2.VideoCapture(source if isinstance(source, int) else str(source))
        if not self.capture.isOpened():
            self.capture.release()
            raise RobotError(f"cannot open {shown} (is it plugged in, or the file a video or numbered pictures?)")
        self.skip = skip if skip is not None else (4 if isinstance(source, int) else 0)
        self.last_frame: Image | None = None
        self.last_reading: SheetReading | None = None
        self._last_look: _Look | None = None

    def read(self, board: Board | None = None) -> SheetReading:
        """Look at the sheet once. ``board`` (what the game knows is there) must have the sheet's shape."""
        if board is not None and (board.rows, board.cols) != (self.sheet.rows, self.sheet.cols):
            raise RobotError(f"the camera reads a {self.sheet.rows}×{self.sheet.cols} sheet, not a "
                             f"{board.rows}×{board.cols} board")
        for _ in range(self.skip):
            self.capture.grab()
        ok, frame = self.capture.read()
        if not ok or frame is None:
            self.last_frame, self._last_look = None, None
            self.last_reading = SheetReading((), found=False, message="the camera gave no picture (unplugged, or the "
                                             "video or picture sequence has ended)")
            return self.last_reading
        self.last_frame = frame
        self._last_look = _look(frame, self.sheet)
        self.last_reading = self._last_look.reading
        return self.last_reading

    def what_i_saw(self) -> Image | None:
        """The "what I saw" picture of the last frame read (from the same reading), or None before the first."""
        if self.last_frame is None or self._last_look is None:
            return None
        return _picture(self._last_look, self.last_frame, self.sheet)

    def close(self) -> None:
        self.capture.release()

    def __enter__(self) -> CameraSensor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cell_name(sheet: Sheet, cell: int) -> str:
    row, col = divmod(cell, sheet.cols)
    return f"{chr(ord('a') + col)}{row + 1}"


def sense_photo(path: str | Path, rows: int = 3, cols: int = 3, *, as_json: bool = False,
                saw: str | Path | None = None) -> tuple[int, str]:
    """``noughts robot sense PHOTO``: the exit code and the text to print. 0 and the position
    (``X.O/.X./..O``) when every cell is read with certainty; 1 and the reason when the sheet is
    not found or a cell is not certain (with the best reading, marked as such); 2 when the photo
    cannot be read or the layout is impossible. ``as_json`` gives the same as JSON with every
    cell's verdict and confidence. ``saw``: where to write the "what I saw" picture, drawn from
    the same reading."""
    try:
        sheet = Sheet(rows, cols)
        image = load_photo(path)
        look = _look(image, sheet)
        if saw is not None:
            save_picture(_picture(look, image, sheet), saw)
    except RobotError as error:
        return 2, json.dumps({"found": False, "message": str(error)}) if as_json else str(error)
    reading = look.reading
    if not reading.found:
        return 1, json.dumps({"found": False, "message": reading.message}) if as_json else reading.message
    unsure = [(cell, reading.cells[cell]) for cell in unsure_cells(reading)]
    position = best_position(reading, cols)
    message = ""
    if unsure:
        doubts = "; ".join(_doubt(sheet, cell, r) for cell, r in unsure)
        message = (f"not sure of {len(unsure)} cell{'s' if len(unsure) > 1 else ''}: {doubts}. Best reading {position}"
                   " (? = not sure); take a clearer photo or make the marks darker")
    if as_json:
        payload = {"found": True, "sure": not unsure, "position": position, "rows": rows, "cols": cols,
                   "cells": [{"cell": _cell_name(sheet, cell), "mark": r.mark or ".", "confidence": r.confidence}
                             for cell, r in enumerate(reading.cells)]}
        if message:
            payload["message"] = message
        return (1 if unsure else 0), json.dumps(payload)
    return (1, message) if unsure else (0, position)


def _doubt(sheet: Sheet, cell: int, reading: CellReading) -> str:
    name = _cell_name(sheet, cell)
    if reading.mark == "?" and reading.confidence >= SURE:
        return f"{name} holds a mark that is neither an X nor an O (a shaded square or a dot?)"
    if reading.mark == "?":
        return f"{name} holds a mark that is neither a clear X nor a clear O"
    seen = f"an {reading.mark}" if reading.mark else "empty"
    return f"{name} looks {seen}, {reading.confidence:.0%} sure"
