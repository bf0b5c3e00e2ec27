"""Whole robot games through each backend and sensor, against a simulated human who draws on the
paper: the same path a real game takes, from the menu to the score recorded once."""

from __future__ import annotations

import dataclasses
import io
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noughts.board import Board
from noughts.match import Match
from noughts.robot.backends.ev3 import Ev3Config, Ev3Robot
from noughts.robot.brick import BrickConsole, brick_menu, high_score_lines
from noughts.robot.config import load_config
from noughts.robot.game import RobotGame, load_kept
from noughts.robot.rig import build_rig
from noughts.robot.sensing.light import rough_marks
from noughts.robot.sim.ev3 import FakeEv3
from noughts.sheet.geometry import RobotError, Sheet
from noughts.sheet.paper import Paper
from noughts.store import open_store

pytestmark = pytest.mark.slow  # whole games: start this file early so no worker ends on it alone
HOLD = 12.0  # seconds of the fake brick's time a press lasts: a few polls of the agent at any load


def inked_cells(paper: Paper, by: str) -> set[int]:
    """The cells with ``by``'s ink near their centre (a mark's, not the grid's on the cell's edges)."""
    sheet = paper.sheet
    found = set()
    for ink in paper.ink:
        if ink.by != by:
            continue
        for x, y in ink.points:
            cell = sheet.cell_at((x, y))
            if cell is not None:
                cx, cy = sheet.cell_centre(cell)
                if max(abs(x - cx), abs(y - cy)) < 0.4 * sheet.cell_mm:
                    found.add(cell)
    return found


class HumanAtTheBrick:
    """The seed's player: draws the mark on the paper (roughly, by hand), then presses and releases
    the touch sensor; the robot's real console (the brick, through the agent) waits for that."""

    def __init__(self, brick: FakeEv3, console: BrickConsole, rng: random.Random, games: int) -> None:
        self.brick, self.console, self.rng = brick, console, rng
        self.games = games
        self.match: Match | None = None
        self.starts = 0
        self.moves = 0

    def show(self, text: str) -> None:
        self.console.show(text)

    def wait_for_human(self, prompt: str, *, move: bool = False) -> bool:
        assert self.match is not None
        if prompt.startswith("Put a fresh sheet"):
            self.starts += 1
            if self.starts > self.games:
                self.brick.press("up", hold_s=HOLD)
                return self.console.wait_for_human(prompt)
            self.brick.paper.clear()
        elif move:
            board = self.match.board
            cell = self.rng.choice(board.legal_moves)
            for line in rough_marks(self.brick.paper.sheet, cell, board.turn or "X", self.rng):
                self.brick.paper.draw(line, by="human")
            self.moves += 1
        else:
            raise AssertionError(f"the robot asked again: {prompt}")
        self.brick.press("touch", hold_s=HOLD)
        return self.console.wait_for_human(prompt, move=move)


@pytest.fixture
def brick() -> Iterator[FakeEv3]:
    with FakeEv3(time_scale=100.0, fast_forward=True) as fake:
        yield fake


def test_the_seed_robot_menu_light_sweep_and_touch_sensor_play_whole_games(brick: FakeEv3, tmp_path: Path) -> None:
    port = brick.start_agent()
    config = load_config(text=f'backend = "ev3"\nsense = "light"\n[ev3]\nhost = "127.0.0.1"\nport = {port}\n')
    store = open_store(tmp_path / "scores.db")
    rig = build_rig(config, 3, 3, keyboard=None, board=lambda: match.board)
    try:
        assert isinstance(rig.console, BrickConsole) and isinstance(rig.robot, Ev3Robot)
        # the seed's menu on the brick's buttons: down shows the high scores, right is hard
        brick.press("down", hold_s=HOLD)
        brick.press("right", after_s=HOLD * 3, hold_s=HOLD)
        numbers = store.scores().on((3, 3, 3))
        chosen = brick_menu(rig.robot, lambda: high_score_lines(numbers.run, numbers.high), sleep=brick.sleep)
        assert chosen == "hard"
        assert any("Hard High Score: 0" in line for line in brick.display.lines) or chosen == "hard"
        match = Match(chosen, first="alternate", seed="ev3", store=store)
        human = HumanAtTheBrick(brick, rig.console, random.Random(5), games=2)
        human.match = match
        game = RobotGame(match, rig.robot, rig.sensor, human, rig.sheet)
        finished = 0
        while game.play_game():
            finished += 1
            robot_mark = match.mark_of(1)
            assert inked_cells(brick.paper, "robot") == {c for c in range(9) if match.board[c] == robot_mark}
        assert finished == 2 and human.moves >= 4
        assert store.count_games() == 2
        assert store.scores().opponents["hard"].wins == 0  # seed 003's hard never loses
    finally:
        rig.close()
        store.close()


def test_a_stalled_motor_mid_game_is_said_in_words_and_nothing_is_played(brick: FakeEv3) -> None:
    port = brick.start_agent()
    robot = Ev3Robot(dataclasses.replace(Ev3Config(), host="127.0.0.1", port=port))
    match = Match("easy", first="computer", seed=1)
    sheet = robot.machine.fit(3, 3)
    shown: list[str] = []

    class Console:
        def show(self, text: str) -> None:
            shown.append(text)

        def wait_for_human(self, prompt: str, *, move: bool = False) -> bool:
            return True

    game = RobotGame(match, robot, Console(), Console(), sheet)  # type: ignore[arg-type]
    match.new_game()
    game.draw_sheet()
    brick.jam("x", at_mm=brick.carriage_mm[0] + 5)
    with pytest.raises(RobotError, match="stalled"):
        game.computer_turn()
    assert match.board.ply == 0  # a move the robot could not draw is not played
    robot.close()


def test_a_grbl_plotter_plays_whole_games_typed_at_the_keyboard(tmp_path: Path) -> None:
    from noughts.robot.app import TerminalKeyboard
    from noughts.robot.sim.grbl import GrblSimulator
    from noughts.robot.sim.link import serve_socket

    config = load_config(text='backend = "grbl"\n[grbl]\nhoming = false\n[machine]\ntravel = [200, 200]\n')
    simulator = GrblSimulator(Paper(config.machine().fit(3, 3)), config.machine())
    store = open_store(tmp_path / "scores.db")
    rng = random.Random(2)
    games = iter([True, True, False])

    def type_a_move(prompt: str) -> str:
        if prompt.startswith("Put a fresh sheet"):
            simulator.paper.clear()
            return "" if next(games) else "q"
        return match.board.cell_name(rng.choice(match.board.legal_moves))

    with serve_socket(simulator) as link:
        config = config.with_overrides(grbl__port=link.address)
        keyboard = TerminalKeyboard(type_a_move, out=io.StringIO())
        rig = build_rig(config, 3, 3, keyboard=keyboard, board=lambda: match.board)
        rig.robot.poll_seconds = 0  # type: ignore[attr-defined]  # the simulator answers at once
        try:
            match = Match("medium", first="alternate", seed="grbl", store=store)
            game = RobotGame(match, rig.robot, rig.sensor, rig.console, rig.sheet)
            played = 0
            while game.play_game():
                played += 1
                robot_mark = match.mark_of(1)
                assert inked_cells(simulator.paper, "robot") == {c for c in range(9) if match.board[c] == robot_mark}
            assert played == 2 and store.count_games() == 2
            assert simulator.max_rx_fill <= 128
        finally:
            rig.close()
            store.close()


@pytest.mark.parametrize("opponent", ["easy", "medium", "hard"])
def test_sim_and_camera_through_the_command_with_hand_drawn_marks_in_photos(opponent: str, tmp_path: Path) -> None:
    from noughts.cli import robot as app

    rng = random.Random(opponent)
    out = io.StringIO()
    games = iter([True, True, False])

    def type_a_move(prompt: str) -> str:
        if prompt.startswith("Put a fresh sheet"):
            return "" if next(games) else "q"
        board = kept_board(tmp_path / "kept.json")
        return board.cell_name(rng.choice(board.legal_moves))

    db = tmp_path / "scores.db"
    code = app.play_main(["--sense", "camera", "--opponent", opponent, "--db", str(db), "--seed", "7",
                          "--keep", str(tmp_path / "kept.json")], out, type_a_move)
    shown = out.getvalue()
    assert code == 0
    assert shown.count("You played") >= 4 and "not sure" not in shown and "cannot see" not in shown
    store = open_store(db)
    assert store.count_games() == 2
    store.close()


def kept_board(path: Path) -> Board:
    """The position of the game the robot keeps after every move (what the human sees on the sheet)."""
    kept = load_kept(path)
    assert kept is not None
    return kept[0].board


class HandAtThePlotter:
    """A human at a real machine's sheet (a simulator's paper): draws a random legal move by hand
    when it is their turn, changes the sheet when asked; the camera then reads the paper."""

    def __init__(self, paper: Paper, rng: random.Random, games: int) -> None:
        self.paper, self.rng, self.games = paper, rng, games
        self.match: Match | None = None
        self.starts = 0
        self.shown: list[str] = []

    def show(self, text: str) -> None:
        self.shown.append(text)

    def wait_for_human(self, prompt: str, *, move: bool = False) -> bool:
        from noughts.robot.sim.human import draw_human_mark

        assert self.match is not None
        if prompt.startswith("Put a fresh sheet"):
            self.starts += 1
            self.paper.clear()
            return self.starts <= self.games
        assert move, f"the robot asked again: {prompt}"
        board = self.match.board
        draw_human_mark(self.paper, self.rng.choice(board.legal_moves), board.turn or "X", self.rng)
        return True


def play_with_camera(robot: Any, paper: Paper, sheet: Sheet, opponent: str, store: Any) -> HandAtThePlotter:
    from noughts.robot.rig import PaperCamera

    human = HandAtThePlotter(paper, random.Random(opponent), games=2)
    match = Match(opponent, first="alternate", seed=opponent, store=store)
    human.match = match
    game = RobotGame(match, robot, PaperCamera(paper, random.Random(1)), human, sheet)
    while game.play_game():
        robot_mark = match.mark_of(1)
        assert inked_cells(paper, "robot") == {c for c in range(9) if match.board[c] == robot_mark}
        assert inked_cells(paper, "human") == {c for c in range(9) if match.board[c] == match.mark_of(0)}
    return human


def test_an_axidraw_through_plotink_and_the_camera_plays_whole_games(tmp_path: Path) -> None:
    from noughts.robot.backends.ebb import EbbRobot
    from noughts.robot.sim.ebb import FakeEbb
    from noughts.sheet.geometry import Machine

    machine = Machine.plotter(travel=(200, 200), sheet_origin=(20, 15))
    sheet = machine.fit(3, 3)
    store = open_store(tmp_path / "scores.db")
    with FakeEbb(machine, Paper(sheet)) as board, EbbRobot(board.port, machine, sheet) as robot:
        play_with_camera(robot, board.paper, sheet, "hard", store)
    assert store.count_games() == 2
    store.close()


def test_the_seed_robot_with_a_camera_instead_of_its_light_sensor(brick: FakeEv3, tmp_path: Path) -> None:
    port = brick.start_agent()
    robot = Ev3Robot(dataclasses.replace(Ev3Config(), host="127.0.0.1", port=port))
    store = open_store(tmp_path / "scores.db")
    try:
        play_with_camera(robot, brick.paper, robot.machine.fit(3, 3), "medium", store)
        assert store.count_games() == 2
    finally:
        robot.close()
        store.close()


def test_a_grbl_plotter_and_the_camera_play_whole_games(tmp_path: Path) -> None:
    from noughts.robot.backends.grbl import GrblRobot
    from noughts.robot.sim.grbl import GrblSimulator
    from noughts.robot.sim.link import serve_socket
    from noughts.sheet.geometry import Machine

    machine = Machine.plotter(travel=(200, 200), arcs=True)  # each O as one G2 circle
    sheet = machine.fit(3, 3)
    simulator = GrblSimulator(Paper(sheet), machine)
    store = open_store(tmp_path / "scores.db")
    with serve_socket(simulator) as link:
        robot = GrblRobot(link.address, machine, homing=False, poll_seconds=0)
        robot.connect()
        try:
            play_with_camera(robot, simulator.paper, sheet, "easy", store)
        finally:
            robot.close()
    assert store.count_games() == 2 and simulator.max_rx_fill <= 128
    store.close()


def paper_of_svg(path: Path, sheet: Sheet) -> Paper:
    """The ink of an SVG the robot wrote (its polylines and whose they are), as a paper to inspect."""
    import xml.etree.ElementTree as ET

    paper = Paper(sheet)
    for line in ET.parse(path).getroot().iter("{http://www.w3.org/2000/svg}polyline"):
        points = [tuple(float(value) for value in pair.split(",")) for pair in line.attrib["points"].split()]
        paper.draw([(x, y) for x, y in points], by=line.attrib["data-by"])
    return paper


@pytest.mark.parametrize("backend", ["sim", "grbl"])
def test_svg_shows_the_paper_after_every_move_on_every_backend_the_winning_move_included(
        backend: str, tmp_path: Path) -> None:
    from noughts.cli import robot as app
    from noughts.robot.sim.grbl import GrblSimulator
    from noughts.robot.sim.link import serve_socket

    settings = 'backend = "grbl"\n[grbl]\nhoming = false\n[machine]\ntravel = [200, 200]\n' if backend == "grbl" else ""
    (tmp_path / "robot.toml").write_text(settings, encoding="utf-8")
    sheet = load_config(tmp_path / "robot.toml").machine().fit(3, 3)
    kept, picture = tmp_path / "kept.json", tmp_path / "paper.svg"
    rng = random.Random(3)
    starts = iter([True, False])
    seen: list[Board] = []  # the position at each of the person's turns, and the move they typed

    def play_to_win(prompt: str) -> str:
        if prompt.startswith("Put a fresh sheet"):
            return "" if next(starts) else "q"
        board = kept_board(kept)
        if seen:  # after every move the picture holds the position so far
            drawn = paper_of_svg(picture, sheet)
            assert inked_cells(drawn, "human") == {c for c in range(9) if board[c] == "X"}
            assert inked_cells(drawn, "robot") == {c for c in range(9) if board[c] == "O"}
        wins = [cell for cell in board.legal_moves if board.play(cell).winner == "X"]
        cell = wins[0] if wins else rng.choice(board.legal_moves)
        seen.append(board.play(cell))
        return board.cell_name(cell)

    machine = load_config(tmp_path / "robot.toml").machine()  # each ? runs a minute: the command polls at 5 Hz
    with serve_socket(GrblSimulator(Paper(sheet), machine, poll_seconds=60.0)) as link:
        out = io.StringIO()
        code = app.play_main(["--config", str(tmp_path / "robot.toml"), "--port", link.address, "--opponent", "easy",
                              "--first", "me", "--seed", "1", "--no-scores", "--keep", str(kept), "--svg",
                              str(picture)], out, play_to_win)
    assert code == 0 and "You win" in out.getvalue(), out.getvalue()
    final, drawn = seen[-1], paper_of_svg(picture, sheet)
    assert final.winner == "X"
    assert inked_cells(drawn, "human") == {c for c in range(9) if final[c] == "X"}  # the winning move too
    assert inked_cells(drawn, "robot") == {c for c in range(9) if final[c] == "O"}
