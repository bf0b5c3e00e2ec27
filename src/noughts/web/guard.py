"""What one client address may take of the server: rooms, joins, wrong guesses, connections.

A :class:`Guard` is one process's book of every address it has seen lately (IPv6 addresses by
their /64 network: one machine is handed a whole /64). The lobby asks it before a room is made
or joined; the uvicorn protocols in :mod:`noughts.web.shield` ask it before a connection is
served. Also here: the hosts a server answers to (:func:`default_allowed_hosts`), one log line
per cause per interval (:class:`LogLimiter`), the open-file limit (:func:`raise_descriptor_limit`) and
the turnstile that serves a burst (new connections, spectators' messages) a few at a time (:class:`Turnstile`).
Nothing here imports a web package.

With rooms in Redis (``--redis``), :class:`noughts.web.shared_guard.SharedGuard` keeps the
counts of rooms, joins, failed joins and connections there, so the limits hold over every
process together (``--workers N`` does not give an address N times its share).

>>> import asyncio
>>> guard = Guard(Limits(rooms_per_address=1))
>>> asyncio.run(guard.created("192.0.2.1", "AAAA"))
>>> guard.rooms_of("192.0.2.1")
1
>>> guard.spend_cpu("192.0.2.1", 60.0)  # a minute of hints: more than its share
>>> try:
...     guard.may_think("192.0.2.1")
... except Rejection as refusal:
...     print(refusal.code, str(refusal)[-24:])
too_much_work try again in 40 seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import math
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from noughts.errors import SettingError
from noughts.text import web_locked_out, web_rooms_per_address, web_too_many_joins, web_too_much_work
from noughts.web.protocol import Limits, Rejection

if TYPE_CHECKING:
    from noughts.web.rooms import RoomStore

__all__ = ["LOOPBACK_NAMES", "Guard", "LogLimiter", "TrustedProxies", "Turnstile", "client_key",
           "default_allowed_hosts", "install_log_limiter", "raise_descriptor_limit"]

log = logging.getLogger("noughts.web")

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
LONGEST_LOCKOUT = 3600.0
RESERVED_FILES = 64  # descriptors kept for the score store, Redis, logs and the listening socket
LOOK_EVERY = 10.0  # seconds between looks for expired rooms among an address's, when it is at its cap


def client_key(host: str | None) -> str:
    """The address whose share a client uses: IPv4 as it is, IPv6 by its /64 network."""
    if not host:
        return "?"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host  # a test client's name, a Unix socket
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class TrustedProxies:
    """The peers whose ``X-Forwarded-For`` is believed (``noughts web --trusted-proxy``): addresses or networks.

    Behind a proxy every connection comes from the proxy's address; only from these peers does
    the server take the client's address from the header, as the right-most address in it that
    is not itself a trusted proxy (the one the nearest trusted proxy saw). Anyone else's header
    is ignored: a client cannot choose its own address.

    >>> proxies = TrustedProxies(["10.0.0.0/8", "127.0.0.1"])
    >>> proxies.client("10.1.2.3", ["198.51.100.7, 203.0.113.9"])
    '203.0.113.9'
    >>> proxies.client("10.1.2.3", ["198.51.100.7, 10.9.9.9"])
    '198.51.100.7'
    >>> proxies.client("192.0.2.5", ["198.51.100.7"])
    '192.0.2.5'
    """

    def __init__(self, specs: Iterable[str] = ()) -> None:
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for spec in specs:
            for part in spec.split(","):
                part = part.strip()
                if not part:
                    continue
                try:
                    self.networks.append(ipaddress.ip_network(part.strip("[]"), strict=False))
                except ValueError:
                    takes, shown = "addresses or networks, like 127.0.0.1 or 10.0.0.0/8", f"{part!r:.60}"
                    raise SettingError(f"trusted proxies are {takes}, not {shown}", setting="trusted_proxies",
                                       takes=takes, shown=shown) from None

    def __bool__(self) -> bool:
        return bool(self.networks)

    def __contains__(self, host: object) -> bool:
        if not self.networks or not isinstance(host, str):
            return False
        try:
            address = ipaddress.ip_address(host.strip().strip("[]"))
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.networks)

    def client(self, peer: str | None, forwarded_for: Iterable[str]) -> str | None:
        """The client's address: ``peer`` itself unless it is a trusted proxy that names one."""
        if peer not in self:
            return peer
        hops = [hop.strip() for value in forwarded_for for hop in value.split(",") if hop.strip()]
        for hop in reversed(hops[-32:]):  # a long header is a hostile one: the nearest hops are enough
            if hop not in self:
                return hop[:64]
        return hops[0][:64] if hops else peer


@dataclass
class _Bucket:
    allowance: float
    stamp: float


@dataclass
class _Failures:
    count: int = 0
    lockouts: int = 0
    until: float = 0.0
    last: float = 0.0


class Guard:
    """One process's per-address book (see the module's docstring); ``clock`` is for tests."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic,
                 trusted: TrustedProxies | None = None) -> None:
        self.limits = limits
        self.clock = clock
        self.trusted = trusted or TrustedProxies()  # peers whose connections are their clients' (see shield)
        self._rooms: dict[str, set[str]] = {}  # address → codes of the rooms it made that are still open
        self._reserved: dict[str, int] = {}  # address → rooms it is making now (counted against its cap)
        self._looked: dict[str, float] = {}  # address → when its rooms were last looked for in the store
        self._cpu: dict[str, _Bucket] = {}  # address → seconds of the server's CPU it may still take
        self._owner: dict[str, str] = {}  # code → the address that made it
        self._fresh: dict[str, float] = {}  # code → when made, for rooms nobody has joined or played in
        self._joins: dict[str, _Bucket] = {}
        self._messages: dict[str, _Bucket] = {}
        self._failures: dict[str, _Failures] = {}
        self._open: dict[str, set[object]] = {}  # address → its open connections (transports)
        self._open_by: dict[object, str] = {}
        self._forwarded: dict[object, str] = {}  # websockets through a trusted proxy → their client's address
        self.max_open = _open_file_budget()  # every connection holds a descriptor
        # bursts of new connections' requests and of spectators' messages, through one turnstile (see Turnstile)
        self.turnstile = Turnstile(limits.unseated_per_slice, limits.slice_seconds)
        self.handshake_cost = 1.0 / max(1, limits.handshakes_per_slice)  # a slice's share a new request takes

    # rooms ------------------------------------------------------------------------------------
    def rooms_of(self, key: str) -> int:
        return len(self._rooms.get(key, ()))

    def _held(self, key: str) -> int:
        return len(self._rooms.get(key, ())) + self._reserved.get(key, 0)

    async def reserve_room(self, key: str, rooms: RoomStore) -> str | None:
        """Hold a place for a room ``key`` is making, or refuse (``too_many_rooms``) if it holds its share.

        The place counts against the cap until :meth:`created` or :meth:`unreserve`, so rooms made
        at the same instant cannot all pass the check. Returns what those two need to be told
        (nothing in one process; :class:`~noughts.web.shared_guard.SharedGuard`'s place in Redis).
        """
        cap = self.limits.rooms_for_one_address
        held = self._rooms.get(key)
        if held and self._held(key) >= cap and self._may_look(key):
            for code in list(held):  # another process may have expired some of them: look, now and then
                if await rooms.get(code) is None:
                    self.gone([code])
        count = self._held(key)  # no await from here to the reservation: the check and the place are one step
        if count >= cap:
            raise Rejection("too_many_rooms", web_rooms_per_address(count))
        self._reserved[key] = self._reserved.get(key, 0) + 1
        return None

    def _may_look(self, key: str) -> bool:
        """Whether to look up ``key``'s rooms in the store: at most every ``LOOK_EVERY`` s (a refusal stays cheap)."""
        now = self.clock()
        if now - self._looked.get(key, -math.inf) < LOOK_EVERY:
            return False
        self._looked[key] = now
        return True

    def unreserve(self, key: str, place: str | None = None) -> None:
        """The room :meth:`reserve_room` held a place for was not made: the place is free again."""
        left = self._reserved.get(key, 0) - 1
        if left > 0:
            self._reserved[key] = left
        else:
            self._reserved.pop(key, None)

    async def created(self, key: str, code: str, place: str | None = None) -> None:
        """``key`` made room ``code`` (in the place :meth:`reserve_room` held, if any)."""
        if key in self._reserved:
            self.unreserve(key)
        self._rooms.setdefault(key, set()).add(code)
        self._owner[code] = key
        self._fresh[code] = self.clock()

    def used(self, code: str) -> None:
        """Someone joined the room or played in it: it lives by the normal time to live now."""
        self._fresh.pop(code, None)

    def unjoined(self) -> list[str]:
        """Rooms made longer than ``unjoined_ttl`` ago that nobody has joined or played in."""
        too_old = self.clock() - self.limits.unjoined_ttl
        return [code for code, made in self._fresh.items() if made <= too_old]

    def gone(self, codes: list[str]) -> None:
        for code in codes:
            self._fresh.pop(code, None)
            key = self._owner.pop(code, None)
            held = self._rooms.get(key) if key is not None else None
            if held is not None:
                held.discard(code)
                if not held:
                    del self._rooms[key]  # type: ignore[arg-type]

    # messages -----------------------------------------------------------------------------------
    def allow_message(self, key: str) -> bool:
        """A token bucket over all of one address's sockets: many sockets do not multiply the message rate."""
        return _take(self._messages, key, self.limits.address_burst, self.limits.address_rate, self.clock())

    def spend_messages(self, key: str, count: float) -> None:
        """Take ``count`` more from ``key``'s message allowance (into debt): a join refused for rate
        costs a rejoin loop this much, so its sockets are silenced (``rate_limited``) well before
        they have cost the server the address's whole message rate in refused joins."""
        limits = self.limits
        bucket = _refilled(self._messages, key, limits.address_burst, limits.address_rate, self.clock())
        # in debt if need be (at most a burst's worth): a loop sending as fast as it is let waits it off
        bucket.allowance = max(-limits.address_burst, bucket.allowance - count)

    # the server's CPU ---------------------------------------------------------------------------
    def may_think(self, key: str) -> None:
        """Refuse (``too_much_work``) if ``key``'s hints, computer moves and board checks have taken its
        share of the server's CPU time (``cpu_burst`` seconds at once, ``cpu_rate`` a second after)."""
        limits = self.limits
        bucket = _refilled(self._cpu, key, limits.cpu_burst, limits.cpu_rate, self.clock())
        if bucket.allowance <= 0:
            raise Rejection("too_much_work", web_too_much_work(max(1, math.ceil(-bucket.allowance / limits.cpu_rate))))

    def spend_cpu(self, key: str, seconds: float) -> None:
        """``key`` had the server work ``seconds`` of CPU time for it (into debt, at most a burst's worth)."""
        limits = self.limits
        bucket = _refilled(self._cpu, key, limits.cpu_burst, limits.cpu_rate, self.clock())
        bucket.allowance = max(-limits.cpu_burst, bucket.allowance - seconds)

    # joins --------------------------------------------------------------------------------------
    async def may_join(self, key: str) -> None:
        """Refuse a locked-out address (``locked_out``) or one joining too often (``too_many_joins``)."""
        now = self.clock()
        failures = self._failures.get(key)
        if failures is not None and now < failures.until:
            wait = math.ceil(failures.until - now)
            raise Rejection("locked_out", web_locked_out(wait))
        limits = self.limits
        if not _take(self._joins, key, limits.join_burst, limits.join_rate, now):
            self.spend_messages(key, limits.refused_join_cost)
            raise Rejection("too_many_joins", web_too_many_joins(limits.join_rate))

    async def failed_join(self, key: str) -> None:
        """A join of a code that does not exist, or with a token that is not the seat's."""
        now = self.clock()
        limits = self.limits
        failures = self._failures.setdefault(key, _Failures())
        if failures.lockouts and now - failures.last > limits.lockout * 60:
            failures.lockouts = 0  # quiet for long enough: the next lockout is short again
        failures.count += 1
        failures.last = now
        if failures.count >= limits.failed_joins:
            failures.lockouts += 1
            failures.count = 0
            failures.until = now + min(limits.lockout * 2 ** (failures.lockouts - 1), LONGEST_LOCKOUT)
            log.warning("an address is locked out for %.0f s after %d joins of unknown games or with wrong tokens",
                        failures.until - now, limits.failed_joins)

    # connections --------------------------------------------------------------------------------
    def admit(self, key: str, connection: object, *, per_address: bool = True) -> bool:
        """Count a new connection from ``key``, or say no: that address, or the server, holds its most.

        ``per_address`` False (a trusted proxy's connection, shared by its clients): only the server's count.
        """
        held = self._open.get(key)
        if per_address and held is not None and len(held) >= self.limits.connections_per_address:
            return False
        if len(self._open_by) >= self.max_open:
            return False
        self._open.setdefault(key, set()).add(connection)
        self._open_by[connection] = key
        return True

    def confirm(self, key: str, connection: Any, refuse: Callable[[], None]) -> None:
        """A connection :meth:`admit` let in, counted also where every process counts (if anywhere).

        In one process there is nothing more to count; :class:`~noughts.web.shared_guard.SharedGuard`
        counts it in Redis and calls ``refuse`` if the address holds its most over all processes.
        """

    async def admit_shared(self, key: str, connection: object) -> bool:
        """As :meth:`confirm`, awaited: whether the connection may stay (in one process: yes)."""
        return True

    def admit_forwarded(self, key: str, connection: object) -> bool:
        """Count a websocket a trusted proxy passed on for ``key`` (the server's count has its socket already)."""
        held = self._open.get(key)
        if held is not None and len(held) >= self.limits.connections_per_address:
            return False
        self._open.setdefault(key, set()).add(connection)
        self._forwarded[connection] = key
        return True

    def release(self, connection: object) -> None:
        key = self._open_by.pop(connection, None)
        if key is None:
            key = self._forwarded.pop(connection, None)
        if key is None:
            return
        held = self._open[key]
        held.discard(connection)
        if not held:
            del self._open[key]

    @property
    def open_connections(self) -> int:
        return len(self._open_by)

    def prune(self) -> None:
        """Forget addresses with nothing left to remember (full join allowance, no lockout to grow)."""
        now = self.clock()
        limits = self.limits
        for buckets, burst, rate in ((self._joins, limits.join_burst, limits.join_rate),
                                     (self._messages, limits.address_burst, limits.address_rate),
                                     (self._cpu, limits.cpu_burst, limits.cpu_rate)):
            for key, bucket in list(buckets.items()):
                if bucket.allowance + (now - bucket.stamp) * rate >= burst:
                    del buckets[key]
        for key, failures in list(self._failures.items()):
            if now >= failures.until and now - failures.last > limits.lockout * 60:
                del self._failures[key]
        for key, looked in list(self._looked.items()):
            if now - looked >= LOOK_EVERY:
                del self._looked[key]


class Turnstile:
    """What comes in bursts, served a slice's worth at a time: new connections' first requests (a
    websocket's handshake, a page), and messages from sockets in no seat (spectators).

    A few hundred sockets opened at once (a spectator loop's, say) each cost the server about a
    millisecond to handshake, and their requests all arrive together; then they all join and
    leave together. Served as they come, one turn of the event loop takes 50–150 ms in which no
    player's move is read. Here each request has a ``cost`` (a share of a slice: a handshake a
    quarter, say) and at most a whole slice's worth goes in until a timer gives a new allowance
    (a timer runs at most once a turn of the loop, so no turn serves more); the others wait in
    the order they came, and each allowance lets the first of them in. One turnstile serves
    every kind, so handshakes and spectators' messages never add up to two slices in one turn.

    The next allowance comes ``every`` seconds after this one *plus as long as this one's timer
    came late*: a loop kept busy (the slice's work, a machine whose cores are taken) lets the
    burst in more slowly, and the players' moves get turns of their own in between.
    Below a slice's worth at once nobody waits.
    """

    def __init__(self, per_turn: int, every: float) -> None:
        self.per_turn, self.every = max(1, per_turn), every
        self._used = 0.0  # the share of the slice let in since the last allowance
        self._waiting: deque[tuple[Callable[[], bool], float]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0  # when the timer was meant to fire

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def enter(self, go: Callable[[], bool], cost: float | None = None) -> bool:
        """True: serve the request now. False: it waits, and ``go()`` is called at its turn (``go``
        says False if it has gone meanwhile: its place goes to the next). ``cost``: the share of a
        slice the request takes (default ``1 / per_turn``)."""
        share = 1.0 / self.per_turn if cost is None else cost
        if self._now(share):
            return True
        self._waiting.append((go, share))
        return False

    async def turn(self, cost: float | None = None) -> None:
        """Wait for a place (at once while the allowance lasts and nobody waits)."""
        share = 1.0 / self.per_turn if cost is None else cost
        if self._now(share):
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def go() -> bool:
            if waiter.done():  # cancelled: its connection went
                return False
            waiter.set_result(None)
            return True

        self._waiting.append((go, share))
        await waiter

    def _now(self, share: float) -> bool:
        if self._timer is None:
            self._schedule(self.every)
        if not self._waiting and self._used + share <= 1.0 + 1e-9:
            self._used += share
            return True
        return False

    def _schedule(self, delay: float) -> None:
        loop = asyncio.get_running_loop()
        self._due = loop.time() + delay
        self._timer = loop.call_at(self._due, self._allow)

    def _allow(self) -> None:
        """A new allowance: the first who wait go in; the timer stops once nobody comes."""
        self._timer = None
        late = max(0.0, asyncio.get_running_loop().time() - self._due)
        used, waiting = 0.0, self._waiting
        while waiting and used + waiting[0][1] <= 1.0 + 1e-9:
            go, share = waiting.popleft()
            try:
                if go():  # (False: closed while it waited)
                    used += share
            except Exception:  # one request's failure must not leave the others waiting for ever
                log.exception("serving a connection that waited its turn failed")
                used += share
        self._used = used
        if used or waiting:
            self._schedule(self.every + min(late, 10 * self.every))


def _refilled(buckets: dict[str, _Bucket], key: str, burst: float, rate: float, now: float) -> _Bucket:
    """``key``'s bucket (made full if new) with what ``rate`` has added to it since it was last looked at."""
    bucket = buckets.get(key)
    if bucket is None:
        bucket = buckets[key] = _Bucket(burst, now)
    bucket.allowance = min(burst, bucket.allowance + (now - bucket.stamp) * rate)
    bucket.stamp = now
    return bucket


def _take(buckets: dict[str, _Bucket], key: str, burst: float, rate: float, now: float) -> bool:
    """Take one token from ``key``'s bucket (``burst`` at once, ``rate`` a second after), if there is one."""
    bucket = _refilled(buckets, key, burst, rate, now)
    if bucket.allowance < 1:
        return False
    bucket.allowance -= 1
    return True


def _open_file_budget() -> int:
    try:
        import resource
    except ImportError:  # Windows
        return 1 << 30
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return 1 << 30 if soft == resource.RLIM_INFINITY else max(16, soft - RESERVED_FILES)


def raise_descriptor_limit(needed: int) -> str | None:
    """Raise the open-file limit to the hard limit; a warning to print if it still holds fewer than ``needed``."""
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if (hard != resource.RLIM_INFINITY and soft != hard) or (hard == resource.RLIM_INFINITY and soft < needed):
        target = hard if hard != resource.RLIM_INFINITY else needed + RESERVED_FILES
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # macOS refuses more than its kernel's OPEN_MAX
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and soft < needed:
        return (f"noughts web: this process may open only {soft} files (the hard limit), fewer than the {needed} "
                f"connections its limits allow; beyond that new visitors are turned away. Raise the limit "
                f"(ulimit -n {needed + RESERVED_FILES}, or LimitNOFILE= under systemd) before starting.")
    return None


def default_allowed_hosts(host: str) -> set[str]:
    """The names a server bound to ``host`` answers to: loopback names on loopback, the machine's on 0.0.0.0."""
    bound = host.strip("[]").lower()
    if bound in ("", "0.0.0.0", "::"):
        names = set(LOOPBACK_NAMES)
        for name in {socket.gethostname(), socket.getfqdn()}:
            names.add(name.lower())
            with contextlib.suppress(OSError):
                names.update(str(info[4][0]) for info in socket.getaddrinfo(name, None))
        names.update(_lan_addresses())
        return names
    try:
        if ipaddress.ip_address(bound).is_loopback:
            return set(LOOPBACK_NAMES)
    except ValueError:
        if bound == "localhost":
            return set(LOOPBACK_NAMES)
    return {bound}


def _lan_addresses() -> set[str]:
    """The addresses this machine's default routes leave from (no packet is sent)."""
    found = set()
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as sock:
                sock.connect((probe, 9))
                found.add(str(sock.getsockname()[0]))
        except OSError:
            pass
    return found


class LogLimiter(logging.Filter):
    """One log line per cause (logger and message pattern) per ``every`` seconds.

    The first line after a quiet spell says how many like it were held back.
    """

    def __init__(self, every: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.every = every
        self.clock = clock
        self._causes: dict[tuple[str, str], list[float]] = {}  # cause → [first shown, held back]

    def filter(self, record: logging.LogRecord) -> bool:
        now = self.clock()
        cause = (record.name, str(record.msg))
        seen = self._causes.get(cause)
        if seen is not None and now - seen[0] < self.every:
            seen[1] += 1
            return False
        if seen is not None and seen[1]:
            record.msg = f"{record.getMessage()} (and {seen[1]:.0f} more like it in the last {now - seen[0]:.0f} s)"
            record.args = ()
        if len(self._causes) > 10_000:  # messages with their values in the pattern: forget, do not grow
            self._causes.clear()
        self._causes[cause] = [now, 0]
        return True


LIMITED_LOGGERS = ("noughts.web", "uvicorn.error", "asyncio", "websockets")


def install_log_limiter(every: float) -> None:
    """Put one :class:`LogLimiter` on the loggers a flood of bad clients would fill (once per process)."""
    for name in LIMITED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, LogLimiter) for f in logger.filters):
            logger.addFilter(_shared_limiter(every))


_limiters: dict[float, LogLimiter] = {}


def _shared_limiter(every: float) -> LogLimiter:
    if every not in _limiters:
        _limiters[every] = LogLimiter(every)
    return _limiters[every]
