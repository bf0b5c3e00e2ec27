"""A whole paper-mode game as a phone or a webcam would film it, standing in for a person with a pen.

Paper mode (:mod:`noughts.paper_game`) has a person draw both sides' marks on a sheet while a camera
watches. :func:`plan_game` plays a game through :class:`~noughts.paper_game.PaperGame` with a
``Match`` seeded as the reader's will be (``Match(opponent, first=..., seed=S)`` answers the same
person moves with the same moves), so it knows where the computer will play; the simulated person
picks their squares with a ``random.Random`` of their own. :func:`paper_game_frames` then films it:
the empty sheet, each mark drawn over a few frames with a hand and a pen over the sheet, then held
still while the person waits for the camera, the computer's mark drawn by the person in the square
announced, and the finished sheet. The camera is hand-held: every frame it turns, tilts and moves
a little, and now and then there is trouble: motion blur, a glare spot, the sheet pushed and turned
between frames, and some games are filmed in a dark room. Every frame carries its truth (what is
fully drawn, whether a hand is over the sheet) so tests and benchmarks can tell a wrong move from a
slow one. :func:`write_game_video` and :func:`write_game_sequence` write a game as a video file or
numbered pictures that ``noughts paper --camera FILE`` plays back.

Needs numpy and OpenCV; only tests, benchmarks and documentation scripts import this module.

>>> plan = plan_game(rows=3, cols=3, opponent="easy", first="me", seed=4, person_seed=1)
>>> plan.marks[0].by, plan.marks[0].mark, plan.finished
('person', 'X', True)
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from noughts.match import Match
from noughts.paper_game import PaperGame
from noughts.robot.sim.human import human_strokes
from noughts.robot.sim.photos import Camera, photograph, write_sequence, write_video
from noughts.sheet.geometry import Point, Sheet
from noughts.sheet.paper import Paper
from noughts.sheet.reading import SheetReading, cell_readings
from noughts.sheet.strokes import grid_strokes, marker_strokes

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["DrawnMark", "GamePlan", "PaperFrame", "Watched", "paper_game_frames", "plan_game", "watch_game",
           "write_game_sequence", "write_game_video"]

SKIN_BGR = ((120, 150, 205), (95, 125, 180), (60, 85, 130), (45, 60, 90))  # hands from light to dark


@dataclass(frozen=True)
class DrawnMark:
    """One mark the person draws: in ``cell``, ``mark`` (X or O), for ``by`` ("person": their own
    move; "computer": the computer's move, drawn where it was announced)."""

    cell: int
    mark: str
    by: str


@dataclass(frozen=True)
class GamePlan:
    """A game's marks in the order they are drawn, the shape and the match's settings that give it."""

    rows: int
    cols: int
    k: int | None
    opponent: str
    first: str
    seed: int
    marks: tuple[DrawnMark, ...]
    finished: bool
    result: str  # the match's result sentence ('' if unfinished)


def plan_game(*, rows: int = 3, cols: int = 3, k: int | None = None, opponent: str = "easy", first: str = "me",
              seed: int = 0, person_seed: int = 0) -> GamePlan:
    """Play one game through :class:`PaperGame` on perfect readings: the person's squares chosen by
    ``random.Random(person_seed)`` (a winning square when there is one, else any), the computer's
    from ``Match(opponent, first=first, seed=seed)``, as the reader's match will choose them."""
    rng = random.Random(person_seed)
    match = Match(opponent, first=first, rows=rows, cols=cols, k=k, seed=seed)
    paper = PaperGame(match, steady=1)
    sheet = ["."] * match.board.size
    drawn: list[DrawnMark] = []
    for _ in range(4 * match.board.size + 8):
        view = paper.see(SheetReading(cell_readings("".join(sheet))))
        if view.phase == "over":
            break
        if view.phase == "think":
            paper.think()
        elif view.phase == "draw":
            assert view.owed is not None
            sheet[view.owed] = paper.computer_mark
            drawn.append(DrawnMark(view.owed, paper.computer_mark, "computer"))
        elif view.moved is None:
            board = match.board
            empty = [cell for cell in range(board.size) if board.cells[cell] is None and sheet[cell] == "."]
            winning = [cell for cell in empty if board.play(cell).winner is not None]
            cell = rng.choice(winning or empty)
            sheet[cell] = paper.person_mark
            drawn.append(DrawnMark(cell, paper.person_mark, "person"))
    return GamePlan(rows, cols, k, opponent, first, seed, tuple(drawn), match.game_over,
                    match.result_sentence() if match.game_over else "")


@dataclass(frozen=True)
class PaperFrame:
    """One frame of the film: the BGR ``image`` and its truth: ``marks`` fully drawn on the sheet
    (X, O or "" a cell), ``drawing`` (the cell a mark is being drawn in, a hand over the sheet, or
    None), ``completed`` (how many of the plan's marks are fully drawn), ``pushed`` (the sheet was
    moved and turned since the last frame) and the ``camera`` used."""

    image: NDArray[np.uint8] = field(repr=False)
    marks: tuple[str, ...]
    drawing: int | None
    completed: int
    camera: Camera
    pushed: bool = False


def _hand_held(camera: Camera, anchor: Camera, rng: random.Random) -> Camera:
    """``camera`` as a hand holds it a moment later: turned, tilted and moved a little, and drawn
    back toward ``anchor`` (the person keeps the sheet in view: the pose wobbles, it does not wander)."""
    def toward(now: float, aim: float, wobble: float) -> float:
        return now + 0.35 * (aim - now) + rng.gauss(0, wobble)

    return replace(camera, roll_deg=toward(camera.roll_deg, anchor.roll_deg, 1.2),
                   tilt_deg=(toward(camera.tilt_deg[0], anchor.tilt_deg[0], 1.0),
                             toward(camera.tilt_deg[1], anchor.tilt_deg[1], 1.0)),
                   shift=(max(-1.0, min(1.0, toward(camera.shift[0], anchor.shift[0], 0.04))),
                          max(-1.0, min(1.0, toward(camera.shift[1], anchor.shift[1], 0.04)))),
                   fill=max(0.45, min(0.92, toward(camera.fill, anchor.fill, 0.02))),
                   blur=max(0.0, toward(camera.blur, anchor.blur, 0.2)))


def _first_camera(rng: random.Random, size: tuple[int, int], trouble: float) -> Camera:
    """The phone's set-up for a game: roughly above the sheet, the sheet any way round; now and
    then a dark room (low exposure, a noisy sensor)."""
    camera = Camera.random(rng, size=size, hard=False)
    camera = replace(camera, fill=rng.uniform(0.6, 0.85), shift=(rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5)),
                     roll_deg=rng.uniform(-180, 180) if rng.random() < 0.3 else rng.gauss(0, 10),
                     tilt_deg=(rng.gauss(0, 8), rng.gauss(0, 8)), shadow=1.0, glare=0.0, motion=0)
    if rng.random() < 0.25 * trouble:  # a dark room
        camera = replace(camera, exposure=rng.uniform(0.45, 0.6), noise=rng.uniform(5, 9),
                         jpeg_quality=rng.randint(60, 80))
    return camera


def _troubled(camera: Camera, rng: random.Random, trouble: float) -> Camera:
    """One frame's passing trouble: a shaken phone (motion blur) or a glare spot."""
    if rng.random() < 0.12 * trouble:
        camera = replace(camera, motion=rng.randint(4, 9))
    if rng.random() < 0.1 * trouble:
        camera = replace(camera, glare=rng.uniform(20, 55))
    return camera


def _hand(image: NDArray[np.uint8], tip: Point, toward: Point, cell_px: float, skin: tuple[int, int, int],
          rng: random.Random) -> NDArray[np.uint8]:
    """``image`` with a hand holding a pen whose tip is at ``tip`` (pixels): the pen, the fist
    below-right of it and the arm reaching to the picture's edge at ``toward``, soft-edged."""
    height, width = image.shape[:2]
    mask = np.zeros((height, width), np.float32)
    pen = np.zeros((height, width), np.float32)
    angle = math.atan2(toward[1] - tip[1], toward[0] - tip[0])
    fist = (tip[0] + math.cos(angle) * cell_px * 0.9, tip[1] + math.sin(angle) * cell_px * 0.9)
    cv2.line(pen, (round(tip[0]), round(tip[1])), (round(fist[0]), round(fist[1])), 1.0,
             max(2, round(cell_px * 0.07)), cv2.LINE_AA)
    axes = (max(4, round(cell_px * rng.uniform(0.55, 0.75))), max(3, round(cell_px * rng.uniform(0.35, 0.5))))
    cv2.ellipse(mask, (round(fist[0]), round(fist[1])), axes, math.degrees(angle), 0, 360, 1.0, -1, cv2.LINE_AA)
    cv2.line(mask, (round(fist[0]), round(fist[1])), (round(toward[0]), round(toward[1])), 1.0,
             max(4, round(cell_px * 1.1)), cv2.LINE_AA)
    mask = np.asarray(cv2.GaussianBlur(mask, (0, 0), max(1.0, cell_px * 0.05)), np.float32)
    shade = np.asarray(cv2.GaussianBlur(mask, (0, 0), max(2.0, cell_px * 0.4)), np.float32)  # the hand's own shadow
    picture = image.astype(np.float32)
    picture *= (1 - 0.35 * shade)[..., None]
    colour = np.array(skin, np.float32) * rng.uniform(0.85, 1.05)
    picture += mask[..., None] * (colour - picture)
    picture += pen[..., None] * (np.array((30, 30, 35), np.float32) - picture)
    return np.clip(picture, 0, 255).astype(np.uint8)


def _cut(strokes: list[tuple[Point, ...]], share: float) -> tuple[list[tuple[Point, ...]], Point]:
    """The first ``share`` of a mark's strokes (by points), and where the pen is."""
    total = sum(len(s) for s in strokes)
    left = max(2, round(total * share))
    drawn: list[tuple[Point, ...]] = []
    for stroke in strokes:
        if left <= 0:
            break
        drawn.append(stroke[:max(2, left)] if left < len(stroke) else stroke)
        left -= len(stroke)
    return drawn, drawn[-1][-1]


def paper_game_frames(plan: GamePlan, *, seed: int = 0, fps: float = 2.0, size: tuple[int, int] = (800, 600),
                      trouble: float = 1.0, draw_seconds: float = 1.5, wait_seconds: float = 2.5,
                      start_seconds: float = 1.5, end_seconds: float = 2.0, messiness: float = 1.0
                      ) -> Iterator[PaperFrame]:
    """The frames, ``fps`` a second, of ``plan`` filmed by a hand-held camera of ``size``:
    ``start_seconds`` of the empty sheet; for each mark, ``draw_seconds`` of it being drawn (a hand
    over the sheet) then ``wait_seconds`` of the person waiting, still; ``end_seconds`` of the
    finished sheet. ``trouble`` scales how often things go wrong (0: a steady phone in good light;
    1: as people film; 2: worse); ``seed`` drives the hand, the camera and the light."""
    rng = random.Random(seed)
    sheet = Sheet(plan.rows, plan.cols)
    camera = anchor = _first_camera(rng, size, trouble)
    paper_seed = rng.getrandbits(32)
    skin = rng.choice(SKIN_BGR)
    arm_side = rng.choice(((1.0, 1.2), (0.2, 1.2), (1.2, 0.6)))  # where the arm comes from, as shares of the picture
    marks = [""] * (plan.rows * plan.cols)
    pen_mm = rng.uniform(0.6, 1.1)
    finished: list[tuple[Point, ...]] = []
    steps = max(1, round(draw_seconds * fps))

    def frame(partial: list[tuple[Point, ...]], tip: Point | None, drawing: int | None, completed: int) -> PaperFrame:
        nonlocal camera, anchor
        camera = _hand_held(camera, anchor, rng)
        pushed = rng.random() < 0.06 * trouble
        if pushed:  # the sheet pushed and turned between frames: it stays where it was pushed
            anchor = replace(anchor, roll_deg=anchor.roll_deg + rng.choice((-1, 1)) * rng.uniform(10, 30),
                             shift=(rng.uniform(-0.6, 0.6), rng.uniform(-0.6, 0.6)))
            camera = replace(camera, roll_deg=anchor.roll_deg, shift=anchor.shift)
        shot = _troubled(camera, rng, trouble)
        paper = Paper(sheet)
        paper.draw_strokes(marker_strokes(sheet) + grid_strokes(sheet))
        for stroke in [*finished, *partial]:
            paper.draw(stroke, by="human", width=pen_mm)
        photo = photograph(paper, random.Random(paper_seed), camera=shot)
        image = photo.image
        if tip is not None:
            (tip_px,) = photo.project([tip])
            cell_px = math.dist(*photo.project([(0.0, 0.0), (sheet.cell_mm, 0.0)]))
            toward = (arm_side[0] * size[0], arm_side[1] * size[1])
            image = _hand(image, tip_px, toward, cell_px, skin, rng)
        return PaperFrame(image, tuple(marks), drawing, completed, shot, pushed)

    for _ in range(max(1, round(start_seconds * fps))):
        yield frame([], None, None, 0)
    for number, drawn in enumerate(plan.marks):
        strokes = [s.points for s in human_strokes(sheet, drawn.cell, drawn.mark, rng, messiness=messiness)]
        for step in range(steps):
            partial, tip = _cut(strokes, (step + 1) / (steps + 1))
            yield frame(partial, tip, drawn.cell, number)
        finished.extend(strokes)
        marks[drawn.cell] = drawn.mark
        for _ in range(max(1, round(wait_seconds * fps))):
            yield frame([], None, None, number + 1)
    for _ in range(max(0, round(end_seconds * fps))):
        yield frame([], None, None, len(plan.marks))


def write_game_video(plan: GamePlan, path: str | Path, *, fps: float = 2.0, **options: object) -> Path:
    """Film ``plan`` (see :func:`paper_game_frames`, which takes ``options``) into a Motion-JPEG AVI."""
    frames = paper_game_frames(plan, fps=fps, **options)  # type: ignore[arg-type]
    return write_video((f.image for f in frames), path, fps=fps)


def write_game_sequence(plan: GamePlan, folder: str | Path, *, fps: float = 2.0, **options: object) -> str:
    """Film ``plan`` into numbered pictures in ``folder``; returns the pattern ``cv2.VideoCapture`` opens."""
    frames = paper_game_frames(plan, fps=fps, **options)  # type: ignore[arg-type]
    return write_sequence((f.image for f in frames), folder, pattern="frame_%04d.jpg")


@dataclass
class Watched:
    """What the reader made of a filmed game (:func:`watch_game`): the moves the match played, how
    many were wrong (a square the person did not draw in, or the computer's mark taken as drawn
    when no pen had touched its square), whether the game finished, and for each mark the frames from the one where it
    was fully drawn to the one where it was taken (the person's: their move played and the
    computer's announced)."""

    played: list[int] = field(default_factory=list)
    wrong: int = 0
    finished: bool = False
    latencies: list[int] = field(default_factory=list)
    frames: int = 0
    questions: int = 0  # frames that asked the person something instead of waiting or taking a move
    # the computer chose another square than when the game was planned (a player whose search stops on a
    # clock, as Medium's on boards over 3×3): the film no longer matches the game; not the reader's doing
    diverged: int = 0


def watch_game(plan: GamePlan, frames: Iterable[PaperFrame], read: Callable[[PaperFrame], SheetReading], *,
               steady: int | None = None) -> Watched:
    """Feed ``frames`` of ``plan``, each read by ``read``, to a :class:`PaperGame` on the same match
    as the plan's (the computer's move worked out on this thread), and check every move against the
    plan and every frame's truth."""
    match = Match(plan.opponent, first=plan.first, rows=plan.rows, cols=plan.cols, k=plan.k, seed=plan.seed)
    paper = PaperGame(match) if steady is None else PaperGame(match, steady=steady)
    watched = Watched()
    expected = [drawn.cell for drawn in plan.marks]
    done_at: dict[int, int] = {}  # mark number -> the first frame it was fully drawn in
    for number, frame in enumerate(frames):
        watched.frames += 1
        if frame.completed and frame.completed - 1 not in done_at:
            done_at[frame.completed - 1] = number
        owed = paper.owed
        view = paper.see(read(frame))
        taken: list[int] = []
        if owed is not None and paper.owed is None:
            taken.append(owed)
            if frame.marks[owed] == "" and frame.drawing != owed:  # taken with no ink there (half drawn is fine)
                watched.wrong += 1
        if view.moved is not None:
            taken.append(view.moved)
        for cell in taken:
            index = len(watched.played)
            watched.played.append(cell)
            if index >= len(expected) or expected[index] != cell:
                watched.wrong += 1
            elif index in done_at:
                watched.latencies.append(number - done_at[index])
        if view.phase == "think":
            decided = paper.think()  # counted as played when it is seen drawn
            index = len(watched.played)
            if decided is not None and (index >= len(expected) or expected[index] != decided):
                watched.diverged += 1
                break  # the person will draw the planned square, not this one: nothing more to learn
        elif view.say != paper.instruction():
            watched.questions += 1
    watched.finished = match.game_over and paper.owed is None
    return watched
