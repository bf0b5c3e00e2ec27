"""The robot's game: a :class:`~noughts.match.Match` played on paper.

The robot draws the sheet (markers and grid), waits for the human's signal (the touch sensor,
Enter), reads the sheet, accepts the human's move only when exactly one new mark is seen for
certain, draws its own reply, and records the finished game through the match. A misread never
becomes a move: :func:`judge` turns every doubtful reading into a request to the human.

>>> from noughts.sheet.reading import cell_readings
>>> board = Board.parse("X../.O./...")
>>> judge(SheetReading(cell_readings("X...O...X")), board, "X")
8
>>> judge(SheetReading(cell_readings("X...O..XX")), board, "X")
'Too many moves: I see new marks in b3 and c3. Make one move at a time; press again once only one is new.'
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from noughts import text
from noughts.board import Board
from noughts.errors import NoughtsError
from noughts.match import THINKING_AFTER, ComputerMove, GameKeeper, Match
from noughts.robot.backend import PenRobot, RobotDisconnected, Sensor
from noughts.sheet.geometry import Point, RobotError, Sheet
from noughts.sheet.reading import SURE, SheetReading, changes
from noughts.sheet.strokes import Stroke, grid_strokes, mark_strokes, marker_strokes, plan_strokes

__all__ = ["Console", "RobotGame", "judge", "load_kept"]



class Console(Protocol):
    """How the robot talks with the human: a terminal, or the EV3 brick's screen and buttons."""

    def show(self, text: str) -> None:
        """Tell the human something (a line on the terminal, the brick's screen)."""

    def wait_for_human(self, prompt: str, *, move: bool = False) -> bool:
        """Show ``prompt`` and wait for the human's signal (Enter, the touch sensor); False to stop
        playing. ``move``: the human is making a move on the sheet (rather than, say, changing it)."""


def judge(reading: SheetReading, board: Board, mark: str, sure: float = SURE) -> int | str:
    """The human's move in ``reading`` (a cell), or what to tell the human instead (a sentence).

    ``board`` is what is known to be on the sheet and ``mark`` the human's (X or O). The answer is a
    cell only when exactly one empty cell shows a new mark, surely, of the human's shape (or of
    unknown shape, as the light sensor sees a shaded square), and nothing on a taken cell changed.
    """
    if not reading.found:
        return f"I cannot see the sheet: {reading.message} Press again when it is in view."
    cells = reading.cells
    if len(cells) != board.size:
        return f"I read {len(cells)} squares instead of {board.size}; press again to read the sheet again."
    found = changes(reading, board.cells, sure)
    if found.doubtful:
        return (f"I am not sure what is in {text.cells_named(board, found.doubtful)}. Make your mark darker and "
                "clearer (or the square cleaner), then press again.")
    if found.overdrawn:
        return (f"There is a new mark on {text.cells_named(board, found.overdrawn)}, which is already taken. Play "
                "in an empty square; press again when you have.")
    new = found.new
    if not new:
        return f"I cannot see a new mark. Draw your {mark} in an empty square, dark and clear, then press again."
    if len(new) > 1:
        return (f"Too many moves: I see new marks in {text.cells_named(board, [cell for cell, _ in new])}. Make one "
                "move at a time; press again once only one is new.")
    cell, seen = new[0]
    if seen not in ("?", mark):
        return f"The mark in {board.cell_name(cell)} looks like an {seen}, but you play {mark}. Press again."
    return cell


@dataclass
class RobotGame:
    """Plays ``match`` with ``robot`` drawing and ``sensor`` reading, talking through ``console``.

    ``reconnect`` (optional) makes a fresh robot after a lost connection; the game carries on
    after re-reading the sheet. ``on_step`` is called after every move (the sim shows the paper).
    ``keep`` is a file where the game in play is written after every move, so a stop (Ctrl-C, a
    crash, a robot gone for good) loses nothing: :func:`load_kept` brings it back.
    ``thinking_after``: seconds the computer works out its move before the console says it is
    thinking (:data:`noughts.match.THINKING_AFTER`, as every front end). ``machine`` (its
    ``identity`` and ``described``) is kept with the game, so it is carried on only on that machine.
    """

    match: Match
    robot: PenRobot
    sensor: Sensor
    console: Console
    sheet: Sheet
    style: str = "shapes"
    reconnect: Callable[[], PenRobot] | None = None
    on_step: Callable[[RobotGame], None] | None = None
    keep: Path | None = None
    thinking_after: float = THINKING_AFTER
    machine: Mapping[str, str] = field(default_factory=dict)  # kept with the game: which machine it is on

    def __post_init__(self) -> None:
        if self.match.two_people:
            raise RobotError("the robot plays against a computer player; choose an opponent other than person")
        self.pen: Point = (0.0, 0.0)
        self.kept = False  # whether the game in play is written to ``keep`` (a game stopped before its sheet is not)

    # drawing ---------------------------------------------------------------------------------
    def _draw(self, strokes: Sequence[Stroke], what: str, drawn: Callable[[], bool] | None = None) -> None:
        """Draw ``strokes``. If the robot is lost on the way, reconnect once, home, look whether the
        drawing got finished after all (``drawn``, by reading the sheet) and draw it again if not."""
        for attempt in range(2):
            try:
                self.robot.draw(plan_strokes(strokes, self.robot.machine, self.pen))
                self.robot.park()
                self.pen = (self.sheet.width, 0.0)
                return
            except RobotDisconnected as lost:
                if self.reconnect is None or attempt:
                    raise
                self.console.show(f"Lost the robot while drawing {what} ({lost}); reconnecting…")
                self.robot = self.reconnect()
                self.robot.home()
                self.pen = (0.0, 0.0)
                if drawn is not None and drawn():
                    self.console.show(f"Reconnected: {what} is on the sheet already.")
                    self.robot.park()
                    self.pen = (self.sheet.width, 0.0)
                    return
                self.console.show(f"Reconnected: drawing {what} again over what was drawn.")

    def draw_sheet(self) -> None:
        self.robot.home()
        self.pen = (0.0, 0.0)
        self._draw(marker_strokes(self.sheet) + grid_strokes(self.sheet), "the grid")

    def draw_markers(self) -> None:
        """Only the reference markers (for calibrating a sensor on them)."""
        self.robot.home()
        self.pen = (0.0, 0.0)
        self._draw(marker_strokes(self.sheet), "the markers")

    # turns -----------------------------------------------------------------------------------
    def human_turn(self) -> bool:
        """Wait for the human's move, read it, play it; False when the human stops."""
        seat = self.match.seat_to_move
        assert seat is not None
        mark = self.match.mark_of(seat)
        prompt = f"Your turn: draw your {mark} in an empty square, then press."
        while True:
            if not self.console.wait_for_human(prompt, move=True):
                return False
            board = self.match.board
            verdict = judge(self.sensor.read(board), board, mark)
            if isinstance(verdict, int):
                self.match.play(verdict)
                self.console.show(f"You played {board.cell_name(verdict)}.")
                return True
            prompt = verdict

    def computer_turn(self) -> None:
        job = self.match.computer_job()
        assert job is not None
        seat = self.match.seat_to_move or 0
        cell, said = self._work_out(job, self.match.name_of(seat))
        mark = self.match.mark_of(seat)
        name = self.match.board.cell_name(cell)
        what = f"my {mark} in {name}"
        if said:  # the thinking line is over: say what comes instead
            self.console.show(f"Drawing {what}…")
        self._draw(mark_strokes(self.sheet, cell, mark, self.style), what, lambda: self._reads(cell, mark))
        self.match.apply(job, cell)
        self.console.show(f"I played {name}.")

    def _work_out(self, job: ComputerMove, name: str) -> tuple[int, bool]:
        """The computer's move, worked out on a thread of its own; if it takes longer than
        ``thinking_after`` seconds the console says the computer is thinking (True: it said so)."""
        answer: list[int] = []
        failure: list[BaseException] = []
        done = threading.Event()

        def work() -> None:
            try:
                answer.append(job.run())
            except BaseException as error:  # raised again on the game's own thread
                failure.append(error)
            finally:
                done.set()

        threading.Thread(target=work, name="noughts-robot-move", daemon=True).start()
        said = not done.wait(self.thinking_after)
        if said:
            self.console.show(text.thinking(name))
            done.wait()
        if failure:
            raise failure[0]
        return answer[0], said

    def _reads(self, cell: int, mark: str) -> bool:
        """Whether the sensor sees ``mark`` in ``cell`` for sure (never asks a keyboard: it is the human)."""
        if self.sensor is cast(object, self.console) or self.style == "dot":
            return False
        self.robot.park()
        reading = self.sensor.read(self.match.board)
        return reading.found and reading.cells[cell].mark == mark and reading.cells[cell].confidence >= SURE

    def play_game(self, *, resume: bool = False) -> bool:
        """One whole game on a fresh sheet (``resume``: carry on the match's game in play on the
        sheet already there); False if the human stopped before the end (the game is kept)."""
        if not resume:
            self.match.new_game()
            if not self.console.wait_for_human("Put a fresh sheet on the robot, then press to start."):
                self.match.abandon("You stopped")
                return False
            self.draw_sheet()
            self.console.show(self.match.intro())
        self._keep()
        while not self.match.game_over:
            if self.match.computer_to_move:
                self.computer_turn()
            elif not self.human_turn():
                return False
            self._keep()
            if self.on_step is not None:
                self.on_step(self)
        self.console.show(self.match.result_sentence())
        recorded = self.match.recorded_text()
        if recorded:
            self.console.show(recorded)
        return True

    def _keep(self) -> None:
        """Write the game in play to ``keep`` (atomically: a crash mid-write leaves the last one), or
        remove the file once the game is over."""
        if self.keep is None:
            return
        if self.match.game_over:
            self.keep.unlink(missing_ok=True)
            self.kept = False
            return
        state = {"match": self.match.to_dict(), "style": self.style,
                 "sheet": {"rows": self.sheet.rows, "cols": self.sheet.cols, "cell_mm": self.sheet.cell_mm},
                 "machine": dict(self.machine), "saved": time.strftime("%Y-%m-%d %H:%M")}
        self.keep.parent.mkdir(parents=True, exist_ok=True)
        partial = self.keep.with_name(self.keep.name + ".partial")
        partial.write_text(json.dumps(state), encoding="utf-8")
        os.replace(partial, self.keep)
        self.kept = True


def load_kept(path: Path, store: GameKeeper | None = None) -> tuple[Match, dict[str, Any]] | None:
    """The match kept in ``path`` by a robot game that stopped, and its drawing settings (``style``,
    ``sheet``), the ``machine`` it was on and when it was ``saved``; None when there is none. A
    damaged file raises NoughtsError with the reason."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise NoughtsError(f"cannot read the kept robot game {path}: {error.strerror or error}") from None
    try:
        state = json.loads(text)
        match = Match.from_dict(state["match"], store)
        settings = {"style": str(state["style"]), "sheet": dict(state["sheet"]),
                    "machine": {str(key): str(value) for key, value in dict(state.get("machine", {})).items()},
                    "saved": str(state.get("saved", "an earlier version"))}
    except (ValueError, KeyError, TypeError) as error:
        raise NoughtsError(f"the kept robot game {path} is damaged ({error}); delete it to start afresh") from None
    if match.game is None or match.game_over:
        return None
    return match, settings


