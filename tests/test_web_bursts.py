"""Bursts served a few per turn of the event loop: a crowd of sockets connecting, joining or leaving
at one moment must not take the loop from the players for one long turn (issue 12: the spectators
attack's honest p99). Here the mechanism, by counting what one turn serves; what it buys honest
players is measured at full size by ``benchmarks/web_attacks.py``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from uvicorn.server import ServerState

from noughts.web.app import FULL_COLLECTION_AFTER
from noughts.web.guard import Guard, Turnstile
from noughts.web.protocol import Limits
from noughts.web.shield import GUARD, GuardedHTTP
from test_web_spectators import Socket  # what a connection asks of its websocket


def test_the_turnstile_lets_a_burst_in_a_few_per_allowance_in_arrival_order_and_then_rests() -> None:
    async def scenario() -> tuple[list[list[int]], Turnstile]:
        turnstile = Turnstile(4, 0.001)
        batches: list[list[int]] = [[]]  # who went in: at once, then at each allowance
        allow = turnstile._allow

        def counted() -> None:
            batches.append([])
            allow()

        turnstile._allow = counted  # type: ignore[method-assign]
        gone = {5, 6}  # closed while they waited: their places go to the next

        def go_for(number: int) -> Callable[[], bool]:
            def go() -> bool:
                if number in gone:
                    return False
                batches[-1].append(number)
                return True
            return go

        for number in range(20):  # twenty requests in one turn of the loop
            if turnstile.enter(go_for(number)):
                batches[-1].append(number)
        for _ in range(500):
            if not turnstile.waiting:
                break
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.01)
        return batches, turnstile

    batches, turnstile = asyncio.run(scenario())
    assert batches[0] == [0, 1, 2, 3]  # the first four at once; nobody else in that turn
    assert all(len(batch) <= 4 for batch in batches)
    assert [n for batch in batches for n in batch] == [n for n in range(20) if n not in (5, 6)]  # in order, all
    assert turnstile._timer is None and batches[-1] == []  # the timer stops once nobody comes


class Transport:
    """What uvicorn's HTTP protocol asks of a connection's transport."""

    def __init__(self, number: int) -> None:
        self.peer = (f"192.0.2.{number}", 40000)
        self.closing = False
        self.reading = True
        self.protocol: Any = None

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": self.peer, "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def is_closing(self) -> bool:
        return self.closing

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        self.closing = True

    def set_protocol(self, protocol: Any) -> None:
        self.protocol = protocol

    def get_protocol(self) -> Any:
        return self.protocol


async def _no_content(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def _guarded(config: uvicorn.Config, state: ServerState, guard: Guard, number: int) -> GuardedHTTP:
    """The server's HTTP protocol on a new connection from ``192.0.2.number``."""
    protocol = GuardedHTTP(config=config, server_state=state, app_state={GUARD: guard},
                           _loop=asyncio.get_running_loop())
    transport = Transport(number)
    transport.set_protocol(protocol)
    protocol.connection_made(transport)  # type: ignore[arg-type]
    return protocol


def test_a_burst_of_new_connections_has_a_few_requests_read_per_turn_and_none_cut_off_while_waiting() -> None:
    async def scenario() -> tuple[int, int, int]:
        # the request deadline is far shorter than the wait: waiting at the turnstile is not being slow
        limits = Limits(handshakes_per_slice=3, slice_seconds=0.01, handshake_timeout=0.005)
        guard = Guard(limits)
        config = uvicorn.Config(_no_content, log_level="warning", lifespan="off")
        state = ServerState()
        protocols = [_guarded(config, state, guard, number) for number in range(30)]
        for protocol in protocols:  # every request arrives in the same turn of the loop
            protocol.data_received(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        read_at_once = sum(protocol.scope is not None for protocol in protocols)
        paused = sum(not protocol.transport.reading for protocol in protocols)  # type: ignore[attr-defined]
        for _ in range(200):
            if all(protocol.scope is not None for protocol in protocols):
                break
            await asyncio.sleep(0.01)
        read = sum(protocol.scope is not None for protocol in protocols)  # (one cut off while waiting never is)
        for protocol in protocols:
            protocol.connection_lost(None)
        return read_at_once, paused, read

    read_at_once, paused, read = asyncio.run(scenario())
    assert read_at_once == 3  # (uvicorn alone reads all 30 in this turn: 30 handshakes' work at once)
    assert paused == 27  # the others are not read meanwhile
    assert read == 30  # each in its turn, none taken for a slow client


def test_waiting_at_the_turnstile_moves_a_request_deadline_on_by_the_wait_and_no_more() -> None:
    unit = 0.5  # seconds; every pause below is a fraction of it, long enough for a busy machine's stalls

    async def scenario() -> tuple[float, bool, bool]:
        limits = Limits(handshakes_per_slice=1, slice_seconds=unit, handshake_timeout=2 * unit)
        guard = Guard(limits)
        config = uvicorn.Config(_no_content, log_level="warning", lifespan="off")
        state = ServerState()
        first, slow, loris = (_guarded(config, state, guard, number) for number in range(3))
        await asyncio.sleep(1.5 * unit)  # the slow client used 3/4 of its time before its first bytes
        first.data_received(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        slow.data_received(b"GET /healthz HTTP/1.1\r\n")  # waits its turn: the allowance went to the first
        loris.data_received(b"G")  # no line end: nothing it sent can be served yet, so it never waits here
        assert loris.held is None and slow.held is not None
        for _ in range(100):
            if slow.held is None:
                break
            await asyncio.sleep(unit / 20)
        assert slow.deadline is not None
        left = slow.deadline.when() - asyncio.get_running_loop().time()
        open_when_let_in = not slow.transport.is_closing()
        await asyncio.sleep(unit)
        cut_off = slow.transport.is_closing()
        for protocol in (first, slow, loris):
            protocol.connection_lost(None)
        return left, open_when_let_in, cut_off

    left, open_when_let_in, cut_off = asyncio.run(scenario())
    assert open_when_let_in  # its deadline passed while it waited: not its slowness
    assert left <= 0.6 * unit  # but it has only what it had left, not a new 2 units (a slowloris would wait to gain it)
    assert cut_off


def test_a_crowd_of_spectators_joining_at_once_is_served_a_few_per_turn_and_a_players_move_goes_first() -> None:
    from noughts.web.app import create_app
    from noughts.web.connection import Connection

    async def scenario() -> tuple[int, int, bool, int]:
        limits = Limits(unseated_per_slice=8, slice_seconds=0.01, max_watchers=200, join_burst=1000,
                        address_burst=10_000)
        app = create_app(scores=False, notify=lambda line: None, limits=limits)
        lobby = app.state.lobby
        await lobby.start()
        host_socket = Socket()
        host = Connection(host_socket, lobby.limits, "192.0.2.1")  # type: ignore[arg-type]
        await lobby.handle(host, '{"type":"play_computer","first":"me"}')
        await asyncio.sleep(0.02)  # the turnstile's allowance is whole again
        crowd = [Connection(Socket(), lobby.limits, f"192.0.2.{10 + n}") for n in range(60)]  # type: ignore[arg-type]
        join = json.dumps({"type": "join", "room": host.room})
        joining = [asyncio.create_task(lobby.handle(conn, join)) for conn in crowd]
        await asyncio.sleep(0)  # one turn: every task has begun
        joined_in_one_turn = sum(conn.room is not None for conn in crowd)
        room = await lobby.rooms.get(host.room)
        moves = len(room.moves)
        await lobby.handle(host, json.dumps({"type": "move", "cell": room.match.board.cells.index(None)}))
        player_answered = len(room.moves) > moves and lobby.unseated.waiting > 0  # a player is never held back
        await asyncio.gather(*joining)
        joined = sum(conn.room is not None for conn in crowd)
        for conn in [host, *crowd]:
            await conn.finish()
        await lobby.stop()
        return joined_in_one_turn, lobby.unseated.waiting, player_answered, joined

    joined_in_one_turn, left_waiting, player_answered, joined = asyncio.run(scenario())
    assert joined_in_one_turn == 8  # (without the turnstile: all 60 in this turn)
    assert player_answered  # the move was played while spectators still waited their turn
    assert joined == 60 and left_waiting == 0


def test_the_servers_own_process_keeps_its_start_up_objects_out_of_full_collections() -> None:
    from noughts.web import running
    from noughts.web.app import create_app

    app = create_app(scores=False, notify=lambda line: None)
    app.state.freeze_heap = True  # as noughts web sets it (a test's server does not: see the next line)
    thresholds = gc.get_threshold()
    try:
        gc.unfreeze()
        with running(app):
            frozen = gc.get_freeze_count()
            full_after = gc.get_threshold()[2]
        with running(scores=False, notify=lambda line: None):
            again = gc.get_freeze_count()
    finally:
        gc.unfreeze()  # the test process's own objects go back to the collector
        gc.set_threshold(*thresholds)
    assert frozen > 10_000  # modules, the players' tables...
    assert full_after == FULL_COLLECTION_AFTER > thresholds[2]  # full passes over what clients made are rarer
    assert again <= frozen  # a server made by running() alone freezes nothing more (some frozen ones were freed)


def test_noughts_webs_worker_processes_ask_for_it(monkeypatch: Any) -> None:
    import dataclasses

    from noughts.web.server import OPTIONS_VARIABLE, app_from_environment

    monkeypatch.setenv(OPTIONS_VARIABLE, json.dumps({"db": None, "scores": False, "redis": None,
                                                     "allowed_hosts": ["127.0.0.1"],
                                                     "limits": dataclasses.asdict(Limits())}))
    assert app_from_environment().state.freeze_heap is True


def test_an_allowance_that_comes_late_puts_the_next_off_by_as_long_so_a_busy_loop_takes_a_burst_slower() -> None:
    async def scenario() -> list[tuple[float, float, float]]:
        loop = asyncio.get_running_loop()
        turnstile = Turnstile(1, 0.01)
        allowances: list[tuple[float, float, float]] = []  # (due, came, the next one due)
        allow = turnstile._allow

        def noted() -> None:
            due, came = turnstile._due, loop.time()
            allow()
            allowances.append((due, came, turnstile._due))

        turnstile._allow = noted  # type: ignore[method-assign]
        for _ in range(4):  # one goes in, three wait
            turnstile.enter(lambda: True)
        time.sleep(0.05)  # a long turn of the loop (a busy machine): the first allowance comes ~40 ms late
        while turnstile.waiting:
            await asyncio.sleep(0.005)
        return allowances

    allowances = asyncio.run(scenario())
    due, came, next_due = allowances[0]
    assert came - due >= 0.03
    assert next_due - came >= 0.01 + (came - due) - 1e-6  # (without: 0.01 after, the loop still behind)
    assert len(allowances) >= 3  # and the others still went in, a slice at a time


def test_new_connections_and_spectators_messages_share_one_slice_a_turn() -> None:
    from noughts.web.app import create_app
    from noughts.web.connection import Connection

    async def scenario() -> tuple[int, int, int, int]:
        limits = Limits(handshakes_per_slice=4, unseated_per_slice=16, slice_seconds=0.01, max_watchers=200,
                        join_burst=1000, address_burst=10_000)
        app = create_app(scores=False, notify=lambda line: None, limits=limits)
        lobby, guard = app.state.lobby, app.state.guard
        await lobby.start()
        host = Connection(Socket(), lobby.limits, "192.0.2.1")  # type: ignore[arg-type]
        await lobby.handle(host, '{"type":"play_computer","first":"me"}')
        await asyncio.sleep(0.03)  # the turnstile's allowance is whole again
        config = uvicorn.Config(_no_content, log_level="warning", lifespan="off")
        state = ServerState()
        protocols = [_guarded(config, state, guard, 10 + number) for number in range(12)]
        crowd = [Connection(Socket(), lobby.limits, f"192.0.2.{100 + n}") for n in range(40)]  # type: ignore[arg-type]
        for protocol in protocols:  # a burst of new connections' requests and of spectators' joins, in one turn
            protocol.data_received(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        join = json.dumps({"type": "join", "room": host.room})
        joining = [asyncio.create_task(lobby.handle(conn, join)) for conn in crowd]
        await asyncio.sleep(0)  # one turn: every task has begun
        read_at_once = sum(protocol.scope is not None for protocol in protocols)
        joined_at_once = sum(conn.room is not None for conn in crowd)
        await asyncio.gather(*joining)
        for _ in range(200):
            if all(protocol.scope is not None for protocol in protocols):
                break
            await asyncio.sleep(0.01)
        read = sum(protocol.scope is not None for protocol in protocols)
        joined = sum(conn.room is not None for conn in crowd)
        for protocol in protocols:
            protocol.connection_lost(None)
        for conn in [host, *crowd]:
            await conn.finish()
        await lobby.stop()
        return read_at_once, joined_at_once, read, joined

    read_at_once, joined_at_once, read, joined = asyncio.run(scenario())
    assert read_at_once == 4  # a whole slice's worth of handshakes...
    assert joined_at_once == 0  # ...and so no joins in the same turn (with a turnstile each: 16 more)
    assert read == 12 and joined == 40  # everyone in their turn


def test_a_closed_websockets_objects_are_freed_at_once_not_left_to_a_full_garbage_collection() -> None:
    """A socket's protocol, its websockets parser and the app's scope hold one another in cycles:
    left to the collector, 2,000 closed attack sockets made one full collection take 95 ms of CPU."""
    import socket
    import time as clock

    from websockets.sync.client import connect

    from noughts.web import running
    from noughts.web.app import create_app
    from noughts.web.shield import GuardedWebSocket

    app = create_app(scores=False, notify=lambda line: None)
    hub = app.state.hub
    with running(app) as url:
        port = int(url.rsplit(":", 1)[1])
        gc.collect()
        gc.disable()
        try:
            idle = []
            for _ in range(4):  # upgraded, then silent
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                sock.sendall(f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: "
                             "Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: "
                             "13\r\n\r\n".encode())
                sock.recv(4096)
                idle.append(sock)
            with connect(f"ws://127.0.0.1:{port}/ws") as host:
                host.send('{"type":"create_room"}')
                while (message := json.loads(host.recv(10)))["type"] != "joined":
                    pass
                for number in range(4):  # spectators who join and leave, closing politely or not
                    with connect(f"ws://127.0.0.1:{port}/ws") as spectator:
                        spectator.send(json.dumps({"type": "join", "room": message["room"]}))
                        spectator.send('{"type":"leave"}')
                        while json.loads(spectator.recv(10))["type"] != "left":
                            pass
                        if number % 2:
                            spectator.socket.close()
                for sock in idle:
                    sock.close()
            for _ in range(500):
                if hub.connections == 0:
                    break
                clock.sleep(0.01)
            clock.sleep(0.05)
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            tangled = sum(type(thing) is GuardedWebSocket for thing in gc.garbage)  # (type: some are dead proxies)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
    assert hub.connections == 0
    assert tangled == 0  # (before: every one of the 9 sockets)
