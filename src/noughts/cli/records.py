"""``noughts history``, ``replay``, ``scores``, ``picture``, ``export`` and ``import``: the games kept,
and positions and games as files other programs read.

The formats are :mod:`noughts.records` and :mod:`noughts.picture`; reading the command's
options, the files and stdin, and printing, is done here.
"""

from __future__ import annotations

import sys

from noughts.cli.common import PROG, board_options, db_option
from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing and argparse cost milliseconds
if TYPE_CHECKING:
    import argparse
    from typing import IO, Any


def add_commands(sub: Any) -> None:
    """The subcommands about kept games and files, in the order --help lists them."""
    p = sub.add_parser("history", help="list the games played, newest first",
                       description="The stored games, newest first: number, when (local time), who played "
                                   "X and O, the result and the moves.")
    db_option(p)
    p.add_argument("--limit", type=int, default=20, metavar="N", help="how many games to list (default 20)")
    p.set_defaults(run=_cmd_history)

    p = sub.add_parser("replay", help="step through a stored game move by move",
                       description="Show a stored game (see 'noughts history') move by move: press Enter "
                                   "for the next move, q to stop.")
    p.add_argument("id", type=int, metavar="ID", help="the game's number in 'noughts history'")
    p.add_argument("--all", action="store_true", help="print every move at once, without waiting")
    db_option(p)
    p.set_defaults(run=_cmd_replay)

    p = sub.add_parser("scores", help="high scores, the current run and wins/losses/draws",
                       description="The high score of each difficulty (the EV3 robot's rules: a win scores "
                                   "1 on easy, 2 on medium, 3 on hard, and a loss or draw ends the run) and "
                                   "the current run, 3×3 first and then every other board played, and wins, "
                                   "losses and draws against the ten computer players and between the ten "
                                   "people with the most games.")
    db_option(p)
    p.add_argument("--all", action="store_true",
                   help="list every computer player and person played, not only the ten with the most games")
    p.add_argument("--reset", action="store_true",
                   help="delete every score (after asking; the game history is kept)")
    p.add_argument("--yes", action="store_true", help="with --reset: do not ask")
    p.set_defaults(run=_cmd_scores)

    p = sub.add_parser("picture", help="draw a position as an SVG or PNG picture",
                       description="Draw POSITION (or an empty board) with its coordinates, the winning line "
                                   "and, with --move, a hint. --out FILE.svg or FILE.png (PNG needs "
                                   "pip install 'noughts[picture]'); without --out the SVG goes to stdout.")
    board_options(p, json_flag=False, size_flag=False)  # its --size is the picture's width
    p.add_argument("--move", metavar="CELL", help="a cell to suggest: the side to move's mark drawn faintly, ringed")
    p.add_argument("--last", metavar="CELL", help="the last move, highlighted")
    p.add_argument("--size", type=int, metavar="PX", help="the picture's width in pixels (default: 64 a cell)")
    p.add_argument("--theme", default="light", metavar="NAME", help="light (default) or dark")
    p.add_argument("--no-coordinates", action="store_true", help="leave out the letters and numbers")
    p.add_argument("--out", metavar="FILE", help="FILE.svg or FILE.png (default: SVG on stdout)")
    p.set_defaults(run=run_picture)

    p = sub.add_parser("export", help="write stored games as SGF or PGN-like text",
                       description="Write games from the history (see 'noughts history') as SGF, which Gomoku "
                                   "and Renju viewers read, or as PGN-like text: players, date, board, result "
                                   "and moves. See docs/records.md.")
    p.add_argument("ids", nargs="*", type=int, metavar="ID", help="the games' numbers")
    p.add_argument("--all", action="store_true", help="every stored game, oldest first")
    p.add_argument("--format", choices=("sgf", "pgn"),
                   help="sgf or pgn (default: from --out's ending, else pgn)")
    p.add_argument("--out", metavar="FILE", help="the file to write (default: stdout)")
    db_option(p)
    p.set_defaults(run=run_export)

    p = sub.add_parser("import", help="add the games of an SGF or PGN-like file to the history",
                       description="Record the finished games of an SGF or PGN-like file (- for stdin) in the "
                                   "history and scores. Each game is added once: importing a file again adds "
                                   "nothing.")
    p.add_argument("file", metavar="FILE", help="the SGF or PGN-like file")
    db_option(p)
    p.set_defaults(run=run_import)


def _cmd_history(args: argparse.Namespace) -> int:
    from noughts import terminal

    if args.limit < 1:
        raise NoughtsError(f"--limit takes a number of games of at least 1, not {args.limit}")
    return terminal.history(args.db, args.limit, see_more="--limit N shows more")


def _cmd_replay(args: argparse.Namespace) -> int:
    from noughts import terminal

    return terminal.replay(args.id, db=args.db, step=not args.all)


def _cmd_scores(args: argparse.Namespace) -> int:
    from noughts import terminal

    if args.yes and not args.reset:
        raise NoughtsError("--yes only goes with --reset")
    if args.all and args.reset:
        raise NoughtsError("--all lists the scores; it does not go with --reset")
    return terminal.scores(args.db, reset=args.reset, yes=args.yes, show_all=args.all,
                           see_all=f"'{PROG} scores --all' lists every one")



# pictures and game records ----------------------------------------------------------------------

def run_picture(args: argparse.Namespace) -> int:
    """``noughts picture``: POSITION (or an empty board of --rows/--cols) to --out (stdout: SVG)."""
    from noughts import svg
    from noughts.board import Board
    from noughts.picture import format_of, png

    out = args.out
    kind = format_of(out)
    if args.position is not None:
        board = Board.parse(args.position, args.k)
    else:
        board = Board(3 if args.rows is None else args.rows, 3 if args.cols is None else args.cols, args.k)
    picture = svg.board(board, size=args.size, last_move=args.last, hint=args.move,
                        coordinates=not args.no_coordinates, theme=args.theme)
    if out is None or out == "-":
        sys.stdout.write(picture + "\n")
        return 0
    data = png(picture) if kind == "png" else (picture + "\n").encode("utf-8")
    try:
        with open(out, "wb") as file:
            file.write(data)
    except OSError as error:
        raise NoughtsError(f"cannot write {out}: {error.strerror or error}") from None
    return 0


def run_export(args: argparse.Namespace) -> int:
    """``noughts export``: stored games as SGF or PGN-like text, to a file or stdout."""
    from noughts.records import format_of, stored_records, write_records
    from noughts.store import open_store

    if args.all == bool(args.ids):
        raise NoughtsError("say which games to export: their numbers (see 'noughts history') or --all")
    fmt = args.format or format_of(args.out) or "pgn"
    with open_store(args.db, read_only=True) as store:
        if not store.enabled:
            raise NoughtsError(store.reason or "the score store cannot be read")
        records = stored_records(store, None if args.all else args.ids)
    text = write_records(records, fmt)
    if args.out in (None, "-"):
        sys.stdout.write(text)
    else:
        _write(args.out, text)
    if not records:
        print(f"{PROG}: there are no stored games to export", file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace) -> int:
    """``noughts import FILE``: the games of an SGF or PGN-like file (- for stdin) into the store."""
    from noughts.records import import_records, read_record_file
    from noughts.store import open_store

    name = "stdin" if args.file == "-" else args.file
    with _opened(args.file) as file:
        for _record in read_record_file(file, name):
            pass  # every game is read once first, a piece at a time: a file with a bad game adds nothing
        with open_store(args.db) as store:
            for notice in store.notices:
                print(f"{PROG}: {notice}", file=sys.stderr)
            if not store.enabled:
                raise NoughtsError(store.reason or "the score store cannot be written")
            report = import_records(store, read_record_file(file, name))
    print(report.summary() + ".")
    return 0


def _opened(path: str) -> IO[bytes]:
    """The file open for reading bytes and seeking; stdin (``-``) is copied to a temporary file first,
    in memory while it is small. More than a file of records may hold is refused."""
    import tempfile

    from noughts import text
    from noughts.errors import GameRecordError
    from noughts.records import MAX_FILE_BYTES

    try:
        if path != "-":
            return open(path, "rb")  # the caller closes it
        copy = tempfile.SpooledTemporaryFile(max_size=1 << 20)  # noqa: SIM115 (returned open)
        while copy.tell() <= MAX_FILE_BYTES and (data := sys.stdin.buffer.read(1 << 16)):
            copy.write(data)
    except OSError as error:
        raise NoughtsError(f"cannot read {path}: {error.strerror or error}") from None
    if copy.tell() > MAX_FILE_BYTES:
        copy.close()
        raise GameRecordError(text.records_file_too_large("stdin", MAX_FILE_BYTES))
    return copy


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)
    except OSError as error:
        raise NoughtsError(f"cannot write {path}: {error.strerror or error}") from None
