"""Scores and the history of finished games, kept in a SQLite file.

The scoring is the EV3 robot's (seed 003, ``writeToHighscore``): a win against the ``easy``,
``medium`` or ``hard`` computer player is worth 1, 2 or 3 points; the current run adds them
up and a loss or draw against one of those three sets it back to 0; each difficulty keeps the
best run reached by a win at that difficulty. Like the robot's four-number score file there
is one current run, shared by the three difficulties. Besides the robot's numbers the store
keeps a person's wins, losses and draws against every computer player, the tallies of
two-person games by name, and every finished game, so it can be listed and replayed.

Nothing is lost: a game and its score changes are written in one transaction when the game
ends, the file is in WAL mode with ``synchronous=FULL``, and writers take the lock up front
(``BEGIN IMMEDIATE``) and retry while another process holds it. A file that is damaged or
belongs to something else is moved aside, never overwritten, and a place that cannot be
written turns scores off instead of stopping the game.

>>> import tempfile, pathlib
>>> from noughts import Game
>>> folder = tempfile.TemporaryDirectory()
>>> store = open_store(pathlib.Path(folder.name) / "noughts.db")
>>> game = Game.replay("b2 a1 c3 a3 a2 c1 c2".split())
>>> game.result
'X'
>>> done = store.record(game, Participant.human("Ann"), Participant.computer("medium"))
>>> done.points, done.run, done.high_score, done.new_high_score
(2, 2, 2, True)
>>> store.scores().opponents["medium"]
Tally(wins=1, losses=0, draws=0)
>>> store.game(done.game_id).to_game().moves == game.moves
True
>>> store.close(); folder.cleanup()
"""

from __future__ import annotations

import os

from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing, pathlib, sqlite3 and datetime cost milliseconds; they load when a store opens
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Mapping
    from datetime import datetime
    from pathlib import Path
    from types import TracebackType
    from typing import Literal, TypeVar

    from noughts.game import Game

    T = TypeVar("T")

__all__ = [
    "DIFFICULTY_POINTS", "ENV_VAR", "SCHEMA_VERSION", "GameNotFoundError", "Participant", "Recorded",
    "Scores", "Store", "StoreError", "StoredGame", "Tally", "default_path", "open_store",
]

ENV_VAR = "NOUGHTS_DB"
DIFFICULTY_POINTS = {"easy": 1, "medium": 2, "hard": 3}
MAX_NAME_CHARS = 100

# "noug": marks the file as ours, so another program's SQLite file is never mistaken for one.
_APPLICATION_ID = 0x6E6F7567
_SQLITE_MAGIC = b"SQLite format 3\x00"
_BUSY_TIMEOUT_S = 2.0  # SQLite's own wait for a lock, per attempt
_RETRY_FOR_S = 10.0  # then we give up and tell the person, rather than hang the game
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CORRUPT, _SQLITE_NOTADB = 5, 6, 11, 26

# Each step takes the schema from version i to i + 1. All pending steps run in one transaction,
# so a crash or error leaves the file at its old version. Statements, not scripts:
# executescript() would commit in the middle.
_MIGRATIONS: list[tuple[str, ...]] = [
    (  # 1: games, the robot's four numbers, per-opponent tallies
        f"PRAGMA application_id = {_APPLICATION_ID}",
        """CREATE TABLE games (
            id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, so 'replay 12' stays meaningful
            played_at TEXT NOT NULL,               -- UTC, ISO 8601
            x_name TEXT NOT NULL, x_kind TEXT NOT NULL CHECK (x_kind IN ('human', 'computer')),
            o_name TEXT NOT NULL, o_kind TEXT NOT NULL CHECK (o_kind IN ('human', 'computer')),
            first TEXT NOT NULL CHECK (first IN ('X', 'O')),
            rows INTEGER NOT NULL, cols INTEGER NOT NULL, k INTEGER NOT NULL,
            record TEXT NOT NULL,                  -- Game.to_text()
            result TEXT NOT NULL CHECK (result IN ('X', 'O', 'draw')))""",
        "CREATE TABLE scores (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",  # run, easy, medium, hard
        """CREATE TABLE opponents (name TEXT PRIMARY KEY, wins INTEGER NOT NULL DEFAULT 0,
            losses INTEGER NOT NULL DEFAULT 0, draws INTEGER NOT NULL DEFAULT 0)""",
    ),
    (  # 2: two-person tallies, filled in from the games already kept
        """CREATE TABLE people (name TEXT PRIMARY KEY, wins INTEGER NOT NULL DEFAULT 0,
            losses INTEGER NOT NULL DEFAULT 0, draws INTEGER NOT NULL DEFAULT 0)""",
        """INSERT INTO people (name, wins, losses, draws)
            SELECT name, SUM(w), SUM(l), SUM(d) FROM (
                SELECT x_name AS name, result = 'X' AS w, result = 'O' AS l, result = 'draw' AS d
                    FROM games WHERE x_kind = 'human' AND o_kind = 'human'
                UNION ALL
                SELECT o_name, result = 'O', result = 'X', result = 'draw'
                    FROM games WHERE x_kind = 'human' AND o_kind = 'human')
            GROUP BY name""",
    ),
]
SCHEMA_VERSION = len(_MIGRATIONS)

_GAME_COLUMNS = "id, played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k, record, result"


class StoreError(NoughtsError):
    """The store cannot do what was asked; the message is a sentence for the person."""


class GameNotFoundError(StoreError):
    """No stored game has that number."""


# values ---------------------------------------------------------------------------------
class _Value:
    """An immutable record with equality and repr from its fields (dataclasses cost ~10 ms to import)."""

    __slots__: tuple[str, ...] = ()

    def __init__(self, *values: object) -> None:
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self.__slots__, self._fields(), strict=True))
        return f"{type(self).__name__}({fields})"


class Participant(_Value):
    """Who played one side: a person (by name) or a computer player (by registry name)."""

    __slots__ = ("name", "kind")
    name: str
    kind: Literal["human", "computer"]

    def __init__(self, name: str, kind: Literal["human", "computer"]) -> None:
        if kind not in ("human", "computer"):
            raise StoreError(f"A player is 'human' or 'computer', not {kind!r:.30}.")
        if not isinstance(name, str) or not name.strip():
            raise StoreError("A player's name cannot be empty.")
        name = name.strip()
        if len(name) > MAX_NAME_CHARS or not name.isprintable():
            raise StoreError(f"A player's name must be printable and at most {MAX_NAME_CHARS} characters long.")
        # the registry ignores case, so "Hard" and "hard" must count as one opponent
        super().__init__(name.lower() if kind == "computer" else name, kind)

    @classmethod
    def human(cls, name: str) -> Participant:
        return cls(name, "human")

    @classmethod
    def computer(cls, name: str) -> Participant:
        return cls(name, "computer")


class Tally(_Value):
    """Wins, losses and draws, from the point of view of the person the tally belongs to."""

    __slots__ = ("wins", "losses", "draws")
    wins: int
    losses: int
    draws: int

    def __init__(self, wins: int = 0, losses: int = 0, draws: int = 0) -> None:
        super().__init__(wins, losses, draws)

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws


class Recorded(_Value):
    """What :meth:`Store.record` did: the new game's number and how the robot's scores moved."""

    __slots__ = ("game_id", "points", "run", "difficulty", "high_score", "new_high_score")
    game_id: int | None
    points: int
    run: int
    difficulty: str | None
    high_score: int | None
    new_high_score: bool

    def __init__(self, game_id: int | None, points: int = 0, run: int = 0, difficulty: str | None = None,
                 high_score: int | None = None, new_high_score: bool = False) -> None:
        super().__init__(game_id, points, run, difficulty, high_score, new_high_score)

    def summary(self) -> str:
        """A sentence for the person: the game's number and how the robot's scores moved."""
        if self.game_id is None:
            return ""
        line = f"Saved as game {self.game_id}."
        if self.difficulty is not None:
            if self.points:
                line += f" +{self.points} point{'' if self.points == 1 else 's'}: your run is {self.run}"
            else:
                line += " Your run is back to 0"
            line += f"; {self.difficulty} high score {self.high_score}"
            line += " (a new high score!)." if self.new_high_score else "."
        return line


class Scores(_Value):
    """The score table: the robot's numbers, per-opponent tallies and two-person tallies."""

    __slots__ = ("run", "high", "opponents", "people")
    run: int
    high: dict[str, int]
    opponents: dict[str, Tally]
    people: dict[str, Tally]

    def __init__(self, run: int, high: dict[str, int], opponents: dict[str, Tally],
                 people: dict[str, Tally]) -> None:
        super().__init__(run, high, opponents, people)


class StoredGame(_Value):
    """One finished game from the history; :meth:`to_game` rebuilds it for replay."""

    __slots__ = ("id", "played_at", "x", "o", "first", "rows", "cols", "k", "record", "result")
    id: int
    played_at: datetime
    x: Participant
    o: Participant
    first: str
    rows: int
    cols: int
    k: int
    record: str
    result: str

    def __init__(self, id: int, played_at: datetime, x: Participant, o: Participant, first: str,
                 rows: int, cols: int, k: int, record: str, result: str) -> None:
        super().__init__(id, played_at, x, o, first, rows, cols, k, record, result)

    @property
    def winner(self) -> Participant | None:
        return self.x if self.result == "X" else self.o if self.result == "O" else None

    def to_game(self) -> Game:
        """The game with every move played again (raises ``GameRecordError`` if the record was tampered with)."""
        from noughts.game import Game

        game = Game.from_text(self.record)
        game.x_name, game.o_name = self.x.name, self.o.name
        return game


# where the file lives -------------------------------------------------------------------
def default_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$NOUGHTS_DB``, else ``$XDG_DATA_HOME/noughts/noughts.db``, else ``~/.local/share/noughts/noughts.db``.

    >>> default_path({"NOUGHTS_DB": "/srv/scores.db"}).as_posix()
    '/srv/scores.db'
    >>> default_path({"XDG_DATA_HOME": "/data", "HOME": "/home/ann"}).as_posix()
    '/data/noughts/noughts.db'
    >>> default_path({"XDG_DATA_HOME": "relative", "HOME": "/home/ann"}).as_posix()
    '/home/ann/.local/share/noughts/noughts.db'
    """
    from pathlib import Path

    env = os.environ if environ is None else environ
    if env.get(ENV_VAR):
        return Path(env[ENV_VAR]).expanduser()
    xdg = env.get("XDG_DATA_HOME", "")
    if os.path.isabs(xdg):  # the XDG spec says relative values are to be ignored
        return Path(xdg, "noughts", "noughts.db")
    home = env.get("HOME") or (os.path.expanduser("~") if environ is None else "")
    if not home or home == "~":
        raise StoreError("Scores and history are off because there is no home folder to keep them in "
                         f"(set {ENV_VAR} to a file path to keep them). The game still plays.")
    return Path(home, ".local", "share", "noughts", "noughts.db")


def open_store(path: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None) -> Store:
    """Open (creating or upgrading) the store; never raises for a problem with the file or folder.

    A file that is damaged or not ours is moved aside and a notice says where; a place that
    cannot be written gives a disabled store whose ``reason`` says why.
    """
    from pathlib import Path

    try:
        target = Path(path).expanduser() if path is not None else default_path(environ)
    except StoreError as error:
        return Store.disabled(str(error))
    import sqlite3

    target = target.absolute()
    notices: list[str] = []
    try:
        connection = _open_connection(target, notices)
    except _Off as off:
        reason = str(off)
    except (OSError, sqlite3.Error) as error:  # whatever else the file system throws, the game must go on
        reason = str(_off(target, f"{target} cannot be used ({error})"))
    else:
        return Store(target, connection, notices)
    store = Store.disabled(reason, target)
    store.notices[:0] = notices  # a file moved aside before we gave up is still worth telling
    return store


class _Off(Exception):
    """The store must be turned off; the message is the reason, for the person."""


def _off(target: Path, why: str) -> _Off:
    return _Off(f"Scores and history are off because {why}. The game still plays, but nothing will be saved "
                f"(use --db PATH or {ENV_VAR} to keep them somewhere else).")


def _open_connection(target: Path, notices: list[str]) -> sqlite3.Connection:
    import sqlite3

    for _attempt in range(3):  # a fresh file after a move-aside must open; a third failure is not a file problem
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise _off(target, f"the folder {target.parent} cannot be created: a file is in the way") from None
        except OSError as error:
            raise _off(target, f"the folder {target.parent} cannot be created ({_os_reason(error)})") from None
        if target.is_dir():
            raise _off(target, f"{target} is a folder, not a file")
        try:
            identity, header = _peek(target)
        except OSError as error:
            raise _off(target, f"the file {target} cannot be read ({_os_reason(error)})") from None
        # a short prefix of the magic may be a file another process is creating: SQLite's locks sort that out
        ours = header.startswith(_SQLITE_MAGIC) or _SQLITE_MAGIC.startswith(header)
        problem = None if ours else "it is not a SQLite database"
        checked = not header or problem is not None  # nothing there yet, or already judged
        connection = None
        try:
            if not checked:
                checked, problem = _inspect_read_only(target)
            if problem is None:
                connection = sqlite3.connect(target, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
                if not checked:
                    problem = _inspect(connection)
                if problem is None:
                    _prepare(connection)
                    return connection
        except StoreError as error:
            _close_quietly(connection)
            why = str(error).rstrip(".")
            raise _off(target, why[:1].lower() + why[1:]) from None
        except sqlite3.DatabaseError as error:
            _close_quietly(connection)
            if not _is_corruption(error):  # read-only file, a failing upgrade...: leave the file alone
                raise _off(target, f"the file {target} cannot be used ({error})") from None
            problem = f"it is damaged ({error})"
        _close_quietly(connection)
        notices.append(_move_aside(target, identity, problem))
    raise _off(target, f"a new database cannot be started at {target}")


def _inspect_read_only(target: Path) -> tuple[bool, str | None]:
    """Judge the file through a read-only connection: (whether it could be judged, the problem).

    Closing a read-write connection may checkpoint a WAL into the file; a file that turns
    out not to be ours must be moved aside exactly as it was.
    """
    import sqlite3

    try:
        connection = sqlite3.connect(f"{target.as_uri()}?mode=ro", uri=True, timeout=_BUSY_TIMEOUT_S,
                                     isolation_level=None)
    except sqlite3.Error:
        return False, None
    try:
        return True, _inspect(connection)
    except sqlite3.DatabaseError as error:
        if _is_corruption(error):
            return True, f"it is damaged ({error})"
        return False, None  # e.g. a journal to roll back first: the read-write connection will judge
    finally:
        _close_quietly(connection)


def _peek(target: Path) -> tuple[tuple[int, int] | None, bytes]:
    """The file's identity (device, inode) and its first 100 bytes; (None, b"") if it does not exist."""
    try:
        with open(target, "rb") as file:
            info = os.fstat(file.fileno())
            return (info.st_dev, info.st_ino), file.read(100)
    except FileNotFoundError:
        return None, b""


def _inspect(connection: sqlite3.Connection) -> str | None:
    """Why this SQLite file must not be used as a noughts database, or None if it is ours or blank.

    Only reads: a file that turns out not to be ours must be moved aside byte for byte.
    """
    application_id = connection.execute("PRAGMA application_id").fetchone()[0]
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    has_tables = connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None
    if application_id != _APPLICATION_ID and (application_id or version or has_tables):
        return "it belongs to another program"
    if version > SCHEMA_VERSION:
        return (f"it was written by a newer version of noughts (schema {version}; "
                f"this version understands up to {SCHEMA_VERSION})")
    # quick_check reads every page: a truncated or scribbled-on file fails here, not mid-game
    findings = [row[0] for row in connection.execute("PRAGMA quick_check(3)")]
    if findings != ["ok"]:
        return f"it is damaged ({'; '.join(findings)})"
    return None


def _prepare(connection: sqlite3.Connection) -> None:
    # WAL lets readers and one writer work at once; FULL makes every finished game survive power loss too.
    _retry(lambda: connection.execute("PRAGMA journal_mode = WAL").fetchone())
    connection.execute("PRAGMA synchronous = FULL")
    if connection.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
        _transaction(connection, _migrate)


def _migrate(connection: sqlite3.Connection) -> None:
    # read again under the write lock: another process may have upgraded the file meanwhile
    version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(f"The database was upgraded to schema {version} by a newer noughts while opening it.")
    for step in _MIGRATIONS[version:]:
        for statement in step:
            connection.execute(statement)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _move_aside(target: Path, identity: tuple[int, int] | None, problem: str) -> str:
    """Rename the file (and its journals) out of the way; returns the notice for the person."""
    from datetime import UTC, datetime
    from pathlib import Path

    try:
        now = _peek(target)[0]
    except OSError as error:
        raise _off(target, f"the file {target} cannot be read ({_os_reason(error)})") from None
    if now is not None and now != identity:
        # another process already moved the bad file and started a new one: use theirs
        return f"The database {target} was replaced by another noughts while starting; using the new one."
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = target.with_name(f"{target.name}.corrupt-{stamp}")
    number = 1
    while any(Path(f"{aside}{suffix}").exists() for suffix in ("", "-wal", "-journal")):
        number += 1
        aside = target.with_name(f"{target.name}.corrupt-{stamp}-{number}")
    try:
        os.rename(target, aside)
        # a stale WAL would be replayed into the fresh file; keep it next to the file it belongs to
        for suffix in ("-wal", "-journal"):
            journal = f"{target}{suffix}"
            if os.path.exists(journal) and os.path.getsize(journal):
                os.rename(journal, f"{aside}{suffix}")
            elif os.path.exists(journal):
                os.remove(journal)  # empty: our own read-only look at the file may have made it
        if os.path.exists(f"{target}-shm"):
            os.remove(f"{target}-shm")  # only an index of the WAL, rebuilt from it when needed
    except FileNotFoundError:
        return f"The database {target} was moved away by another noughts while starting; starting a new one."
    except OSError as error:
        raise _off(target, f"the file {target} is not a usable noughts database ({problem}) and cannot be moved "
                           f"out of the way ({_os_reason(error)}); it was left untouched") from None
    return (f"The file {target} could not be used because {problem}. It was moved to {aside} "
            f"and a new, empty database was started.")


def _os_reason(error: OSError) -> str:
    return (error.strerror or str(error)).rstrip(".")


def _is_corruption(error: Exception) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    text = str(error).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def _is_busy(error: Exception) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    text = str(error).lower()
    return "locked" in text or "busy" in text


def _close_quietly(connection: sqlite3.Connection | None) -> None:
    import contextlib

    if connection is not None:
        with contextlib.suppress(Exception):  # tidying up; the real error is reported elsewhere
            connection.close()


def _retry(work: Callable[[], T]) -> T:
    """Run ``work``, trying again while another process holds the database lock."""
    import random
    import sqlite3
    import time

    deadline = time.monotonic() + _RETRY_FOR_S
    delay = 0.005
    while True:
        try:
            return work()
        except sqlite3.OperationalError as error:
            if not _is_busy(error) or time.monotonic() > deadline:
                raise
        time.sleep(delay * (0.5 + random.random()))  # jitter, so two waiting processes do not collide again
        delay = min(delay * 2, 0.2)


def _transaction(connection: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``work`` in one write transaction, all or nothing, retried while the database is busy."""

    def attempt() -> T:
        connection.execute("BEGIN IMMEDIATE")  # take the write lock first: no deadlock upgrading a read lock
        try:
            result = work(connection)
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        return result

    return _retry(attempt)


# the store ------------------------------------------------------------------------------
class Store:
    """The scores and game history in one SQLite file; get one from :func:`open_store`."""

    def __init__(self, path: Path | None, connection: sqlite3.Connection | None, notices: list[str] | None = None,
                 *, reason: str | None = None) -> None:
        self.path = path
        self._connection = connection
        self.reason = reason
        self.notices: list[str] = list(notices or [])

    @classmethod
    def disabled(cls, reason: str, path: Path | None = None) -> Store:
        """A store that keeps nothing: recording is a no-op and the scores are all zero."""
        return cls(path, None, [reason], reason=reason)

    @property
    def enabled(self) -> bool:
        return self._connection is not None

    # context manager ----------------------------------------------------------------------
    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        connection, self._connection = self._connection, None
        _close_quietly(connection)
        if connection is not None and self.reason is None:
            self.reason = "The score store has been closed."

    def __repr__(self) -> str:
        return f"<Store {self.path} {'enabled' if self.enabled else 'disabled'}>"

    # helpers ------------------------------------------------------------------------------
    def _need(self) -> sqlite3.Connection:
        if self._connection is None:
            raise StoreError(self.reason or "Scores and history are off.")
        return self._connection

    def _read(self, what: str, work: Callable[[sqlite3.Connection], T]) -> T:
        import sqlite3

        connection = self._need()

        def snapshot() -> T:
            connection.execute("BEGIN")  # one consistent view across the several SELECTs
            try:
                return work(connection)
            finally:
                connection.execute("COMMIT")

        try:
            return _retry(snapshot)
        except sqlite3.Error as error:
            raise StoreError(f"The {what} could not be read from {self.path} ({error}).") from None

    # writing ------------------------------------------------------------------------------
    def record(self, game: Game, x: Participant, o: Participant, *, played_at: datetime | None = None) -> Recorded:
        """Keep a finished game and update every score, all in one transaction.

        Returns the new game's number (``None`` when the store is disabled) and the run and
        high score after it. Raises :class:`StoreError` if the game is not over or cannot be written.
        """
        import sqlite3
        from datetime import UTC, datetime

        result = game.result
        if result is None:
            raise StoreError("Only a finished game can be recorded; this one is still going on.")
        if not isinstance(x, Participant) or not isinstance(o, Participant):
            raise StoreError("Both sides of a recorded game must be given as a Participant.")
        if self._connection is None:
            return Recorded(None)
        when = played_at if played_at is not None else datetime.now(UTC)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)  # a naive time is taken to be UTC already
        start = game.start
        row = (_format_time(when), x.name, x.kind, o.name, o.kind, start.turn or "X",
               start.rows, start.cols, start.k, game.to_text(), result)

        def write(connection: sqlite3.Connection) -> Recorded:
            cursor = connection.execute(
                "INSERT INTO games (played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k, record, result)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            game_id = cursor.lastrowid
            assert game_id is not None
            return _score(connection, game_id, x, o, result)

        try:
            return _transaction(self._need(), write)
        except sqlite3.Error as error:
            raise StoreError(f"The game could not be saved to {self.path} ({error}). "
                             "The scores are unchanged.") from None

    def reset(self, *, scores: bool = True, history: bool = True) -> None:
        """Delete the scores and/or every stored game (ask the person first)."""
        import sqlite3

        def wipe(connection: sqlite3.Connection) -> None:
            if scores:
                for table in ("scores", "opponents", "people"):
                    connection.execute(f"DELETE FROM {table}")
            if history:
                connection.execute("DELETE FROM games")

        try:
            _transaction(self._need(), wipe)
        except sqlite3.Error as error:
            raise StoreError(f"The store at {self.path} could not be reset ({error}); nothing was deleted.") from None

    # reading ------------------------------------------------------------------------------
    def games(self, limit: int = 20, offset: int = 0) -> list[StoredGame]:
        """Stored games, newest first (in the order they were saved)."""
        for name, value in (("limit", limit), ("offset", offset)):
            if type(value) is not int or value < 0:
                raise StoreError(f"The {name} of a history listing is a whole number of at least 0, not {value!r:.20}.")
        if self._connection is None:
            return []
        query = f"SELECT {_GAME_COLUMNS} FROM games ORDER BY id DESC LIMIT ? OFFSET ?"
        return self._read("history", lambda c: [_stored_game(r) for r in c.execute(query, (limit, offset))])

    def count_games(self) -> int:
        if self._connection is None:
            return 0
        count: int = self._read("history", lambda c: c.execute("SELECT COUNT(*) FROM games").fetchone()[0])
        return count

    def game(self, game_id: int) -> StoredGame:
        """One stored game by its number."""
        if type(game_id) is not int:
            raise StoreError(f"A game number is a whole number, not {game_id!r:.20}.")
        self._need()
        query = f"SELECT {_GAME_COLUMNS} FROM games WHERE id = ?"
        row = self._read("history", lambda c: c.execute(query, (game_id,)).fetchone())
        if row is None:
            raise GameNotFoundError(f"There is no game number {game_id} in the history.")
        return _stored_game(row)

    def scores(self) -> Scores:
        """The score table; all zeros when the store is disabled."""
        from noughts.players import names

        opponents = {name: Tally() for name in names()}
        if self._connection is None:
            return Scores(0, dict.fromkeys(DIFFICULTY_POINTS, 0), opponents, {})

        def read(connection: sqlite3.Connection) -> Scores:
            numbers = dict(connection.execute("SELECT name, value FROM scores"))
            for name, *tally in connection.execute("SELECT name, wins, losses, draws FROM opponents ORDER BY name"):
                opponents[name] = Tally(*tally)
            people = {name: Tally(*tally) for name, *tally in
                      connection.execute("SELECT name, wins, losses, draws FROM people ORDER BY name")}
            return Scores(numbers.get("run", 0), {d: numbers.get(d, 0) for d in DIFFICULTY_POINTS},
                          opponents, people)

        return self._read("scores", read)


def _score(connection: sqlite3.Connection, game_id: int, x: Participant, o: Participant, result: str) -> Recorded:
    """Apply one finished game to the scores (inside the caller's transaction)."""
    computer = o if x.kind == "human" else x
    numbers = dict(connection.execute("SELECT name, value FROM scores WHERE name IN ('run', ?)", (computer.name,)))
    run = numbers.get("run", 0)
    if x.kind == o.kind == "human":
        for person, mark in ((x, "X"), (o, "O")):
            _add(connection, "people", person.name, result, mark)
        return Recorded(game_id, run=run)
    if x.kind == o.kind:  # two computers: history only
        return Recorded(game_id, run=run)
    human_mark = "X" if x.kind == "human" else "O"
    _add(connection, "opponents", computer.name, result, human_mark)
    points_per_win = DIFFICULTY_POINTS.get(computer.name)
    if points_per_win is None:  # the robot's points are only for its three difficulties
        return Recorded(game_id, run=run)
    high = numbers.get(computer.name, 0)
    won = result == human_mark
    points = points_per_win if won else 0
    run = run + points if won else 0
    new_high = run > high
    high = max(high, run)
    connection.executemany("INSERT INTO scores (name, value) VALUES (?, ?) "
                           "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                           [("run", run), (computer.name, high)])
    return Recorded(game_id, points, run, computer.name, high, new_high)


def _add(connection: sqlite3.Connection, table: str, name: str, result: str, mark: str) -> None:
    """Count one game in ``name``'s tally, from the point of view of the side playing ``mark``."""
    column = "draws" if result == "draw" else "wins" if result == mark else "losses"
    connection.execute(f"INSERT INTO {table} (name, {column}) VALUES (?, 1) "
                       f"ON CONFLICT (name) DO UPDATE SET {column} = {column} + 1", (name,))


def _format_time(when: datetime) -> str:
    from datetime import UTC

    # fixed width and UTC, so the text sorts in time order
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _stored_game(row: tuple[object, ...]) -> StoredGame:
    from datetime import datetime

    (game_id, played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k, record, result) = row
    return StoredGame(game_id, datetime.fromisoformat(str(played_at)),  # type: ignore[arg-type]
                      Participant(x_name, x_kind), Participant(o_name, o_kind),  # type: ignore[arg-type]
                      first, rows, cols, k, record, result)  # type: ignore[arg-type]

