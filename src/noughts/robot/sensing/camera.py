"""Reading the sheet with a camera: find the robot's reference markers, straighten the sheet out and
decide, cell by cell, whether it is empty or holds an X or an O, and how sure that is.

The robot draws four filled squares in the corners of the margin and a smaller tag right of the
top-left one (:func:`~noughts.robot.strokes.marker_strokes`). :func:`read_image` finds them in a
picture taken from anywhere above the sheet, any way round and a little tilted: it flattens the
light (dividing by the paper's own brightness, so shadows and uneven lamps drop out), picks the
solid squares, and keeps the four corners and the tag whose arrangement a homography from the
sheet's layout explains. It rectifies the grid and looks at the ink in each cell: an X's ink
spreads from the middle out along its arms, an O's lies on a ring round an empty middle, a shaded
square fills its cell. Only the layout's proportions matter, not its size in millimetres.

A cell that does not look clearly like one of these gets a low confidence (below :data:`SURE`),
never a confident guess. The game decides what a reading means (one new mark expected); this
module only says what it sees. :class:`CameraSensor` reads frames through the real
``cv2.VideoCapture`` (a camera's index, a video file or a numbered image sequence such as
``photo_%03d.png``), :func:`what_i_saw` draws the straightened sheet with each cell's verdict,
and :func:`sense_photo` is the ``noughts robot sense PHOTO`` command.

OpenCV and numpy are optional (``pip install 'noughts[robot]'``): they are imported when a picture
is read, and their absence is a :class:`~noughts.robot.geometry.RobotError` saying so.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noughts.robot.backend import CellReading, SheetReading
from noughts.robot.geometry import Point, RobotError, Sheet

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from noughts.board import Board

    Image = NDArray[np.uint8]
    Matrix = NDArray[np.float64]

__all__ = ["MISSING_OPENCV", "SURE", "CameraSensor", "load_photo", "read_image", "sense_photo", "what_i_saw"]

MISSING_OPENCV = "reading the sheet with a camera needs OpenCV: pip install 'noughts[robot]'"
SURE = 0.8
"""A cell's verdict is certain at this confidence or above; below it, the cell is undecided."""

WORK_PX = 1280  # longest side the markers are looked for at; bigger pictures are shrunk first
CELL_PX = 64  # a cell's side in the straightened sheet
INK_RATIO = 0.72  # darker than this share of the paper's brightness round it is ink
MARKER_RATIO = 0.62  # the robot's solid markers are darker still (even under glare)


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
    import cv2
    import numpy as np

    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim not in (2, 3) or min(
            image.shape[:2]) < 16:
        raise RobotError("a photo is an 8-bit picture (a numpy array as OpenCV reads it), at least 16 pixels each way")
    if image.ndim == 2:
        return image
    channels = image.shape[2]
    if channels == 3:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), np.uint8)
    if channels == 4:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY), np.uint8)
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
        dark = cv2.morphologyEx(dark, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3)))
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
        outline = max(contours, key=cv2.contourArea) + (x, y)
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
                    reach = 0.35 * min(math.dist(anchor.centre, right.centre), math.dist(anchor.centre, low.centre))
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
    refined = _refine(sheet, blobs) if tag_error < 0.45 else to_picture
    return _Found(refined, blobs, tag_error + size_error / 5)


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

    levels = [grey]
    while min(levels[-1].shape) >= 96 and len(levels) < 5:
        height, width = levels[-1].shape
        levels.append(cv2.resize(levels[-1], (width // 2, height // 2), interpolation=cv2.INTER_AREA))
    seen: list[_Blob] = []
    for depth in range(len(levels) - 1, -1, -1):
        factor = 2 ** depth
        for feature in ((24, 17, 12) if depth == 0 else (24, 17)):
            blobs = _blobs(_flat(levels[depth], feature), 0.16 * feature, 0.9 * feature)
            seen = [_scaled_blob(b, factor) for b in blobs] if depth == 0 or blobs else seen
            found = _match(blobs, sheet, min_marker=0.33 * feature)
            if found is not None:
                return _scaled(found, factor), [_scaled_blob(b, factor) for b in blobs]
    return None, seen


def _scaled_blob(blob: _Blob, factor: int) -> _Blob:
    cx, cy = blob.centre
    return _Blob(((cx + 0.5) * factor - 0.5, (cy + 0.5) * factor - 0.5), blob.area * factor * factor,
                 blob.outline * factor)


def _scaled(found: _Found, factor: int) -> _Found:
    """``found`` (in a picture ``factor`` times smaller) in the working picture's pixels."""
    import numpy as np

    if factor == 1:
        return found
    # Pixel centres: x_full = (x_small + 0.5) * factor - 0.5.
    shift = np.array([[factor, 0, (factor - 1) / 2], [0, factor, (factor - 1) / 2], [0, 0, 1]], np.float64)
    shift[0, 2] = shift[1, 2] = 0.5 * factor - 0.5
    return _Found(shift @ found.to_picture, tuple(_scaled_blob(b, factor) for b in found.blobs), found.error)
