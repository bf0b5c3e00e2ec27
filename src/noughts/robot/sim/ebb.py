"""A fake EiBotBoard (EBB) of ours, on a pseudo-terminal, for plotink to talk to as to an AxiDraw.

It follows the published EBB command reference for firmware 2.x (evil-mad.github.io/EggBot/ebb2.html,
with the error lines of the 3.x reference): the commands an AxiDraw driver uses — ``V``, ``SC``,
``EM``, ``SP``/``TP``/``QP``, ``SM``/``XM``, ``HM``, ``CS``, ``QS``, ``QM``, ``QG``, ``QB``, ``ES``,
``R`` — with the documented replies, line endings and ``!`` error lines, each command refused as
unknown by firmware older than the version that added it. Moves run at once (the time they would
take is added to :attr:`FakeEbb.seconds`, nothing sleeps), so the motion queue is always empty.

The steppers follow an AxiDraw: ``XM`` moves motor 1 by A + B and motor 2 by A − B, so A and B are
x and y in steps (80 per mm at 16× microstepping). Pen-down moves land on a
:class:`~noughts.sheet.paper.Paper` in sheet millimetres, through the inverse of
:meth:`Machine.to_machine <noughts.sheet.geometry.Machine.to_machine>`.

Faults for the tests: :attr:`~FakeEbb.garbage` (each reply line replaced by line noise),
:attr:`~FakeEbb.silent` (no replies), :meth:`~FakeEbb.vanish` (the USB cable pulled: the pty
closes), an old ``version``, and :attr:`~FakeEbb.on_command` to act at a chosen command.

>>> board = FakeEbb(Machine.plotter(), version="2.8.1")
>>> board.answer("V"), board.answer("QP"), board.answer("XM,100,80,0"), board.answer("QS")
(b'EBBv13_and_above EB Firmware Version 2.8.1\\r\\n', b'1\\n\\rOK\\r\\n', b'OK\\r\\n', b'80,80\\n\\rOK\\r\\n')
>>> board.answer("ZZ"), board.answer("SM,100")
(b"!8 Err: Unknown command 'ZZ:5A5A'\\r\\n", b'!4 Err: Missing parameter(s)\\r\\n')
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import threading
import tty
from collections.abc import Callable

from noughts.sheet.geometry import Machine, Point, Sheet
from noughts.sheet.paper import Paper

__all__ = ["STEPS_PER_MM", "FakeEbb"]

STEPS_PER_MM = 80.0  # AxiDraw at 16× microstepping: 2032 steps per inch along x and along y
SERVO_UP_AT_RESET = 12000  # SC,4 after a reset (1.0 ms, in 83.3 ns units)
SERVO_DOWN_AT_RESET = 16000  # SC,5 after a reset (1.33 ms)
MAX_PARAMETER = 16777215  # 24-bit durations and step counts
MAX_STEP_RATE = 25000.0  # steps per second, per motor
MIN_STEP_RATE = 1.31

# Commands added after firmware 1.9, with the version that added them: older firmware calls them unknown.
ADDED_IN = {"XM": (2, 3, 0), "QS": (2, 4, 3), "CS": (2, 4, 3), "QM": (2, 4, 4), "ES": (2, 2, 7),
            "HM": (2, 6, 2), "QG": (2, 6, 2)}
MISSING = "!4 Err: Missing parameter(s)"
INVALID = "!6 Err: Invalid parameter value"
EXTRA = "!7 Err: Extra parameter"
NUMBER = re.compile(r"[-+]?\d+")


class _Refused(Exception):
    """A command the board answers with an error line instead of OK."""


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def _numbers(params: list[str], required: int, optional: int = 0) -> list[int]:
    """The integer parameters of a command, refused as the EBB refuses them."""
    if len(params) < required:
        raise _Refused(MISSING)
    if len(params) > required + optional:
        raise _Refused(EXTRA)
    if not all(NUMBER.fullmatch(p) for p in params):
        raise _Refused(INVALID)
    return [int(p) for p in params]


def _within(value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise _Refused(INVALID)
    return value


class FakeEbb:
    """An EiBotBoard driving an AxiDraw-like machine over ``machine``'s travel, drawing on ``paper``.

    Use it as a context manager (or :meth:`open` and :meth:`close`); :attr:`port` is the device
    name to give plotink or pyserial. :meth:`answer` gives the reply to one command directly."""

    def __init__(self, machine: Machine, paper: Paper | None = None, *, version: str = "2.8.1") -> None:
        self.machine = machine
        self.paper = paper or Paper(Sheet(3, 3))
        self.version = version
        self.firmware = _version_tuple(version)
        self.port = ""
        self.commands: list[str] = []  # every command received, as sent
        self.out_of_travel: list[Point] = []  # machine points a move reached beyond the travel
        self.garbage: bytes | None = None  # when set, each line of every reply is replaced by this one
        self.silent = False  # when True, nothing is answered
        self.busy_for = 0  # how many more QG and QM queries report the motors still running
        self.on_command: Callable[[str], None] | None = None  # called (on the board's thread) before each command
        self.seconds = 0.0  # how long the board would have been busy
        self._master = self._slave = self._wake_read = self._wake_write = -1
        self._thread: threading.Thread | None = None
        self._vanished = False
        self.pen_up = True
        self._stroke: list[Point] = []  # the pen-down path since the pen last went down, in sheet mm
        self.reset()

    # -- state ---------------------------------------------------------------------------------

    def reset(self) -> None:
        """The power-on state (the ``R`` command): pen up, motors off, step counters at zero."""
        self._lift_pen()
        self.pen_up = True
        self.servo_up, self.servo_down = SERVO_UP_AT_RESET, SERVO_DOWN_AT_RESET
        self.servo_up_rate = self.servo_down_rate = 0
        self.motors = (0, 0)  # EM values: 0 off, 1 = 16× microstepping … 5 = full steps
        self.step_mode = 1
        self.steps = (0, 0)  # the global step counters of motor 1 and motor 2
        self.button_pressed = False

    def press_button(self) -> None:
        """Press the PRG button (read by ``QB`` and ``QG``)."""
        self.button_pressed = True

    @property
    def position(self) -> Point:
        """Where the pen is, in machine millimetres (from the step counters)."""
        per_mm = STEPS_PER_MM / 2 ** (self.step_mode - 1)
        m1, m2 = self.steps
        return (m1 + m2) / 2 / per_mm, (m1 - m2) / 2 / per_mm

    def _on_sheet(self, point: Point) -> Point:
        """The inverse of ``Machine.to_machine``: a machine point in sheet millimetres."""
        x0, y0 = self.machine.sheet_origin
        x, y = point
        return x - x0, (y - y0) if self.machine.y_down else (y0 - y)

    def _set_pen(self, up: bool) -> None:
        if up:
            self._lift_pen()
        elif self.pen_up:
            self._stroke = [self._on_sheet(self.position)]
        self.pen_up = up

    def _lift_pen(self) -> None:
        """Put the ink of the pen-down moves since the pen went down on the paper."""
        if self._stroke and not self.pen_up:
            self.paper.draw(self._stroke, by="robot")
        self._stroke = []

    def _move(self, steps1: int, steps2: int, duration_ms: int) -> None:
        """Run a straight move of both motors, checked against the EBB's limits first."""
        if duration_ms > MAX_PARAMETER:
            raise _Refused("!0 Err: <move_duration> larger than 16777215 ms.")
        for axis, steps in ((1, abs(steps1)), (2, abs(steps2))):
            rate = steps * 1000 / duration_ms
            if steps > MAX_PARAMETER:
                raise _Refused(f"!0 Err: <axis{axis}> larger than 16777215 steps.")
            if rate > MAX_STEP_RATE:
                raise _Refused(f"!0 Err: <axis{axis}> step rate > 25K steps/second.")
            if steps and rate < MIN_STEP_RATE:
                raise _Refused(f"!0 Err: <axis{axis}> step rate < 1.31Hz.")
        self.seconds += duration_ms / 1000
        if steps1 == steps2 == 0:
            return  # a timed pause
        if self.motors == (0, 0):
            self.motors = (self.step_mode, self.step_mode)  # every move energises the motors first
        self.steps = (self.steps[0] + steps1, self.steps[1] + steps2)
        x, y = end = self.position
        width, height = self.machine.travel
        if not (-1e-6 <= x <= width + 1e-6 and -1e-6 <= y <= height + 1e-6):
            self.out_of_travel.append(end)
        if not self.pen_up:
            self._stroke.append(self._on_sheet(end))

    # -- commands ------------------------------------------------------------------------------

    def answer(self, line: str) -> bytes:
        """The board's reply to one command (without its carriage return)."""
        self.commands.append(line)
        name, *params = line.strip().split(",")
        name = name.upper()
        handler = getattr(self, f"_command_{name}", None) if re.fullmatch(r"[A-Z0-9]{1,2}", name) else None
        if handler is None or self.firmware < ADDED_IN.get(name, (0,)):
            code = name[:2].ljust(1)
            return f"!8 Err: Unknown command '{code}:{code.encode('latin-1', 'replace').hex().upper()}'\r\n".encode()
        try:
            reply: str | None = handler(params)
        except _Refused as refusal:
            return f"{refusal}\r\n".encode()
        return (reply or "OK\r\n").encode()  # most commands answer only OK

    def _command_V(self, params: list[str]) -> str:
        return f"EBBv13_and_above EB Firmware Version {self.version}\r\n"

    def _command_R(self, params: list[str]) -> None:
        _numbers(params, 0)
        self.reset()

    def _command_SC(self, params: list[str]) -> None:
        setting, value = _numbers(params, 2)
        _within(setting, 0, 255)
        _within(value, 0, 65535)
        if setting == 4:
            self.servo_up = value  # "servo_min": the pen-up position
        elif setting == 5:
            self.servo_down = value
        elif setting == 10:
            self.servo_up_rate = self.servo_down_rate = value
        elif setting == 11:
            self.servo_up_rate = value
        elif setting == 12:
            self.servo_down_rate = value

    def _command_EM(self, params: list[str]) -> None:
        enable = [_within(value, 0, 5) for value in _numbers(params, 1, 1)]
        if enable[0]:
            self.step_mode = enable[0]  # only motor 1's value sets the global step mode
        second = enable[1] if len(enable) > 1 else self.motors[1]
        self.motors = (enable[0], self.step_mode if second else 0)
        if self.firmware >= (2, 6, 2):
            self.steps = (0, 0)  # since 2.6.2, EM zeroes the step counters: here becomes home

    def _command_SP(self, params: list[str]) -> None:
        numbers = _numbers(params, 1, 2)
        up = _within(numbers[0], 0, 1) == 1
        duration = _within(numbers[1], 0, 65535) if len(numbers) > 1 else 0
        if len(numbers) > 2:
            _within(numbers[2], 0, 7)
        self._set_pen(up)
        self.seconds += duration / 1000

    def _command_TP(self, params: list[str]) -> None:
        duration = _within(_numbers(params, 0, 1)[0], 0, 65535) if params else 0
        self._set_pen(not self.pen_up)
        self.seconds += duration / 1000

    def _command_QP(self, params: list[str]) -> str:
        return f"{int(self.pen_up)}\n\rOK\r\n"

    def _command_SM(self, params: list[str]) -> None:
        numbers = _numbers(params, 2, 1)
        duration = _within(numbers[0], 1, 2**31)
        self._move(numbers[1], numbers[2] if len(numbers) > 2 else 0, duration)

    def _command_XM(self, params: list[str]) -> None:
        duration, a, b = _numbers(params, 3)
        self._move(a + b, a - b, _within(duration, 1, 2**31))

    def _command_HM(self, params: list[str]) -> None:
        numbers = _numbers(params, 1, 2)
        rate = _within(numbers[0], 2, 25000)
        if len(numbers) == 2:
            raise _Refused(MISSING)
        target = (numbers[1], numbers[2]) if len(numbers) == 3 else (0, 0)
        steps1, steps2 = target[0] - self.steps[0], target[1] - self.steps[1]
        if max(abs(steps1), abs(steps2)) > 4294967:
            raise _Refused("!0 Err: steps to home larger than 4,294,967.")
        if steps1 or steps2:
            self._move(steps1, steps2, max(1, round(max(abs(steps1), abs(steps2)) * 1000 / rate)))

    def _command_CS(self, params: list[str]) -> None:
        _numbers(params, 0)
        self.steps = (0, 0)

    def _command_QS(self, params: list[str]) -> str:
        return f"{self.steps[0]},{self.steps[1]}\n\rOK\r\n"

    def _still_busy(self) -> bool:
        """Moves finish at once, unless a test says they are still running."""
        self.busy_for, busy = max(0, self.busy_for - 1), self.busy_for > 0
        return busy

    def _command_QM(self, params: list[str]) -> str:
        return "QM,1,1,1,0\n\r" if self._still_busy() else "QM,0,0,0,0\n\r"

    def _command_QG(self, params: list[str]) -> str:
        moving = 0b1110 if self._still_busy() else 0  # command executing, both motors moving
        status = (16 if self.pen_up else 0) | (32 if self.button_pressed else 0) | moving
        self.button_pressed = False
        return f"{status:02X}\r\n"

    def _command_QB(self, params: list[str]) -> str:
        pressed, self.button_pressed = self.button_pressed, False
        return f"{int(pressed)}\r\nOK\r\n"

    def _command_ES(self, params: list[str]) -> str:
        numbers = _numbers(params, 0, 1 if self.firmware >= (2, 8, 0) else 0)
        if numbers and _within(numbers[0], 0, 1):
            self.motors = (0, 0)
        return "0,0,0,0,0\n\rOK\r\n"  # nothing was moving or queued to interrupt

    # -- the pseudo-terminal -------------------------------------------------------------------

    def open(self) -> FakeEbb:
        """Plug the board in: open the pty (its device name is :attr:`port`) and start answering."""
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo, no line editing: bytes pass as sent
        os.set_blocking(self._master, False)
        self.port = os.ttyname(self._slave)
        self._wake_read, self._wake_write = os.pipe()
        self._thread = threading.Thread(target=self._serve, name="fake EBB", daemon=True)
        self._thread.start()
        return self

    def __enter__(self) -> FakeEbb:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def vanish(self) -> None:
        """The USB cable is pulled: the pty closes and the host's reads and writes fail. Safe to call
        from :attr:`on_command` (the command in hand then gets no reply)."""
        self._vanished = True
        self._stop_serving()

    def close(self) -> None:
        """Unplug the board and stop its thread."""
        self._stop_serving()
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_read = self._wake_write = -1

    def _stop_serving(self) -> None:
        if self._thread is None:
            return
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"!")
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    def _serve(self) -> None:
        pending = b""
        try:
            while not self._vanished:
                ready, _, _ = select.select([self._master, self._wake_read], [], [])
                if self._wake_read in ready:
                    break
                try:
                    pending += os.read(self._master, 4096)
                except BlockingIOError:
                    continue
                *lines, pending = re.split(rb"[\r\n]", pending)
                for line in lines:
                    if line.strip():
                        self._reply(line.decode("ascii", "replace"))
                    if self._vanished:
                        break
        except OSError:
            pass  # the pty went away under us
        finally:
            self._lift_pen()  # the ink already on the paper stays there
            for fd in (self._master, self._slave):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._master = self._slave = -1

    def _reply(self, command: str) -> None:
        if self.on_command is not None:
            self.on_command(command)
        if self._vanished:
            return
        reply = self.answer(command)
        if self.silent:
            return
        if self.garbage is not None:
            reply = self.garbage * reply.count(b"\n")  # each line of the reply turned to noise
        with contextlib.suppress(BlockingIOError):  # a host that never reads loses the overflow, as on USB
            os.write(self._master, reply)
