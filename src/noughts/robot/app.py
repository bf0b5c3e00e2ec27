"""Play on paper with a pen robot, draw the sheet, preview the pen's plan, read a photo, calibrate.

``noughts robot`` runs these; :mod:`noughts.cli.robot` reads its options and the configuration
file's, and hands over plain values.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from noughts import text
from noughts.board import Board
from noughts.errors import NoughtsError
from noughts.match import Match
from noughts.robot.backend import CellReading, LightProbe, SheetReading
from noughts.robot.config import RobotConfig, default_config_path, save_setting
from noughts.robot.game import Console, RobotGame, load_kept
from noughts.robot.rig import Rig, SimDesk, build_rig
from noughts.sheet.geometry import Machine, RobotError, Sheet
from noughts.sheet.paper import Paper, sheet_svg
from noughts.sheet.strokes import grid_strokes, mark_strokes, marker_strokes, plan_strokes

if TYPE_CHECKING:
    from noughts.store import Store

__all__ = ["BACKENDS", "SENSES", "TerminalKeyboard", "calibrate", "keep_path", "play", "preview_plan", "read_photo",
           "write_gcode", "write_sheet"]

BACKENDS = ("sim", "grbl", "ebb", "ev3")
SENSES = ("keyboard", "camera", "light")
SEED_MENU = {"e": "easy", "m": "medium", "h": "hard"}  # the seed's three difficulties, its brick's three buttons


def _sheet_for(board: Board) -> Sheet:
    return Machine.plotter().fit(board.rows, board.cols)


def write_sheet(board: Board, target: str | Path, out: TextIO, *, marks: str = "shapes") -> int:
    """The sheet as the robot draws it, with ``board``'s marks, written to ``target`` (.svg or .png)."""
    sheet = _sheet_for(board)
    svg = sheet_svg(sheet, [mark or "" for mark in board.cells], style=marks)
    target = Path(target)
    if target.suffix.lower() == ".svg":
        target.write_text(svg + "\n", encoding="utf-8")
    elif target.suffix.lower() == ".png":
        from noughts.robot.rig import require

        require("cv2", "a PNG of the sheet")
        from noughts.robot.sim.photos import render_paper
        from noughts.sheet.camera import save_picture

        paper = Paper(sheet)
        paper.draw_strokes(marker_strokes(sheet) + grid_strokes(sheet))
        for cell, mark in enumerate(board.cells):
            if mark is not None:
                paper.draw_strokes(mark_strokes(sheet, cell, mark, marks))
        save_picture(render_paper(paper, 8.0, border_mm=(0, 0, 0, 0)), target)
    else:
        raise RobotError(f"the sheet is written as .svg or .png, not {target.name!r}")
    print(f"Wrote {target} ({sheet.width:g} × {sheet.height:g} mm).", file=out)
    return 0


def preview_plan(board: Board, out: TextIO, *, move: str | None = None, marks: str = "shapes",
                 config: RobotConfig | None = None) -> int:
    """The pen's whole plan for drawing the sheet, or ``move``'s mark in ``board``, without moving anything,
    on ``config``'s machine (default: the built-in plotter)."""
    machine = config.machine() if config is not None else Machine.plotter()
    sheet = machine.fit(board.rows, board.cols)
    if move is None:
        what, strokes, start = "the sheet (markers and grid)", marker_strokes(sheet) + grid_strokes(sheet), (0.0, 0.0)
    else:
        cell = board.parse_cell(move)
        board.play(cell)  # refuses an illegal move (or a finished game) with the reason
        mark = board.turn or "X"
        what, strokes = f"{mark} in {board.cell_name(cell)}", mark_strokes(sheet, cell, mark, marks)
        start = (sheet.width, 0.0)  # the robot waits parked right of the sheet
    plan = plan_strokes(strokes, machine, start, finish=start)
    natural = plan_strokes(strokes, machine, start, ordered=False, finish=start)
    print(f"Drawing {what} on a {sheet.width:g} × {sheet.height:g} mm sheet:", file=out)
    for number, stroke in enumerate(plan.strokes, 1):
        (x0, y0), (x1, y1) = stroke.start, stroke.end
        print(f"  {number:3}. {stroke.kind:6} ({x0:6.1f}, {y0:6.1f}) → ({x1:6.1f}, {y1:6.1f})  "
              f"{stroke.length:6.1f} mm, {len(stroke.points) - 1} segment{'s' * (len(stroke.points) != 2)}", file=out)
    print(plan.describe() + f" (pen-up travel in drawing order would be {natural.pen_up_mm:.0f} mm).", file=out)
    return 0


def write_gcode(board: Board, target: str | Path, out: TextIO, config: RobotConfig, *, move: str | None = None,
                marks: str = "shapes") -> int:
    """The G-code the grbl backend streams, byte for byte, written to ``target`` (``-``: printed to
    ``out``, line for line): the sheet with ``board``'s marks, or (``move``) the mark of that move,
    for ``config``'s machine and pen."""
    from noughts.robot.backends.grbl import GrblPen, gcode_program

    machine = config.machine()
    sheet = machine.fit(board.rows, board.cols)
    grbl = config.section("grbl")
    pen = GrblPen(grbl["lift"], grbl["down_s"], grbl["z_down"], grbl["z_up"])  # as the rig makes it
    if move is None:
        what, start = "the sheet", (0.0, 0.0)  # as after homing
        strokes = marker_strokes(sheet) + grid_strokes(sheet)
        for cell, mark in enumerate(board.cells):
            if mark is not None:
                strokes += mark_strokes(sheet, cell, mark, marks)
    else:
        cell = board.parse_cell(move)
        mark = board.turn or "X"
        board.play(cell)  # refuses an illegal move (or a finished game) with the reason
        what, strokes = f"{mark} in {board.cell_name(cell)}", mark_strokes(sheet, cell, mark, marks)
        start = (sheet.width, 0.0)  # the robot waits parked right of the sheet
    program = gcode_program(plan_strokes(strokes, machine, start), machine, pen)
    if str(target) == "-":  # the program alone, so it can be piped or read
        out.write("".join(line + "\n" for line in program))
        return 0
    Path(target).write_text("".join(line + "\n" for line in program), encoding="ascii")
    print(f"Wrote {target}: {len(program)} lines of G-code drawing {what} ({pen.lift} pen).", file=out)
    return 0


class TerminalKeyboard:
    """The ``keyboard`` sense in a terminal: the human types the square they played at the prompt.

    It is both the console (``show``, ``wait_for_human``) and the sensor (``read`` returns the typed
    square as a certain reading). ``on_move`` lets the sim draw the human's mark on its paper.
    """

    def __init__(self, read_line: Callable[[str], str] = input, out: TextIO = sys.stdout,
                 on_move: Callable[[int, str], None] | None = None) -> None:
        self.read_line = read_line
        self.out = out
        self.on_move = on_move
        self.typed: str | None = None

    def show(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def wait_for_human(self, prompt: str, *, move: bool = False) -> bool:
        text = prompt.replace("then press", "then type the square (like b2 or 5) and Enter") \
            if move else prompt.replace("press", "press Enter")
        try:
            typed = self.read_line(f"{text} (q stops) ").strip()
        except EOFError:
            print(file=self.out)
            return False
        except KeyboardInterrupt:  # Ctrl-C is one exit (130) at a prompt and while drawing
            print(file=self.out)
            raise
        if typed.lower() in ("q", "quit", "exit"):
            return False
        self.typed = typed
        return True

    def read(self, board: Board) -> SheetReading:
        """The typed square as a reading: the human's mark there, everything else as known.
        A square that cannot be played is asked for again here, as a typing mistake, not a misread."""
        cells = [CellReading(mark or "", 1.0) for mark in board.cells]
        typed, self.typed = self.typed, None
        while True:
            try:
                cell = board.parse_cell(typed or "")
                taken = board[cell]
                if taken is not None:
                    raise NoughtsError(text.cell_taken(board.cell_name(cell), taken))
                break
            except NoughtsError as error:
                if typed:
                    self.show(str(error).rstrip(".") + ".")
                if not self.wait_for_human("Which empty square did you play? Type it"):
                    return SheetReading(tuple(cells))  # nothing new: the game asks again, and q stops there
                typed, self.typed = self.typed, None
        mark = board.turn or ""
        cells[cell] = CellReading(mark, 1.0)
        if self.on_move is not None:
            self.on_move(cell, mark)
        return SheetReading(tuple(cells))


def _choose_opponent(console: Console, store: Store | None, board: Board) -> str | None:
    """The seed's menu: easy, medium or hard, the high scores, or quit (on the brick, its buttons)."""
    from noughts.robot.brick import BrickConsole, brick_menu, high_score_lines

    def high_scores() -> list[str]:
        numbers = store.scores().on((board.rows, board.cols, board.k)) if store is not None else None
        return high_score_lines(numbers.run, numbers.high) if numbers is not None else ["Scores are off."]

    if isinstance(console, BrickConsole):
        return brick_menu(console.brick, high_scores)
    assert isinstance(console, TerminalKeyboard | SimDesk)
    keyboard = console if isinstance(console, TerminalKeyboard) else console.console
    choices = ", ".join(f"{key} {text.opponent_label(name)}" for key, name in SEED_MENU.items())
    while True:
        if not keyboard.wait_for_human(f"Choose: {choices}, s high scores — then press"):
            return None
        choice = (keyboard.typed or "").strip().lower()[:1]
        keyboard.typed = None
        if choice in SEED_MENU:
            return SEED_MENU[choice]
        if choice == "s":
            keyboard.show("\n".join(high_scores()))
        else:
            keyboard.show("Type e, m, h or s (or q to stop).")


def keep_path(keep: str | Path | None = None, config: RobotConfig | None = None) -> Path:
    """Where the game in play is kept: ``keep``, else robot-game-IDENTITY.json beside the default
    database, one for each machine (:meth:`RobotConfig.identity`; the defaults' without ``config``)."""
    if keep:
        return Path(keep).expanduser()
    from noughts.robot.config import load_config
    from noughts.store.sqlite import default_path

    return default_path().with_name(f"robot-game-{(config or load_config()).identity()}.json")


def play(config: RobotConfig, out: TextIO, read_line: Callable[[str], str] = input, *, rows: int = 3,
         cols: int = 3, k: int | None = None, seed: int | str | None = None, db: str | None = None,
         scores: bool = True, resume: bool = False, keep: str | Path | None = None,
         svg: str | None = None, resume_with: str | None = None) -> int:
    """Games on paper until the person stops: a new match on a rows×cols grid, or with ``resume``
    the game kept at ``keep``; ``svg``: the paper is also written there after every move.
    ``resume_with``: how the person carries on a game left unfinished (the command names its flag)."""
    game_settings = config.section("game")
    keep = keep_path(keep, config)
    machine = {"identity": config.identity(), "described": config.describe()}
    console = TerminalKeyboard(read_line, out)
    store = None
    if scores:
        from noughts.store import open_store

        store = open_store(db)
        for notice in store.notices:
            console.show(notice)
    rig: Rig | None = None
    try:
        kept = load_kept(keep, store) if resume else None
        if resume and kept is None:
            raise RobotError(f"there is no unfinished robot game kept for {machine['described']} in {keep}")
        if kept is not None:  # say which game it is, and carry it on only on the machine it was drawn on
            made_on = kept[1]["machine"]
            if made_on.get("identity", machine["identity"]) != machine["identity"]:
                raise RobotError(text.robot_kept_elsewhere(str(keep), made_on.get("described", "another machine"),
                                                           machine["described"]))
            kept_game = kept[0].game
            console.show(text.robot_kept_game(str(kept[0].board), len(kept_game.moves) if kept_game else 0,
                                              kept[1]["saved"], made_on.get("described", machine["described"])))
        board = kept[0].start if kept is not None else Board(rows, cols, k)
        style = kept[1]["style"] if kept is not None else game_settings["marks"]
        match: Match | None = kept[0] if kept is not None else None
        rig = build_rig(config, board.rows, board.cols, keyboard=console,
                        board=lambda: match.board if match is not None else board)
        paper = rig.paper
        sheet = rig.sheet

        def write_svg() -> None:
            """The paper as the robot knows it, to ``svg``: the sim's paper model, else the sheet
            redrawn from the game (a real machine's paper cannot be asked)."""
            nonlocal svg
            if not svg:
                return
            known = paper
            if known is None:
                assert match is not None
                known = Paper(sheet)
                _redraw(known, match, style)
            try:
                Path(svg).write_text(known.svg() + "\n", encoding="utf-8")
            except OSError as error:  # a game is worth more than its picture: say so, play on
                console.show(f"Cannot write {svg} ({error.strerror or error}); the game goes on without it.")
                svg = None

        if paper is not None:
            sim_paper = paper

            def show_paper(robot: object) -> None:
                console.show(sim_paper.text_picture())
                write_svg()

            rig.robot.on_change = show_paper  # type: ignore[attr-defined]
        if match is None:
            opponent = game_settings["opponent"] or _choose_opponent(rig.console, store, board)
            if opponent is None:
                return 0
            match = Match(opponent, first=game_settings["first"], rows=board.rows, cols=board.cols, k=board.k,
                          seed=seed, store=store)
            rig.console.show(text.who_starts(match.first, other=match.name_of(1)))
        game = RobotGame(match, rig.robot, rig.sensor, rig.console, rig.sheet, style=style, keep=keep,
                         reconnect=rig.reconnect, machine=machine)
        game.on_step = lambda _game: write_svg()  # after every move: the last (winning) one draws nothing more
        resume = game.kept = kept is not None  # a kept game stays kept until it is over
        if resume:
            console.show(f"Carrying on: {match.intro()}")
            if paper is not None:  # the sim's sheet went with the last process: put back what was on it
                _redraw(paper, match, style)
                show_paper(rig.robot)
            else:
                write_svg()
        try:
            while game.play_game(resume=resume):
                resume = False
                if paper is not None:
                    paper.clear()
                console.show(match.tally_text())
        except KeyboardInterrupt:
            rig.robot.stop()
            raise
        finally:
            if game.kept and match.game is not None and not match.game_over and not match.abandoned:
                console.show(text.robot_game_kept(str(keep), resume_with))
    finally:
        if rig is not None:
            rig.close()
        if store is not None:
            store.close()
    return 0


def _redraw(paper: Paper, match: Match, style: str) -> None:
    sheet = paper.sheet
    paper.draw_strokes(marker_strokes(sheet) + grid_strokes(sheet))
    for cell, mark in enumerate(match.board.cells):
        if mark is not None:
            robot_mark = not match.seats[match.seat_of(mark)].is_person
            paper.draw_strokes(mark_strokes(sheet, cell, mark, style if robot_mark else "shapes"),
                               by="robot" if robot_mark else "human")


def calibrate(config: RobotConfig, out: TextIO, read_line: Callable[[str], str] = input, *,
              path: str | Path | None = None, rows: int = 3, cols: int = 3, k: int | None = None,
              saw: str | Path | None = None) -> int:
    """``noughts robot calibrate``: the light sensor's white and black, measured on the robot's own
    markers and recorded in the configuration file at ``path`` (default: the usual place); with the
    camera, one look at a sheet, saved at ``saw``."""
    if config.sense == "camera":
        return _calibrate_camera(config, out, read_line, rows=rows, cols=cols, k=k, saw=saw)
    target = Path(path).expanduser() if path else default_config_path()
    console = TerminalKeyboard(read_line, out)
    sheet_board = Board(rows, cols, k)
    rig = build_rig(config.with_overrides(sense="keyboard"), sheet_board.rows, sheet_board.cols,
                    keyboard=console, board=lambda: sheet_board)
    try:
        from noughts.robot.sensing.light import calibrate as measure_light

        probe = _light_probe(rig, config)
        if not console.wait_for_human("Put a fresh sheet on the robot, then press to start."):
            return 0
        simulated = rig.paper is not None and not path
        if simulated:  # the sim's readings are not a robot's: never into the person's configuration
            import tempfile

            handle, name = tempfile.mkstemp(prefix="noughts-sim-robot-", suffix=".toml")
            os.close(handle)
            target = Path(name)
        console.show("Drawing the reference markers, then reading bare paper beside them and the markers.")
        game = RobotGame(Match("easy"), rig.robot, rig.sensor, rig.console, rig.sheet)
        game.draw_markers()
        sheet = rig.sheet
        markers = list(sheet.marker_centres())
        left, top, right, bottom = sheet.grid_box
        half = sheet.margin_mm / 2
        white = [((left + right) / 2, top - half), ((left + right) / 2, bottom + half),
                 (left - half, (top + bottom) / 2), (right + half, (top + bottom) / 2)]
        measured = measure_light(probe, white, markers)
        save_setting(target, "light", {"white": round(measured.white, 1), "black": round(measured.black, 1),
                                       "threshold": round(measured.threshold, 1)})
        console.show(f"White paper reads {measured.white:.0f}, ink {measured.black:.0f}: the threshold is "
                     f"{measured.threshold:.0f} (the seed's was 25). Recorded in {target}.")
        if simulated:
            console.show(text.robot_sim_calibration(str(default_config_path())))
    finally:
        rig.close()
    return 0


def _calibrate_camera(config: RobotConfig, out: TextIO, read_line: Callable[[str], str], *, rows: int, cols: int,
                      k: int | None, saw: str | Path | None) -> int:
    """The camera's view: one look at a sheet, saved as a "what I saw" picture, and whether it found
    the sheet and could read every square."""
    from noughts.robot.rig import PaperCamera, require

    require("cv2", "the camera")
    from noughts.sheet.camera import CameraSensor, best_position, save_picture, unsure_cells, what_i_saw

    console = TerminalKeyboard(read_line, out)
    board = Board(rows, cols, k)
    rig = build_rig(config, board.rows, board.cols, keyboard=console, board=lambda: board)
    try:
        if rig.paper is not None:  # the sim: a sheet with its markers and grid to look at
            RobotGame(Match("easy"), rig.robot, rig.sensor, rig.console, rig.sheet).draw_sheet()
        elif not console.wait_for_human("Put a sheet the robot drew under the camera, then press."):
            return 0
        reading = rig.sensor.read(board)
        frame = rig.sensor.last if isinstance(rig.sensor, PaperCamera) else (
            rig.sensor.last_frame if isinstance(rig.sensor, CameraSensor) else None)
        target = Path(saw or "robot-camera-view.png")
        if frame is not None:
            save_picture(what_i_saw(frame, rig.sheet), target)
        if not reading.found:
            console.show(f"The camera cannot find the sheet: {reading.message} What it saw is in {target}.")
            return 1
        doubtful = len(unsure_cells(reading))  # the rule `robot sense` and its picture use
        console.show(f"The camera sees the sheet and reads {best_position(reading, rig.sheet.cols)}"
                     + (f", unsure of {doubtful} squares" if doubtful else "") + f". What it saw is in {target}.")
        return 0 if not doubtful else 1
    finally:
        rig.close()


def _light_probe(rig: Rig, config: RobotConfig) -> LightProbe:
    if rig.paper is not None:
        from noughts.robot.sim.reflectance import PaperLightProbe

        return PaperLightProbe(rig.paper)
    if isinstance(rig.robot, LightProbe):
        return rig.robot
    raise RobotError(f"only a robot with a light sensor (the ev3 backend, or the sim) can calibrate it, "
                     f"not {config.backend}")


def read_photo(photo: str | Path, out: TextIO, *, rows: int = 3, cols: int = 3, as_json: bool = False,
          saw: str | Path | None = None) -> int:
    """``noughts robot sense PHOTO``: the position a photo of a sheet shows, or why it cannot tell."""
    from noughts.robot.rig import require
    from noughts.sheet.camera import sense_photo

    require("cv2", "reading a photo")
    code, said = sense_photo(photo, rows, cols, as_json=as_json, saw=saw)  # the picture from the same reading
    print(said, file=out if code == 0 or as_json else sys.stderr)  # JSON is for programs: stdout, however sure
    if saw and code != 2:  # 2: the photo could not be read or the picture not written (said why)
        print(f"Wrote {saw}.", file=sys.stderr)
    return code
