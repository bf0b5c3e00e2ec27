"""The ``ebb`` backend through plotink, the real library, against our fake EiBotBoard on a pty."""

from __future__ import annotations

import itertools
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
import serial

from noughts.robot.backend import PenRobot, RobotDisconnected
from noughts.robot.backends.ebb import EbbRobot, PenLift
from noughts.robot.backends.sim import SimRobot
from noughts.robot.sim.ebb import FakeEbb
from noughts.sheet.geometry import Machine, Point, RobotError, Sheet
from noughts.sheet.paper import Paper
from noughts.sheet.strokes import PenPlan, Stroke, grid_strokes, mark_strokes, marker_strokes, plan_strokes

SHEET = Sheet(3, 3)
AXIDRAW = Machine.plotter(travel=(200, 200), sheet_origin=(20, 15))  # y grows down the sheet, as on an AxiDraw
Y_UP = Machine.plotter(travel=(200, 200), sheet_origin=(10, 190), y_down=False)
STEP_MM = 1 / 80  # one step; rounding to steps moves a point by at most half of one on each axis
TOLERANCE = STEP_MM


def whole_drawing(machine: Machine) -> PenPlan:
    """Markers, grid, an X and an O, ordered from home."""
    strokes = (marker_strokes(SHEET) + grid_strokes(SHEET) + mark_strokes(SHEET, 0, "X")
               + mark_strokes(SHEET, 4, "O"))
    home = (-machine.sheet_origin[0], -machine.sheet_origin[1] if machine.y_down else machine.sheet_origin[1])
    return plan_strokes(strokes, machine, start=home)


def gap(point: Point, line: Sequence[Point]) -> float:
    """How far ``point`` is from the polyline ``line``."""
    best = math.inf
    for (ax, ay), (bx, by) in itertools.pairwise(line):
        dx, dy = bx - ax, by - ay
        length2 = dx * dx + dy * dy
        t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((point[0] - ax) * dx + (point[1] - ay) * dy) / length2))
        best = min(best, math.hypot(point[0] - ax - t * dx, point[1] - ay - t * dy))
    return best


def assert_same_ink(drawn: Paper, expected: Paper) -> None:
    """Line for line, every vertex of each within step rounding of the other's polyline."""
    assert len(drawn.ink) == len(expected.ink)
    for got, want in zip(drawn.ink, expected.ink, strict=True):
        assert max(gap(p, want.points) for p in got.points) <= TOLERANCE, (got.points, want.points)
        assert max(gap(p, got.points) for p in want.points) <= TOLERANCE, (got.points, want.points)


def close_to(a: Point, b: Point) -> bool:
    return math.dist(a, b) <= TOLERANCE


@pytest.fixture
def board() -> Iterator[FakeEbb]:
    with FakeEbb(AXIDRAW, Paper(SHEET)) as fake:
        yield fake


@pytest.fixture
def robot(board: FakeEbb) -> Iterator[EbbRobot]:
    with EbbRobot(board.port, AXIDRAW, SHEET, reply_timeout=2.0) as ebb:
        ebb.home()
        yield ebb


def at_command(board: FakeEbb, command: str, count: int, action: Callable[[], None]) -> None:
    """Call ``action()`` on the board's thread when it receives the ``count``-th ``command``."""
    seen = []

    def hook(line: str) -> None:
        if line.startswith(command):
            seen.append(line)
            if len(seen) == count:
                action()

    board.on_command = hook


@pytest.mark.parametrize("machine", [AXIDRAW, Y_UP], ids=["y-down", "y-up"])
def test_a_whole_drawing_lands_the_same_ink_as_the_sim_robot(machine: Machine) -> None:
    plan = whole_drawing(machine)
    sim = SimRobot(machine, Paper(SHEET))
    sim.home()
    sim.draw(plan)
    with FakeEbb(machine, Paper(SHEET)) as board, EbbRobot(board.port, machine, SHEET) as robot:
        assert isinstance(robot, PenRobot)
        robot.home()
        assert close_to(robot.position, plan.start) and robot.pen_down is False
        robot.draw(plan)
        assert robot.pen_down is sim.pen_down is False and board.pen_up
        assert close_to(robot.position, sim.position) and close_to(robot.position, plan.strokes[-1].end)
        sim.park()
        robot.park()
        assert close_to(robot.position, sim.position)
        assert board.out_of_travel == []
        assert_same_ink(board.paper, sim.paper)
        assert len(board.paper.ink) == len(plan.strokes)
        assert board.seconds == pytest.approx(sim.seconds, rel=0.2)  # pen moves, dwells and step rounding apart


def test_home_reads_the_same_position_and_pen_as_the_sim_robot(robot: EbbRobot, board: FakeEbb) -> None:
    sim = SimRobot(AXIDRAW, Paper(SHEET))
    sim.home()
    assert close_to(robot.position, sim.position) and robot.pen_down is sim.pen_down is False
    assert board.steps == (0, 0) and board.position == (0.0, 0.0)
    robot.draw(plan_strokes(mark_strokes(SHEET, 8, "X"), AXIDRAW))
    assert close_to(board.position, AXIDRAW.to_machine(robot.position)) and not robot.pen_down


def test_the_board_gets_the_pen_heights_speeds_and_dwell(board: FakeEbb) -> None:
    machine = Machine.plotter(travel=(200, 200), pen_dwell=0.25)
    pen = PenLift(up=70, down=20, raise_rate=100, lower_rate=25)
    with EbbRobot(board.port, machine, SHEET, pen=pen) as robot:
        robot.draw(plan_strokes(grid_strokes(SHEET)[:1], machine))
        assert board.motors == (1, 1) and board.step_mode == 1  # 16× microstepping
    assert board.servo_up == round(9855 + 17976 * 0.70) and board.servo_down == round(9855 + 17976 * 0.20)
    assert board.servo_up_rate == round(17976 * 24 / 200) and board.servo_down_rate == round(17976 * 0.25 * 24 / 200)
    assert "SP,0,650" in board.commands  # the servo's 400 ms between the heights, then the 250 ms dwell
    assert "SP,1,350" in board.commands
    assert board.motors == (0, 0)  # close() switched the motors off


def test_long_and_steep_moves_are_split_into_pieces_the_board_accepts(robot: EbbRobot, board: FakeEbb) -> None:
    steep = Stroke(((0.0, 0.0), (100.0, 100.05)), "grid")  # motor 2 turns 4 steps in 5.7 s: too slow for the EBB
    robot.draw(plan_strokes([steep], AXIDRAW))
    pieces = [c for c in board.commands if c.startswith("XM")]
    assert len(pieces) > 5 and all(int(c.split(",")[1]) <= 501 for c in pieces)
    assert len(board.paper.ink) == 1 and close_to(board.paper.ink[0].points[-1], (100.0, 100.05))
    assert board.answer("XM,5659,8000,8004") == b"!0 Err: <axis2> step rate < 1.31Hz.\r\n"  # as one move


def test_drawing_ends_when_the_board_has_finished_its_queue(robot: EbbRobot, board: FakeEbb) -> None:
    board.busy_for = 3  # the board still runs queued moves for three status queries
    robot.park()
    assert [c for c in board.commands if c == "QG"][-4:] == ["QG"] * 4 and board.busy_for == 0


def test_a_board_that_never_finishes_moving_is_an_error_and_halted(board: FakeEbb) -> None:
    with EbbRobot(board.port, AXIDRAW, reply_timeout=0.3) as robot:
        board.busy_for = 10**6
        with pytest.raises(RobotError, match=r"still says it is moving, \d s after its moves should have ended"):
            robot.draw(plan_strokes([Stroke(((0.0, 0.0), (1.0, 0.0)), "grid")], AXIDRAW))
        assert board.commands[-3] == "ES" and board.pen_up and robot.connected


def test_a_plan_outside_the_travel_is_refused_before_anything_moves(robot: EbbRobot, board: FakeEbb) -> None:
    plan = whole_drawing(AXIDRAW)
    beyond = Stroke(((10.0, 10.0), (400.0, 10.0)), "grid")
    before = len(board.commands)
    with pytest.raises(RobotError, match=r"nothing was drawn: the grid stroke leaves the travel .* outside"):
        robot.draw(PenPlan((*plan.strokes, beyond), plan.start, plan.finish, 0, 0, 0, 0))
    assert board.commands[before:] == [] and board.paper.ink == [] and board.out_of_travel == []
    robot.draw(plan)  # the robot is still fine
    assert len(board.paper.ink) == len(plan.strokes)


def test_an_old_firmware_is_refused_with_the_reason() -> None:
    with FakeEbb(AXIDRAW, version="2.5.0") as board:
        with pytest.raises(RobotError, match=r"runs firmware 2\.5\.0; noughts needs 2\.6\.2 or newer"):
            EbbRobot(board.port, AXIDRAW)
        assert board.answer("HM,1000") == b"!8 Err: Unknown command 'HM:484D'\r\n"  # as that firmware would say


@pytest.mark.parametrize("noise", [b"#%&*?\r\n", b"\xfe\x81\x00\xff\r\n", b"!0 Err: brown-out\r\n"],
                         ids=["ascii", "binary", "error-line"])
def test_garbage_replies_are_errors_in_words_and_the_pen_is_lifted_after(robot: EbbRobot, board: FakeEbb,
                                                                          noise: bytes) -> None:
    at_command(board, "XM", 12, lambda: setattr(board, "garbage", noise))
    expected = "refused 'XM,.*brown-out" if noise.startswith(b"!") else "answered 'XM,.*not what an EiBotBoard says"
    with pytest.raises(RobotError, match=expected) as raised:
        robot.draw(whole_drawing(AXIDRAW))
    assert not isinstance(raised.value, RobotDisconnected)
    # The board may log its last command (the position query) a moment after answering it.
    tail = board.commands[-4:]
    assert "ES" in tail and tail[tail.index("ES") + 1].startswith("SP,1,") and board.pen_up, tail


def test_a_board_that_answers_garbage_from_the_start_is_not_taken_for_a_plotter(board: FakeEbb) -> None:
    board.garbage = b"\x00\x13 hello\r\n"
    with pytest.raises(RobotError, match=r"no EiBotBoard answered on .*plugged in"):
        EbbRobot(board.port, AXIDRAW)


def test_a_board_vanishing_mid_draw_is_a_disconnection(robot: EbbRobot, board: FakeEbb) -> None:
    at_command(board, "XM", 30, board.vanish)
    with pytest.raises(RobotDisconnected, match=r"connection to the plotter on .* was lost during 'XM,"):
        robot.draw(whole_drawing(AXIDRAW))
    assert not robot.connected and 0 < len(board.paper.ink) < len(whole_drawing(AXIDRAW).strokes)
    with pytest.raises(RobotDisconnected, match="not connected; reconnect"):
        robot.park()
    robot.stop()  # quiet: there is nobody to tell


def test_a_silent_board_is_a_disconnection_after_the_reply_timeout(board: FakeEbb) -> None:
    with EbbRobot(board.port, AXIDRAW, reply_timeout=0.5) as robot:
        board.silent = True
        with pytest.raises(RobotDisconnected, match=r"stopped answering .*within 0\.5 s"):
            robot.home()


def test_stop_mid_draw_lifts_the_pen_and_halts(robot: EbbRobot, board: FakeEbb) -> None:
    plan = whole_drawing(AXIDRAW)
    at_command(board, "XM", 25, robot.stop)  # the board's thread asks while draw() waits for the reply
    with pytest.raises(RobotError, match="stopped before it finished; the pen is up"):
        robot.draw(plan)
    assert board.commands[-3] == "ES" and board.commands[-2].startswith("SP,1,") and board.commands[-1] == "QS"
    assert sum(c.startswith("XM") for c in board.commands) == 25  # not one move after the one in hand
    assert board.pen_up and not robot.pen_down and len(board.paper.ink) < len(plan.strokes)
    with pytest.raises(RobotError, match="stopped"):
        robot.park()  # stays stopped until homed
    board.on_command = None
    robot.home()
    robot.draw(plan)
    assert board.steps != (0, 0) and not robot.pen_down


def test_stop_when_idle_lifts_the_pen_at_once(robot: EbbRobot, board: FakeEbb) -> None:
    board.answer("SP,0")  # someone lowered the pen by hand
    robot.stop()
    assert board.pen_up and board.commands[-3] == "ES"


def test_the_fake_answers_as_the_command_reference_says(board: FakeEbb) -> None:
    with serial.Serial(board.port, timeout=2) as port:
        def ask(command: bytes, lines: int = 1) -> bytes:
            port.write(command + b"\r")
            return b"".join(port.readline() for _ in range(lines))

        assert ask(b"v") == b"EBBv13_and_above EB Firmware Version 2.8.1\r\n"
        assert ask(b"QP", 2) == b"1\n\rOK\r\n"  # 2.x ends this reply with LF CR
        assert ask(b"ZZ") == b"!8 Err: Unknown command 'ZZ:5A5A'\r\n"
        assert ask(b"SM,100") == b"!4 Err: Missing parameter(s)\r\n"
        assert ask(b"SM,0,10,10") == b"!6 Err: Invalid parameter value\r\n"
        assert ask(b"SM,10,1x") == b"!6 Err: Invalid parameter value\r\n"
        assert ask(b"SP,1,10,1,9") == b"!7 Err: Extra parameter\r\n"
        assert ask(b"XM,10000,1,0") == b"!0 Err: <axis1> step rate < 1.31Hz.\r\n"
        assert ask(b"XM,10,400,0") == b"!0 Err: <axis1> step rate > 25K steps/second.\r\n"
        assert ask(b"XM,100,80,-40") == b"OK\r\n" and ask(b"QS", 2) == b"40,120\n\rOK\r\n"
        assert board.position == (1.0, -0.5) and board.out_of_travel == [(1.0, -0.5)]
        assert ask(b"CS") == b"OK\r\n" and ask(b"QS", 2) == b"0,0\n\rOK\r\n"
        assert ask(b"QM") == b"QM,0,0,0,0\n"  # and a CR, left for the next reply
        board.press_button()
        assert ask(b"QB", 2) == b"\r1\r\nOK\r\n"  # the CR left over from QM's LF CR comes first
        assert ask(b"QG") == b"10\r\n"  # pen up; the button was read already
        assert ask(b"SP,0,5") == b"OK\r\n" and ask(b"QG") == b"00\r\n" and ask(b"TP") == b"OK\r\n"
        assert ask(b"ES,1", 2) == b"0,0,0,0,0\n\rOK\r\n" and board.motors == (0, 0)
        assert ask(b"R") == b"OK\r\n" and board.servo_up == 12000 and board.pen_up


def test_without_plotink_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "plotink.ebb_serial", None)
    with pytest.raises(RobotError, match=r"pip install 'noughts\[robot\]'"):
        EbbRobot("/dev/null", AXIDRAW)


def test_pen_settings_that_make_no_sense_are_refused() -> None:
    with pytest.raises(RobotError, match="down < up"):
        PenLift(up=30, down=60)
    with pytest.raises(RobotError, match="percentages"):
        PenLift(raise_rate=0)


def test_a_port_with_no_board_is_one_sentence_without_plotinks_own_log_line(tmp_path: Path) -> None:
    import subprocess

    missing = tmp_path / "ttyACM9"
    done = subprocess.run([sys.executable, "-m", "noughts", "robot", "--backend", "ebb", "--port", str(missing),
                           "--no-scores", "--keep", str(tmp_path / "kept.json")], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60,
                          env={**os.environ, "NOUGHTS_ROBOT_CONFIG": str(tmp_path / "none.toml")})
    assert done.returncode == 2
    assert done.stderr == f"noughts robot: no EiBotBoard answered on {missing}: check the port name, that the " \
                          "plotter is plugged in and switched on, and that no other program (such as Inkscape) is " \
                          "using it\n"
