"""The store in a SQLite file: opening, migrations, transactions, retries, damaged files.

Nothing is lost: a game and its score changes are written in one transaction when the game
ends, the file is in WAL mode with ``synchronous=FULL``, and writers take the lock up front
(``BEGIN IMMEDIATE``) and retry while another process holds it. A place that cannot be
written turns scores off instead of stopping the game.

Files are never overwritten. A file that is not a noughts database (another program's SQLite
file, or not SQLite at all) and one made by a newer noughts are refused and left untouched. A
noughts database that is damaged is left as it is when it is only read (``read_only=True``,
for listing scores and history); a store opened to record games moves it aside and starts a
new one. Read-only opening changes nothing on disk, and works on a read-only file in a
read-only folder.

>>> import tempfile, pathlib
>>> from noughts import Game
>>> from noughts.store.scoring import Participant
>>> folder = tempfile.TemporaryDirectory()
>>> path = pathlib.Path(folder.name) / "noughts.db"
>>> with open_store(path) as store:
...     store.record(Game.from_text("a1 b1 a2 b2 a3"), Participant.human("Ann"), Participant.computer("easy")).run
1
>>> with open_store(path, read_only=True) as store:
...     store.read_only, store.count_games()
(True, 1)
>>> folder.cleanup()
"""

from __future__ import annotations

import os

from noughts.errors import GameNotFoundError, StoreError
from noughts.store.scoring import (
    BoardScores,
    Participant,
    Recorded,
    Scores,
    StoredGame,
    Tally,
    replay_scores,
    score_game,
)

TYPE_CHECKING = False  # typing, pathlib, sqlite3 and datetime cost milliseconds; they load when a store opens
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Mapping
    from datetime import datetime
    from pathlib import Path
    from types import TracebackType
    from typing import TypeVar

    from noughts.game import Game
    from noughts.store.scoring import Shape

    T = TypeVar("T")
    Step = tuple[str | Callable[[sqlite3.Connection], None], ...]

__all__ = ["ENV_VAR", "SCHEMA_VERSION", "Store", "default_path", "open_store"]

ENV_VAR = "NOUGHTS_DB"
MAX_KEY_CHARS = 200

# "noug": marks the file as ours, so another program's SQLite file is never mistaken for one.
_APPLICATION_ID = 0x6E6F7567
_SQLITE_MAGIC = b"SQLite format 3\x00"
_BUSY_TIMEOUT_S = 2.0  # SQLite's own wait for a lock, per attempt
_RETRY_FOR_S = 10.0  # then we give up and tell the person, rather than hang the game
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CANTOPEN, _SQLITE_READONLY_DIRECTORY = 5, 6, 14, 8 | 6 << 8
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26


def _rebuild_board_scores(connection: sqlite3.Connection) -> None:
    """Version 3: score every kept game again, per board, and keep what each game did.

    Up to version 2 the run and high scores ignored the board. The games table has each game's
    board, players and result, so the numbers are worked out again from it. ``scores --reset``
    kept the history, so the games played before the last reset must not count: the old
    per-opponent tallies (reset with the scores, one count per person-against-computer game)
    say how many of the newest such games do.
    """
    games = [(game_id, (rows, cols, k), Participant.stored(x_name, x_kind), Participant.stored(o_name, o_kind),
              result) for game_id, rows, cols, k, x_name, x_kind, o_name, o_kind, result in connection.execute(
                  "SELECT id, rows, cols, k, x_name, x_kind, o_name, o_kind, result FROM games ORDER BY id")]
    counted: int = connection.execute("SELECT COALESCE(SUM(wins + losses + draws), 0) FROM opponents").fetchone()[0]
    mixed = [game_id for game_id, _board, x, o, _result in games if x.kind != o.kind]
    if counted >= len(mixed):
        reset_before = None  # nothing reset, or the history was cleared and the scores kept: count all there is
    elif counted == 0:
        reset_before = mixed[-1] + 1
    else:
        reset_before = mixed[-counted]
    boards, recorded = replay_scores(games, reset_before=reset_before)
    connection.executemany(
        "INSERT INTO board_scores (rows, cols, k, name, value) VALUES (?, ?, ?, ?, ?)",
        [(*board, name, value) for board, numbers in boards.items()
         for name, value in [("run", numbers.run), *numbers.high.items()]])
    connection.executemany(
        "UPDATE games SET points = ?, run = ?, difficulty = ?, high_score = ?, new_high_score = ? WHERE id = ?",
        [(r.points, r.run, r.difficulty, r.high_score, r.new_high_score, r.game_id) for r in recorded])


# Each step takes the schema from version i to i + 1. All pending steps run in one transaction,
# so a crash or error leaves the file at its old version. Statements, not scripts:
# executescript() would commit in the middle.
_MIGRATIONS: list[Step] = [
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
    (  # 3: the run and high scores per board, rebuilt from the games; what each game did; idempotency keys
        """CREATE TABLE board_scores (
            rows INTEGER NOT NULL, cols INTEGER NOT NULL, k INTEGER NOT NULL,
            name TEXT NOT NULL,                    -- 'run', or a difficulty: its high score
            value INTEGER NOT NULL,
            PRIMARY KEY (rows, cols, k, name))""",
        "ALTER TABLE games ADD COLUMN game_key TEXT",  # the caller's key: a retried record() is not a second game
        "CREATE UNIQUE INDEX games_by_key ON games (game_key)",  # ADD COLUMN cannot say UNIQUE; NULLs may repeat
        # what record() returned, so a retry returns it again
        "ALTER TABLE games ADD COLUMN points INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE games ADD COLUMN run INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE games ADD COLUMN difficulty TEXT",
        "ALTER TABLE games ADD COLUMN high_score INTEGER",
        "ALTER TABLE games ADD COLUMN new_high_score INTEGER NOT NULL DEFAULT 0",
        _rebuild_board_scores,
        "DROP TABLE scores",
    ),
]
SCHEMA_VERSION = len(_MIGRATIONS)

_GAME_COLUMNS = "id, played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k, record, result"
_RECORDED_COLUMNS = "id, points, run, difficulty, high_score, new_high_score, rows, cols, k"


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


def open_store(path: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None,
               read_only: bool = False) -> Store:
    """Open the store; never raises for a problem with the file or folder.

    To record games (the default) the file and its folders are created, an older schema is
    upgraded, and a damaged noughts database is moved aside (a notice says where). With
    ``read_only=True`` nothing on disk changes: a missing file reads as an empty store, an older
    schema is upgraded in memory, and a damaged file is refused. Either way a file that is not
    a noughts database, or was made by a newer noughts, is refused and left untouched: the
    store is then disabled and its ``reason`` says why, naming the file.
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
        connection = _open_read_only(target) if read_only else _open_connection(target, notices)
    except _Off as off:
        reason = off.reason(target, read_only)
    except (OSError, sqlite3.Error) as error:  # whatever else the file system throws, the game must go on
        reason = _Off(f"{target} cannot be used ({error})").reason(target, read_only)
    else:
        return Store(target, connection, notices, read_only=read_only)
    store = Store.disabled(reason, target)
    store.notices[:0] = notices  # a file moved aside before we gave up is still worth telling
    return store


class _Off(Exception):
    """The store must be turned off; the message says why, as part of a sentence."""

    def reason(self, target: Path, read_only: bool) -> str:
        if read_only:
            return f"Scores and history are off because {self}."
        return (f"Scores and history are off because {self}. The game still plays, but nothing will be saved "
                f"(use --db PATH or {ENV_VAR} to keep them somewhere else).")


class _Refused(Exception):
    """Why a file must not be used: ``kind`` is 'foreign', 'newer' or 'damaged'; the message is the detail."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind

    def off(self, target: Path) -> _Off:
        if self.kind == "newer":
            return _Off(f"the database {target} was made by a newer noughts ({self}); it was left untouched")
        if self.kind == "damaged":
            return _Off(f"the database {target} is damaged ({self}); it was left as it is, and will be moved "
                        "aside the next time a game is saved to it")
        return _Off(f"the file {target} is not a noughts database ({self}); it was left untouched")


def _open_connection(target: Path, notices: list[str]) -> sqlite3.Connection:
    """Open ``target`` to record games: create it, upgrade it, move a damaged one of ours aside."""
    import sqlite3

    for _attempt in range(3):  # a fresh file after a move-aside must open; a third failure is not a file problem
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise _Off(f"the folder {target.parent} cannot be created: a file is in the way") from None
        except OSError as error:
            raise _Off(f"the folder {target.parent} cannot be created ({_os_reason(error)})") from None
        if target.is_dir():
            raise _Off(f"{target} is a folder, not a file")
        identity, header = _read_header(target)
        connection = None
        try:
            checked = _judge_header(header) == "empty"  # nothing there yet: nothing to judge
            if not checked:
                checked = _inspect_read_only(target)
            connection = sqlite3.connect(target, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
            if not checked:
                _inspect(connection)
            _prepare(connection)
            return connection
        except _Refused as refused:
            _close_quietly(connection)
            verdict = _damaged(header, str(refused)) if refused.kind == "damaged" else refused
            if verdict.kind != "damaged":
                raise verdict.off(target) from None
            problem = f"it is damaged ({verdict})"
        except StoreError as error:
            _close_quietly(connection)
            why = str(error).rstrip(".")
            raise _Off(why[:1].lower() + why[1:]) from None
        except sqlite3.DatabaseError as error:
            _close_quietly(connection)
            if not _is_corruption(error):  # read-only file, a failing upgrade...: leave the file alone
                raise _Off(f"the file {target} cannot be used ({error})") from None
            verdict = _damaged(header, str(error))
            if verdict.kind != "damaged":
                raise verdict.off(target) from None
            problem = f"it is damaged ({error})"
        notices.append(_move_aside(target, identity, problem))
    raise _Off(f"a new database cannot be started at {target}")


def _open_read_only(target: Path) -> sqlite3.Connection:
    """Open ``target`` for reading only; nothing on disk is created, upgraded or moved."""
    import sqlite3

    if target.is_dir():
        raise _Off(f"{target} is a folder, not a file")
    _identity, header = _read_header(target)
    try:
        if _judge_header(header) != "sqlite":  # nothing there, or not yet: an empty store
            return _in_memory(None)
        connection = _connect_read_only(target)
        try:
            version = _inspect(connection)
            if version < SCHEMA_VERSION:  # an older file (or a blank one): upgrade a copy in memory
                return _in_memory(connection)
            return connection
        except BaseException:
            _close_quietly(connection)
            raise
    except _Refused as refused:
        raise (_damaged(header, str(refused)) if refused.kind == "damaged" else refused).off(target) from None
    except sqlite3.DatabaseError as error:
        if _is_corruption(error):
            raise _damaged(header, str(error)).off(target) from None
        raise _Off(f"the file {target} cannot be read ({error})") from None


def _connect_read_only(target: Path) -> sqlite3.Connection:
    """A read-only connection, even in a folder where SQLite cannot make its WAL index (``-shm``)."""
    import sqlite3

    connection = sqlite3.connect(f"{target.as_uri()}?mode=ro", uri=True, timeout=_BUSY_TIMEOUT_S,
                                 isolation_level=None)
    try:
        connection.execute("PRAGMA schema_version").fetchone()  # opening is lazy: this is where it fails
        return connection
    except sqlite3.OperationalError as error:
        _close_quietly(connection)
        code = getattr(error, "sqlite_errorcode", 0)
        journals = [f"{target}{suffix}" for suffix in ("-wal", "-journal")]
        if code not in (_SQLITE_READONLY_DIRECTORY, _SQLITE_CANTOPEN) or \
                any(os.path.exists(j) and os.path.getsize(j) for j in journals):
            raise
    # SQLite cannot make its WAL index here. No journal holds changes, and none can be started
    # (a writer needs this folder too), so the file alone is the whole database: "immutable"
    # reads it without the index.
    return sqlite3.connect(f"{target.as_uri()}?mode=ro&immutable=1", uri=True, isolation_level=None)


def _in_memory(source: sqlite3.Connection | None) -> sqlite3.Connection:
    """An in-memory copy of ``source`` (or an empty store) at the current schema."""
    import sqlite3

    memory = sqlite3.connect(":memory:", isolation_level=None)
    if source is not None:
        source.backup(memory)
        source.close()
    _transaction(memory, _migrate)
    return memory


def _read_header(target: Path) -> tuple[tuple[int, int] | None, bytes]:
    try:
        return _peek(target)
    except OSError as error:
        raise _Off(f"the file {target} cannot be read ({_os_reason(error)})") from None


def _judge_header(header: bytes) -> str:
    """'empty', 'partial' (a header still being written) or 'sqlite'; refuses a file that is not SQLite."""
    if not header:
        return "empty"
    # a short prefix of the magic may be a file another process is creating: SQLite's locks sort that out
    if _SQLITE_MAGIC.startswith(header):
        return "partial"
    if not header.startswith(_SQLITE_MAGIC):
        raise _Refused("foreign", "it is not a SQLite database")
    return "sqlite"


def _damaged(header: bytes, detail: str) -> _Refused:
    """A damaged file is a damaged noughts database only if its header says it is ours; else it is not ours."""
    if _marked_ours(header):
        return _Refused("damaged", detail)
    return _Refused("foreign", f"it cannot be read and is not marked as one: {detail}")


def _marked_ours(header: bytes) -> bool:
    """Whether the file's header carries our application id (bytes 68-71), however damaged the rest is."""
    return len(header) >= 72 and header.startswith(_SQLITE_MAGIC) and \
        int.from_bytes(header[68:72], "big") == _APPLICATION_ID


def _inspect_read_only(target: Path) -> bool:
    """Judge the file through a read-only connection; returns whether it could be judged.

    Closing a read-write connection may checkpoint a WAL into the file; a file that turns
    out not to be ours must stay exactly as it was.
    """
    import sqlite3

    try:
        connection = sqlite3.connect(f"{target.as_uri()}?mode=ro", uri=True, timeout=_BUSY_TIMEOUT_S,
                                     isolation_level=None)
    except sqlite3.Error:
        return False
    try:
        _inspect(connection)
        return True
    except sqlite3.DatabaseError as error:
        if _is_corruption(error):
            raise _Refused("damaged", str(error)) from None
        return False  # e.g. a journal to roll back first: the read-write connection will judge
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


def _inspect(connection: sqlite3.Connection) -> int:
    """The schema version of a noughts database (0 if blank); raises :class:`_Refused` for anything else.

    Only reads: a file that turns out not to be ours must stay as it was, byte for byte.
    """
    application_id = connection.execute("PRAGMA application_id").fetchone()[0]
    version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    has_tables = connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None
    if application_id != _APPLICATION_ID and (application_id or version or has_tables):
        raise _Refused("foreign", "it belongs to another program")
    if version > SCHEMA_VERSION:
        raise _Refused("newer", f"schema {version}; this noughts knows up to {SCHEMA_VERSION}")
    # quick_check reads every page: a truncated or scribbled-on file fails here, not mid-game
    findings = [row[0] for row in connection.execute("PRAGMA quick_check(3)")]
    if findings != ["ok"]:
        raise _Refused("damaged", "; ".join(findings))
    return version


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
        raise _Refused("newer", f"it was upgraded to schema {version} while opening it; "
                                f"this noughts knows up to {SCHEMA_VERSION}")
    for step in _MIGRATIONS[version:]:
        for statement in step:
            if isinstance(statement, str):
                connection.execute(statement)
            else:
                statement(connection)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _move_aside(target: Path, identity: tuple[int, int] | None, problem: str) -> str:
    """Rename the file (and its journals) out of the way; returns the notice for the person."""
    from datetime import UTC, datetime
    from pathlib import Path

    now = _read_header(target)[0]
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
        raise _Off(f"the database {target} is damaged ({problem}) and cannot be moved out of the way "
                   f"({_os_reason(error)}); it was left untouched") from None
    return (f"The database {target} could not be used because {problem}. It was moved to {aside} "
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
                 *, reason: str | None = None, read_only: bool = False) -> None:
        self.path = path
        self._connection = connection
        self.reason = reason
        self.read_only = read_only
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
        state = "read-only" if self.read_only and self.enabled else "enabled" if self.enabled else "disabled"
        return f"<Store {self.path} {state}>"

    # helpers ------------------------------------------------------------------------------
    def _need(self) -> sqlite3.Connection:
        if self._connection is None:
            raise StoreError(self.reason or "Scores and history are off.")
        return self._connection

    def _writable(self) -> sqlite3.Connection:
        connection = self._need()
        if self.read_only:
            raise StoreError(f"The store at {self.path} was opened only to read it; nothing can be saved to it.")
        return connection

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
    def record(self, game: Game, x: Participant, o: Participant, *, played_at: datetime | None = None,
               game_key: str | None = None) -> Recorded:
        """Keep a finished game and update every score, all in one transaction.

        Returns the new game's number (``None`` when the store is disabled), its board and the
        run and high score on that board after it. ``game_key``, if given, names this game for
        good: recording again with the same key (a retry after an error or a crash) stores
        nothing and returns what the first call returned. Raises :class:`StoreError` if the game
        is not over, the key was used for a different game, or the game cannot be written.
        """
        import sqlite3
        from datetime import UTC, datetime

        result = game.result
        if result is None:
            raise StoreError("Only a finished game can be recorded; this one is still going on.")
        if not isinstance(x, Participant) or not isinstance(o, Participant):
            raise StoreError("Both sides of a recorded game must be given as a Participant.")
        if game_key is not None and (not isinstance(game_key, str) or not 0 < len(game_key) <= MAX_KEY_CHARS):
            raise StoreError(f"A game key is a text of 1 to {MAX_KEY_CHARS} characters, not {game_key!r:.40}.")
        if self._connection is None:
            return Recorded(None)
        connection = self._writable()
        when = played_at if played_at is not None else datetime.now(UTC)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)  # a naive time is taken to be UTC already
        start = game.start
        board = (start.rows, start.cols, start.k)
        record = game.to_text()

        def write(connection: sqlite3.Connection) -> Recorded:
            if game_key is not None:
                earlier = _earlier(connection, game_key, x, o, record)
                if earlier is not None:
                    return earlier
            change = score_game(x, o, result, _board_scores(connection, board))
            outcome = change.recorded(None, board)
            cursor = connection.execute(
                "INSERT INTO games (played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k, record, result,"
                " game_key, points, run, difficulty, high_score, new_high_score)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (_format_time(when), x.name, x.kind, o.name, o.kind, start.turn or "X", *board, record, result,
                 game_key, outcome.points, outcome.run, outcome.difficulty, outcome.high_score,
                 outcome.new_high_score))
            for table, name, column in change.counts:
                assert table in ("opponents", "people") and column in ("wins", "losses", "draws")
                connection.execute(f"INSERT INTO {table} (name, {column}) VALUES (?, 1) "
                                   f"ON CONFLICT (name) DO UPDATE SET {column} = {column} + 1", (name,))
            if change.difficulty is not None:
                connection.executemany(
                    "INSERT INTO board_scores (rows, cols, k, name, value) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (rows, cols, k, name) DO UPDATE SET value = excluded.value",
                    [(*board, "run", change.after.run),
                     (*board, change.difficulty, change.after.high[change.difficulty])])
            return change.recorded(cursor.lastrowid, board)

        try:
            return _transaction(connection, write)
        except sqlite3.Error as error:
            raise StoreError(f"The game could not be saved to {self.path} ({error}). "
                             "The scores are unchanged.") from None

    def reset(self, *, scores: bool = True, history: bool = True) -> None:
        """Delete the scores and/or every stored game (ask the person first)."""
        import sqlite3

        def wipe(connection: sqlite3.Connection) -> None:
            if scores:
                for table in ("board_scores", "opponents", "people"):
                    connection.execute(f"DELETE FROM {table}")
            if history:
                connection.execute("DELETE FROM games")

        try:
            _transaction(self._writable(), wipe)
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
        """The score table, per board (3×3 first); all zeros when the store is disabled."""
        from noughts.players import names

        opponents = {name: Tally() for name in names()}
        if self._connection is None:
            return Scores.of({}, opponents, {})

        def read(connection: sqlite3.Connection) -> Scores:
            numbers: dict[Shape, dict[str, int]] = {}
            for rows, cols, k, name, value in connection.execute("SELECT rows, cols, k, name, value FROM board_scores"):
                numbers.setdefault((rows, cols, k), {})[name] = value
            boards = {board: BoardScores(values.pop("run", 0), values) for board, values in numbers.items()}
            for name, *tally in connection.execute("SELECT name, wins, losses, draws FROM opponents ORDER BY name"):
                opponents[name] = Tally(*tally)
            people = {name: Tally(*tally) for name, *tally in
                      connection.execute("SELECT name, wins, losses, draws FROM people ORDER BY name")}
            return Scores.of(boards, opponents, people)

        return self._read("scores", read)


def _board_scores(connection: sqlite3.Connection, board: Shape) -> BoardScores:
    values = dict(connection.execute("SELECT name, value FROM board_scores WHERE rows = ? AND cols = ? AND k = ?",
                                     board))
    return BoardScores(values.pop("run", 0), values)


def _earlier(connection: sqlite3.Connection, game_key: str, x: Participant, o: Participant,
             record: str) -> Recorded | None:
    """What recording the game with this key returned the first time, or None if there was none."""
    row = connection.execute(f"SELECT {_RECORDED_COLUMNS}, x_name, x_kind, o_name, o_kind, record FROM games "
                             "WHERE game_key = ?", (game_key,)).fetchone()
    if row is None:
        return None
    game_id, points, run, difficulty, high_score, new_high_score, rows, cols, k, *kept = row
    if kept != [x.name, x.kind, o.name, o.kind, record]:
        raise StoreError(f"The game key {game_key!r:.60} already belongs to game {game_id}, a different game; "
                         "this one was not saved.")
    return Recorded(game_id, points, run, difficulty, high_score, bool(new_high_score), (rows, cols, k))


def _format_time(when: datetime) -> str:
    from datetime import UTC

    # fixed width and UTC, so the text sorts in time order
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _stored_game(row: tuple[object, ...]) -> StoredGame:
    from datetime import datetime

    (game_id, played_at, x_name, x_kind, o_name, o_kind, first, rows, cols, k, record, result) = row
    return StoredGame(game_id, datetime.fromisoformat(str(played_at)),  # type: ignore[arg-type]
                      Participant.stored(x_name, x_kind), Participant.stored(o_name, o_kind),  # type: ignore[arg-type]
                      first, rows, cols, k, record, result)  # type: ignore[arg-type]
