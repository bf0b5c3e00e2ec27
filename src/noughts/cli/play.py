"""``noughts play``, ``gui`` and ``web``: a game in the terminal, in a window, or served to browsers.

The flags of ``play`` and ``gui`` stay text here: :func:`noughts.match.play_options` checks them
(for this parser and for the fast path in :func:`noughts.cli.main` alike, so both give the same
game and the same errors) and refuses a value in its own words; :func:`flag_message` says it with
the flag's name.
"""

from __future__ import annotations

from noughts.cli.common import db_option, flag_said
from noughts.errors import NoughtsError, SettingError

TYPE_CHECKING = False  # typing and argparse cost milliseconds; a person waits for the menu
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from noughts.match import PlayOptionError


def add_commands(sub: Any) -> None:
    """``play``, ``gui`` and ``web``, in the order --help lists them."""
    import argparse

    p = sub.add_parser("play", help="play in the terminal: against the computer or another person",
                       description=_PLAY_DESCRIPTION, epilog=_PLAY_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_game_options(p)
    p.set_defaults(run=run_play)

    p = sub.add_parser("gui", help="play in a desktop window (pygame-ce)",
                       description="Open the game in a window: a start screen to choose the opponent and "
                                   "who moves first (X always does), then the board. Play "
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
    db_option(p)
    p.add_argument("--no-scores", action="store_true", help="record nothing: no scores, no history")
    p.add_argument("--db-file", metavar="FILE",
                   help="read --db from the first line of FILE (a secrets file: a password in --db shows in ps)")
    p.add_argument("--redis", metavar="URL", help="keep the rooms in Redis (redis://HOST:PORT/N), shared by every "
                                                  "server process given the same URL (default: $NOUGHTS_REDIS_URL; "
                                                  "a password here shows in ps: use that or --redis-file)")
    p.add_argument("--redis-file", metavar="FILE",
                   help="read --redis from the first line of FILE (a secrets file, like /run/secrets/redis-url)")
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
    p.add_argument("--tls", action="store_true",
                   help="serve HTTPS (a phone's browser lends its camera only to a secure page) with a self-signed "
                        "certificate made once and kept; its fingerprint is shown at start")
    p.add_argument("--cert", metavar="FILE", help="serve HTTPS with this certificate (PEM, the chain after it); "
                                                  "needs --key")
    p.add_argument("--key", metavar="FILE", help="the private key of --cert (PEM, not locked with a password)")
    p.set_defaults(run=_cmd_web)


def _add_game_options(p: argparse.ArgumentParser) -> None:
    """The options `play` and `gui` share: who plays, who starts, the board, the scores."""
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
    db_option(p)
    p.add_argument("--name", action="append", metavar="NAME",
                   help="your name for the scores (default: $USER, else You); give it twice to name "
                        "both people of a two-person game")
    p.add_argument("--no-scores", action="store_true", help="record nothing: no scores, no history")



def run_play(args: Any) -> int:
    """``noughts play``: ``args`` is argparse's Namespace, or the fast path's values with the same names."""
    from noughts import terminal
    from noughts.match import PlayOptionError, play_options

    try:
        options = play_options(
            opponent=args.opponent, first=args.first, mark=args.mark, best_of=args.best_of, seed=args.seed,
            size=args.size, k=args.k, db=args.db, names=args.name, no_scores=args.no_scores)
    except PlayOptionError as error:
        raise NoughtsError(flag_message(error)) from None
    return terminal.play(options)


def _cmd_gui(args: argparse.Namespace) -> int:
    from noughts import desktop
    from noughts.match import PlayOptionError

    try:  # the window checks the options as play does, before it opens
        return desktop.run(opponent=args.opponent, first=args.first, mark=args.mark, best_of=args.best_of,
                           seed=args.seed, size=args.size, k=args.k, db=args.db, names=args.name,
                           no_scores=args.no_scores, think_delay=args.think_delay)
    except PlayOptionError as error:
        raise NoughtsError(flag_message(error)) from None


def _cmd_web(args: argparse.Namespace) -> int:
    import os

    from noughts.web import MAX_WORKERS, serve

    if not 1 <= args.workers <= MAX_WORKERS:
        raise NoughtsError(f"--workers is a number of processes from 1 to {MAX_WORKERS}, not {args.workers}")
    db = secret_option(args.db, args.db_file, "--db")
    redis = secret_option(args.redis, args.redis_file, "--redis") or os.environ.get(REDIS_URL_VARIABLE) or None
    if args.workers > 1 and redis is None:
        raise NoughtsError(NEEDS_REDIS)
    if (args.cert is None) != (args.key is None):
        raise NoughtsError(CERT_NEEDS_KEY)
    try:
        serve(host=args.host, port=args.port, db=db, scores=not args.no_scores, redis=redis,
              workers=args.workers, public_url=args.public_url, allowed_hosts=args.allowed_hosts,
              trusted_proxies=args.trusted_proxies, loop=args.loop, ws=args.ws, tls=args.tls, cert=args.cert,
              key=args.key)
    except SettingError as error:  # refused in the server's words: said again with the flag
        if error.setting == "redis":
            said = f"--redis {error}"
        elif error.setting in ("cert", "key"):  # which file, and what is wrong with it
            said = f"--{error.setting}: {error}"
        else:
            said = flag_said(error, _WEB_FLAGS)
        raise NoughtsError(said) from None
    return 0


REDIS_URL_VARIABLE = "NOUGHTS_REDIS_URL"  # --redis's default: an address with a password stays out of ps


def secret_option(given: str | None, file: str | None, flag: str) -> str | None:
    """The value of ``flag``: as given, or the first line of ``file`` (``{flag}-file``), where a
    password is out of sight of ``ps``; a file that cannot be read is one line naming it."""
    if file is None:
        return given
    if given is not None:
        raise NoughtsError(f"give {flag} or {flag}-file, not both")
    try:
        with open(file, encoding="utf-8") as secret:
            line = secret.readline(4096).strip()
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else "it is not UTF-8 text"
        raise NoughtsError(f"cannot read {flag}-file {file!r:.200} ({reason})") from None
    if not line:
        raise NoughtsError(f"{flag}-file {file!r:.200} is empty: its first line is the value of {flag}")
    return line


NEEDS_REDIS = ("--workers needs --redis: each process would hold its own rooms, and a friend reaching another "
               "process could not find the game. Start Redis (redis-server) and add --redis redis://127.0.0.1:6379/0")
CERT_NEEDS_KEY = "--cert and --key go together: the certificate file and the file of its private key"
_WEB_FLAGS = {"port": "--port", "workers": "--workers", "public_url": "--public-url",
              "trusted_proxies": "--trusted-proxy"}



_FLAGS = {"opponent": "--opponent", "first": "--first", "mark": "--mark", "best_of": "--best-of", "seed": "--seed",
          "size": "--size", "k": "--k", "names": "--name"}


def flag_message(error: PlayOptionError) -> str:
    """The refusal of a play option, said with the flag that gave the value.

    >>> from noughts.match import PlayOptionError, play_options
    >>> try:
    ...     play_options(best_of="0")
    ... except PlayOptionError as error:
    ...     print(flag_message(error))
    --best-of takes a number of games from 1 to 99, like 3, not 0
    """
    from noughts.match import FIRST_RULES, MAX_BEST_OF

    flag = _FLAGS.get(error.setting, error.setting)
    takes = {
        "first": ", ".join(FIRST_RULES),
        "mark": "X or O",
        "best_of": f"a number of games from 1 to {MAX_BEST_OF}, like 3",
        "seed": "a whole number",
        "k": "the number of marks in a row that wins, like 3",
        "size": "a board like 4 (4×4), 4x5 (4 rows, 5 columns) or 7x7k5 (and 5 in a row)",
    }
    if error.against is not None and error.against[0] == "mark" and error.setting == "first":
        return (f"X always moves first, so --mark {error.against[1]} means --first {error.needed}, "
                f"not --first {error.shown}")
    if error.against is not None and error.against[0] == "size" and error.setting == "k":
        return f"--size says {error.against[1]} in a row, but --k says {error.shown}"
    if error.setting == "names" and error.needed is not None:
        return "--name can be given twice at most: your name, then the other person's"
    if error.setting in takes and error.reason is not None:
        return f"{flag} takes {takes[error.setting]}: {error.reason}"
    if error.setting in takes and error.shown is not None:
        return f"{flag} takes {takes[error.setting]}, not {error.shown}"
    return str(error)  # said without a flag's name already (an unknown opponent, a name)


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


