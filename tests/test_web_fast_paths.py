"""The web server's cheap paths keep every guarantee: uvicorn's three websocket implementations
serve the same game, quick computer players move on the event loop (slow ones on a thread), and
a choice the server cannot use is one clear line."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from websockets.sync.client import connect as ws_connect

from noughts.errors import NoughtsError
from noughts.match import Match
from noughts.web import running
from noughts.web.connection import DIRECT_SEND
from noughts.web.pace import Pace
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
    ("tokio", "websockets-sansio", "--loop is one of auto, asyncio, uvloop"),
    ("auto", "h2", "--ws is one of websockets-sansio, websockets, wsproto"),
])
def test_an_implementation_the_server_cannot_use_is_one_clear_line(loop: str, ws: str, said: str) -> None:
    with pytest.raises(NoughtsError, match=said):
        check_implementations(loop, ws)


# messages straight to the socket ------------------------------------------------------------------
@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_a_text_frame_built_by_hand_is_what_a_websocket_library_reads(size: int) -> None:
    from websockets.frames import Frame, Opcode
    from websockets.streams import StreamReader

    from noughts.web.connection import text_frame

    text = ("é" * size)[:size] if size % 2 else "x" * size  # multi-byte UTF-8 too: the length is in bytes
    frame = text_frame(text)
    assert text_frame(text) is frame  # the same text (a room's state, for each socket): framed once
    reader = StreamReader()
    reader.feed_data(frame)
    reader.feed_eof()
    parser = Frame.parse(reader.read_exact, mask=False, max_size=None)
    try:
        next(parser)
    except StopIteration as done:
        parsed = done.value
    assert parsed.opcode is Opcode.TEXT and parsed.fin and parsed.data.decode() == text


class _Socket:
    """A websocket whose direct write can be refused (its buffer full) and whose ASGI send can be held."""

    def __init__(self) -> None:
        self.wire: list[str] = []  # what reached the client, in order
        self.room = True  # the socket's buffer has room: direct writes are taken
        self.held = asyncio.Event()
        self.held.set()
        self.scope = {"extensions": {DIRECT_SEND: self.write_frame}}

    def write_frame(self, frame: bytes) -> bool:
        if not self.room:
            return False
        self.wire.append(frame[2:].decode())  # (short test texts: a two-byte header)
        return True

    async def send_text(self, text: str) -> None:
        await self.held.wait()
        self.wire.append(text)

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        pass


def test_messages_go_straight_to_the_socket_until_its_buffer_fills_then_queue_in_order() -> None:
    from noughts.web.connection import Connection
    from noughts.web.protocol import Limits

    async def scenario() -> list[str]:
        ws = _Socket()
        conn = Connection(ws, Limits())  # type: ignore[arg-type]
        conn.seat = 0
        conn.push("a")  # written at once: no task, no ASGI send
        assert ws.wire == ["a"] and conn.pending == 0
        ws.room, ws.held = False, asyncio.Event()  # the buffer is full: sends wait for it
        conn.push("b")
        await asyncio.sleep(0)  # the writer takes b and waits on the socket
        ws.room = True  # room again for direct writes, but b is not sent yet: c must not overtake it
        conn.push("c")
        conn.push("d")
        assert ws.wire == ["a"]
        ws.held.set()
        for _ in range(10):
            await asyncio.sleep(0)
        conn.push("e")  # nothing queued any more: straight to the socket again
        await conn.finish()
        return ws.wire

    assert asyncio.run(scenario()) == ["a", "b", "c", "d", "e"]


def test_the_server_writes_a_game_s_messages_straight_to_the_socket() -> None:
    from noughts.web import shield

    direct = []
    write_frame = shield.GuardedWebSocket.write_frame

    def counted(self: shield.GuardedWebSocket, frame: bytes) -> bool:
        written = write_frame(self, frame)
        direct.append(written)
        return written

    shield.GuardedWebSocket.write_frame = counted  # type: ignore[method-assign]
    try:
        with running(scores=False, notify=lambda line: None) as base, \
                ws_connect(base.replace("http", "ws") + "/ws", open_timeout=10) as ws:
            assert _until(ws, "welcome")
            ws.send(json.dumps({"type": "play_computer", "opponent": "easy", "first": "me"}))
            assert _until(ws, "state")["moves"] == []
            ws.send('{"type":"move","cell":4,"game":1}')
            assert _until(ws, "state")["moves"][0] == 4
    finally:
        shield.GuardedWebSocket.write_frame = write_frame  # type: ignore[method-assign]
    assert len(direct) >= 5 and all(direct)  # welcome, scores, joined, two states
