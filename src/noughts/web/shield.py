"""The server's outer wall: names it answers to, headers on every response, and connections below HTTP.

:class:`Shield` is ASGI middleware: a request for a host name the server was not configured
with (DNS rebinding: a hostile name resolving to 127.0.0.1) gets 421, a websocket from another
site's page is refused, and every response, 404s and ``/healthz`` included, carries the security
headers. :class:`GuardedHTTP` and :class:`GuardedWebSocket` are uvicorn's own protocols with the
:class:`~noughts.web.guard.Guard` in front: a connection over its address's (or the server's)
limit is answered 503 at once, a request's headers must all arrive within ``handshake_timeout``
(a client sending them a byte at a time is cut off), and a client that leaves the server unable
to write for ``stall_timeout`` is cut off. The app's lifespan hands them the guard (``app_state``).
"""

from __future__ import annotations

import logging
from collections.abc import Container, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State

try:
    from websockets.speedups import apply_mask
except ImportError:  # websockets built without its C part
    from websockets.utils import apply_mask

if TYPE_CHECKING:
    _Protocol = WebSocketsSansIOProtocol
else:
    _Protocol = object

from noughts.text import web_not_this_host
from noughts.web.connection import DIRECT_RECEIVE, DIRECT_SEND, Inbox
from noughts.web.guard import Guard, TrustedProxies, client_key, host_allowed

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
                 guard: Guard | None = None) -> None:
        self.app = app
        self.allowed = allowed
        self.guard = guard
        self.headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        fields = {name: value.decode("latin-1") for name, value in scope["headers"] if name in (b"host", b"origin")}
        host = fields.get(b"host", "")
        guard = self.guard
        forwarded = guard is not None and bool(guard.trusted) and _peer(scope) in guard.trusted
        if forwarded:
            scope = _as_forwarded(scope, guard.trusted)  # type: ignore[union-attr]
        if scope["type"] == "websocket":
            origin = fields.get(b"origin")
            if not host_allowed(host, self.allowed) or (origin is not None and not self._same_site(origin, host)):
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
        if not host_allowed(host, self.allowed):
            # the person who runs the server learns how to add the name; the visitor, only where to go
            log.warning("refused a request for the name %r: it is not one of the server's allowed hosts",
                        host[:60])
            body = web_not_this_host(host).encode()
            await send({"type": "http.response.start", "status": 421, "headers": [
                *self.headers, (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *((name, value) for name, value in self.headers if name not in present)]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _same_site(self, origin: str, host: str) -> bool:
        """Browsers send Origin; programs (tests, benchmarks, robots) usually do not, and may connect."""
        netloc = urlsplit(origin).netloc.lower()
        if self.allowed is None:
            return netloc == host.lower()
        return host_allowed(netloc, self.allowed)


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
    """uvicorn's websockets sans-I/O protocol with the stall guard (the default: the cheapest a message).

    It also offers the app two short cuts past the ASGI layers: :meth:`write_frame` (scope extension
    ``noughts.write_frame``), a frame written straight to the socket whenever that is allowed, and
    :meth:`open_inbox` (``noughts.open_inbox``), the socket's received events handed straight to the
    app's reader (:class:`~noughts.web.connection.Inbox`) instead of through uvicorn's queue and the
    ASGI receive. And what clients send most, whole short text frames (and the pongs answering the
    keepalive pings), is read here (:meth:`_take_texts`) rather than by the websockets library's
    general parser; anything else still goes to it, unchanged.
    """

    inbox: Inbox | None = None
    # A closed socket's objects hold one another in cycles (the websockets parser's generator and its
    # protocol, the scope's short cuts and this protocol, the inbox and this protocol): only a full garbage
    # collection would free them, a pass over every object the server holds, in which no player is served
    # (95 ms of CPU after the idle and slowloris attacks' 2,000 sockets closed). Cut once the connection and
    # the app are both done with them, they are freed at once, a socket at a time.
    lost = False  # the connection has gone
    app_running = False  # the app (its task) still has the socket
    # uvicorn pings every socket every ``ws_ping_interval`` to find dead ones; a socket that sent something
    # since the last ping is alive, so it is not pinged (a ping and its pong cost ~100 µs of CPU: at players'
    # pace, a tenth of all the server's work). Silent sockets (spectators, idle pages) are pinged as before.
    heard = False  # the client sent something since the last keepalive ping was due

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
        if self.inbox is not None:
            self.inbox.resume = _nothing

    def open_inbox(self) -> Inbox:
        """From now on the app reads this socket's events from the returned inbox (events already
        queued for it come first)."""
        if self.inbox is not None:
            return self.inbox
        inbox = Inbox(self._read_again)
        while not self.queue.empty():
            inbox.put_nowait(dict(self.queue.get_nowait()))
        self.queue = inbox  # type: ignore[assignment]  # uvicorn puts every event it makes here
        self.inbox = inbox
        return inbox

    def _read_again(self) -> None:
        """The app has taken every event: read from the socket again if reading was paused for it."""
        if self.read_paused:
            self.read_paused = False
            self.transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        if not self._take_texts(data):
            self.heard = True
            super().data_received(data)

    def send_keepalive_ping(self) -> None:
        """uvicorn's keepalive ping, unless the client sent something since the last one was due."""
        if self.heard and self.ping_interval is not None and not self.close_sent:
            self.heard = False
            self.ping_timer = self.loop.call_later(self.ping_interval, self.send_keepalive_ping)
            return
        self.heard = False
        super().send_keepalive_ping()

    def _take_texts(self, data: bytes) -> bool:
        """If ``data`` is only whole, masked, final text frames of valid UTF-8 within the size limit
        (and pongs), with nothing else pending, queue their texts for the app as uvicorn does, answer
        the pongs as uvicorn does, and say True.

        Otherwise (another control frame, a fragment, part of a frame, binary, too big, bad UTF-8, the
        connection not open, anything buffered) take nothing and say False: uvicorn and websockets
        then read ``data`` as always, with all their checks and answers.
        """
        conn = self.conn
        if not self.handshake_complete or self.close_sent or self.frames or conn.state is not State.OPEN \
                or conn.reader.buffer or conn.current_size is not None:
            return False
        # websockets' parser must be between frames (waiting for the next), not part-way through one whose
        # header it has read: only then does ``data`` begin with a frame. If its shape is not the one
        # known here, say no (slower, never wrong).
        waiting = conn.parser
        for _ in range(4):  # (the server's parser, the frames' parser, the wait for data)
            inner = getattr(waiting, "gi_yieldfrom", None)
            if inner is None:
                break
            waiting = inner
        if getattr(waiting, "__name__", None) != "at_eof":
            return False
        limit = conn.max_message_size
        texts: list[str | bytes] = []  # a text, or a pong's payload
        at, end = 0, len(data)
        while at < end:
            first = data[at]
            if end - at < 6 or (first != 0x81 and first != 0x8A) or data[at + 1] < 0x80:  # FIN, no RSV; masked
                return False
            size, head = data[at + 1] & 0x7F, at + 2
            if first == 0x8A:  # a pong: a control frame's payload is at most 125 bytes, in one frame
                if size > 125:
                    return False
            elif size == 126:
                size, head = int.from_bytes(data[head:head + 2], "big"), head + 2
            elif size == 127:
                return False
            start = head + 4
            if (limit is not None and size > limit) or start + size > end:
                return False
            payload = apply_mask(data[start:start + size], data[head:start])
            if first == 0x8A:
                texts.append(payload)
            else:
                try:
                    texts.append(payload.decode())
                except UnicodeDecodeError:
                    return False
            at = start + size
        inbox = self.inbox
        taken_at_once = inbox is not None and inbox.waiting  # its reader takes these now: reading goes on
        queued = False
        for text in texts:
            if isinstance(text, str):
                self.queue.put_nowait({"type": "websocket.receive", "text": text})
                queued = self.heard = True  # (a pong alone does not count: the next ping is still sent)
            else:
                self.handle_pong(Frame(Opcode.PONG, text))
        if queued and not taken_at_once and not self.read_paused:  # as uvicorn does: the next read waits
            self.read_paused = True                                 # until the app has taken these
            self.transport.pause_reading()
        return True

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

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # (none if the handshake was refused)
        if scope is not None:
            self.app_running = True  # uvicorn started the app's task
            scope["extensions"][DIRECT_SEND] = self.write_frame
            scope["extensions"][DIRECT_RECEIVE] = self.open_inbox

    def write_frame(self, frame: bytes) -> bool:
        """Write a whole server frame now; False (nothing written) unless the websocket is open and the
        socket's buffer has room: then the ASGI send, which waits for it, must be used."""
        if not self.handshake_complete or self.close_sent or not self.writable.is_set() \
                or self.conn.state is not State.OPEN or self.transport.is_closing():
            return False
        self.transport.write(frame)
        return True


def _nothing() -> None:
    pass


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
