"""The ``noughts`` command: one module per group of subcommands, the parser and main() here.

- :mod:`noughts.cli.positions`: ``move``, ``analyse``, ``status``, ``players``, ``engine``;
- :mod:`noughts.cli.play`: ``play``, ``gui``, ``web``;
- :mod:`noughts.cli.paper`: ``paper`` (real paper, watched through a camera);
- :mod:`noughts.cli.records`: ``history``, ``replay``, ``scores``, ``picture``, ``export``, ``import``;
- :mod:`noughts.cli.tools`: ``gomocup``, ``arena``, ``audit``;
- :mod:`noughts.cli.panel` and :mod:`noughts.cli.robot`: ``panel`` and ``robot``, with parsers of their own.

Flags, usage and option errors live here; the core checks values in its own words. Every
subcommand imports what it needs when it runs, so ``noughts --help`` and the start of
``noughts engine`` stay fast (the solver and the players are only loaded when asked for).
"""

from __future__ import annotations

import sys

from noughts import __version__
from noughts.cli.common import EXIT_INTERRUPTED, EXIT_USAGE, PROG
from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing and argparse cost milliseconds; `noughts engine` needs neither
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn

__all__ = ["EXIT_INTERRUPTED", "EXIT_USAGE", "PROG", "build_parser", "main", "quick_play_args"]

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



def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand (argparse is imported only here)."""
    import argparse

    from noughts.cli import panel, paper, play, positions, records, robot, tools


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

    positions.add_commands(sub)
    tools.add_other_programs(sub)
    play.add_commands(sub)
    paper.add_commands(sub)
    # Listed for --help only: main() hands 'panel ...' and 'robot ...' to their own parsers.
    sub.add_parser("panel", add_help=False, help=panel.SUMMARY)
    sub.add_parser("robot", add_help=False, help=robot.SUMMARY)
    records.add_commands(sub)
    tools.add_arena_commands(sub)
    return parser


_built: list[argparse.ArgumentParser] = []


def _parser() -> argparse.ArgumentParser:
    """The parser main() uses, built once: it takes some 10 ms, and programs and tests that drive
    the command in-process call main() again and again (parsing leaves the parser as it was)."""
    if not _built:
        _built.append(build_parser())
    return _built[0]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    for stream in (sys.stdout, sys.stderr):
        # A message quoting odd input must never crash on a narrow terminal encoding.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["panel"]:
        # The panel parses its own options (backends, calibration); see docs/hardware.md.
        from noughts.cli.panel import main as panel_main

        return panel_main(arguments[1:])
    if arguments[:1] == ["robot"]:
        # The robot parses its own options and subcommands (paper, preview, sense); see docs/robot.md.
        from noughts.cli.robot import main as robot_main

        return robot_main(arguments[1:])
    if arguments == ["engine"]:
        # Programs start the engine often and wait for it: skip building the parser.
        from noughts.cli.positions import run_engine

        return _guarded(run_engine, None)
    if arguments[:1] == ["play"]:
        quick = quick_play_args(arguments[1:])
        if quick is not None:  # a person waits for the menu: skip building the parser
            from noughts.cli.play import run_play

            return _guarded(run_play, _QuickArgs(quick))
    args = _parser().parse_args(arguments)
    if args.command is None:
        print(f"{PROG}: say what to do: play, gui, web, paper, panel, robot, history, replay, scores, export, import, "
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


