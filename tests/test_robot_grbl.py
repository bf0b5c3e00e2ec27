"""The grbl backend against our GRBL 1.1 simulator, over a pseudo-terminal and over pyserial's
``socket://``: whole drawings land the same ink as the sim backend, the 128-byte receive buffer is
never overrun, every program agrees with an independent reading by pygcode, and alarms, refusals,
garbage, a vanishing device and a stop come back as sentences. Simulated time only.

pyserial and pygcode are required (``pip install 'noughts[robot,dev]'``): these tests fail, never skip, without them.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

try:
    import numpy as np
    import pygcode
    import serial  # noqa: F401 - the backend imports it lazily; say plainly when it is missing
except ImportError as missing:  # pragma: no cover
    pytest.fail(f"the GRBL tests need pyserial, pygcode and numpy ({missing}): pip install 'noughts[robot,dev]'",
                pytrace=False)

from noughts.robot import Machine, Paper, PenPlan, RobotError, Sheet, plan_strokes
from noughts.robot.backend import PenRobot, RobotDisconnected
from noughts.robot.backends.grbl import GrblPen, GrblRobot, gcode_program
from noughts.robot.backends.sim import SimRobot
from noughts.robot.sim.grbl import GrblSimulator, SimulatorLink, serve_pty, serve_socket
from noughts.sheet.geometry import Point
from noughts.sheet.strokes import grid_strokes, mark_strokes, marker_strokes

SHEET = Sheet(3, 3)
SERVES = {"pty": serve_pty, "socket": serve_socket}


def whole_sheet(machine: Machine, position: str = "XOX/OXO/X.O") -> PenPlan:
    strokes = marker_strokes(SHEET) + grid_strokes(SHEET)
    for cell, mark in enumerate(position.replace("/", "")):
        if mark in "XO":
            strokes += mark_strokes(SHEET, cell, mark)
    return plan_strokes(strokes, machine)


def one_o(machine: Machine, cell: int = 4) -> PenPlan:
    return plan_strokes(mark_strokes(SHEET, cell, "O") + mark_strokes(SHEET, 0, "X"), machine)


class Rig:
    """A simulator behind a transport and a robot connected to it."""

    def __init__(self, transport: str = "pty", *, lift: str = "servo", arcs: bool = False, homing: bool = False,
                 machine: Machine | None = None, sim_travel: float = 200.0, settings: dict[int, float] | None = None,
                 **sim_options: Any) -> None:
        self.machine = machine or Machine.plotter(sheet_origin=(20.0, 30.0), arcs=arcs)
        settings = {22: int(homing), 130: sim_travel, 131: sim_travel, **(settings or {})}
        self.sim = GrblSimulator(Paper(SHEET), self.machine, pen=lift, settings=settings, **sim_options)
        self.link: SimulatorLink = SERVES[transport](self.sim)
        self.robot = GrblRobot(self.link.address, self.machine, pen=GrblPen(lift), homing=homing, poll_seconds=0)

    def close(self) -> None:
        self.robot.close()
        self.link.stop()


@pytest.fixture
def rigs() -> Iterator[list[Rig]]:
    made: list[Rig] = []
    yield made
    for rig in made:
        rig.close()


def rig(rigs: list[Rig], *args: Any, **options: Any) -> Rig:
    made = Rig(*args, **options)
    rigs.append(made)
    return made


# --- comparing ink ------------------------------------------------------------------------------
def _samples(lines: Sequence[Sequence[Point]], step: float = 1.0) -> np.ndarray:
    points: list[Point] = []
    for line in lines:
        points.append(line[0])
        for a, b in itertools.pairwise(line):
            count = max(1, math.ceil(math.dist(a, b) / step))
            points += [(a[0] + (b[0] - a[0]) * k / count, a[1] + (b[1] - a[1]) * k / count)
                       for k in range(1, count + 1)]
    return np.array(points)


def _farthest(points: np.ndarray, lines: Sequence[Sequence[Point]]) -> float:
    """How far the point farthest from every segment of ``lines`` lies from them."""
    segments = [(a, b if b != a else (a[0] + 1e-9, a[1])) for line in lines
                for a, b in (itertools.pairwise(line) if len(line) > 1 else [(line[0], line[0])])]
    start = np.array([a for a, _ in segments])
    span = np.array([b for _, b in segments]) - start
    worst = 0.0
    for chunk in np.array_split(points, max(1, len(points) // 400)):
        offset = chunk[:, None, :] - start[None, :, :]
        t = np.clip((offset * span).sum(-1) / (span * span).sum(-1), 0, 1)
        gap = np.linalg.norm(offset - t[..., None] * span[None, :, :], axis=-1).min(axis=1)
        worst = max(worst, float(gap.max()))
    return worst


def assert_same_ink(drawn: Sequence[Sequence[Point]], expected: Sequence[Sequence[Point]], tolerance: float) -> None:
    assert drawn and expected
    assert _farthest(_samples(drawn), expected) <= tolerance, "ink where none was expected"
    assert _farthest(_samples(expected), drawn) <= tolerance, "expected ink missing"


def inks(paper: Paper) -> list[tuple[Point, ...]]:
    return [ink.points for ink in paper.ink]


# --- an independent reading of the programs, by pygcode ---------------------------------------------
def pygcode_ink(lines: Sequence[str], machine: Machine, lift: str) -> tuple[list[list[Point]], list[float]]:
    """The pen-down lines (sheet millimetres) of the G-code in ``lines``, interpreted with pygcode's parser,
    and where the machine ends (machine millimetres)."""
    x0, y0 = machine.sheet_origin
    position = [0.0, 0.0, 0.0]
    spindle, speed = False, 0.0
    drawn: list[list[Point]] = []
    down = False

    def on_sheet() -> Point:
        return position[0] - x0, (position[1] - y0) if machine.y_down else (y0 - position[1])

    def pen(now_down: bool) -> None:
        nonlocal down
        if now_down and not down:
            drawn.append([on_sheet()])
        elif now_down:
            drawn[-1].append(on_sheet())
        down = now_down

    def pen_is_down() -> bool:
        return position[2] < 0 if lift == "z" else spindle and speed >= 500

    for text in lines:
        if text.startswith(("$", "G10 ")):  # positions are read in the work coordinates G10 sets up
            continue
        codes = pygcode.Line(text).block.gcodes
        speed = next((code.word.value for code in codes if code.word_letter == "S"), speed)  # S before M3, as GRBL
        assert not pygcode.Line(text).block.modal_params, text  # every move names its command
        for code in codes:
            word = code.word_letter + f"{code.word.value:g}"
            params = code.get_param_dict()
            if word in ("M3", "M5"):
                spindle = word == "M3"
                pen(pen_is_down())
            elif word in ("G0", "G1"):
                position = [params.get(axis, position[i]) for i, axis in enumerate("XYZ")]
                pen(pen_is_down())
            elif word in ("G2", "G3"):
                cx, cy = position[0] + params.get("I", 0.0), position[1] + params.get("J", 0.0)
                start = math.atan2(position[1] - cy, position[0] - cx)
                end = math.atan2(params["Y"] - cy, params["X"] - cx)
                sweep = (end - start) % (2 * math.pi) if word == "G3" else -((start - end) % (2 * math.pi))
                sweep = sweep or (2 * math.pi if word == "G3" else -2 * math.pi)  # a whole circle
                radius = math.hypot(position[0] - cx, position[1] - cy)
                for k in range(1, 181):
                    angle = start + sweep * k / 180
                    position[:2] = [cx + radius * math.cos(angle), cy + radius * math.sin(angle)]
                    pen(pen_is_down())
            else:
                assert word in ("G4", "G21", "G54", "G90") or word[0] in "FS", f"unexpected {word} in {text}"
    return drawn, position


# --- whole drawings over both transports -----------------------------------------------------------
WHOLE: dict[str, dict[str, Any]] = {
    "pty": {"lift": "servo", "arcs": False, "homing": False},  # a servo pen, Os as polylines, no limit switches
    "socket": {"lift": "z", "homing": True,  # a Z pen, Os as G2/G3 arcs, $H, and the machine's y up the sheet
               "machine": Machine.plotter(sheet_origin=(20.0, 170.0), y_down=False, arcs=True)},
}


@pytest.fixture(scope="module", params=sorted(WHOLE))
def whole(request: pytest.FixtureRequest) -> Iterator[tuple[Rig, PenPlan, SimRobot]]:
    transport = request.param
    made = Rig(transport, **WHOLE[transport])
    plan = whole_sheet(made.machine)
    made.robot.home()
    made.robot.draw(plan)
    made.robot.park()
    reference = SimRobot(made.machine, Paper(SHEET))
    reference.home()
    reference.draw(plan)
    yield made, plan, reference
    made.close()


def test_a_whole_drawing_lands_the_same_ink_as_the_sim_backend(whole: tuple[Rig, PenPlan, SimRobot]) -> None:
    made, plan, reference = whole
    assert isinstance(made.robot, PenRobot)
    assert len(made.sim.paper.ink) == len(plan.strokes)  # one pen-down line per stroke: no stray dots
    assert_same_ink(inks(made.sim.paper), inks(reference.paper), tolerance=0.05)
    assert not made.sim.pen_down and made.sim.state == "Idle"
    assert made.sim.work_position[:2] == made.robot.park_at


def test_streaming_keeps_within_the_receive_buffer(whole: tuple[Rig, PenPlan, SimRobot]) -> None:
    made, _, _ = whole
    sim = made.sim
    assert len(sim.lines) > 150
    assert sim.lost_bytes == 0 and sim.max_rx_fill <= 128
    assert sim.max_rx_fill > 100  # the host streams ahead (character counting), not a line at a time
    assert sim.planner_waits > 0 and sim.sync_waits > 0  # oks held back by a full planner and by pen changes


def test_every_program_agrees_with_pygcode(whole: tuple[Rig, PenPlan, SimRobot]) -> None:
    made, plan, _ = whole
    program = gcode_program(plan, made.machine, made.robot.pen)
    sent = made.sim.lines
    assert any(sent[i:i + len(program)] == program for i in range(len(sent)))  # the preview is what is streamed
    assert made.machine.arcs == any(line.startswith(("G2 ", "G3 ")) for line in sent)
    drawn, finish = pygcode_ink(sent, made.machine, made.robot.pen.lift)
    assert_same_ink(inks(made.sim.paper), drawn, tolerance=0.01)
    assert finish == list(made.sim.work_position)


# --- refusals, alarms and faults -------------------------------------------------------------------
def test_a_plan_outside_the_travel_is_refused_before_anything_is_sent(rigs: list[Rig]) -> None:
    made = rig(rigs, machine=Machine.plotter(travel=(100, 100)))
    made.robot.home()
    sent = list(made.sim.lines)
    too_far = plan_strokes(grid_strokes(SHEET) + mark_strokes(SHEET, 8, "X"), made.machine)  # the grid ends at 105 mm
    with pytest.raises(RobotError, match="outside the machine's travel of 100 × 100 mm"):
        made.robot.draw(too_far)
    assert made.sim.lines == sent and not made.sim.paper.ink


@pytest.mark.parametrize(("fault", "words"), [
    ("error:20", r"GRBL refused line \d+ \(.*\): error:20, an unsupported G-code command; the machine is stopped"),
    ("alarm:1", r"ALARM:1: a limit switch was hit \(hard limit\)"),
])
def test_errors_and_alarms_come_back_in_words(rigs: list[Rig], fault: str, words: str) -> None:
    made = rig(rigs, faults={12: fault})
    made.robot.home()
    with pytest.raises(RobotError, match=words):
        made.robot.draw(one_o(made.machine))
    assert not made.sim.pen_down and made.sim.state in ("Idle", "Alarm")
    assert made.robot.connected
    made.robot.home()  # $X after the alarm (this machine has no switches), and on with the game
    plan = one_o(made.machine, cell=2)
    made.robot.draw(plan)
    assert made.sim.state == "Idle" and made.sim.position[:2] == made.machine.to_machine(plan.finish)


def test_garbage_from_the_device_is_ignored(rigs: list[Rig]) -> None:
    made = rig(rigs, "socket", faults={3: "garbage", 20: "garbage", 40: "garbage"})
    made.robot.home()
    plan = one_o(made.machine)
    made.robot.draw(plan)
    assert made.robot.garbage_lines == 3
    reference = SimRobot(made.machine, Paper(SHEET))
    reference.draw(plan)
    assert_same_ink(inks(made.sim.paper), inks(reference.paper), tolerance=0.01)


@pytest.mark.parametrize("transport", sorted(SERVES))
def test_a_device_that_vanishes_mid_draw_is_a_lost_connection(rigs: list[Rig], transport: str) -> None:
    made = rig(rigs, transport, faults={30: "drop"})
    made.robot.home()
    with pytest.raises(RobotDisconnected, match="lost the connection to GRBL on"):
        made.robot.draw(one_o(made.machine))
    assert not made.robot.connected
    if transport == "socket":  # a network bridge takes the robot back: it homes and carries on
        made.robot.home()
        made.robot.draw(one_o(made.machine, cell=2))
        assert made.sim.state == "Idle"


def test_a_device_that_falls_silent_is_a_lost_connection(rigs: list[Rig]) -> None:
    made = rig(rigs, faults={20: "silence"})

    def fall_silent(line: str) -> None:
        if len(made.sim.lines) == 20:  # the only wall-clock wait in these tests: how long silence takes to count
            made.robot.reply_seconds = 0.2

    made.sim.on_line = fall_silent
    made.robot.home()
    with pytest.raises(RobotDisconnected, match=r"stopped answering \(nothing for 0.2 s\)"):
        made.robot.draw(one_o(made.machine))
    assert not made.robot.connected


@pytest.mark.parametrize("lift", ["servo", "z"])
def test_stop_mid_draw_resets_grbl_and_lifts_the_pen(rigs: list[Rig], lift: str) -> None:
    made = rig(rigs, lift=lift, arcs=True, homing=True)
    made.robot.home()

    def stop_at_the_circle(line: str) -> None:
        if line.startswith(("G2 ", "G3 ")):  # from another thread, a circle (seconds) to go
            made.robot.stop()

    made.sim.on_line = stop_at_the_circle
    with pytest.raises(RobotError, match="drawing stopped: GRBL was reset and the pen is up"):
        made.robot.draw(one_o(made.machine))
    made.sim.on_line = None
    assert made.sim.alarm == 3 and not made.sim.pen_down
    assert made.sim.locked == (lift == "servo")  # a Z pen is unlocked only to lift it
    assert made.robot.needs_home and "ALARM:3" in made.robot.needs_home
    with pytest.raises(RobotError, match=r"reset while moving; the position may be lost.*home the robot first"):
        made.robot.draw(one_o(made.machine))
    made.robot.home()
    made.robot.draw(one_o(made.machine, cell=2))
    assert made.sim.state == "Idle" and not made.sim.pen_down


def test_only_grbl_1_1_is_accepted(rigs: list[Rig]) -> None:
    made = rig(rigs, version="0.9j")
    with pytest.raises(RobotError, match=r"runs Grbl 0.9j; noughts speaks GRBL 1.1"):
        made.robot.home()
    assert not made.robot.connected and made.sim.lines == []


def test_without_pyserial_the_backend_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "serial", None)
    with pytest.raises(RobotError, match=r"needs pyserial: pip install 'noughts\[robot\]'"):
        GrblRobot("/dev/ttyUSB0", Machine.plotter()).home()


# --- the simulator itself, byte by byte -------------------------------------------------------------
def test_the_simulator_answers_as_grbl_documents() -> None:
    sim = GrblSimulator(settings={22: 1})
    assert sim.take_output().endswith(b"[MSG:'$H'|'$X' to unlock]\r\n")  # homing enabled: locked at power-up
    assert sim.feed(b"G0 X5\n") == b"error:9\r\n"
    assert sim.feed(b"$X\n") == b"[MSG:Caution: Unlocked]\r\nok\r\n"
    replies = [sim.feed(line + b"\n") for line in (b"X5 (a comment)", b"G1 X", b"G1 X5", b"G0 X5 *", b"G5 X1",
                                                   b"G0 G1 X1", b"X1 X2", b"G2 X10 Y0 I1 J0 F100", b"$20=1")]
    assert replies == [b"ok\r\n", b"error:2\r\n", b"error:22\r\n", b"error:1\r\n", b"error:20\r\n", b"error:21\r\n",
                       b"error:25\r\n", b"error:33\r\n", b"error:8\r\n"]  # no $ command while moving
    sim.advance(1.0)
    assert [sim.feed(line + b"\n") for line in (b"$20=1", b"$99=1", b"$H")] == [b"ok\r\n", b"error:3\r\n", b""]
    assert sim.feed(b"?").startswith(b"<Home|")
    sim.advance(1.0)
    assert sim.feed(b"?") == b"<Idle|MPos:-1.000,-1.000,-1.000|FS:0,0>\r\n"  # $27 inside the switches at 0
    assert sim.feed(b"G1 X-20 F600\n!?") == b"ok\r\n<Hold:0|MPos:-1.001,-1.000,-1.000|FS:0,0>\r\n"
    assert sim.feed(b"~?").startswith(b"<Run|MPos:-3.0")
    assert sim.feed(b"\x18") == b"ALARM:3\r\n\r\nGrbl 1.1h ['$' for help]\r\n[MSG:'$H'|'$X' to unlock]\r\n"
    assert sim.feed(b"G0 X20 Y20\n") == b"error:9\r\n"
    sim.feed(b"$X\n$20=1\nG0 X-10\n")
    sim.advance(1.0)
    assert sim.feed(b"G0 X500\n") == b"ALARM:2\r\n[MSG:Reset to continue]\r\n"  # a soft limit
    assert sim.feed(b"$X\n?") == b"<Alarm|MPos:-10.000,-1.000,-1.000|FS:0,0>\r\n"  # only a reset is heard
    assert sim.feed(b"\x18$X\n") == (b"ok\r\n\r\nGrbl 1.1h ['$' for help]\r\n[MSG:'$H'|'$X' to unlock]\r\n"
                                     b"[MSG:Caution: Unlocked]\r\nok\r\n")  # the line's late ok, then the banner
    sim.feed(b"G4 P5\n")
    sim.feed(b"G0 X1\n" * 30)  # the planner waits on the dwell, the receive buffer fills, the rest is lost
    assert sim.max_rx_fill > 128 and sim.lost_bytes > 0


# --- as GRBL 1.1h's own source has it (gnea/grbl) -------------------------------------------------
def test_the_settings_are_listed_as_report_c_lists_them() -> None:
    sim = GrblSimulator()
    sim.take_output()
    listed = sim.feed(b"$$\n").decode().split("\r\n")
    assert listed[:12] == ["$0=10", "$1=25", "$2=0", "$3=0", "$4=0", "$5=0", "$6=0", "$10=1", "$11=0.010",
                           "$12=0.002", "$13=0", "$20=0"]
    assert listed[-5:] == ["$130=200.000", "$131=200.000", "$132=50.000", "ok", ""]
    assert "$22=0" in listed and "$23=0" in listed and "$27=1.000" in listed


def test_stock_grbl_refuses_homing_and_soft_limits_without_22() -> None:
    sim = GrblSimulator()  # $22=0, as GRBL comes
    sim.take_output()
    assert [sim.feed(line + b"\n") for line in (b"$H", b"$20=1", b"$22=1", b"$20=1", b"$22=0", b"$$")][:5] == [
        b"error:5\r\n", b"error:10\r\n", b"ok\r\n", b"ok\r\n", b"ok\r\n"]
    assert sim.settings[20] == 0  # settings.c: homing off forces soft limits off


def test_soft_limits_follow_stock_grbl_s_negative_machine_space() -> None:
    sim = GrblSimulator(settings={22: 1, 20: 1})  # homing and soft limits on, unlocked without homing
    sim.feed(b"$X\n")
    assert sim.feed(b"G0 X3.5 Y3.5\n") == b"ALARM:2\r\n[MSG:Reset to continue]\r\n"  # noughts' first move, before
    assert sim.feed(b"\x18") == b"ok\r\n\r\nGrbl 1.1h ['$' for help]\r\n[MSG:'$H'|'$X' to unlock]\r\n"
    sim.feed(b"$X\nG0 X-3.5 Y-3.5 Z-1\n")
    sim.advance(1.0)
    assert sim.alarm == 2 and sim.position == (-3.5, -3.5, -1.0)  # inside: -$13x to 0 on every axis
    assert sim.feed(b"G0 Z0.5\n").startswith(b"ALARM:2")  # Z too


def test_work_coordinates_as_g10_sets_them() -> None:
    sim = GrblSimulator(settings={22: 1, 20: 1})
    sim.feed(b"$H\n")
    sim.advance(1.0)
    replies = [sim.feed(line + b"\n") for line in (b"G10 L2 P1 X-200 Y-200", b"G54", b"G0 X3.5 Y3.5", b"G10 L2 X1",
                                                    b"G10 L3 P1 X1", b"G10 L2 P7 X1", b"G10 L2 P1", b"G10 L20 P2 X0",
                                                    b"G1 L2 X1")]
    assert replies == [b"ok\r\n", b"ok\r\n", b"ok\r\n", b"error:28\r\n", b"error:20\r\n", b"error:29\r\n",
                       b"error:26\r\n", b"ok\r\n", b"error:36\r\n"]
    sim.advance(5.0)
    assert sim.position[:2] == (-196.5, -196.5) and sim.work_position[:2] == (3.5, 3.5)
    assert sim.work_offsets[2][0] == -196.5  # L20: where the machine is reads as X0 in G55
    sim.feed(b"\x18$X\nG0 X10\n")
    sim.advance(1.0)
    assert sim.position[0] == -190.0  # the offsets outlive a reset (GRBL keeps them in EEPROM), G54 again


def test_a_reset_that_comes_too_soon_is_lost_and_grbl_asks_again() -> None:
    sim = GrblSimulator(settings={22: 1, 20: 1}, resets_lost=1)
    sim.feed(b"$X\n")
    assert sim.feed(b"G0 X1\n").endswith(b"[MSG:Reset to continue]\r\n")
    assert sim.feed(b"\x18") == b""
    assert sim.feed(b"\x18").startswith(b"ok\r\n\r\nGrbl 1.1h")


# --- the backend on GRBL as it comes and as it is set up -------------------------------------------
def test_stock_grbl_without_homing_is_not_sent_h_and_the_person_is_told_what_to_do(rigs: list[Rig]) -> None:
    made = rig(rigs, settings={22: 0})
    made.robot.homing = True  # noughts' default; GRBL's $22=0 is stock
    with pytest.raises(RobotError, match=r"has homing turned off \(\$22=0\).*set homing = false in the \[grbl\] "
                                         r"table.*or give the machine limit switches and send \$22=1"):
        made.robot.home()
    assert "$H" not in made.sim.lines and made.robot.settings[22] == 0 and made.robot.settings[130] == 200


@pytest.mark.parametrize("homing", [False, True])
def test_soft_limits_on_a_whole_drawing_stays_inside_grbl_s_space(rigs: list[Rig], homing: bool) -> None:
    made = rig(rigs, settings={22: 1, 20: 1})
    made.robot.homing = homing  # GRBL homes; noughts homes it, or unlocks it where it was switched on
    plan = one_o(made.machine)
    made.robot.home()
    made.robot.draw(plan)
    made.robot.park()
    assert made.sim.alarm is None and made.sim.state == "Idle"
    assert ("$H" in made.sim.lines) == homing and "G10 L2 P1 X-200 Y-200" in made.sim.lines
    reference = SimRobot(made.machine, Paper(SHEET))
    reference.draw(plan)
    assert_same_ink(inks(made.sim.paper), inks(reference.paper), tolerance=0.01)


def test_a_travel_bigger_than_grbl_s_is_refused_before_anything_moves(rigs: list[Rig]) -> None:
    made = rig(rigs, homing=True, sim_travel=100.0, settings={20: 1})
    with pytest.raises(RobotError, match=r"machine travels 200 × 200 mm \(\[machine\] travel\), but GRBL's own "
                                         r"settings say 100 × 100 mm \(\$130, \$131\)"):
        made.robot.home()
    assert made.sim.lines == ["$$"]


def test_an_alarm_keeps_its_reason_and_grbl_is_reset_again_when_it_asks(rigs: list[Rig]) -> None:
    made = rig(rigs, homing=True, settings={20: 1}, faults={16: "alarm:2"}, resets_lost=1)
    made.robot.reply_seconds = 2.0  # how long a reset may take to count as failed: never reached here
    made.robot.home()
    with pytest.raises(RobotError, match=r"drawing stopped by GRBL's ALARM:2: a move went beyond the machine's travel"):
        made.robot.draw(one_o(made.machine))
    assert made.robot.connected and made.sim.resets_lost == 0 and made.sim.locked
    made.robot.home()
    made.robot.draw(one_o(made.machine, cell=2))
    assert made.sim.state == "Idle"


@pytest.mark.parametrize("homing", [False, True])
def test_a_resumed_game_re_establishes_the_origin_before_drawing(rigs: list[Rig], homing: bool) -> None:
    made = rig(rigs, homing=homing, settings={20: int(homing)})
    made.robot.draw(one_o(made.machine))  # no home(): a game carried on with --resume
    first_move = next(i for i, line in enumerate(made.sim.lines) if line.startswith("G0 X"))
    assert ("$H" in made.sim.lines[:first_move]) == homing
    assert any(line.startswith("G10 L2 P1") for line in made.sim.lines[:first_move])
    reference = SimRobot(made.machine, Paper(SHEET))
    reference.draw(one_o(made.machine))
    assert_same_ink(inks(made.sim.paper), inks(reference.paper), tolerance=0.01)


# --- the program, kept in a file: the very bytes the backend streams --------------------------------
@pytest.mark.parametrize(("command", "settings"), [
    (["preview", "X../.O./...", "--move", "c3"], '[machine]\narcs = true\n[grbl]\nlift = "z"\n'),
    (["paper", "XO./.X./..."], '[machine]\ntravel = [180, 160]\nsheet_origin = [10, 5]\n[grbl]\ndown_s = 700\n'),
])
def test_gcode_files_hold_what_the_backend_streams(tmp_path: Any, command: list[str], settings: str) -> None:
    from noughts.cli.robot import main
    from noughts.robot.config import load_config

    (tmp_path / "robot.toml").write_text(settings, encoding="utf-8")
    written = tmp_path / "program.gcode"
    assert main([*command, "--gcode", str(written), "--config", str(tmp_path / "robot.toml")], out=sys.stderr) == 0
    config = load_config(tmp_path / "robot.toml")
    machine, grbl = config.machine(), config.section("grbl")
    sheet = machine.fit(3, 3)
    if command[0] == "preview":
        strokes, start = mark_strokes(sheet, 8, "X"), (sheet.width, 0.0)
    else:
        strokes = marker_strokes(sheet) + grid_strokes(sheet)
        strokes += mark_strokes(sheet, 0, "X") + mark_strokes(sheet, 1, "O") + mark_strokes(sheet, 4, "X")
        start = (0.0, 0.0)
    simulator = GrblSimulator(Paper(sheet), machine, pen=grbl["lift"])
    with serve_socket(simulator) as link:
        robot = GrblRobot(link.address, machine, pen=GrblPen(grbl["lift"], grbl["down_s"], grbl["z_down"],
                                                               grbl["z_up"]), homing=False, poll_seconds=0)
        robot.home()
        before = len(simulator.lines)
        robot.draw(plan_strokes(strokes, machine, start))
        robot.close()
    assert written.read_bytes() == "".join(line + "\n" for line in simulator.lines[before:]).encode("ascii")
    assert simulator.paper.ink and simulator.alarm is None


def test_preview_prints_the_program_line_for_line_with_gcode_dash(tmp_path: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from noughts.cli.robot import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "robot.toml").write_text('[machine]\narcs = true\n[grbl]\nlift = "z"\n', encoding="utf-8")
    step = ["preview", "XX./.OO/...", "--move", "c1", "--config", "robot.toml"]
    assert main([*step, "--gcode", "program.gcode"], io.StringIO()) == 0
    printed = io.StringIO()
    assert main([*step, "--gcode", "-"], printed) == 0
    assert printed.getvalue() == (tmp_path / "program.gcode").read_text(encoding="ascii")  # the program, nothing else
    assert "G0 Z-1" in printed.getvalue() and not (tmp_path / "-").exists()  # the Z pen of --config
