"""The web server's cheap paths keep every guarantee: uvicorn's three websocket implementations
serve the same game, quick computer players move on the event loop (slow ones on a thread), and
a choice the server cannot use is one clear line."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from typing import Any

import pytest
from websockets.sync.client import connect as ws_connect

from noughts.errors import NoughtsError
from noughts.match import Match
from noughts.web import running
from noughts.web.pace import Pace
from noughts.web.protocol import Limits
from noughts.web.server import check_implementations


def _until(ws: Any, kind: str) -> dict[str, Any]:
    while True:
        message = json.loads(ws.recv(timeout=10))
        if message["type"] == kind:
            return message


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore:The .websockets. implementation is deprecated")
@pytest.mark.parametrize("implementation", ["websockets-sansio", "websockets", "wsproto"])
def test_each_websocket_implementation_plays_a_game_and_is_guarded(implementation: str) -> None:
    from noughts.web import shield

    with running(scores=False, notify=lambda line: None, ws=implementation) as base, \
            ws_connect(base.replace("http", "ws") + "/ws", open_timeout=10) as ws:
        assert _until(ws, "welcome")["default_opponent"]
        ws.send(json.dumps({"type": "play_computer", "opponent": "parsons", "first": "me"}))
        assert _until(ws, "joined")["seat"] == 0
        assert _until(ws, "state")["moves"] == []
        ws.send('{"type":"move","cell":0,"game":1}')
        state = _until(ws, "state")
        assert state["moves"][0] == 0 and len(state["moves"]) == 2  # the move, and the computer's reply
        # the server's protocol for this socket has the stall guard mixed in
        assert issubclass(getattr(shield, shield.WS_IMPLEMENTATIONS[implementation].split(":")[1]), shield.StallGuard)


def test_a_quick_player_moves_on_the_event_loop_and_a_slow_one_goes_back_to_a_thread() -> None:
    pace = Pace()
    match = Match("perfect", names=["Ann"], first="computer", seed=1)
    match.new_game()
    job = match.computer_job()
    assert job is not None
    job.run()  # the player's first move loads its tables (ms of CPU, not quick): done before Pace watches
    for tried in range(Pace.TRIES):
        assert not pace.quick(job), tried  # not until it has shown itself quick TRIES times in a row
        assert match.board[pace.run(job)] is None
    assert pace.quick(job)

    class Slow:
        player, board = job.player, job.board

        def run(self) -> int:
            started = time.thread_time()
            while time.thread_time() - started < 2 * Pace.SLOW_S:  # CPU, not sleep: Pace counts CPU time
                pass
            return 4

    slow_job: Any = Slow()
    pace.run(slow_job)
    assert not pace.quick(job)  # one slow move sends the pair back to the thread


@pytest.mark.parametrize(("loop", "ws", "said"), [
    ("tokio", "websockets-sansio", "the event loop is one of auto, asyncio, uvloop, not 'tokio'"),
    ("auto", "h2", "the websocket implementation is one of websockets-sansio, websockets, wsproto, not 'h2'"),
])
def test_an_implementation_the_server_cannot_use_is_one_clear_line(loop: str, ws: str, said: str) -> None:
    with pytest.raises(NoughtsError, match=said):
        check_implementations(loop, ws)


# messages to the socket ---------------------------------------------------------------------------
class _Socket:
    """A websocket as Starlette's: messages go out through ``send_text``, which can be held (the client's
    buffer full). Its scope offers the direct frame write that the server's own protocol once offered."""

    def __init__(self) -> None:
        self.wire: list[str] = []  # what reached the client, in order
        self.held = asyncio.Event()
        self.held.set()
        self.framed: list[bytes] = []  # what the old direct path would have written past the library
        self.scope = {"extensions": {"noughts.write_frame": self.write_frame}}

    def write_frame(self, frame: bytes) -> bool:
        self.framed.append(frame)
        return True  # taken

    async def send_text(self, text: str) -> None:
        await self.held.wait()
        self.wire.append(text)

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        pass


def test_every_message_goes_out_through_the_websocket_s_send_never_past_it() -> None:
    """The frames are written by the websockets library (its checks, its budgets), whatever the scope offers."""
    from noughts.web.connection import Connection
    from noughts.web.protocol import Limits

    async def scenario() -> tuple[list[str], list[bytes]]:
        ws = _Socket()
        conn = Connection(ws, Limits())  # type: ignore[arg-type]
        conn.push("a")
        conn.push_all(("b", "c"))
        await conn.finish()
        return ws.wire, ws.framed

    assert asyncio.run(scenario()) == (["a", "b", "c"], [])


def test_messages_queued_behind_a_slow_send_go_out_in_order_with_only_the_newest_unsent_state() -> None:
    from noughts.web.connection import Connection
    from noughts.web.protocol import Limits

    def state(version: int) -> str:
        return json.dumps({"type": "state", "version": version}, separators=(",", ":"))

    async def scenario() -> list[str]:
        ws = _Socket()
        ws.held.clear()  # the client's buffer is full: the first send waits
        conn = Connection(ws, Limits())  # type: ignore[arg-type]
        conn.seat = 0
        conn.push(state(1))
        await asyncio.sleep(0)  # the writer takes it and waits on the socket
        conn.push(state(2))
        conn.push(state(3))  # replaces 2, not sent yet
        conn.push("told")
        conn.push(state(4))  # a message between: 3 stays, it is not the last
        conn.push_all(("recorded", "scores"))
        conn.push(state(5))
        conn.push(state(6))
        assert ws.wire == [] and conn.pending == 6
        ws.held.set()
        await conn.finish()
        return ws.wire

    assert asyncio.run(scenario()) == [state(1), state(3), "told", state(4), "recorded", "scores", state(6)]


def _masked(payload: bytes, opcode: int = 0x1, fin: bool = True, mask: bytes = b"\x0f\xa0\x5a\xc3") -> bytes:
    from websockets.utils import apply_mask

    size = len(payload)
    head = bytes((0x80 * fin | opcode,)) + (bytes((0x80 | size,)) if size < 126 else
                                             bytes((0x80 | 126,)) + size.to_bytes(2, "big"))
    return head + mask + apply_mask(payload, mask)


class _Raw:
    """A websocket client on a bare socket: frames are written exactly as the test builds them."""

    def __init__(self, base: str, receive_buffer: int | None = None) -> None:
        """``receive_buffer``: a socket that takes in little (the server's writes back up when it does not read)."""
        import socket

        host, port = base.split("//")[1].split(":")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.settimeout(10)
        self.sock.connect((host, int(port)))
        self.sock.sendall(f"GET /ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(65536)
        self.buffer = self.buffer.split(b"\r\n\r\n", 1)[1]

    def frame(self) -> tuple[int, bytes]:
        """The next frame from the server: its opcode and payload."""
        while True:
            if len(self.buffer) >= 2:
                size, at = self.buffer[1] & 0x7F, 2
                if size == 126 and len(self.buffer) >= 4:
                    size, at = int.from_bytes(self.buffer[2:4], "big"), 4
                if len(self.buffer) >= at + size:
                    opcode, payload = self.buffer[0] & 0x0F, self.buffer[at:at + size]
                    self.buffer = self.buffer[at + size:]
                    return opcode, payload
            chunk = self.sock.recv(65536)
            if not chunk:
                return -1, b""
            self.buffer += chunk

    def message(self) -> dict[str, Any]:
        while True:
            opcode, payload = self.frame()
            if opcode == 0x1:
                return dict(json.loads(payload))
            assert opcode == 0xA, (opcode, payload)  # only pongs besides texts

    def closed_with(self) -> int:
        while True:
            opcode, payload = self.frame()
            if opcode in (0x8, -1):
                return int.from_bytes(payload[:2], "big") if payload else -1


def test_frames_of_every_shape_are_read_with_the_websockets_library_s_checks(
        capfd: pytest.CaptureFixture[str]) -> None:
    ping = b'{"type":"ping","id":"a"}'
    padded = b'{"type":"ping","id":"b"' + b" " * 300 + b"}"  # a 16-bit length
    with running(scores=False, notify=lambda line: None) as base:
        raw = _Raw(base)
        assert raw.message()["type"] == "welcome"
        assert raw.message()["type"] == "scores"
        raw.sock.sendall(_masked(ping) + _masked(padded))  # two frames in one read: both taken, in order
        assert [raw.message().get("id") for _ in range(2)] == ["a", "b"]
        whole = _masked(ping.replace(b'"a"', b'"c"'))
        raw.sock.sendall(whole[:5])  # part of a frame: left to websockets, which waits for the rest
        time.sleep(0.2)
        raw.sock.sendall(whole[5:])
        assert raw.message()["id"] == "c"
        raw.sock.sendall(_masked(b"hi", opcode=0x9) + _masked(ping.replace(b'"a"', b'"d"')))  # a ping first
        assert raw.message()["id"] == "d"
        raw.sock.sendall(_masked(b"not json", fin=False))  # a fragment: websockets joins the message
        raw.sock.sendall(_masked(b"", opcode=0x0))
        assert raw.message()["code"] == "bad_json"
        raw.sock.sendall(_masked(b'{"type":"ping"}\xff'))  # not UTF-8: closed as the RFC says
        assert raw.closed_with() == 1007
        raw.sock.close()
        # The rest of a frame is never read as frames of its own, even when it looks like one
        # (here its payload, masked with zeros, is a whole ping frame; it is not UTF-8 text).
        inner = _masked(ping)
        outer = _masked(inner, mask=bytes(4))
        raw = _Raw(base)
        raw.message(), raw.message()
        raw.sock.sendall(outer[:6])
        time.sleep(0.2)
        raw.sock.sendall(outer[6:])
        assert raw.closed_with() == 1007
        raw.sock.close()
        unmasked = b"\0\0\0\0" + ping  # read as masked, its first bytes would be a mask of zeros
        for frame, code in [(bytes((0x81, len(unmasked))) + unmasked + b"    ", 1002),  # not masked
                            (b"\x81\xff" + (too_big := Limits().max_frame_bytes + 1).to_bytes(8, "big")
                             + b"\0" * (too_big + 4), 1009)]:  # over the frame limit
            raw = _Raw(base)
            raw.message(), raw.message()
            raw.sock.sendall(frame)
            assert raw.closed_with() == code
            raw.sock.close()
    # text that is not UTF-8 is closed with no traceback in the log
    assert "Traceback" not in capfd.readouterr().err


def _connections(base: str) -> int:
    with urllib.request.urlopen(base + "/healthz", timeout=10) as reply:
        return int(json.load(reply)["connections"])


def test_pongs_are_handed_over_once_and_a_control_frame_too_long_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts.web import shield

    pongs = []
    handle_pong = shield.GuardedWebSocket.handle_pong

    def pong(self: shield.GuardedWebSocket, event: Any) -> None:
        pongs.append(bytes(event.data))
        handle_pong(self, event)

    monkeypatch.setattr(shield.GuardedWebSocket, "handle_pong", pong)
    with running(scores=False, notify=lambda line: None) as base:
        raw = _Raw(base)
        raw.message(), raw.message()
        ping = _masked(b'{"type":"ping","id":"after"}')
        raw.sock.sendall(_masked(b"\x01\x02\x03\x04", opcode=0xA) + ping)  # a pong, then a text: one read
        assert raw.message()["id"] == "after"
        raw.sock.sendall(_masked(b"x" * 126, opcode=0xA))  # too long for a control frame: websockets says so
        assert raw.closed_with() == 1002
        raw.sock.close()
    assert pongs == [b"\x01\x02\x03\x04"]  # unmasked, and handed over once
