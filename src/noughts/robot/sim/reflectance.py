"""What a reflected-light sensor (the seed's EV3 colour sensor) reads over the paper model.

:class:`Reflectance` turns the share of the sensor's round spot under ink
(:meth:`~noughts.sheet.paper.Paper.darkness`) into a percentage: white paper reads high, ink low,
with a little noise that depends only on the place, so every run reads the same. The fake EV3's
colour sensor reads through it, and :class:`PaperLightProbe` reads the paper directly, without
motors, for the light sensing benchmark and tests.

>>> from noughts.sheet.geometry import Sheet
>>> paper = Paper(Sheet(3, 3))
>>> paper.draw(((40.0, 30.0), (50.0, 30.0)), by="human")
>>> PaperLightProbe(paper).reflected([(45.0, 30.0), (45.0, 60.0)])
[62.0, 71.0]
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from noughts.sheet.geometry import Point
from noughts.sheet.paper import Ink, Paper

__all__ = ["InkIndex", "PaperLightProbe", "Reflectance"]

BUCKET_MM = 4.0


@dataclass(frozen=True)
class Reflectance:
    """What an EV3 colour sensor reads in ``COL-REFLECT`` mode: ``white`` over bare paper, ``black``
    over solid ink, in between by the share of its round spot (``spot_mm`` radius) under ink, plus
    a little noise that depends only on the place (so every run reads the same)."""

    white: float = 72.0
    black: float = 6.0
    spot_mm: float = 2.0
    noise: float = 1.5
    seed: int = 0

    def percent(self, index: InkIndex, point: Point) -> int:
        view = Paper(index.paper.sheet)
        view.ink = index.near(point, self.spot_mm)
        darkness = view.darkness(point, self.spot_mm)
        wobble = (zlib.crc32(f"{self.seed}:{point[0]:.2f}:{point[1]:.2f}".encode()) % 2001 / 1000 - 1) * self.noise
        return round(min(100.0, max(0.0, self.white - darkness * (self.white - self.black) + wobble)))


class InkIndex:
    """The paper's ink cut into segments and filed by place, so a reading looks only at ink near it."""

    def __init__(self, paper: Paper, reach: float = 4.0) -> None:
        self.paper = paper
        self.reach = reach
        self._buckets: dict[tuple[int, int], list[Ink]] = {}
        self._count = 0
        self._first: Ink | None = None

    def near(self, point: Point, radius: float) -> list[Ink]:
        """The bits of ink (single segments) that reach into a spot of ``radius`` around ``point``."""
        ink = self.paper.ink
        if len(ink) < self._count or (ink and ink[0] is not self._first):
            self._buckets, self._count = {}, 0  # the paper was cleared
        for line in ink[self._count:]:
            for a, b in zip(line.points, line.points[1:], strict=False):
                margin = self.reach + line.width
                for i in range(math.floor((min(a[0], b[0]) - margin) / BUCKET_MM),
                               math.floor((max(a[0], b[0]) + margin) / BUCKET_MM) + 1):
                    for j in range(math.floor((min(a[1], b[1]) - margin) / BUCKET_MM),
                                   math.floor((max(a[1], b[1]) + margin) / BUCKET_MM) + 1):
                        self._buckets.setdefault((i, j), []).append(Ink((a, b), line.by, line.width))
        self._count, self._first = len(ink), ink[0] if ink else None
        bucket = self._buckets.get((math.floor(point[0] / BUCKET_MM), math.floor(point[1] / BUCKET_MM)), [])
        return [bit for bit in bucket if _gap(point, *bit.points) <= radius + bit.width / 2]


class PaperLightProbe:
    """A :class:`~noughts.robot.backend.LightProbe` that reads the paper directly (no motors): the
    benchmark's and the light sensing tests' stand-in for the robot."""

    def __init__(self, paper: Paper, reflectance: Reflectance | None = None) -> None:
        self.reflectance = reflectance or Reflectance()
        self.index = InkIndex(paper, self.reflectance.spot_mm)

    def reflected(self, points: Sequence[Point]) -> list[float]:
        return [float(self.reflectance.percent(self.index, point)) for point in points]


def _gap(point: Point, a: Point, b: Point) -> float:
    """How far ``point`` is from the segment ``a``–``b``."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((point[0] - a[0]) * dx + (point[1] - a[1]) * dy) / length2))
    return math.hypot(point[0] - a[0] - t * dx, point[1] - a[1] - t * dy)
