"""``noughts paper``: a game on real paper against the computer, watched through a webcam or a video file.

The person draws their own marks and the computer's on a printed sheet (``noughts robot paper --out
sheet.svg``); OpenCV reads the frames (:class:`~noughts.sheet.camera.CameraSensor`), at most
:data:`FRAMES_A_SECOND` a second, and :class:`~noughts.paper_game.PaperGame` turns the readings into
the game: what to draw, the questions, the result. The terminal prints each sentence when it
changes and the computer's move in large letters; a window shows what the camera sees with each
square's verdict when there is a display. Games are kept with the scores as in ``noughts play``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from noughts.cli.common import EXIT_INTERRUPTED, db_option
from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing and argparse cost milliseconds
if TYPE_CHECKING:
    import argparse
    from typing import IO, Any

    from noughts.match import Match
    from noughts.paper_game import PaperView
    from noughts.sheet.camera import CameraSensor

__all__ = ["FRAMES_A_SECOND", "add_commands", "file_step", "run_paper", "window_picture"]

FRAMES_A_SECOND = 2.0  # frames read a second: a mark takes a second or two to draw, and reading one costs CPU
WINDOW = "noughts paper"
NEEDS_COMPUTER = "paper mode plays against the computer: choose a computer --opponent, not person"
PRINT_A_SHEET = "No sheet yet? Print one: noughts robot paper --out sheet.svg (or sheet.png)."


def add_commands(sub: Any) -> None:
    import argparse

    p = sub.add_parser("paper", help="play on real paper: a webcam (or a video file) watches the sheet",
                       description=_DESCRIPTION, epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--camera", default="0", metavar="0|FILE",
                   help="a camera's number (0 is the first) or a video file or numbered pictures like "
                        "frames/frame_%%04d.jpg (default 0)")
    p.add_argument("--opponent", metavar="NAME",
                   help="easy, medium, hard or any player of 'noughts players' (default: as 'noughts play': medium, "
                        "or arduino on a board medium cannot play)")
    p.add_argument("--first", metavar="WHO",
                   help="who moves first, and so plays X: me, computer, alternate, loser or random (default alternate)")
    p.add_argument("--seed", metavar="N", help="seed for the computer's random choices")
    p.add_argument("--size", metavar="N|RxC|RxCkK", help="the board in one word: 4 is 4×4, 4x5 is 4 rows of 5")
    p.add_argument("--rows", type=int, metavar="N", help="rows of the sheet (default 3)")
    p.add_argument("--cols", type=int, metavar="N", help="columns of the sheet (default 3)")
    p.add_argument("--k", metavar="K", help="marks in a row to win (default: min(rows, cols, 5))")
    db_option(p)
    p.add_argument("--name", action="append", metavar="NAME", help="your name for the scores (default: $USER)")
    p.add_argument("--no-scores", action="store_true", help="record nothing: no scores, no history")
    p.add_argument("--no-window", action="store_true", help="the terminal only: no window showing what the camera sees")
    p.set_defaults(run=run_paper)


def file_step(fps: float, rate: float = FRAMES_A_SECOND) -> int:
    """Of a video's frames, every how many to read so it plays at ``rate`` frames a second.

    >>> file_step(30.0), file_step(2.0), file_step(5.0), file_step(0.0)
    (15, 1, 2, 1)
    """
    if not fps > 0:  # a numbered picture sequence has no rate: every picture is a frame
        return 1
    return max(1, round(fps / rate))


def run_paper(args: argparse.Namespace, out: IO[str] | None = None) -> int:
    """``noughts paper``: returns 0 when the video ends (or the window is closed), 130 on Ctrl-C."""
    from noughts import players, text
    from noughts.board import Board
    from noughts.cli.play import flag_message
    from noughts.match import DEFAULT_FIRST, PERSON, Match, PlayOptionError, play_options
    from noughts.paper_game import PaperGame
    from noughts.sheet.geometry import Sheet

    out = out or sys.stdout
    size = args.size
    if size is None and (args.rows is not None or args.cols is not None):
        size = f"{args.rows or 3}x{args.cols or 3}"
    elif size is not None and (args.rows is not None or args.cols is not None):
        raise NoughtsError("give the board as --size or as --rows and --cols, not both")
    try:
        options = play_options(opponent=args.opponent, first=args.first, seed=args.seed, size=size, k=args.k,
                               db=args.db, names=args.name, no_scores=args.no_scores)
    except PlayOptionError as error:
        raise NoughtsError(flag_message(error)) from None
    if options.opponent == PERSON:
        raise NoughtsError(NEEDS_COMPUTER)
    board = Board(options.rows, options.cols, options.k)
    opponent = options.opponent or players.default_for(board)
    Match(opponent, rows=options.rows, cols=options.cols, k=options.k)  # an opponent that cannot play: refused now
    sheet = Sheet(options.rows, options.cols)
    live = args.camera.strip().isdigit()
    sensor = _open_camera(args.camera, sheet, live)
    store = None
    window = False
    try:
        if options.scores:
            from noughts.store import open_store

            store = open_store(options.db)
            for notice in store.notices:
                _say(out, " ".join(notice.split()))
        match = Match(opponent, names=options.names, first=options.first or DEFAULT_FIRST, rows=options.rows,
                      cols=options.cols, k=options.k, seed=options.seed, store=store)
        window = not args.no_window and _has_display() and _open_window(out)
        _say(out, text.paper_watching(f"camera {args.camera.strip()}" if live else args.camera, sheet.rows,
                                      sheet.cols))
        _say(out, PRINT_A_SHEET)
        try:
            return _watch(PaperGame(match), sensor, out, live=live, window=window)
        except KeyboardInterrupt:
            _say(out, "")
            _say(out, text.paper_stopped(str(match.board), match.game_over))
            return EXIT_INTERRUPTED
    finally:
        sensor.close()
        if store is not None:
            store.close()
        if window:
            _close_window()


def _open_camera(source: str, sheet: Any, live: bool) -> CameraSensor:
    """The camera or the video, read at about FRAMES_A_SECOND (a file: every Nth of its frames)."""
    from noughts.sheet.camera import CameraSensor

    cv2 = _quiet_opencv()
    if live:
        return CameraSensor(int(source), sheet)  # the driver's stale frames are dropped before each read
    sensor = CameraSensor(source, sheet, skip=0)
    if "%" not in source:  # numbered pictures are one frame each (OpenCV says 25 a second of them)
        sensor.skip = file_step(float(sensor.capture.get(cv2.CAP_PROP_FPS) or 0.0)) - 1
    return sensor


def _quiet_opencv() -> Any:
    """OpenCV (or the sentence saying it is missing), its own warnings kept off the terminal: a
    camera that cannot be opened is said once, in our words."""
    from noughts.sheet.camera import MISSING_OPENCV
    from noughts.sheet.geometry import RobotError

    try:
        import cv2
    except ImportError:
        raise RobotError(MISSING_OPENCV) from None
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
    return cv2


def _watch(paper: Any, sensor: CameraSensor, out: IO[str], *, live: bool, window: bool) -> int:
    """Read frame after frame into ``paper`` until the video ends (or the window is closed)."""
    from noughts import text

    match: Match = paper.match
    gap = 1 / FRAMES_A_SECOND
    next_frame = time.monotonic()
    finished_games = 0
    while True:
        if live:  # a live camera gives 30 frames a second: read only as many as are needed
            pause = next_frame - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            next_frame = max(next_frame + gap, time.monotonic())
        reading = sensor.read()
        if sensor.last_frame is None:
            _say(out, text.PAPER_CAMERA_GONE if live else text.PAPER_VIDEO_ENDED)
            return 0 if not live else 1
        view = paper.see(reading)
        if view.phase == "think":
            cell = paper.think()
            if cell is not None:
                _say(out, text.paper_banner(match.name_of(1), paper.computer_mark, match.board.cell_name(cell)))
            view = paper.see(reading)
        if view.phase == "over" and match.games > finished_games:
            finished_games = match.games
            _finish(match, out)
        elif view.announce:
            _say(out, view.announce)
        if window and not _show(sensor, view):
            return 0


def _finish(match: Match, out: IO[str]) -> None:
    """The result, what became of it in the store, the tally: as `noughts play` says them."""
    from noughts import text

    _say(out, match.result_sentence())
    kept = match.recorded_text()
    if kept:
        _say(out, kept)
    _say(out, text.terminal_session_tally(match.tally_text()))
    _say(out, text.PAPER_NEXT_GAME)


def _say(out: IO[str], line: str) -> None:
    out.write(line + "\n")
    out.flush()


def _has_display() -> bool:
    return sys.platform in ("win32", "darwin") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _open_window(out: IO[str]) -> bool:
    """A window for what the camera sees; False (said once) when OpenCV has no windows here."""
    import cv2

    from noughts import text

    try:
        cv2.namedWindow(WINDOW, cv2.WINDOW_NORMAL)
    except cv2.error:  # opencv-python-headless, or no display after all
        _say(out, text.PAPER_NO_WINDOW)
        return False
    return True


def _show(sensor: CameraSensor, view: PaperView) -> bool:
    """Draw what the camera saw, the verdicts and what to do; False once the window is closed (q, Esc)."""
    import cv2

    saw = sensor.what_i_saw()
    if saw is None:
        return True
    cv2.imshow(WINDOW, window_picture(saw, view.say))
    key = cv2.waitKey(1) & 0xFF
    closed = cv2.getWindowProperty(WINDOW, cv2.WND_PROP_VISIBLE) < 1
    return key not in (ord("q"), 27) and not closed


def window_picture(saw: Any, say: str) -> Any:
    """The window's picture: what the camera saw (``camera.what_i_saw``) under a strip saying what to do."""
    import cv2
    import numpy as np

    width = saw.shape[1]
    scale = max(0.4, min(1.0, width / 900))
    while scale > 0.3 and cv2.getTextSize(say, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)[0][0] > width - 16:
        scale -= 0.05  # a long question is written smaller rather than cut off
    strip = np.full((int(40 * max(scale, 0.5)), width, 3), 255, np.uint8)
    cv2.putText(strip, say, (8, int(26 * max(scale, 0.5))), cv2.FONT_HERSHEY_SIMPLEX, scale, (20, 20, 20), 1,
                cv2.LINE_AA)
    return np.vstack([strip, saw])


def _close_window() -> None:
    import cv2

    with contextlib.suppress(cv2.error):
        cv2.destroyWindow(WINDOW)


_DESCRIPTION = """\
Play on real paper against the computer, with a webcam (or a phone's video file) watching.

Print a sheet ('noughts robot paper --out sheet.svg', or --out sheet.png) and put it where
the camera sees all of it, its four corner squares too. Draw your mark in a square: once
the camera has seen it in two frames running it is your move. The computer's move is
printed in large letters: draw its mark in that square for it. When the camera is not sure
(a hand over the sheet, a faint mark, two new marks) it asks; it never guesses. Finished
games go to the scores as in 'noughts play'. For another game, show an empty sheet."""

_EPILOG = """\
examples:
  noughts paper                                 the first webcam, against medium
  noughts paper --opponent hard --first me
  noughts paper --camera game.avi --no-window   a filmed game, in the terminal

Exit status: 0 when the video ends, 130 on Ctrl-C, 2 for bad options or a camera that cannot be opened."""
