"""The web server's cheap paths keep every guarantee: uvicorn's three websocket implementations
serve the same game, quick computer players move on the event loop (slow ones on a thread), and
a choice the server cannot use is one clear line."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from websockets.sync.client import connect as ws_connect

from noughts.errors import NoughtsError
from noughts.match import Match
from noughts.web import running
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
