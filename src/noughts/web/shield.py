"""The server's outer wall: names it answers to, headers on every response, and connections below HTTP.

:class:`Shield` is ASGI middleware: a ``Host`` that is not a name and port gets 400, one for a host
name the server was not configured with (DNS rebinding: a hostile name resolving to 127.0.0.1) or
another port gets 421, a websocket from another site's page (or port) is refused, and every
response, 404s and ``/healthz`` included, carries the security headers. :class:`GuardedHTTP` and
:class:`GuardedWebSocket` are uvicorn's own protocols with the :class:`~noughts.web.guard.Guard`
in front: a connection over its address's (or the server's) limit is answered 503 at once, a
request's headers must all arrive within ``handshake_timeout`` (a client sending them a byte at a
time is cut off), and a client that leaves the server unable
to write for ``stall_timeout`` is cut off; :class:`GuardedWebSocket` adds the budgets on the wire
the websockets library has no option for. The app's lifespan hands them the guard (``app_state``).
The uvicorn and websockets internals these rely on are checked by ``tests/test_web_wire.py``.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Container, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame
from websockets.protocol import State

if TYPE_CHECKING:
    _Protocol = WebSocketsSansIOProtocol
else:
    _Protocol = object

from noughts.text import WEB_BAD_HOST, WEB_TOO_MANY_REQUESTS, web_not_this_host
from noughts.web.guard import Guard, TrustedProxies, client_key

if TYPE_CHECKING:
    import asyncio

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["GUARD", "SECURITY_HEADERS", "WS_IMPLEMENTATIONS", "GuardedHTTP", "GuardedWebSocket", "Shield",
           "StallGuard"]

log = logging.getLogger("noughts.web")

SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; connect-src 'self'; "
                               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",  # frame-ancestors for browsers that predate it
    "referrer-policy": "no-referrer",  # room links carry the code
    "cache-control": "no-cache",
}
GUARD = "noughts_guard"  # the key of the app's guard in the lifespan state uvicorn hands each protocol


class Shield:
    """ASGI middleware: only ``allowed`` host names (None: any), same-site websockets, security headers.

    With a ``guard`` whose trusted proxies include the peer, the client's address is taken from
    ``X-Forwarded-For`` (and the scheme from ``X-Forwarded-Proto``), and the client's websockets
    count against that address's connection limit (see :class:`~noughts.web.guard.TrustedProxies`).
    """

    def __init__(self, app: ASGIApp, headers: Mapping[str, str], allowed: Container[str] | None,
                 guard: Guard | None = None, ports: Container[int] = ()) -> None:
        self.app = app
        self.allowed = allowed
        self.ports = ports  # ports a Host may name besides the server's own (a public URL's, say)
        self.guard = guard
        self.headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        fields = {name: value.decode("latin-1") for name, value in scope["headers"] if name in (b"host", b"origin")}
        host = fields.get(b"host", "")
        parsed = parse_host(host)
        guard = self.guard
        forwarded = guard is not None and bool(guard.trusted) and _peer(scope) in guard.trusted
        if forwarded:
            scope = _as_forwarded(scope, guard.trusted)  # type: ignore[union-attr]
        # the server's own port: a Host naming another is refused (unless a trusted proxy's, whose port it is)
        server = scope.get("server")
        own_port = None if forwarded or not server or not isinstance(server[1], int) else server[1]
        answered = parsed is not None and self._answers(parsed, own_port)
        if scope["type"] == "websocket":
            origin = fields.get(b"origin")
            if not answered or (origin is not None and not self._same_site(origin, parsed)):  # type: ignore[arg-type]
                await send({"type": "websocket.close", "code": 1008, "reason": "not this site"})
                return
            if not forwarded or guard is None:
                await self.app(scope, receive, send)
                return
            ticket = object()  # this websocket's place in its client's share of connections
            key = client_key(_peer(scope))
            admitted = guard.admit_forwarded(key, ticket)
            if admitted and not await guard.admit_shared(key, ticket):
                guard.release(ticket)
                admitted = False
            if not admitted:
                log.warning("turned away a websocket: its address holds all the connections it may")
                await send({"type": "websocket.close", "code": 1013, "reason": "too many connections"})
                return
            try:
                await self.app(scope, receive, send)
            finally:
                guard.release(ticket)
            return
        if not answered:
            # the person who runs the server learns how to add the name; the visitor, only where to go
            if parsed is None:
                log.warning("refused a request whose Host is not a name and port: %r", host[:60])
                await self._plain(send, 400, WEB_BAD_HOST)
                return
            log.warning("refused a request for the name %r: it is not one of the server's allowed hosts "
                        "(or not its port)", host[:60])
            await self._plain(send, 421, web_not_this_host(host))
            return
        # Every request counts against its client's message rate: a keep-alive connection's later
        # requests pass no connection limit, and a static file costs the server a thread's round trip.
        peer = _peer(scope)
        if guard is not None and peer is not None and not guard.allow_message(client_key(peer)):
            log.warning("refused a request: its address sends more than its message rate")
            await self._plain(send, 429, WEB_TOO_MANY_REQUESTS, close=True)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *((name, value) for name, value in self.headers if name not in present)]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _plain(self, send: Send, status: int, sentence: str, *, close: bool = False) -> None:
        body = sentence.encode()
        await send({"type": "http.response.start", "status": status, "headers": [
            *self.headers, (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()), *([(b"connection", b"close")] if close else [])]})
        await send({"type": "http.response.body", "body": body})

    def _answers(self, host: tuple[str, int | None], own_port: int | None) -> bool:
        """An allowed name, and no port or this server's (``own_port`` None: any port)."""
        if self.allowed is None:
            return True
        name, port = host
        return name in self.allowed and (port is None or own_port is None or port == own_port
                                         or port in self.ports)

    def _same_site(self, origin: str, host: tuple[str, int | None]) -> bool:
        """Browsers send Origin; programs (tests, benchmarks, robots) usually do not, and may connect.
        The Origin's name must be allowed (any: the Host's) and its port the Host's."""
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        parsed = parse_host(parts.netloc) if parts.scheme in DEFAULT_PORTS else None
        if parsed is None:
            return False
        name, port = parsed
        if port == DEFAULT_PORTS[parts.scheme]:
            port = None
        host_name, host_port = host
        if (port or None) != (None if host_port in (80, 443) else host_port):
            return False
        return name == host_name if self.allowed is None else name in self.allowed


DEFAULT_PORTS = {"http": 80, "https": 443}
# RFC 9110 §7.2: Host = uri-host [ ":" port ]; a name (letters, digits, '.', '-', '_') or an [IPv6 address]
_HOST = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9_][a-z0-9._-]*))(?::(?P<port>[0-9]{0,5}))?",
                   re.ASCII)


def parse_host(value: str) -> tuple[str, int | None] | None:
    """A ``Host`` header's name (lower case, no brackets or final dot) and port, or None if it is not one.

    >>> parse_host("LocalHost:8000"), parse_host("[::1]"), parse_host("example.org.")
    (('localhost', 8000), ('::1', None), ('example.org', None))
    >>> parse_host("localhost:@evil.example"), parse_host("a b"), parse_host("[::1"), parse_host("x:99999")
    (None, None, None, None)
    """
    found = _HOST.fullmatch(value.lower())
    if found is None:
        return None
    if found["v6"] is not None:
        try:
            ipaddress.IPv6Address(found["v6"])
        except ValueError:
            return None
    port = int(found["port"]) if found["port"] else None
    if port is not None and port > 65535:
        return None
    return (found["v6"] or found["name"].rstrip(".")), port


def _peer(scope: Scope) -> str | None:
    client = scope.get("client")
    return str(client[0]) if client else None


def _as_forwarded(scope: Scope, trusted: TrustedProxies) -> Scope:
    """The scope as its client sent it: the address and scheme the trusted proxy saw."""
    forwarded_for = [value.decode("latin-1") for name, value in scope["headers"] if name == b"x-forwarded-for"]
    client = trusted.client(_peer(scope), forwarded_for)
    changed = dict(scope, client=(client, 0))
    proto = [value.decode("latin-1").strip().lower() for name, value in scope["headers"]
             if name == b"x-forwarded-proto"]
    if proto and proto[-1] in ("http", "https"):
        secure = proto[-1] == "https"
        changed["scheme"] = ("wss" if secure else "ws") if scope["type"] == "websocket" else proto[-1]
    return changed


def _busy_response(headers: Mapping[str, str]) -> bytes:
    lines = ["HTTP/1.1 503 Service Unavailable", "Content-Type: text/plain; charset=utf-8", "Retry-After: 30",
             "Connection: close", *(f"{name}: {value}" for name, value in headers.items())]
    body = "Too many connections from your address; close some and try again.\n"
    return ("\r\n".join([*lines, f"Content-Length: {len(body)}", "", body])).encode("latin-1")


BUSY = _busy_response(SECURITY_HEADERS)  # written straight to the socket: no request was read


class GuardedHTTP(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with per-address connection limits, a deadline for each request's headers,
    and the guard's turnstile before a new connection's first request is read (a burst is served a few a turn)."""

    guard: Guard | None = None
    deadline: asyncio.TimerHandle | None = None
    entered = False  # the first request has passed the turnstile
    held: bytes | None = None  # what came before it did
    left: float | None = None  # and how long the client then had left to finish its request's headers

    def data_received(self, data: bytes) -> None:
        if self.held is not None:
            self.held += data
            return
        # Only a chunk with a line end can complete a request's headers: bytes before it are only buffered
        # (cheap), so a client sending a byte at a time neither waits here nor gains time by waiting.
        if not self.entered and self.guard is not None and b"\n" in data:
            self.entered = True
            if not self.guard.turnstile.enter(self._enter, self.guard.handshake_cost):
                self.held = data
                if self.deadline is not None:
                    self.left = self.deadline.when() - self.loop.time()
                self.transport.pause_reading()
                return
        super().data_received(data)

    def _enter(self) -> bool:
        """Its turn: read what was held (False: the connection closed while it waited)."""
        data, self.held = self.held, None
        if self.transport.is_closing() or data is None:
            return False
        self.transport.resume_reading()
        if self.left is not None:  # the deadline is for the client's slowness, not for the wait: it is moved on
            if self.deadline is not None:
                self.deadline.cancel()
            self.deadline = self.loop.call_later(max(self.left, 0.0), self._too_slow)
        super().data_received(data)
        return True

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        guard = self.app_state.get(GUARD)
        if not isinstance(guard, Guard):
            return  # an app without a guard: plain uvicorn
        peer = self.client[0] if self.client else None
        # a trusted proxy's connection carries many clients: they are counted by address in the Shield
        key, proxied = client_key(peer), peer in guard.trusted
        if not guard.admit(key, transport, per_address=not proxied):
            log.warning("turned away a connection: its address (or the server) holds all the connections it may")
            transport.write(BUSY)
            transport.close()
            return
        self.guard = guard
        self._arm()
        if not proxied:  # with limits shared by several processes: nothing is read until they agree
            guard.confirm(key, transport, self._refuse)

    def _refuse(self) -> None:
        log.warning("turned away a connection: its address holds all the connections it may on every process")
        if not self.transport.is_closing():
            self.transport.write(BUSY)
            self.transport.close()

    def _arm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        assert self.guard is not None
        self.deadline = self.loop.call_later(self.guard.limits.handshake_timeout, self._too_slow)

    def _too_slow(self) -> None:
        self.deadline = None
        # Still here (not handed to a websocket) and no whole request since connecting or the last response.
        if self.transport.get_protocol() is self and self.conn.their_state is h11.IDLE \
                and not self.transport.is_closing() and self.held is None:  # (waiting at the turnstile: not slow)
            log.info("closed a connection that did not finish its request's headers in time")
            self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.guard is not None and not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None
        if self.guard is not None:
            self.guard.release(self.transport)
        super().connection_lost(exc)


class StallGuard(_Protocol):
    """Mixed into any of uvicorn's websocket protocols: gives its connection's place back; cuts off a
    client that stopped reading."""

    stalled: asyncio.TimerHandle | None = None

    def _guard(self) -> Guard | None:
        guard = self.app_state.get(GUARD)
        return guard if isinstance(guard, Guard) else None

    def pause_writing(self) -> None:
        super().pause_writing()
        guard = self._guard()
        if guard is not None and self.stalled is None:
            self.stalled = self.loop.call_later(guard.limits.stall_timeout, self._cut_off)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self.stalled is not None:
            self.stalled.cancel()
            self.stalled = None

    def _cut_off(self) -> None:
        self.stalled = None
        log.warning("cut off a websocket whose client stopped reading")
        self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.stalled is not None:
            self.stalled.cancel()
            self.stalled = None
        guard = self._guard()
        if guard is not None:
            guard.release(self.transport)
        super().connection_lost(exc)


class GuardedWebSocket(StallGuard, WebSocketsSansIOProtocol):
    """uvicorn's websockets sans-I/O protocol (the websockets library parses and writes every frame) with
    the stall guard and budgets the library has no option for.

    Control frames (pings, pongs) count against the socket's message allowance and its address's: the
    library answers every ping itself, below the app's rate limits. Pongs the client does not read are
    bounded (``MAX_UNSENT_PONGS``); a message is at most ``MAX_FRAGMENTS`` frames; a socket is read at most
    ``READ_CHUNK`` bytes at a time, so the budgets stop the parser within a few frames of a flood; and once
    the server has sent its close, at most ``AFTER_CLOSE_BYTES`` more are read before the socket is closed.
    """

    # A closed socket's objects hold one another in cycles (the websockets parser's generator and its
    # protocol, the scope and this protocol): only a full garbage collection would free them, a pass over
    # every object the server holds, in which no player is served (95 ms of CPU after the idle and slowloris
    # attacks' 2,000 sockets closed). Cut once the connection and the app are both done with them, they are
    # freed at once, a socket at a time.
    lost = False  # the connection has gone
    app_running = False  # the app (its task) still has the socket
    control: _Allowance | None = None  # the socket's allowance of control frames
    unsent_pongs = 0  # pongs made while the client was not reading what the server writes
    after_close = 0  # bytes read since the server sent its close

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.lost = True
        if not self.app_running:
            self._untangle()

    def on_task_complete(self, task: asyncio.Task[None]) -> None:
        super().on_task_complete(task)
        self.app_running = False
        if self.lost:
            self._untangle()

    def _untangle(self) -> None:
        self.conn.parser = None  # type: ignore[assignment]
        scope = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"].clear()

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        if getattr(self, "scope", None) is not None:  # (none if the handshake was refused)
            self.app_running = True  # uvicorn started the app's task

    def data_received(self, data: bytes) -> None:
        if self.close_sent:
            self.after_close += len(data)
            if self.after_close > AFTER_CLOSE_BYTES:  # not a close reply: a client still sending after it
                log.info("closed a websocket that went on sending after the server's close")
                self.transport.abort()
                return
        for at in range(0, len(data), READ_CHUNK):
            if self.transport.is_closing():  # refused part-way: the rest is not parsed
                return
            super().data_received(data[at:at + READ_CHUNK])

    def handle_ping(self) -> None:
        if not self._control_allowed():
            return
        if not self.writable.is_set():  # the client is not reading: its pongs pile up in the server
            self.unsent_pongs += 1
            if self.unsent_pongs > MAX_UNSENT_PONGS:
                log.info("cut off a websocket that sent pings without reading the pongs")
                self.transport.abort()
                return
        super().handle_ping()

    def handle_pong(self, event: Frame) -> None:
        if self._control_allowed():
            super().handle_pong(event)

    def resume_writing(self) -> None:
        super().resume_writing()
        self.unsent_pongs = 0

    def handle_cont(self, event: Frame) -> None:
        if len(self.frames) >= MAX_FRAGMENTS:
            self.frames = []
            log.info("closed a websocket that sent a message in more than %d frames", MAX_FRAGMENTS)
            self._refuse(1009, "message too big")
            return
        super().handle_cont(event)

    def _control_allowed(self) -> bool:
        """Take a control frame from the socket's allowance and its address's; False (closed) when spent."""
        guard = self._guard()
        if guard is None:
            return True
        limits = guard.limits
        if self.control is None:
            self.control = _Allowance(limits.burst, self.loop.time())
        peer = self.client[0] if self.client else None
        if self.control.take(limits.rate, limits.burst, self.loop.time()) and (
                peer in guard.trusted or guard.allow_message(client_key(peer))):
            return True
        log.info("closed a websocket that sent control frames faster than its allowance")
        self.conn.data_to_send()  # the pongs the library made for the refused pings are dropped
        self._refuse(1008, "too many messages")
        return False

    def _refuse(self, code: int, reason: str) -> None:
        """Close now: the close frame if the client reads, and nothing more of what it sent is parsed."""
        if not self.close_sent and self.conn.state is State.OPEN:
            self.conn.send_close(code, reason)
            self.transport.write(b"".join(self.conn.data_to_send()))
            self.close_sent = True
            self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
        if self.writable.is_set():
            self.transport.close()  # (stops reading at once; the close frame is still written)
        else:
            self.transport.abort()

    def send_receive_event_to_app(self) -> None:
        """As uvicorn's, but a text message that is not UTF-8 closes the socket with 1007 (RFC 6455
        §8.1) quietly: uvicorn logs a traceback for it, and anyone can send one."""
        if self.curr_msg_data_type == "text" and not self.close_sent:
            try:
                b"".join(self.frames).decode()
            except UnicodeDecodeError:
                self.frames = []
                log.debug("a websocket sent text that is not UTF-8: closed with 1007")
                self.conn.send_close(1007)
                self.handle_parser_exception()
                return
        super().send_receive_event_to_app()


MAX_FRAGMENTS = 16  # frames one message may come in (browsers send each message as one)
MAX_UNSENT_PONGS = 8  # pongs made while the client reads nothing before it is cut off
READ_CHUNK = 512  # bytes handed to the parser at a time: ~70 frames at most before a budget can stop it
AFTER_CLOSE_BYTES = 4096  # read after the server's close (a close reply, messages already on their way)


class _Allowance:
    """A token bucket: ``burst`` at once, ``rate`` a second after that."""

    __slots__ = ("stamp", "tokens")

    def __init__(self, burst: float, now: float) -> None:
        self.tokens, self.stamp = burst, now

    def take(self, rate: float, burst: float, now: float) -> bool:
        self.tokens = min(burst, self.tokens + (now - self.stamp) * rate)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


# ``noughts web --ws NAME``: uvicorn's websocket implementations, each with the stall guard
WS_IMPLEMENTATIONS = {
    "websockets-sansio": "noughts.web.shield:GuardedWebSocket",
    "websockets": "noughts.web.shield:GuardedWebSocketsLegacy",
    "wsproto": "noughts.web.shield:GuardedWsproto",
}


def __getattr__(name: str) -> type:
    """The other implementations are made when asked for (wsproto need not be installed)."""
    if name == "GuardedWebSocketsLegacy":
        from uvicorn.protocols.websockets.websockets_impl import WebSocketProtocol

        return type(name, (StallGuard, WebSocketProtocol), {"__doc__": "uvicorn's websockets (legacy) protocol."})
    if name == "GuardedWsproto":
        from uvicorn.protocols.websockets.wsproto_impl import WSProtocol

        return type(name, (StallGuard, WSProtocol), {"__doc__": "uvicorn's wsproto protocol."})
    raise AttributeError(name)
