"""The ``ebb`` backend: an AxiDraw, or another plotter on an EiBotBoard (EBB), through plotink —
the library the AxiDraw software itself uses (``pip install 'noughts[robot]'``).

Connecting opens the named serial port, checks the firmware (2.6.2 or newer), sets the pen-lift
servo's heights and speeds (:class:`PenLift`) and switches the motors on at 16× microstepping,
which makes the carriage's position home: put it in the home corner (top left) first. Moves are
``XM`` commands (AxiDraw's mixed axes, 80 steps per mm along x and along y), split into pieces
the EBB accepts; every point of a plan is checked against the travel before anything moves.

plotink logs a failed exchange instead of raising, so the port it is given is watched
(:class:`_WatchedPort`) and every reply checked: a lost or silent board becomes
:class:`~noughts.robot.backend.RobotDisconnected`, an error line or line noise a
:class:`~noughts.sheet.geometry.RobotError`, each in words.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from noughts.robot.backend import RobotDisconnected
from noughts.sheet.geometry import Machine, Point, RobotError, Sheet
from noughts.sheet.strokes import PenPlan

__all__ = ["MIN_FIRMWARE", "STEPS_PER_MM", "EbbRobot", "PenLift"]

STEPS_PER_MM = 80.0  # AxiDraw at 16× microstepping: 2032 steps per inch along x and along y
MIN_FIRMWARE = (2, 6, 2)  # HM (home) and QG (status) arrived in 2.6.2
PIECE_MS = 500  # longest single move: any motor that moves then steps at least twice a second (the EBB's floor is 1.31)
MAX_STEP_RATE = 25000  # steps per second, per motor
SERVO_MIN, SERVO_MAX = 9855, 27831  # AxiDraw's standard servo: 0 % and 100 % of the pen's height (83.3 ns units)
SERVO_SWEEP_MS = 200  # the servo signal's sweep over 0–100 % at full speed
POLL_SECONDS = 0.02  # between status queries while the board finishes its queue
OK = "OK"


@dataclass(frozen=True)
class PenLift:
    """The pen-lift servo as the AxiDraw software sets it: heights in percent of its range (0 lowest),
    and the speeds of raising and lowering in percent of the servo's full speed."""

    up: float = 60.0
    down: float = 30.0
    raise_rate: float = 75.0
    lower_rate: float = 50.0

    def __post_init__(self) -> None:
        if not 0 <= self.down < self.up <= 100:
            raise RobotError(f"the pen's heights must be 0 ≤ down < up ≤ 100 (percent), not down {self.down:g} "
                             f"and up {self.up:g}")
        if not (0 < self.raise_rate <= 100 and 0 < self.lower_rate <= 100):
            raise RobotError("the pen's raising and lowering speeds are percentages of full speed, above 0 up to 100")

    @staticmethod
    def servo_position(percent: float) -> int:
        return round(SERVO_MIN + (SERVO_MAX - SERVO_MIN) * percent / 100)

    @staticmethod
    def servo_rate(percent: float) -> int:
        """In ``SC,11``/``SC,12`` units: servo position change per 24 ms."""
        return max(1, round((SERVO_MAX - SERVO_MIN) * percent / 100 * 24 / SERVO_SWEEP_MS))

    def delay_ms(self, down: bool, dwell: float) -> int:
        """The pause after a pen change: the servo's travel between the heights, then ``dwell`` seconds."""
        rate = self.lower_rate if down else self.raise_rate
        return round((self.up - self.down) / 100 * SERVO_SWEEP_MS / (rate / 100) + dwell * 1000)


class _Silence(OSError):
    """The board sent no complete line in time."""


class _WatchedPort:
    """The serial port as plotink sees it, keeping what was sent, the lines read and any failure."""

    def __init__(self, port: Any) -> None:
        self.port = port
        self.sent = b""
        self.lines: list[bytes] = []
        self.failure: OSError | None = None

    def write(self, data: bytes) -> int:
        self.sent = data
        try:
            return int(self.port.write(data))
        except OSError as error:  # pyserial's SerialException is an OSError
            self.failure = error
            raise

    def readline(self) -> bytes:
        try:
            line = bytes(self.port.readline())
        except OSError as error:
            self.failure = error
            raise
        if not line.endswith(b"\n"):
            self.failure = _Silence(f"no complete answer within {self.port.timeout:g} s (got {line!r})")
            raise self.failure  # else plotink would wait for a hundred timeouts
        self.lines.append(line)
        return line

    def discard_input(self) -> None:
        """Drop replies nobody waits for any more (left by an exchange cut short by Ctrl-C)."""
        with contextlib.suppress(Exception):  # pyserial raises termios.error on a port that is gone
            self.port.reset_input_buffer()

    def close(self) -> None:
        self.port.close()


def _import_plotink() -> tuple[ModuleType, ModuleType]:
    """plotink's serial and motion modules, imported only when a plotter is used. plotink logs its
    failures ("Error testing serial port …") and carries on; every reply is checked here and said in
    our words, so its log lines are kept off the person's terminal."""
    try:
        modules = importlib.import_module("plotink.ebb_serial"), importlib.import_module("plotink.ebb_motion")
    except ImportError as error:
        raise RobotError("the ebb backend needs plotink and pyserial: pip install 'noughts[robot]'") from error
    plotink_log = logging.getLogger("plotink")
    if not any(isinstance(handler, logging.NullHandler) for handler in plotink_log.handlers):
        plotink_log.addHandler(logging.NullHandler())  # else Python's last-resort handler prints them
    plotink_log.propagate = False
    return modules


class EbbRobot:
    """An EBB plotter on ``port`` (``/dev/ttyACM0``, ``COM3``…) with ``machine``'s travel and speeds,
    drawing on ``sheet`` (it parks beyond its right edge). A board silent for ``reply_timeout``
    seconds counts as lost."""

    def __init__(self, port: str, machine: Machine, sheet: Sheet | None = None, *, pen: PenLift | None = None,
                 reply_timeout: float = 3.0) -> None:
        self.port, self.machine, self.sheet, self.pen = port, machine, sheet or Sheet(3, 3), pen or PenLift()
        self._serial, self._motion = _import_plotink()
        self._lock = threading.Lock()  # one exchange at a time: draw() on one thread, stop() on another
        self._stop_requested = threading.Event()
        self._halted = False
        self._steps = (0, 0)  # x and y in steps from home, as sent
        self._queued_seconds = 0.0  # how long the board runs the commands sent since the motion began
        self._pen_is_down = True  # unknown until the first pen-up
        raw = self._serial.testPort(port)  # opens this very port and asks for "EBB…" (no USB scan)
        if raw is None:
            raise RobotError(f"no EiBotBoard answered on {port}: check the port name, that the plotter is plugged "
                             "in and switched on, and that no other program (such as Inkscape) is using it")
        raw.timeout = self.reply_timeout = reply_timeout
        self._port: _WatchedPort | None = _WatchedPort(raw)
        try:
            self._check_firmware()
            pen = self.pen
            self._talk(self._motion.setPenUpPos, pen.servo_position(pen.up))
            self._talk(self._motion.setPenDownPos, pen.servo_position(pen.down))
            self._talk(self._motion.setPenUpRate, pen.servo_rate(pen.raise_rate))
            self._talk(self._motion.setPenDownRate, pen.servo_rate(pen.lower_rate))
            self._talk(self._motion.sendEnableMotors, 1)  # 16× microstepping; the carriage's place becomes home
            self._set_pen(down=False, interruptible=False)
        except RobotError:
            self._serial.closePort(self._port)
            raise

    @property
    def connected(self) -> bool:
        return self._port is not None and self._port.failure is None

    def _talk(self, function: Callable[..., object], *args: object, expect: tuple[str, ...] = (OK,)) -> list[str]:
        """Call plotink's ``function(port, *args)`` and check the reply lines against the patterns ``expect``."""
        port = self._port
        if port is None or port.failure is not None:
            raise RobotDisconnected(f"the plotter on {self.port} is not connected; reconnect it to carry on")
        port.lines = []
        with contextlib.suppress(ValueError):  # plotink decodes replies as ASCII unchecked; the lines tell
            function(port, *args, verbose=False)
        command = port.sent.decode("ascii", "replace").strip()
        lines = [line.decode("ascii", "replace").strip() for line in port.lines]
        if lines and lines[0].startswith("!"):
            if isinstance(port.failure, _Silence):
                port.failure = None  # a refused query: 2.x firmware sends no OK after its error line
            raise RobotError(f"the EiBotBoard refused {command!r}: {lines[0]}")
        if isinstance(port.failure, _Silence):
            raise RobotDisconnected(f"the plotter on {self.port} stopped answering ({command!r}: "
                                    f"{port.failure}); check its power and USB cable, then reconnect")
        if port.failure is not None:
            raise RobotDisconnected(f"the connection to the plotter on {self.port} was lost during {command!r} "
                                    f"({port.failure}); check its USB cable, then reconnect — the game is kept")
        if len(lines) != len(expect) or not all(map(re.fullmatch, expect, lines)):
            heard = b"".join(port.lines)[:60]
            raise RobotError(f"the plotter on {self.port} answered {command!r} with {heard!r}, which is not what an "
                             "EiBotBoard says: check that this is the plotter's port and nothing else is using it")
        return lines

    def _ask(self, query: str, *expect: str) -> list[str]:
        return self._talk(self._serial.query, query + "\r", expect=expect)

    def _run(self, function: Callable[..., object], *args: object, seconds: float = 0.0,
             interruptible: bool = True) -> None:
        """:meth:`_talk` under the lock, for a command the board runs for ``seconds``; a step that can be
        interrupted halts instead once :meth:`stop` was asked."""
        with self._lock:
            if interruptible and self._stop_requested.is_set():
                self._halt()
                raise RobotError("the robot was stopped before it finished; the pen is up (home it to go on)")
            self._talk(function, *args)
            self._queued_seconds += seconds

    def _check_firmware(self) -> None:
        reply = self._ask("V", r"EBB.*")[0]
        found = re.search(r"Firmware Version (\d+)\.(\d+)\.(\d+)", reply)
        if found is None:
            raise RobotError(f"the board on {self.port} did not give a firmware version ({reply!r})")
        if tuple(int(part) for part in found.groups()) < MIN_FIRMWARE:
            raise RobotError(f"the EiBotBoard on {self.port} runs firmware {'.'.join(found.groups())}; noughts needs "
                             f"{'.'.join(map(str, MIN_FIRMWARE))} or newer (for homing and status queries): update "
                             "it with the EBB firmware updater from the AxiDraw support pages")

    def _set_pen(self, *, down: bool, interruptible: bool = True) -> None:
        if down != self._pen_is_down:
            send = self._motion.sendPenDown if down else self._motion.sendPenUp
            delay = self.pen.delay_ms(down, self.machine.pen_dwell)
            self._run(send, delay, seconds=delay / 1000, interruptible=interruptible)
            self._pen_is_down = down

    def _to_steps(self, point: Point) -> tuple[int, int]:
        """A sheet point as x and y steps from home (refused outside the travel)."""
        x, y = self.machine.to_machine(point)
        return round(x * STEPS_PER_MM), round(y * STEPS_PER_MM)

    def _move(self, target: tuple[int, int], speed: float) -> None:
        """A straight move at ``speed`` mm/s in pieces of at most ``PIECE_MS``, each within the EBB's step rates."""
        (a0, b0), (a1, b1) = self._steps, target
        pieces = max(1, math.ceil(math.hypot(a1 - a0, b1 - b0) / STEPS_PER_MM / speed * 1000 / PIECE_MS))
        for i in range(1, pieces + 1):
            here = (a0 + round((a1 - a0) * i / pieces), b0 + round((b1 - b0) * i / pieces))
            a, b = here[0] - self._steps[0], here[1] - self._steps[1]
            if a or b:
                duration = max(1, round(math.hypot(a, b) / STEPS_PER_MM / speed * 1000),
                               math.ceil(max(abs(a + b), abs(a - b)) * 1000 / MAX_STEP_RATE))
                self._run(self._motion.doABMove, a, b, duration, seconds=duration / 1000)  # XM: motors a ± b
                self._steps = here

    def _read_steps(self) -> tuple[int, int]:
        motor1, motor2 = (int(part) for part in self._ask("QS", r"-?\d+,-?\d+", OK)[0].split(","))
        return (motor1 + motor2) // 2, (motor1 - motor2) // 2

    def _halt(self) -> None:
        """Emergency stop, pen up and where it stopped, with the lock held. Each step is tried even if
        the one before got a bad reply (the board may well have obeyed); nothing is raised."""
        if self._halted:
            return
        self._halted = True
        if self._port is not None and self._port.failure is None:
            self._port.discard_input()
        with contextlib.suppress(RobotError):
            self._ask("ES", r"\d(,\d+)*", OK)
        with contextlib.suppress(RobotError):
            self._talk(self._motion.sendPenUp, self.pen.delay_ms(False, self.machine.pen_dwell))
            self._pen_is_down = False
        with contextlib.suppress(RobotError):
            self._steps = self._read_steps()

    @contextlib.contextmanager
    def _moving(self) -> Iterator[None]:
        """Around motion: wait for the board to finish it (not longer than it can take); after an error
        the board can still hear, halt it (pen up) before raising."""
        if not self._stop_requested.is_set():
            self._halted = False
        started, self._queued_seconds = time.monotonic(), 0.0
        try:
            yield
            while True:  # the board answers a move when it is queued, not when it is done
                with self._lock:
                    status = int(self._ask("QG", r"[0-9A-Fa-f]{2}")[0], 16)
                if not status & 0b1111:  # command executing, motor 1 or 2 moving, queue not empty
                    break
                overdue = time.monotonic() - started - self._queued_seconds
                if overdue > self.reply_timeout:
                    raise RobotError(f"the plotter on {self.port} still says it is moving, {overdue:.0f} s after its "
                                     "moves should have ended: check that nothing holds the carriage")
                time.sleep(POLL_SECONDS)
        except RobotDisconnected:
            raise
        except RobotError:
            with self._lock:
                self._halt()
            raise

    @property
    def park_point(self) -> Point:
        """Beyond the sheet's right edge, level with its top (in sheet millimetres), as for ``SimRobot``."""
        return self.sheet.width, 0.0

    @property
    def position(self) -> Point:
        """Where the board's step counters put the pen, in sheet millimetres (asks the board)."""
        with self._lock:
            x, y = (steps / STEPS_PER_MM for steps in self._read_steps())
        x0, y0 = self.machine.sheet_origin
        return x - x0, (y - y0) if self.machine.y_down else (y0 - y)

    @property
    def pen_down(self) -> bool:
        """Whether the board says the pen is down (asks the board)."""
        with self._lock:
            return self._ask("QP", "[01]", OK)[0] == "0"

    def home(self) -> None:
        """Pen up, then back to where the motors were switched on (an AxiDraw has no home switches)."""
        self._stop_requested.clear()
        rate = min(MAX_STEP_RATE, max(2, round(self.machine.travel_speed * STEPS_PER_MM)))
        (a, b) = self._steps
        with self._moving():
            self._set_pen(down=False)
            self._run(self._motion.doAbsMove, rate, seconds=max(abs(a + b), abs(a - b)) / rate)  # HM
            self._steps = (0, 0)

    def draw(self, plan: PenPlan) -> None:
        targets = []
        for stroke in plan.strokes:  # every point checked before anything moves
            try:
                targets.append([self._to_steps(point) for point in stroke.points])
            except RobotError as error:
                raise RobotError(f"nothing was drawn: the {stroke.kind} stroke leaves the travel — {error}") from None
        with self._moving():
            for points in targets:
                self._set_pen(down=False)
                self._move(points[0], self.machine.travel_speed)
                self._set_pen(down=True)
                for point in points[1:]:
                    self._move(point, self.machine.draw_speed)
            self._set_pen(down=False)

    def park(self) -> None:
        target = self._to_steps(self.park_point)
        with self._moving():
            self._set_pen(down=False)
            self._move(target, self.machine.travel_speed)

    def stop(self) -> None:
        """Emergency stop and pen up. Safe from another thread or a signal handler: if a drawing holds
        the board, it halts before its next command (within one reply)."""
        self._stop_requested.set()
        if self._lock.acquire(blocking=False):
            try:
                self._halt()
            finally:
                self._lock.release()

    def close(self) -> None:
        """Motors off (the carriage can be moved by hand) and the port closed."""
        if self.connected:
            with self._lock, contextlib.suppress(RobotError):
                self._talk(self._motion.sendDisableMotors)
        if self._port is not None:
            self._serial.closePort(self._port)
            self._port = None

    def __enter__(self) -> EbbRobot:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
