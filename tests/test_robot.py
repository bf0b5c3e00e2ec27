"""The robot's core: sheet geometry, strokes and their order, the paper model, judging a reading,
whole games on the sim backend, and the ``noughts robot`` commands."""

from __future__ import annotations

import io
import itertools
import random
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from noughts.board import Board
from noughts.cli.robot import main
from noughts.match import Match
from noughts.robot.app import TerminalKeyboard
from noughts.robot.backends.sim import SimRobot
from noughts.robot.game import RobotGame, judge
from noughts.sheet.geometry import MIN_CELL_MM, Machine, RobotError, Sheet, distance
from noughts.sheet.paper import Paper, sheet_svg
from noughts.sheet.reading import CellReading, SheetReading, cell_readings
from noughts.sheet.strokes import (
    Stroke,
    grid_strokes,
    mark_strokes,
    marker_strokes,
    order_strokes,
    plan_strokes,
    shade_strokes,
)
from noughts.store import open_store


def reachable_3x3() -> list[Board]:
    seen = {Board()}
    stack = [Board()]
    while stack:
        board = stack.pop()
        for cell in board.legal_moves:
            child = board.play(cell)
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return sorted(seen, key=str)


# geometry ------------------------------------------------------------------------------------
@pytest.mark.parametrize("travel", [(200.0, 200.0), (300.0, 150.0), (90.0, 90.0)])
def test_every_board_up_to_9x9_fits_or_is_refused_with_the_reason(travel: tuple[float, float]) -> None:
    machine = Machine.plotter(travel=travel)
    for rows in range(1, 10):
        for cols in range(1, 10):
            try:
                sheet = machine.fit(rows, cols)
            except RobotError as error:
                assert f"{rows}×{cols} sheet does not fit" in str(error)
                assert (cols * MIN_CELL_MM + 30 > travel[0]) or (rows * MIN_CELL_MM + 30 > travel[1])
                continue
            assert MIN_CELL_MM <= sheet.cell_mm <= 30
            strokes = marker_strokes(sheet) + grid_strokes(sheet)
            strokes += [s for cell in range(rows * cols) for s in mark_strokes(sheet, cell, "XO"[cell % 2])]
            for stroke in strokes:
                for x, y in stroke.points:
                    assert 0 <= x <= sheet.width and 0 <= y <= sheet.height
                    machine.to_machine((x, y))  # inside the travel
            for cell in range(rows * cols):
                assert sheet.cell_at(sheet.cell_centre(cell)) == cell


def test_a_point_outside_the_travel_is_refused_before_the_sim_draws_anything() -> None:
    machine = Machine.plotter(travel=(100, 100))
    robot = SimRobot(machine, Paper(Sheet(3, 3)))  # the default 120 mm sheet is too big for 100 mm
    with pytest.raises(RobotError, match="outside the machine's travel of 100 × 100 mm"):
        robot.draw(plan_strokes(grid_strokes(robot.paper.sheet), machine))
    assert robot.paper.ink == []


def test_machine_y_up_flips_the_sheet() -> None:
    machine = Machine.plotter(travel=(200, 200), sheet_origin=(10, 190), y_down=False)
    assert machine.to_machine((0, 0)) == (10, 190)
    assert machine.to_machine((50, 100)) == (60, 90)


# strokes and their order ---------------------------------------------------------------------
def segments(strokes: list[Stroke]) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Every pen-down segment, direction ignored, sorted: what ends up on paper."""
    found = []
    for stroke in strokes:
        for a, b in itertools.pairwise(stroke.points):
            ra = (round(a[0], 6), round(a[1], 6))
            rb = (round(b[0], 6), round(b[1], 6))
            found.append((min(ra, rb), max(ra, rb)))
    return sorted(found)


def test_ordering_keeps_every_stroke_and_never_travels_further_than_the_natural_order() -> None:
    rng = random.Random(11)
    machine = Machine.plotter(travel=(300, 300))
    for _ in range(40):
        rows, cols = rng.randint(1, 6), rng.randint(1, 6)
        sheet = machine.fit(rows, cols)
        strokes = marker_strokes(sheet) + grid_strokes(sheet)
        for cell in rng.sample(range(rows * cols), rng.randint(0, rows * cols)):
            strokes += mark_strokes(sheet, cell, rng.choice("XO"), rng.choice(["shapes", "dot"]))
        rng.shuffle(strokes)
        ordered = order_strokes(strokes)
        assert segments(ordered) == segments(strokes)
        natural = plan_strokes(strokes, machine, ordered=False)
        planned = plan_strokes(strokes, machine)
        assert planned.pen_up_mm <= natural.pen_up_mm + 1e-9
        assert planned.pen_down_mm == pytest.approx(natural.pen_down_mm)


def test_two_opt_untangles_a_crossing_route() -> None:
    # Nearest neighbour from the left takes a, then the near end of c, then b: a crossing 2-opt removes.
    a = Stroke(((0.0, 0.0), (1.0, 0.0)), "grid")
    b = Stroke(((10.0, 0.0), (11.0, 0.0)), "grid")
    c = Stroke(((2.0, 5.0), (9.0, 5.0)), "grid")
    route = order_strokes([a, b, c])
    travel = sum(distance(p.end, q.start) for p, q in itertools.pairwise(route))
    assert travel <= distance((1, 0), (2, 5)) + distance((9, 5), (10, 0)) + 1e-9


def test_marks_have_the_shapes_the_issue_asks_for() -> None:
    sheet = Sheet(3, 3)
    x_strokes = mark_strokes(sheet, 4, "X")
    assert len(x_strokes) == 2 and all(len(s.points) == 2 for s in x_strokes)
    (o_stroke,) = mark_strokes(sheet, 4, "O")
    assert o_stroke.circle is not None and o_stroke.start == o_stroke.end  # a closed ring
    centre = sheet.cell_centre(4)
    assert all(distance(p, centre) == pytest.approx(o_stroke.circle.radius) for p in o_stroke.points)
    dot = mark_strokes(sheet, 4, "O", "dot")
    assert all(distance(p, centre) <= 2 for s in dot for p in s.points)
    with pytest.raises(RobotError, match="unknown mark style"):
        mark_strokes(sheet, 4, "X", "star")


# paper ---------------------------------------------------------------------------------------
def test_darkness_tells_a_shaded_square_from_an_empty_one_and_the_svg_is_well_formed() -> None:
    sheet = Sheet(3, 3)
    paper = Paper(sheet)
    paper.draw_strokes(marker_strokes(sheet) + grid_strokes(sheet))
    paper.draw_strokes(shade_strokes(sheet, 0), by="human")
    paper.draw_strokes(mark_strokes(sheet, 4, "X"), by="human")
    assert paper.darkness(sheet.cell_centre(0), 4.0) > 0.5
    assert paper.darkness(sheet.cell_centre(8), 4.0) == 0.0
    assert 0 < paper.darkness(sheet.cell_centre(4), 4.0) < 0.5  # the crossing of an X, not a shaded square
    root = ET.fromstring(paper.svg())
    lines = root.findall("{http://www.w3.org/2000/svg}polyline")
    assert len(lines) == len(paper.ink)
    assert {line.get("data-by") for line in lines} == {"robot", "human"}


def test_the_text_picture_shows_the_ink_where_it_is() -> None:
    sheet = Sheet(3, 3)
    paper = Paper(sheet)
    assert paper.text_picture(30).strip() == ""
    paper.draw(((0.0, 0.0), (sheet.width, 0.0)))  # along the top edge
    first, *rest = paper.text_picture(30).split("\n")
    assert len(first) == 30 and set(first) == {"⠉"}  # the top dot of both columns of every character
    assert all(line.strip() == "" for line in rest)


# judging what a sensor read --------------------------------------------------------------------
def test_judge_over_every_3x3_position_accepts_exactly_one_sure_new_mark() -> None:
    checked = 0
    for board in reachable_3x3():
        if board.is_over:
            continue
        mark = board.turn
        assert mark is not None
        known = "".join(m or "." for m in board.cells)
        empty = board.legal_moves
        for cell in empty:
            seen = known[:cell] + mark + known[cell + 1:]
            assert judge(SheetReading(cell_readings(seen)), board, mark) == cell
            shaded = known[:cell] + "?" + known[cell + 1:]
            assert judge(SheetReading(cell_readings(shaded)), board, mark) == cell
            unsure = list(cell_readings(seen))
            unsure[cell] = CellReading(mark, 0.6)
            assert "not sure" in str(judge(SheetReading(tuple(unsure)), board, mark))
            other = "O" if mark == "X" else "X"
            wrong = known[:cell] + other + known[cell + 1:]
            assert "looks like an" in str(judge(SheetReading(cell_readings(wrong)), board, mark))
            checked += 1
        assert "cannot see a new mark" in str(judge(SheetReading(cell_readings(known)), board, mark))
        if len(empty) >= 2:
            a, b = empty[:2]
            two = list(known)
            two[a] = two[b] = mark
            assert "Too many moves" in str(judge(SheetReading(cell_readings("".join(two))), board, mark))
        taken = [c for c in range(9) if board[c] is not None]
        if taken:
            over = list(known)
            over[taken[0]] = "O" if board[taken[0]] == "X" else "X"
            over[empty[0]] = mark
            assert "already taken" in str(judge(SheetReading(cell_readings("".join(over))), board, mark))
    assert checked == 16167  # every (position, empty cell) pair of the 4,520 unfinished positions


def test_judge_explains_a_sheet_it_cannot_see() -> None:
    lost = SheetReading((), found=False, message="no markers in view.")
    assert judge(lost, Board(), "X") == "I cannot see the sheet: no markers in view. Press again when it is in view."


# whole games ---------------------------------------------------------------------------------
class ScriptedHuman:
    """A human who plays legal moves at random, drawing them on the sim's paper; stops after ``games``."""

    def __init__(self, rng: random.Random, games: int) -> None:
        self.rng = rng
        self.games = games
        self.game: RobotGame | None = None
        self.shown: list[str] = []
        self.starts = 0

    def show(self, text: str) -> None:
        self.shown.append(text)

    def wait_for_human(self, prompt: str, *, move: bool = False) -> bool:
        assert self.game is not None
        if prompt.startswith("Put a fresh sheet"):
            self.starts += 1
            return self.starts <= self.games
        board = self.game.match.board
        cell = self.rng.choice(board.legal_moves)
        mark = board.turn
        assert mark is not None
        self.game.robot.paper.draw_strokes(mark_strokes(self.game.sheet, cell, mark), by="human")  # type: ignore[attr-defined]
        return True


class PaperReader:
    """A perfect sensor of the sim's paper: which cells hold robot or human ink (shape from the ink kind)."""

    def __init__(self, paper: Paper) -> None:
        self.paper = paper

    def read(self, board: Board) -> SheetReading:
        sheet = self.paper.sheet
        strokes: dict[int, list[str]] = {}
        for ink in self.paper.ink:
            cell = sheet.cell_at(ink.points[0])
            if ink.kind in ("X", "O") and cell is not None:
                strokes.setdefault(cell, []).append(ink.kind)
        cells = [CellReading("", 1.0)] * (sheet.rows * sheet.cols)
        for cell, kinds in strokes.items():  # half an X (one stroke) is a mark of no clear shape
            cells[cell] = CellReading("?", 0.5) if kinds == ["X"] else CellReading(kinds[0], 1.0)
        return SheetReading(tuple(cells))


@pytest.mark.parametrize("opponent", ["easy", "medium", "hard", "perfect"])
def test_whole_games_on_the_sim_at_every_difficulty_are_recorded_once(opponent: str, tmp_path: Path) -> None:
    store = open_store(tmp_path / "scores.db")
    machine = Machine.plotter()
    sheet = machine.fit(3, 3)
    paper = Paper(sheet)
    robot = SimRobot(machine, paper)
    human = ScriptedHuman(random.Random(opponent), games=4)
    match = Match(opponent, first="alternate", seed=opponent, store=store)
    game = RobotGame(match, robot, PaperReader(paper), human, sheet)
    human.game = game
    finished = 0
    while game.play_game():
        finished += 1
        robot_cells = {sheet.cell_at(ink.points[0]) for ink in paper.ink if ink.by == "robot" and ink.kind in "XO"}
        robot_mark = match.mark_of(1)
        assert robot_cells == {c for c in range(9) if match.board[c] == robot_mark}
        paper.clear()
    assert finished == 4
    assert store.count_games() == 4
    tally = store.scores()
    against = tally.opponents[opponent]
    assert against.wins + against.losses + against.draws == 4
    if opponent in ("hard", "perfect"):
        assert tally.opponents[opponent].wins == 0  # the person never beats a perfect player
    store.close()


def test_the_robot_refuses_two_people() -> None:
    sheet = Sheet(3, 3)
    paper = Paper(sheet)
    with pytest.raises(RobotError, match="computer player"):
        RobotGame(Match("person"), SimRobot(Machine.plotter(), paper), PaperReader(paper),
                  ScriptedHuman(random.Random(0), 1), sheet)


# the commands --------------------------------------------------------------------------------
def run(argv: list[str], typed: list[str] | None = None) -> tuple[int, str]:
    out = io.StringIO()
    lines = iter(typed or [])

    def read_line(prompt: str) -> str:
        out.write(prompt)
        return next(lines)  # StopIteration would be a test bug; EOF is tested on its own

    from noughts.cli import robot as app

    if typed is None:
        return main(argv, out), out.getvalue()
    return app.play_main(argv, out, read_line), out.getvalue()


def test_noughts_robot_plays_a_game_in_the_terminal_and_keeps_it(tmp_path: Path) -> None:
    db = tmp_path / "scores.db"
    typed = ["h", "", "b2", "zz", "b2", "a1", "c3", "a3", "c1", "", "q"]
    code, shown = run(["--db", str(db), "--keep", str(tmp_path / "kept.json"), "--seed", "3", "--first", "me"], typed)
    assert code == 0
    assert "You are X and move first; Hard is O." in shown
    assert "'zz' is not a cell" in shown and "b2 is taken by X: choose an empty square." in shown
    assert "⣿" in shown  # the paper, drawn in Braille
    store = open_store(db)
    assert "Hard (O) wins along the bottom row a3–c3. You lose." in shown
    assert "You: 0 · Hard: 1 · draws: 0" in shown
    assert store.count_games() == 1  # the second game was stopped before a move: not counted
    store.close()


def test_end_of_input_stops_cleanly() -> None:
    console = TerminalKeyboard(read_line=lambda prompt: (_ for _ in ()).throw(EOFError()), out=io.StringIO())
    assert console.wait_for_human("Your turn: then press") is False


def test_paper_writes_an_svg_of_a_position_and_refuses_other_files(tmp_path: Path) -> None:
    target = tmp_path / "sheet.svg"
    code, shown = run(["paper", "X.O/.X./..O", "--out", str(target)])
    assert code == 0 and "Wrote" in shown
    root = ET.fromstring(target.read_text(encoding="utf-8"))
    assert len(root.findall("{http://www.w3.org/2000/svg}polyline")) == 5 + 4 + 2 * 2 + 2  # markers, grid, 2 X, 2 O
    assert main(["paper", "--out", str(tmp_path / "sheet.txt")], io.StringIO()) == 2
    assert main(["paper", "X.O/.X./XXO", "--out", str(target)], io.StringIO()) == 2  # impossible position


def test_preview_prints_the_plan_and_compares_it_with_the_natural_order() -> None:
    code, shown = run(["preview"])
    assert code == 0
    assert "Drawing the sheet (markers and grid)" in shown
    assert shown.count(" marker ") == 5 and shown.count(" grid ") == 4
    code, shown = run(["preview", "X../.O./...", "--move", "c3"])
    assert code == 0 and "X in c3" in shown and len(re.findall(r"\d\. X ", shown)) == 2
    assert main(["preview", "X../.O./...", "--move", "a1"], io.StringIO()) == 2  # taken


def test_preview_plans_for_the_machine_of_config(tmp_path: Path) -> None:
    config = tmp_path / "robot.toml"
    config.write_text("[machine]\ntravel = [90, 90]\ndraw_speed = 5\n", encoding="utf-8")
    code, small = run(["preview", "X../.O./...", "--move", "c3", "--config", str(config)])
    assert code == 0 and "X in c3 on a 90 × 90 mm sheet" in small
    code, default = run(["preview", "X../.O./...", "--move", "c3"])
    assert code == 0 and "X in c3 on a 120 × 120 mm sheet" in default
    seconds = [int(re.search(r"about (\d+) s", shown).group(1)) for shown in (small, default)]  # type: ignore[union-attr]
    assert seconds[0] > seconds[1]  # drawn at 5 mm/s, not the built-in plotter's speed


def test_the_sheet_svg_has_the_robot_marks_of_a_position() -> None:
    svg = sheet_svg(Sheet(3, 3), ["X", "", "O"])
    assert svg.count("<polyline") == 5 + 4 + 2 + 1


def test_a_stopped_game_is_kept_and_resumed_and_a_damaged_keep_file_is_a_message(tmp_path: Path) -> None:
    keep = tmp_path / "robot-game.json"
    db = tmp_path / "scores.db"
    code, shown = run(["--db", str(db), "--keep", str(keep), "--seed", "3", "--first", "me", "--opponent", "hard"],
                      ["", "b2", "q"])
    assert code == 0 and "The game is kept: 'noughts robot --resume'" in shown
    assert keep.exists()
    code, shown = run(["--db", str(db), "--keep", str(keep), "--resume"], ["a1", "c1", "q"])
    assert code == 0 and "Carrying on: You are X and move first; Hard is O." in shown
    assert "You played a1." in shown and "Hard (O) wins" in shown
    assert not keep.exists()  # the finished game is in the store, not kept
    store = open_store(db)
    assert store.count_games() == 1 and store.games()[0].record.startswith("b2")
    store.close()
    assert main(["--keep", str(keep), "--resume", "--no-scores"], io.StringIO()) == 2  # nothing to resume
    keep.write_text("{not json", encoding="utf-8")
    assert main(["--keep", str(keep), "--resume", "--no-scores"], io.StringIO()) == 2


def test_calibrate_measures_the_light_on_the_robots_markers_and_records_it(tmp_path: Path) -> None:
    from noughts.cli import robot as app
    from noughts.robot.config import load_config

    config = tmp_path / "robot.toml"
    out = io.StringIO()
    assert app.calibrate_main(["--config", str(config)], out, lambda prompt: "") == 0
    light = load_config(config).section("light")
    assert light["white"] > 60 and light["black"] < 40 and light["black"] < light["threshold"] < light["white"]
    assert f"Recorded in {config}" in out.getvalue()


def test_calibrate_the_camera_saves_what_it_saw(tmp_path: Path) -> None:
    from noughts.cli import robot as app

    saw = tmp_path / "view.png"
    out = io.StringIO()
    assert app.calibrate_main(["--sense", "camera", "--saw", str(saw)], out, lambda prompt: "") == 0
    assert "reads .../.../..." in out.getvalue() and saw.stat().st_size > 1000


def test_calibrating_the_camera_counts_doubt_as_robot_sense_does(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # a sure mark of no clear shape is a question, in calibrate as in `robot sense` and its picture
    from noughts.cli import robot as app
    from noughts.robot.backend import CellReading, SheetReading
    from noughts.robot.rig import PaperCamera

    cells = [CellReading("", 0.99)] * 9
    cells[0], cells[1] = CellReading("X", 0.6), CellReading("?", 0.99)
    monkeypatch.setattr(PaperCamera, "read", lambda self, board: SheetReading(tuple(cells)))
    out = io.StringIO()
    assert app.calibrate_main(["--sense", "camera", "--saw", str(tmp_path / "v.png")], out, lambda prompt: "") == 1
    assert "reads ??./.../..., unsure of 2 squares" in out.getvalue()


def test_bad_settings_are_a_message_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "robot.toml"
    config.write_text('backend = "lathe"\n', encoding="utf-8")
    assert main(["--config", str(config)], io.StringIO()) == 2
    assert "backend must be one of sim, grbl, ebb, ev3" in capsys.readouterr().err
    config.write_text("[machine]\ntravel = [50, 50]\n", encoding="utf-8")
    assert main(["--config", str(config), "--opponent", "easy", "--no-scores"], io.StringIO()) == 2
    assert "does not fit this machine" in capsys.readouterr().err
    assert main(["--backend", "ev3", "--port", "usb0", "--no-scores"], io.StringIO()) == 2
    assert "the agent's TCP port, a number" in capsys.readouterr().err
    assert main(["--backend", "grbl", "--port", str(tmp_path / "no-such-port"), "--no-scores"], io.StringIO()) == 2
    assert "noughts robot:" in capsys.readouterr().err


class Unplugged(SimRobot):
    """A sim robot whose cable comes out after ``after`` strokes of its next drawing."""

    def __init__(self, machine: Machine, paper: Paper, after: int) -> None:
        super().__init__(machine, paper)
        self.after = after

    def draw(self, plan: Any) -> None:
        from noughts.robot.backend import RobotDisconnected
        from noughts.sheet.strokes import PenPlan

        if self.after >= 0:
            done = PenPlan(plan.strokes[:self.after], plan.start, plan.finish, 0, 0, 0, 0)
            super().draw(done)
            self.after = -1
            raise RobotDisconnected("the USB cable came out")
        super().draw(plan)


@pytest.mark.parametrize(("after", "redrawn"), [(0, True), (1, True), (2, False)])
def test_a_lost_robot_reconnects_reads_the_sheet_and_draws_only_what_is_missing(after: int, redrawn: bool) -> None:
    machine = Machine.plotter()
    sheet = machine.fit(3, 3)
    paper = Paper(sheet)
    human = ScriptedHuman(random.Random(0), games=1)
    match = Match("easy", first="computer", seed=1)
    game = RobotGame(match, Unplugged(machine, paper, after=-1), PaperReader(paper), human, sheet,
                     reconnect=lambda: SimRobot(machine, paper))
    human.game = game
    match.new_game()
    game.draw_sheet()
    game.robot = Unplugged(machine, paper, after=after)  # the X has two strokes: the cable goes before, between, after
    game.computer_turn()
    (cell,) = match.game.moves if match.game else ()
    x_strokes = [ink for ink in paper.ink if ink.kind == "X" and sheet.cell_at(ink.points[0]) == cell]
    assert len(x_strokes) == (after + 2 if redrawn else 2)
    said = "drawing my X in" if redrawn else "is on the sheet already"
    assert said in human.shown[-2]
    assert human.shown[-1].startswith("I played")


def test_files_that_cannot_be_written_are_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such-folder" / "sheet.svg"
    assert main(["paper", "--out", str(missing)], io.StringIO()) == 2
    assert f"noughts robot: {missing}: No such file or directory" in capsys.readouterr().err
    code, shown = run(["--svg", str(missing), "--no-scores", "--keep", str(tmp_path / "k.json"), "--opponent", "easy",
                       "--first", "me"], ["", "b2", "q"])
    assert code == 0 and shown.count("Cannot write") == 1 and "You played b2." in shown


# issue 28: one vocabulary, no silent waits -------------------------------------------------------

def test_the_menu_names_the_opponents_and_says_who_starts_in_the_shared_words(tmp_path: Path) -> None:
    from noughts import players, text

    code, shown = run(["--no-scores", "--keep", str(tmp_path / "kept.json"), "--first", "alternate"], ["m", "q"])
    assert code == 0
    assert f"Choose: e {players.label('easy')}, m {players.label('medium')}, h {players.label('hard')}," in shown
    assert text.who_starts("alternate", other="Medium") in shown
    assert "Who moves first: Take turns (you move first in the first game, then the first move alternates)." in shown


def test_the_bricks_menu_and_scores_name_the_opponents_as_every_menu_does() -> None:
    from noughts import players
    from noughts.robot.brick import ScriptedBrick, brick_menu, high_score_lines

    brick = ScriptedBrick([set(), {"enter"}])
    assert brick_menu(brick, lambda: [], sleep=lambda s: None) == "medium"
    assert [f"{players.label(n)} ({b} button)" for b, n in (("left", "easy"), ("right", "hard"))] == [
        "Easy (left button)", "Hard (right button)"]
    assert "Medium (enter button)" in brick.screens[0] and brick.screens[-1][0] == "Difficulty: Medium"
    assert high_score_lines(0, {})[1] == f"{players.label('medium')} High Score: 0"


def waiting_for_the_thinking_line(console: ScriptedHuman) -> Any:
    """A computer move that takes as long as the test says: until the console has said it is thinking."""

    def run(job: Any) -> int:
        for _ in range(10_000):  # the console's line, not a clock, ends the wait (10 s: a stuck test)
            if any("thinking" in line for line in console.shown):
                break
            time.sleep(0.001)
        return int(job.board.legal_moves[0])

    return run


@pytest.mark.parametrize("slow", [True, False])
def test_the_robot_says_it_is_thinking_only_when_the_move_takes_longer_than_the_shared_delay(
        slow: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts import match as match_module
    from noughts import text

    machine = Machine.plotter()
    sheet = machine.fit(3, 3)
    paper = Paper(sheet)
    human = ScriptedHuman(random.Random(0), games=1)
    match = Match("easy", first="computer", seed=1)
    # a quick reply: a delay it cannot miss; a slow one: a move that waits for the thinking line
    game = RobotGame(match, SimRobot(machine, paper), PaperReader(paper), human, sheet,
                     thinking_after=match_module.THINKING_AFTER if slow else 60.0)
    assert RobotGame(match, SimRobot(machine, paper), PaperReader(paper), human, sheet).thinking_after == 0.3
    human.game = game
    if slow:
        monkeypatch.setattr(match_module.ComputerMove, "run", waiting_for_the_thinking_line(human))
    match.new_game()
    game.computer_turn()
    thinking = text.thinking("Easy")
    if slow:
        assert human.shown == [thinking, "Drawing my X in a1…", "I played a1."]  # the drawing line ends it
    else:
        assert human.shown[-1].startswith("I played") and thinking not in human.shown
    assert len(match.game.moves if match.game else ()) == 1


def test_the_light_sensor_on_a_robot_without_one_is_refused_and_the_command_names_the_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from noughts.errors import SettingError
    from noughts.robot.config import load_config
    from noughts.robot.rig import build_rig
    from noughts.robot.sim.grbl import GrblSimulator
    from noughts.robot.sim.link import serve_socket

    settings = 'backend = "grbl"\nsense = "light"\n[grbl]\nhoming = false\n[machine]\ntravel = [200, 200]\n'
    config = load_config(text=settings)
    (tmp_path / "robot.toml").write_text(settings, encoding="utf-8")
    refused = ("the light sensor rides on the robot: only the ev3 backend has one, not grbl; sense with the camera "
               "or the keyboard instead")
    with serve_socket(GrblSimulator(Paper(config.machine().fit(3, 3)), config.machine())) as link:
        with pytest.raises(SettingError) as caught:
            build_rig(config.with_overrides(grbl__port=link.address), 3, 3,
                      keyboard=TerminalKeyboard(lambda prompt: "q", io.StringIO()), board=Board)
        assert str(caught.value) == refused and caught.value.setting == "sense"
        code = main(["--config", str(tmp_path / "robot.toml"), "--port", link.address, "--no-scores"],
                    io.StringIO())
    assert code == 2
    assert capsys.readouterr().err == f"noughts robot: {refused} (try --sense camera or --sense keyboard)\n"


# a newcomer's robot (issue 29) -----------------------------------------------------------------
class _Typing:
    """Standard input for ``input()``: the lines, then Ctrl-C (``interrupt``) or the end of input."""

    def __init__(self, lines: list[str], interrupt: bool = False) -> None:
        self.lines, self.interrupt = list(lines), interrupt

    def readline(self) -> str:
        if self.lines:
            return self.lines.pop(0) + "\n"
        if self.interrupt:
            raise KeyboardInterrupt
        return ""


@pytest.mark.parametrize("page", ["README.md", "docs/robot.md"])
def test_the_docs_paper_and_preview_examples_run_as_written(page: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import shlex

    monkeypatch.chdir(tmp_path)
    text = (Path(__file__).resolve().parent.parent / page).read_text(encoding="utf-8")
    commands = [re.split(r"\s{2,}|#", line.strip())[0] for line in text.splitlines()
                if re.match(r"\s*noughts robot (paper|preview)\b", line)]
    assert commands
    for command in commands:
        assert main(shlex.split(command)[2:], io.StringIO()) == 0, command


def test_ctrl_c_exits_130_at_a_prompt_and_while_drawing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    monkeypatch.setenv("NOUGHTS_ROBOT_CONFIG", str(tmp_path / "none.toml"))
    argv = ["--no-scores", "--keep", str(tmp_path / "kept.json")]
    monkeypatch.setattr(sys, "stdin", _Typing([], interrupt=True))  # Ctrl-C at the menu
    assert main(argv, io.StringIO()) == 130
    monkeypatch.setattr(sys, "stdin", _Typing(["e", "", "b2"], interrupt=True))  # at the turn after a move
    assert main(argv, io.StringIO()) == 130

    def interrupted(self: SimRobot, plan: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(SimRobot, "draw", interrupted)
    monkeypatch.setattr(sys, "stdin", _Typing(["e", ""]))  # Ctrl-C while the grid is drawn
    assert main(argv, io.StringIO()) == 130
    capsys.readouterr()


def test_a_game_stopped_before_its_sheet_is_drawn_is_not_said_to_be_kept(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def lost(self: SimRobot) -> None:
        raise RobotError("the robot is not there")

    monkeypatch.setattr(SimRobot, "home", lost)
    keep = tmp_path / "kept.json"
    out = io.StringIO()
    from noughts.cli import robot as app

    with pytest.raises(RobotError):
        app.play_main(["--no-scores", "--keep", str(keep), "--opponent", "easy"], out, lambda prompt: "")
    assert "kept" not in out.getvalue() and not keep.exists()


def test_robot_sense_json_goes_to_stdout_however_sure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    import cv2
    import numpy as np

    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((480, 640, 3), 255, np.uint8))  # no sheet in it
    out = io.StringIO()
    assert main(["sense", str(blank), "--json"], out) == 1
    assert json.loads(out.getvalue())["found"] is False
    assert capsys.readouterr().err == ""


def test_calibrate_has_its_own_help_and_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"], io.StringIO())
    assert "noughts robot calibrate" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        main(["calibrate", "--help"], io.StringIO())
    shown = capsys.readouterr().out
    assert shown.startswith("usage: noughts robot calibrate") and "--opponent" not in shown


def test_calibrating_the_sim_leaves_the_persons_configuration_as_it_was(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts.cli import robot as app

    real = tmp_path / "robot.toml"
    real.write_text('sense = "light"\n', encoding="utf-8")  # the sim backend, as a newcomer has it
    monkeypatch.setenv("NOUGHTS_ROBOT_CONFIG", str(real))
    out = io.StringIO()
    assert app.calibrate_main([], out, lambda prompt: "") == 0
    assert real.read_text(encoding="utf-8") == 'sense = "light"\n'
    recorded = Path(re.findall(r"Recorded in (\S+)\.", out.getvalue())[0])
    assert recorded != real and "[light]" in recorded.read_text(encoding="utf-8")
    assert f"{real} is left as it was" in out.getvalue()
    recorded.unlink()


def test_a_kept_game_is_kept_for_its_machine_and_said_before_it_goes_on(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOUGHTS_DB", str(tmp_path / "noughts.db"))
    monkeypatch.setenv("NOUGHTS_ROBOT_CONFIG", str(tmp_path / "none.toml"))
    code, shown = run(["--no-scores", "--opponent", "hard", "--first", "me"], ["", "b2", "q"])
    kept = list(tmp_path.glob("robot-game-*.json"))
    assert code == 0 and len(kept) == 1 and str(kept[0]) in shown
    grbl = tmp_path / "grbl.toml"
    grbl.write_text('backend = "grbl"\n', encoding="utf-8")
    with pytest.raises(RobotError, match="no unfinished robot game kept for the grbl robot"):
        run(["--no-scores", "--resume", "--config", str(grbl)], [])
    with pytest.raises(RobotError, match=r"was played on the sim robot, not the grbl robot on /dev/ttyUSB0 \("):
        run(["--no-scores", "--resume", "--config", str(grbl), "--keep", str(kept[0])], [])
    code, shown = run(["--no-scores", "--resume"], ["q"])
    assert code == 0
    said = re.search(r"The kept game: [.XO]{3}/[.O]X[.O]/[.XO]{3} after 2 moves, kept \d{4}-\d\d-\d\d \d\d:\d\d "
                     r"on the sim robot\.", shown)
    assert said is not None and said.start() < shown.index("Carrying on")


@pytest.mark.parametrize(("settings", "said"), [
    ("[machine]\ntravel = [nan, nan]", "machine.travel must be a number from 0.1 to 10000, not nan"),
    ("[machine]\ntravel = [inf, 200]", "machine.travel must be a number from 0.1 to 10000, not inf"),
    ("[machine]\npen_dwell = 1e300", "machine.pen_dwell must be a number from 0 to 60, not 1e+300"),
    ("[grbl]\nbaud = -1", "grbl.baud must be a number from 300 to 10000000, not -1"),
    ("[ebb]\npen_up = 150", "ebb.pen_up must be a number from 0 to 100, not 150"),
    ("[ev3]\ndeg_per_mm = [nan, 3]", "ev3.deg_per_mm must be a number from -1000000 to 1000000, not nan"),
    ("[ev3]\nport = 70000", "ev3.port must be a number from 1 to 65535, not 70000"),
])
def test_every_number_of_the_robot_configuration_is_checked_for_range(settings: str, said: str) -> None:
    from noughts.robot.config import ConfigError, load_config

    with pytest.raises(ConfigError) as caught:
        load_config(text=settings)
    assert str(caught.value) == said


@pytest.mark.parametrize(("content", "said"), [
    (b'backend = "sim\xff"\n', "is not UTF-8 text"),
    (b"a = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "nests arrays or tables too deeply"),
])
def test_a_configuration_that_is_not_toml_text_is_a_sentence(content: bytes, said: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "robot.toml"
    config.write_bytes(content)
    assert main(["--config", str(config)], io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"noughts robot: the robot configuration {config} ") and said in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(("page", "items"), [("docs/robot.md", [5, 5]), ("docs/strong.md", [5, 14])])
def test_the_numbered_lists_of_the_pages_run_on_as_the_site_shows_them(page: str, items: list[int]) -> None:
    # Python-Markdown (mkdocs) takes 4 spaces for a list item's next lines and a blank line before an
    # item that follows paragraphs: with fewer, a list restarts at 1 or its items become text.
    from html.parser import HTMLParser

    import markdown

    class Lists(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.open: list[list[int]] = []
            self.numbered: list[list[int]] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag in ("ol", "ul"):
                self.open.append([0])
                if tag == "ol" and len(self.open) == 1:
                    self.numbered.append(self.open[-1])
            elif tag == "li" and self.open:
                self.open[-1][0] += 1

        def handle_endtag(self, tag: str) -> None:
            if tag in ("ol", "ul") and self.open:
                self.open.pop()

    text = (Path(__file__).resolve().parent.parent / page).read_text(encoding="utf-8")
    lists = Lists()
    lists.feed(markdown.markdown(text, extensions=["tables"]))
    assert [count for count, in lists.numbered] == items
