"""Putting a robot together from its configuration: the pen robot, the sensor, and the console the
human talks through. Each backend and sensor imports its library only when it is chosen.

With the ``sim`` backend there is no real paper: the human types a square and a simulated hand
draws the mark on the paper model, which the chosen sensor then reads like a real sheet (the
light sensor over the paper, the camera through synthetic photos) — the whole path a real game
takes, minus the pen.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from noughts.board import Board
from noughts.errors import NoughtsError, SettingError
from noughts.robot.backend import LightProbe, PenRobot, Sensor, SheetReading
from noughts.robot.config import RobotConfig
from noughts.robot.game import Console
from noughts.sheet.geometry import Machine, RobotError, Sheet
from noughts.sheet.paper import Paper
from noughts.sheet.strokes import shade_strokes

__all__ = ["INSTALL_HINT", "PaperCamera", "Rig", "SimDesk", "build_rig"]

INSTALL_HINT = "pip install 'noughts[robot]'"


@dataclass
class Rig:
    """A robot ready to play: ``robot`` draws, ``sensor`` reads, ``console`` talks; ``paper`` is the
    sim's paper model (None for a real machine); ``reconnect`` makes a fresh robot after a loss."""

    robot: PenRobot
    sensor: Sensor
    console: Console
    sheet: Sheet
    paper: Paper | None = None
    reconnect: Callable[[], PenRobot] | None = None
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        for closer in reversed(self.closers):
            closer()


class SimDesk:
    """The human at the sim's paper: the square typed at the turn prompt is drawn there by a
    simulated hand (so a sensor has something real to read); other prompts pass through."""

    def __init__(self, console: Any, paper: Paper, board: Callable[[], Board], shading: bool,
                 rng: random.Random | None = None) -> None:
        self.console = console
        self.paper = paper
        self.board = board
        self.shading = shading  # the seed's players shaded the whole square for its light sensor
        self.rng = rng or random.Random()

    def show(self, text: str) -> None:
        self.console.show(text)

    def wait_for_human(self, prompt: str, *, move: bool = False) -> bool:
        if not move:
            return bool(self.console.wait_for_human(prompt))
        while True:
            if not self.console.wait_for_human(prompt, move=True):
                return False
            board = self.board()
            typed, self.console.typed = self.console.typed, None
            if not typed:
                return True  # "press again" as it is: the sensor reads the sheet again
            try:
                cell = board.parse_cell(typed)
            except NoughtsError as error:
                prompt = f"{str(error).rstrip('.')}. Type an empty square"
                continue
            self.draw(cell, board.turn or "X")
            return True

    def draw(self, cell: int, mark: str) -> None:
        """The human's mark in ``cell``, as a hand would draw it (even on a taken square: people do)."""
        sheet = self.paper.sheet
        if self.shading:
            self.paper.draw_strokes(shade_strokes(sheet, cell), by="human")
            return
        from noughts.robot.sim.human import draw_human_mark

        draw_human_mark(self.paper, cell, mark, self.rng)


def require(module: str, purpose: str) -> None:
    """Import ``module`` or say which package to install for ``purpose``."""
    from importlib import import_module

    try:
        import_module(module)
    except ImportError as error:
        missing = (error.name or module).partition(".")[0]
        raise RobotError(f"{purpose} needs the Python package {missing!r}, which is not installed: "
                         f"{INSTALL_HINT}") from None


def _machine_and_robot(config: RobotConfig, rows: int, cols: int, paper_for: Callable[[Sheet], Paper]
                       ) -> tuple[PenRobot, Sheet, Callable[[], PenRobot] | None, Paper | None]:
    backend = config.backend
    if backend == "ev3":
        from noughts.robot.backends.ev3 import Ev3Config, Ev3Robot

        settings = Ev3Config.from_mapping(config.section("ev3"))
        ev3 = Ev3Robot(settings)
        sheet = ev3.machine.fit(rows, cols)
        ev3.connect()  # a brick that cannot be reached is said before any menu, as grbl and ebb do
        return ev3, sheet, lambda: Ev3Robot(settings), None
    machine: Machine = config.machine()
    sheet = machine.fit(rows, cols)
    if backend == "sim":
        from noughts.robot.backends.sim import SimRobot

        paper = paper_for(sheet)
        return SimRobot(machine, paper), sheet, None, paper
    if backend == "grbl":
        require("serial", "the grbl backend")
        from noughts.robot.backends.grbl import GrblPen, GrblRobot

        g = config.section("grbl")
        pen = GrblPen(g["lift"], g["down_s"], g["z_down"], g["z_up"])

        def grbl() -> PenRobot:
            robot = GrblRobot(g["port"], machine, baud=g["baud"], pen=pen, homing=g["homing"])
            robot.connect()
            return robot

        return grbl(), sheet, grbl, None
    if backend == "ebb":
        require("plotink", "the ebb backend")
        from noughts.robot.backends.ebb import EbbRobot, PenLift

        e = config.section("ebb")
        lift = PenLift(e["pen_up"], e["pen_down"], e["raise_rate"], e["lower_rate"])

        def ebb() -> PenRobot:
            return EbbRobot(e["port"], machine, sheet, pen=lift)

        return ebb(), sheet, ebb, None
    raise RobotError(f"unknown backend {backend!r}")


def _light_sensor(config: RobotConfig, robot: PenRobot, sheet: Sheet, paper: Paper | None) -> Sensor:
    from noughts.robot.sensing.light import LightCalibration, SweepSensor, ThresholdSensor

    light = config.section("light")
    calibration = LightCalibration(light["white"], light["black"], light["threshold"])
    probe: LightProbe
    if paper is not None:
        from noughts.robot.sim.reflectance import PaperLightProbe

        probe = PaperLightProbe(paper)
    elif isinstance(robot, LightProbe):
        probe = robot
    else:
        raise SettingError(f"the light sensor rides on the robot: only the ev3 backend has one, not "
                           f"{config.backend}; sense with the camera or the keyboard instead", setting="sense",
                           instead=("camera", "keyboard"))
    if light["mode"] == "shade":
        return ThresholdSensor(probe, sheet, calibration)
    return SweepSensor(probe, sheet, calibration)


def _camera_sensor(config: RobotConfig, sheet: Sheet, paper: Paper | None, rng: random.Random) -> Sensor:
    require("cv2", "the camera")
    if paper is not None:
        return PaperCamera(paper, rng)
    from noughts.sheet.camera import CameraSensor

    source = str(config.section("camera")["source"])
    sensor: Sensor = CameraSensor(int(source) if source.isdigit() else source, sheet)
    return sensor


class PaperCamera:
    """The camera on a paper model (the sim's, or a simulator's): each look is a fresh synthetic
    photo of the paper, through a random camera, read as a real photo is."""

    def __init__(self, paper: Paper, rng: random.Random) -> None:
        self.paper = paper
        self.rng = rng
        self.last: Any = None  # the last photo's image, for a "what I saw"

    def read(self, board: Board) -> SheetReading:
        from noughts.robot.sim.photos import photograph
        from noughts.sheet.camera import read_image

        photo = photograph(self.paper, self.rng)
        self.last = photo.image
        return read_image(photo.image, self.paper.sheet)


def build_rig(config: RobotConfig, rows: int, cols: int, *, keyboard: Any, board: Callable[[], Board],
              rng: random.Random | None = None) -> Rig:
    """The robot ``config`` describes for a ``rows`` × ``cols`` game. ``keyboard`` is the terminal
    console (also the ``keyboard`` sensor); ``board`` gives the game's position (for the sim's hand)."""
    chance = rng or random.Random()
    robot, sheet, reconnect, paper = _machine_and_robot(config, rows, cols, Paper)
    rig = Rig(robot, keyboard, keyboard, sheet, paper, reconnect, [robot.close])
    try:
        if config.sense == "keyboard":
            if paper is not None:
                keyboard.on_move = SimDesk(keyboard, paper, board, False, chance).draw
            return rig
        rig.sensor = (_light_sensor(config, robot, sheet, paper) if config.sense == "light"
                      else _camera_sensor(config, sheet, paper, chance))
        if paper is not None:
            rig.console = SimDesk(keyboard, paper, board, config.sense == "light"
                                  and config.section("light")["mode"] == "shade", chance)
        elif config.backend == "ev3":
            from noughts.robot.brick import BrickConsole

            rig.console = BrickConsole(robot)  # type: ignore[arg-type]
    except BaseException:
        rig.close()
        raise
    return rig
