"""Spectators churning: the hub shows a room the number watching at most every ``presence_every``
seconds however often spectators come and go, and a player coming or going at once. What this
buys honest players is measured at full size by ``benchmarks/web_attacks.py``; here, the mechanism.
"""

from __future__ import annotations

import asyncio
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
