"""The ``grbl`` backend: G-code over a serial line (pyserial) to a pen plotter running GRBL 1.1.

The pen is a servo on the spindle's PWM output (``M3 S…`` down, ``M5`` up) or the Z axis
(:class:`GrblPen`). :func:`gcode_program` turns a plan into the program (``noughts robot preview``
prints it); :class:`GrblRobot` streams that same program with GRBL's character-counting protocol,
never more than the controller's 128-byte receive buffer unanswered, and polls ``?`` for its state.
Every point is checked against the machine's travel before anything is sent. ``error:N`` and
``ALARM:N`` come back as :class:`~noughts.sheet.geometry.RobotError` in words; a port that vanishes
or a controller that stops answering as :class:`~noughts.robot.backend.RobotDisconnected`.

The program is in noughts' machine coordinates, which GRBL's work coordinates G54 are made to be:
on connecting it reads GRBL's settings (``$$``); where GRBL homes (``$22=1``) its machine space runs
from ``-$130``/``-$131`` up to 0 (stock GRBL, system.c ``system_check_travel_limits``), so G54 puts
noughts' 0,0 at that low corner (``G10 L2 P1``) and the configured travel must fit in GRBL's; where
it does not, noughts' 0,0 is where GRBL was switched on. It homes (``$H``) only where GRBL can.

>>> from noughts.sheet.strokes import Stroke, plan_strokes
>>> plan = plan_strokes([Stroke(((10.0, 10.0), (20.0, 10.0)), "grid")], Machine.plotter())
>>> print("\\n".join(gcode_program(plan, Machine.plotter())))
G21 G90
M5
G4 P0.15
G0 X10 Y10
M3 S1000
G4 P0.15
G1 X20 Y10 F1500
M5
G4 P0.15
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from noughts.robot.backend import RobotDisconnected
from noughts.sheet.geometry import Machine, Point, RobotError
from noughts.sheet.strokes import PenPlan, Stroke

__all__ = ["ALARMS", "ERRORS", "RX_BUFFER_BYTES", "GrblPen", "GrblRobot", "gcode_program"]

RX_BUFFER_BYTES = 128  # GRBL's serial receive buffer: the most we leave unanswered
READ_SLICE = 0.05  # seconds a read waits before the deadlines are looked at again
RESET_AGAIN_SECONDS = 0.5  # after "[MSG:Reset to continue]", how long a banner may take before resetting again
NOT_HOMED = "it has not been homed yet"
SETTING = re.compile(r"\$(\d+)=(-?[\d.]+)")
BANNER = re.compile(r"Grbl (\S+) \[")
STATUS = re.compile(r"<([A-Za-z]+)[^|>]*(?:\|[MW]Pos:(-?[\d.]+),(-?[\d.]+),(-?[\d.]+))?")

ERRORS = {  # our own short words for GRBL 1.1's documented error codes
    1: "a G-code word without its letter", 2: "a number GRBL cannot read", 3: "an unknown $ command",
    4: "a negative value where only positive ones make sense", 5: "homing is not enabled ($22=0)",
    6: "a step pulse shorter than 3 µs", 7: "its settings memory could not be read, so it went back to defaults",
    8: "a $ command while the machine was busy", 9: "G-code while locked by an alarm (home or unlock first)",
    10: "soft limits without homing enabled", 11: "a line longer than GRBL accepts",
    12: "a step rate above what it can do", 13: "the safety door is open", 14: "a startup line too long to store",
    15: "a jog beyond the machine's travel", 16: "an invalid jog command", 17: "laser mode without PWM",
    20: "an unsupported G-code command", 21: "two commands of the same modal group in one line",
    22: "no feed rate set", 23: "a command that needs a whole number", 24: "two commands that both need axis words",
    25: "a word repeated in one line", 26: "a command without the axis words it needs",
    27: "an invalid line number", 28: "a command without the value it needs", 29: "an unsupported work system",
    30: "G53 outside G0 and G1", 31: "axis words with nothing to use them",
    32: "an arc without an end point in its plane",
    33: "a move to an invalid target (such as an arc whose end is not on its circle)", 34: "an invalid arc radius",
    35: "an arc without its centre offset (I, J)", 36: "value words with nothing to use them",
    37: "a tool offset on the wrong axis", 38: "a tool number above the maximum",
}
ALARMS = {
    1: "a limit switch was hit (hard limit); the position is lost, so home the machine again",
    2: "a move went beyond the machine's travel (soft limit, $130/$131); the position is kept",
    3: "reset while moving; the position may be lost, so home the machine again",
    4: "the probe was not in its expected state before probing", 5: "the probe touched nothing within its travel",
    6: "homing was reset before it finished", 7: "the safety door opened while homing",
    8: "homing could not pull off the limit switch (raise the pull-off, $27)",
    9: "homing found no limit switch (check the switches and the travel, $130-$132)",
}


@dataclass(frozen=True)
class GrblPen:
    """How the pen goes down and up: ``lift="servo"`` (a servo on the spindle PWM: ``M3 S<down_s>``
    down, ``M5`` up) or ``lift="z"`` (the Z axis: ``z_down``, below 0, and ``z_up``)."""

    lift: str = "servo"
    down_s: int = 1000
    z_down: float = -1.0
    z_up: float = 2.0

    def __post_init__(self) -> None:
        if self.lift not in ("servo", "z"):
            raise RobotError(f"the pen is lifted by a servo or by Z, not {self.lift!r}")
        if self.lift == "z" and not self.z_down < 0 <= self.z_up:
            raise RobotError(f"a Z pen goes down below Z 0 and up at or above it, "
                             f"not {self.z_down:g} and {self.z_up:g}")

    def down(self) -> str:
        return f"M3 S{self.down_s}" if self.lift == "servo" else f"G0 Z{_number(self.z_down)}"

    def up(self) -> str:
        return "M5" if self.lift == "servo" else f"G0 Z{_number(self.z_up)}"


def _number(value: float) -> str:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _xy(point: Point) -> str:
    return f"X{_number(point[0])} Y{_number(point[1])}"


def gcode_program(plan: PenPlan, machine: Machine, pen: GrblPen = GrblPen()) -> list[str]:
    """The G-code that draws ``plan`` on ``machine``, a line per block (no line ends). Every point is
    checked against the travel first: a point outside it raises :class:`RobotError` and nothing is made."""
    dwell = f"G4 P{_number(machine.pen_dwell)}"
    feed = f" F{_number(machine.draw_speed * 60)}"
    program = ["G21 G90", pen.up(), dwell]
    for stroke in plan.strokes:
        points = [machine.to_machine(point) for point in stroke.points]
        program += [f"G0 {_xy(points[0])}", pen.down(), dwell]
        if machine.arcs and stroke.circle is not None:
            program.append(_circle(stroke, points, machine) + feed)
        else:
            moves = [point for before, point in itertools.pairwise(points) if _xy(point) != _xy(before)]
            program += [f"G1 {_xy(point)}" + (feed if i == 0 else "") for i, point in enumerate(moves)]
        program += [pen.up(), dwell]
    if plan.strokes and plan.finish != plan.strokes[-1].end:
        program.append(f"G0 {_xy(machine.to_machine(plan.finish))}")
    return program


def _circle(stroke: Stroke, points: list[Point], machine: Machine) -> str:
    """A whole circle as one arc, from the stroke's start back to it, turning the way the stroke turns."""
    assert stroke.circle is not None
    (cx, cy), radius = stroke.circle.centre, stroke.circle.radius
    for x, y in ((cx - radius, cy), (cx + radius, cy), (cx, cy - radius), (cx, cy + radius)):
        machine.to_machine((x, y))  # the arc's extremes, which the polyline may cut inside
    centre = machine.to_machine(stroke.circle.centre)
    area = sum(a[0] * b[1] - b[0] * a[1] for a, b in itertools.pairwise(points))
    start = points[0]
    return (f"{'G3' if area > 0 else 'G2'} {_xy(start)} "
            f"I{_number(centre[0] - start[0])} J{_number(centre[1] - start[1])}")


def _open_port(port: str, baud: int) -> Any:
    try:
        serial: Any = importlib.import_module("serial")
    except ImportError:
        raise RobotError("the GRBL backend needs pyserial: pip install 'noughts[robot]'") from None
    try:
        return serial.serial_for_url(port, baudrate=baud, timeout=READ_SLICE, write_timeout=2)
    except (serial.SerialException, OSError, ValueError) as error:
        raise RobotDisconnected(f"cannot open the GRBL controller on {port}: {error}") from None


class _Alarm(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class GrblRobot:
    """A GRBL 1.1 pen plotter on ``port`` (a device such as ``/dev/ttyUSB0`` or any pyserial URL,
    ``socket://host:port`` for a network bridge). ``homing`` runs ``$H`` to home (else it goes to 0,0);
    ``poll_seconds`` is how often ``?`` is asked while waiting; a controller silent for ``reply_seconds``
    counts as gone. It connects when first needed, and again after a lost connection."""

    def __init__(self, port: str, machine: Machine, *, baud: int = 115200, pen: GrblPen = GrblPen(),
                 homing: bool = True, park_at: Point | None = None, poll_seconds: float = 0.2,
                 reply_seconds: float = 5.0) -> None:
        self.port, self.machine, self.baud, self.pen, self.homing = port, machine, baud, pen, homing
        self.park_at = park_at if park_at is not None else (machine.travel[0], machine.sheet_origin[1])
        self.poll_seconds, self.reply_seconds = poll_seconds, reply_seconds
        self.version = ""
        self.state = ""  # the last status report's state: Idle, Run, Hold:0, Alarm, Home…
        self.position = (0.0, 0.0, 0.0)
        self.locked = False  # GRBL refuses G-code until $H or $X
        self.needs_home: str | None = NOT_HOMED  # a draw before any home() homes first (a resumed game)
        self.settings: dict[int, float] = {}  # GRBL's own ($$), read on connecting
        self.last_alarm: str | None = None  # the last alarm, in words, kept for what the person reads
        self.garbage_lines = 0  # lines from the controller that meant nothing
        self._serial: Any = None
        self._buffer = bytearray()
        self._in_flight: deque[tuple[str, int]] = deque()  # lines sent and not yet answered, with their size
        self._poll_due = 0.0
        self._poll_sent: float | None = None  # when the ? still unanswered was sent
        self._resets_owed = 0  # Ctrl-X sent whose banner has not come back yet
        self._stop_asked = threading.Event()
        self._writing = threading.RLock()  # stop() may run in a signal handler while this thread writes
        self._busy = threading.Lock()

    @property
    def connected(self) -> bool:
        return self._serial is not None

    # --- what the game asks -----------------------------------------------------------------
    def connect(self) -> None:
        """Open the port, reset GRBL and read its banner; only GRBL 1.1 is accepted."""
        self.close()
        self._serial = _open_port(self.port, self.baud)
        self._buffer.clear()
        self._resets_owed = 0
        self._io(self._serial.reset_input_buffer)
        self._reset()
        self.settings = self._read_settings()

    def home(self) -> None:
        with self._busy:
            self._ensure_connected()
            self._home()

    def _home(self) -> None:
        """Home (``$H``) where GRBL can, else unlock; then make G54 noughts' machine coordinates."""
        from noughts import text

        homes = bool(self.settings.get(22))
        if self.homing and not homes:
            raise RobotError(text.grbl_cannot_home(self.port))
        offsets = self.work_offsets()
        lines = ["$X"] if self.locked and not self.homing else []
        if not (self.locked and self.homing):  # $H homes Z (a Z pen) first; a servo pen is up after any reset
            lines += [self.pen.up(), f"G4 P{_number(self.machine.pen_dwell)}"]
        if self.homing:
            lines.append("$H")
        lines += [f"G10 L2 P1 {offsets}", "G54"]
        if not self.homing:
            lines.append("G90 G0 X0 Y0")
        elif self.pen.lift == "z":
            lines.append(self.pen.up())  # Z homed at the top: the lifted pen
        self._run(lines, "homing")
        self.locked, self.needs_home = False, None

    def work_offsets(self) -> str:
        """The axis words of ``G10 L2 P1`` that make G54 noughts' machine coordinates, after checking
        that the configured travel fits GRBL's. Where GRBL homes, noughts' 0,0 is the low corner of
        its space (-$130, -$131) and a Z pen's lifted height is where homing leaves Z; else 0,0 is
        where GRBL was switched on (its machine position 0)."""
        from noughts import text

        if not self.settings.get(22):
            return "X0 Y0"
        grbl_travel = (self.settings.get(130, 0.0), self.settings.get(131, 0.0))
        width, height = self.machine.travel
        if width > grbl_travel[0] + 1e-6 or height > grbl_travel[1] + 1e-6:
            raise RobotError(text.grbl_travel_too_big((width, height), grbl_travel))
        words = f"X{_number(-grbl_travel[0])} Y{_number(-grbl_travel[1])}"
        if self.pen.lift == "z":
            pulloff = self.settings.get(27, 0.0)
            z_home = -self.settings.get(132, 0.0) + pulloff if int(self.settings.get(23, 0)) & 4 else -pulloff
            words += f" Z{_number(z_home - self.pen.z_up)}"
        return words

    def draw(self, plan: PenPlan) -> None:
        program = gcode_program(plan, self.machine, self.pen)  # refuses a point outside the travel
        with self._busy:
            self._ensure_ready()
            self._run(program, "drawing")

    def park(self) -> None:
        with self._busy:
            self._ensure_ready()
            self._run([self.pen.up(), f"G90 G0 {_xy(self.park_at)}"], "parking")

    def stop(self) -> None:
        """Soft-reset GRBL (motion stops at once, the spindle and so a servo pen goes up), then lift a
        Z pen. From another thread while drawing, the drawing thread finishes the job and raises."""
        if self._serial is None:
            return
        self._stop_asked.set()
        try:
            self._send_reset()
            if self._busy.acquire(blocking=False):
                try:
                    self._recover()
                finally:
                    self._busy.release()
        except RobotDisconnected:
            pass  # nothing left to stop; ``connected`` says so

    def close(self) -> None:
        serial, self._serial = self._serial, None
        if serial is not None:
            with contextlib.suppress(Exception):  # pyserial raises several kinds on a port already gone
                serial.close()

    # --- running lines ----------------------------------------------------------------------
    def _ensure_connected(self) -> None:
        if self._serial is None:
            self.connect()
        elif self._resets_owed:
            self._recover()  # stop() came after the last drawing had finished

    def _ensure_ready(self) -> None:
        self._ensure_connected()
        if self.needs_home == NOT_HOMED:
            self._home()  # nothing homed since connecting (a resumed game): the origin first
        if self.locked or (self.homing and self.needs_home is not None):
            reason = self.needs_home or "it is locked after an alarm"
            raise RobotError(f"GRBL cannot draw yet: {reason}; home the robot first")

    def _run(self, lines: list[str], doing: str) -> None:
        """Stream ``lines`` (character counting) and wait until GRBL is idle; any failure leaves the pen up."""
        try:
            for number, line in enumerate(lines, 1):
                size = len(line) + 1
                while sum(sent for _, sent in self._in_flight) + size > RX_BUFFER_BYTES:
                    self._pump()
                self._write(line.encode("ascii") + b"\n")
                self._in_flight.append((f"line {number} ({line})", size))
            while self._in_flight:
                self._pump()
            self.state = ""
            while self.state != "Idle":
                self._pump()
        except _Alarm as alarm:
            stopped = self._stop_asked.is_set()
            self._recover()
            if stopped:
                raise RobotError(f"{doing} stopped: GRBL was reset and the pen is up") from None
            if alarm.code == 0:
                raise RobotError(f"{doing} stopped: GRBL restarted (power, or its reset button); the pen is up"
                                 ) from None
            raise RobotError(f"{doing} stopped by GRBL's ALARM:{alarm.code}: {ALARMS.get(alarm.code, 'an alarm')}; "
                             "the pen is up") from None

    def _pump(self) -> None:
        """Read and handle one line from GRBL, asking for a status report when one is due."""
        now = time.monotonic()
        if self._poll_sent is None and now >= self._poll_due:
            self._write(b"?")
            self._poll_sent = now
        wait_until = self._poll_due if self._poll_sent is None else self._poll_sent + self.reply_seconds
        line = self._read_line(min(wait_until, now + 0.25))  # and look again: reply_seconds may have changed
        if line is None:
            if self._poll_sent is not None and time.monotonic() >= self._poll_sent + self.reply_seconds:
                self.close()
                raise RobotDisconnected(f"GRBL on {self.port} stopped answering (nothing for {self.reply_seconds:g} s)")
            return
        self._handle(line)

    def _handle(self, line: str) -> None:
        if line == "ok":
            if self._in_flight:
                self._in_flight.popleft()
        elif line.startswith("error:"):
            what = self._in_flight.popleft()[0] if self._in_flight else "a line"
            code = int(line[6:]) if line[6:].isdigit() else 0
            self._recover()
            raise RobotError(f"GRBL refused {what}: error:{code}, {ERRORS.get(code, 'an unknown error')}; "
                             "the machine is stopped with the pen up")
        elif match := STATUS.match(line):
            self.state = match[1]
            if match[2] is not None:
                self.position = (float(match[2]), float(match[3]), float(match[4]))
            self._poll_sent, self._poll_due = None, time.monotonic() + self.poll_seconds
        elif line.startswith("ALARM:"):
            raise _Alarm(self._note_alarm(line))
        elif banner := BANNER.match(line):
            self.version = banner[1]
            with self._writing:
                self._resets_owed = max(0, self._resets_owed - 1)
            raise _Alarm(0)  # GRBL restarted: asked by stop(), or power, or its reset button
        elif line.startswith("[MSG:'$H'|'$X' to unlock"):
            self.locked = True
        elif line.startswith("[MSG:Caution: Unlocked"):
            self.locked = False
        elif line and not line.startswith(("[", "$", ">")):
            self.garbage_lines += 1

    def _note_alarm(self, line: str) -> int:
        self.locked = True
        code = int(line[6:]) if line[6:].isdigit() else 0
        self.last_alarm = f"ALARM:{code}, {ALARMS.get(code, 'an alarm')}"
        if code in (1, 3, 6, 7, 8, 9):
            self.needs_home = f"ALARM:{code}, {ALARMS[code]}"
        return code

    def _send_reset(self) -> None:
        with self._writing:
            self._io(lambda: self._serial.write(b"\x18"))
            self._resets_owed += 1

    def _reset(self) -> None:
        """Soft-reset GRBL (unless a reset is on its way already) and wait for every banner owed, then
        for a status report, which says whether it is locked."""
        self._in_flight.clear()
        if not self._resets_owed:
            self._send_reset()
        deadline = time.monotonic() + self.reply_seconds
        reset_again: float | None = None  # GRBL asked for a reset: when to send another if no banner comes
        while self._resets_owed:
            line = self._read_line(deadline if reset_again is None else min(deadline, reset_again))
            if line is None and reset_again is not None and time.monotonic() < deadline:
                reset_again = None  # ours came too soon and was lost (protocol.c, protocol_exec_rt_system)
                with self._writing:
                    self._io(lambda: self._serial.write(b"\x18"))
                continue
            if line is None:
                self.close()
                if self.last_alarm is not None:
                    raise RobotDisconnected(f"GRBL on {self.port} stopped with {self.last_alarm}, and did not "
                                            f"come back from a reset in {self.reply_seconds:g} s")
                raise RobotDisconnected(f"no GRBL banner from {self.port} in {self.reply_seconds:g} s "
                                        f"(is it a GRBL controller, at {self.baud} baud?)")
            if line.startswith("[MSG:Reset to continue"):
                reset_again = time.monotonic() + RESET_AGAIN_SECONDS
            elif banner := BANNER.match(line):
                self.version = banner[1]
                with self._writing:
                    self._resets_owed -= 1
            elif line.startswith("ALARM:"):
                self._note_alarm(line)
        if not self.version.startswith("1.1"):
            version = self.version
            self.close()
            raise RobotError(f"the controller on {self.port} runs Grbl {version}; noughts speaks GRBL 1.1 "
                             "(its messages and error codes changed in 1.1): update its firmware")
        self._write(b"?")
        self._poll_sent = time.monotonic()
        while self._poll_sent is not None:
            line = self._read_line(self._poll_sent + self.reply_seconds)
            if line is None:
                self.close()
                raise RobotDisconnected(f"GRBL on {self.port} gave no status report after a reset")
            if STATUS.match(line) or line.startswith("[MSG:"):
                self._handle(line)
        self.locked = self.state == "Alarm"
        self._stop_asked.clear()

    def _read_settings(self) -> dict[int, float]:
        """GRBL's settings, as ``$$`` lists them (report.c, report_grbl_settings), then ``ok``."""
        self._write(b"$$\n")
        settings: dict[int, float] = {}
        deadline = time.monotonic() + self.reply_seconds
        while True:
            line = self._read_line(deadline)
            if line is None:
                self.close()
                raise RobotDisconnected(f"GRBL on {self.port} did not list its settings ($$) in "
                                        f"{self.reply_seconds:g} s")
            if line == "ok":
                return settings
            if line.startswith("error:"):
                raise RobotError(f"GRBL on {self.port} refused to list its settings ($$): {line}")
            if match := SETTING.fullmatch(line):
                settings[int(match[1])] = float(match[2])

    def _recover(self) -> None:
        """After a reset or an alarm: reset (again) so GRBL is quiet and empty, then make sure the pen is up."""
        self._reset()
        if self.pen.lift == "z":
            self._run((["$X"] if self.locked else []) + [self.pen.up()], "lifting the pen")

    # --- the port ---------------------------------------------------------------------------
    def _io(self, action: Any, *args: Any) -> Any:
        if self._serial is None:
            raise RobotDisconnected(f"the GRBL controller on {self.port} is not connected")
        try:
            return action(*args)
        except Exception as error:  # pyserial's SerialException, OSError, a closed port…
            self.close()
            raise RobotDisconnected(f"lost the connection to GRBL on {self.port}: {error}") from None

    def _write(self, data: bytes) -> None:
        with self._writing:
            self._io(lambda: self._serial.write(data))

    def _read_line(self, deadline: float) -> str | None:
        """The next line from GRBL, or None at ``deadline``."""
        while b"\n" not in self._buffer:
            if time.monotonic() >= deadline:
                return None
            self._buffer += self._io(self._read_some)
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer[:] = rest
        return line.decode("ascii", "replace").strip()

    def _read_some(self) -> bytes:
        """What has come in, waiting up to READ_SLICE for the first byte. A ``socket://`` port's
        ``in_waiting`` says only whether something is there (0 or 1), not how much: the rest is
        then read without waiting, rather than a byte a call."""
        port = self._serial
        data: bytes = port.read(max(1, port.in_waiting))
        if data and self.port.startswith("socket://"):
            port.timeout = 0  # pyserial's socket ports ignore settings: this costs no system call
            try:
                data += port.read(4096)
            finally:
                port.timeout = READ_SLICE
        return data
