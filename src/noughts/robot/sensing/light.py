"""Reading the human's marks with a reflected-light sensor (seed 003's EV3 colour sensor).

Two :class:`~noughts.robot.backend.Sensor` s, both looking only at the squares not yet known, in
serpentine order (row by row, every other row right to left), in one request to the robot:

* :class:`ThresholdSensor`, the seed's: one reading at each square's centre; darker than the
  threshold (the seed's 25) is a mark of unknown shape, ``"?"``. The human must shade the square.
* :class:`SweepSensor`: the sensor crosses each square through its centre and counts the dips in
  the light: an X gives one (its crossing), an O two (the sides of its ring), a shaded square a long
  dark run (``"?"``), an empty square none.

A :class:`LightCalibration` (white paper, solid ink, the threshold between) scales the readings;
:func:`measure_accuracy` is the benchmark's figure on simulated boards.

>>> paper = Paper(Sheet(3, 3))
>>> for cell, mark in ((0, "X"), (4, "O")):
...     for stroke in mark_strokes(paper.sheet, cell, mark):
...         paper.draw(stroke.points, by="human")
>>> SweepSensor(PaperLightProbe(paper), paper.sheet).read(Board()).notation(3)
'X../.O./...'
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from noughts.board import Board
from noughts.robot.backend import CellReading, LightProbe, SheetReading
from noughts.robot.sim.reflectance import PaperLightProbe
from noughts.sheet.geometry import Point, RobotError, Sheet
from noughts.sheet.paper import Paper
from noughts.sheet.strokes import grid_strokes, mark_strokes, shade_strokes

__all__ = ["SEED_THRESHOLD", "LightAccuracy", "LightCalibration", "SweepSensor", "ThresholdSensor",
           "calibrate", "measure_accuracy", "rough_marks", "serpentine"]

SEED_THRESHOLD = 25.0  # the seed: a reading below 25 is the human's shaded square
DIP = 0.1  # a dip is this much of the white-to-black range darker than the paper around it
SHADED = 0.3  # this dark over most of a sweep: a shaded square


@dataclass(frozen=True)
class LightCalibration:
    """The sensor's reading over bare paper (``white``) and solid ink (``black``), and the
    ``threshold`` below which a single reading counts as a mark. The defaults are the seed's."""

    white: float = 72.0
    black: float = 6.0
    threshold: float = SEED_THRESHOLD

    def __post_init__(self) -> None:
        if self.white - self.black < 10:
            raise RobotError(f"the sensor read {self.white:g} on white paper and {self.black:g} on ink: too close "
                             "to tell them apart; calibrate again over bare paper and over solid ink")
        if not self.black < self.threshold < self.white:
            raise RobotError(f"the light threshold {self.threshold:g} must lie between black ({self.black:g}) "
                             f"and white ({self.white:g})")

    def darkness(self, reading: float, white: float | None = None) -> float:
        """How dark a reading is, from 0 (``white``, the calibration's unless given) to 1 (black)."""
        base = self.white if white is None else white
        return max(0.0, (base - reading) / (self.white - self.black))

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, float]) -> LightCalibration:
        return cls(float(values["white"]), float(values["black"]), float(values["threshold"]))


def calibrate(probe: LightProbe, white: Sequence[Point], black: Sequence[Point]) -> LightCalibration:
    """Read bare paper at ``white`` and solid ink at ``black`` (the robot's reference markers, say)
    and put the threshold half-way between their medians."""
    white_level = statistics.median(probe.reflected(white))
    black_level = statistics.median(probe.reflected(black))
    return LightCalibration(white_level, black_level, (white_level + black_level) / 2)


def serpentine(board: Board) -> list[int]:
    """The cells not yet known, row by row, every other row right to left (short travel between them)."""
    order = []
    for row in range(board.rows):
        cols = range(board.cols) if row % 2 == 0 else range(board.cols - 1, -1, -1)
        order += [row * board.cols + col for col in cols if board[row * board.cols + col] is None]
    return order


class _LightSensor:
    def __init__(self, probe: LightProbe, sheet: Sheet, calibration: LightCalibration | None = None) -> None:
        self.probe = probe
        self.sheet = sheet
        self.calibration = calibration or LightCalibration()

    def read(self, board: Board) -> SheetReading:
        if (board.rows, board.cols) != (self.sheet.rows, self.sheet.cols):
            raise RobotError(f"the sheet is {self.sheet.rows}×{self.sheet.cols} but the game is "
                             f"{board.rows}×{board.cols}")
        found = self._measure(serpentine(board))
        cells = tuple(found[cell] if mark is None else CellReading(mark, 1.0) for cell, mark in enumerate(board.cells))
        return SheetReading(cells)

    def _measure(self, cells: list[int]) -> dict[int, CellReading]:
        raise NotImplementedError


class ThresholdSensor(_LightSensor):
    """The seed's reading: one look at each unknown square's centre; a shaded square reads below the
    threshold and is a mark of unknown shape (``"?"``)."""

    def _measure(self, cells: list[int]) -> dict[int, CellReading]:
        values = self.probe.reflected([self.sheet.cell_centre(cell) for cell in cells]) if cells else []
        calibration = self.calibration
        found = {}
        for cell, value in zip(cells, values, strict=True):
            sure = min(1.0, 0.5 + abs(value - calibration.threshold) / (calibration.white - calibration.black))
            found[cell] = CellReading("?" if value < calibration.threshold else "", round(sure, 3))
        return found


class SweepSensor(_LightSensor):
    """Sweeps the sensor across each unknown square through its centre, a reading every ``step_mm``,
    keeping ``inset_mm`` clear of the grid lines, and tells X, O, a shaded square and empty apart.

    One dip near the centre is an X's crossing; two far apart are an O's sides. When the centre
    line leaves it open (an X crossing off the line, an O open where the line passes), two more
    sweeps ``recheck`` of the cell above and below the centre settle it: an X's strokes spread
    apart away from their crossing, so the outer sweeps' dips lie either side of the centre
    line's; an O's ring narrows, so the centre line's dips lie outside them."""

    def __init__(self, probe: LightProbe, sheet: Sheet, calibration: LightCalibration | None = None, *,
                 step_mm: float = 1.0, inset_mm: float = 2.5, recheck: float = 0.15) -> None:
        super().__init__(probe, sheet, calibration)
        count = max(3, int((sheet.cell_mm - 2 * inset_mm) / step_mm) + 1)
        half = (sheet.cell_mm - 2 * inset_mm) / 2
        self.offsets = [-half + 2 * half * i / (count - 1) for i in range(count)]  # from the centre, left to right
        self.recheck = recheck

    def _measure(self, cells: list[int]) -> dict[int, CellReading]:
        centre = self._sweep([(cell, 0.0) for cell in cells])
        found: dict[int, CellReading] = {}
        unsure: dict[int, tuple[list[float], float]] = {}
        for cell, values in zip(cells, centre, strict=True):
            reading = self._first_look(values)
            if isinstance(reading, CellReading):
                found[cell] = reading
            else:
                unsure[cell] = reading
        if unsure:
            rise = self.recheck * self.sheet.cell_mm
            outer = self._sweep([(cell, dy) for cell in unsure for dy in (-rise, rise)])
            for index, (cell, (dips, depth)) in enumerate(unsure.items()):
                found[cell] = self._second_look(dips, depth, outer[2 * index], outer[2 * index + 1])
        return found

    def _sweep(self, lines: list[tuple[int, float]]) -> list[list[float]]:
        """Read along each (cell, rise) line in one request, every other line right to left; each
        line's readings left to right."""
        points: list[Point] = []
        for index, (cell, rise) in enumerate(lines):
            cx, cy = self.sheet.cell_centre(cell)
            points += [(cx + dx, cy + rise) for dx in (self.offsets[::-1] if index % 2 else self.offsets)]
        values = self.probe.reflected(points) if points else []
        count = len(self.offsets)
        swept = [values[i * count:(i + 1) * count] for i in range(len(lines))]
        return [line[::-1] if index % 2 else line for index, line in enumerate(swept)]

    def _first_look(self, values: Sequence[float]) -> CellReading | tuple[list[float], float]:
        """What the centre sweep (readings at :attr:`offsets`, left to right) says, or, where it leaves
        X or O open, its dips' places and depth for a second look."""
        calibration, cell = self.calibration, self.sheet.cell_mm
        shaded = sum(calibration.darkness(v) > SHADED for v in values) / len(values)
        if shaded >= 0.5:
            return CellReading("?", round(min(1.0, shaded), 3))
        dips, dark = self._dips(values)
        if not dips:
            margin = (DIP - max(dark)) / DIP  # how far the darkest reading stays from a dip: 1 is white paper
            return CellReading("", round(0.5 + 0.5 * min(1.0, 2 * margin), 3))
        depth = min(1.0, min(peak for _, peak in dips) / (2 * DIP))
        places = [place for place, _ in dips]
        if len(places) == 1 and abs(places[0]) < 0.1 * cell:
            return CellReading("X", round(depth, 3))
        if len(places) == 2 and places[1] - places[0] < 0.15 * cell:
            return CellReading("X", round(0.9 * depth, 3))  # the strokes cross just off the line
        if len(places) == 2 and places[1] - places[0] > 0.45 * cell and abs(sum(places)) / 2 < 0.2 * cell:
            return CellReading("O", round(depth, 3))
        return places, depth

    def _second_look(self, places: list[float], depth: float, above: list[float], below: list[float]) -> CellReading:
        lines = [[place for place, _ in dips] for dips in (self._dips(above)[0], self._dips(below)[0])]
        pairs = [pair for pair in lines if len(pair) == 2]
        if not pairs or len(places) > 2:
            at_ends = all(abs(place) > self.offsets[-1] - 1.5 for place in [*places, *lines[0], *lines[1]])
            return CellReading("", 0.5) if at_ends else CellReading("?", 0.3)  # ink over the line from next door
        left, right = max(pairs, key=lambda pair: pair[1] - pair[0])
        margin = 0.15 * (right - left)
        inside = all(left + margin < place < right - margin for place in places)
        return CellReading("X" if inside else "O", round(0.8 * depth, 3))

    def _dips(self, values: Sequence[float]) -> tuple[list[tuple[float, float]], list[float]]:
        """Each run of readings darker than :data:`DIP` than the paper around: where its middle is
        (mm from the centre) and its peak; and every reading's darkness."""
        calibration = self.calibration
        paper = sorted(values)[int(0.9 * (len(values) - 1))]  # the paper here, a little lighter or darker
        dark = [calibration.darkness(v, paper if paper > calibration.threshold else None) for v in values]
        dips: list[tuple[float, float]] = []
        run: list[int] = []
        for index, value in enumerate([*dark, 0.0]):
            if value > DIP:
                run.append(index)
            elif run:
                weight = sum(dark[i] for i in run)
                dips.append((sum(self.offsets[i] * dark[i] for i in run) / weight, max(dark[i] for i in run)))
                run = []
        return dips, dark


# -- the benchmark's figure ----------------------------------------------------------------------------

def rough_marks(sheet: Sheet, cell: int, mark: str, rng: random.Random) -> list[tuple[Point, ...]]:
    """A human's X, O or shaded square (``"#"``): the robot's own strokes, moved, resized, slanted,
    an O left a little open or overlapping. A stand-in until the simulated human
    (:mod:`noughts.robot.sim.human`) draws them."""
    cx, cy = sheet.cell_centre(cell)
    shift = (rng.gauss(0, 0.05 * sheet.cell_mm), rng.gauss(0, 0.05 * sheet.cell_mm))
    if mark == "#":
        strokes = shade_strokes(sheet, cell, cover=rng.uniform(0.7, 0.85))
    else:
        strokes = mark_strokes(sheet, cell, mark)
    scale = rng.uniform(0.75, 1.1)
    lines = []
    for stroke in strokes:
        points = list(stroke.points)
        if mark == "X":  # each stroke's ends land a little apart from where they were aimed
            points = [(x + rng.gauss(0, 0.04 * sheet.cell_mm), y + rng.gauss(0, 0.04 * sheet.cell_mm))
                      for x, y in points]
        if mark == "O":
            start = rng.randrange(len(points) - 1)
            ring = points[start:-1] + points[:start]
            keep = len(ring) + rng.randint(-3, 2)  # a little open, or closing past the start
            points = [ring[i % len(ring)] for i in range(keep)]
            squash = rng.uniform(0.9, 1.1)
            points = [(cx + (x - cx) * squash, cy + (y - cy) / squash) for x, y in points]
        lines.append(tuple((cx + (x - cx) * scale + shift[0] + rng.gauss(0, 0.3),
                            cy + (y - cy) * scale + shift[1] + rng.gauss(0, 0.3)) for x, y in points))
    return lines


@dataclass(frozen=True)
class LightAccuracy:
    """Shares of cells read right on simulated boards: the sweep on hand-drawn X, O and empty squares
    (and each apart; ``sweep_unsure`` said ``"?"``, which makes the game ask, ``sweep_wrong`` said
    something else for sure), the seed's single reading on the same squares (mark or not: all it
    can say), and both on shaded squares, the seed's own way of playing."""

    boards: int
    sweep: float
    sweep_unsure: float
    sweep_wrong: float
    sweep_x: float
    sweep_o: float
    sweep_empty: float
    seed_presence: float
    sweep_shaded: float
    seed_shaded: float
    readings_per_board: float
    seconds: float

    def describe(self) -> str:
        return (f"light sensor on {self.boards} simulated boards: the sweep reads {self.sweep:.1%} of hand-drawn "
                f"cells right (X {self.sweep_x:.1%}, O {self.sweep_o:.1%}, empty {self.sweep_empty:.1%}; unsure "
                f"{self.sweep_unsure:.1%}, wrong {self.sweep_wrong:.1%}; {self.readings_per_board:.0f} readings a "
                f"board); the seed's single reading tells a mark from an empty square in {self.seed_presence:.1%} "
                f"of them. On shaded squares: sweep {self.sweep_shaded:.1%}, seed {self.seed_shaded:.1%}.")


def measure_accuracy(boards: int = 100, seed: int = 0, sheet: Sheet | None = None) -> LightAccuracy:
    """Draw ``boards`` random boards of rough X, O and empty squares (and as many of shaded and empty
    ones) on the simulated paper and read them with both sensors; the shares read right."""
    sheet = sheet or Sheet(3, 3)
    rng = random.Random(seed)
    right: dict[str, list[bool]] = {key: [] for key in ("X", "O", "", "unsure", "wrong", "seed", "shaded",
                                                         "seed_shaded")}
    readings = 0
    started = time.perf_counter()
    for _ in range(boards):
        for shaded in (False, True):
            choices = ("#", "") if shaded else ("X", "O", "")
            marks = [rng.choice(choices) for _ in range(sheet.rows * sheet.cols)]
            paper = Paper(sheet)
            paper.draw_strokes(grid_strokes(sheet))
            for cell, mark in enumerate(marks):
                width = rng.uniform(1.0, 1.6) if mark == "#" else rng.uniform(0.6, 1.0)  # shading: a felt-tip
                for line in rough_marks(sheet, cell, mark, rng) if mark else []:
                    paper.draw(line, by="human", width=width)
            probe = _CountingProbe(PaperLightProbe(paper))
            empty = Board(sheet.rows, sheet.cols)
            swept = SweepSensor(probe, sheet).read(empty).cells
            readings += 0 if shaded else probe.count
            single = ThresholdSensor(probe, sheet).read(empty).cells
            for mark, sweep, one in zip(marks, swept, single, strict=True):
                if shaded:
                    right["shaded"].append(sweep.mark == ("?" if mark else ""))
                    right["seed_shaded"].append(one.mark == ("?" if mark else ""))
                else:
                    right[mark].append(sweep.mark == mark)
                    right["unsure"].append(sweep.mark == "?")
                    right["wrong"].append(sweep.mark not in (mark, "?"))
                    right["seed"].append((one.mark == "?") == bool(mark))

    def share(key: str, *more: str) -> float:
        found = [ok for k in (key, *more) for ok in right[k]]
        return sum(found) / len(found) if found else 1.0

    return LightAccuracy(boards, share("X", "O", ""), share("unsure"), share("wrong"), share("X"), share("O"),
                         share(""), share("seed"), share("shaded"), share("seed_shaded"), readings / max(1, boards),
                         time.perf_counter() - started)


class _CountingProbe:
    def __init__(self, probe: LightProbe) -> None:
        self.probe = probe
        self.count = 0

    def reflected(self, points: Sequence[Point]) -> list[float]:
        self.count += len(points)
        return self.probe.reflected(points)
