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

from noughts.errors import StoreError
from noughts.store import schema
from noughts.store.base import Store

TYPE_CHECKING = False  # typing, pathlib, sqlite3 and datetime cost milliseconds; they load when a store opens
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from pathlib import Path
    from typing import Any, Literal, TypeVar

    from noughts.store.schema import Db

    T = TypeVar("T")

__all__ = ["ENV_VAR", "SCHEMA_VERSION", "SQLiteStore", "default_path", "open_store"]

ENV_VAR = "NOUGHTS_DB"

# "noug": marks the file as ours, so another program's SQLite file is never mistaken for one.
_APPLICATION_ID = schema.APPLICATION_ID
_SQLITE_MAGIC = b"SQLite format 3\x00"
_BUSY_TIMEOUT_S = 2.0  # SQLite's own wait for a lock, per attempt
_RETRY_FOR_S = 10.0  # then we give up and tell the person, rather than hang the game
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CANTOPEN, _SQLITE_READONLY_DIRECTORY = 5, 6, 14, 8 | 6 << 8
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26
SCHEMA_VERSION = len(schema.MIGRATIONS)


def _latest() -> int:
    """The newest schema this noughts knows (read each time: a test may add a step)."""
    return len(schema.MIGRATIONS)


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
        return SQLiteStore(target, connection, notices, read_only=read_only)
    store = Store.disabled(reason, target)
    store.notices[:0] = notices  # a file moved aside before we gave up is still worth telling
    return store


class _Off(Exception):
    """The store must be turned off; the message says why, as part of a sentence."""

    def reason(self, target: Path, read_only: bool) -> str:
        if read_only:
            return f"Scores and history are off because {self}."
        return (f"Scores and history are off because {self}. The game still plays, but nothing will be saved "
                f"(choose another database file, or set {ENV_VAR}, to keep them somewhere else).")


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
            if version < _latest():  # an older file (or a blank one): upgrade a copy in memory
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
    # one read transaction: another noughts creating the schema must not commit between the reads,
    # or its tables would be seen without its application id
    connection.execute("BEGIN")
    try:
        application_id = connection.execute("PRAGMA application_id").fetchone()[0]
        version: int = connection.execute("PRAGMA user_version").fetchone()[0]
        has_tables = connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None
        if application_id != _APPLICATION_ID and (application_id or version or has_tables):
            raise _Refused("foreign", "it belongs to another program")
        if version > _latest():
            raise _Refused("newer", f"schema {version}; this noughts knows up to {_latest()}")
        # quick_check reads every page: a truncated or scribbled-on file fails here, not mid-game
        findings = [row[0] for row in connection.execute("PRAGMA quick_check(3)")]
        if findings != ["ok"]:
            raise _Refused("damaged", "; ".join(findings))
        return version
    finally:
        if connection.in_transaction:
            connection.execute("ROLLBACK")


def _prepare(connection: sqlite3.Connection) -> None:
    # WAL lets readers and one writer work at once; FULL makes every finished game survive power loss too.
    _retry(lambda: connection.execute("PRAGMA journal_mode = WAL").fetchone())
    connection.execute("PRAGMA synchronous = FULL")
    if connection.execute("PRAGMA user_version").fetchone()[0] < _latest():
        _transaction(connection, _migrate)


def _migrate(connection: sqlite3.Connection) -> None:
    # read again under the write lock: another process may have upgraded the file meanwhile
    version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    if version > _latest():
        raise _Refused("newer", f"it was upgraded to schema {version} while opening it; "
                                f"this noughts knows up to {_latest()}")
    reached = schema.migrate(_Db(connection), version)
    connection.execute(f"PRAGMA user_version = {reached}")


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


class _Db:
    """A SQLite connection as the shared SQL sees it."""

    __slots__ = ("connection",)
    dialect: Literal["sqlite"] = "sqlite"

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self.connection.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.connection.executemany(sql, rows)

    def insert_returning_ids(self, sql: str, rows: Sequence[Sequence[Any]]) -> list[int]:
        return [int(self.connection.execute(sql, row).fetchone()[0]) for row in rows]


# the store ------------------------------------------------------------------------------
class SQLiteStore(Store):
    """The scores and game history in one SQLite file; get one from :func:`open_store`."""

    backend = "sqlite"

    def __init__(self, path: Path, connection: sqlite3.Connection, notices: list[str] | None = None,
                 *, read_only: bool = False) -> None:
        super().__init__(path=path, read_only=read_only, notices=notices or [])
        self._connection: sqlite3.Connection | None = connection

    @property
    def enabled(self) -> bool:
        return self._connection is not None

    def _close(self) -> None:
        connection, self._connection = self._connection, None
        _close_quietly(connection)

    def _live(self) -> sqlite3.Connection:
        if self._connection is None:
            raise StoreError(self.reason or "Scores and history are off.")
        return self._connection

    def _write(self, work: Callable[[Db], T]) -> T:
        return _transaction(self._live(), lambda connection: work(_Db(connection)))

    def _read(self, work: Callable[[Db], T]) -> T:
        connection = self._live()

        def snapshot() -> T:
            connection.execute("BEGIN")  # one consistent view across the several SELECTs
            try:
                return work(_Db(connection))
            finally:
                connection.execute("COMMIT")

        return _retry(snapshot)

    def _failure(self, error: Exception) -> str | None:
        import sqlite3

        return str(error) if isinstance(error, sqlite3.Error) else None
