"""A lean Redis connection for the event loop: commands written once a loop turn, replies parsed as they come.

redis-py's asyncio client reads every reply through a stream reader, a parser object and a
timeout, and a subscription through a polling task: for a room's write that cost the server
more CPU than the rest of the move (issue 12). :class:`RespConnection` is an ``asyncio.Protocol``
on one socket to Redis: every command issued in one turn of the event loop goes out in one
write at the end of the turn (:meth:`RespConnection.submit`), and each reply resolves its
command's future in order, straight from ``data_received``. A subscriber connection
(``on_message``) hands each published message to a callback, several per read, with no task
in between.

It speaks RESP2 over TCP or a Unix socket, with a password and a database number from the
URL; anything else (TLS, say) is left to redis-py (:func:`resp_address` returns None).

Nothing awaited here waits for ever: connecting (the socket, AUTH and SELECT) must be done
within ``CONNECT_TIMEOUT``, and while replies are due, Redis must send one at least every
``REPLY_TIMEOUT`` (a stopped or unreachable server): otherwise the socket is dropped and every
command not answered fails with a RedisError saying so.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, OutOfMemoryError, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["RespConnection", "pack_commands", "parse_replies", "resp_address"]

CONNECT_TIMEOUT = 10.0  # seconds to open the socket and log in
REPLY_TIMEOUT = 5.0  # seconds Redis may go without sending a reply while one is due
_CRLF = b"\r\n"


class _Incomplete(Exception):
    """The buffer ends inside a reply: wait for more bytes."""


def _error(message: str) -> ResponseError:
    if message.startswith("NOSCRIPT"):
        return NoScriptError(message)
    if message.startswith("OOM "):  # Redis at its maxmemory: a class of its own, as redis-py has
        return OutOfMemoryError(message)
    return ResponseError(message)


def _reply(data: bytes, start: int) -> tuple[Any, int]:
    """One reply starting at ``data[start]`` and where the next begins (text decoded, as redis-py's
    ``decode_responses``); an error reply is returned as a ResponseError, not raised."""
    end = data.find(_CRLF, start)
    if end < 0:
        raise _Incomplete
    kind = data[start]
    if kind == 36:  # $ bulk string
        size = int(data[start + 1:end])
        if size < 0:
            return None, end + 2
        stop = end + 2 + size
        if len(data) < stop + 2:
            raise _Incomplete
        return data[end + 2:stop].decode(errors="replace"), stop + 2
    if kind == 58:  # : integer
        return int(data[start + 1:end]), end + 2
    if kind == 43:  # + simple string
        return data[start + 1:end].decode(errors="replace"), end + 2
    if kind == 42:  # * array
        count = int(data[start + 1:end])
        if count < 0:
            return None, end + 2
        items = []
        position = end + 2
        for _ in range(count):
            item, position = _reply(data, position)
            items.append(item)
        return items, position
    if kind == 45:  # - error
        return _error(data[start + 1:end].decode(errors="replace")), end + 2
    raise RedisConnectionError(f"Redis sent a reply this client cannot read: {bytes(data[start:start + 20])!r}")


def parse_replies(data: bytes) -> tuple[list[Any], bytes]:
    """The complete replies in ``data``, and the bytes left over (the start of the next reply)."""
    replies = []
    position = 0
    size = len(data)
    while position < size:
        try:
            reply, position_after = _reply(data, position)
        except _Incomplete:
            break
        replies.append(reply)
        position = position_after
    return replies, data[position:]


def pack_commands(commands: list[tuple[Any, ...]]) -> bytes | None:
    """Commands in Redis's protocol (RESP), as redis-py's ``pack_commands`` writes them, in one go;
    None when an argument is one this does not handle (then redis-py packs them).

    (redis-py packs each argument with several calls: for a room's write, more than the rest of the
    library's work for it.)
    """
    parts: list[bytes] = []
    for command in commands:
        if not command or not isinstance(command[0], str) or " " in command[0]:  # ("CONFIG GET": two words)
            return None
        parts.append(b"*%d\r\n" % len(command))
        for argument in command:
            kind = type(argument)
            if kind is str:
                data = argument.encode()
            elif kind is bytes:
                data = argument
            elif kind is int or kind is float:  # (not bool: redis-py refuses it)
                data = repr(argument).encode()
            else:
                return None
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def resp_address(client: Any) -> dict[str, Any] | None:
    """Where and how to connect for a redis-py client's pool (host/port or path, password, db);
    None if it needs what this module does not do (TLS and other connection classes)."""
    from redis.asyncio.connection import Connection, UnixDomainSocketConnection

    pool = client.connection_pool
    kind = pool.connection_class
    options = pool.connection_kwargs
    if kind is Connection:
        where: dict[str, Any] = {"host": options.get("host", "localhost"), "port": int(options.get("port", 6379))}
    elif kind is UnixDomainSocketConnection:
        where = {"path": options["path"]}
    else:
        return None
    if options.get("credential_provider") is not None:
        return None
    return {**where, "username": options.get("username"), "password": options.get("password"),
            "db": int(options.get("db") or 0)}


class RespConnection(asyncio.Protocol):
    """One connection to Redis: :meth:`submit` a command, await its future; see the module.

    Commands issued in one turn of the event loop go out together at its end, so a turn's
    many rooms cost one write and their replies one read. With ``on_message`` the connection is
    a subscriber: each published message is passed to it as ``(channel, data)``.
    """

    def __init__(self, address: dict[str, Any], on_message: Callable[[str, str], None] | None = None,
                 on_connect: Callable[[], None] | None = None) -> None:
        self.address = address
        self.on_message = on_message
        self.on_connect = on_connect  # called once connected, before the commands queued meanwhile go
        self.transport: asyncio.Transport | None = None
        self.writes = 0  # writes to the socket (one per loop turn with commands): counted for the tests
        self._connecting: asyncio.Task[None] | None = None
        self._queued: list[tuple[tuple[Any, ...], asyncio.Future[Any] | None]] = []
        self._flush_due = False
        self._expected: deque[asyncio.Future[Any] | None] = deque()  # sent, in order; None: no one waits
        self._rest = b""
        self._closed = False
        self._wire: _Wire | None = None  # the current socket's protocol (an old one's late news is ignored)
        self._replies = 0  # replies (and messages) read: the watchdog's sign of life
        self._watchdog: asyncio.TimerHandle | None = None
        self._replies_seen = -1  # self._replies when the watchdog last looked
        self.lost: asyncio.Future[None] | None = None  # done when a connection in use is lost

    @property
    def pending(self) -> int:
        """Commands not yet answered (or not yet sent)."""
        return len(self._queued) + len(self._expected)

    # sending ----------------------------------------------------------------------------------
    def submit(self, *command: Any) -> asyncio.Future[Any]:
        """Queue a command for the end of this loop turn; the future is its reply (or its error)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queue(command, future)
        return future

    def send(self, *command: Any) -> None:
        """Queue a command nobody waits for (its reply is read and dropped; a subscriber's commands)."""
        self._queue(command, None)

    def _queue(self, command: tuple[Any, ...], future: asyncio.Future[Any] | None) -> None:
        if self._closed:
            if future is not None:
                future.set_exception(RedisConnectionError("the server is stopping"))
            return
        self._queued.append((command, future))
        if not self._flush_due:
            self._flush_due = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        if not self._queued:
            return
        if self.transport is None:
            self._connect_soon()
            return  # sent once connected
        queued, self._queued = self._queued, []
        packed = pack_commands([command for command, _ in queued])
        if packed is None:  # an argument of a kind Redis commands here never take: refuse those alone
            good = []
            for command, future in queued:
                if pack_commands([command]) is None:
                    if future is not None:
                        future.set_exception(RedisError(f"cannot send {command[0]!r} with these arguments"))
                else:
                    good.append((command, future))
            queued = good
            packed = pack_commands([command for command, _ in queued]) or b""
        self._expected.extend(future for _, future in queued)
        self.writes += 1
        try:
            self.transport.write(packed)
        except RuntimeError as error:  # (uvloop: the socket closed and its connection_lost not yet run)
            self._drop(RedisConnectionError(f"lost the connection to Redis: {error}"))
            return
        if self._watchdog is None:
            self._watch()

    # the watchdog: replies due and none read for REPLY_TIMEOUT fail, never hang ------------------
    def _watch(self) -> None:
        self._replies_seen = self._replies
        self._watchdog = asyncio.get_running_loop().call_later(REPLY_TIMEOUT, self._check_replies)

    def _check_replies(self) -> None:
        self._watchdog = None
        if not self._expected or self.transport is None:
            return  # nothing due (the next write starts watching again)
        if self._replies != self._replies_seen:
            self._watch()  # Redis is answering: look again later
            return
        error = RedisTimeoutError(f"Redis sent no reply for {REPLY_TIMEOUT:g} s: connection dropped")
        self._drop(error)

    def _drop(self, error: RedisError) -> None:
        """Give up on this socket: every command not answered fails with ``error`` now."""
        wire, transport = self._wire, self.transport
        self.transport = self._wire = None
        self._rest = b""
        if wire is not None:
            wire.abandon()
        elif transport is not None:
            transport.abort()
        self._ended(error)

    def _ended(self, error: RedisError) -> None:
        """The socket is gone: fail what was due, stop watching, tell whoever waits on ``lost``."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self._fail_all(error)
        if self.lost is not None and not self.lost.done():
            self.lost.set_result(None)

    def _connect_soon(self) -> asyncio.Task[None]:
        if self._connecting is None or self._connecting.done():
            self._connecting = asyncio.get_running_loop().create_task(self._connect())
        return self._connecting

    async def _connect(self) -> None:
        if self._closed:
            self._fail_all(RedisConnectionError("the server is stopping"))
            return
        loop = asyncio.get_running_loop()
        address = self.address
        wire = _Wire(self)
        try:
            # the socket and the login: a stopped server's kernel still accepts, then nothing answers
            async with asyncio.timeout(CONNECT_TIMEOUT):
                if "path" in address:
                    await loop.create_unix_connection(lambda: wire, address["path"])
                else:
                    await loop.create_connection(lambda: wire, address["host"], address["port"])
                hello: list[tuple[Any, ...]] = []
                if address.get("password") is not None:
                    user = address.get("username")
                    hello.append(("AUTH", user, address["password"]) if user else ("AUTH", address["password"]))
                if address.get("db"):
                    hello.append(("SELECT", address["db"]))
                if hello:
                    answers = [loop.create_future() for _ in hello]
                    if self.transport is None or self._wire is not wire:
                        raise RedisConnectionError("lost the connection to Redis while logging in")
                    self._expected.extendleft(reversed(answers))  # before anything queued meanwhile
                    self.transport.write(pack_commands(hello) or b"")
                    await asyncio.gather(*answers)
        except (TimeoutError, OSError, RedisError) as error:
            failure = error if isinstance(error, RedisError) else RedisConnectionError(
                f"cannot reach Redis within {CONNECT_TIMEOUT:g} s" if isinstance(error, TimeoutError)
                else f"cannot reach Redis: {type(error).__name__}: {error}")
            if self._wire is wire or self._wire is None:
                self._drop(failure)
            wire.abandon()
            return
        if self._closed or self._wire is not wire:  # closed (or lost) while logging in
            wire.abandon()
            why = "the server is stopping" if self._closed else "lost the connection to Redis"
            self._fail_all(RedisConnectionError(why))
            return
        if self.on_connect is not None:
            self.on_connect()
        if self._queued:
            self._flush()

    # receiving --------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # (uvloop's transports are not asyncio's class)
        self.lost = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        if self._rest:
            data = self._rest + data
        try:
            replies, self._rest = parse_replies(data)
        except (RedisError, ValueError) as error:  # not Redis's protocol: drop the connection
            self._drop(error if isinstance(error, RedisError) else RedisConnectionError(str(error)))
            return
        self._replies += 1
        on_message = self.on_message
        expected = self._expected
        for reply in replies:
            if on_message is not None and type(reply) is list and reply and reply[0] == "message":
                on_message(reply[1], reply[2])
                continue
            if not expected:  # (a subscriber's confirmations, when nobody waits for them)
                continue
            future = expected.popleft()
            if future is None or future.done():
                continue
            if isinstance(reply, ResponseError):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self._wire = None
        self._rest = b""
        self._ended(RedisConnectionError(f"lost the connection to Redis: {exc or 'closed'}"))

    def _fail_all(self, error: Exception) -> None:
        expected, self._expected = self._expected, deque()
        queued, self._queued = self._queued, []
        for future in [*expected, *(future for _, future in queued)]:
            if future is not None and not future.done():
                future.set_exception(error)

    # lifecycle --------------------------------------------------------------------------------
    async def open(self) -> None:
        """Connect now (raises a RedisError if Redis cannot be reached, within ``CONNECT_TIMEOUT``)."""
        if self._closed:
            raise RedisConnectionError("the server is stopping")
        if self.transport is None:
            await self._connect_soon()
            if self.transport is None:
                raise RedisConnectionError("cannot reach Redis")

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        """Stop: commands not answered fail; the socket is closed; it never connects again."""
        self._closed = True
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
        wire, transport = self._wire, self.transport
        self.transport = self._wire = None
        if wire is not None:
            wire.owner = None  # (its connection_lost is not news any more)
        if transport is not None:
            transport.close()
        self._ended(RedisConnectionError("the server is stopping"))


class _Wire(asyncio.Protocol):
    """One socket's protocol: passes its news to the :class:`RespConnection` while it is the current
    socket, and only then (a dropped socket's late ``connection_lost`` must not end its successor)."""

    def __init__(self, owner: RespConnection) -> None:
        self.owner: RespConnection | None = owner
        self.transport: asyncio.Transport | None = None
        self.data_received = owner.data_received  # type: ignore[method-assign]  # (no call in between)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # (uvloop's transports are not asyncio's class)
        owner = self.owner
        if owner is None or owner.closed:
            transport.abort()  # type: ignore[attr-defined]  # (a socket transport)
            return
        owner._wire = self
        owner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        owner, self.owner = self.owner, None
        if owner is not None and owner._wire is self:
            owner.connection_lost(exc)

    def abandon(self) -> None:
        """This socket is no longer the connection's: close it, and ignore whatever it says."""
        owner, self.owner = self.owner, None
        self.data_received = _ignore  # type: ignore[method-assign]
        if owner is not None and owner._wire is self:
            owner._wire = None
            owner.transport = None
        if self.transport is not None:
            self.transport.abort()


def _ignore(data: bytes) -> None:
    """An abandoned socket's bytes (none should come after abort)."""
