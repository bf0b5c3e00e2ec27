"""``noughts robot``: play on paper with a pen robot, draw the sheet, preview the pen's plan, read a photo.

::

    noughts robot [--backend sim|grbl|ebb|ev3] [--sense keyboard|camera|light] [--opponent …] [--first …]
                  [--rows R --cols C --k K] [--marks shapes|dot] [--config FILE] [--svg FILE]
    noughts robot paper [POSITION] [--rows R --cols C --k K] [--marks shapes|dot] --out FILE.svg|FILE.png
                        [--config FILE] [--gcode FILE|-]
    noughts robot preview [POSITION] [--move CELL] [--rows R --cols C --k K] [--config FILE] [--gcode FILE|-]
    noughts robot sense PHOTO [--rows R --cols C] [--json]
    noughts robot calibrate [--sense light|camera] [--config FILE] [--saw FILE.png]

The options are read and checked here, over the configuration file's; :mod:`noughts.robot.app`
runs the robot with plain values.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from noughts.cli.common import flag_said
from noughts.errors import NoughtsError, SettingError

if TYPE_CHECKING:
    from noughts.board import Board
    from noughts.robot.config import RobotConfig

__all__ = ["SUMMARY", "build_parser", "calibrate_main", "load_settings", "main", "paper_main", "play_main",
           "preview_main", "sense_main"]

SUMMARY = ("a pen robot draws the game on paper and reads your marks; simulated in this terminal "
           "without hardware (see 'noughts robot --help')")


def _board_options(parser: argparse.ArgumentParser, marks: str | None = "shapes") -> None:
    from noughts.sheet.strokes import MARK_STYLES

    parser.add_argument("--rows", type=int, default=3, help="rows of the grid (default 3)")
    parser.add_argument("--cols", type=int, default=3, help="columns of the grid (default 3)")
    parser.add_argument("--k", type=int, help="marks in a row that win (default: the shorter side, at most 5)")
    parser.add_argument("--marks", choices=MARK_STYLES, default=marks,
                        help="the robot's marks: real X and O shapes (default), or the seed's dot")


def build_parser() -> argparse.ArgumentParser:
    from noughts.match import FIRST_RULES
    from noughts.robot.app import BACKENDS, SENSES
    from noughts.robot.config import default_config_path

    parser = argparse.ArgumentParser(
        prog="noughts robot",
        description="A pen robot draws the grid and its own X and O on paper, reads your marks and plays you. "
                    "With --backend sim and --sense keyboard (the defaults) it needs no hardware: the paper "
                    "is drawn in this terminal.",
        epilog="Also: 'noughts robot paper', 'noughts robot preview', 'noughts robot sense', 'noughts robot "
               "calibrate' (each with --help). docs/robot.md has the machines, the wiring and the configuration.")
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
                        help="where the game in play is kept after every move (default: one file for each "
                             "machine configured, robot-game-….json beside the default database)")
    return parser


def _paper_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="noughts robot paper",
                                     description="The sheet as the robot draws it: markers, grid and the marks "
                                                 "of POSITION in the robot's own strokes.")
    parser.add_argument("position", nargs="?", help="a position such as X.O/.X./..O (default: the empty grid)")
    _board_options(parser)
    parser.add_argument("--out", metavar="FILE", help="FILE.svg (no extra needed) or FILE.png")
    _gcode_options(parser, "the sheet with POSITION's marks")
    return parser


def _gcode_options(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--gcode", metavar="FILE",
                        help=f"write the G-code the grbl backend streams for {what} to FILE ('-': print it "
                             "line for line), as --config sets up the machine and the pen")
    parser.add_argument("--config", metavar="FILE", help="the robot's TOML configuration: the machine and the pen "
                                                         "(default: the built-in one)")


def _preview_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="noughts robot preview",
                                     description="The pen's whole plan for one step, without moving anything: "
                                                 "its strokes in order, pen-up travel and the time it takes on "
                                                 "the machine of --config; with --gcode, the G-code instead.")
    parser.add_argument("position", nargs="?", help="the position before the step (default: a new game)")
    parser.add_argument("--move", metavar="CELL",
                        help="preview drawing the mark of this move (default: drawing the sheet)")
    _board_options(parser)
    _gcode_options(parser, "this step")
    return parser


def _calibrate_parser() -> argparse.ArgumentParser:
    from noughts.robot.app import BACKENDS
    from noughts.robot.config import default_config_path

    parser = argparse.ArgumentParser(prog="noughts robot calibrate",
                                     description="Measure the light sensor's white and black on the robot's own "
                                                 "markers and record them in the configuration (--sense light, the "
                                                 "default), or take one look with the camera and save what it saw "
                                                 "(--sense camera). The sim's readings never go into your "
                                                 "configuration unless --config names a file.")
    parser.add_argument("--backend", choices=BACKENDS, help="the pen robot (default: the config's, else sim)")
    parser.add_argument("--sense", choices=("light", "camera"), help="what to calibrate (default: the config's "
                                                                     "sense, light unless it is camera)")
    parser.add_argument("--config", metavar="FILE",
                        help=f"the TOML configuration to read and record in (default: {default_config_path()})")
    parser.add_argument("--port", help="grbl, ebb: the plotter's serial port; ev3: the agent's TCP port")
    parser.add_argument("--host", help="ev3: the brick running the agent (default ev3dev.local)")
    parser.add_argument("--camera", metavar="SOURCE", help="camera: a device number, a video file or an image "
                                                           "sequence")
    parser.add_argument("--rows", type=int, default=3, help="rows of the sheet's grid (default 3)")
    parser.add_argument("--cols", type=int, default=3, help="columns of the sheet's grid (default 3)")
    parser.add_argument("--k", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--saw", metavar="FILE.png",
                        help="--sense camera: where to save what the camera saw (default robot-camera-view.png)")
    parser.set_defaults(opponent=None, first=None, marks=None)  # load_settings reads the game's choices too
    return parser


def _position(text: str | None, rows: int, cols: int, k: int | None) -> Board:
    """The board of POSITION (or an empty grid), which must agree with --rows and --cols."""
    from noughts.board import Board

    if text is None:
        return Board(rows, cols, k)
    board = Board.parse(text, k)
    if (board.rows, board.cols) != (rows, cols) and (rows, cols) != (3, 3):
        raise NoughtsError(f"the position is {board.rows}×{board.cols}, but --rows/--cols say {rows}×{cols}")
    return board


def _sense_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="noughts robot sense",
                                     description="Read a photo of a sheet the robot drew (its markers and grid) "
                                                 "with hand-drawn marks, and print the position (X.O/.X./..O).")
    parser.add_argument("photo", help="the photo (JPEG, PNG…)")
    parser.add_argument("--rows", type=int, default=3, help="rows of the grid (default 3)")
    parser.add_argument("--cols", type=int, default=3, help="columns of the grid (default 3)")
    parser.add_argument("--json", action="store_true", help="every cell's verdict and confidence, as JSON")
    parser.add_argument("--saw", metavar="FILE.png", help="also write what the camera saw: the sheet "
                                                          "straightened, each cell's verdict on it")
    return parser


def load_settings(args: argparse.Namespace, *, missing_ok: bool = False) -> RobotConfig:
    """The configuration file (if any) with the command line's choices over it; ``missing_ok``: a
    --config file that does not exist yet is the defaults (calibrating creates it)."""
    from noughts.robot.config import default_config_path, load_config
    from noughts.sheet.geometry import RobotError

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
    """``noughts robot [options]``: games on paper."""
    from noughts.robot import app

    args = build_parser().parse_args(argv)
    return app.play(load_settings(args), out, read_line, rows=args.rows, cols=args.cols, k=args.k, seed=args.seed,
                    db=args.db, scores=not args.no_scores, resume=args.resume, keep=args.keep, svg=args.svg,
                    resume_with="'noughts robot --resume'")


def paper_main(argv: Sequence[str], out: TextIO) -> int:
    """``noughts robot paper``: the sheet as the robot draws it, to --out."""
    from noughts.robot import app
    from noughts.sheet.geometry import RobotError

    parser = _paper_parser()
    args = parser.parse_args(argv)
    if args.out is None and args.gcode is None:
        parser.error("say where to write the sheet: --out FILE.svg|FILE.png, or --gcode FILE")
    board = _position(args.position, args.rows, args.cols, args.k)
    if args.gcode is not None:
        app.write_gcode(board, args.gcode, out, _file_config(args.config), marks=args.marks)
    if args.out is None:
        return 0
    target = Path(args.out)
    if target.suffix.lower() not in (".svg", ".png"):
        raise RobotError(f"--out takes a .svg or .png file, not {target.name!r}")
    return app.write_sheet(board, target, sys.stderr if args.gcode == "-" else out, marks=args.marks)


def _file_config(path: str | None) -> RobotConfig:
    """The configuration in --config, else the built-in one."""
    from noughts.robot.config import load_config

    return load_config(path)


def preview_main(argv: Sequence[str], out: TextIO) -> int:
    """``noughts robot preview``: the pen's plan for one step."""
    from noughts.robot import app

    args = _preview_parser().parse_args(argv)
    board = _position(args.position, args.rows, args.cols, args.k)
    config = _file_config(args.config)
    if args.gcode is not None:
        return app.write_gcode(board, args.gcode, out, config, move=args.move, marks=args.marks)
    return app.preview_plan(board, out, move=args.move, marks=args.marks, config=config)


def sense_main(argv: Sequence[str], out: TextIO) -> int:
    """``noughts robot sense PHOTO``: the position a photo of a sheet shows, or why it cannot tell."""
    from noughts.robot import app

    args = _sense_parser().parse_args(argv)
    return app.read_photo(args.photo, out, rows=args.rows, cols=args.cols, as_json=args.json, saw=args.saw)


def calibrate_main(argv: Sequence[str], out: TextIO, read_line: Callable[[str], str] = input) -> int:
    """``noughts robot calibrate``: the light sensor (or the camera) measured and recorded."""
    from noughts.robot import app

    args = _calibrate_parser().parse_args(argv)
    config = load_settings(args, missing_ok=True)
    return app.calibrate(config, out, read_line, path=args.config, rows=args.rows, cols=args.cols, k=args.k,
                         saw=args.saw)


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
    except SettingError as error:  # the robot's words, said again with the flag
        print(f"noughts robot: {flag_said(error, {'sense': '--sense', 'backend': '--backend'})}", file=sys.stderr)
        return 2
    except NoughtsError as error:
        print(f"noughts robot: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # a file named on the command line that cannot be written or read
        print(f"noughts robot: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
