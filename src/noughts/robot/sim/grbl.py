"""A GRBL 1.1 controller, simulated from GRBL's documented interface (the wiki's *Interface*,
*Commands* and *Configuration* pages and its lists of error and alarm codes) and made to answer as
GRBL 1.1h's own source does where the two meet (gnea/grbl: named at each place below); no GRBL
source was copied. The ``grbl`` backend is tested against it, and anyone can try that backend without a plotter.

:class:`GrblSimulator` is pure: bytes in, bytes out, on simulated time. It models

* the banner, ``ok`` / ``error:N`` for every line, and the push messages ``ALARM:N`` and ``[MSG:…]``;
* the 128-byte serial receive buffer (bytes that do not fit are lost; ``max_rx_fill`` records the
  most ever waiting, lost ones included) and the 15-block planner: a line's ``ok`` waits until its
  motion fits, and what GRBL runs in step with motion (spindle changes, ``G4``, ``$H``) answers once
  the planner has drained;
* motion on simulated time, without acceleration: G0 at the ``$110``–``$112`` rates, G1/G2/G3 at F
  (arcs cut into chords within ``$12``), G4 dwells. Time moves by the serial line's byte time for
  each byte received, by ``poll_seconds`` for each ``?`` (as if the host polled at 5 Hz), and by
  :meth:`~GrblSimulator.advance`; never by the wall clock;
* the real-time ``?`` ``!`` ``~`` and Ctrl-X (a reset while moving is ``ALARM:3``, locked until ``$X``
  or ``$H``); ``$``, ``$$``, ``$I``, ``$N=V``, ``$H`` and ``$X``;
* stock GRBL's machine space: every axis from ``-$130``/``-$131``/``-$132`` to 0 (system.c,
  ``system_check_travel_limits`` without HOMING_FORCE_SET_ORIGIN). ``$H`` leaves each axis ``$27``
  inside its switch: at ``-$27``, or ``-$13x + $27`` where ``$23`` homes it towards minus (limits.c,
  ``limits_go_home``). Soft limits (``$20``, only with ``$22=1``; ``$22=0`` turns them off: settings.c,
  ``settings_store_global_setting``) check all three axes. ``ALARM:2``, like a hard limit's ``ALARM:1``,
  is followed by ``[MSG:Reset to continue]`` and only a reset is heard then (protocol.c,
  ``protocol_exec_rt_system``); after it the line that went too far is answered ``ok`` (mc_line bails
  out, gc_execute_line returns ok), then the banner and ``[MSG:'$H'|'$X' to unlock]``, the alarm kept
  (main.c keeps the state over the reset). ``resets_lost`` Ctrl-X bytes that arrive while the alarm is
  still being raised are lost, as GRBL loses a reset that its own ``mc_reset`` has flagged already;
* work coordinates G54–G59 (kept over resets, as GRBL keeps them in EEPROM), set by ``G10 L2`` and
  ``G10 L20`` (gcode.c); programs move in them, status reports say MPos;
* G20/G21, G90/G91, G0–G4, G10, G17, G54–G59, G94, M0–M5, M30, F, S and comments; other G-code GRBL
  knows gets ``error:20``; ``$$`` lists the settings as report.c's ``report_grbl_settings`` does;
* the pen: a servo on the spindle PWM (down at ``M3 S`` of at least ``servo_threshold``, up at ``M5``)
  or the Z axis (down below the paper: ``z_pen_lift`` under Z's home, or Z 0 on a machine that does not
  home). Pen-down moves land on a :class:`~noughts.sheet.paper.Paper`;
* faults for tests: ``faults={line_number: "garbage" | "drop" | "silence" | "error:N" | "alarm:N"}``.

:func:`~noughts.robot.sim.link.serve_pty` and :func:`~noughts.robot.sim.link.serve_socket` (here too)
put a simulator behind a pseudo-terminal or a TCP port, so pyserial reaches it by a device path or a
``socket://`` URL.

>>> sim = GrblSimulator()
>>> sim.feed(b"\\x18").split(b"\\r\\n")[1]
b"Grbl 1.1h ['$' for help]"
>>> sim.feed(b"G1 X10 F600\\n"), sim.feed(b"?")
(b'ok\\r\\n', b'<Run|MPos:2.001,0.000,0.000|FS:600,0>\\r\\n')
>>> _ = sim.advance(1.0); sim.feed(b"?")
b'<Idle|MPos:10.000,0.000,0.000|FS:0,0>\\r\\n'
>>> sim.feed(b"G1 X\\n"), sim.feed(b"G28\\n")
(b'error:2\\r\\n', b'error:20\\r\\n')
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from noughts.robot.sim.link import SimulatorLink, serve_pty, serve_socket
from noughts.sheet.geometry import Machine, Point, Sheet
from noughts.sheet.paper import Paper

__all__ = ["PLANNER_BLOCKS", "RX_BUFFER_BYTES", "GrblSimulator", "SimulatorLink", "serve_pty", "serve_socket"]

RX_BUFFER_BYTES = 128
PLANNER_BLOCKS = 15
LINE_MAX = 80  # GRBL's line buffer; longer lines are refused with error:11
STATUS, HOLD, RESUME, RESET = ord("?"), ord("!"), ord("~"), 0x18
GARBAGE = b"\xfe\x00\x83\xff%*~noise\r\n"

DEFAULT_SETTINGS: dict[int, float] = {  # defaults.h's DEFAULTS_GENERIC, with a plotter's rates and travel
    0: 10, 1: 25, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0, 10: 1, 11: 0.01, 12: 0.002, 13: 0, 20: 0, 21: 0, 22: 0, 23: 0,
    24: 25.0, 25: 1000.0, 26: 250, 27: 1.0, 30: 1000, 31: 0, 32: 0, 100: 250.0, 101: 250.0, 102: 250.0,
    110: 4800.0, 111: 4800.0, 112: 600.0, 120: 10.0, 121: 10.0, 122: 10.0, 130: 200.0, 131: 200.0, 132: 50.0,
}
WHOLE_SETTINGS = {0, 1, 2, 3, 4, 5, 6, 10, 13, 20, 21, 22, 23, 26, 30, 31, 32}  # printed without decimals
G_GROUPS = {0: "motion", 1: "motion", 2: "motion", 3: "motion", 4: "dwell", 10: "non-modal", 17: "plane",
            20: "units", 21: "units", 54: "coordinates", 55: "coordinates", 56: "coordinates", 57: "coordinates",
            58: "coordinates", 59: "coordinates", 90: "distance", 91: "distance", 94: "feed mode"}
M_GROUPS = {0: "stop", 1: "stop", 2: "stop", 30: "stop", 3: "spindle", 4: "spindle", 5: "spindle"}
VALUE_LETTERS = "FIJKLNPRSXYZ"
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)")

Vector = tuple[float, float, float]


class _Refusal(Exception):
    """A line GRBL answers with ``error:N``."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _SoftLimit(Exception):
    """A target beyond the travel: ``ALARM:2``."""


@dataclass
class _Block:
    """One entry of the planner: a straight move (or a pause where ``origin == target``) taking
    ``seconds``, then ``then`` (a spindle change, the end of homing)."""

    origin: Vector
    target: Vector
    seconds: float
    feed: float = 0.0
    then: Callable[[], None] | None = None

    @property
    def moves(self) -> bool:
        return self.origin != self.target


@dataclass
class _Line:
    """A parsed line whose blocks are still going into the planner; ``sync`` lines answer once it drains."""

    blocks: deque[_Block]
    sync: bool
    waited: bool = False


@dataclass
class GrblSimulator:
    """A GRBL 1.1 controller with a pen. ``machine`` says where the sheet lies in the machine's
    space (as the host's :class:`~noughts.sheet.geometry.Machine` does); ink lands on ``paper``."""

    paper: Paper = field(default_factory=lambda: Paper(Sheet(3, 3)))
    machine: Machine = field(default_factory=Machine.plotter)
    pen: str = "servo"  # or "z"
    servo_threshold: float = 500.0
    settings: dict[int, float] = field(default_factory=dict)
    version: str = "1.1h"
    faults: Mapping[int, str] = field(default_factory=dict)
    baud: int = 115200
    poll_seconds: float = 0.2
    on_line: Callable[[str], None] | None = None  # told of each line received (logs, tests)
    z_pen_lift: float = 2.0  # how far above the paper homing leaves a Z pen
    resets_lost: int = 0  # Ctrl-X bytes lost after a limit alarm (a host quicker than the alarm's reporting)

    def __post_init__(self) -> None:
        self.settings = {**DEFAULT_SETTINGS, **self.settings}
        self.position: Vector = (0.0, 0.0, 0.0)
        self.clock = 0.0  # simulated seconds
        self.lines: list[str] = []  # every line received, in order
        self.max_rx_fill = 0
        self.lost_bytes = 0
        self.planner_waits = 0  # lines whose ok waited for room in the planner
        self.sync_waits = 0  # lines whose ok waited for the planner to drain
        self.alarm: int | None = None  # the last alarm raised
        self.locked = False
        self.dropped = False  # the link should go away (fault "drop"); the transports close it
        self._silent = False
        self._critical = False  # after a hard-limit alarm only a reset is heard
        self._ok_after_reset = False  # the line that raised a soft limit is answered once reset
        self.work_offsets: dict[int, list[float]] = {system: [0.0, 0.0, 0.0] for system in range(1, 7)}  # G54–G59
        self._held = False
        self._homing = False
        self._rx = bytearray()
        self._lost_now = 0
        self._owed = 0.0  # serial-line time not yet run
        self._planner: deque[_Block] = deque()
        self._elapsed = 0.0  # into the planner's first block
        self._line: _Line | None = None
        self._out = bytearray()
        self._stroke: list[Point] = []
        self._spindle_on = False
        self._spindle_s = 0.0
        self._reset_modes()
        self.locked = bool(self.settings[22])  # with homing enabled GRBL starts locked until $H or $X
        self._start()

    # --- what a test looks at ---------------------------------------------------------------
    @property
    def pen_down(self) -> bool:
        if self.pen == "z":
            return self.position[2] < self._paper_z()
        return self._spindle_on and self._spindle_s >= self.servo_threshold

    @property
    def state(self) -> str:
        if self._homing:
            return "Home"
        if self.locked:
            return "Alarm"
        if self._held:
            return "Hold:0"
        return "Run" if self._planner or (self._line and self._line.blocks) else "Idle"

    # --- bytes in, bytes out ----------------------------------------------------------------
    def feed(self, data: bytes) -> bytes:
        """Receive ``data`` from the host; return what GRBL says meanwhile."""
        for byte in data:
            if self._silent or self.dropped:
                break
            self._owed += 10 / self.baud  # a start bit, eight data bits and a stop bit
            if byte in (STATUS, HOLD, RESUME, RESET):
                self._catch_up()
                self._real_time(byte)
            elif not self._critical:
                if len(self._rx) < RX_BUFFER_BYTES:
                    self._rx.append(byte)
                else:
                    self.lost_bytes += 1
                    self._lost_now += 1
                self.max_rx_fill = max(self.max_rx_fill, len(self._rx) + self._lost_now)
                if byte in (10, 13):
                    self._catch_up()
                    self._service()
        return self.take_output()

    def advance(self, seconds: float) -> bytes:
        """Let ``seconds`` of simulated time pass; return what GRBL says meanwhile."""
        self._run(seconds)
        return self.take_output()

    def take_output(self) -> bytes:
        out, self._out = bytes(self._out), bytearray()
        return b"" if self._silent else out

    def _say(self, text: str) -> None:
        self._out += text.encode("ascii") + b"\r\n"

    # --- real-time commands -----------------------------------------------------------------
    def _real_time(self, byte: int) -> None:
        if byte == STATUS:
            self._run(self.poll_seconds)
            self._say(self._status())
        elif byte == HOLD and self.state == "Run":
            self._held = True
        elif byte == RESUME:
            self._held = False
            self._run(0.0)
        elif byte == RESET:
            if self._critical and self.resets_lost:
                self.resets_lost -= 1
                return
            if self._critical:
                self._critical = False
                if self._ok_after_reset:
                    self._say("ok")
                    self._ok_after_reset = False
            elif self._homing:
                self._raise_alarm(6)  # homing fail: reset during the cycle
            elif any(block.moves for block in self._planner) and not self._held:
                self._raise_alarm(3)  # reset while in motion: position may be lost
            self._restart()

    def _status(self) -> str:
        x, y, z = self._where()
        moving = self._planner and self._planner[0].moves and not self._held
        feed = round(self._planner[0].feed) if moving else 0
        spindle = round(self._spindle_s) if self._spindle_on else 0
        return f"<{self.state}|MPos:{x:.3f},{y:.3f},{z:.3f}|FS:{feed},{spindle}>"

    # --- resets and alarms ------------------------------------------------------------------
    def _start(self) -> None:
        self._out += f"\r\nGrbl {self.version} ['$' for help]\r\n".encode("ascii")
        if self.locked:
            self._say("[MSG:'$H'|'$X' to unlock]")

    def _restart(self) -> None:
        """What follows a reset: buffers emptied, spindle off, modes to their defaults, the banner."""
        self._halt()
        self._rx.clear()
        self._lost_now = 0
        self._line = None
        self._held = self._homing = False
        self._set_spindle(False, self._spindle_s)
        self._reset_modes()
        self._start()

    def _raise_alarm(self, code: int) -> None:
        self._halt()
        self.alarm, self.locked = code, True
        self._say(f"ALARM:{code}")
        if code in (1, 2):  # hard and soft limits: nothing but a reset is heard, so a stream cannot go on
            self._say("[MSG:Reset to continue]")
            self._critical = True
            self._set_spindle(False, self._spindle_s)

    def _halt(self) -> None:
        """Stop where the machine is now, keeping the ink drawn so far."""
        self._move_to(self._where())
        self._planner.clear()
        self._elapsed = 0.0
        self._line = None

    def _reset_modes(self) -> None:
        self._absolute, self._inches, self._motion, self._feed = True, False, 0, 0.0
        self._coordinates = 1  # G54 (gc_init)
        self._spindle: tuple[bool, float] = (False, 0.0)  # as the parser has it; the planner catches up
        self._planned = self.position

    # --- the main loop: lines from the receive buffer into the planner ----------------------
    def _service(self) -> None:
        while not (self._critical or self._silent or self.dropped):
            if self._line is not None:
                if not self._fill_planner(self._line):
                    return
                continue
            end = next((i for i, byte in enumerate(self._rx) if byte in (10, 13)), None)
            if end is None:
                return
            raw = self._rx[:end].decode("latin-1")
            del self._rx[:end + 1]
            self._lost_now = 0
            self._execute(raw)

    def _fill_planner(self, line: _Line) -> bool:
        """Move the line's blocks into the planner; answer ``ok`` once they are all in (and, for a
        sync line, done). False while it must wait."""
        while line.blocks and len(self._planner) < PLANNER_BLOCKS:
            self._planner.append(line.blocks.popleft())
        if line.blocks:
            line.waited = True
            return False
        if line.sync and self._planner:
            line.waited = True
            return False
        if line.waited:
            self.sync_waits += line.sync
            self.planner_waits += not line.sync
        self._line = None
        self._say("ok")
        return True

    def _execute(self, raw: str) -> None:
        self.lines.append(raw)
        if self.on_line is not None:
            self.on_line(raw)
        fault = self.faults.get(len(self.lines), "")
        if fault == "garbage":
            self._out += GARBAGE
        elif fault in ("drop", "silence"):
            self.dropped, self._silent = fault == "drop", fault == "silence"
            return
        elif fault.startswith(("error:", "alarm:")):
            code = int(fault.partition(":")[2])
            if fault.startswith("error"):
                self._say(f"error:{code}")
            else:
                self._raise_alarm(code)
                self._ok_after_reset = code == 2  # as a soft limit raised by this line
            return
        text = _clean(raw)
        try:
            if len(raw) >= LINE_MAX:
                raise _Refusal(11)
            blocks, sync = self._system(text) if text.startswith("$") else self._gcode(text)
        except _Refusal as refusal:
            self._say(f"error:{refusal.code}")
            return
        except _SoftLimit:
            self._raise_alarm(2)
            self._ok_after_reset = True
            return
        self._line = _Line(deque(blocks), sync)

    # --- $ commands -------------------------------------------------------------------------
    def _system(self, text: str) -> tuple[list[_Block], bool]:
        if text == "$":
            self._say("[HLP:$$ $# $G $I $N $x=val $Nx=line $J=line $SLP $C $X $H ~ ! ? ctrl-x]")
            return [], False
        if self.state not in ("Idle", "Alarm"):
            raise _Refusal(8)
        if text == "$$":
            for number, value in sorted(self.settings.items()):
                self._say(f"${number}={value:.0f}" if number in WHOLE_SETTINGS else f"${number}={value:.3f}")
        elif text == "$I":
            self._say(f"[VER:{self.version}.noughts-sim:]")
            self._say(f"[OPT:V,{PLANNER_BLOCKS},{RX_BUFFER_BYTES}]")
        elif text == "$X":
            if self.locked:
                self.locked = False
                self._say("[MSG:Caution: Unlocked]")
        elif text == "$H":
            return self._home(), True
        elif match := re.fullmatch(r"\$(\d+)=(.*)", text):
            self._set(int(match[1]), match[2])
        else:
            raise _Refusal(3)
        return [], False

    def _set(self, number: int, text: str) -> None:
        if number not in self.settings:
            raise _Refusal(3)
        if not NUMBER.fullmatch(text):
            raise _Refusal(2)
        value = float(text)
        if value < 0:
            raise _Refusal(4)
        if number == 20 and value and not self.settings[22]:
            raise _Refusal(10)  # soft limits need homing
        if number == 22 and not value:
            self.settings[20] = 0  # settings.c: homing off forces soft limits off
        self.settings[number] = value

    def _home(self) -> list[_Block]:
        if not self.settings[22]:
            raise _Refusal(5)
        self._homing = True

        def homed() -> None:
            self._homing = self.locked = False

        x, y, z = (self._home_of(axis) for axis in range(3))
        home = (x, y, z)
        seconds = math.dist(self._planned, home) / (self.settings[25] / 60)
        block = _Block(self._planned, home, seconds, self.settings[25], then=homed)
        self._planned = home
        return [block]

    def _paper_z(self) -> float:
        """The paper's height: ``z_pen_lift`` below where homing leaves Z, or 0 on a machine that does not home."""
        return self._home_of(2) - self.z_pen_lift if self.settings[22] else 0.0

    def _home_of(self, axis: int) -> float:
        """Where homing leaves ``axis``: ``$27`` inside the switch at 0, or at ``-$13x`` if ``$23`` homes it
        towards minus (limits.c, limits_go_home, without HOMING_FORCE_SET_ORIGIN)."""
        pulloff = self.settings[27]
        return -self.settings[130 + axis] + pulloff if int(self.settings[23]) >> axis & 1 else -pulloff

    @property
    def work_position(self) -> Vector:
        """Where the machine is in the active work coordinates (G54…), as a program names it."""
        offset = self.work_offsets[self._coordinates]
        x, y, z = (self.position[axis] - offset[axis] for axis in range(3))
        return x, y, z

    def _set_work_offsets(self, values: dict[str, float], scale: float, active: int) -> None:
        """G10 L2 (the offsets themselves) or L20 (offsets that make here read as the values), gcode.c."""
        if not values.keys() & {"X", "Y", "Z"}:
            raise _Refusal(26)
        if "L" not in values or "P" not in values:
            raise _Refusal(28)
        system, mode = int(values["P"]), values["L"]
        if system > 6:
            raise _Refusal(29)
        if mode not in (2, 20):
            raise _Refusal(20)
        offsets = self.work_offsets[system or active]
        for axis, letter in enumerate("XYZ"):
            if letter in values:
                value = values[letter] * scale
                offsets[axis] = value if mode == 2 else self._planned[axis] - value

    # --- G-code -----------------------------------------------------------------------------
    def _gcode(self, text: str) -> tuple[list[_Block], bool]:
        """The planner blocks of a G-code line, and whether it runs in step with motion. The whole
        line is checked before any of it takes effect, as GRBL does."""
        if not text:
            return [], False
        if self.locked:
            raise _Refusal(9)
        words = _words(text)
        values = {letter: value for letter, value in words if letter in VALUE_LETTERS}
        if len(values) != sum(letter in VALUE_LETTERS for letter, _ in words):
            raise _Refusal(25)  # a word repeated
        g, m = (_commands(letter, [value for word, value in words if word == letter]) for letter in "GM")
        if any(values[letter] < 0 for letter in "FSP" if letter in values):
            raise _Refusal(4)
        if "R" in values or "K" in values:
            raise _Refusal(20)  # radius arcs and other planes are not simulated
        if 10 not in g and ((4 in g) != ("P" in values) or "L" in values):
            raise _Refusal(28 if 4 in g else 36)
        inches = 20 in g or (self._inches and 21 not in g)
        scale = 25.4 if inches else 1.0
        coordinates = next((code - 53 for code in g if 54 <= code <= 59), self._coordinates)
        if 10 in g:
            if g & {0, 1, 2, 3}:
                raise _Refusal(24)  # G10 uses the axis words itself
            self._set_work_offsets(values, scale, coordinates)
            self._coordinates = coordinates
            return [], False
        offset = self.work_offsets[coordinates]
        feed = values["F"] * scale if "F" in values else self._feed
        absolute = 90 in g if g & {90, 91} else self._absolute
        motion = next(iter(g & {0, 1, 2, 3}), self._motion)
        spindle = (bool(m & {3, 4}) if m & {3, 4, 5} else self._spindle[0], values.get("S", self._spindle[1]))
        axes = {letter: values[letter] * scale for letter in "XYZ" if letter in values}
        offsets = {letter: values[letter] * scale for letter in "IJ" if letter in values}
        if offsets and motion not in (2, 3):
            raise _Refusal(36)
        start = self._planned
        points: list[Vector] = []
        if axes or offsets:
            x, y, z = ((axes[letter] + offset[i] if letter in axes else start[i]) if absolute
                       else axes.get(letter, 0.0) + start[i] for i, letter in enumerate("XYZ"))
            if motion and feed <= 0:
                raise _Refusal(22)
            if motion in (2, 3) and not offsets:
                raise _Refusal(35)
            if motion in (2, 3) and not axes.keys() & {"X", "Y"}:
                raise _Refusal(32)
            points = self._arc(start, (x, y, z), offsets, motion == 2) if motion in (2, 3) else [(x, y, z)]
            if self.settings[20] and not all(self._within_travel(point) for point in points):
                raise _SoftLimit
        self._inches, self._feed, self._absolute, self._motion = inches, feed, absolute, motion
        self._coordinates = coordinates
        blocks = []
        if spindle != self._spindle and (self._spindle[0] or spindle[0]):  # a change the spindle (the pen) feels
            blocks.append(_Block(start, start, 0.0, then=lambda: self._set_spindle(*spindle)))
        self._spindle = spindle
        if 4 in g:
            blocks.append(_Block(start, start, values["P"]))
        for point in points:
            seconds = self._seconds(self._planned, point)
            if seconds > 0:  # GRBL drops moves of no length
                blocks.append(_Block(self._planned, point, seconds, math.dist(self._planned, point) / seconds * 60))
                self._planned = point
        return blocks, any(block.then or not block.moves for block in blocks)

    def _seconds(self, start: Vector, end: Vector) -> float:
        """How long a move takes: at F (G1–G3) or flat out (G0), no axis faster than its $11x rate."""
        deltas = [abs(b - a) for a, b in zip(start, end, strict=True)]
        slowest = max(delta / (self.settings[110 + axis] / 60) for axis, delta in enumerate(deltas))
        if self._motion == 0:
            return slowest
        return max(slowest, math.hypot(*deltas) / (self._feed / 60))

    def _within_travel(self, point: Vector) -> bool:
        """Inside stock GRBL's machine space on every axis, -$13x to 0 (system.c, system_check_travel_limits)."""
        return all(-self.settings[130 + axis] - 1e-6 <= point[axis] <= 1e-6 for axis in range(3))

    def _arc(self, start: Vector, end: Vector, offsets: dict[str, float], clockwise: bool) -> list[Vector]:
        """The chords of an arc about ``start + (I, J)``, each within ``$12`` of the true curve."""
        i, j = offsets.get("I", 0.0), offsets.get("J", 0.0)
        cx, cy = start[0] + i, start[1] + j
        radius = math.hypot(i, j)
        miss = abs(radius - math.hypot(end[0] - cx, end[1] - cy))
        if miss > 0.005 and (miss > 0.5 or miss > 0.001 * radius):
            raise _Refusal(33)  # the end is not on the circle
        begin = math.atan2(start[1] - cy, start[0] - cx)
        sweep = math.atan2(end[1] - cy, end[0] - cx) - begin
        if clockwise and sweep >= -1e-7:
            sweep -= 2 * math.pi
        elif not clockwise and sweep <= 1e-7:
            sweep += 2 * math.pi
        tolerance = self.settings[12]
        chord = math.sqrt(tolerance * (2 * radius - tolerance)) if radius > tolerance else radius
        count = max(1, math.floor(abs(sweep) * radius / chord)) if chord > 0 else 1
        points = [(cx + radius * math.cos(begin + sweep * k / count), cy + radius * math.sin(begin + sweep * k / count),
                   start[2] + (end[2] - start[2]) * k / count) for k in range(1, count)]
        return [*points, end]

    # --- motion -----------------------------------------------------------------------------
    def _catch_up(self) -> None:
        owed, self._owed = self._owed, 0.0
        self._run(owed)

    def _run(self, seconds: float) -> None:
        """Let ``seconds`` pass: finish planner blocks in order, refilling it from the receive buffer."""
        while self._planner and not self._held and not self._critical:
            block = self._planner[0]
            left = block.seconds - self._elapsed
            if left > seconds:
                self._elapsed += seconds
                break
            seconds -= left
            self.clock += left
            self._planner.popleft()
            self._elapsed = 0.0
            self._move_to(block.target)
            if block.then is not None:
                block.then()
            self._service()
        self.clock += seconds

    def _where(self) -> Vector:
        """Where the machine is now, partway along the planner's first block."""
        if not self._planner or self._planner[0].seconds <= 0:
            return self.position
        block = self._planner[0]
        share = self._elapsed / block.seconds
        return (block.origin[0] + (block.target[0] - block.origin[0]) * share,
                block.origin[1] + (block.target[1] - block.origin[1]) * share,
                block.origin[2] + (block.target[2] - block.origin[2]) * share)

    def _move_to(self, point: Vector) -> None:
        was_down = self.pen_down
        self.position = point
        self._pen_moved(was_down)

    def _set_spindle(self, on: bool, speed: float) -> None:
        was_down = self.pen_down
        self._spindle_on, self._spindle_s = on, speed
        self._pen_moved(was_down)

    def _pen_moved(self, was_down: bool) -> None:
        """Ink: a pen going down starts a line, moving with it down extends it, lifting it puts it on the paper."""
        here = self._to_sheet(self.position)
        if self.pen_down:
            if not was_down:
                self._stroke = [here]
            elif self._stroke[-1] != here:
                self._stroke.append(here)
        elif was_down:
            self.paper.draw(self._stroke, by="robot")
            self._stroke = []

    def _to_sheet(self, point: Vector) -> Point:
        """A machine point on the sheet: the inverse of :meth:`Machine.to_machine`, whose travel starts at
        the low corner of GRBL's space where GRBL has one (``$22=1``), else where it was switched on."""
        x0, y0 = self.machine.sheet_origin
        if self.settings[22]:
            x0, y0 = x0 - self.settings[130], y0 - self.settings[131]
        return point[0] - x0, (point[1] - y0) if self.machine.y_down else (y0 - point[1])


def _clean(raw: str) -> str:
    """The line as GRBL reads it: upper case, without spaces or comments."""
    text = re.sub(r"\([^)]*\)?", "", raw.split(";", 1)[0])
    return "".join(text.split()).upper()


def _words(text: str) -> list[tuple[str, float]]:
    words = []
    at = 0
    while at < len(text):
        letter = text[at]
        if not "A" <= letter <= "Z":
            raise _Refusal(1)
        number = NUMBER.match(text, at + 1)
        if number is None:
            raise _Refusal(2)
        words.append((letter, float(number[0])))
        at = number.end()
    if any(letter not in VALUE_LETTERS + "GM" for letter, _ in words):
        raise _Refusal(20)
    return words


def _commands(letter: str, values: list[float]) -> set[int]:
    groups = G_GROUPS if letter == "G" else M_GROUPS
    seen: dict[str, int] = {}
    for value in values:
        if value != int(value) or int(value) not in groups:
            raise _Refusal(20)
        group = groups[int(value)]
        if group in seen:
            raise _Refusal(21)  # two commands of one modal group
        seen[group] = int(value)
    return set(seen.values())
