"""The store's interface, and the SQL every backend shares.

A :class:`Store` keeps finished games and the scores they make. The backends (``sqlite``: a
file, the embedded default; ``postgresql``: a server several processes and machines share)
only connect, run a piece of work in one transaction (retrying what their database says can
be retried) and turn their errors into sentences; what is read and written is written here
once, with ``?`` placeholders, so both keep the same tables and score alike. A bare ``Store``
is a disabled one: it records nothing and reads as empty.

Recording is incremental: a finished game adds a row to ``games`` and touches only its own
board's numbers and the tallies of its two players, and :meth:`Store.record_many` keeps many
games in one transaction (one commit, one wait for the disk, for the lot).
"""

from __future__ import annotations

from noughts.errors import GameNotFoundError, StoreError
from noughts.store.scoring import (
    BoardScores,
    Participant,
    Recorded,
    Scores,
    StoredGame,
    Tally,
    _Value,
    score_game,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime
    from pathlib import Path
    from types import TracebackType
    from typing import TypeVar

    from noughts.game import Game
    from noughts.store.schema import Db
    from noughts.store.scoring import Shape, TallyCount

    T = TypeVar("T")

__all__ = ["MAX_KEY_CHARS", "Finished", "Store", "StoreUnavailable"]

MAX_KEY_CHARS = 200
_GAME_COLUMNS = "id, played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k, record, result"
_RECORDED_COLUMNS = "id, points, run, difficulty, high_score, new_high_score, rows, cols, k"


class StoreUnavailable(StoreError):
    """The database failed (unreachable, its tables gone, a full disk): nothing of the batch was kept, and
    trying again later, after opening the store again, may keep it. ``cause`` is the database's own word."""

    def __init__(self, message: str, cause: str) -> None:
        super().__init__(message)
        self.cause = cause


class Finished(_Value):
    """One finished game to record, checked when it is made (so a batch holds only games that can be kept).

    >>> from noughts import Game
    >>> Finished(Game.from_text("b2"), Participant.human("Ann"), Participant.human("Bob"))
    Traceback (most recent call last):
    ...
    noughts.errors.StoreError: Only a finished game can be recorded; this one is still going on.
    """

    __slots__ = ("game", "x", "o", "played_at", "game_key", "board", "record", "result")
    game: Game
    x: Participant
    o: Participant
    played_at: datetime
    game_key: str | None
    board: Shape
    record: str
    result: str

    def __init__(self, game: Game, x: Participant, o: Participant, *, played_at: datetime | None = None,
                 game_key: str | None = None) -> None:
        from datetime import UTC, datetime

        result = game.result
        if result is None:
            raise StoreError("Only a finished game can be recorded; this one is still going on.")
        if not isinstance(x, Participant) or not isinstance(o, Participant):
            raise StoreError("Both sides of a recorded game must be given as a Participant.")
        if game_key is not None and (not isinstance(game_key, str) or not 0 < len(game_key) <= MAX_KEY_CHARS
                                     or "\x00" in game_key):
            raise StoreError(f"A game key is a text of 1 to {MAX_KEY_CHARS} characters, not {game_key!r:.40}.")
        when = played_at if played_at is not None else datetime.now(UTC)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)  # a naive time is taken to be UTC already
        start = game.start
        super().__init__(game, x, o, when, game_key, (start.rows, start.cols, start.k), game.to_text(), result)

    @property
    def first(self) -> str:
        return self.game.start.turn or "X"


class Store:
    """Scores and history; get one from :func:`noughts.store.open_store` (a bare one is disabled).

    ``location`` says where it keeps them for people to read (a file path, or a database URL
    without its password); ``path`` is the file of a SQLite store (``None`` otherwise).
    """

    backend = "none"

    def __init__(self, location: str | None = None, *, path: Path | None = None, reason: str | None = None,
                 read_only: bool = False, notices: Sequence[str] = ()) -> None:
        self.path = path
        self.location = location if location is not None else str(path) if path is not None else "(nowhere)"
        self.reason = reason
        self.read_only = read_only
        self.notices: list[str] = list(notices)

    @classmethod
    def disabled(cls, reason: str, path: Path | None = None) -> Store:
        """A store that keeps nothing: recording is a no-op and the scores are all zero."""
        return Store(path=path, reason=reason, notices=[reason])

    @property
    def enabled(self) -> bool:
        return False

    # context manager ----------------------------------------------------------------------
    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Let go of the database; the store is disabled after."""
        if self.enabled and self.reason is None:
            self.reason = "The score store has been closed."
        self._close()

    def __repr__(self) -> str:
        state = "read-only" if self.read_only and self.enabled else "enabled" if self.enabled else "disabled"
        return f"<{type(self).__name__} {self.location} {state}>"

    # what a backend provides ------------------------------------------------------------------
    def _close(self) -> None:
        """Close the connection (a backend's)."""

    def _write(self, work: Callable[[Db], T]) -> T:
        """Run ``work`` in one write transaction, all or nothing; raises the backend's own errors."""
        raise StoreError(self.reason or "Scores and history are off.")

    def _read(self, work: Callable[[Db], T]) -> T:
        """Run ``work`` on one consistent view of the database; raises the backend's own errors."""
        raise StoreError(self.reason or "Scores and history are off.")

    def _failure(self, error: Exception) -> str | None:
        """Why the database failed, if ``error`` is one of the backend's (``None``: not ours, let it through)."""
        return None

    def _reads_empty(self) -> bool:
        """Whether there is nothing to read yet (a read-only store on a database noughts has not set up)."""
        return False

    # helpers ------------------------------------------------------------------------------
    def _need(self) -> None:
        if not self.enabled:
            raise StoreError(self.reason or "Scores and history are off.")

    def _writable(self) -> None:
        self._need()
        if self.read_only:
            raise StoreError(f"The store at {self.location} was opened only to read it; nothing can be saved to it.")

    def _reading(self, what: str, work: Callable[[Db], T]) -> T:
        self._need()
        try:
            return self._read(work)
        except Exception as error:
            why = self._failure(error)
            if why is None:
                raise
            raise StoreError(f"The {what} could not be read from {self.location} ({why}).") from None

    # writing ------------------------------------------------------------------------------
    def record(self, game: Game, x: Participant, o: Participant, *, played_at: datetime | None = None,
               game_key: str | None = None) -> Recorded:
        """Keep a finished game and update every score, all in one transaction.

        Returns the new game's number (``None`` when the store is disabled), its board and the
        run and high score on that board after it. ``game_key``, if given, names this game for
        good: recording again with the same key (a retry after an error or a crash) stores
        nothing and returns what the first call returned. Raises :class:`StoreError` if the game
        is not over, the key was used for a different game, or the game cannot be written.
        """
        finished = Finished(game, x, o, played_at=played_at, game_key=game_key)
        if not self.enabled:
            return Recorded(None)
        [outcome] = self.record_many([finished])
        if isinstance(outcome, StoreError):
            raise outcome
        return outcome

    def record_many(self, games: Sequence[Finished]) -> list[Recorded | StoreError]:
        """Keep several finished games, in order, in one transaction: one answer for each.

        A game whose key belongs to a different game gets a :class:`StoreError` as its answer
        and the others are kept; if the database fails, nothing is kept and every answer is
        the same :class:`StoreUnavailable`. A disabled store answers ``Recorded(None)`` for each.
        """
        if not self.enabled:
            return [Recorded(None) for _ in games]
        self._writable()
        if not games:
            return []
        try:
            return self._write(lambda db: _write_games(db, games))
        except Exception as error:
            why = self._failure(error)
            if why is None:
                raise
            saved = "The game" if len(games) == 1 else f"{len(games)} games"
            failed = StoreUnavailable(
                f"{saved} could not be saved to {self.location} ({why}). The scores are unchanged.", why)
            return [failed for _ in games]

    def reset(self, *, scores: bool = True, history: bool = True) -> None:
        """Delete the scores and/or every stored game (ask the person first)."""

        def wipe(db: Db) -> None:
            if scores:
                for table in ("board_scores", "opponents", "people"):
                    db.execute(f"DELETE FROM {table}")
            if history:
                db.execute("DELETE FROM games")

        self._writable()
        try:
            self._write(wipe)
        except Exception as error:
            why = self._failure(error)
            if why is None:
                raise
            raise StoreError(f"The store at {self.location} could not be reset ({why}); nothing was deleted.") from None

    # reading ------------------------------------------------------------------------------
    def games(self, limit: int = 20, offset: int = 0) -> list[StoredGame]:
        """Stored games, newest first (in the order they were saved)."""
        for name, value in (("limit", limit), ("offset", offset)):
            if type(value) is not int or value < 0:
                raise StoreError(f"The {name} of a history listing is a whole number of at least 0, not {value!r:.20}.")
        if not self.enabled or self._reads_empty():
            return []
        query = f"SELECT {_GAME_COLUMNS} FROM games ORDER BY id DESC LIMIT ? OFFSET ?"
        return self._reading("history", lambda db: [_stored_game(r) for r in db.execute(query, (limit, offset))])

    def count_games(self) -> int:
        if not self.enabled or self._reads_empty():
            return 0
        return self._reading("history", lambda db: int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0]))

    def game(self, game_id: int) -> StoredGame:
        """One stored game by its number."""
        if type(game_id) is not int:
            raise StoreError(f"A game number is a whole number, not {game_id!r:.20}.")
        self._need()
        row = None
        if not self._reads_empty() and -2**63 <= game_id < 2**63:
            query = f"SELECT {_GAME_COLUMNS} FROM games WHERE id = ?"
            row = self._reading("history", lambda db: db.execute(query, (game_id,)).fetchone())
        if row is None:
            raise GameNotFoundError(f"There is no game number {game_id} in the history.")
        return _stored_game(row)

    def scores(self, *, top_people: int | None = None) -> Scores:
        """The score table, per board (3×3 first); all zeros when the store is disabled.

        ``top_people`` keeps only that many two-person players, most wins first (then by name),
        read through an index: what a server sends after every game, however many names there are.
        """
        from noughts.players import names

        opponents = {name: Tally() for name in names()}
        if not self.enabled or self._reads_empty():
            return Scores.of({}, opponents, {})

        def read(db: Db) -> Scores:
            numbers: dict[Shape, dict[str, int]] = {}
            for rows, cols, k, name, value in db.execute("SELECT rows, cols, k, name, value FROM board_scores"):
                numbers.setdefault((rows, cols, k), {})[name] = value
            boards = {board: BoardScores(values.pop("run", 0), values) for board, values in numbers.items()}
            for name, *tally in db.execute("SELECT name, wins, losses, draws FROM opponents ORDER BY name"):
                opponents[name] = Tally(*tally)
            if top_people is None:
                rows = db.execute("SELECT name, wins, losses, draws FROM people ORDER BY name")
            else:
                rows = db.execute("SELECT name, wins, losses, draws FROM people ORDER BY wins DESC, name LIMIT ?",
                                  (top_people,))
            people = {name: Tally(*tally) for name, *tally in rows}
            return Scores.of(boards, opponents, people)

        return self._reading("scores", read)


# the shared SQL -------------------------------------------------------------------------
def _write_games(db: Db, games: Sequence[Finished]) -> list[Recorded | StoreError]:
    """Insert the games in order and apply what they change: each board once, each tally once.

    A handful of statements whatever the batch's size (a server is a round trip away): the
    games' keys and boards are read at once, the scores worked out here, the games inserted
    together, and each tally and board written once.
    """
    lock = getattr(db, "lock_boards", None)
    if lock is not None:  # PostgreSQL: one writer per board at a time, taken in order (no deadlock)
        lock(sorted({game.board for game in games if _difficulty(game) is not None}))
    kept = _kept_keys(db, sorted({game.game_key for game in games if game.game_key is not None}))
    boards = _boards_scores(db, sorted({game.board for game in games}))
    changed: set[Shape] = set()
    counts: dict[TallyCount, int] = {}
    answers: list[Recorded | StoreError | None] = []
    new: list[tuple[int, Finished, Recorded]] = []  # (answer's index, game, answer without its number yet)
    retries: dict[int, int] = {}  # a game's answer index -> the index of its first recording in this batch
    by_key: dict[str, tuple[Finished, int]] = {}  # games of this batch, by key: the game and its answer's index
    for game in games:
        key = game.game_key
        if key is not None and key in kept:
            earlier, record = kept[key]
            answers.append(earlier if record == (game.x, game.o, game.record) else _different(key, earlier.game_id))
            continue
        if key is not None and key in by_key:
            original, index = by_key[key]
            same = (original.x, original.o, original.record) == (game.x, game.o, game.record)
            if same:
                retries[len(answers)] = index
            answers.append(None if same else _different(key, None))
            continue
        change = score_game(game.x, game.o, game.result, boards.get(game.board, BoardScores.empty()))
        for count in change.counts:
            counts[count] = counts.get(count, 0) + 1
        if change.difficulty is not None:
            boards[game.board] = change.after
            changed.add(game.board)
        if key is not None:
            by_key[key] = (game, len(answers))
        new.append((len(answers), game, change.recorded(None, game.board)))
        answers.append(None)
    ids = db.insert_returning_ids(
        "INSERT INTO games (played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k, record, result,"
        " game_key, points, run, difficulty, high_score, new_high_score)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        [(_format_time(game.played_at), game.x.name, game.x.kind, game.o.name, game.o.kind, game.first,
          *game.board, game.record, game.result, game.game_key, outcome.points, outcome.run, outcome.difficulty,
          outcome.high_score, int(outcome.new_high_score)) for _index, game, outcome in new])
    for (index, _game, outcome), game_id in zip(new, ids, strict=True):
        answers[index] = _numbered(outcome, game_id)
    for (table, column) in sorted({(table, column) for table, _name, column in counts}):
        assert table in ("opponents", "people") and column in ("wins", "losses", "draws")
        db.executemany(f"INSERT INTO {table} (name, {column}) VALUES (?, ?) "
                       f"ON CONFLICT (name) DO UPDATE SET {column} = {table}.{column} + excluded.{column}",
                       [(name, added) for (t, name, c), added in sorted(counts.items()) if (t, c) == (table, column)])
    if changed:
        db.executemany(
            "INSERT INTO board_scores (rows, cols, k, name, value) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (rows, cols, k, name) DO UPDATE SET value = excluded.value",
            [(*board, name, value) for board in sorted(changed)
             for name, value in [("run", boards[board].run), *boards[board].high.items()]])
    for index, first in retries.items():  # a retry of a game first seen in this batch answers what that got
        answers[index] = answers[first]
    return [answer for answer in answers if answer is not None]


def _numbered(outcome: Recorded, game_id: int) -> Recorded:
    return Recorded(game_id, outcome.points, outcome.run, outcome.difficulty, outcome.high_score,
                    outcome.new_high_score, outcome.board)


def _kept_keys(db: Db, keys: Sequence[str]) -> dict[str, tuple[Recorded, tuple[Participant, Participant, str]]]:
    """What recording each of these keys returned the first time, and which game it was."""
    found = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        for row in db.execute(f"SELECT {_RECORDED_COLUMNS}, x_name, x_kind, o_name, o_kind, record, game_key "
                              f"FROM games WHERE game_key IN ({', '.join('?' * len(chunk))})", chunk):
            game_id, points, run, difficulty, high_score, new_high_score, rows, cols, k, *game, key = row
            x_name, x_kind, o_name, o_kind, record = game
            found[key] = (Recorded(game_id, points, run, difficulty, high_score, bool(new_high_score), (rows, cols, k)),
                          (Participant.stored(x_name, x_kind), Participant.stored(o_name, o_kind), record))
    return found


def _boards_scores(db: Db, boards: Sequence[Shape]) -> dict[Shape, BoardScores]:
    numbers: dict[Shape, dict[str, int]] = {board: {} for board in boards}
    for start in range(0, len(boards), 300):
        chunk = boards[start:start + 300]
        where = " OR ".join("(rows = ? AND cols = ? AND k = ?)" for _ in chunk)
        for rows, cols, k, name, value in db.execute(
                f"SELECT rows, cols, k, name, value FROM board_scores WHERE {where}", [n for b in chunk for n in b]):
            numbers[(rows, cols, k)][name] = value
    return {board: BoardScores(values.pop("run", 0), values) for board, values in numbers.items()}


def _difficulty(game: Finished) -> str | None:
    return score_game(game.x, game.o, game.result, BoardScores.empty()).difficulty


def _different(key: str | None, game_id: int | None) -> StoreError:
    return StoreError(f"The game key {key!r:.60} already belongs to game {game_id}, a different game; "
                      "this one was not saved.")


def _format_time(when: datetime) -> str:
    from datetime import UTC

    # fixed width and UTC, so the text sorts in time order
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _stored_game(row: Sequence[object]) -> StoredGame:
    from datetime import datetime

    (game_id, played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k, record, result) = row
    return StoredGame(game_id, datetime.fromisoformat(str(played_at)),  # type: ignore[arg-type]
                      Participant.stored(x_name, x_kind), Participant.stored(o_name, o_kind),  # type: ignore[arg-type]
                      first, rows, cols, k, record, result)  # type: ignore[arg-type]
