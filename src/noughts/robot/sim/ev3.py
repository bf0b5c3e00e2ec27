"""A fake EV3 brick for the agent: a sysfs tree that the real python-ev3dev2 reads as its own (its
``Device.DEVICE_ROOT_PATH`` points there, as python-ev3dev2's own ``FAKE_SYS`` tests do), and a
physics thread behind it: seed 003's gantry on paper.

Tacho motors honour ``command`` (run-to-abs-pos, run-to-rel-pos, run-forever, run-timed, stop,
reset), ``position_sp``, ``speed_sp``, ``time_sp`` and ``stop_action``, and report ``position``,
``speed`` and ``state``; the carriage stalls at its rack ends and the pen at its top, so homing by
stall works. Pen-down moves land on a :class:`~noughts.sheet.paper.Paper`; the colour sensor in
``COL-REFLECT`` mode reads the paper under it. The test presses the touch sensor and the buttons;
the screen is saved as a PNG. Physics time runs ``time_scale`` times faster than real time; the
agent's clock is the fake itself. With ``fast_forward`` the physics does not wait for real time
while someone sleeps on that clock (the agent between its polls, a test): it steps at once up to the
first sleeper's wake-up, then waits for that sleeper to wake, so nothing is skipped, only the idle
real time; anything done on a real clock while nobody sleeps on this one sees ``time_scale``.

Sysfs attributes keep no buffer but files do, and ev3dev2 rewrites them in place; so the physics
pads what it writes, and consumes (empties) a motor's ``command`` and set-points as it takes them.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import tempfile
import threading
import time
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ev3dev2
from ev3dev2.display import Display
from PIL import Image, ImageDraw

from noughts.robot.backends.ev3 import Ev3Config, MotorSpec
from noughts.robot.sim.reflectance import InkIndex, Reflectance
from noughts.sheet.geometry import Point, Sheet
from noughts.sheet.paper import Paper

__all__ = ["FakeEv3"]

WIDTH = 24  # what the physics writes is padded to this, so a shorter value leaves no tail behind
COMMANDS = ("run-forever", "run-to-abs-pos", "run-to-rel-pos", "run-timed", "run-direct", "stop", "reset")
COLOUR_MODES = ("COL-REFLECT", "COL-AMBIENT", "COL-COLOR", "REF-RAW", "RGB-RAW", "COL-CAL")
DRIVERS = {"large": ("lego-ev3-l-motor", 1050), "medium": ("lego-ev3-m-motor", 1560)}


class _Attributes:
    """One device's folder of attribute files, read and written at offset 0."""

    def __init__(self, folder: Path, values: dict[str, tuple[str, int]]) -> None:
        folder.mkdir(parents=True)
        self.fds: dict[str, int] = {}
        for name, (value, mode) in values.items():
            path = folder / name
            path.write_text(value.ljust(WIDTH) if mode != 0o620 else "")
            path.chmod(mode)  # ev3dev2 opens read-only, read-write or write-only by the group bits
            self.fds[name] = os.open(path, os.O_RDWR)

    def read(self, name: str) -> str:
        return os.pread(self.fds[name], 256, 0).decode(errors="replace").strip()

    def take(self, name: str) -> str:
        """Read what ev3dev2 wrote and empty the file for its next write."""
        value = self.read(name)
        if value:
            os.ftruncate(self.fds[name], 0)
        return value

    def write(self, name: str, value: object) -> None:
        os.pwrite(self.fds[name], str(value).ljust(WIDTH).encode(), 0)

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)


def _known(value: str, choices: Sequence[str]) -> str | None:
    """The choice ev3dev2 wrote: the file may still hold the tail of a longer, older value."""
    return next((choice for choice in choices if value.startswith(choice)), None)


class _Travel:
    """Where a motor's mechanism physically is (mm along a rack, degrees below the pen's top), and the
    stops and jams that block it."""

    def __init__(self, spec: MotorSpec, per_degree: float, start: float, low: float, high: float) -> None:
        self.sign, self.per_degree = spec.sign, per_degree
        self.at, self.low, self.high = start, low, high
        self.jams: list[tuple[float, bool]] = []  # where, and whether it is beyond (above) the mechanism

    def jam(self, at: float) -> None:
        self.jams.append((at, at > self.at))

    def turn(self, degrees: float) -> float:
        """Turn the motor by ``degrees`` as far as the mechanism allows; the degrees it really turned."""
        wanted = self.at - self.sign * degrees * self.per_degree
        high = min([self.high] + [at for at, above in self.jams if above])
        low = max([self.low] + [at for at, above in self.jams if not above])
        reached = min(high, max(low, wanted))
        turned = (self.at - reached) / (self.sign * self.per_degree)
        self.at = reached
        return turned


class _Motor:
    """A tacho motor as the ev3dev driver shows it."""

    def __init__(self, folder: Path, spec: MotorSpec, travel: _Travel) -> None:
        driver, max_speed = DRIVERS[spec.kind]
        rw, ro = 0o664, 0o644
        self.files = _Attributes(folder, {
            "address": (f"ev3-ports:{spec.port}", ro), "driver_name": (driver, ro), "command": ("", 0o620),
            "commands": (" ".join(COMMANDS), ro), "stop_actions": ("coast brake hold", ro),
            "count_per_rot": ("360", ro), "max_speed": (str(max_speed), ro), "position": ("0", ro),
            "speed": ("0", ro), "state": ("", ro), "duty_cycle": ("0", ro), "polarity": ("normal", rw),
            "position_sp": ("0", rw), "speed_sp": ("0", rw), "time_sp": ("0", rw), "stop_action": ("coast", rw),
            "ramp_up_sp": ("0", rw), "ramp_down_sp": ("0", rw)})
        self.travel, self.max_speed = travel, max_speed
        self.set_points = {"position_sp": 0, "speed_sp": 0, "time_sp": 0}
        self.position = self.speed = self.speed_sp = self.target = self.until = 0.0
        self.running: str | None = None  # "to", "forever" or "timed"
        self.stop_action, self.stalled = "coast", False
        self.published: tuple[int, int, str] = (0, 0, "")

    @property
    def state(self) -> str:
        if self.running:
            return "running stalled" if self.stalled else "running"
        return "holding" if self.stop_action == "hold" else ""

    def take_command(self, now: float) -> None:
        command = _known(self.files.take("command"), COMMANDS)
        if command is None:
            return
        for name in self.set_points:
            value = self.files.take(name)
            if value.lstrip("-").isdigit():
                self.set_points[name] = int(value)
        self.stop_action = _known(self.files.take("stop_action"), ("coast", "brake", "hold")) or self.stop_action
        speed = max(-self.max_speed, min(self.max_speed, self.set_points["speed_sp"]))
        self.stalled = False
        if command in ("run-to-abs-pos", "run-to-rel-pos"):
            base = 0.0 if command == "run-to-abs-pos" else self.position
            self.running, self.target, self.speed_sp = "to", base + self.set_points["position_sp"], abs(speed)
        elif command in ("run-forever", "run-timed"):
            self.running, self.speed_sp = command[4:], speed
            self.until = now + self.set_points["time_sp"] / 1000
        elif command == "stop":
            self.running = None
        elif command == "reset":
            self.running, self.position, self.stop_action = None, 0.0, "coast"
            self.set_points = dict.fromkeys(self.set_points, 0)

    def step(self, dt: float, now: float) -> None:
        if not self.running:
            self.speed = 0.0
            return
        arrived = False
        if self.running == "to":
            left = self.target - self.position
            wanted = math.copysign(min(abs(left), self.speed_sp * dt), left)
            arrived = abs(wanted) >= abs(left) - 1e-9
        elif self.running == "timed":
            left = max(0.0, self.until - now)
            wanted, arrived = self.speed_sp * min(dt, left), left <= dt
        else:
            wanted = self.speed_sp * dt
        turned = self.travel.turn(wanted)
        self.position += turned
        self.speed = turned / dt
        self.stalled = abs(turned) < abs(wanted) - 1e-6
        if arrived and not self.stalled:
            self.running = None

    def publish(self) -> None:
        now = (round(self.position), round(self.speed), self.state)
        for name, old, new in zip(("position", "speed", "state"), self.published, now, strict=True):
            if old != new:
                self.files.write(name, new)
        self.published = now


class FakeDisplay(Display):  # type: ignore[misc]  # ev3dev2 has no type hints
    """The brick's 178 × 128 screen: ev3dev2's own drawing, saved to ``png`` on each ``update()``
    instead of going to a framebuffer. ``lines`` holds the text of the last update."""

    def __init__(self, png: Path) -> None:  # no FbMem.__init__: there is no framebuffer to open
        self.platform, self.desc = "ev3", "Display"
        self.var_info = types.SimpleNamespace(xres=178, yres=128, bits_per_pixel=1)
        self._img = Image.new("1", (178, 128), "white")
        self._draw = ImageDraw.Draw(self._img)
        self.png = png
        self.lines: list[str] = []
        self._pending: list[str] = []

    def clear(self) -> None:
        super().clear()
        self._pending = []

    def text_pixels(self, text: str, clear_screen: bool = True, x: int = 0, y: int = 0, text_color: str = "black",
                    font: Any = None) -> None:
        if clear_screen:
            self._pending = []
        self._pending.append(text)
        super().text_pixels(text, clear_screen, x, y, text_color, font)

    def update(self) -> None:
        partial = self.png.with_suffix(".part")
        self._img.save(partial, format="PNG")
        os.replace(partial, self.png)
        self.lines = list(self._pending)


class FakeButtons:
    """The brick's six buttons, as ev3dev2's ``Button`` reports them; the test holds them down."""

    def __init__(self) -> None:
        self.held: set[str] = set()

    @property
    def buttons_pressed(self) -> list[str]:
        return sorted(self.held)


class FakeSound:
    """The brick's speaker: counts the beeps."""

    def __init__(self) -> None:
        self.beeps = 0

    def beep(self, args: str = "", play_type: int = 0) -> None:
        self.beeps += 1


class FakeEv3:
    """The seed's robot on ``paper``, built as ``config`` says, for the agent to drive.

    Use it as a context manager; :meth:`start_agent` serves the agent on a free local port. The
    carriage starts ``start_mm`` from the home corner and the pen ``pen_start_deg`` below its top;
    the pen touches the paper ``pen_contact_deg`` below the top. :meth:`jam` puts something in an
    axis's way. ``fast_forward``: see the module's description (not for a test that races a
    real-time action, such as a stop sent from another connection, against the physics)."""

    def __init__(self, config: Ev3Config | None = None, paper: Paper | None = None, *,
                 reflectance: Reflectance | None = None, time_scale: float = 50.0, tick_s: float = 0.001,
                 start_mm: Point = (60.0, 40.0), pen_start_deg: float = 8.0, pen_contact_deg: float = 20.0,
                 fast_forward: bool = False) -> None:
        self.config = config = config or Ev3Config()
        self.machine, self.paper = config.machine(), paper or Paper(Sheet(3, 3))
        self.reflectance = reflectance or Reflectance()
        self.index = InkIndex(self.paper, self.reflectance.spot_mm)
        self.tick_s, self.dt, self.pen_contact_deg = tick_s, tick_s * time_scale, pen_contact_deg
        self.folder = Path(tempfile.mkdtemp(prefix="noughts-ev3-"))
        root, (x_per, y_per) = self.folder / "sys" / "class", config.deg_per_mm
        self.axes = {
            "x": _Motor(root / "tacho-motor" / "motor0", config.x_motor,
                        _Travel(config.x_motor, 1 / x_per, start_mm[0], 0.0, config.travel_mm[0] + 3)),
            "y": _Motor(root / "tacho-motor" / "motor1", config.y_motor,
                        _Travel(config.y_motor, 1 / y_per, start_mm[1], 0.0, config.travel_mm[1] + 3)),
            "pen": _Motor(root / "tacho-motor" / "motor2", config.pen_motor,
                          _Travel(config.pen_motor, 1.0, pen_start_deg, 0.0, 90.0))}
        self.colour = _Attributes(root / "lego-sensor" / "sensor0",
                                  _sensor(config.colour_port, "lego-ev3-color", COLOUR_MODES, "pct"))
        self.touch = _Attributes(root / "lego-sensor" / "sensor1",
                                 _sensor(config.touch_port, "lego-ev3-touch", ("TOUCH",), "none"))
        self.root, self.buttons, self.sound = root, FakeButtons(), FakeSound()
        self.display = FakeDisplay(self.folder / "screen.png")
        self.now, self.running, self.tick = 0.0, False, threading.Condition()
        self.fast_forward = fast_forward
        self._sleepers: list[float] = []  # the physics times the callers of sleep() wake at
        self._events: list[tuple[float, frozenset[str], bool]] = []  # when, what, pressed or released
        self._stroke: list[Point] = []
        self._reading: tuple[float, float, int] | None = None
        self._read_at = -1.0
        self._thread: threading.Thread | None = None
        self._server: Any = None
        self._saved_root = ev3dev2.Device.DEVICE_ROOT_PATH

    # -- running ------------------------------------------------------------------------------------
    def __enter__(self) -> FakeEv3:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        ev3dev2.Device.DEVICE_ROOT_PATH = str(self.root)
        self.running = True
        self._thread = threading.Thread(target=self._run, name="fake-ev3-physics", daemon=True)
        self._thread.start()

    def start_agent(self) -> int:
        """Serve the agent (the real one, with this brick's clock, buttons, screen and speaker) on a
        free port of 127.0.0.1 in a thread; the port."""
        # The fake has its own buttons, so ev3dev2's warning that evdev is missing does not apply here.
        logging.getLogger("ev3dev2.button").setLevel(logging.ERROR)
        from noughts.robot.backends import ev3_agent

        agent = ev3_agent.Agent(clock=self, buttons=self.buttons, display=self.display, sound=self.sound)
        self._server = ev3_agent.serve(agent, "127.0.0.1", 0)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                         name="fake-ev3-agent", daemon=True).start()
        return int(self._server.server_address[1])

    def stop_agent(self) -> None:
        """The agent goes away: its server stops and every connection to it is closed."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def close(self) -> None:
        self.stop_agent()
        with self.tick:
            self.running = False
            self.tick.notify_all()
        if self._thread is not None:
            self._thread.join()
        ev3dev2.Device.DEVICE_ROOT_PATH = self._saved_root
        for files in [motor.files for motor in self.axes.values()] + [self.colour, self.touch]:
            files.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- what the agent and the test do ---------------------------------------------------------------
    def time(self) -> float:
        """Physics time, in seconds: the agent's clock."""
        return self.now

    def sleep(self, seconds: float) -> None:
        """Wait until the physics has run ``seconds`` further."""
        with self.tick:
            until = self.now + seconds
            self._sleepers.append(until)
            try:
                while self.now < until and self.running:
                    self.tick.wait(0.5)
            finally:
                self._sleepers.remove(until)
                self.tick.notify_all()  # the physics may be waiting for this sleeper to wake

    @property
    def carriage_mm(self) -> Point:
        """The pen's place in machine millimetres from the home corner."""
        return self.axes["x"].travel.at, self.axes["y"].travel.at

    @property
    def pen_depth(self) -> float:
        """Degrees below the pen's top stop."""
        return self.axes["pen"].travel.at

    def jam(self, axis: str, at_mm: float) -> None:
        """Something in the way: ``axis`` ("x" or "y") cannot pass ``at_mm`` (machine millimetres)."""
        with self.tick:
            self.axes[axis].travel.jam(at_mm)

    def clear_jams(self) -> None:
        with self.tick:
            for motor in self.axes.values():
                motor.travel.jams.clear()

    def press(self, *buttons: str, after_s: float = 0.0, hold_s: float | None = None) -> None:
        """Press brick buttons and the touch sensor (``"touch"``) ``after_s`` seconds of physics time
        from now; release them after ``hold_s`` if given."""
        with self.tick:
            if after_s > 0:
                self._events.append((self.now + after_s, frozenset(buttons), True))
            else:
                self._press(frozenset(buttons), True)
            if hold_s is not None:
                self._events.append((self.now + after_s + hold_s, frozenset(buttons), False))

    def release(self, *buttons: str) -> None:
        with self.tick:
            self._press(frozenset(buttons), False)

    def _press(self, buttons: frozenset[str], down: bool) -> None:
        held = buttons - {"touch"}
        self.buttons.held = self.buttons.held | held if down else self.buttons.held - held
        if "touch" in buttons:
            self.touch.write("value0", int(down))

    # -- physics ------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self.tick:
                if not self.running:
                    return
                if self.fast_forward and self._sleepers and min(self._sleepers) <= self.now:
                    self.tick.wait(self.tick_s)  # a sleeper whose time has come wakes first
                    continue
                # Only while every thread on this clock sleeps: one that is awake gets a tick of real time to act.
                hurry = self.fast_forward and bool(self._sleepers)
            if not hurry:
                time.sleep(self.tick_s)
            with self.tick:
                if not self.running:
                    return
                self._step()
                self.now += self.dt
                self.tick.notify_all()

    def _step(self) -> None:
        for event in [e for e in self._events if e[0] <= self.now]:
            self._events.remove(event)
            self._press(event[1], event[2])
        for motor in self.axes.values():
            motor.take_command(self.now)
            motor.step(self.dt, self.now)
        self._ink()
        self._light()
        for motor in self.axes.values():
            motor.publish()

    def _sheet_point(self, machine: Point) -> Point:
        ox, oy = self.machine.sheet_origin
        return machine[0] - ox, (machine[1] - oy) if self.machine.y_down else (oy - machine[1])

    def _ink(self) -> None:
        """The pen's trace while it touches the paper, as straight runs between its turns."""
        here = self._sheet_point(self.carriage_mm)
        if self.pen_depth >= self.pen_contact_deg:
            stroke = self._stroke
            if stroke and math.dist(stroke[-1], here) < 1e-6:
                return
            if len(stroke) >= 2 and _between(stroke[-2], stroke[-1], here):
                stroke[-1] = here
            else:
                stroke.append(here)
        elif self._stroke:
            self.paper.draw(self._stroke, by="robot")
            self._stroke = []

    def _light(self) -> None:
        """The colour sensor's value: the paper under it when the carriage rests, and every 0.1 s on the move."""
        mode = self.colour.read("mode")
        known = _known(mode, COLOUR_MODES) or COLOUR_MODES[0]
        if mode != known:
            self.colour.write("mode", known)
        if known != "COL-REFLECT":
            self.colour.write("value0", 4 if known == "COL-AMBIENT" else 0)
            self._reading = None
            return
        x, y = self.carriage_mm
        dx, dy = self.config.sensor_offset_mm
        spot = self._sheet_point((x + dx, y + dy))
        key = (round(spot[0], 2), round(spot[1], 2), len(self.paper.ink))
        moving = self.axes["x"].running or self.axes["y"].running
        if key != self._reading and (not moving or self.now - self._read_at >= 0.1):
            self.colour.write("value0", self.reflectance.percent(self.index, spot))
            self._reading, self._read_at = key, self.now


def _sensor(port: str, driver: str, modes: Sequence[str], units: str) -> dict[str, tuple[str, int]]:
    ro = 0o644
    return {"address": (f"ev3-ports:{port}", ro), "driver_name": (driver, ro), "mode": (modes[0], 0o664),
            "modes": (" ".join(modes), ro), "num_values": ("1", ro), "decimals": ("0", ro),
            "units": (units, ro), "value0": ("0", ro), "command": ("", 0o620), "commands": ("", ro)}


def _between(a: Point, b: Point, c: Point) -> bool:
    """Whether ``b`` lies on the straight run from ``a`` to ``c`` (so it can be dropped)."""
    cross = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    length = math.dist(a, c)
    dot = (b[0] - a[0]) * (c[0] - a[0]) + (b[1] - a[1]) * (c[1] - a[1])
    return length > 0 and abs(cross) / length < 0.02 and 0 <= dot <= length * length
