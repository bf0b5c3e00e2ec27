"""What the command groups of ``noughts`` share: the exit statuses and the options several take."""

from __future__ import annotations

from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing and argparse cost milliseconds; `noughts engine` needs neither
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from noughts.errors import SettingError

PROG = "noughts"
EXIT_USAGE = 2  # bad arguments, bad positions, illegal moves: anything the person can fix
EXIT_INTERRUPTED = 130  # the shell's convention for a program stopped by Ctrl-C (128 + SIGINT)


class CommandFailure(NoughtsError):
    """An error reply from the engine, re-raised so the one-shot commands exit with status 2."""


def flag_said(error: SettingError, flags: Mapping[str, str]) -> str:
    """A setting's refusal (or its advice) said with the flag that sets it; ``flags``: setting -> flag.

    >>> from noughts.errors import SettingError
    >>> flag_said(SettingError("trusted proxies are addresses, not 'x'", setting="trusted_proxies",
    ...                        takes="addresses", shown="'x'"), {"trusted_proxies": "--trusted-proxy"})
    "--trusted-proxy takes addresses, not 'x'"
    >>> flag_said(SettingError("the port is in use", setting="port", instead=()), {"port": "--port"})
    'the port is in use (try --port)'
    >>> flag_said(SettingError("no pins here", setting="backend", instead=("sim",)), {"backend": "--backend"})
    'no pins here (try --backend sim)'
    """
    flag = flags.get(error.setting)
    if flag is None:
        return str(error)  # a setting this command does not take: the core's own words
    if error.takes is not None and error.shown is not None:
        return f"{flag} takes {error.takes}, not {error.shown}"
    if error.instead is not None:
        tries = " or ".join(f"{flag} {value}" for value in error.instead) if error.instead else flag
        return f"{error} (try {tries})"
    return str(error)


def db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", metavar="PATH|URL",
                   help="the scores and history database: a SQLite file, or postgresql://user@host/dbname "
                        "(default: $NOUGHTS_DB, else ~/.local/share/noughts/noughts.db)")


def board_options(p: argparse.ArgumentParser, json_flag: bool = True, size_flag: bool = True) -> None:
    """POSITION and the board's shape (--size, --k, --rows, --cols), and --json."""
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
    p.add_argument("--seconds", type=seconds, metavar="S",
                   help=f"give up after S seconds ({default}); with --nodes, whichever comes first")
    p.add_argument("--nodes", type=nodes, metavar="N",
                   help="give up after searching N positions (the same answer on any machine)")


def seconds(text: str) -> float:
    """The value of --seconds: above 0 and finite."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"a number of seconds above 0, like 2.5, not {text!r:.20}")
    return value


def nodes(text: str) -> int:
    """The value of --nodes: a whole number of positions."""
    import argparse

    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise argparse.ArgumentTypeError(f"a whole number of positions, like 100000, not {text!r:.20}")
    return int(text)
