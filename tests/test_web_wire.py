"""The websocket wire under cheap attacks (issue 30): control frames and fragments within budgets, a
socket closed for flooding no longer read, Host and Origin checked port and all, and the uvicorn and
websockets internals the server's protocol relies on still shaped as it expects."""

from __future__ import annotations

import contextlib
import inspect
import json
import socket
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.frames import Frame

from noughts import text
from noughts.web import running, shield
from noughts.web.protocol import Limits
from test_web_fast_paths import _masked, _Raw

PING_125 = bytes(range(125))  # the longest a control frame may carry


def _connections(base: str) -> int:
    with urllib.request.urlopen(base + "/healthz", timeout=10) as reply:
        return int(json.load(reply)["connections"])


def _until_gone(base: str) -> int:
    """The server's open websockets once the one under attack is gone (or 10 s have passed)."""
    deadline = time.monotonic() + 10
    while _connections(base) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _connections(base)


def _flood(raw: _Raw, frame: bytes, most: int) -> int:
    """Send ``frame`` over and over, reading nothing, until the server cuts the socket off or
    ``most`` bytes have gone; the bytes sent."""
    raw.sock.settimeout(5)
    chunk, sent = frame * max(1, 65536 // len(frame)), 0
    try:
        while sent < most:
            raw.sock.sendall(chunk)
            sent += len(chunk)
    except OSError:  # reset, broken pipe, or the server stopped reading (timeout)
        pass
    return sent


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """How many frames the websockets parser has parsed, and pongs the server has written, from now on."""
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    counts = {"frames": 0, "pongs": 0}
    parse = Frame.parse.__func__  # type: ignore[attr-defined]

    def counting_parse(cls: type[Frame], *args: Any, **kwargs: Any) -> Any:
        counts["frames"] += 1
        return (yield from parse(cls, *args, **kwargs))

    handle_ping = WebSocketsSansIOProtocol.handle_ping

    def counting_ping(self: WebSocketsSansIOProtocol) -> None:
        counts["pongs"] += 1
        handle_ping(self)

    monkeypatch.setattr(Frame, "parse", classmethod(counting_parse))
    monkeypatch.setattr(WebSocketsSansIOProtocol, "handle_ping", counting_ping)
    yield counts


def test_a_ping_flood_counts_against_the_socket_s_allowance_and_is_closed(counted: dict[str, int]) -> None:
    limits = Limits()
    with running(scores=False, notify=lambda line: None, limits=limits) as base:
        raw = _Raw(base)
        raw.message(), raw.message()
        sent = _flood(raw, _masked(PING_125, opcode=0x9), 8 << 20)
        assert _until_gone(base) == 0
        raw.sock.close()
        honest = _Raw(base)  # others are served as ever
        assert honest.message()["type"] == "welcome"
        honest.sock.close()
    assert sent < 8 << 20  # cut off, not read to the end
    # the pongs answered: the allowance's burst (and what it refilled meanwhile), not one for each ping
    assert counted["pongs"] <= limits.burst + 10


def test_pongs_a_client_does_not_read_are_bounded(counted: dict[str, int]) -> None:
    # an allowance so large only the bound on unread pongs can stop the flood
    limits = Limits(rate=1e9, burst=1e9, address_rate=1e9, address_burst=10**9)
    with running(scores=False, notify=lambda line: None, limits=limits) as base:
        raw = _Raw(base, receive_buffer=4096)
        raw.message()
        sent = _flood(raw, _masked(PING_125, opcode=0x9), 64 << 20)
        assert _until_gone(base) == 0
        raw.sock.close()
    assert sent < 64 << 20
    # what the socket buffers held, and then a few: the pongs made once the server could not write stop
    pong = 2 + len(PING_125)
    assert counted["pongs"] * pong < 16 << 20


def test_a_message_in_thousands_of_fragments_is_refused_after_a_few_frames(counted: dict[str, int]) -> None:
    with running(scores=False, notify=lambda line: None) as base:
        raw = _Raw(base)
        raw.message(), raw.message()
        before = counted["frames"]
        fragments = _masked(b"{", fin=False) + _masked(b" ", opcode=0x0, fin=False) * 65_000
        raw.sock.settimeout(5)
        with contextlib.suppress(OSError):
            raw.sock.sendall(fragments)
        assert raw.closed_with() in (1009, -1)
        raw.sock.close()
        parsed = counted["frames"] - before
    # a message's frames are counted as they come: the parser stops within a read chunk of the limit
    assert parsed <= shield.MAX_FRAGMENTS + shield.READ_CHUNK // 6 + 1


def test_a_socket_closed_for_flooding_is_not_read_any_more(monkeypatch: pytest.MonkeyPatch) -> None:
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    after_close = [0]  # bytes handed to the parser once the server had sent its close
    data_received = WebSocketsSansIOProtocol.data_received

    def counting(self: WebSocketsSansIOProtocol, data: bytes) -> None:
        if self.close_sent:
            after_close[0] += len(data)
        data_received(self, data)

    monkeypatch.setattr(WebSocketsSansIOProtocol, "data_received", counting)
    limits = Limits(rate=1.0, burst=1.0, flood_close=5)
    with running(scores=False, notify=lambda line: None, limits=limits) as base:
        raw = _Raw(base)
        raw.message(), raw.message()
        sent = _flood(raw, _masked(b'{"type":"ping"}'), 16 << 20)
        assert _until_gone(base) == 0
        raw.sock.close()
    assert sent < 16 << 20
    assert after_close[0] <= shield.AFTER_CLOSE_BYTES + 65536  # a read or two, not the flood


def _get(base: str, host: str, path: str = "/r/K7M2QXAB9CDE/qr.svg") -> tuple[int, bytes]:
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def test_a_host_that_is_not_a_name_and_port_is_refused_and_never_reaches_a_link() -> None:
    with running(scores=False, notify=lambda line: None) as base:
        port = base.rsplit(":", 1)[1]
        for hostile in ("localhost:@evil.example", "localhost:80@evil.example", "localhost:x", "local host",
                        "[::1", "localhost:99999", "localhost:8000:1"):
            status, body = _get(base, hostile)
            assert status == 400, hostile
            assert body.decode() == text.WEB_BAD_HOST and b"evil" not in body
        assert _get(base, f"localhost:{port}")[0] == 200
        assert _get(base, "localhost")[0] == 200  # no port: the client's default one, through a forwarded port
        assert _get(base, f"[::1]:{port}")[0] == 200


def test_a_host_naming_another_port_is_refused() -> None:
    with running(scores=False, notify=lambda line: None) as base:
        port = int(base.rsplit(":", 1)[1])
        status, body = _get(base, f"localhost:{port + 1}")
        assert status == 421 and body.decode() == text.web_not_this_host(f"localhost:{port + 1}")


def _handshake(base: str, origin: str) -> bytes:
    host, port = base.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"GET /ws HTTP/1.1\r\nHost: {host}:{port}\r\nOrigin: {origin}\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                     "Sec-WebSocket-Version: 13\r\n\r\n".encode())
        reply = b""
        while b"\r\n\r\n" not in reply and (chunk := sock.recv(65536)):
            reply += chunk
    return reply.split(b"\r\n", 1)[0]


def test_a_websocket_from_a_page_on_another_port_is_refused() -> None:
    with running(scores=False, notify=lambda line: None) as base:
        port = int(base.rsplit(":", 1)[1])
        assert b" 101 " in _handshake(base, f"http://127.0.0.1:{port}")
        assert b" 403 " in _handshake(base, f"http://127.0.0.1:{port + 1}")  # another program on this machine
        assert b" 403 " in _handshake(base, "http://127.0.0.1")
        assert b" 403 " in _handshake(base, f"http://127.0.0.1:{port}@evil.example")


def test_the_uvicorn_and_websockets_internals_the_protocols_use_are_as_expected() -> None:
    """shield's protocols subclass uvicorn's and call into websockets: if either changes what they use,
    this fails (pyproject bounds both to the versions tested; see docs/web-protocol.md)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    from websockets.protocol import Protocol, State
    from websockets.server import ServerProtocol

    def takes(cls: type, method: str, *names: str) -> None:
        assert list(inspect.signature(getattr(cls, method)).parameters) == ["self", *names], (cls, method)

    for method, names in [("data_received", ("data",)), ("handle_ping", ()), ("handle_pong", ("event",)),
                          ("handle_cont", ("event",)), ("handle_connect", ("event",)),
                          ("send_receive_event_to_app", ()), ("handle_parser_exception", ()),
                          ("on_task_complete", ("task",)), ("connection_lost", ("exc",)),
                          ("pause_writing", ()), ("resume_writing", ())]:
        takes(WebSocketsSansIOProtocol, method, *names)
    for method, names in [("data_received", ("data",)), ("connection_made", ("transport",)),
                          ("on_response_complete", ()), ("connection_lost", ("exc",))]:
        takes(H11Protocol, method, *names)
    takes(ServerProtocol, "send_close", "code", "reason")
    takes(ServerProtocol, "data_to_send")
    # the attributes they read and set, as uvicorn's constructor and connection_made make them
    source = inspect.getsource(WebSocketsSansIOProtocol.__init__)
    for attribute in ("self.conn", "self.queue", "self.frames", "self.close_sent", "self.writable",
                      "self.app_state", "self.loop", "self.client", "self.curr_msg_data_type"):
        assert attribute + " " in source or attribute + ":" in source, attribute
    assert "self.parser" in inspect.getsource(Protocol.__init__) and issubclass(ServerProtocol, Protocol)
    assert {"OPEN", "CLOSING"} <= set(State.__members__)
    for attribute in ("self.conn", "self.app_state", "self.transport", "self.loop", "self.client"):
        assert attribute in inspect.getsource(H11Protocol), attribute
    import h11

    assert isinstance(h11.Connection.their_state, property) and h11.IDLE


def test_a_host_naming_the_public_urls_port_is_answered() -> None:
    """Behind a proxy on another port (``--public-url http://NAME:9000/``) the browser's Host names
    the proxy's port: the server answers it, and still refuses any other port."""
    from noughts.web.app import create_app

    app = create_app(scores=False, notify=lambda line: None, allowed_hosts=["localhost", "127.0.0.1"],
                     public_url="http://localhost:9000/")
    with running(app) as base:
        port = int(base.rsplit(":", 1)[1])
        assert _get(base, "localhost:9000")[0] == 200
        assert _get(base, f"localhost:{port + 1}")[0] == 421


def test_http_requests_count_against_the_address_s_message_rate() -> None:
    """Requests on one keep-alive connection pass no connection limit: each counts against its
    address's message allowance, and past it the answer is 429 and the connection is closed."""
    limits = Limits(address_rate=0.01, address_burst=3)
    with running(scores=False, notify=lambda line: None, limits=limits) as base:
        port = int(base.rsplit(":", 1)[1])
        statuses, reply = [], b""
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            for _ in range(6):
                sock.sendall(b"GET /static/style.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                reply = b""
                while b"\r\n\r\n" not in reply or len(reply.partition(b"\r\n\r\n")[2]) < _length(reply):
                    if not (chunk := sock.recv(65536)):
                        break
                    reply += chunk
                statuses.append(int(reply.split()[1]))
                if b"connection: close" in reply.partition(b"\r\n\r\n")[0].lower():
                    assert sock.recv(65536) == b""  # and the server has closed it
                    break
    assert statuses == [200, 200, 200, 429], statuses
    assert text.WEB_TOO_MANY_REQUESTS.encode() in reply


def _length(reply: bytes) -> int:
    head = reply.partition(b"\r\n\r\n")[0].lower()
    return next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.startswith(b"content-length:")), 0)
