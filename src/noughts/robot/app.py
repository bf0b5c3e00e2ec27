"""``noughts robot``: play on paper with a pen robot, draw the sheet, preview the pen's plan, read a photo.

::

    noughts robot [--backend sim|grbl|ebb|ev3] [--sense keyboard|camera|light] [--opponent …] [--first …]
                  [--rows R --cols C --k K] [--marks shapes|dot] [--config FILE] [--svg FILE]
    noughts robot paper [POSITION] [--rows R --cols C --k K] [--marks shapes|dot] --out FILE.svg|FILE.png
    noughts robot preview [POSITION] [--move CELL] [--rows R --cols C --k K]
    noughts robot sense PHOTO [--rows R --cols C] [--json]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from noughts import text
from noughts.board import Board
from noughts.errors import NoughtsError
from noughts.match import FIRST_RULES, Match
from noughts.robot.backend import CellReading, LightProbe, SheetReading
from noughts.robot.config import RobotConfig, default_config_path, load_config, save_setting
from noughts.robot.game import SURE, Console, RobotGame, load_kept
from noughts.robot.geometry import Machine, RobotError, Sheet
from noughts.robot.paper import Paper, sheet_svg
from noughts.robot.rig import Rig, SimDesk, build_rig
from noughts.robot.strokes import MARK_STYLES, grid_strokes, mark_strokes, marker_strokes, plan_strokes

if TYPE_CHECKING:
    from noughts.store import Store

__all__ = ["TerminalKeyboard", "build_parser", "load_settings", "main"]

BACKENDS = ("sim", "grbl", "ebb", "ev3")
SENSES = ("keyboard", "camera", "light")
SEED_MENU = {"e": "easy", "m": "medium", "h": "hard"}  # the seed's three difficulties, its brick's three buttons


def _board_options(parser: argparse.ArgumentParser, marks: str | None = "shapes") -> None:
    parser.add_argument("--rows", type=int, default=3, help="rows of the grid (default 3)")
    parser.add_argument("--cols", type=int, default=3, help="columns of the grid (default 3)")
    parser.add_argument("--k", type=int, help="marks in a row that win (default: the shorter side, at most 5)")
    parser.add_argument("--marks", choices=MARK_STYLES, default=marks,
                        help="the robot's marks: real X and O shapes (default), or the seed's dot")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="noughts robot",
        description="A pen robot draws the grid and its own X and O on paper, reads your marks and plays you. "
                    "With --backend sim and --sense keyboard (the defaults) it needs no hardware: the paper "
                    "is drawn in this terminal.",
        epilog="Also: 'noughts robot paper', 'noughts robot preview', 'noughts robot sense' (each with --help). "
               "docs/robot.md has the machines, the wiring and the configuration.")
    parser.add_argument("--backend", choices=BACKENDS, help="the pen robot (default: the config's, else sim)")
    parser.add_argument("--sense", choices=SENSES,
                        help="how the robot learns your move (default: the config's, else keyboard: you type it)")
    parser.add_argument("--config", metavar="FILE",
                        help=f"the robot's TOML configuration (default: {default_config_path()} if it exists)")
    parser.add_argument("--port", help="grbl, ebb: the plotter's serial port or pyserial URL; ev3: the agent's "
                                       "TCP port")
    parser.add_argument("--host", help="ev3: the brick running the agent (default ev3dev.local)")
    parser.add_argument("--camera", metavar="SOURCE",
                        help="camera: a device number, a video file or an image sequence (photo_%%03d.png)")
    parser.add_argument("--opponent", help="the computer player (default: the seed's menu: easy, medium, hard)")
    parser.add_argument("--first", metavar="WHO",
                        help=f"who starts each game: {', '.join(FIRST_RULES)} (default: alternate)")
    _board_options(parser, marks=None)  # None: the configuration's
    parser.add_argument("--svg", metavar="FILE", help="write the paper as SVG to FILE after every move")
    parser.add_argument("--saw", metavar="FILE.png",
                        help="calibrate --sense camera: where to save what the camera saw (default "
                             "robot-camera-view.png)")
    parser.add_argument("--seed", help="seed the computer's random choices, to replay a session")
    parser.add_argument("--db", metavar="PATH",
                        help="the scores and history database, as for 'noughts play' (default: $NOUGHTS_DB, else "
                             "~/.local/share/noughts/noughts.db)")
    parser.add_argument("--no-scores", action="store_true", help="record nothing: no scores, no history")
    parser.add_argument("--resume", action="store_true",
                        help="carry on the game kept when the robot last stopped (Ctrl-C, q, a lost robot)")
    parser.add_argument("--keep", metavar="FILE",
                        help="where the game in play is kept after every move (default: robot-game.json beside "
                             "the default database)")
    return parser


def _paper_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="noughts robot paper",
                                     description="The sheet as the robot draws it: markers, grid and the marks "
                                                 "of POSITION in the robot's own strokes.")
    parser.add_argument("position", nargs="?", help="a position such as X.O/.X./..O (default: the empty grid)")
    _board_options(parser)
    parser.add_argument("--out", required=True, metavar="FILE", help="FILE.svg (no extra needed) or FILE.png")
    return parser


def _preview_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="noughts robot preview",
                                     description="The pen's whole plan for one step, without moving anything: "
                                                 "its strokes in order, pen-up travel and the time it takes.")
    parser.add_argument("position", nargs="?", help="the position before the step (default: a new game)")
    parser.add_argument("--move", metavar="CELL",
                        help="preview drawing the mark of this move (default: drawing the sheet)")
    _board_options(parser)
    return parser


def _position(text: str | None, rows: int, cols: int, k: int | None) -> Board:
    if text is None:
        return Board(rows, cols, k)
    board = Board.parse(text, k)
    if (board.rows, board.cols) != (rows, cols) and (rows, cols) != (3, 3):
        raise NoughtsError(f"the position is {board.rows}×{board.cols}, but --rows/--cols say {rows}×{cols}")
    return board


def _sheet_for(board: Board) -> Sheet:
    return Machine.plotter().fit(board.rows, board.cols)


def paper_main(argv: Sequence[str], out: TextIO) -> int:
    args = _paper_parser().parse_args(argv)
    board = _position(args.position, args.rows, args.cols, args.k)
    sheet = _sheet_for(board)
    svg = sheet_svg(sheet, [mark or "" for mark in board.cells], style=args.marks)
    target = Path(args.out)
    if target.suffix.lower() == ".svg":
        target.write_text(svg + "\n", encoding="utf-8")
    elif target.suffix.lower() == ".png":
        from noughts.robot.rig import require

        require("cv2", "a PNG of the sheet")
        from noughts.robot.sensing.camera import save_picture
        from noughts.robot.sim.photos import render_paper

        paper = Paper(sheet)
        paper.draw_strokes(marker_strokes(sheet) + grid_strokes(sheet))
        for cell, mark in enumerate(board.cells):
            if mark is not None:
                paper.draw_strokes(mark_strokes(sheet, cell, mark, args.marks))
        save_picture(render_paper(paper, 8.0, border_mm=(0, 0, 0, 0)), target)
    else:
        raise RobotError(f"--out takes a .svg or .png file, not {target.name!r}")
    print(f"Wrote {target} ({sheet.width:g} × {sheet.height:g} mm).", file=out)
    return 0


def preview_main(argv: Sequence[str], out: TextIO) -> int:
    args = _preview_parser().parse_args(argv)
    board = _position(args.position, args.rows, args.cols, args.k)
    sheet = _sheet_for(board)
    machine = Machine.plotter()
    if args.move is None:
        what, strokes, start = "the sheet (markers and grid)", marker_strokes(sheet) + grid_strokes(sheet), (0.0, 0.0)
    else:
        cell = board.parse_cell(args.move)
        board.play(cell)  # refuses an illegal move (or a finished game) with the reason
        mark = board.turn or "X"
        what, strokes = f"{mark} in {board.cell_name(cell)}", mark_strokes(sheet, cell, mark, args.marks)
        start = (sheet.width, 0.0)  # the robot waits parked right of the sheet
    plan = plan_strokes(strokes, machine, start, finish=start)
    natural = plan_strokes(strokes, machine, start, ordered=False, finish=start)
    print(f"Drawing {what} on a {sheet.width:g} × {sheet.height:g} mm sheet:", file=out)
    for number, stroke in enumerate(plan.strokes, 1):
        (x0, y0), (x1, y1) = stroke.start, stroke.end
        print(f"  {number:3}. {stroke.kind:6} ({x0:6.1f}, {y0:6.1f}) → ({x1:6.1f}, {y1:6.1f})  "
              f"{stroke.length:6.1f} mm, {len(stroke.points) - 1} segments", file=out)
    print(plan.describe() + f" (pen-up travel in drawing order would be {natural.pen_up_mm:.0f} mm).", file=out)
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
        except (EOFError, KeyboardInterrupt):
            print(file=self.out)
            return False
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


def _keep_path(args: argparse.Namespace) -> Path:
    if args.keep:
        return Path(args.keep).expanduser()
    from noughts.store.sqlite import default_path

    return default_path().with_name("robot-game.json")


def load_settings(args: argparse.Namespace, *, missing_ok: bool = False) -> RobotConfig:
    """The configuration file (if any) with the command line's choices over it; ``missing_ok``: a
    --config file that does not exist yet is the defaults (calibrating creates it)."""
    path = args.config
    if path is None and default_config_path().exists():
        path = default_config_path()
    if path is not None and missing_ok and not Path(path).expanduser().exists():
        path = None
    config = load_config(path)
    port: str | None = args.port
    ev3_port: int | None = None
    if port is not None and (args.backend or config.backend) == "ev3":
        if not port.isdigit():
            raise RobotError(f"--port for the ev3 backend is the agent's TCP port, a number, not {port!r}")
        ev3_port, port = int(port), None
    backend = args.backend or config.backend
    return config.with_overrides(backend=args.backend, sense=args.sense, game__opponent=args.opponent,
                                 game__first=args.first, game__marks=args.marks, camera__source=args.camera,
                                 ev3__host=args.host, ev3__port=ev3_port,
                                 grbl__port=port if backend == "grbl" else None,
                                 ebb__port=port if backend == "ebb" else None)


def play_main(argv: Sequence[str], out: TextIO, read_line: Callable[[str], str] = input) -> int:
    args = build_parser().parse_args(argv)
    config = load_settings(args)
    game_settings = config.section("game")
    keep = _keep_path(args)
    console = TerminalKeyboard(read_line, out)
    store = None
    if not args.no_scores:
        from noughts.store import open_store

        store = open_store(args.db)
        for notice in store.notices:
            console.show(notice)
    rig: Rig | None = None
    try:
        kept = load_kept(keep, store) if args.resume else None
        if args.resume and kept is None:
            raise RobotError(f"there is no unfinished robot game kept in {keep}")
        board = kept[0].start if kept is not None else Board(args.rows, args.cols, args.k)
        style = kept[1]["style"] if kept is not None else game_settings["marks"]
        match: Match | None = kept[0] if kept is not None else None
        rig = build_rig(config, board.rows, board.cols, keyboard=console,
                        board=lambda: match.board if match is not None else board)
        paper = rig.paper
        if paper is not None:
            sim_paper = paper

            def show_paper(robot: object) -> None:
                console.show(sim_paper.text_picture())
                if args.svg:
                    try:
                        Path(args.svg).write_text(sim_paper.svg() + "\n", encoding="utf-8")
                    except OSError as error:  # a game is worth more than its picture: say so, play on
                        console.show(f"Cannot write {args.svg} ({error.strerror or error}); the game goes on "
                                     "without it.")
                        args.svg = None

            rig.robot.on_change = show_paper  # type: ignore[attr-defined]
        if match is None:
            opponent = game_settings["opponent"] or _choose_opponent(rig.console, store, board)
            if opponent is None:
                return 0
            match = Match(opponent, first=game_settings["first"], rows=board.rows, cols=board.cols, k=board.k,
                          seed=args.seed, store=store)
            rig.console.show(text.who_starts(match.first, other=match.name_of(1)))
        game = RobotGame(match, rig.robot, rig.sensor, rig.console, rig.sheet, style=style, keep=keep,
                         reconnect=rig.reconnect)
        resume = kept is not None
        if resume:
            console.show(f"Carrying on: {match.intro()}")
            if paper is not None:  # the sim's sheet went with the last process: put back what was on it
                _redraw(paper, match, style)
                show_paper(rig.robot)
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
            if match.game is not None and not match.game_over and not match.abandoned:
                console.show(f"The game is kept: 'noughts robot --resume' carries on with it ({keep}).")
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


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """``noughts robot …``; returns the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    stream = out or sys.stdout
    commands: dict[str, Callable[[Sequence[str], TextIO], int]] = {
        "paper": paper_main, "preview": preview_main, "sense": sense_main, "calibrate": calibrate_main}
    try:
        if arguments[:1] and arguments[0] in commands:
            return commands[arguments[0]](arguments[1:], stream)
        return play_main(arguments, stream)
    except NoughtsError as error:
        print(f"noughts robot: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # a file named on the command line that cannot be written or read
        print(f"noughts robot: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130


def calibrate_main(argv: Sequence[str], out: TextIO, read_line: Callable[[str], str] = input) -> int:
    """``noughts robot calibrate``: the light sensor's white and black, measured on the robot's own
    markers and recorded in the configuration file."""
    args = build_parser().parse_args(argv)
    config = load_settings(args, missing_ok=True)
    if config.sense == "camera":
        return _calibrate_camera(config, args, out, read_line)
    target = Path(args.config).expanduser() if args.config else default_config_path()
    console = TerminalKeyboard(read_line, out)
    sheet_board = Board(args.rows, args.cols, args.k)
    rig = build_rig(config.with_overrides(sense="keyboard"), sheet_board.rows, sheet_board.cols,
                    keyboard=console, board=lambda: sheet_board)
    try:
        from noughts.robot.sensing.light import calibrate

        probe = _light_probe(rig, config)
        if not console.wait_for_human("Put a fresh sheet on the robot, then press to start."):
            return 0
        console.show("Drawing the reference markers, then reading bare paper beside them and the markers.")
        game = RobotGame(Match("easy"), rig.robot, rig.sensor, rig.console, rig.sheet)
        game.draw_markers()
        sheet = rig.sheet
        markers = list(sheet.marker_centres())
        left, top, right, bottom = sheet.grid_box
        half = sheet.margin_mm / 2
        white = [((left + right) / 2, top - half), ((left + right) / 2, bottom + half),
                 (left - half, (top + bottom) / 2), (right + half, (top + bottom) / 2)]
        measured = calibrate(probe, white, markers)
        save_setting(target, "light", {"white": round(measured.white, 1), "black": round(measured.black, 1),
                                       "threshold": round(measured.threshold, 1)})
        console.show(f"White paper reads {measured.white:.0f}, ink {measured.black:.0f}: the threshold is "
                     f"{measured.threshold:.0f} (the seed's was 25). Recorded in {target}.")
    finally:
        rig.close()
    return 0


def _calibrate_camera(config: RobotConfig, args: argparse.Namespace, out: TextIO,
                      read_line: Callable[[str], str]) -> int:
    """The camera's view: one look at a sheet, saved as a "what I saw" picture, and whether it found
    the sheet and could read every square."""
    from noughts.robot.rig import PaperCamera, require

    require("cv2", "the camera")
    from noughts.robot.sensing.camera import CameraSensor, save_picture, what_i_saw

    console = TerminalKeyboard(read_line, out)
    board = Board(args.rows, args.cols, args.k)
    rig = build_rig(config, board.rows, board.cols, keyboard=console, board=lambda: board)
    try:
        if rig.paper is not None:  # the sim: a sheet with its markers and grid to look at
            RobotGame(Match("easy"), rig.robot, rig.sensor, rig.console, rig.sheet).draw_sheet()
        elif not console.wait_for_human("Put a sheet the robot drew under the camera, then press."):
            return 0
        reading = rig.sensor.read(board)
        frame = rig.sensor.last if isinstance(rig.sensor, PaperCamera) else (
            rig.sensor.last_frame if isinstance(rig.sensor, CameraSensor) else None)
        target = Path(args.saw or "robot-camera-view.png")
        if frame is not None:
            save_picture(what_i_saw(frame, rig.sheet), target)
        if not reading.found:
            console.show(f"The camera cannot find the sheet: {reading.message} What it saw is in {target}.")
            return 1
        doubtful = sum(cell.confidence < SURE for cell in reading.cells)
        console.show(f"The camera sees the sheet and reads {reading.notation(rig.sheet.cols)}"
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


def sense_main(argv: Sequence[str], out: TextIO) -> int:
    """``noughts robot sense PHOTO``: the position a photo of a sheet shows, or why it cannot tell."""
    parser = argparse.ArgumentParser(prog="noughts robot sense",
                                     description="Read a photo of a sheet the robot drew (its markers and grid) "
                                                 "with hand-drawn marks, and print the position (X.O/.X./..O).")
    parser.add_argument("photo", help="the photo (JPEG, PNG…)")
    parser.add_argument("--rows", type=int, default=3, help="rows of the grid (default 3)")
    parser.add_argument("--cols", type=int, default=3, help="columns of the grid (default 3)")
    parser.add_argument("--json", action="store_true", help="every cell's verdict and confidence, as JSON")
    parser.add_argument("--saw", metavar="FILE.png", help="also write what the camera saw: the sheet "
                                                          "straightened, each cell's verdict on it")
    args = parser.parse_args(argv)
    from noughts.robot.rig import require
    from noughts.robot.sensing.camera import load_photo, save_picture, sense_photo, what_i_saw

    require("cv2", "reading a photo")
    code, text = sense_photo(args.photo, args.rows, args.cols, as_json=args.json)
    print(text, file=out if code == 0 else sys.stderr)
    if args.saw:
        target = save_picture(what_i_saw(load_photo(args.photo), Sheet(args.rows, args.cols)), args.saw)
        print(f"Wrote {target}.", file=sys.stderr)
    return code
