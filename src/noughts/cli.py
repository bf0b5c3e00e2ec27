"""The ``noughts`` command: one-shot questions, the JSON-lines engine, a terminal game and its scores.

Every subcommand imports what it needs when it runs, so ``noughts --help`` and the start of
``noughts engine`` stay fast (the solver and the players are only loaded when asked for).
"""

from __future__ import annotations

import sys

from noughts import __version__
from noughts.board import Board
from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing and argparse cost milliseconds; `noughts engine` needs neither
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn

__all__ = ["build_parser", "main"]

PROG = "noughts"
EXIT_USAGE = 2  # bad arguments, bad positions, illegal moves: anything the person can fix
EXIT_INTERRUPTED = 130  # the shell's convention for a program stopped by Ctrl-C (128 + SIGINT)

_DESCRIPTION = """\
Noughts and crosses (tic-tac-toe) on any rows×cols board with k in a row.

A position is written row by row, rows joined by '/', with X, O and . for an empty
cell: X.O/.X./..O (3×3 also as nine characters, X.O.X...O). Cells are named by
column letter and row number from the top-left (a1 .. c3), or numbered 1-9 in
reading order."""

_EPILOG = """\
examples:
  noughts move X.O/.X./..O --player perfect --seed 7
  noughts analyse X.O/.X./... --json
  noughts status XXX/OO./...
  echo '{"cmd":"move","position":"X.O/.X./..O"}' | noughts engine
  noughts play --opponent hard --first me
  noughts replay 3 --all

Errors are one line on stderr ("noughts: ...") and exit status 2."""


class _Failure(NoughtsError):
    """An error reply from the engine, re-raised so the one-shot commands exit with status 2."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand (argparse is imported only here)."""
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            # One line like every other noughts error, instead of argparse's usage block;
            # control characters typed in an argument are shown escaped so it stays one line.
            shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
            self.exit(EXIT_USAGE, f"{PROG}: {shown} (see '{self.prog} --help')\n")

    parser = _Parser(prog=PROG, description=_DESCRIPTION, epilog=_EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=_Parser)

    def board_options(p: argparse.ArgumentParser, json_flag: bool = True, size_flag: bool = True) -> None:
        p.add_argument("position", nargs="?", metavar="POSITION",
                       help="the position, e.g. X.O/.X./..O (default: the empty board)")
        if size_flag:
            p.add_argument("--size", metavar="N|RxC|RxCkK",
                           help="the board in one word, instead of --rows, --cols and --k: 4 is 4×4, 4x5 is "
                                "4 rows of 5, 7x7k5 is 7×7 with 5 in a row (with POSITION: it must agree)")
        p.add_argument("--k", type=int, metavar="K",
                       help="marks in a row to win (default: min(rows, cols, 5), so 3 on 3×3)")
        p.add_argument("--rows", type=int, metavar="N",
                       help="rows of the empty board when no POSITION is given (default 3)")
        p.add_argument("--cols", type=int, metavar="N",
                       help="columns of the empty board when no POSITION is given (default 3)")
        if json_flag:
            p.add_argument("--json", action="store_true",
                           help="print the engine's JSON reply instead of text")

    def budget_options(p: argparse.ArgumentParser, default: str) -> None:
        p.add_argument("--seconds", type=_seconds, metavar="S",
                       help=f"give up after S seconds ({default}); with --nodes, whichever comes first")
        p.add_argument("--nodes", type=_nodes, metavar="N",
                       help="give up after searching N positions (the same answer on any machine)")

    p = sub.add_parser("move", help="ask a computer player for its move",
                       description="Ask a computer player which move it makes in POSITION. "
                                   "Prints e.g. 'perfect plays b2 (cell 5)'.")
    board_options(p)
    p.add_argument("--player", default="perfect", metavar="NAME",
                   help="the player to ask (default: perfect; see 'noughts players')")
    p.add_argument("--seed", type=int, metavar="N",
                   help="seed for the player's random choices: the same seed gives the same move "
                        "(default: a fresh random seed)")
    budget_options(p, "default: the player's own limit, 30 s for perfect, 1 s for minimax")
    p.set_defaults(run=_cmd_move)

    p = sub.add_parser("analyse", aliases=["analyze"], help="solve a position exactly, move by move",
                       description="The value of POSITION for the side to move under perfect play, and "
                                   "the result of every legal move for the player who makes it "
                                   "(win in N plies / draw / loss in N plies), best first. Gives up "
                                   "with an error on boards too big to solve in the engine's budget.")
    board_options(p)
    budget_options(p, "default: 30 s or 2,000,000 positions")
    p.add_argument("--explain", action="store_true",
                   help="also show how a draw is held without search, if it is: a pairing of cells "
                        "(a diagram with each pair's letter)")
    p.add_argument("--value-only", action="store_true",
                   help="only the position's value, not every move's: the value is proved first, then its "
                        "length is searched for in what is left of the budget, and if not found the answer "
                        "says so (for big boards, e.g. --rows 4 --cols 9 --k 4 --seconds 600)")
    p.set_defaults(run=_cmd_analyse)

    p = sub.add_parser("status", help="whose turn, who has won, the legal moves",
                       description="Whose turn it is in POSITION, whether the game is over and how, "
                                   "and the legal moves.")
    board_options(p)
    p.set_defaults(run=_cmd_status)

    p = sub.add_parser("players", help="list the computer players",
                       description="The computer players, with a line about each.")
    p.add_argument("--json", action="store_true", help="print the engine's JSON reply instead of text")
    p.set_defaults(run=_cmd_players)

    p = sub.add_parser("engine", help="answer JSON requests on stdin, one per line",
                       description="Read one JSON request per line on stdin and write one JSON reply "
                                   "per line on stdout, in order, until end of input. Requests: "
                                   '{"cmd":"move"|"analyse"|"status"|"players", ...}; see '
                                   "docs/engine-protocol.md.")
    p.set_defaults(run=_cmd_engine)
    _add_other_programs(sub)

    p = sub.add_parser("play", help="play in the terminal: against the computer or another person",
                       description=_PLAY_DESCRIPTION, epilog=_PLAY_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_game_options(p)
    p.set_defaults(run=_cmd_play)

    p = sub.add_parser("gui", help="play in a desktop window (pygame-ce)",
                       description="Open the game in a window: a start screen to choose the opponent and "
                                   "who goes first (crosses go first, noughts second), then the board. Play "
                                   "by mouse, or keys 1-9 / arrows and Enter. Same options as 'play'; "
                                   "with --opponent and --first (or --mark) the game starts at once.")
    _add_game_options(p)
    p.add_argument("--think-delay", type=float, default=0.0, metavar="SECONDS",
                   help="pause before the computer's move, as the Arduino game's 'thinking' (default 0)")
    p.set_defaults(run=_cmd_gui)

    p = sub.add_parser("web", help="serve the game to browsers (http://127.0.0.1:8000)",
                       description="Serve the game as a web page: play any computer player, or create a room "
                                   "and send its link to a friend. The server decides every move; finished "
                                   "games go to the same scores as 'noughts play'. Ctrl-C stops it.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 for "
                                                       "every interface)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    _db_option(p)
    p.add_argument("--no-scores", action="store_true", help="record nothing: no scores, no history")
    p.add_argument("--redis", metavar="URL", help="keep the rooms in Redis (redis://HOST:PORT/N), shared by every "
                                                  "server process given the same URL")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="serve the port from N processes (default 1; more than 1 needs --redis)")
    p.add_argument("--public-url", metavar="URL",
                   help="the address friends are sent, like http://192.168.1.20:8000 or https://games.example.org "
                        "(default: this machine's network address when --host is 0.0.0.0)")
    p.add_argument("--allowed-host", action="append", metavar="NAME", dest="allowed_hosts",
                   help="a host name (or address) the server answers to; repeat for more, '*' for any "
                        "(default: the names of --host: localhost, 127.0.0.1 and ::1 on loopback; "
                        "the host of --public-url is always added)")
    p.add_argument("--trusted-proxy", action="append", metavar="ADDR[,ADDR...]", dest="trusted_proxies",
                   help="a reverse proxy in front of the server (an address or network, like 10.0.0.0/8): only "
                        "from these peers is X-Forwarded-For believed, so the per-address limits apply to each "
                        "client, not to the proxy (default: none; the header is ignored)")
    p.add_argument("--loop", choices=["auto", "asyncio", "uvloop"], default="auto",
                   help="the event loop (default auto: uvloop when installed, the cheaper a move)")
    p.add_argument("--ws", choices=["websockets-sansio", "websockets", "wsproto"], default="websockets-sansio",
                   help="uvicorn's websocket implementation (default websockets-sansio, the cheapest a move)")
    p.set_defaults(run=_cmd_web)

    # Listed for --help only: main() hands 'panel ...' to noughts.hardware before argparse.
    sub.add_parser("panel", add_help=False,
                   help="the LED-and-button panel: a terminal simulator, a Raspberry Pi or an Arduino "
                        "(see 'noughts panel --help')")
    sub.add_parser("robot", add_help=False,
                   help="a pen robot draws the game on paper and reads your marks; simulated in this terminal "
                        "without hardware (see 'noughts robot --help')")

    p = sub.add_parser("history", help="list the games played, newest first",
                       description="The stored games, newest first: number, when (local time), who played "
                                   "X and O, the result and the moves.")
    _db_option(p)
    p.add_argument("--limit", type=int, default=20, metavar="N", help="how many games to list (default 20)")
    p.set_defaults(run=_cmd_history)

    p = sub.add_parser("replay", help="step through a stored game move by move",
                       description="Show a stored game (see 'noughts history') move by move: press Enter "
                                   "for the next move, q to stop.")
    p.add_argument("id", type=int, metavar="ID", help="the game's number in 'noughts history'")
    p.add_argument("--all", action="store_true", help="print every move at once, without waiting")
    _db_option(p)
    p.set_defaults(run=_cmd_replay)

    p = sub.add_parser("scores", help="high scores, the current run and wins/losses/draws",
                       description="The high score of each difficulty (the EV3 robot's rules: a win scores "
                                   "1 on easy, 2 on medium, 3 on hard, and a loss or draw ends the run) and "
                                   "the current run, 3×3 first and then every other board played, and wins, "
                                   "losses and draws against the ten computer players and between the ten "
                                   "people with the most games.")
    _db_option(p)
    p.add_argument("--all", action="store_true",
                   help="list every computer player and person played, not only the ten with the most games")
    p.add_argument("--reset", action="store_true",
                   help="delete every score (after asking; the game history is kept)")
    p.add_argument("--yes", action="store_true", help="with --reset: do not ask")
    p.set_defaults(run=_cmd_scores)

    # Pictures and game records: the handlers live in noughts.picture and noughts.records.
    def handler(module: str, name: str) -> Callable[[argparse.Namespace], int]:
        def run(args: argparse.Namespace) -> int:
            import importlib

            function: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(module), name)
            return function(args)
        return run

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
    p.set_defaults(run=handler("noughts.picture", "run_picture"))

    p = sub.add_parser("export", help="write stored games as SGF or PGN-like text",
                       description="Write games from the history (see 'noughts history') as SGF, which Gomoku "
                                   "and Renju viewers read, or as PGN-like text: players, date, board, result "
                                   "and moves. See docs/records.md.")
    p.add_argument("ids", nargs="*", type=int, metavar="ID", help="the games' numbers")
    p.add_argument("--all", action="store_true", help="every stored game, oldest first")
    p.add_argument("--format", choices=("sgf", "pgn"),
                   help="sgf or pgn (default: from --out's ending, else pgn)")
    p.add_argument("--out", metavar="FILE", help="the file to write (default: stdout)")
    _db_option(p)
    p.set_defaults(run=handler("noughts.records", "run_export"))

    p = sub.add_parser("import", help="add the games of an SGF or PGN-like file to the history",
                       description="Record the finished games of an SGF or PGN-like file (- for stdin) in the "
                                   "history and scores. Each game is added once: importing a file again adds "
                                   "nothing.")
    p.add_argument("file", metavar="FILE", help="the SGF or PGN-like file")
    _db_option(p)
    p.set_defaults(run=handler("noughts.records", "run_import"))
    _add_arena_commands(sub)
    return parser


_built: list[argparse.ArgumentParser] = []


def _parser() -> argparse.ArgumentParser:
    """The parser main() uses, built once: it takes some 10 ms, and programs and tests that drive
    the command in-process call main() again and again (parsing leaves the parser as it was)."""
    if not _built:
        _built.append(build_parser())
    return _built[0]


def _db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", metavar="PATH|URL",
                   help="the scores and history database: a SQLite file, or postgresql://user@host/dbname "
                        "(default: $NOUGHTS_DB, else ~/.local/share/noughts/noughts.db)")


def _add_game_options(p: argparse.ArgumentParser) -> None:
    """The options `play` and `gui` share: who plays, who starts, the board, the scores."""
    # Values stay text here: noughts.match.play_options checks them, for this parser and for the
    # fast path in main() alike, so both give the same game and the same errors.
    p.add_argument("--opponent", metavar="NAME",
                   help="easy, medium, hard, any player of 'noughts players', or person (another person "
                        "at this keyboard); the menu's default is medium, or arduino on a board medium "
                        "cannot play")
    p.add_argument("--first", metavar="WHO",
                   help="who moves first, and so plays X: me, computer (with two people: the second "
                        "person), alternate (each game, you first), loser (the loser of each game starts the next) or "
                        "random (a coin toss each game); the menu's default is alternate")
    p.add_argument("--mark", metavar="X|O",
                   help="your mark; X always moves first, so X is --first me and O is --first computer")
    p.add_argument("--seed", metavar="N", help="seed for the computer's random choices and random first moves")
    p.add_argument("--size", metavar="N|RxC|RxCkK",
                   help="board size: 4 is 4×4, 4x5 is 4 rows of 5, 7x7k5 is 7×7 with 5 in a row (default 3)")
    p.add_argument("--k", metavar="K", help="marks in a row to win (default: min(rows, cols, 5))")
    p.add_argument("--best-of", metavar="N",
                   help="play matches of N games (ending early once someone has won most of them) "
                        "and name each match's winner")
    _db_option(p)
    p.add_argument("--name", action="append", metavar="NAME",
                   help="your name for the scores (default: $USER, else You); give it twice to name "
                        "both people of a two-person game")
    p.add_argument("--no-scores", action="store_true", help="record nothing: no scores, no history")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    for stream in (sys.stdout, sys.stderr):
        # A message quoting odd input must never crash on a narrow terminal encoding.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["panel"]:
        # The panel parses its own options (backends, calibration); see docs/hardware.md.
        from noughts.hardware import main as panel_main

        return panel_main(arguments[1:])
    if arguments[:1] == ["robot"]:
        # The robot parses its own options and subcommands (paper, preview, sense); see docs/robot.md.
        from noughts.robot.app import main as robot_main

        return robot_main(arguments[1:])
    if arguments == ["engine"]:
        # Programs start the engine often and wait for it: skip building the parser.
        return _guarded(_cmd_engine, None)
    if arguments[:1] == ["play"]:
        quick = quick_play_args(arguments[1:])
        if quick is not None:  # a person waits for the menu: skip building the parser
            return _guarded(_cmd_play, _QuickArgs(quick))
    args = _parser().parse_args(arguments)
    if args.command is None:
        print(f"{PROG}: say what to do: play, gui, web, panel, robot, history, replay, scores, export, import, "
              f"move, analyse, status, players, picture, arena, audit, engine or gomocup (see '{PROG} --help')",
              file=sys.stderr)
        return EXIT_USAGE
    return _guarded(args.run, args)


def _guarded(command: Callable[[Any], int], args: Any) -> int:
    """Run a subcommand, turning every error a person can cause into one line and status 2."""
    try:
        status = command(args)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handlers below
        return status
    except NoughtsError as error:
        message = " ".join(str(error).split())  # one line, whatever the message held
        print(f"{PROG}: {message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()  # the reader left (e.g. `| head`): nothing more to say to anyone
        return 1
    except Exception as error:  # a bug: still one line, unless asked for the traceback
        import os

        if os.environ.get("NOUGHTS_DEBUG"):
            raise
        print(f"{PROG}: internal error (please report it; NOUGHTS_DEBUG=1 shows where): "
              f"{type(error).__name__}: {error}", file=sys.stderr)
        return 1


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's final flush cannot fail again
    except (OSError, ValueError):  # not a real file (e.g. captured by a test): nothing to protect
        pass


# subcommands --------------------------------------------------------------------------------

def _ask(args: argparse.Namespace, cmd: str, **extra: Any) -> dict[str, Any]:
    """Send a request through the engine's own handler, so the JSON is the engine's exactly."""
    from noughts import engine

    _read_size(args)
    request: dict[str, Any] = {"cmd": cmd, **extra}
    for field in ("position", "rows", "cols", "k"):
        if getattr(args, field, None) is not None:
            request[field] = getattr(args, field)
    show_progress = cmd == "analyse" and sys.stderr.isatty()
    thinking = _Thinking() if cmd == "move" else None
    try:
        reply = engine.handle(request, progress=_show_progress if show_progress else None)
    except KeyboardInterrupt:
        if show_progress:
            print(f"\r\033[K{PROG}: solving stopped", file=sys.stderr, flush=True)
        raise
    finally:
        if thinking is not None:
            thinking.stop()
    if show_progress:
        print("\r\033[K", end="", file=sys.stderr, flush=True)  # clear the progress line
    if "error" in reply:
        raise _Failure(reply["error"])
    if getattr(args, "json", False):
        print(engine.encode(reply))
    return reply


THINKING_AFTER = 1.0  # seconds of silence before `noughts move` says it is thinking


class _Thinking:
    """Says "thinking…" on stderr if a move is not ready after THINKING_AFTER seconds.

    On a terminal the line is erased when the move comes; elsewhere it stays, a line of its own.
    """

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._done = False
        self._shown = False
        self._timer = threading.Timer(THINKING_AFTER, self._show)
        self._timer.name = "noughts-thinking"
        self._timer.daemon = True
        self._timer.start()

    def _show(self) -> None:
        with self._lock:
            if self._done:
                return
            self._shown = True
            if sys.stderr.isatty():
                print("thinking… (Ctrl-C to stop)", end="", file=sys.stderr, flush=True)
            else:
                print(f"{PROG}: thinking…", file=sys.stderr, flush=True)

    def stop(self) -> None:
        with self._lock:
            self._done = True
            self._timer.cancel()
            if self._shown and sys.stderr.isatty():
                print("\r\033[K", end="", file=sys.stderr, flush=True)
        self._timer.join()


def _seconds(text: str) -> float:
    import argparse
    import math

    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"a number of seconds above 0, like 2.5, not {text!r:.20}")
    return seconds


def _nodes(text: str) -> int:
    import argparse

    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise argparse.ArgumentTypeError(f"a whole number of positions, like 100000, not {text!r:.20}")
    return int(text)


def _show_progress(nodes: int, seconds: float) -> None:
    """One line on the terminal, rewritten as a long solve goes on (Ctrl-C stops it)."""
    print(f"\rsolving: {nodes:,} positions searched in {seconds:.0f} s (Ctrl-C to stop)",
          end="", file=sys.stderr, flush=True)


def _read_size(args: argparse.Namespace) -> None:
    """Turn --size (7x7k5) into --rows, --cols and --k, refusing any of them that says otherwise."""
    size = getattr(args, "size", None)
    if size is None:
        return
    from noughts.board import Geometry

    try:
        shape = Geometry.parse(size)
    except NoughtsError as error:
        raise NoughtsError(f"--size takes a board like 4 (4×4), 4x5 (4 rows, 5 columns) or 7x7k5 "
                           f"(and 5 in a row): {error}") from None
    for flag, given, said in (("--rows", args.rows, shape.rows), ("--cols", args.cols, shape.cols),
                              ("--k", args.k, shape.k if "k" in size.lower() else None)):
        if given is not None and said is not None and given != said:
            raise NoughtsError(f"--size {size.strip()} says {said} {'in a row' if flag == '--k' else flag[2:]}, "
                               f"but {flag} says {given}: give one or make them agree")
    if "k" in size.lower():
        args.k = shape.k
    if args.position is None:
        args.rows, args.cols = shape.rows, shape.cols
    else:  # the position has its own shape: --size may only agree with it
        board = Board.parse(args.position, args.k)
        if (board.rows, board.cols) != (shape.rows, shape.cols):
            raise NoughtsError(f"--size {size.strip()} is {shape.rows}×{shape.cols}, but the position is "
                               f"{board.rows}×{board.cols}: leave --size out or make them agree")
    args.size = None


def _board(args: argparse.Namespace) -> Board:
    if args.position is not None:
        return Board.parse(args.position, args.k)
    return Board(3 if args.rows is None else args.rows, 3 if args.cols is None else args.cols, args.k)


def _cmd_move(args: argparse.Namespace) -> int:
    reply = _ask(args, "move", player=args.player, seed=args.seed, seconds=args.seconds, nodes=args.nodes)
    if not args.json:
        name = args.player.strip().lower()  # as the registry reads it
        print(f"{name} plays {reply['cell']} (cell {reply['index'] + 1})")
    return 0


def _cmd_analyse(args: argparse.Namespace) -> int:
    extra = {"value_only": True} if args.value_only else {}
    reply = _ask(args, "analyse", seconds=args.seconds, nodes=args.nodes, **extra)
    if not args.json:
        print(_analysis_text(_board(args), reply))
    if args.explain:
        print(_pairing_text(_board(args)))
    return 0


def _pairing_text(board: Board) -> str:
    """The pairings that hold each side's draw here, as diagrams, or a line saying there are none."""
    from noughts import solver

    if board.is_over:
        return "the game is over: nothing to explain"
    parts = []
    for defender, attacker in (("O", "X"), ("X", "O")):
        pairs = solver.pairing(board, defender)
        if pairs is None:
            parts.extend(_set_matching_text(board, defender, attacker))
            continue
        if not pairs:
            parts.append(f"{attacker} has no line left to complete.")
            continue
        parts.append(f"{defender} stops {attacker} by pairing ({len(pairs)} pairs): whenever {attacker} "
                     f"takes a lettered cell, {defender} takes the other cell with the same letter, "
                     f"and every line {attacker} could complete holds both cells of a pair.")
        parts.append(solver.pairing_diagram(board, pairs))
    if not parts:
        return ("no pairing covers every line here: the value was proved by search "
                "(pairings deeper in the game cut it short)")
    return "\n".join(parts)


def _set_matching_text(board: Board, defender: str, attacker: str) -> list[str]:
    """Where no pairing holds: the set matching (Uiterwijk) that does, if one is found."""
    from noughts.solver.matching import find_set_matching, set_matching_text

    mine, theirs = (board.x, board.o) if defender == "X" else (board.o, board.x)
    matching = find_set_matching(board.geometry, theirs, mine, defender_to_move=board.turn == defender)
    if matching is None:
        return []
    how = "set matching (Uiterwijk)" if any(block.answers for block in matching.blocks) else "pairing"
    return [f"{defender} stops {attacker} by {how}, with no search:", set_matching_text(board, defender, matching)]


def _cmd_status(args: argparse.Namespace) -> int:
    reply = _ask(args, "status")
    if not args.json:
        from noughts.text import board_diagram

        board = _board(args)
        print(board_diagram(board))
        print(_status_text(board, reply))
    return 0


def _cmd_players(args: argparse.Namespace) -> int:
    reply = _ask(args, "players")
    if not args.json:
        names = reply["players"]
        width = max((len(n) for n in names), default=0)
        for name in names:
            print(f"{name:<{width}}  {reply['descriptions'][name]}")
    return 0


def _cmd_engine(args: argparse.Namespace | None) -> int:
    from noughts import engine

    return engine.run(sys.stdin.buffer, sys.stdout)


# other programs: the Gomocup brain ----------------------------------------------------------

def _add_other_programs(sub: Any) -> None:
    p = sub.add_parser("gomocup", help="play in Gomocup (Piskvork) gomoku managers, on stdin/stdout",
                       description="Speak the Gomocup brain protocol on stdin and stdout (START, BEGIN, TURN, "
                                   "BOARD, INFO, END, ABOUT, ...), so noughts plays in Piskvork and other gomoku "
                                   "managers; coordinates are x,y from 0. Moves keep to the time limits the "
                                   "manager sends with INFO. See docs/gomocup.md.")
    p.add_argument("--player", default="minimax", metavar="NAME",
                   help="the player that moves (default: minimax; see 'noughts players')")
    p.add_argument("--k", type=int, metavar="K",
                   help="marks in a row to win (default: five, or the board's smaller side if shorter)")
    p.add_argument("--seed", type=int, metavar="N", help="seed for the player's random choices")
    p.add_argument("--nodes", type=_nodes, metavar="N",
                   help="search at most N positions a move, besides the time limits (the same moves on any machine)")
    p.set_defaults(run=_cmd_gomocup)


def _cmd_gomocup(args: argparse.Namespace) -> int:
    from noughts import gomocup

    brain = gomocup.Brain(args.player, k=args.k, seed=args.seed, nodes=args.nodes)
    if sys.stdin.isatty():
        print(f"{PROG}: a Gomocup brain, waiting for a manager's commands (START 15, BEGIN, TURN 7,7, END); "
              "see docs/gomocup.md", file=sys.stderr)
    return gomocup.run(sys.stdin.buffer, sys.stdout, brain)


def _cmd_play(args: argparse.Namespace) -> int:
    from noughts import terminal
    from noughts.match import play_options

    options = play_options(
        opponent=args.opponent, first=args.first, mark=args.mark, best_of=args.best_of, seed=args.seed,
        size=args.size, k=args.k, db=args.db, names=args.name, no_scores=args.no_scores)
    return terminal.play(options)


def _cmd_gui(args: argparse.Namespace) -> int:
    from noughts import desktop

    return desktop.run(opponent=args.opponent, first=args.first, mark=args.mark, best_of=args.best_of, seed=args.seed,
                       size=args.size, k=args.k, db=args.db, names=args.name,
                       no_scores=args.no_scores, think_delay=args.think_delay)


def _cmd_web(args: argparse.Namespace) -> int:
    from noughts.web import serve

    serve(host=args.host, port=args.port, db=args.db, scores=not args.no_scores, redis=args.redis,
          workers=args.workers, public_url=args.public_url, allowed_hosts=args.allowed_hosts,
          trusted_proxies=args.trusted_proxies, loop=args.loop, ws=args.ws)
    return 0


def _cmd_history(args: argparse.Namespace) -> int:
    from noughts import terminal

    return terminal.history(args.db, args.limit)


def _cmd_replay(args: argparse.Namespace) -> int:
    from noughts import terminal

    return terminal.replay(args.id, db=args.db, step=not args.all)


def _cmd_scores(args: argparse.Namespace) -> int:
    from noughts import terminal

    if args.yes and not args.reset:
        raise NoughtsError("--yes only goes with --reset")
    if args.all and args.reset:
        raise NoughtsError("--all lists the scores; it does not go with --reset")
    return terminal.scores(args.db, reset=args.reset, yes=args.yes, show_all=args.all)


# arena and audit (noughts.arena, noughts.audit) -----------------------------------------------

def _add_arena_commands(sub: Any) -> None:
    def whole(text: str) -> int:
        import argparse

        if not (text.isascii() and text.isdigit() and 0 < len(text) <= 9 and int(text) > 0):
            raise argparse.ArgumentTypeError(f"a whole number from 1, like 100, not {text!r:.20}")
        return int(text)

    def fraction(text: str) -> float:
        import argparse

        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 < value < 1:
            raise argparse.ArgumentTypeError(f"a fraction between 0 and 1, like 0.95, not {text!r:.20}")
        return value

    def seed(text: str) -> int:
        import argparse

        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"a whole number, like 7, not {text!r:.20}") from None

    p = sub.add_parser("arena", help="a round robin between computer players, with ratings",
                       description="Every pair of PLAYERs plays GAMES games with each colour. Prints each pair's "
                                   "wins, draws and losses, each player's score and an Elo-style rating with its "
                                   "95%% interval; --chart draws the ratings as SVG or PNG. Games are seeded from "
                                   "--seed, the two names and the game's number: the same command gives the same table "
                                   "with any --jobs. Ctrl-C stops it and prints the games finished. "
                                   "See docs/arena.md.")
    p.add_argument("players", nargs="+", metavar="PLAYER", help="two or more players (see 'noughts players')")
    p.add_argument("--board", default="3x3k3", metavar="RxCkK",
                   help="the board, e.g. 4x4 or 7x7k5 (rows x columns, k in a row; default 3x3k3)")
    p.add_argument("--games", type=whole, default=20, metavar="N",
                   help="games per pairing and colour (default 20)")
    p.add_argument("--seed", type=seed, metavar="S", help="the tournament's seed (default: a random one, printed)")
    p.add_argument("--jobs", type=whole, metavar="J", help="processes to play in (default: one per core; 1: this one)")
    p.add_argument("--nodes", type=whole, metavar="N",
                   help="positions a searching player may look at per move (default 100000; no time limit, so "
                        "the results do not depend on the machine)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--chart", metavar="FILE", help="also draw the ratings as a chart: FILE.svg, or FILE.png "
                                                   "(pip install 'noughts[picture]')")
    p.set_defaults(run=_cmd_arena)

    p = sub.add_parser("audit", help="how a computer player can be beaten",
                       description="Over every position PLAYER can reach (exhaustive on 3×3: every move it may "
                                   "pick against every reply), as X and as O: whether it ever loses, the shortest "
                                   "loss, the opponent's fastest forced win if there is one, and the moves that "
                                   "throw away a win or a draw (by the solver), with the positions drawn. On "
                                   "boards over 9 cells (or with --samples) it plays sampled games against "
                                   "--opponent and states a loss rate bound with --confidence. See docs/audit.md.")
    p.add_argument("player", metavar="PLAYER", help="the player to audit (see 'noughts players')")
    p.add_argument("--board", default="3x3k3", metavar="RxCkK",
                   help="the board, e.g. 4x4 or 7x7k5 (rows x columns, k in a row; default 3x3k3)")
    p.add_argument("--as", dest="sides", default="both", metavar="X|O|both", help="the side(s) it plays (default both)")
    p.add_argument("--samples", type=whole, metavar="N",
                   help="sample N games per side instead of the exhaustive walk (the default above 9 cells: 200)")
    p.add_argument("--confidence", type=fraction, default=0.95, metavar="C",
                   help="confidence of the sampled loss-rate bound (default 0.95)")
    p.add_argument("--opponent", default="random", metavar="NAME",
                   help="who the sampled games are played against (default random)")
    p.add_argument("--seed", type=seed, default=0, metavar="S", help="seed of the sampled games (default 0)")
    p.add_argument("--jobs", type=whole, metavar="J", help="processes for the sampled games (default: one per core)")
    p.add_argument("--show", type=int, default=3, metavar="N", help="positions drawn for each finding (default 3)")
    p.add_argument("--json", action="store_true", help="print the audit as JSON")
    p.add_argument("--out", metavar="DIR", help="also write the positions as pictures into DIR")
    p.set_defaults(run=_cmd_audit)


def _cmd_arena(args: argparse.Namespace) -> int:
    import json
    import random

    from noughts import arena

    if args.chart is not None and not args.chart.lower().endswith((".svg", ".png")):
        raise arena.ArenaError(f"--chart writes SVG or PNG: give a file name ending in .svg or .png, "
                               f"not {args.chart[:40]!r}")
    board = arena.parse_board(args.board)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1_000_000)
    jobs = args.jobs if args.jobs is not None else arena.default_jobs()
    progress = arena.Progress("arena")
    try:
        result = arena.run_arena(args.players, board, games=args.games, seed=seed, jobs=jobs,
                                 nodes=args.nodes or arena.DEFAULT_NODES, progress=progress)
    finally:
        progress.close()
    if not result.complete:
        print(f"{PROG}: arena stopped: {result.played:,} of {result.scheduled:,} games played", file=sys.stderr)
    table = arena.standings(result)
    if args.chart is not None:
        chart = arena.chart_svg(result, table)
        if args.chart.lower().endswith(".png"):
            from noughts.picture import png

            data = png(chart)
        else:
            data = chart.encode("utf-8")
        try:
            with open(args.chart, "wb") as file:
                file.write(data)
        except OSError as error:
            raise arena.ArenaError(f"cannot write the chart to {args.chart[:60]!r}: {error.strerror}") from None
    print(json.dumps(arena.results_json(result, table)) if args.json else arena.results_text(result, table))
    return 0 if result.complete else EXIT_INTERRUPTED


def _cmd_audit(args: argparse.Namespace) -> int:
    import json

    from noughts import arena, audit

    progress = arena.Progress("audit")
    try:
        report = audit.audit(args.player, arena.parse_board(args.board), sides=args.sides, samples=args.samples,
                             confidence=args.confidence, opponent=args.opponent, seed=args.seed,
                             jobs=args.jobs if args.jobs is not None else arena.default_jobs(), progress=progress)
    finally:
        progress.close()
    if args.out is not None:
        try:
            written = audit.write_pictures(report, args.out, max(args.show, 1))
        except OSError as error:
            raise arena.ArenaError(f"cannot write pictures to {args.out[:60]!r}: {error.strerror}") from None
        print(f"{PROG}: {len(written)} pictures written to {args.out}", file=sys.stderr)
    print(json.dumps(audit.report_json(report)) if args.json else audit.report_text(report, max(args.show, 0)))
    return 0 if report.complete else EXIT_INTERRUPTED


# `noughts play` without argparse: its import and the parser's construction alone take longer
# than Python's own start-up, and the menu must appear at once. Only the plain forms are read
# here (--opt VALUE, --opt=VALUE); anything else (--help, abbreviations, a value starting
# with '-', an unknown word) goes to argparse, which then decides.
_PLAY_VALUES = {"--opponent": "opponent", "--first": "first", "--mark": "mark", "--best-of": "best_of",
                "--seed": "seed", "--size": "size", "--k": "k", "--db": "db", "--name": "name"}


class _QuickArgs:
    """The attributes argparse's Namespace would have for `noughts play`."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


def quick_play_args(tokens: Sequence[str]) -> dict[str, Any] | None:
    """The options of `noughts play` as argparse would read them, or ``None`` to let argparse read them."""
    values: dict[str, Any] = dict.fromkeys(_PLAY_VALUES.values())
    values["no_scores"] = False
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "--no-scores":
            values["no_scores"] = True
            i += 1
            continue
        option, equals, value = token.partition("=")
        dest = _PLAY_VALUES.get(option)
        if dest is None:
            return None
        if equals:
            i += 1
        elif i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
            value = tokens[i + 1]
            i += 2
        else:
            return None
        if dest == "name":
            values["name"] = [*(values["name"] or []), value]
        else:
            values[dest] = value
    return values


_PLAY_DESCRIPTION = """\
Play noughts and crosses in the terminal, against a computer player or another person
at the same keyboard. With no options a short menu asks who to play and who moves
first; pressing Enter through it starts a game against medium (arduino on a board
medium cannot play), taking turns, you first.

X always moves first and O second, so choosing who moves first chooses the marks too:
the first mover is X. --first alternate swaps every game (you first in game 1).

Type moves as a number 1-9 (reading order) or as column and row, a1-c3. At the move
prompt you can also type undo (take back your move and the computer's reply), hint
(the best move and where it leads), help and quit. Every finished game is recorded
with the scores (see 'noughts scores' and 'noughts history'); a game left unfinished
(quit, Ctrl-D, Ctrl-C) is not. When --opponent and --first (or --mark) are given, the
menu is skipped; an --opponent that cannot play the --size given is refused at once."""

_PLAY_EPILOG = """\
examples:
  noughts play                                  the menu
  noughts play --opponent hard --first me       straight into a game
  noughts play --opponent person --name Ann --name Bob --first alternate
  noughts play --opponent easy --mark O --best-of 3 --seed 7
  noughts play --opponent perfect --first me --size 4
  noughts play --opponent strong --size 15x15k5  gomoku: 15×15, five in a row

Exit status: 0 when you stop or input ends, 130 on Ctrl-C, 2 for bad options."""


# text output --------------------------------------------------------------------------------

def _plies(n: int) -> str:
    return f"{n} ply" if n == 1 else f"{n} plies"


def _outcome(value: int, plies: int, *, short: bool) -> str:
    """'win in 3', 'draw', 'loss in 4' (short) or with 'plies' and the draw's length (long)."""
    if value == 0:
        return "draw" if short else f"draw in {_plies(plies)}"
    word = "win" if value > 0 else "loss"
    return f"{word} in {plies}" if short else f"{word} in {_plies(plies)}"


def _analysis_text(board: Board, reply: dict[str, Any]) -> str:
    if board.is_over:
        return _over_text(board)
    side = board.turn
    if "moves" not in reply:  # --value-only
        return f"{side} to move: {_value_text(reply)}"
    lines = [f"{side} to move: {_outcome(reply['value'], reply['plies'], short=False)}"]

    def preference(move: dict[str, Any]) -> tuple[int, int, int]:
        # quick wins first, then draws, then the slowest losses
        v, p = move["value"], move["plies"]
        return (-v, p if v > 0 else -p if v < 0 else 0, move["index"])

    lines.append(f"  cell  no.  result for {side}")
    for move in sorted(reply["moves"], key=preference):
        best = (move["value"], move["plies"]) == (reply["value"], reply["plies"])
        result = _outcome(move["value"], move["plies"], short=True)
        lines.append(f"  {move['cell']:<4}  {move['index'] + 1:>3}  {result}{'  (best)' if best else ''}")
    return "\n".join(lines)


def _value_text(reply: dict[str, Any]) -> str:
    """The value of a --value-only reply, saying so when the length was not found."""
    value, plies = reply["value"], reply["plies"]
    if plies is not None:
        return _outcome(value, plies, short=False)
    word = "win" if value > 0 else "loss"
    fewest, most = reply["fewest_plies"], reply["most_plies"]
    return (f"{word} (proved); the length of the {word} was not found within the budget: "
            f"between {fewest} and {most} plies")


def _status_text(board: Board, reply: dict[str, Any]) -> str:
    if reply["over"]:
        return _over_text(board)
    import textwrap

    legal = " ".join(board.cell_name(c) for c in reply["legal"])
    return textwrap.fill(f"{reply['turn']} to move; legal moves: {legal}", 80, subsequent_indent="  ")


def _over_text(board: Board) -> str:
    if board.winner:
        cells = " ".join(board.cell_name(c) for c in board.winning_line or ())
        return f"game over: {board.winner} has won ({cells})"
    return "game over: a draw (the board is full)"
