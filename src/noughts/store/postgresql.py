"""The store in a PostgreSQL database, so several processes and machines record into one.

``open_store("postgresql://user:password@host:5432/dbname")`` (any libpq URL: ``?host=/run/postgresql``
for a unix socket, ``?options=-csearch_path%3Dnoughts`` for a schema of its own) keeps the
same tables as the SQLite file, made by the same migrations (:mod:`noughts.store.schema`);
the version is the one row of ``noughts_schema``. psycopg 3 is the client (``pip install
'noughts[postgres]'``), imported only here.

Writers share the database safely: each batch of games is one transaction; the run and high
scores of a board are changed by one writer at a time (a transaction-scoped advisory lock per
board, taken in order, so two writers never deadlock on them); tallies are added in place
(``wins = wins + n``), never read and written back; a game key is unique, so a game recorded
twice (a retry, two processes) is kept once. A transaction the server aborts for a deadlock or
a duplicate key is run again, and a dropped connection is opened again on the next call.

Like the SQLite store, opening never raises: a server that cannot be reached, a login that is
refused, a database made by a newer noughts or holding another program's ``games`` table turn
scores off, and ``reason`` says why in one sentence (the URL shown without its password).
"""

from __future__ import annotations

from noughts.errors import StoreError
from noughts.store import schema
from noughts.store.base import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, Literal, TypeVar

    import psycopg

    from noughts.store.schema import Db
    from noughts.store.scoring import Shape

    T = TypeVar("T")

__all__ = ["PostgreSQLStore", "open_store", "shown_url"]

_CONNECT_TIMEOUT_S = 10
_ATTEMPTS = 5  # a transaction aborted for a deadlock, a serialization failure or a key race is run again
_OFF_TAIL = "The game still plays, but nothing will be saved."
_RETRYABLE = ("40001", "40P01", "23505")  # serialization_failure, deadlock_detected, unique_violation (a key race)


def shown_url(url: str) -> str:
    """The URL as people may see it: no password, in the address or in its options.

    >>> shown_url("postgresql://ann:secret@db.example:5433/noughts?sslmode=require&password=x")
    'postgresql://ann@db.example:5433/noughts?sslmode=require'
    """
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            user, host = netloc.rsplit("@", 1)
            netloc = f"{user.split(':', 1)[0]}@{host}"
        query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "password"], safe="/,=:")
        return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        return "(a PostgreSQL URL that cannot be read)"


def open_store(url: str, *, read_only: bool = False) -> Store:
    """Connect and bring the schema up to date (``read_only``: connect and check only); never raises."""
    shown = shown_url(url)
    try:
        import psycopg
    except ImportError:
        return Store.disabled(_Off("keeping them in PostgreSQL needs the psycopg package: "
                                   "pip install 'noughts[postgres]'").reason(read_only))
    try:
        connection = _connect(url)
    except _Off as off:
        return Store.disabled(off.reason(read_only))
    try:
        version = _prepare(connection, read_only, shown)
    except _Off as off:
        _close_quietly(connection)
        return Store.disabled(off.reason(read_only))
    except psycopg.Error as error:
        _close_quietly(connection)
        return Store.disabled(_Off(f"the database {shown} cannot be used ({_one_line(error)})").reason(read_only))
    return PostgreSQLStore(url, shown, connection, version, read_only=read_only)


class _Off(Exception):
    """Scores must be turned off; the message says why as part of a sentence, ``detail`` is the server's word."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail or message

    def reason(self, read_only: bool) -> str:
        """The sentence people read; a command that only reads plays no game, so it is not told one plays on."""
        if read_only:
            return f"Scores and history are off because {self}."
        return f"Scores and history are off because {self}. {_OFF_TAIL}"


class _Lost(Exception):
    """The connection was lost and cannot be opened again (the message says why)."""


def _one_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else type(error).__name__
    if text.startswith(("connection failed: ", "connection is bad: ", "connection to server")) and " failed: " in text:
        text = text.rsplit(" failed: ", 1)[1]  # libpq's "connection to server at ..., port ... failed: " prefix
    return text.removeprefix("FATAL:").strip().rstrip(".")


def _connect(url: str) -> psycopg.Connection[Any]:
    import psycopg

    shown = shown_url(url)
    try:
        if "connect_timeout" in url:
            return psycopg.connect(url, autocommit=True, application_name="noughts")
        return psycopg.connect(url, autocommit=True, application_name="noughts", connect_timeout=_CONNECT_TIMEOUT_S)
    except psycopg.ProgrammingError as error:  # a URL libpq cannot read
        raise _Off(f"{shown} is not a PostgreSQL URL noughts can use ({_one_line(error)})") from None
    except psycopg.Error as error:
        text = _one_line(error)
        lowered = text.lower()
        if "authentication" in lowered or "pg_hba.conf" in lowered or ("role" in lowered and "not exist" in lowered):
            raise _Off(f"the PostgreSQL server for {shown} refused the login ({text})", text) from None
        if "database" in lowered and "does not exist" in lowered:
            raise _Off(f"the PostgreSQL database {shown} does not exist ({text})", text) from None
        raise _Off(f"the PostgreSQL server for {shown} cannot be reached ({text})", text) from None


def _close_quietly(connection: psycopg.Connection[Any] | None) -> None:
    import contextlib

    if connection is not None:
        with contextlib.suppress(Exception):  # tidying up; the real error is reported elsewhere
            connection.close()


def _version(connection: psycopg.Connection[Any], shown: str) -> int:
    """The schema version (0: noughts has not set this database up); refuses another program's tables."""
    # the catalog itself, not to_regclass(): its cache may not have seen another process's new tables yet
    tables = {name for (name,) in connection.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY(%s)",
        (["noughts_schema", "games", "people", "opponents", "board_scores"],))}
    if "noughts_schema" not in tables:
        if tables:
            raise _Off(f"the database {shown} holds a table named {min(tables)} that noughts did not make; "
                       "it was left untouched")
        return 0
    row = connection.execute("SELECT max(version) FROM noughts_schema").fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 0


def _prepare(connection: psycopg.Connection[Any], read_only: bool, shown: str) -> int:
    """Check the schema and, to record, upgrade it (one transaction, one process at a time)."""
    latest = len(schema.MIGRATIONS)
    version = _version(connection, shown)
    if version < latest and not read_only:
        connection.execute("BEGIN")
        try:
            # another process may be setting up the same database: take turns, then look again
            connection.execute("SELECT pg_advisory_xact_lock(%s, 0)", (schema.APPLICATION_ID,))
            version = _version(connection, shown)
            if version < latest:
                if version == 0:
                    connection.execute("CREATE TABLE noughts_schema (version INTEGER NOT NULL)")
                    connection.execute("INSERT INTO noughts_schema VALUES (0)")
                reached = schema.migrate(_Db(connection), version)
                connection.execute("UPDATE noughts_schema SET version = %s", (reached,))
                version = reached
            connection.execute("COMMIT")
        except BaseException:
            if not connection.broken and not connection.closed:
                connection.execute("ROLLBACK")
            raise
    if version > latest:
        raise _Off(f"the database {shown} was made by a newer noughts (schema {version}; "
                   f"this noughts knows up to {latest}); it was left untouched")
    if read_only and 0 < version < latest:
        raise _Off(f"the database {shown} was made by an older noughts (schema {version}); "
                   "record a game with this noughts to upgrade it")
    return version


class _Db:
    """A psycopg connection as the shared SQL sees it (``?`` placeholders become ``%s``)."""

    __slots__ = ("connection",)
    dialect: Literal["postgresql"] = "postgresql"

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection = connection

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        if not params:
            return self.connection.execute(sql.replace("?", "%s") if "?" in sql else sql)
        return self.connection.execute(sql.replace("?", "%s"), params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self.connection.cursor() as cursor:
            cursor.executemany(sql.replace("?", "%s"), rows)  # pipelined: one round trip for the lot

    def insert_returning_ids(self, sql: str, rows: Sequence[Sequence[Any]]) -> list[int]:
        ids: list[int] = []
        if not rows:
            return ids
        with self.connection.cursor() as cursor:
            cursor.executemany(sql.replace("?", "%s"), rows, returning=True)
            while True:
                ids.append(int(cursor.fetchone()[0]))  # type: ignore[index]
                if not cursor.nextset():
                    return ids

    def lock_boards(self, boards: Sequence[Shape]) -> None:
        """One writer at a time changes a board's run and high scores; held until the transaction ends."""
        if boards:
            keys = [(rows * 65_536 + cols * 256 + k) % 2**31 for rows, cols, k in boards]
            self.connection.execute("SELECT pg_advisory_xact_lock(%s, key) FROM unnest(%s::int[]) AS key",
                                    (schema.APPLICATION_ID, keys))


class PostgreSQLStore(Store):
    """The scores and game history in a PostgreSQL database; get one from :func:`open_store`."""

    backend = "postgresql"

    def __init__(self, url: str, shown: str, connection: psycopg.Connection[Any], version: int,
                 *, read_only: bool = False) -> None:
        super().__init__(shown, read_only=read_only)
        self.url = url
        self._connection: psycopg.Connection[Any] | None = connection
        self._empty = version == 0  # read-only on a database noughts has not set up: it reads as empty
        self._closed = False

    @property
    def enabled(self) -> bool:
        return not self._closed

    def _close(self) -> None:
        self._closed = True
        connection, self._connection = self._connection, None
        _close_quietly(connection)

    def _reads_empty(self) -> bool:
        return self._empty

    def _live(self) -> psycopg.Connection[Any]:
        """The connection, opened again if the last one was lost (a server restart, a network cut)."""
        if self._closed:
            raise StoreError(self.reason or "Scores and history are off.")
        if self._connection is None or self._connection.closed or self._connection.broken:
            _close_quietly(self._connection)
            self._connection = None
            try:
                self._connection = _connect(self.url)
            except _Off as off:
                raise _Lost(f"the connection was lost and cannot be opened again: {off.detail}") from None
        return self._connection

    def _run(self, begin: str, work: Callable[[Db], T]) -> T:
        import time

        import psycopg

        for attempt in range(_ATTEMPTS):
            connection = self._live()
            committing = False
            try:
                connection.execute(begin)
                try:
                    result = work(_Db(connection))
                    committing = True
                    connection.execute("COMMIT")
                except BaseException:
                    if not committing and not connection.broken and not connection.closed:
                        connection.execute("ROLLBACK")
                    raise
                return result
            except psycopg.Error as error:
                lost = connection.broken or connection.closed
                again = error.sqlstate in _RETRYABLE or (lost and not committing)  # a lost COMMIT may have landed
                if not again or attempt == _ATTEMPTS - 1:
                    raise
                time.sleep(0.002 * 2**attempt)
        raise AssertionError("unreachable")

    def _write(self, work: Callable[[Db], T]) -> T:
        return self._run("BEGIN", work)

    def _read(self, work: Callable[[Db], T]) -> T:
        return self._run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", work)  # one view across the SELECTs

    def _failure(self, error: Exception) -> str | None:
        import psycopg

        if isinstance(error, _Lost):
            return str(error)
        return _one_line(error) if isinstance(error, psycopg.Error) else None
