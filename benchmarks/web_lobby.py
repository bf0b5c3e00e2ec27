"""The lobby's own work a move, without sockets: ``python benchmarks/web_lobby.py [--games N] [--rounds R]``.

Plays ``--games`` games against the computer (the load clients' opponents, in turn) and as many
between two people, each in a room of its own, on one event loop: every message goes straight to
``Lobby.handle`` from a :class:`~noughts.web.connection.Connection` whose socket takes every message
through ``send_text`` at once (as Starlette's WebSocket does: the connection's writer task hands it
over) and keeps it, so what is measured is the lobby, the rooms, the match and the game, the hub,
the encoding and the outbox, and nothing of the framing (the websockets library's), the kernel or
uvicorn. Scores are not recorded. Moves are made in turn across all rooms, as players far apart in
time would make them, so nothing stays warm in the caches that a server with many rooms would not
have warm either.

The figure is the process's CPU (every thread: the computer's moves may go to a worker thread)
spent inside ``Lobby.handle`` and in the writers it wakes, divided by the moves answered (yours, or
yours and the computer's reply, as in the load runs), median of ``--rounds`` rounds. Run it from
two checkouts (for instance one with ``benchmarks/compile_mypyc.sh``'s modules built and one
without) to compare them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(SRC))

from noughts.web.connection import Connection  # noqa: E402
from noughts.web.hub import Hub  # noqa: E402
from noughts.web.lobby import Lobby  # noqa: E402
from noughts.web.protocol import Limits  # noqa: E402
from noughts.web.recording import Recorder  # noqa: E402
from noughts.web.rooms import MemoryRoomStore  # noqa: E402

OPPONENTS = ["easy", "medium", "hard", "random", "arduino", "parsons", "mdttt", "newell-simon", "seed001-rules",
             "minimax", "perfect"]  # as benchmarks/web_load.py's clients choose


class _Socket:
    """Stands in for Starlette's websocket: takes every message at once and keeps the last state it was sent."""

    def __init__(self) -> None:
        self.headers = {"host": "127.0.0.1:8000"}  # the request, as the lobby reads it for a friend's link
        self.url = SimpleNamespace(scheme="ws")
        self.texts: list[str] = []
        self._state: dict[str, Any] | None = None

    async def send_text(self, text: str) -> None:
        self.texts.append(text)  # read later, outside the time measured

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        pass

    @property
    def state(self) -> dict[str, Any] | None:
        """The last state sent."""
        for text in self.texts:
            if text.startswith('{"type":"state"'):
                self._state = json.loads(text)
        self.texts.clear()
        return self._state


class _Game:
    def __init__(self, lobby: Lobby, limits: Limits, rng: random.Random, computer: bool) -> None:
        self.lobby, self.rng, self.computer = lobby, rng, computer
        self.sockets = [_Socket(), _Socket()] if not computer else [_Socket()]
        self.conns = [Connection(s, limits, f"127.1.{i}.{rng.randrange(256)}")  # type: ignore[arg-type]
                      for i, s in enumerate(self.sockets)]

    async def sent(self) -> None:
        """Wait until the connections' writers have handed every queued message to the sockets."""
        await asyncio.sleep(0)
        while any(conn.pending for conn in self.conns):
            await asyncio.sleep(0)

    async def start(self) -> None:
        if self.computer:
            await self.lobby.handle(self.conns[0], json.dumps({
                "type": "play_computer", "opponent": self.rng.choice(OPPONENTS),
                "first": self.rng.choice(["you", "opponent"])}))
        else:
            await self.lobby.handle(self.conns[0], '{"type":"create_room","name":"Host"}')
            await self.sent()
            code = self.sockets[0].state["room"]  # type: ignore[index]
            await self.lobby.handle(self.conns[1], json.dumps({"type": "join", "room": code, "name": "Guest"}))
        await self.sent()

    def next_message(self) -> tuple[Connection, str, bool] | None:
        """The next message a player sends: a move (True) or a rematch (False)."""
        for socket, conn in zip(self.sockets, self.conns, strict=True):
            state = socket.state
            if state is None:
                continue
            if state["result"] is not None:
                if conn is self.conns[0]:
                    return conn, '{"type":"rematch"}', False
                continue
            mine = state["seats"][conn.seat]
            if mine is not None and mine["mark"] == state["turn"]:
                cell = self.rng.choice([i for i, mark in enumerate(state["cells"]) if mark is None])
                return conn, f'{{"type":"move","cell":{cell},"game":{state["game"]}}}', True
        return None


async def _round(games: int, turns: int, seed: int) -> tuple[float, int, int]:
    limits = Limits()
    rooms = MemoryRoomStore()
    lobby = Lobby(limits, rooms, Recorder(None, enabled=False), Hub(rooms))
    await lobby.start()
    rng = random.Random(seed)
    played = [_Game(lobby, limits, rng, computer=i % 2 == 0) for i in range(2 * games)]
    for game in played:
        await game.start()
    cpu = 0.0
    moves = messages = 0
    for _ in range(turns):
        for game in played:
            step = game.next_message()
            if step is None:
                continue
            conn, text, is_move = step
            began = time.process_time()
            await lobby.handle(conn, text)
            await game.sent()
            cpu += time.process_time() - began
            messages += 1
            moves += is_move
    for game in played:
        for conn in game.conns:
            await lobby.leave(conn)
            await conn.finish()
    await lobby.stop()
    return cpu, moves, messages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games of each kind, played at once (default 200)")
    parser.add_argument("--turns", type=int, default=40, help="messages each game sends a round (default 40)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the median is reported (default 5)")
    args = parser.parse_args()
    try:
        import uvloop  # the server's loop when installed
        runner: Any = uvloop.run
    except ImportError:
        runner = asyncio.run
    import noughts.web.lobby as lobby_module
    compiled = not lobby_module.__file__.endswith(".py")  # type: ignore[union-attr]
    per_move = []
    for r in range(args.rounds):
        cpu, moves, messages = runner(_round(args.games, args.turns, seed=r))
        per_move.append(cpu / moves * 1e6)
        print(f"round {r + 1}: {per_move[-1]:.1f} µs a move ({moves} moves, {messages} messages, "
              f"{cpu / messages * 1e6:.1f} µs a message)", flush=True)
    print(f"{'compiled' if compiled else 'interpreted'} ({SRC}): median {statistics.median(per_move):.1f} µs a move "
          f"over {args.rounds} rounds; load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
