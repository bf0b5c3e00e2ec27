"""The ``ev3`` backend: seed 003's LEGO EV3 gantry, driven over TCP through the agent on its brick.

The brick runs ev3dev's Python 3.5, so noughts stays on the computer and sends JSON lines to
:mod:`~noughts.robot.backends.ev3_agent` (copied to the brick and started there). Positions go in
motor degrees measured from the home corner, where homing by stall (the seed's ``trackReset``)
puts both axes; :class:`Ev3Config` says how sheet millimetres become degrees. Every point is
checked with :meth:`~noughts.sheet.geometry.Machine.to_machine` before anything is sent.

>>> config = Ev3Config()
>>> round(config.sheet_to_degrees((0.0, 120.0))[1])  # the sheet's bottom edge, near the home corner
13
>>> Ev3Robot(config).machine.y_down
False
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import socket
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from noughts.robot.backend import RobotDisconnected
from noughts.sheet.geometry import Machine, Point, RobotError, distance
from noughts.sheet.strokes import PenPlan

__all__ = ["BUTTONS", "Ev3Config", "Ev3Robot", "MotorSpec"]

BUTTONS = ("left", "enter", "right", "up", "down", "backspace")  # ev3dev's names; "enter" is the centre button


@dataclass(frozen=True)
class MotorSpec:
    """One motor: its output port, ``large`` or ``medium``, and ``sign`` +1 when running it forwards
    goes toward its home end (the rack's end for x and y, the top for the pen), else -1."""

    port: str
    kind: str = "large"
    sign: int = 1

    def __post_init__(self) -> None:
        if self.kind not in ("large", "medium") or self.sign not in (1, -1):
            raise RobotError(f"a motor is large or medium with sign 1 or -1, not {self.kind!r} with {self.sign!r}")


@dataclass(frozen=True)
class Ev3Config:
    """How the seed's gantry is built and wired, in the host's terms (the configuration's ``[ev3]`` table).

    Machine coordinates are millimetres from the home corner (where the seed's ``trackReset``
    stalls both axes), x across, y away from the home end. The defaults follow the seed: x on a
    medium motor on port C, y on a large motor on port A, the pen on a medium motor on port B
    lowered 30 degrees, the colour sensor on port 1 sitting 170 motor degrees to the pen's left,
    the touch sensor on port 4, and the seed's 300-degree board as a 90 mm grid (10/3 degrees per mm).
    """

    host: str = "ev3dev.local"
    port: int = 4455
    x_motor: MotorSpec = MotorSpec("outC", "medium", 1)
    y_motor: MotorSpec = MotorSpec("outA", "large", 1)
    pen_motor: MotorSpec = MotorSpec("outB", "medium", -1)
    colour_port: str = "in1"
    touch_port: str = "in4"
    deg_per_mm: tuple[float, float] = (10 / 3, 10 / 3)
    travel_mm: tuple[float, float] = (180.0, 126.0)
    sheet_origin_mm: Point = (4.0, 124.0)  # the sheet's top-left corner; y is up, so the sheet hangs below it
    sensor_offset_mm: Point = (-51.0, 0.0)  # the colour sensor from the pen (seed: 170 degrees to its left)
    pen_down_deg: float = 30.0
    draw_speed_mm_s: float = 25.0
    travel_speed_mm_s: float = 75.0
    home_speed_deg_s: float = 150.0
    pen_speed_deg_s: float = 300.0
    pen_dwell_s: float = 0.25  # the seed waits 750 ms after lowering its pen
    settle_s: float = 0.05  # before each light reading
    stall_s: float = 0.15  # how long "near zero speed" must last to count as a stall
    park_mm: Point = (0.0, 0.0)  # the home corner, where the seed waits for the human
    timeout_s: float = 10.0  # on top of how long each request should take

    def machine(self) -> Machine:
        return Machine(travel=self.travel_mm, sheet_origin=self.sheet_origin_mm, y_down=False,
                       draw_speed=self.draw_speed_mm_s, travel_speed=self.travel_speed_mm_s,
                       pen_dwell=self.pen_dwell_s)

    def to_degrees(self, point: Point) -> Point:
        """Machine millimetres in motor degrees from home."""
        return round(point[0] * self.deg_per_mm[0], 1), round(point[1] * self.deg_per_mm[1], 1)

    def sheet_to_degrees(self, point: Point) -> Point:
        """Where the pen goes for a sheet point, in degrees (refused outside the travel)."""
        return self.to_degrees(self.machine().to_machine(point))

    def sensor_to_degrees(self, point: Point) -> Point:
        """Where the colour sensor goes to look at a sheet point, in degrees; the pen's position then
        (the sensor's less its offset) is checked against the travel."""
        ox, oy = self.sheet_origin_mm
        seen = (ox + point[0], oy - point[1])
        self.machine().check((seen[0] - self.sensor_offset_mm[0], seen[1] - self.sensor_offset_mm[1]))
        return self.to_degrees(seen)

    def agent_settings(self) -> dict[str, Any]:
        """The ``configure`` request's arguments: everything the brick needs, in degrees."""
        per_mm = (self.deg_per_mm[0] + self.deg_per_mm[1]) / 2
        offset = self.to_degrees(self.sensor_offset_mm)
        return {
            "x": {**asdict(self.x_motor), "limit": round(self.travel_mm[0] * self.deg_per_mm[0])},
            "y": {**asdict(self.y_motor), "limit": round(self.travel_mm[1] * self.deg_per_mm[1])},
            "pen": asdict(self.pen_motor),
            "colour": self.colour_port, "touch": self.touch_port,
            "speeds": {"home": self.home_speed_deg_s, "travel": round(self.travel_speed_mm_s * per_mm),
                       "draw": round(self.draw_speed_mm_s * per_mm), "pen": self.pen_speed_deg_s},
            "pen_down": self.pen_down_deg, "sensor_offset": list(offset), "pen_dwell": self.pen_dwell_s,
            "settle": self.settle_s, "stall_time": self.stall_s,
        }

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any]) -> Ev3Config:
        """A configuration from a TOML table (unknown keys are an error a person can fix)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(table) - known)
        if unknown:
            raise RobotError(f"unknown EV3 setting {unknown[0]!r}; the settings are {', '.join(sorted(known))}")
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key.endswith("_motor"):
                try:
                    values[key] = MotorSpec(**value)
                except TypeError as error:
                    raise RobotError(f"{key} needs a port, and may say kind and sign: {value!r}") from error
            elif isinstance(value, list):
                values[key] = tuple(value)
            else:
                values[key] = value
        return cls(**values)


class Ev3Robot:
    """A :class:`~noughts.robot.backend.PenRobot` and :class:`~noughts.robot.backend.LightProbe` on
    the EV3 agent at ``config.host``:``config.port``; also the touch sensor, the brick's buttons,
    screen and speaker for the game's menu and turn signal. Connects (and configures the brick)
    on first use; a lost connection raises :class:`RobotDisconnected` and the next call reconnects."""

    def __init__(self, config: Ev3Config | None = None) -> None:
        self.config = config or Ev3Config()
        self.machine = self.config.machine()
        self._socket: socket.socket | None = None
        self._reader: Any = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.position: Point | None = None  # in degrees, as the brick last reported it

    @property
    def connected(self) -> bool:
        return self._socket is not None

    @property
    def _where(self) -> str:
        return f"the EV3 at {self.config.host}:{self.config.port}"

    def connect(self) -> None:
        """Reach the agent and configure the brick now (before a menu is shown), not on first use."""
        with self._lock:
            if self._socket is None:
                self._connect()

    # -- the pen robot -----------------------------------------------------------------------------
    def home(self) -> None:
        """Lift the pen and find the home corner by running both axes into their rack ends."""
        travel_deg = max(self.config.travel_mm[0] * self.config.deg_per_mm[0],
                         self.config.travel_mm[1] * self.config.deg_per_mm[1])
        self._note(self._request("home", seconds=2 * travel_deg / self.config.home_speed_deg_s + 5))

    def draw(self, plan: PenPlan) -> None:
        strokes = [[list(self.config.sheet_to_degrees(p)) for p in stroke.points] for stroke in plan.strokes]
        here = plan.start
        for stroke, points in zip(plan.strokes, strokes, strict=True):
            seconds = (distance(here, stroke.start) / self.config.travel_speed_mm_s
                       + stroke.length / self.config.draw_speed_mm_s + 4 * self.config.pen_dwell_s + 1)
            self._note(self._request("draw", seconds=seconds, points=points))
            here = stroke.end

    def park(self) -> None:
        self.move_to_machine(self.config.park_mm)

    def move_to_machine(self, point: Point) -> None:
        """Move (pen up) to a point in machine millimetres."""
        self.machine.check(point)
        self._note(self._request("move", seconds=self._travel_seconds(), to=list(self.config.to_degrees(point))))

    def stop(self) -> None:
        """Halt the motors and lift the pen, from any thread: a second connection, so it is not
        queued behind a long request. Quiet when the brick cannot be reached (nothing moves then)."""
        try:
            with socket.create_connection((self.config.host, self.config.port), timeout=2.0) as link:
                link.sendall(b'{"cmd": "stop"}\n')
                link.makefile("rb").readline()
        except OSError:
            pass

    def close(self) -> None:
        with self._lock:
            self._drop()

    # -- the light probe ---------------------------------------------------------------------------
    def reflected(self, points: Sequence[Point]) -> list[float]:
        targets = [list(self.config.sensor_to_degrees(p)) for p in points]
        seconds = len(targets) * (self.config.settle_s + 0.3) + self._travel_seconds()
        reply = self._request("light", seconds=seconds, points=targets)
        self._note(reply)
        return [float(value) for value in reply["values"]]

    # -- the human's side: touch sensor, buttons, screen, speaker ----------------------------------
    def touch_pressed(self) -> bool:
        return bool(self._request("touch")["pressed"])

    def wait_touch(self, timeout: float = 600.0) -> bool:
        """Wait until the touch sensor is pressed and released (the seed's "your move is done"); False
        after ``timeout`` seconds."""
        return bool(self._request("wait_touch", seconds=timeout, timeout=timeout)["pressed"])

    def buttons(self) -> frozenset[str]:
        """The brick buttons held down now, by ev3dev's names (:data:`BUTTONS`)."""
        return frozenset(self._request("buttons")["pressed"])

    def wait_buttons(self, timeout: float = 600.0) -> frozenset[str]:
        """Wait until buttons are pressed and all released again: the ones pressed (empty after ``timeout``)."""
        return frozenset(self._request("wait_buttons", seconds=timeout, timeout=timeout)["pressed"])

    def show(self, lines: Sequence[str]) -> None:
        """Show lines on the brick's screen (12 lines of 22 characters fit)."""
        self._request("show", lines=[str(line) for line in lines])

    def beep(self) -> None:
        self._request("beep")

    # -- the connection ----------------------------------------------------------------------------
    def _travel_seconds(self) -> float:
        return math.hypot(*self.config.travel_mm) / self.config.travel_speed_mm_s + 2 * self.config.pen_dwell_s + 1

    def _note(self, reply: dict[str, Any]) -> None:
        at = reply.get("at")
        if isinstance(at, list) and len(at) == 2:
            self.position = (float(at[0]), float(at[1]))

    def _request(self, command: str, seconds: float = 0.0, **arguments: Any) -> dict[str, Any]:
        with self._lock:
            if self._socket is None:
                self._connect()
            return self._exchange(command, seconds, arguments)

    def _connect(self) -> None:
        try:
            self._socket = socket.create_connection((self.config.host, self.config.port),
                                                    timeout=self.config.timeout_s)
        except OSError as error:
            raise RobotDisconnected(f"cannot reach {self._where}: {error.strerror or error}; "
                                    "is the agent running on the brick (python3 ev3_agent.py)?") from error
        self._reader = self._socket.makefile("rb")
        self._exchange("configure", 0.0, self.config.agent_settings())

    def _drop(self) -> None:
        if self._socket is not None:
            for closable in (self._reader, self._socket):
                with contextlib.suppress(OSError):
                    closable.close()
        self._socket = self._reader = None

    def _exchange(self, command: str, seconds: float, arguments: Mapping[str, Any]) -> dict[str, Any]:
        assert self._socket is not None
        number = next(self._ids)
        budget = self.config.timeout_s + seconds
        try:
            self._socket.settimeout(budget)
            self._socket.sendall((json.dumps({"id": number, "cmd": command, **arguments}) + "\n").encode())
            line = self._reader.readline()
        except TimeoutError as error:
            self._drop()
            raise RobotDisconnected(f"{self._where} did not answer {command!r} within {budget:.1f} s") from error
        except OSError as error:
            self._drop()
            raise RobotDisconnected(f"lost the connection to {self._where}: {error.strerror or error}") from error
        if not line:
            self._drop()
            raise RobotDisconnected(f"{self._where} closed the connection; is the agent still running?")
        try:
            reply = json.loads(line)
        except ValueError as error:
            self._drop()
            raise RobotDisconnected(f"{self._where} answered something that is not the noughts agent's") from error
        if not isinstance(reply, dict) or reply.get("id") != number:
            self._drop()
            raise RobotDisconnected(f"{self._where} answered out of turn; reconnecting")
        if not reply.get("ok"):
            raise _error_in_words(reply)
        return reply


def _error_in_words(reply: Mapping[str, Any]) -> RobotError:
    """The agent's error reply as a sentence for the person at the robot."""
    code, message, motor = reply.get("error"), str(reply.get("message", "")), reply.get("motor", "")
    if code == "stalled":
        return RobotError(f"the {motor} motor stalled at {reply.get('at')} degrees; is something in the way?")
    if code == "timeout":
        return RobotError(f"{message}; is something in the way?")
    if code == "not-homed":
        return RobotError("the robot has not found its home corner yet; home it first")
    if code == "stopped":
        return RobotError("the robot was stopped")
    if code in ("no-device", "out-of-range"):
        return RobotError(f"the brick says: {message}")
    return RobotError(f"the EV3 agent refused the request ({code}): {message}")
