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
:class:`~noughts.robot.geometry.RobotError`, each in words.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from noughts.robot.backend import RobotDisconnected
from noughts.robot.geometry import Machine, Point, RobotError, Sheet
from noughts.robot.strokes import PenPlan

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
        """``SC,11``/``SC,12`` units: servo position change per 24 ms."""
        return max(1, round((SERVO_MAX - SERVO_MIN) * percent / 100 * 24 / SERVO_SWEEP_MS))

    def move_ms(self, rate: float) -> float:
        """How long the servo takes between the two heights at ``rate`` percent of full speed."""
        return (self.up - self.down) / 100 * SERVO_SWEEP_MS / (rate / 100)


class _Silence(OSError):
    """The board sent no complete line in time."""


class _WatchedPort:
    """The serial port as plotink sees it, keeping the lines it read and any failure."""

    def __init__(self, port: Any) -> None:
        self.port = port
        self.lines: list[bytes] = []
        self.failure: OSError | None = None

    def write(self, data: bytes) -> int:
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

    def close(self) -> None:
        self.port.close()


def _plotink() -> tuple[ModuleType, ModuleType]:
    """plotink's serial and motion modules, imported only when a plotter is used."""
    try:
        return importlib.import_module("plotink.ebb_serial"), importlib.import_module("plotink.ebb_motion")
    except ImportError as error:
        raise RobotError("the ebb backend needs plotink and pyserial: pip install 'noughts[robot]'") from error


class EbbRobot:
    """An EBB plotter on ``port`` (``/dev/ttyACM0``, ``COM3``…) with ``machine``'s travel and speeds,
    drawing on ``sheet`` (parks beyond its right edge). ``reply_timeout`` is how long a silent board
    is waited for before it counts as lost."""

    def __init__(self, port: str, machine: Machine, sheet: Sheet | None = None, *, pen: PenLift | None = None,
                 reply_timeout: float = 3.0) -> None:
        self.port = port
        self.machine = machine
        self.sheet = sheet or Sheet(3, 3)
        self.pen = pen or PenLift()
        self._serial, self._motion = _plotink()
        self._lock = threading.Lock()  # one exchange at a time: draw() on one thread, stop() on another
        self._stop_requested = threading.Event()
        self._halted = False
        self._steps = (0, 0)  # x and y in steps from home, as sent
        self._pen_is_down = True  # unknown until the first pen-up
        raw = self._serial.testPort(port)
        if raw is None:
            raise RobotError(f"no EiBotBoard answered on {port}: check the port name, that the plotter is plugged "
                             "in and switched on, and that no other program (such as Inkscape) is using it")
        raw.timeout = reply_timeout
        self._port: _WatchedPort | None = _WatchedPort(raw)
        try:
            self._check_firmware()
            self._configure()
        except RobotError:
            self._close_port()
            raise

    # -- talking to the board ------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._port is not None and self._port.failure is None

    def _talk(self, command: str, call: Callable[[Any], object], expect: tuple[str, ...] = (OK,)) -> list[str]:
        """Run one plotink call that sends ``command`` and check the reply lines against ``expect``
        (patterns); return the lines."""
        port = self._port
        if port is None or port.failure is not None:
            raise RobotDisconnected(f"the plotter on {self.port} is not connected; reconnect it to carry on")
        port.lines = []
        garbled = False
        try:
            call(port)
        except (ValueError, IndexError):  # plotink decodes replies as ASCII and indexes them unchecked
            garbled = True
        lines = [line.decode("ascii", "replace").strip() for line in port.lines]
        if lines and lines[0].startswith("!"):
            if isinstance(port.failure, _Silence):
                port.failure = None  # a query refused: 2.x firmware sends no OK after its error line
            raise RobotError(f"the EiBotBoard refused {command!r}: {lines[0]}")
        if isinstance(port.failure, _Silence):
            raise RobotDisconnected(f"the plotter on {self.port} stopped answering ({command!r}: "
                                    f"{port.failure}); check its power and USB cable, then reconnect")
        if port.failure is not None:
            raise RobotDisconnected(f"the connection to the plotter on {self.port} was lost during {command!r} "
                                    f"({port.failure}); check its USB cable, then reconnect — the game is kept")
        if garbled or len(lines) != len(expect) or not all(map(re.fullmatch, expect, lines)):
            heard = b"".join(port.lines)[:60]
            raise RobotError(f"the plotter on {self.port} answered {command!r} with {heard!r}, which is not what an "
                             "EiBotBoard says: check that this is the plotter's port and nothing else is using it")
        return lines

    def _exchange(self, command: str, call: Callable[[Any], object], expect: tuple[str, ...] = (OK,), *,
                  interruptible: bool = True) -> list[str]:
        """:meth:`_talk` under the lock; an interruptible step halts instead once :meth:`stop` was asked."""
        with self._lock:
            if interruptible and self._stop_requested.is_set():
                self._halt()
                raise RobotError("the robot was stopped before it finished; the pen is up (home it to go on)")
            return self._talk(command, call, expect)

    def _check_firmware(self) -> None:
        reply = self._talk("V", self._serial.queryVersion, (r"EBB.*",))[0]
        found = re.search(r"Firmware Version (\d+)\.(\d+)\.(\d+)", reply)
        if found is None:
            raise RobotError(f"the board on {self.port} did not give a firmware version ({reply!r})")
        version = tuple(int(part) for part in found.groups())
        if version < MIN_FIRMWARE:
            raise RobotError(f"the EiBotBoard on {self.port} runs firmware {'.'.join(found.groups())}; noughts needs "
                             f"{'.'.join(map(str, MIN_FIRMWARE))} or newer (for homing and status queries): update "
                             "it with the EBB firmware updater from the AxiDraw support pages")

    def _configure(self) -> None:
        m, pen = self._motion, self.pen
        up, down = pen.servo_position(pen.up), pen.servo_position(pen.down)
        raise_rate, lower_rate = pen.servo_rate(pen.raise_rate), pen.servo_rate(pen.lower_rate)
        self._talk(f"SC,4,{up}", lambda p: m.setPenUpPos(p, up, verbose=False))
        self._talk(f"SC,5,{down}", lambda p: m.setPenDownPos(p, down, verbose=False))
        self._talk(f"SC,11,{raise_rate}", lambda p: m.setPenUpRate(p, raise_rate, verbose=False))
        self._talk(f"SC,12,{lower_rate}", lambda p: m.setPenDownRate(p, lower_rate, verbose=False))
        self._talk("EM,1,1", lambda p: m.sendEnableMotors(p, 1, verbose=False))  # 16×; here becomes home
        self._pen_up(interruptible=False)

    # -- motion --------------------------------------------------------------------------------

    def _pen_up(self, *, interruptible: bool = True) -> None:
        if self._pen_is_down:
            delay = round(self.pen.move_ms(self.pen.raise_rate) + self.machine.pen_dwell * 1000)
            self._exchange(f"SP,1,{delay}", lambda p: self._motion.sendPenUp(p, delay, verbose=False),
                           interruptible=interruptible)
            self._pen_is_down = False

    def _pen_down(self) -> None:
        delay = round(self.pen.move_ms(self.pen.lower_rate) + self.machine.pen_dwell * 1000)
        self._exchange(f"SP,0,{delay}", lambda p: self._motion.sendPenDown(p, delay, verbose=False))
        self._pen_is_down = True

    def _to_steps(self, point: Point) -> tuple[int, int]:
        """A sheet point as x and y steps from home (refused outside the travel)."""
        x, y = self.machine.to_machine(point)
        return round(x * STEPS_PER_MM), round(y * STEPS_PER_MM)

    def _move(self, target: tuple[int, int], speed: float) -> None:
        """A straight move at ``speed`` mm/s, in pieces of at most ``PIECE_MS``, each within the
        EBB's step rates."""
        (a0, b0), (a1, b1) = self._steps, target
        millis = math.hypot(a1 - a0, b1 - b0) / STEPS_PER_MM / speed * 1000
        pieces = max(1, math.ceil(millis / PIECE_MS))
        for i in range(1, pieces + 1):
            here = (a0 + round((a1 - a0) * i / pieces), b0 + round((b1 - b0) * i / pieces))
            a, b = here[0] - self._steps[0], here[1] - self._steps[1]
            if a == b == 0:
                continue
            fastest_motor = max(abs(a + b), abs(a - b))
            duration = max(1, round(math.hypot(a, b) / STEPS_PER_MM / speed * 1000),
                           math.ceil(fastest_motor * 1000 / MAX_STEP_RATE))
            self._exchange(f"XM,{duration},{a},{b}", functools.partial(self._motion.doABMove, delta_a=a, delta_b=b,
                                                                       duration=duration, verbose=False))
            self._steps = here

    def _wait_until_idle(self) -> None:
        """Wait while the board still runs queued moves (its reply to a move comes when it is queued)."""
        while True:
            status = self._exchange("QG", lambda p: self._serial.query(p, "QG\r", False), (r"[0-9A-Fa-f]{2}",))
            if not int(status[0], 16) & 0b1111:  # command executing, motor 1 or 2 moving, queue not empty
                return
            time.sleep(POLL_SECONDS)

    def _halt(self) -> None:
        """Emergency stop, pen up and where it stopped, with the lock held. Each step is tried even if
        the one before got a bad reply (the board may well have obeyed); nothing is raised."""
        if self._halted:
            return
        self._halted = True
        delay = round(self.pen.move_ms(self.pen.raise_rate) + self.machine.pen_dwell * 1000)
        with contextlib.suppress(RobotError):
            self._talk("ES", lambda p: self._serial.query(p, "ES\r", False), (r"\d(,\d+)*", OK))
        with contextlib.suppress(RobotError):
            self._talk(f"SP,1,{delay}", lambda p: self._motion.sendPenUp(p, delay, verbose=False))
            self._pen_is_down = False
        with contextlib.suppress(RobotError):
            self._steps = self._read_steps()

    def _read_steps(self) -> tuple[int, int]:
        reply = self._talk("QS", lambda p: self._serial.query(p, "QS\r", False), (r"-?\d+,-?\d+", OK))[0]
        motor1, motor2 = (int(part) for part in reply.split(","))
        return (motor1 + motor2) // 2, (motor1 - motor2) // 2  # motor 1 turns with x + y, motor 2 with x − y

    def _guarded(self, steps: Callable[[], None]) -> None:
        """Run motion ``steps``; after an error the board still hears, halt it (pen up) before raising."""
        if self._halted and not self._stop_requested.is_set():
            self._halted = False
        try:
            steps()
            self._wait_until_idle()
        except RobotDisconnected:
            raise
        except RobotError:
            with self._lock:
                self._halt()
            raise

    # -- the PenRobot interface ----------------------------------------------------------------

    @property
    def park_point(self) -> Point:
        """Beyond the sheet's right edge, level with its top (in sheet millimetres), as ``SimRobot``."""
        return self.sheet.width, 0.0

    @property
    def position(self) -> Point:
        """Where the board's step counters put the pen, in sheet millimetres (asks the board)."""
        with self._lock:
            a, b = self._read_steps()
        x0, y0 = self.machine.sheet_origin
        x, y = a / STEPS_PER_MM, b / STEPS_PER_MM
        return x - x0, (y - y0) if self.machine.y_down else (y0 - y)

    @property
    def pen_down(self) -> bool:
        """Whether the board says the pen is down (asks the board)."""
        state = self._exchange("QP", lambda p: self._serial.query(p, "QP\r", False), (r"[01]", OK),
                               interruptible=False)
        return state[0] == "0"

    def home(self) -> None:
        """Pen up, then back to where the motors were switched on (the AxiDraw has no home switches)."""
        self._stop_requested.clear()
        self._halted = False
        rate = min(MAX_STEP_RATE, max(2, round(self.machine.travel_speed * STEPS_PER_MM)))

        def steps() -> None:
            self._pen_up()
            self._exchange(f"HM,{rate}", lambda p: self._motion.doAbsMove(p, rate, verbose=False))
            self._steps = (0, 0)

        self._guarded(steps)

    def draw(self, plan: PenPlan) -> None:
        targets = []
        for stroke in plan.strokes:  # every point checked before anything moves
            try:
                targets.append([self._to_steps(point) for point in stroke.points])
            except RobotError as error:
                raise RobotError(f"nothing was drawn: the {stroke.kind} stroke leaves the travel — {error}") from None

        def steps() -> None:
            for points in targets:
                self._pen_up()
                self._move(points[0], self.machine.travel_speed)
                self._pen_down()
                for point in points[1:]:
                    self._move(point, self.machine.draw_speed)
            self._pen_up()

        self._guarded(steps)

    def park(self) -> None:
        target = self._to_steps(self.park_point)

        def steps() -> None:
            self._pen_up()
            self._move(target, self.machine.travel_speed)

        self._guarded(steps)

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
                self._talk("EM,0,0", lambda p: self._motion.sendDisableMotors(p, verbose=False))
        self._close_port()

    def _close_port(self) -> None:
        if self._port is not None:
            self._serial.closePort(self._port)
            self._port = None

    def __enter__(self) -> EbbRobot:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
