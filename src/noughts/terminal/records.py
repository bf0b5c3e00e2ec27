r"""The one-shot commands about what was recorded: `noughts history`, `noughts replay`, `noughts scores`.

They only read (``scores --reset`` aside): the store is opened read-only, so they work on a
read-only file and change nothing on disk. Names are shown safely: control characters escaped
(a name can never colour or move the terminal), long names cut to their column with "…".

>>> print(show_name("\x1b[31mEvil\n"), show_name("Annabel Lee", 8), show_name("表情符号", 5))
\x1b[31mEvil\n Annabel… 表情…
"""

from __future__ import annotations

import os
import sys
import unicodedata

from noughts.errors import NoughtsError
from noughts.terminal.console import _QUIT, _TOO_LONG, _YES, EXIT_INTERRUPTED, _Input, use_colour
from noughts.text import board_diagram, result_sentence

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO, Any

    from noughts.game import Game
    from noughts.store import Participant, Store


TOP = 10  # `noughts scores` lists the ten opponents and the ten people with the most games (--all: every one)
NAME_WIDTH = 24  # columns for a name in `noughts scores`
WHO_WIDTH = 16  # columns for a name in `noughts history` and `noughts replay`


def _open(db: str | None, environ: Mapping[str, str] | None = None, *, read_only: bool = True) -> Store:
    """The store for a one-shot command; notices go to stderr so stdout stays the table."""
    from noughts.store import StoreError, open_store

    store = open_store(db, environ=environ, read_only=read_only)
    for notice in store.notices:
        if notice != store.reason:
            print(" ".join(notice.split()), file=sys.stderr)
    if not store.enabled:
        raise StoreError(store.reason or "Scores and history are off.")
    return store


def _escape(text: str) -> str:
    r"""Control and other invisible characters as Python escapes (``\x1b``, ``\n``, ``\u202e``)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _width(text: str) -> int:
    """How many terminal columns printable ``text`` takes: wide characters two, combining marks none."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


def show_name(name: str, width: int = NAME_WIDTH) -> str:
    """``name`` made safe to print and at most ``width`` columns wide, cut with "…" if longer."""
    shown = _escape(name)
    if _width(shown) <= width:
        return shown
    kept, used = [], 0
    for c in shown:
        used += _width(c)
        if used > width - 1:
            break
        kept.append(c)
    return "".join(kept).rstrip() + "…"


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _who(participant: Participant) -> str:
    name = show_name(participant.name, WHO_WIDTH)
    return name if participant.kind == "human" else f"{name} (computer)"


def _when(played_at: Any) -> str:
    return str(played_at.astimezone().strftime("%Y-%m-%d %H:%M"))


def history(db: str | None = None, limit: int = 20, out: IO[str] | None = None) -> int:
    """`noughts history`: the newest stored games, one a line."""
    out = out if out is not None else sys.stdout
    if limit < 1:
        raise NoughtsError(f"--limit takes a number of games of at least 1, not {limit}")
    with _open(db) as store:
        games = store.games(limit)
        total = store.count_games()
    if not games:
        out.write(f"No games recorded yet in {store.location}: play one with 'noughts play'.\n")
        return 0
    rows = [("id", "when", "X", "O", "result", "moves")]
    for stored in games:
        winner = stored.winner
        result = "draw" if winner is None else f"{stored.result} won"
        rows.append((str(stored.id), _when(stored.played_at), _who(stored.x), _who(stored.o), result,
                     _escape(stored.record)))
    widths = [max(_width(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        out.write("  ".join([row[0].rjust(widths[0]), *(_pad(row[i], widths[i]) for i in range(1, 5)),
                             row[5]]).rstrip() + "\n")
    if total > len(games):
        out.write(f"(the newest {len(games)} of {total} games; --limit N shows more)\n")
    return 0


def replay(game_id: int, *, db: str | None = None, step: bool = True, stdin: IO[bytes] | None = None,
           out: IO[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """`noughts replay ID`: a stored game move by move (Enter for the next, q to stop)."""
    out = out if out is not None else sys.stdout
    env = os.environ if environ is None else environ
    with _open(db, env) as store:
        stored = store.game(game_id)
    game: Game = stored.to_game()
    colour = use_colour(out, env)
    encoding = (getattr(out, "encoding", None) or "ascii").lower().replace("-", "").replace("_", "")
    dash = "–" if encoding in ("utf8", "utf8sig") else "-"
    reader = _Input(stdin if stdin is not None else sys.stdin.buffer, out)

    def say(text: str = "") -> None:
        out.write(text + "\n")
        out.flush()

    start = game.start
    shape = "" if (start.rows, start.cols, start.k) == (3, 3, 3) else \
        f" on {start.rows}×{start.cols} with {start.k} in a row"
    say(f"Game {stored.id}, played {_when(stored.played_at)}{shape}: "
        f"X {_who(stored.x)}, O {_who(stored.o)}.")  # names, never "You was X"
    say()
    say(board_diagram(start, colour=colour))
    positions = game.positions
    try:
        for number, (cell, board) in enumerate(zip(game.moves, positions[1:], strict=True), 1):
            if step:
                answer = reader.ask("[Enter] next move, q to stop: ")
                if answer is None:
                    say()
                    return 0
                if answer is not _TOO_LONG and answer.lower() in _QUIT:
                    return 0
            mark = positions[number - 1].turn
            say(f"Move {number}: {mark} {start.cell_name(cell)}")
            say(board_diagram(board, last=cell, line=board.winning_line, colour=colour))
    except KeyboardInterrupt:
        say("\nInterrupted.")
        return EXIT_INTERRUPTED
    final = positions[-1]
    if final.is_over:  # the sentence every front end says at the end of a game
        who = stored.x if final.winner == "X" else stored.o
        say(result_sentence(final, show_name(who.name, 40), dash=dash))
    return 0


def scores(db: str | None = None, *, reset: bool = False, yes: bool = False, show_all: bool = False,
           stdin: IO[bytes] | None = None, out: IO[str] | None = None) -> int:
    """`noughts scores`: high scores and the current run per board, and W/L/D tallies; or reset them.

    The tallies list the ten opponents and the ten people with the most games (ties: more
    wins, then by name) and say how many more there are; ``show_all`` lists every one.
    """
    from noughts.store import DIFFICULTY_POINTS, STANDARD_BOARD, board_label, ranked

    out = out if out is not None else sys.stdout
    if reset:
        with _open(db, read_only=False) as store:
            if not yes:
                reader = _Input(stdin if stdin is not None else sys.stdin.buffer, out)
                answer = reader.ask(f"Delete every score in {store.location} (high scores, the current run and all "
                                    "win/loss/draw tallies)? The game history is kept. Type yes to confirm: ")
                if answer is None or answer is _TOO_LONG or answer.lower() not in _YES:
                    out.write(("\n" if answer is None else "") + "Nothing was deleted.\n")
                    return 1
            store.reset(scores=True, history=False)
            out.write("Scores reset.\n")
            return 0
    with _open(db) as store:
        table = store.scores()
    points = ", ".join(f"{p} on {d}" for d, p in DIFFICULTY_POINTS.items())
    for board, numbers in table.boards.items():
        if board == STANDARD_BOARD:
            out.write(f"High scores on 3×3 (the EV3 robot's rules: a win scores {points}; a loss or a draw ends "
                      "the run; every board keeps its own)\n")
        else:
            out.write(f"\nHigh scores on {board_label(board)}:\n")
        for difficulty, high in numbers.high.items():
            out.write(f"  {difficulty:<8} {high:>4}\n")
        out.write(f"Current run: {numbers.run}\n")
    for title, tallies in (("Against the computer", table.opponents), ("Two-person games", table.people)):
        played = ranked(tallies)
        shown = played if show_all else played[:TOP]
        out.write(f"\n{title}:\n")
        if not played:
            out.write("  (none yet)\n")
            continue
        names = [show_name(name) for name, _ in shown]
        width = max(6, *(_width(name) for name in names))
        out.write(f"  {'':<{width}}  {'wins':>5}  {'losses':>6}  {'draws':>5}\n")
        for name, (_, t) in zip(names, shown, strict=True):
            out.write(f"  {_pad(name, width)}  {t.wins:>5}  {t.losses:>6}  {t.draws:>5}\n")
        if len(played) > len(shown):
            more = len(played) - len(shown)
            out.write(f"  … and {more} more ('noughts scores --all' lists every one)\n")
    return 0
