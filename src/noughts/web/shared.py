"""Rooms shared by several server processes, in Redis (``noughts web --redis redis://HOST:PORT/N``).

:class:`RedisRoomStore` keeps each room as one key, ``noughts:room:CODE``, holding
``VERSION|JSON`` (``Room.to_dict()``), with an expiry that every write renews. A write is a
short Lua script that checks the stored version is still the one the writer read, so two
processes never both accept a move: the loser gets :class:`~noughts.web.rooms.Conflict`, reads
the room again and applies its message to the newer room (where it is usually refused). A new
room is written only if its code is free; a sorted set, ``noughts:rooms`` (code → last
activity), counts the rooms for the room limit and lets one process at a time expire them.

:class:`RedisHub` carries each change to the sockets of every process: each process subscribes
to the channel ``noughts:room:CODE`` of each room its sockets are in, and publishes there every
new state, every message for the room's people (``recorded``, ``scores``) and a room's closing.
Who is in a room (the ``connected`` seats and ``watchers`` of a state) is a hash per room,
``noughts:presence:CODE`` (process → its sockets in seat 0, seat 1, watching), kept current by
each process and announced on the same channel. A process that stops beating its heart
(``noughts:processes``, killed, say) is taken out of every room's presence by the others.

Each process keeps the rooms its sockets are in as it last wrote them (the write still checks
the version), and a write publishes the room as stored beside its state, so the other
processes keep it too: a move is one scripted write, with no read, even when the room's last
change was made on another process. The commands of one turn of the event loop go to Redis in
one write (:class:`Batch`). Everything goes through redis-py (with hiredis parsing the replies):
a hand-written client measured only 9 % less of the server's CPU per move, short of the
quarter that would pay for keeping one (issue 30, docs/web-protocol.md).

Nothing here runs unless ``--redis`` is given; the ``redis`` package comes with the web extra.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import secrets
from collections.abc import Container
from typing import TYPE_CHECKING, Any

from redis.asyncio import BlockingConnectionPool, Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, OutOfMemoryError, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from noughts.errors import NoughtsError, SettingError
from noughts.text import WEB_STORE_FULL, WEB_STORE_UNREACHABLE, web_game_gone, web_server_full
from noughts.web.hub import Hub, Presence, with_presence
from noughts.web.protocol import Rejection, encode
from noughts.web.rooms import Conflict, Room

if TYPE_CHECKING:
    from noughts.web.connection import Connection

__all__ = ["PREFIX", "RedisHub", "RedisRoomStore", "open_redis"]

log = logging.getLogger("noughts.web")

PREFIX = "noughts:"
CONNECTIONS = 32  # to Redis, per process: each request holds one for a round trip
GRACE_MS = 60_000  # a room's key outlives its time to live a little, so the sweep can tell its people
TIMEOUT = 5.0  # seconds any one command to Redis may take (a stopped server fails it, never hangs it)
LISTEN_CHECK = 15.0  # seconds between the idle subscription's PINGs (a dead peer shows within as long again)

# KEYS: the room, the set of rooms, the room's presence. ARGV: VERSION|JSON, the version read
# ('' for a new room), the key's life in ms, the last activity, the room limit, the code, the
# writing process, the room's channel, the state event. The state is published in the same
# step, so every process hears a room's changes in order, and only if another process has
# sockets in the room: a game whose people are all on one process costs no publish.
_PUT = """
local current = redis.call('GET', KEYS[1])
if ARGV[2] == '' then
  if current then return 'taken' end
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 'full' end
else
  if not current then return 'gone' end
  local bar = string.find(current, '|', 1, true)
  if not bar or string.sub(current, 1, bar - 1) ~= ARGV[2] then return 'changed' end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[6])
local present = redis.call('HLEN', KEYS[3])
if present > 1 or (present == 1 and redis.call('HEXISTS', KEYS[3], ARGV[7]) == 0) then
  redis.call('PUBLISH', ARGV[8], ARGV[9])
end
return 'ok'
"""

# KEYS: the set of rooms. ARGV: rooms idle since before this are gone, the key prefix.
# Only the process whose script removes a code tells its people: each room closes once.
_EXPIRE = """
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1000)
for _, code in ipairs(gone) do
  redis.call('ZREM', KEYS[1], code)
  redis.call('DEL', ARGV[2] .. 'room:' .. code, ARGV[2] .. 'presence:' .. code)
end
return gone
"""


# KEYS: the set of live processes. ARGV: this process, its lease in seconds. Returns whether this
# process was missing (1: new, or taken for dead), then the processes whose lease ran out, removed.
# allow-oom: a Redis at its maxmemory refuses writes, and a heartbeat refused would have every live
# process taken for dead (renewing a member's score takes no memory).
_BEAT_FLAGS = "#!lua flags=allow-oom\n"  # Redis 7; older ones run the script without the line
_BEAT = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local added = redis.call('ZADD', KEYS[1], string.format('%.6f', now), ARGV[1])
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.6f', now - tonumber(ARGV[2])))
for _, process in ipairs(dead) do
  redis.call('ZREM', KEYS[1], process)
end
return {added, unpack(dead)}
"""
LEASE_BEATS = 3  # heartbeats a process may miss before the others take it out of every room


def open_redis(url: str, connections: int = CONNECTIONS, timeout: float | None = None) -> Redis:
    """An asyncio client for ``url`` (``redis://HOST:PORT/N``); a malformed URL is a NoughtsError.

    Its pool holds at most ``connections``; a request beyond them waits for one (rather than
    failing, as the default pool does past 100), so a burst of messages queues up briefly.
    Connecting, and each reply, may take ``timeout`` seconds (``TIMEOUT``), then the command
    fails (redis-py's own subscription reads wait for messages as long as need be).
    """
    seconds = TIMEOUT if timeout is None else timeout
    try:
        pool = BlockingConnectionPool.from_url(url, max_connections=connections, timeout=10,
                                               decode_responses=True, health_check_interval=30,
                                               socket_timeout=seconds, socket_connect_timeout=seconds)
        return Redis.from_pool(pool)
    except ValueError as error:
        raise _not_an_address(url, error) from None


def check_redis(url: str, timeout: float = 3.0) -> None:
    """Reach the Redis at ``url`` once, or raise a NoughtsError saying why not (before serving)."""
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    except ValueError as error:
        raise _not_an_address(url, error) from None
    try:
        client.ping()
    except RedisError as error:
        raise NoughtsError(f"cannot reach Redis at {shown_url(url)}: {error}") from None
    finally:
        client.close()


def shown_url(url: str) -> str:
    """A Redis URL fit to print: any password replaced by ***.

    >>> shown_url("redis://:secret@cache:6379/0")
    'redis://:***@cache:6379/0'
    >>> shown_url("redis://ann:secret@[::1")  # not even a URL: whatever may be a password is hidden
    'redis://***@[::1'
    >>> shown_url("redis://cache:6379/0?password=secret")
    'redis://cache:6379/0?***'
    """
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        scheme, separator, rest = url.partition("://")
        return f"{scheme}{separator}***@{rest.rsplit('@', 1)[1]}" if "@" in rest else url
    if "password" in parts.query.lower():  # (redis-py reads one from the query too)
        parts = parts._replace(query="***")
    if password is not None:
        user = parts.username or ""
        host = parts.netloc.rsplit("@", 1)[1]
        parts = parts._replace(netloc=f"{user}:***@{host}")
    return urlunsplit(parts)


def _not_an_address(url: str, error: ValueError) -> SettingError:
    message = f"{shown_url(url)!r:.200} is not a Redis address like redis://127.0.0.1:6379/0 ({error})"
    return SettingError(message, setting="redis")


def is_full(error: BaseException) -> bool:
    """Whether Redis refused a write for want of memory (at its ``maxmemory``, with ``noeviction``)."""
    return isinstance(error, OutOfMemoryError) or str(error).startswith("OOM ")


def _unavailable(error: RedisError) -> Rejection:
    if is_full(error):  # it answered: it is full, not gone (rooms expiring make room again)
        log.warning("Redis is full (its maxmemory): new rooms and moves are refused until it has room: %s", error)
        return Rejection("unavailable", WEB_STORE_FULL)
    log.warning("Redis did not answer: %s", error)
    return Rejection("unavailable", WEB_STORE_UNREACHABLE)


_compact_ascii = json.JSONEncoder(separators=(",", ":")).encode  # a room as kept in Redis (made once)


class Batch:
    """Commands go to Redis over one connection of their own, in order, many per round trip.

    The commands are written on one of redis-py's connections, taken from the pool once: every
    command issued in one turn of the event loop, or while the replies to the previous ones are
    awaited, goes out in the next single write, without a pipeline object or a pool checkout for
    each (those cost a move more than everything else the library does for it).
    """

    def __init__(self, client: Redis) -> None:
        self.client = client
        self.writes = 0  # writes to Redis (each with every command waiting): counted for the tests
        self._waiting: list[tuple[tuple[Any, ...], asyncio.Future[Any]]] = []
        self._wake: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None
        self._connection: Any = None
        self._in_flight = 0

    @property
    def pending(self) -> int:
        """Commands not yet answered (or not yet sent)."""
        return len(self._waiting) + self._in_flight

    def submit(self, *command: Any) -> asyncio.Future[Any]:
        """Queue a command; the future is its reply (or its error)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._waiting.append((command, future))
        if self._runner is None or self._runner.done():
            self._wake = asyncio.Event()
            self._runner = loop.create_task(self._run())
        if self._wake is not None:
            self._wake.set()
        return future

    async def call(self, *command: Any) -> Any:
        return await self.submit(*command)

    async def _run(self) -> None:
        assert self._wake is not None
        wake = self._wake
        while True:
            if not self._waiting:
                wake.clear()
                await wake.wait()
            batch, self._waiting = self._waiting, []
            self._in_flight = len(batch)
            try:
                await self._exchange(batch)
            except Exception as error:  # the connection failed: every command not answered did
                failure = error if isinstance(error, RedisError) else RedisError(f"{type(error).__name__}: {error}")
                for _, future in batch:
                    if not future.done():
                        future.set_exception(failure)
            finally:
                self._in_flight = 0

    async def _exchange(self, batch: list[tuple[tuple[Any, ...], asyncio.Future[Any]]]) -> None:
        if self._connection is None:
            self._connection = await self.client.connection_pool.get_connection()  # type: ignore[no-untyped-call]
        connection = self._connection
        commands = [command for command, _ in batch]
        self.writes += 1
        await connection.send_packed_command(connection.pack_commands(commands), check_health=False)
        for _, future in batch:
            try:
                reply = await connection.read_response()
            except ResponseError as error:  # this command's own error; the connection is fine
                if not future.done():
                    future.set_exception(error)
                continue
            if not future.done():
                future.set_result(reply)

    async def close(self) -> None:
        """Stop (commands still waiting fail) and give the connection back to the pool."""
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._runner
        for _, future in self._waiting:
            if not future.done():
                future.set_exception(RedisError("the server is stopping"))
        self._waiting = []
        if self._connection is not None:
            with contextlib.suppress(Exception):
                await self.client.connection_pool.release(self._connection)
            self._connection = None


class RedisRoomStore:
    """Rooms as Redis keys with an expiry; writes only over the version read (see the module).

    The rooms this process's sockets are in (``local``, the hub's) are also kept here as last
    written, so the next message for one usually needs no read: the write checks the version
    all the same, and a change by another process (heard from its channel, or found by a
    write that conflicts) drops the kept copy.
    """

    def __init__(self, client: Redis, max_rooms: int = 10_000, ttl: float = 1800.0, prefix: str = PREFIX) -> None:
        self.client = client
        self.max_rooms = max_rooms
        self.ttl = ttl
        self.prefix = prefix
        self.index = prefix + "rooms"
        self.process = secrets.token_hex(8)  # this process's name in the presence hashes
        self.local: Container[str] = ()  # rooms worth keeping here (the hub's rooms with sockets)
        self._kept: dict[str, Room] = {}  # room → this process's last write of it, for the next get
        self._heard: dict[str, int] = {}  # room → the newest version another process announced
        self._told: dict[str, tuple[int, dict[str, Any]]] = {}  # room → another process's write, as it published it
        self._put = client.register_script(_PUT)
        self.batch = Batch(client)
        self._expire = client.register_script(_EXPIRE)

    def key(self, code: str) -> str:
        return f"{self.prefix}room:{code}"

    def channel(self, code: str) -> str:
        return f"{self.prefix}room:{code}"

    def presence_key(self, code: str) -> str:
        return f"{self.prefix}presence:{code}"

    def forget(self, code: str, older_than: int | None = None) -> None:
        """Drop the kept copy of a room (only if older than ``older_than``, when given)."""
        if older_than is None:
            self._kept.pop(code, None)
            self._heard.pop(code, None)
            self._told.pop(code, None)
            return
        self._heard[code] = max(older_than, self._heard.get(code, 0))  # also for a copy being written now
        kept = self._kept.get(code)
        if kept is not None and kept.version < older_than:
            del self._kept[code]
        told = self._told.get(code)
        if told is not None and told[0] < older_than:
            del self._told[code]

    def heard(self, code: str, version: int, data: dict[str, Any]) -> None:
        """Another process wrote the room at ``version`` (``data``: as stored): the next get here needs no read.

        (The write published it in the same step as it stored it, so it is what Redis holds at that
        version; a newer write since makes this process's own write over it conflict, and read.)
        """
        self.forget(code, older_than=version)
        if code in self.local and code not in self._kept and self._heard.get(code, 0) <= version:
            self._told[code] = (version, data)

    async def get(self, code: str) -> Room | None:
        kept = self._kept.pop(code, None)  # taken: a message handled meanwhile reads from Redis
        if kept is None and code in self._told:
            version, data = self._told.pop(code)
            if version >= self._heard.get(code, 0):
                kept = self._decoded(code, version, data)
        if kept is not None:
            kept.cached = True  # not read just now: the lobby reads afresh before refusing a message
            return kept
        try:
            raw = await self.batch.call("GET", self.key(code))
        except RedisError as error:
            raise _unavailable(error) from None
        if raw is None:
            return None
        stored, _, body = _text(raw).partition("|")
        try:
            return self._decoded(code, int(stored), json.loads(body))
        except ValueError as error:
            log.warning("room %s in Redis is damaged, treated as gone: %s", code, error)
            return None

    def _decoded(self, code: str, version: int, data: Any) -> Room | None:
        try:
            room = Room.from_dict(data)
        except (ValueError, TypeError, KeyError, NoughtsError) as error:
            log.warning("room %s in Redis is damaged, treated as gone: %s", code, error)
            return None
        room.version = max(room.version, version)
        room.stored_version = version
        return room

    async def put(self, room: Room) -> None:
        read = room.stored_version
        version = room.version if read is None else max(room.version, read + 1)
        code = room.code
        body = _compact_ascii({**room.to_dict(), "version": version})
        state = room.state()
        # the state for the other processes' sockets, and the room as stored, so that their next move needs no read
        event = f'{{"t":"s","o":"{self.process}","v":{version},"r":{body},"s":{encode(state)}}}'
        keys = [self.key(code), self.index, self.presence_key(code)]
        args: list[Any] = [f"{version}|{body}", "" if read is None else str(read), int(self.ttl * 1000) + GRACE_MS,
                repr(room.touched), self.max_rooms, code, self.process, self.channel(code), event]
        try:
            try:
                outcome = await self.batch.call("EVALSHA", self._put.sha, len(keys), *keys, *args)
            except NoScriptError:  # Redis restarted and forgot the script: this loads it again
                outcome = await self._put(keys=keys, args=args)
        except RedisError as error:
            self._kept.pop(code, None)
            raise _unavailable(error) from None
        if outcome == "ok":
            room.version = room.stored_version = version
            room.written_state = (version, state)  # what the hub shows next: worked out once
            told = self._told.get(code)
            if told is not None and told[0] <= version:
                del self._told[code]
            if code in self.local and self._heard.get(code, 0) <= version:
                self._kept[code] = room  # unless another process's newer change was heard meanwhile
            return
        self._kept.pop(code, None)
        self._told.pop(code, None)  # (perhaps behind the write that won: the next try reads)
        if outcome in ("taken", "changed"):
            raise Conflict(f"room {code} is {outcome}")
        elif outcome == "full":
            raise Rejection("full", web_server_full(self.max_rooms))
        else:
            raise Rejection("no_room", web_game_gone(room.code))

    async def delete(self, code: str) -> None:
        self._kept.pop(code, None)
        try:
            await self.client.delete(self.key(code))
            await self.client.zrem(self.index, code)
        except RedisError as error:
            raise _unavailable(error) from None

    async def expire(self, now: float) -> list[str]:
        try:
            gone: list[str] = await self._expire(keys=[self.index], args=[repr(now - self.ttl), self.prefix])
        except RedisError as error:
            raise _unavailable(error) from None
        return gone

    async def count(self) -> int:
        """Rooms held (expired ones included until the next sweep)."""
        return int(await self.client.zcard(self.index))


def _text(value: object) -> str:
    """A reply as text (the client decodes replies; its types allow bytes too)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _presence(text: str) -> Presence:
    s0, s1, watching = (int(n) for n in text.split(","))
    return s0, s1, watching


class RedisHub(Hub):
    """The hub of one process among several: changes go to every process through Redis."""

    def __init__(self, rooms: RedisRoomStore, *, heartbeat: float = 1.0) -> None:
        super().__init__(rooms)
        self.store = rooms
        self.client = rooms.client
        self.prefix = rooms.prefix
        self.heartbeat = heartbeat
        self.process = rooms.process
        rooms.local = self.watching
        self.others: dict[str, dict[str, Presence]] = {}  # room → another process → its sockets there
        self.shown: dict[str, tuple[int, dict[str, Any]]] = {}  # room → the newest version and state known
        self.published: dict[str, Presence] = {}  # room → this process's sockets there, as last published
        self.subscribed: set[str] = set()
        self.batch = rooms.batch  # commands for Redis, in order, with the room store's
        self._failing = False  # a command failed and the log said so; quiet until one succeeds
        self._tasks: list[asyncio.Task[None]] = []
        self._forgetting: set[asyncio.Task[None]] = set()
        self.pubsub: Any = None  # the subscription to the rooms' channels (see start)
        self.subscribing: dict[str, asyncio.Future[None]] = {}  # channel → done once Redis confirms it
        self.pings = 0  # PINGs sent on the idle subscription: counted for the tests
        self.outages = 0  # times the subscription was lost (one each, however long it stays down)
        self.beating: Redis | None = None  # the heartbeat's own connection (see _beat)
        self.subscriber: Redis | None = None  # the subscription's own client (see start)

    def channel(self, code: str) -> str:
        return self.store.channel(code)

    def _presence_key(self, code: str) -> str:
        return self.store.presence_key(code)

    def _rooms_of(self, process: str) -> str:
        return f"{self.prefix}process:{process}:rooms"

    # lifecycle --------------------------------------------------------------------------------
    async def start(self) -> None:
        try:
            await self.client.ping()
            # a client of its own with no socket timeout (redis-py before 8 applies it to a subscription's
            # wait for the next message too) and no health check of redis-py's: _listen checks an idle one
            pool = self.client.connection_pool
            self.subscriber = Redis(connection_pool=BlockingConnectionPool(
                max_connections=2, timeout=TIMEOUT, connection_class=pool.connection_class,
                **{**pool.connection_kwargs, "socket_timeout": None, "health_check_interval": 0}))
            self.pubsub = self.subscriber.pubsub()
            # a channel of its own keeps the subscription's connection subscribed while no room is open
            await self.pubsub.subscribe(f"{self.prefix}process:{self.process}")
        except RedisError as error:
            raise NoughtsError(f"cannot reach Redis: {error}") from None
        self._tasks = [asyncio.create_task(self._listen()), asyncio.create_task(self._beat())]

    async def stop(self) -> None:
        """Leave every room and close the connections; each step waits at most ``TIMEOUT`` (Redis may be gone)."""
        with contextlib.suppress(RedisError, OSError, TimeoutError):
            await asyncio.wait_for(self._drain(), TIMEOUT)
        for task in self._tasks:
            task.cancel()
        if self._tasks:  # (asyncio.wait: a task that swallowed its cancellation is left, not waited for)
            await asyncio.wait(self._tasks, timeout=TIMEOUT)
        with contextlib.suppress(RedisError, OSError, TimeoutError):
            await asyncio.wait_for(self._leave(), TIMEOUT)
        await self.batch.close()
        for closing in (self.beating, self.pubsub, self.subscriber, self.client):
            if closing is not None:
                with contextlib.suppress(RedisError, OSError, TimeoutError):
                    await asyncio.wait_for(closing.aclose(), TIMEOUT)

    async def _leave(self) -> None:
        """Take this process out of every room's presence, and out of the live processes."""
        async with self.client.pipeline(transaction=False) as pipe:
            for code in self.published:
                pipe.hdel(self._presence_key(code), self.process)
                pipe.publish(self.channel(code), self._event("p", p=[0, 0, 0]))
            pipe.delete(self._rooms_of(self.process))
            pipe.zrem(f"{self.prefix}processes", self.process)
            await pipe.execute()

    async def _drain(self) -> None:
        while self.batch.pending:
            await asyncio.sleep(0.01)

    # who is where -----------------------------------------------------------------------------
    def presence(self, code: str) -> Presence:
        s0, s1, watching = self.local_presence(code)
        for a, b, c in self.others.get(code, {}).values():
            s0, s1, watching = s0 + a, s1 + b, watching + c
        return s0, s1, watching

    async def watchers(self, code: str, besides: Connection | None = None) -> int:
        if code in self.others:
            count = self.presence(code)[2]
        else:
            try:
                held = await self.client.hgetall(self._presence_key(code))
            except RedisError as error:
                raise _unavailable(error) from None
            count = sum(_presence(_text(v))[2] for p, v in held.items() if _text(p) != self.process)
            count += self.local_presence(code)[2]
        mine = besides is not None and besides.room == code and besides.seat is None
        return count - int(mine)

    async def _present(self, code: str) -> None:
        local = self.local_presence(code)
        if self.published.get(code, (0, 0, 0)) == local:
            return
        event = self._event("p", p=list(local))
        if any(local):
            self.published[code] = local
            first = code not in self.subscribed
            if first:
                self.subscribed.add(code)
                await self._subscribe(self.channel(code))  # before the presence is written
            written = self._send(("HSET", self._presence_key(code), self.process, ",".join(map(str, local))),
                                 ("PEXPIRE", self._presence_key(code), int(self.store.ttl * 1000) + GRACE_MS),
                                 ("SADD", self._rooms_of(self.process), code),
                                 ("PUBLISH", self.channel(code), event))
            if first:
                await self._catch_up(code, written)
        else:
            self.published.pop(code, None)
            self._send(("HDEL", self._presence_key(code), self.process),
                       ("SREM", self._rooms_of(self.process), code),
                       ("PUBLISH", self.channel(code), event))
            await self._forget(code)

    async def _catch_up(self, code: str, written: asyncio.Future[None]) -> None:
        """The first socket of a room here: learn who else is in it, and any change made meanwhile.

        Writes publish a room's change only while another process is present in it, so a
        change written after this process read the room but before its presence was written
        was published to nobody here: read the room again once the presence is in.
        """
        try:
            await written
            held = await self.client.hgetall(self._presence_key(code))
            raw = await self.client.get(self.store.key(code))
        except RedisError as error:
            raise _unavailable(error) from None
        self.others[code] = {_text(p): _presence(_text(v)) for p, v in held.items() if _text(p) != self.process}
        if raw is not None:
            version, _, body = _text(raw).partition("|")
            shown = self.shown.get(code)
            with contextlib.suppress(ValueError, NoughtsError):
                if shown is None or shown[0] < int(version):
                    self.store.forget(code, older_than=int(version))
                    # kept, not sent: the lobby says "joined" first, then shows the newest state
                    self.shown[code] = (int(version), Room.from_dict(json.loads(body)).state())

    async def _forget(self, code: str) -> None:
        """No socket of this process is in the room any more: stop listening to it."""
        if code in self.watching or code not in self.subscribed:
            return
        self.subscribed.discard(code)
        self.others.pop(code, None)
        self.shown.pop(code, None)
        self.store.forget(code)
        with contextlib.suppress(RedisError, OSError):
            await self.pubsub.unsubscribe(self.channel(code))

    async def _show_presence(self, code: str) -> None:
        self._reshow(code)

    def _reshow(self, code: str) -> None:
        shown = self.shown.get(code)
        if shown is not None:
            self._push_state(code, *shown)

    # changes ------------------------------------------------------------------------------------
    def broadcast(self, room: Room) -> None:
        # the other processes heard of the change from the write itself (RedisRoomStore.put)
        written = room.written_state
        state = written[1] if written is not None and written[0] == room.version else room.state()
        self._show(room.code, room.version, state)

    def _show(self, code: str, version: int, state: dict[str, Any]) -> None:
        """Show this process's sockets the newest state known of the room.

        Changes reach a process by two ways (its own writes, the others' through Redis), and
        another process's newer change can arrive before this process shows its own older one.
        """
        if code not in self.watching:
            return
        shown = self.shown.get(code)
        if shown is None or shown[0] <= version:
            self.shown[code] = shown = (version, state)
        self._push_state(code, *shown)

    def show_to(self, conn: Connection, room: Room) -> None:
        written = room.written_state
        state = written[1] if written is not None and written[0] == room.version else room.state()
        shown = self.shown.get(room.code)
        if shown is None or shown[0] <= room.version:
            self.shown[room.code] = shown = (room.version, state)
        text = encode(with_presence(shown[1], self.presence(room.code)))
        conn.shown = (shown[0], text)
        conn.push(text)

    def _push_state(self, code: str, version: int, state: dict[str, Any]) -> None:
        """Send a state to each socket in the room that has not had it (or a newer one) already."""
        text = encode(with_presence(state, self.presence(code)))
        for conn in self.watching.get(code, ()):
            last = conn.shown
            if last is not None and (last[0] > version or (last[0] == version and last[1] == text)):
                continue
            conn.shown = (version, text)  # the one string for every socket
            conn.push(text)

    def tell(self, code: str, message: dict[str, Any], *, seated: bool = False) -> None:
        text = encode(message)
        self.push_local(code, text, seated=seated)
        if code not in self.subscribed or self.others.get(code):  # someone elsewhere may be in the room
            self._send(("PUBLISH", self.channel(code), self._event("m", m=text, seated=seated)))

    def tell_saved(self, code: str, recorded: dict[str, Any], scores: dict[str, Any]) -> None:
        # people in the room may sit in other processes: each message is told (and published) its own way
        self.tell(code, recorded, seated=True)
        self.tell(code, scores)

    def closed(self, codes: list[str], minutes: int) -> None:
        for code in codes:
            self.close_local(code, minutes)
            self._send(("PUBLISH", self.channel(code), self._event("c", n=minutes)))

    def close_local(self, code: str, minutes: int) -> None:
        super().close_local(code, minutes)
        self.published.pop(code, None)
        task = asyncio.get_running_loop().create_task(self._forget(code))
        self._forgetting.add(task)  # a task nobody references can be collected mid-flight
        task.add_done_callback(self._forgetting.discard)

    def _event(self, kind: str, **fields: Any) -> str:
        return encode({"t": kind, "o": self.process, **fields})

    def _send(self, *commands: tuple[Any, ...]) -> asyncio.Future[None]:
        """Send commands in order (with the room store's); the future is done once all are answered."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        left = len(commands)

        def answered(reply: asyncio.Future[Any]) -> None:
            nonlocal left
            left -= 1
            error = None if reply.cancelled() else reply.exception()
            if error is not None and not self._failing:
                self._failing = True
                log.warning("could not tell the other processes about a change: %s", error)
            elif error is None:
                self._failing = False
            if left == 0 and not done.done():
                done.set_result(None)

        for command in commands:
            self.batch.submit(*command).add_done_callback(answered)
        if not commands:
            done.set_result(None)
        return done

    # tasks --------------------------------------------------------------------------------------
    async def _subscribe(self, channel: str) -> None:
        """Subscribe to ``channel`` and wait until Redis says it is done (changes published later are heard)."""
        confirmed = self.subscribing.get(channel)
        if confirmed is None or confirmed.done():
            confirmed = self.subscribing[channel] = asyncio.get_running_loop().create_future()
        try:
            await self.pubsub.subscribe(channel)
            # (asyncio.wait, not wait_for: the future is left as it is, for _listen to set)
            await asyncio.wait([confirmed], timeout=TIMEOUT)
            if not confirmed.done():
                raise RedisTimeoutError(f"Redis did not confirm the subscription within {TIMEOUT:g} s")
        except RedisError as error:
            raise _unavailable(error) from None
        finally:
            if self.subscribing.get(channel) is confirmed:
                del self.subscribing[channel]

    async def _listen(self) -> None:
        """Pass on the changes published on the rooms' channels. An idle subscription is PINGed every
        ``LISTEN_CHECK`` seconds, and its connection dropped when the PING is not answered in as long
        (a dead peer): redis-py then connects it again and subscribes again, with the channels it had
        (changes published meanwhile are missed)."""
        channels = len(self.prefix) + len("room:")
        failing = False
        pinged = False
        while True:
            try:
                # (bounded: connecting again waits for Redis's answer to AUTH, which a stopped server never sends)
                async with asyncio.timeout(LISTEN_CHECK + TIMEOUT):
                    message = await self.pubsub.get_message(timeout=LISTEN_CHECK)
                if message is None:  # nothing for LISTEN_CHECK seconds
                    if pinged:
                        raise RedisConnectionError(f"Redis did not answer the subscription's PING "
                                                   f"within {LISTEN_CHECK:g} s")
                    await self.pubsub.ping()
                    self.pings += 1
                    pinged = True
                    continue
                pinged = failing = False
            except (RedisError, TimeoutError) as error:
                if not failing:
                    self.outages += 1
                    log.warning("lost the Redis subscription, reconnecting: %s", error or "no answer")
                failing = True
                pinged = False
                if self.pubsub.connection is not None:  # (the next read connects again and subscribes again)
                    with contextlib.suppress(RedisError, OSError):
                        await self.pubsub.connection.disconnect()
                await asyncio.sleep(0.5 * random.uniform(0.5, 1.5))  # (jittered: processes do not all come at once)
                continue
            kind = message.get("type")
            if kind == "subscribe":
                confirmed = self.subscribing.get(_text(message["channel"]))
                if confirmed is not None and not confirmed.done():
                    confirmed.set_result(None)
                continue
            if kind != "message":  # (a PING's answer, an unsubscribe's confirmation)
                continue
            code = message["channel"][channels:]
            if code not in self.watching:
                continue
            try:
                self._on_event(code, json.loads(message["data"]))
            except Exception:
                log.exception("a change published for room %s could not be passed on", code)

    def _on_event(self, code: str, event: dict[str, Any]) -> None:
        origin = event["o"]
        if origin == self.process:
            return
        kind = event["t"]
        if kind == "s":
            version = int(event["v"])
            if isinstance(event.get("r"), dict):
                self.store.heard(code, version, event["r"])
            else:
                self.store.forget(code, older_than=version)
            self._show(code, version, event["s"])
        elif kind == "p":
            presence = tuple(int(n) for n in event["p"])
            others = self.others.setdefault(code, {})
            before = others.get(origin, (0, 0, 0))
            if any(presence):
                others[origin] = (presence[0], presence[1], presence[2])
            else:
                others.pop(origin, None)
            if presence[:2] == before[:2]:  # only the number watching changed: shown soon, once for many
                self.show_presence_soon(code)
            else:
                self._reshow(code)
        elif kind == "m":
            self.push_local(code, event["m"], seated=bool(event["seated"]))
        elif kind == "c":
            self.close_local(code, int(event["n"]))

    async def _beat(self) -> None:
        """Say this process is alive; take processes that stopped saying so out of every room.

        A process's lease is ``LEASE_BEATS`` heartbeats, timed by Redis's clock (the machines'
        clocks may differ). A process found buried while alive (its loop stalled past its lease)
        writes its presence again.
        """
        # A connection of its own: under load every pooled one may be taken for seconds (the per-address
        # checks of a burst of new sockets), and a heartbeat queued behind them would have this live
        # process taken for dead and its players dropped from every room.
        pool = self.client.connection_pool
        self.beating = Redis(connection_pool=BlockingConnectionPool(
            max_connections=1, timeout=None, connection_class=pool.connection_class, **pool.connection_kwargs))
        beat = self.beating.register_script(_BEAT_FLAGS + _BEAT)
        keys = [f"{self.prefix}processes"]
        first = True
        while True:
            try:
                added, *dead = await beat(keys=keys, args=[self.process, repr(LEASE_BEATS * self.heartbeat)])
                if int(added) and not first:
                    log.warning("this process was taken for dead (its heartbeat was late); its sockets count again")
                    self.published.clear()
                    for code in list(self.watching):
                        await self._present(code)
                first = False
                for process in map(_text, dead):  # removed by this script: this process cleans up after each
                    await self._bury(process)
            except ResponseError as error:
                if "shebang" in str(error) or "compiling" in str(error):  # Redis before 7: no script flags
                    beat = self.beating.register_script(_BEAT)
                    continue
                log.warning("Redis refused the heartbeat: %s", error)
            except RedisError as error:
                log.warning("could not reach Redis for the heartbeat: %s", error)
            await asyncio.sleep(self.heartbeat)

    async def _bury(self, dead: str) -> None:
        codes = [_text(code) for code in await self.client.smembers(self._rooms_of(dead))]
        event = json.dumps({"t": "p", "o": dead, "p": [0, 0, 0]}, separators=(",", ":"))
        async with self.client.pipeline(transaction=False) as pipe:
            for code in codes:
                pipe.hdel(self._presence_key(code), dead)
                pipe.publish(self.channel(code), event)
            pipe.delete(self._rooms_of(dead))
            await pipe.execute()
        for code in codes:
            if code in self.watching:
                self._on_event(code, json.loads(event))
        if codes:
            log.info("a server process stopped answering; %d rooms no longer count its sockets", len(codes))
