"""The one-shot commands about what was recorded: `noughts history`, `noughts replay`, `noughts scores`."""

from __future__ import annotations

import os
import sys

from noughts.errors import NoughtsError
from noughts.terminal.console import _QUIT, _TOO_LONG, _YES, EXIT_INTERRUPTED, _Input, use_colour
from noughts.text import board_diagram, describe_line

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO, Any

    from noughts.game import Game
    from noughts.store import Participant, Store


def _open(db: str | None, environ: Mapping[str, str] | None = None) -> Store:
    """The store for a one-shot command; notices go to stderr so stdout stays the table."""
    from noughts.store import StoreError, open_store

    store = open_store(db, environ=environ)
    for notice in store.notices:
        if notice != store.reason:
            print(" ".join(notice.split()), file=sys.stderr)
    if not store.enabled:
        raise StoreError(store.reason or "Scores and history are off.")
    return store


def _who(participant: Participant) -> str:
    name = participant.name
    name = name if len(name) <= 16 else name[:15] + "…"
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
        out.write(f"No games recorded yet in {store.path}: play one with 'noughts play'.\n")
        return 0
    rows = [("id", "when", "X", "O", "result", "moves")]
    for stored in games:
        winner = stored.winner
        result = "draw" if winner is None else f"{stored.result} won"
        rows.append((str(stored.id), _when(stored.played_at), _who(stored.x), _who(stored.o), result,
                     stored.record))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        out.write("  ".join([row[0].rjust(widths[0]), *(row[i].ljust(widths[i]) for i in range(1, 5)),
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
        f"{_who(stored.x)} was X, {_who(stored.o)} was O.")
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
    if final.winner is not None and final.winning_line is not None:
        who = stored.x if final.winner == "X" else stored.o
        say(f"{final.winner} wins along {describe_line(final, final.winning_line, dash)}: {who.name} won.")
    elif final.is_draw:
        say("A draw: the board is full and nobody has a line.")
    return 0


def scores(db: str | None = None, *, reset: bool = False, yes: bool = False, stdin: IO[bytes] | None = None,
           out: IO[str] | None = None) -> int:
    """`noughts scores`: high scores per difficulty, the current run and W/L/D tallies; or reset them."""
    from noughts.store import DIFFICULTY_POINTS

    out = out if out is not None else sys.stdout
    with _open(db) as store:
        if reset:
            if not yes:
                reader = _Input(stdin if stdin is not None else sys.stdin.buffer, out)
                answer = reader.ask(f"Delete every score in {store.path} (high scores, the current run and all "
                                    "win/loss/draw tallies)? The game history is kept. Type yes to confirm: ")
                if answer is None or answer is _TOO_LONG or answer.lower() not in _YES:
                    out.write(("\n" if answer is None else "") + "Nothing was deleted.\n")
                    return 1
            store.reset(scores=True, history=False)
            out.write("Scores reset.\n")
            return 0
        table = store.scores()
    points = ", ".join(f"{p} on {d}" for d, p in DIFFICULTY_POINTS.items())
    out.write(f"High scores (the EV3 robot's rules: a win scores {points}; a loss or a draw ends the run)\n")
    for difficulty, high in table.high.items():
        out.write(f"  {difficulty:<8} {high:>4}\n")
    out.write(f"Current run: {table.run}\n")
    for title, tallies in (("Against the computer", table.opponents), ("Two-person games", table.people)):
        played = {name: t for name, t in tallies.items() if t.games}
        out.write(f"\n{title}:\n")
        if not played:
            out.write("  (none yet)\n")
            continue
        width = max(len(name) for name in played)
        width = max(width, 6)
        out.write(f"  {'':<{width}}  {'wins':>5}  {'losses':>6}  {'draws':>5}\n")
        for name, t in played.items():
            out.write(f"  {name:<{width}}  {t.wins:>5}  {t.losses:>6}  {t.draws:>5}\n")
    return 0
