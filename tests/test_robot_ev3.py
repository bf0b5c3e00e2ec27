"""The EV3 backend end to end: the brick agent (Python 3.5, python-ev3dev2) on a fake sysfs tree
with physics, the host's Ev3Robot over TCP, and reading marks with the reflected-light sensor."""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import random
import re
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from ev3dev2.motor import MediumMotor
from ev3dev2.sensor.lego import ColorSensor
from PIL import Image, ImageDraw

from noughts.board import Board
from noughts.robot.backend import LightProbe, PenRobot, RobotDisconnected
from noughts.robot.backends import ev3_agent
from noughts.robot.backends.ev3 import Ev3Config, Ev3Robot, MotorSpec
from noughts.robot.backends.sim import SimRobot
from noughts.robot.sensing.light import (
    LightCalibration,
    SweepSensor,
    ThresholdSensor,
    calibrate,
    measure_accuracy,
    rough_marks,
    serpentine,
)
from noughts.robot.sim.ev3 import FakeEv3
from noughts.robot.sim.reflectance import PaperLightProbe
from noughts.sheet.geometry import Point, RobotError, Sheet
from noughts.sheet.paper import Paper
from noughts.sheet.strokes import Stroke, grid_strokes, mark_strokes, marker_strokes, plan_strokes

AGENT = Path(ev3_agent.__file__)
PYTHON35_FUTURES = {"nested_scopes", "generators", "division", "absolute_import", "with_statement",
                    "print_function", "unicode_literals", "generator_stop"}


@pytest.fixture
def brick() -> Iterator[FakeEv3]:
    with FakeEv3(fast_forward=True) as fake:  # the physics need not wait for real time while the agent sleeps
        yield fake


@pytest.fixture
def robot(brick: FakeEv3) -> Iterator[Ev3Robot]:
    port = brick.start_agent()
    ev3 = Ev3Robot(dataclasses.replace(Ev3Config(), host="127.0.0.1", port=port))
    yield ev3
    ev3.close()


def human_draws(paper: Paper, cell: int, mark: str, seed: int = 1) -> None:
    for line in rough_marks(paper.sheet, cell, mark, random.Random(seed)):
        paper.draw(line, by="human", width=1.4 if mark == "#" else 0.8)


def farthest_gap(ours: Paper, theirs: Paper) -> float:
    """How far (mm) any of ``ours``' ink strays from ``theirs``, sampled every half millimetre."""
    segments = [(a, b) for ink in theirs.ink for a, b in zip(ink.points, ink.points[1:], strict=False)]

    def gap(p: Point) -> float:
        best = math.inf
        for a, b in segments:
            dx, dy = b[0] - a[0], b[1] - a[1]
            length2 = dx * dx + dy * dy or 1e-12
            t = max(0.0, min(1.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2))
            best = min(best, math.hypot(p[0] - a[0] - t * dx, p[1] - a[1] - t * dy))
        return best

    worst = 0.0
    for ink in ours.ink:
        for a, b in zip(ink.points, ink.points[1:], strict=False):
            steps = max(1, int(math.dist(a, b) / 0.5))
            for i in range(steps + 1):
                worst = max(worst, gap((a[0] + (b[0] - a[0]) * i / steps, a[1] + (b[1] - a[1]) * i / steps)))
    return worst


def raw_exchange(port: int, lines: list[bytes]) -> list[dict[str, object]]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as link:
        reader = link.makefile("rb")
        replies = []
        for line in lines:
            link.sendall(line)
            replies.append(json.loads(reader.readline()))
        return replies


# -- the agent's source ------------------------------------------------------------------------------

def test_the_agent_is_python_35_and_imports_only_the_standard_library_and_ev3dev2() -> None:
    source = AGENT.read_text(encoding="utf-8")
    tree = ast.parse(source, feature_version=(3, 5))
    with pytest.raises(SyntaxError):  # the same check refuses newer syntax
        ast.parse(source + '\nvalue = f"{source}"\n', feature_version=(3, 5))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "the agent is one file on the brick: no relative imports"
            if node.module == "__future__":
                assert {alias.name for alias in node.names} <= PYTHON35_FUTURES
            imported.add(node.module or "")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "_device":
            module = node.args[1]
            assert isinstance(module, ast.Constant) and str(module.value).startswith("ev3dev2.")
    tops = {name.split(".")[0] for name in imported}
    assert "ev3dev2" in tops
    assert tops - {"ev3dev2"} <= set(sys.stdlib_module_names), tops - set(sys.stdlib_module_names)


# -- the fake brick through python-ev3dev2 itself --------------------------------------------------

def test_the_fake_honours_motor_commands_and_sensor_modes(brick: FakeEv3) -> None:
    motor = MediumMotor("outC")

    def settle() -> None:
        brick.sleep(0.05)  # the physics takes each command on its next tick
        while "running" in motor.state:
            brick.sleep(0.02)

    motor.run_to_rel_pos(position_sp=90, speed_sp=300, stop_action="hold")
    settle()
    assert motor.position == 90 and motor.state == ["holding"]
    motor.run_timed(time_sp=500, speed_sp=-100, stop_action="coast")
    settle()
    assert motor.position == pytest.approx(40, abs=2) and motor.state == []
    motor.run_to_abs_pos(position_sp=5, speed_sp=200)  # a shorter value over a longer one leaves no tail
    settle()
    assert motor.position == 5
    motor.command = "reset"
    brick.sleep(0.05)
    assert motor.position == 0
    x_before = brick.carriage_mm[0]
    motor.run_forever(speed_sp=400)  # toward home (sign +1) until the rack's end stalls it
    brick.sleep(2.0)
    assert brick.carriage_mm[0] == 0.0 < x_before
    assert "stalled" in motor.state and motor.speed == 0
    motor.stop()
    colour = ColorSensor("in1")
    colour.mode = "COL-COLOR"  # shorter than the mode before it: the fake tidies the file's tail
    brick.sleep(0.05)  # a value follows its mode on the physics' next tick
    assert colour.mode == "COL-COLOR"
    colour.mode = "COL-AMBIENT"
    brick.sleep(0.05)
    assert colour.ambient_light_intensity == 4
    colour.mode = "COL-REFLECT"
    brick.sleep(0.05)
    assert 65 <= colour.reflected_light_intensity <= 80  # bare paper under the sensor


# -- drawing -----------------------------------------------------------------------------------------

def test_homes_by_stall_and_draws_the_grid_an_x_and_an_o_like_the_sim(brick: FakeEv3, robot: Ev3Robot) -> None:
    assert isinstance(robot, PenRobot) and isinstance(robot, LightProbe)
    robot.home()
    assert robot.position == (0.0, 0.0) and brick.carriage_mm == (0.0, 0.0)
    assert brick.pen_depth < brick.pen_contact_deg
    sheet = brick.paper.sheet
    strokes = grid_strokes(sheet) + mark_strokes(sheet, 4, "X") + mark_strokes(sheet, 0, "O")
    plan = plan_strokes(strokes, robot.machine)
    robot.draw(plan)
    sim = SimRobot(robot.machine, Paper(sheet))
    sim.draw(plan)
    assert len(brick.paper.ink) == len(plan.strokes)
    assert farthest_gap(brick.paper, sim.paper) < 0.6 and farthest_gap(sim.paper, brick.paper) < 0.6
    assert all(ink.by == "robot" for ink in brick.paper.ink)
    assert brick.pen_depth < brick.pen_contact_deg
    robot.park()
    assert brick.carriage_mm == pytest.approx((0.0, 0.0), abs=0.4)


def test_every_point_is_checked_before_anything_moves(brick: FakeEv3, robot: Ev3Robot) -> None:
    robot.home()
    sheet = brick.paper.sheet
    too_far = Stroke(((10.0, 10.0), (10.0, 150.0)), "grid")  # below the travel's home end
    with pytest.raises(RobotError, match="outside the machine's travel"):
        robot.draw(plan_strokes([*grid_strokes(sheet), too_far], robot.machine, ordered=False))
    assert brick.paper.ink == []
    with pytest.raises(RobotError, match="outside the machine's travel"):
        robot.reflected([(200.0, 10.0)])


def test_a_motor_stalled_mid_move_is_a_robot_error_in_words(brick: FakeEv3, robot: Ev3Robot) -> None:
    robot.home()
    brick.jam("x", 64.0)  # something on the rack, 64 mm from the home end
    line = Stroke(((10.0, 60.0), (110.0, 60.0)), "grid")
    with pytest.raises(RobotError, match=r"^the x motor stalled at 2\d\d degrees; is something in the way\?$"):
        robot.draw(plan_strokes([line], robot.machine, ordered=False))
    assert brick.pen_depth < brick.pen_contact_deg  # the agent lifted the pen
    [ink] = brick.paper.ink
    assert ink.points[-1][0] == pytest.approx(60.0, abs=0.5)  # the line stops at the jam
    brick.clear_jams()
    robot.draw(plan_strokes([line], robot.machine, ordered=False))  # the agent carries on
    assert len(brick.paper.ink) == 2


def test_stop_from_another_thread_halts_a_drawing_and_lifts_the_pen(brick: FakeEv3, robot: Ev3Robot) -> None:
    brick.fast_forward = False  # the stop is sent on a real clock: the drawing must not race ahead of it
    robot.home()
    errors: list[Exception] = []
    long_line = Stroke(((5.0, 60.0), (115.0, 60.0)), "grid")

    def draw() -> None:
        try:
            robot.draw(plan_strokes([long_line], robot.machine, ordered=False))
        except RobotError as error:
            errors.append(error)

    drawing = threading.Thread(target=draw)
    drawing.start()
    while drawing.is_alive() and brick.carriage_mm[0] < 40:  # well into the line
        brick.sleep(0.1)
    robot.stop()
    drawing.join(10)
    assert [str(e) for e in errors] == ["the robot was stopped"]
    assert brick.pen_depth < brick.pen_contact_deg
    assert brick.carriage_mm[0] < 100


# -- light -----------------------------------------------------------------------------------------

def test_reads_shaded_x_o_and_empty_squares_with_the_light_sensor(brick: FakeEv3, robot: Ev3Robot) -> None:
    paper, sheet = brick.paper, brick.paper.sheet
    paper.draw_strokes(grid_strokes(sheet) + marker_strokes(sheet))
    human_draws(paper, 0, "#")
    human_draws(paper, 4, "X")
    human_draws(paper, 8, "O")
    robot.home()
    calibration = calibrate(robot, [(60.0, 5.0), (5.0, 60.0)], sheet.marker_centres()[:2])
    assert calibration.white > 65 and calibration.black < 30
    assert SweepSensor(robot, sheet, calibration).read(Board()).notation(3) == "?../.X./..O"
    assert ThresholdSensor(robot, sheet).read(Board()).notation(3) == "?../.../..."  # the seed sees shading only
    known = Board.parse("?........".replace("?", "X"))  # a square already known is not scanned again
    reading = SweepSensor(robot, sheet, calibration).read(known)
    assert reading.notation(3) == "X../.X./..O" and reading.cells[0].confidence == 1.0


def test_the_sweep_visits_unknown_squares_in_serpentine_order() -> None:
    board = Board.parse("X.O/.../O.X")
    assert serpentine(board) == [1, 5, 4, 3, 7]
    paper = Paper(Sheet(3, 3))
    visited: list[Point] = []

    class Recording(PaperLightProbe):
        def reflected(self, points: list[Point]) -> list[float]:  # type: ignore[override]
            visited.extend(points)
            return super().reflected(points)

    reading = SweepSensor(Recording(paper), paper.sheet).read(board)
    assert reading.notation(3) == "X.O/.../O.X"
    rows = [paper.sheet.cell_at(point) for point in visited]
    assert [cell for i, cell in enumerate(rows) if i == 0 or rows[i - 1] != cell] == [1, 5, 4, 3, 7]
    assert visited[27][0] > visited[28][0]  # the middle row is swept right to left


def test_a_calibration_a_person_can_get_wrong_is_refused_in_words() -> None:
    assert LightCalibration.from_dict(LightCalibration().to_dict()) == LightCalibration()
    with pytest.raises(RobotError, match="too close to tell them apart"):
        LightCalibration(white=30, black=25, threshold=27)
    with pytest.raises(RobotError, match="must lie between"):
        LightCalibration(white=70, black=5, threshold=80)


def test_the_accuracy_figure_puts_the_sweep_above_the_seeds_single_reading() -> None:
    figure = measure_accuracy(boards=2, seed=3)
    assert figure.sweep > 0.9 > 0.6 > figure.seed_presence
    assert figure.seed_shaded > 0.9 and figure.sweep_wrong < 0.1
    assert "simulated boards" in figure.describe()


# -- garbage, the human's side, disconnects ------------------------------------------------------

def test_garbage_gets_error_replies_and_the_agent_keeps_serving(brick: FakeEv3) -> None:
    port = brick.start_agent()
    replies = raw_exchange(port, [b"not json\n", b"\xff\xfe\n", b"[1, 2]\n", b'{"cmd": "fly", "id": 7}\n',
                                  b'{"cmd": "move", "to": [1, 2]}\n', b'{"cmd": "configure", "x": 3}\n',
                                  b'{"cmd": "hello", "id": 8}\n'])
    assert [r.get("error") for r in replies] == ["bad-request", "bad-request", "bad-request", "unknown-command",
                                                 "not-configured", "bad-arguments", None]
    assert replies[3]["id"] == 7 and replies[-1] == {"id": 8, "ok": True, "agent": "noughts-ev3", "version": 1,
                                                     "configured": False, "homed": False}
    settings = Ev3Config().agent_settings()
    wrong_port = {**settings, "x": {**settings["x"], "port": "outD"}}
    [reply] = raw_exchange(port, [(json.dumps({"cmd": "configure", **wrong_port}) + "\n").encode()])
    assert reply["error"] == "no-device" and "no medium motor on port outD" in str(reply["message"])
    replies = raw_exchange(port, [(json.dumps({"cmd": "configure", **settings}) + "\n").encode(),
                                  b'{"cmd": "move", "to": [1, 2]}\n', b'{"cmd": "home"}\n',
                                  b'{"cmd": "move", "to": [99999, 0]}\n', b'{"cmd": "draw", "points": [[1, "a"]]}\n',
                                  b'{"cmd": "show", "lines": "hello"}\n', b'{"cmd": "pen", "state": "sideways"}\n',
                                  b'{"cmd": "move", "to": [30, 40]}\n'])
    assert [r.get("error") for r in replies] == [None, "not-homed", None, "out-of-range", "bad-arguments",
                                                 "bad-arguments", "bad-arguments", None]
    assert replies[-1]["at"] == [30.0, 40.0]


def test_the_touch_sensor_and_the_buttons_reach_the_host(brick: FakeEv3, robot: Ev3Robot) -> None:
    assert robot.touch_pressed() is False
    brick.press("touch", after_s=0.5, hold_s=0.3)
    assert robot.wait_touch(timeout=30) is True
    assert robot.wait_touch(timeout=0.3) is False  # nobody touches it: the wait ends
    brick.press("left")
    assert robot.buttons() == {"left"}
    brick.release("left")
    assert robot.buttons() == frozenset()
    brick.press("enter", "down", after_s=0.4, hold_s=0.2)
    assert robot.wait_buttons(timeout=30) == {"enter", "down"}


def test_the_screen_is_a_png_showing_the_lines(brick: FakeEv3, robot: Ev3Robot) -> None:
    lines = ["Your move,", "then press the button"]
    robot.show(lines)
    robot.beep()
    shown = Image.open(brick.display.png)
    assert shown.size == (178, 128) and brick.display.lines == lines and brick.sound.beeps == 1
    expected = Image.new("1", (178, 128), "white")
    draw = ImageDraw.Draw(expected)
    for row, line in enumerate(lines):
        draw.text((0, 10 * row), line, fill="black")
    assert shown.convert("1").tobytes() == expected.tobytes()
    assert shown.convert("L").histogram()[0] > 0  # some of it is black: there is text
    robot.show(["X wins"])
    assert Image.open(brick.display.png).convert("1").tobytes() != expected.tobytes()


def test_the_host_is_told_when_the_agent_goes_away(brick: FakeEv3, robot: Ev3Robot) -> None:
    assert robot.touch_pressed() is False and robot.connected
    brick.stop_agent()
    with pytest.raises(RobotDisconnected, match=r"closed the connection|lost the connection"):
        robot.touch_pressed()
    assert not robot.connected
    with pytest.raises(RobotDisconnected, match=r"cannot reach the EV3 at 127\.0\.0\.1:\d+: .*agent running"):
        robot.touch_pressed()
    robot.stop()  # quiet when there is nothing to stop


def test_an_agent_that_stops_answering_is_a_disconnect() -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        robot = Ev3Robot(dataclasses.replace(Ev3Config(), host="127.0.0.1", port=port, timeout_s=0.3))
        with pytest.raises(RobotDisconnected, match=r"did not answer 'configure' within 0\.3 s"):
            robot.home()
        assert not robot.connected


def test_the_configuration_comes_from_a_table_and_refuses_unknown_settings() -> None:
    config = Ev3Config.from_mapping({"host": "brick", "x_motor": {"port": "outD", "kind": "large"},
                                     "deg_per_mm": [3.0, 3.5]})
    assert config.x_motor.port == "outD" and config.deg_per_mm == (3.0, 3.5) and config.host == "brick"
    with pytest.raises(RobotError, match="unknown EV3 setting 'colour'"):
        Ev3Config.from_mapping({"colour": "in2"})
    with pytest.raises(RobotError, match="large or medium"):
        Ev3Config.from_mapping({"pen_motor": {"port": "outB", "kind": "small"}})
    assert re.fullmatch(r"\d+\.\d", str(config.sheet_to_degrees((0.0, 0.0))[0]))


def test_a_brick_out_of_reach_is_said_before_the_menu_and_no_game_is_said_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from noughts.cli.robot import play_main

    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]  # nothing listens here once it is closed
    monkeypatch.setenv("NOUGHTS_ROBOT_CONFIG", str(tmp_path / "none.toml"))  # not the person's own
    prompts: list[str] = []
    out = io.StringIO()

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        return "e" if prompt.startswith("Choose") else ""

    with pytest.raises(RobotDisconnected, match=rf"cannot reach the EV3 at 127\.0\.0\.1:{port}"):
        play_main(["--backend", "ev3", "--host", "127.0.0.1", "--port", str(port), "--no-scores",
                   "--keep", str(tmp_path / "kept.json")], out, answer)
    assert prompts == [] and "kept" not in out.getvalue()


def test_the_docs_example_of_the_motor_tables_loads() -> None:
    from noughts.robot.config import load_config

    page = (Path(__file__).resolve().parent.parent / "docs" / "robot.md").read_text(encoding="utf-8")
    examples = [block for block in re.findall(r"```toml\n(.*?)```", page, re.DOTALL) if "[ev3.x_motor]" in block]
    assert len(examples) == 1
    settings = Ev3Config.from_mapping(load_config(text=examples[0]).section("ev3"))
    assert settings.x_motor == MotorSpec("outC", "medium", -1) and settings.host == "192.168.1.40"
