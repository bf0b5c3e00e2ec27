"""Bursts that used to hold the web server's event loop: a flood of connections, spectators churning.

The acceptor takes a few connections per turn of the event loop and turns away an address at
its limit on the bare socket; the hub shows a room the number watching at most every
``presence_every`` seconds however often spectators come and go. The timings these buy are
measured at full size by ``benchmarks/web_attacks.py``; here, the mechanisms, with real sockets.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any, ClassVar

from noughts.web.acceptor import ACCEPT_BATCH, Acceptor
from noughts.web.guard import Guard
from noughts.web.hub import Hub
from noughts.web.protocol import Limits
from noughts.web.rooms import MemoryRoomStore, Room

BUSY = b"HTTP/1.1 503 Service Unavailable\r\n\r\n"


class Counted(asyncio.Protocol):
    made: ClassVar[list[Counted]] = []

    def connection_made(self, transport: Any) -> None:
        Counted.made.append(self)
        self.transport = transport


def listener() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def test_a_burst_of_connections_is_taken_a_batch_per_turn_and_an_address_at_its_limit_is_refused_unbuilt() -> None:
    async def scenario() -> tuple[int, int, int, bytes, int]:
        loop = asyncio.get_running_loop()
        guard = Guard(Limits(connections_per_address=1))
        guard.admit("127.0.0.9", object())  # 127.0.0.9 holds all it may already
        sock = listener()
        Counted.made = []
        acceptor = Acceptor(loop, sock, Counted, lambda: guard, BUSY)
        port = sock.getsockname()[1]
        burst = [socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.8", 0))
                 for _ in range(3 * ACCEPT_BATCH)]  # the kernel holds them in the backlog
        refused = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.9", 0))
        acceptor._ready()  # one turn of the loop finding the socket ready
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        first_turn = len(Counted.made)
        for _ in range(200):  # the rest over the next turns
            if len(Counted.made) == len(burst) and acceptor.refused:
                break
            await asyncio.sleep(0.005)
        refused.settimeout(5)
        answer = refused.recv(100)
        end = refused.recv(100)  # closed after the answer
        acceptor.close()
        await acceptor.wait_closed()
        for protocol in Counted.made:
            protocol.transport.close()
        for client in [*burst, refused]:
            client.close()
        sock.close()
        return first_turn, len(Counted.made), acceptor.refused, answer, len(end)

    first_turn, made, refused, answer, after = asyncio.run(scenario())
    assert first_turn <= ACCEPT_BATCH < 3 * ACCEPT_BATCH == made
    assert refused == 1 and answer == BUSY and after == 0


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
