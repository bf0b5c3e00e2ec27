"""What one address may take of the server: its CPU time (hints, computer moves, board checks) and its
rooms, checked and taken in one step however many of its sockets ask at the same instant (issue 30).

CPU time is counted with fake clocks here (each piece of work "costs" what the test says); what it
buys honest players is measured at full size by ``benchmarks/web_attacks.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
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
    lobby.costly.clock = cpu  # work on threads here, timed by the test's clock
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


# costly work away from the server's own process -----------------------------------------------------
def test_with_processes_of_their_own_hints_and_new_boards_cost_the_servers_process_almost_no_cpu() -> None:
    """Before, hints and board checks ran on the server's own threads and held its GIL: in web_attacks'
    costly-messages window the honest players' p99 went from 5 to 70–87 ms (now 5)."""
    from noughts.web.costly import CostlyWork

    async def scenario() -> tuple[float, float, int, list[str]]:
        lobby = app_with().state.lobby
        lobby.guard.clock = Clock()  # nothing comes back meanwhile: the allowance shows what was charged
        lobby.costly = CostlyWork(processes=1)
        lobby.hint_seconds = 0.5
        await lobby.start()  # (the process starts and imports here, not while people play)
        conn, socket = connection()
        await lobby.handle(conn, '{"type":"play_computer","rows":7,"cols":7,"k":5,"first":"me","opponent":"random"}')
        spent_before, server_before = lobby.guard._cpu[ADDRESS].allowance, time.process_time()
        await lobby.handle(conn, '{"type":"hint"}')
        while lobby._hint_tasks:
            await asyncio.sleep(0.01)
        for rows, cols in ((6, 6), (5, 6)):  # boards the solver-backed players are asked about
            await lobby.handle(conn, json.dumps({"type": "players", "rows": rows, "cols": cols, "k": 4}))
        server_cpu = time.process_time() - server_before
        charged = spent_before - lobby.guard._cpu[ADDRESS].allowance
        niceness, _ = await lobby.costly.run(os.nice, 0)
        await asyncio.sleep(0.05)  # the answers are sent
        await conn.finish()
        await lobby.stop()
        return server_cpu, charged, niceness, [m["type"] for m in socket.sent if m["type"] in ("hint", "players")]

    server_cpu, charged, niceness, answered = asyncio.run(scenario())
    assert answered == ["hint", "players", "players"]
    assert charged > 0.3  # what the other process took, charged to the address (about 1 s here)
    assert server_cpu < charged / 4  # (before: as much as was charged, or more)
    assert niceness == min(19, os.nice(0) + 10)  # below the server: its event loop gets the core first


def test_at_most_eight_hints_wait_to_be_worked_out_and_more_are_refused_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, every hint from every address went to the thread pool: a dozen addresses, each within its own
    share, queued a dozen hints of seconds each, and an honest one waited behind them all."""
    import noughts.match
    from noughts.text import WEB_THINKING_FOR_MANY

    release, worked = threading.Event(), []

    def held_hint(board: Any, seconds: float, nodes: int | None = None) -> tuple[int | None, str]:
        worked.append(board.key)
        release.wait(10)
        return None, "No hint: this board is too big to work out in a few seconds."

    monkeypatch.setattr(noughts.match, "hint", held_hint)

    async def scenario() -> list[tuple[str, str | None]]:
        lobby = app_with().state.lobby
        await lobby.start()
        conns = [connection(f"192.0.2.{n}") for n in range(1, 13)]  # twelve addresses, each with its full share
        for conn, _ in conns:
            await lobby.handle(conn, '{"type":"play_computer","rows":7,"cols":7,"k":5,"first":"me"}')
        for conn, _ in conns:
            await lobby.handle(conn, '{"type":"hint"}')
        release.set()
        while lobby._hint_tasks:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # the answers are sent
        for conn, _ in conns:
            await conn.finish()
        await lobby.stop()
        return [(m["type"], m.get("message") if m["type"] == "error" else None)
                for _, socket in conns for m in socket.sent if m["type"] in ("hint", "error")]

    answers = asyncio.run(scenario())
    assert len(worked) == 8  # (before: 12)
    assert answers == [("hint", None)] * 8 + [("error", WEB_THINKING_FOR_MANY)] * 4


def test_a_process_that_dies_is_replaced_by_a_new_one_at_the_next_request() -> None:
    from concurrent.futures.process import BrokenProcessPool

    from noughts.web.costly import CostlyWork

    async def scenario() -> tuple[int, int, int]:
        costly = CostlyWork(processes=1)
        await costly.start()
        first, _ = await costly.run(os.getpid)
        os.kill(first, signal.SIGKILL)  # out of memory, say
        with contextlib.suppress(BrokenProcessPool):  # (the work it was given, if any, fails)
            while (await costly.run(os.getpid))[0] == first:
                await asyncio.sleep(0.01)
        second, _ = await costly.run(os.getpid)
        costly.close()
        return first, second, costly.pools_started

    first, second, started = asyncio.run(scenario())
    assert second not in (first, os.getpid()) and started == 2


def test_noughts_web_works_hints_and_boards_out_in_processes_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from noughts.web.costly import own_processes
    from noughts.web.server import OPTIONS_VARIABLE, app_from_environment

    monkeypatch.setenv(OPTIONS_VARIABLE, json.dumps({"db": None, "scores": False, "redis": None,
                                                     "allowed_hosts": ["127.0.0.1"],
                                                     "limits": dataclasses.asdict(Limits())}))
    assert app_from_environment().state.lobby.costly.processes == own_processes() >= 1
    assert app_with().state.lobby.costly.processes == 0  # an app made in a test: on threads, where tests see it


def test_noughts_webs_processes_for_hints_run_below_it_and_go_with_it(tmp_path: Path) -> None:
    from noughts.web.costly import NICENESS, own_processes
    from test_web_ops import alive, children, command_line, wait_until, web

    def niceness(pid: int) -> int:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])

    with web(tmp_path) as (server, _, _):
        helpers = [pid for pid in children(server.pid) if b"spawn_main" in command_line(pid)]
        assert len(helpers) == own_processes()  # started with the server (before: none, the server's threads)
        assert [niceness(pid) for pid in helpers] == [min(19, niceness(server.pid) + NICENESS)] * len(helpers)
        server.kill()  # SIGKILL: it cannot stop them itself
        server.wait(10)
        try:
            wait_until(lambda: not any(map(alive, helpers)), "the helper processes' exit", seconds=30)
        finally:
            for pid in filter(alive, helpers):
                os.kill(pid, signal.SIGKILL)
