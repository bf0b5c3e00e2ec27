"""Spectators churning: the hub shows a room the number watching at most every ``presence_every``
seconds however often spectators come and go, and a player coming or going at once. What this
buys honest players is measured at full size by ``benchmarks/web_attacks.py``; here, the mechanism.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from noughts.web.hub import Hub
from noughts.web.rooms import MemoryRoomStore, Room


class Watcher:
    """What the hub asks of a connection: where it is, and a place to push messages."""

    def __init__(self, seat: int | None = None) -> None:
        self.room: str | None = None
        self.seat = seat
        self.shown: Any = None
        self.sent: list[str] = []

    def push(self, text: str) -> None:
        self.sent.append(text)


def test_spectators_coming_and_going_show_the_room_their_number_once_per_interval_players_at_once() -> None:
    async def scenario() -> tuple[list[str], list[str], list[str]]:
        store = MemoryRoomStore()
        room = Room.for_friend()
        await store.put(room)
        hub = Hub(store)
        hub.presence_every = 0.05
        player, friend = Watcher(0), Watcher(1)
        await hub.attach(player, room.code, 0)
        churned = []
        for _ in range(40):  # a spectator joining and leaving in a loop
            spectator = Watcher()
            await hub.attach(spectator, room.code, None)
            await hub.detach(spectator)
            churned.append(spectator)
        stayed = Watcher()
        await hub.attach(stayed, room.code, None)
        during = list(player.sent)
        await asyncio.sleep(0.2)
        after_interval = list(player.sent)
        await hub.attach(friend, room.code, 1)
        await hub.detach(friend)  # a player leaving is shown at once
        return during, after_interval, player.sent[len(after_interval):]

    during, after_interval, player_left = asyncio.run(scenario())
    assert during == []  # 80 changes of who watches, not one state each
    assert len(after_interval) == 1 and '"watchers":1' in after_interval[0]
    assert len(player_left) == 1 and '"watchers":1' in player_left[0]


class Socket:
    """What a connection asks of its websocket: a client that reads everything it is sent."""

    client = None
    headers = {"host": "127.0.0.1"}  # noqa: RUF012 - read only
    url = type("URL", (), {"scheme": "ws"})

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send_text(self, text: str) -> None:
        self.sent.append(json.loads(text))

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        pass


def test_a_rejoin_loop_through_the_lobby_costs_the_players_one_state_per_interval() -> None:
    from noughts.web.app import create_app
    from noughts.web.connection import Connection

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        app = create_app(scores=False, notify=lambda line: None)
        lobby = app.state.lobby
        app.state.hub.presence_every = 1.0  # long beside the 41 requests below, even on a busy machine
        await lobby.start()
        host_socket, looper_socket = Socket(), Socket()
        host = Connection(host_socket, lobby.limits, "192.0.2.1")  # type: ignore[arg-type]
        looper = Connection(looper_socket, lobby.limits, "192.0.2.2")  # type: ignore[arg-type]
        await lobby.handle(host, '{"type":"play_computer"}')  # no free seat: everyone else watches
        await asyncio.sleep(0.01)
        before = len(host_socket.sent)
        for _ in range(20):
            await lobby.handle(looper, json.dumps({"type": "join", "room": host.room}))
            await lobby.handle(looper, '{"type":"leave"}')
            await asyncio.sleep(0)  # the looper reads what it is sent (else it is dropped as a slow reader)
        await lobby.handle(looper, json.dumps({"type": "join", "room": host.room}))
        await asyncio.sleep(0.01)
        during = host_socket.sent[before:]
        await asyncio.sleep(1.2)
        after = host_socket.sent[before + len(during):]
        for conn in (host, looper):
            await conn.finish()
        await lobby.stop()
        return during, after, looper_socket.sent

    during, after, seen = asyncio.run(scenario())
    assert during == []  # 41 spectators' comings and goings: no state to the player at once
    assert [m["watchers"] for m in after if m["type"] == "state"] == [1]
    kinds = [m["type"] for m in seen]
    assert kinds[:-1] == ["joined", "state", "left"] * 20 + ["joined", "state"]  # each joiner sees the board at once
    assert kinds[-1] == "state" and seen[-1]["watchers"] == 1  # and, still there, the interval's count
