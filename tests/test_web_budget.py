"""What one address may take of the server: its CPU time (hints, computer moves, board checks) and its
rooms, checked and taken in one step however many of its sockets ask at the same instant (issue 30).

CPU time is counted with fake clocks here (each piece of work "costs" what the test says); what it
buys honest players is measured at full size by ``benchmarks/web_attacks.py``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from fake_clock import Clock
from noughts.web.protocol import Limits
from test_web_scale import redis_server, redis_url  # noqa: F401 - fixtures: a real redis-server
from test_web_spectators import Socket

ADDRESS = "192.0.2.7"


class CpuClock:
    """A thread's CPU clock that moves only when the work the test stands in for says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def lobby_of(app: Any, clock: Clock, cpu: CpuClock) -> Any:
    lobby = app.state.lobby
    lobby.guard.clock = clock
    lobby.cpu_clock = cpu
    return lobby


def app_with(**limits: Any) -> Any:
    from noughts.web.app import create_app

    return create_app(scores=False, notify=lambda line: None,
                      limits=Limits(address_burst=100_000, join_burst=1000, **limits))


def connection(address: str = ADDRESS) -> Any:
    from noughts.web.connection import Connection

    socket = Socket()
    return Connection(socket, Limits(), address), socket  # type: ignore[arg-type]


def errors(socket: Socket, code: str) -> list[dict[str, Any]]:
    return [m for m in socket.sent if m["type"] == "error" and m["code"] == code]


# the server's CPU per address ---------------------------------------------------------------------
def test_hints_are_worked_out_only_while_the_address_has_cpu_time_left_and_bounded_on_big_boards(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, 60 hints on 7×7 under the message rate took 44 s of CPU: every one was worked out."""
    import noughts.match
    from noughts.web.lobby import HINT_NODES

    cpu = CpuClock()
    worked: list[int] = []

    def costly_hint(board: Any, seconds: float, nodes: int | None = None) -> tuple[int | None, str]:
        worked.append(nodes or 0)
        cpu.now += 1.0  # a second of the server's CPU each
        return None, "No hint: this board is too big to work out in a few seconds."

    monkeypatch.setattr(noughts.match, "hint", costly_hint)

    async def scenario() -> tuple[int, list[dict[str, Any]], int]:
        clock = Clock()
        lobby = lobby_of(app_with(), clock, cpu)
        await lobby.start()
        conn, socket = connection()
        await lobby.handle(conn, '{"type":"play_computer","rows":7,"cols":7,"k":5,"first":"me","opponent":"random"}')
        for _ in range(60):
            lobby._hints.clear()  # each in a position nobody has asked about
            await lobby.handle(conn, '{"type":"hint"}')
            while lobby._hint_tasks:
                await asyncio.sleep(0.001)
        during = len(worked)
        clock.advance(4.0)  # a second of CPU comes back in 4 s
        lobby._hints.clear()
        await lobby.handle(conn, '{"type":"hint"}')
        while lobby._hint_tasks:
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.05)  # the answers are sent
        await conn.finish()
        await lobby.stop()
        return during, errors(socket, "too_much_work"), len(worked)

    during, refused, after = asyncio.run(scenario())
    assert during == 10  # ten seconds' worth (Limits.cpu_burst), not sixty
    assert len(refused) == 60 - during and refused[0]["re"] == "hint"
    assert refused[0]["message"].endswith("try again in 1 second.")  # (a quarter of a second comes back a second)
    assert after == during + 1
    assert worked[0] == HINT_NODES * 16 // 49  # a position costs more on 7×7: fewer of them (before: 60,000)


def test_a_boards_players_are_worked_out_once_per_shape_and_only_while_the_address_has_cpu_left(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, only 64 shapes were kept: 150 requests over 100 shapes worked out 150 (17 s of CPU)."""
    from noughts import players

    cpu = CpuClock()
    looked: list[tuple[int, int, int]] = []
    unable = players.unable

    def counted(name: str, board: Any, **options: Any) -> str | None:
        shape = (board.rows, board.cols, board.k)
        if not looked or looked[-1] != shape:
            looked.append(shape)
            cpu.now += 0.0625  # (sums of sixteenths are exact)
        return unable(name, board, **options) if (board.rows, board.cols) == (3, 3) else None

    monkeypatch.setattr(players, "unable", counted)
    shapes = [(rows, cols, 4) for rows in range(5, 15) for cols in range(5, 15)]  # 100 shapes

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        lobby = lobby_of(app_with(), Clock(), cpu)
        await lobby.start()
        conn, socket = connection()
        for rows, cols, k in shapes + shapes[:50]:
            await lobby.handle(conn, json.dumps({"type": "players", "rows": rows, "cols": cols, "k": k}))
        await asyncio.sleep(0.05)  # the answers are sent
        answered = list(socket.sent)
        assert len(looked) == 101  # each shape worked out once (before: the first 50 twice, 151)
        for rows, cols, _ in shapes:  # 100 new shapes: 60 use up the address's 10 s, the other 40 are refused
            await lobby.handle(conn, json.dumps({"type": "players", "rows": rows, "cols": cols, "k": 5}))
        await lobby.handle(conn, '{"type":"players","rows":5,"cols":5,"k":4,"id":"p.known"}')  # known: no work
        await asyncio.sleep(0.05)
        await conn.finish()
        await lobby.stop()
        return answered, socket.sent[150:]

    answered, more = asyncio.run(scenario())
    assert sorted(looked[:101]) == sorted([(3, 3, 3), *shapes])  # each shape once (before: the first 50 twice)
    assert [m["type"] for m in answered] == ["players"] * 150
    assert [(m["type"], m.get("code")) for m in more] == \
        [("players", None)] * 60 + [("error", "too_much_work")] * 40 + [("players", None)]  # a known shape: no work
    assert more[-1]["id"] == "p.known" and len(looked) == 161


def test_the_computers_moves_are_charged_to_the_address_that_asked_and_refused_once_its_share_is_spent() -> None:
    async def scenario() -> tuple[int, list[dict[str, Any]], int]:
        clock = Clock()
        lobby = lobby_of(app_with(), clock, CpuClock())
        thinking = CpuClock()

        def pace_clock() -> float:  # each reading half a second on: a move costs 0.5 s of CPU
            thinking.now += 0.5
            return thinking.now

        lobby.pace.clock = pace_clock
        await lobby.start()
        conn, socket = connection()
        # 15 in a row on 15×15 and the person's moves in the first ten columns: the game goes on
        await lobby.handle(conn, '{"type":"play_computer","rows":15,"cols":15,"k":15,"first":"me","opponent":"random"}')
        played = 0
        for _ in range(30):
            room = await lobby.rooms.get(conn.room)
            cell = next(c for c, mark in enumerate(room.match.board.cells) if mark is None and c % 15 < 10)
            before = len(room.moves)
            await lobby.handle(conn, json.dumps({"type": "move", "cell": cell}))
            room = await lobby.rooms.get(conn.room)
            played += len(room.moves) > before
        clock.advance(2.0)  # half a second's allowance back: one more move
        room = await lobby.rooms.get(conn.room)
        cell = next(c for c, mark in enumerate(room.match.board.cells) if mark is None and c % 15 < 10)
        await lobby.handle(conn, json.dumps({"type": "move", "cell": cell}))
        await asyncio.sleep(0.01)  # the answers are sent
        room = await lobby.rooms.get(conn.room)
        await conn.finish()
        await lobby.stop()
        return played, errors(socket, "too_much_work"), len(room.moves)

    played, refused, moves = asyncio.run(scenario())
    assert played == 20  # 20 replies of half a second: the burst of 10 s (before: all 30)
    assert len(refused) == 10 and refused[0]["re"] == "move"
    assert moves == 2 * 21


# rooms: the check and the taking in one step ------------------------------------------------------
async def create_at_once(lobbies: list[Any], sockets: int) -> tuple[int, list[str]]:
    conns = [connection() for _ in range(sockets)]
    await asyncio.gather(*(lobbies[n % len(lobbies)].handle(conn, '{"type":"create_room"}')
                           for n, (conn, _) in enumerate(conns)))
    await asyncio.sleep(0.05)  # the answers are sent
    made = sum(any(m["type"] == "joined" for m in socket.sent) for _, socket in conns)
    codes = [m["code"] for _, socket in conns for m in socket.sent if m["type"] == "error"]
    for conn, _ in conns:
        await conn.finish()
    return made, codes


def test_sixty_sockets_of_one_address_creating_at_the_same_instant_get_exactly_its_fifty_rooms() -> None:
    """Before, the check and the taking had awaits between them: 80 rooms in one process."""
    async def scenario() -> tuple[int, list[str], int, int]:
        lobby = app_with().state.lobby
        await lobby.start()
        made, refused = await create_at_once([lobby], 60)
        held, reserved = lobby.guard.rooms_of(ADDRESS), sum(getattr(lobby.guard, "_reserved", {}).values())
        await lobby.stop()
        return made, refused, held, reserved

    made, refused, held, reserved = asyncio.run(scenario())
    assert made == held == Limits().rooms_per_address == 50
    assert refused == ["too_many_rooms"] * 10
    assert reserved == 0  # every place held was taken by its room or given back


def test_a_room_that_cannot_be_made_gives_its_place_back() -> None:
    async def scenario() -> tuple[list[str], int]:
        lobby = app_with(rooms_per_address=2).state.lobby
        await lobby.start()
        conn, socket = connection()
        for _ in range(3):  # no such player: refused after the place was held
            await lobby.handle(conn, '{"type":"play_computer","opponent":"nobody-at-all"}')
        for _ in range(2):  # a board no player can play: refused by the match
            await lobby.handle(conn, '{"type":"play_computer","rows":1,"cols":1,"k":1,"opponent":"parsons"}')
        for _ in range(3):
            await lobby.handle(conn, '{"type":"create_room"}')
        await conn.finish()
        await lobby.stop()
        return [m.get("code", m["type"]) for m in socket.sent if m["type"] in ("joined", "error")], \
            sum(getattr(lobby.guard, "_reserved", {}).values())

    answers, reserved = asyncio.run(scenario())
    assert answers[-3:] == ["joined", "joined", "too_many_rooms"]
    assert reserved == 0


def counted_reads(lobby: Any) -> list[str]:
    """Every room the lobby's store is asked for."""
    reads: list[str] = []
    get: Callable[[str], Any] = lobby.rooms.get

    async def counted(code: str) -> Any:
        reads.append(code)
        return await get(code)

    lobby.rooms.get = counted
    return reads


def test_two_processes_on_one_redis_give_sixty_sockets_creating_at_once_exactly_fifty_rooms(
        redis_url: str) -> None:  # noqa: F811 - the fixture
    """Before, each process read the address's rooms, then made its own: 64–76 rooms."""
    import redis

    async def scenario() -> tuple[int, list[str]]:
        from noughts.web.app import create_app

        lobbies = [create_app(scores=False, notify=lambda line: None, redis=redis_url,
                              limits=Limits(join_burst=1000, address_burst=100_000)).state.lobby for _ in range(2)]
        for lobby in lobbies:
            await lobby.start()
        made, refused = await create_at_once(lobbies, 60)
        for lobby in lobbies:
            await lobby.stop()
        return made, refused

    made, refused = asyncio.run(scenario())
    assert made == 50 and refused == ["too_many_rooms"] * 10
    held = redis.Redis.from_url(redis_url).smembers(f"noughts:address:{ADDRESS}:rooms")
    assert len(held) == 50 and not any(code.startswith(b"+") for code in held)  # no place left held


def test_with_redis_a_refused_room_reads_no_rooms_and_expired_ones_are_dropped_now_and_then(
        redis_url: str) -> None:  # noqa: F811 - the fixture
    """Before, every refusal read each of the address's 50 rooms (twice: this process's count, then Redis's)."""
    async def scenario() -> tuple[list[str], list[str]]:
        from noughts.web.app import create_app

        lobby = create_app(scores=False, notify=lambda line: None, redis=redis_url,
                           limits=Limits(join_burst=1000, address_burst=100_000)).state.lobby
        lobby.guard.clock = Clock()
        await lobby.start()
        made, _ = await create_at_once([lobby], 50)
        assert made == 50
        codes = sorted(lobby.guard._rooms[ADDRESS])
        for code in codes[:3]:  # gone on another process: expired there
            await lobby.rooms.delete(code)
        reads = counted_reads(lobby)
        conns = [connection() for _ in range(23)]
        for conn, _ in conns:
            await lobby.handle(conn, '{"type":"create_room"}')
        await asyncio.sleep(0.05)  # the answers are sent
        answers = [m.get("code", m["type"]) for _, socket in conns for m in socket.sent
                   if m["type"] in ("joined", "error")]
        for conn, _ in conns:
            await conn.finish()
        await lobby.stop()
        return answers, reads

    answers, reads = asyncio.run(scenario())
    assert answers == ["joined"] * 3 + ["too_many_rooms"] * 20  # the expired three make room for three more
    assert len(reads) <= 50  # one look, in this process, at its cap (before: 1,050 reads for 20 refusals)
