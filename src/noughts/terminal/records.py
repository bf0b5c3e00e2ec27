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

from noughts import players, text
from noughts.errors import NoughtsError
from noughts.terminal.console import _QUIT, _TOO_LONG, _YES, EXIT_INTERRUPTED, _Input, use_colour
from noughts.text import board_diagram, result_sentence

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO, Any

    from noughts.game import Game
    from noughts.store import Participant, Store, StoredGame


TOP = 10  # `noughts scores` lists the ten opponents and the ten people with the most games (--all: every one)
NAME_WIDTH = 24  # columns for a name in `noughts scores`
WHO_WIDTH = 16  # columns for a name in `noughts history` and `noughts replay`
LINE_WIDTH = 80  # every line of every listing fits an 80-column terminal
MOVES_WIDTH = 20  # `noughts history` keeps at least these columns for the moves: names give way first
NARROWEST_WHO = 8
COMPUTER_MARK = "*"  # `noughts history` marks a computer player's name so, and says so under the table


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


def _computer_label(name: str) -> str:
    """A computer player as every menu names it ('Hard'); a plug-in no longer installed, by its stored name."""
    try:
        return players.label(name)
    except NoughtsError:
        return name


def _name(participant: Participant) -> str:
    """A person's name as they typed it; a computer player's label."""
    return _computer_label(participant.name) if participant.kind == "computer" else participant.name


def _who(participant: Participant) -> str:
    name = show_name(_name(participant), WHO_WIDTH)
    return name if participant.kind == "human" else f"{name} (computer)"


def _who_listed(participant: Participant, width: int = WHO_WIDTH) -> str:
    """A name for the history's table: cut to ``width`` columns, a computer player's marked with ``*``."""
    if participant.kind == "human":
        return show_name(participant.name, width)
    return show_name(_name(participant), width - len(COMPUTER_MARK)) + COMPUTER_MARK


def _moves_listed(stored: StoredGame) -> str:
    """The record with its board in the one notation: ``7x7k5: d4 c3``, or ``b2 a1`` on 3×3."""
    from noughts.board import Geometry

    record = _escape(stored.record)
    header = f"size={stored.rows}x{stored.cols} k={stored.k}"
    if record.startswith(header):
        record = Geometry.get(stored.rows, stored.cols, stored.k).notation + record[len(header):]
    return record


def _when(played_at: Any) -> str:
    return str(played_at.astimezone().strftime("%Y-%m-%d %H:%M"))


def history(db: str | None = None, limit: int = 20, out: IO[str] | None = None, *, see_more: str | None = None) -> int:
    """`noughts history`: the newest ``limit`` stored games, one a line; ``see_more`` says how to list
    more when there are (the command names its flag)."""
    out = out if out is not None else sys.stdout
    if limit < 1:
        raise NoughtsError(f"a list of games holds at least 1, not {limit}")
    with _open(db) as store:
        games = store.games(limit)
        total = store.count_games()
    if not games:
        out.write(f"No games recorded yet in {store.location}: play one with 'noughts play'.\n")
        return 0
    heading = ["id", "when", "X", "O", "result", "moves"]
    widths = [max(len(heading[0]), *(len(str(g.id)) for g in games)), len(_when(games[0].played_at)),
              *(max(len(heading[i]), *(_width(_who_listed(g.x if i == 2 else g.o)) for g in games)) for i in (2, 3)),
              max(len(heading[4]), len("X won"))]
    moves = [_moves_listed(g) for g in games]
    # The names give way to the moves (down to NARROWEST_WHO columns each), the moves to the line's end.
    room = LINE_WIDTH - sum(widths[i] for i in (0, 1, 4)) - 2 * 5 - min(MOVES_WIDTH, max(map(_width, moves)))
    while widths[2] + widths[3] > room and max(widths[2], widths[3]) > NARROWEST_WHO:
        widths[2 if widths[2] >= widths[3] else 3] -= 1
    moves_width = LINE_WIDTH - sum(widths) - 2 * 5
    rows = [heading]
    for stored, played in zip(games, moves, strict=True):
        result = "draw" if stored.winner is None else f"{stored.result} won"
        rows.append([str(stored.id), _when(stored.played_at), _who_listed(stored.x, widths[2]),
                     _who_listed(stored.o, widths[3]), result, _cut_moves(played, moves_width)])
    for row in rows:
        out.write("  ".join([row[0].rjust(widths[0]), *(_pad(row[i], widths[i]) for i in range(1, 5)),
                             row[5]]).rstrip() + "\n")
    if any("computer" in (g.x.kind, g.o.kind) for g in games):
        out.write(f"({COMPUTER_MARK} a computer player)\n")
    if total > len(games):
        out.write(f"(the newest {len(games)} of {total} games{'; ' + see_more if see_more else ''})\n")
    return 0


def _cut_moves(record: str, width: int) -> str:
    """A game's record cut to ``width`` columns at a move, saying how many moves it has (replay shows them all).

    >>> _cut_moves("a1 b1 a2 b2 a3", 20), _cut_moves("15x15k5: h8 a1 i8 a2 j8 a3 k8 a4 l8", 28)
    ('a1 b1 a2 b2 a3', '15x15k5: h8 a1 … (9 moves)')
    """
    if _width(record) <= width:
        return record
    words = record.split()
    for ending in (f" … ({len(record.rsplit(': ', 1)[-1].split())} moves)", " …"):  # the count, if it fits
        kept: list[str] = []
        for word in words:
            if _width(" ".join([*kept, word]) + ending) > width:
                break
            kept.append(word)
        if kept:
            return " ".join(kept) + ending
    return show_name(record, width)


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
        say(result_sentence(final, show_name(_name(who), 40), dash=dash))
    return 0


def scores(db: str | None = None, *, reset: bool = False, yes: bool = False, show_all: bool = False,
           stdin: IO[bytes] | None = None, out: IO[str] | None = None, see_all: str | None = None) -> int:
    """`noughts scores`: high scores and the current run per board, and W/L/D tallies; or reset them.

    The tallies list the ten opponents and the ten people with the most games (ties: more
    wins, then by name) and say how many more there are, and ``see_all`` (how to list them: the
    command names its flag); ``show_all`` lists every one.
    """
    import textwrap

    from noughts.board import Board, Geometry
    from noughts.store import board_label, ranked
    from noughts.store.scoring import high_scores_shown

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
    out.write(textwrap.fill(text.SCORING_RULE, LINE_WIDTH - 1) + "\n")
    for board, numbers in table.boards.items():
        notation = Geometry.get(*board).notation  # as --size takes it
        out.write(f"\nHigh scores on {notation} ({board_label(board)}):\n")

        def can_play(difficulty: str, board: tuple[int, int, int] = board) -> bool:
            return players.unable(difficulty, Board(*board)) is None

        for difficulty, high in high_scores_shown(numbers, can_play).items():
            out.write(f"  {players.label(difficulty):<8} {high:>4}\n")
        out.write(f"{text.CURRENT_RUN}: {numbers.run}\n")
    for title, tallies in (("Against the computer", table.opponents), ("Two-person games", table.people)):
        played = ranked(tallies)
        shown = played if show_all else played[:TOP]
        out.write(f"\n{title}:\n")
        if not played:
            out.write("  (none yet)\n")
            continue
        names = [show_name(_computer_label(name) if tallies is table.opponents else name) for name, _ in shown]
        width = max(6, *(_width(name) for name in names))
        out.write(f"  {'':<{width}}  {'wins':>5}  {'losses':>6}  {'draws':>5}\n")
        for name, (_, t) in zip(names, shown, strict=True):
            out.write(f"  {_pad(name, width)}  {t.wins:>5}  {t.losses:>6}  {t.draws:>5}\n")
        if len(played) > len(shown):
            more = len(played) - len(shown)
            out.write(f"  … and {more} more{f' ({see_all})' if see_all else ''}\n")
    return 0
