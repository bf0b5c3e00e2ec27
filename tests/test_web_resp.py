"""No await on Redis hangs: the lean connection (noughts.web.resp) and the hub over a real redis-server
that is stopped (SIGSTOP), cut off mid-command, or lost while the hub shuts down.

One ``redis-server`` (Debian's package) with a password runs for the module; a stopped server is
always continued (SIGCONT) before the test ends. The timeouts are shortened for the tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.exceptions import RedisError

from noughts.web import resp, shared
from noughts.web.protocol import Rejection
from noughts.web.resp import RespConnection, resp_address
from noughts.web.rooms import Room
from noughts.web.shared import RedisHub, RedisRoomStore, open_redis
from test_web_scale import free_port, wait_until

BOUND = 4.0  # seconds within which every await here must end (the shortened timeouts are well below)


class Server:
    """A redis-server that a test may stop and continue."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.url = f"redis://:sesame@127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", "",
             "--appendonly", "no", "--requirepass", "sesame"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: redis.Redis(port=self.port, password="sesame").ping(), "redis-server", self.process)

    @contextlib.contextmanager
    def stopped(self) -> Iterator[None]:
        os.kill(self.process.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(self.process.pid, signal.SIGCONT)

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, password="sesame", decode_responses=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("redis"))
    try:
        yield running
    finally:
        os.kill(running.process.pid, signal.SIGCONT)
        running.process.terminate()
        running.process.wait(10)


@pytest.fixture(autouse=True)
def short_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resp, "REPLY_TIMEOUT", 0.4)
    monkeypatch.setattr(resp, "CONNECT_TIMEOUT", 0.4)
    monkeypatch.setattr(shared, "TIMEOUT", 0.4)
    monkeypatch.setattr(shared, "LISTEN_CHECK", 0.3)


def lean(server: Server, **options: Any) -> RespConnection:
    address = resp_address(open_redis(server.url + "/3"))
    assert address is not None
    return RespConnection(address, **options)


async def failure_of(awaitable: Any) -> Exception | None:
    """What the awaitable raised, waiting at most BOUND seconds (a hang fails the test, not the suite)."""
    try:
        await asyncio.wait_for(awaitable, BOUND)
    except (RedisError, Rejection) as error:
        return error
    return None


def test_a_command_to_a_stopped_redis_fails_within_the_reply_timeout_and_the_next_reconnects(server: Server) -> None:
    async def scenario() -> tuple[Any, ...]:
        connection = lean(server)
        assert await connection.submit("PING") == "PONG"
        began = time.monotonic()
        with server.stopped():
            stuck = await failure_of(connection.submit("SET", "k", "v"))
        waited = time.monotonic() - began
        again = await asyncio.wait_for(connection.submit("PING"), BOUND)
        await connection.close()
        return stuck, waited, again

    stuck, waited, again = asyncio.run(scenario())
    assert isinstance(stuck, redis.TimeoutError) and "no reply" in str(stuck)
    assert waited < 2.0
    assert again == "PONG"


def test_connecting_to_a_stopped_redis_fails_within_the_connect_timeout(server: Server) -> None:
    """The kernel still accepts the socket of a stopped server; the login (AUTH) is what never comes."""
    async def scenario() -> tuple[Any, Any]:
        connection = lean(server)
        with server.stopped():
            opening = await failure_of(connection.open())
            command = await failure_of(lean(server).submit("PING"))
        await connection.close()
        return opening, command

    opening, command = asyncio.run(scenario())
    assert isinstance(opening, redis.ConnectionError) and "cannot reach Redis" in str(opening)
    assert isinstance(command, redis.ConnectionError)


def test_a_socket_cut_between_write_and_reply_fails_the_command_and_later_replies_go_to_later_commands(
        server: Server) -> None:
    async def scenario() -> tuple[Any, ...]:
        connection = lean(server)
        await connection.submit("CLIENT", "SETNAME", "victim")
        waiting = connection.submit("BLPOP", "nothing-comes", 30)  # answered only when the socket goes
        await asyncio.sleep(0.05)
        with server.client() as other:
            killed = [c["id"] for c in other.client_list() if c.get("name") == "victim"]
            for ident in killed:
                other.client_kill_filter(_id=ident)
        cut = await failure_of(waiting)
        answers = await asyncio.wait_for(asyncio.gather(*(connection.submit("ECHO", str(n)) for n in range(5))), BOUND)
        await connection.close()
        return cut, answers, killed

    cut, answers, killed = asyncio.run(scenario())
    assert len(killed) == 1
    assert isinstance(cut, redis.ConnectionError)
    assert answers == ["0", "1", "2", "3", "4"]


def test_a_closed_connection_never_connects_again(server: Server) -> None:
    async def scenario() -> tuple[Any, Any, int]:
        connection = lean(server)
        await connection.open()
        await connection.close()
        reopened = await failure_of(connection.open())
        submitted = await failure_of(connection.submit("PING"))
        await asyncio.sleep(0.1)
        return reopened, submitted, connection.transport is not None

    reopened, submitted, connected = asyncio.run(scenario())
    assert isinstance(reopened, redis.ConnectionError) and isinstance(submitted, redis.ConnectionError)
    assert not connected


def hub_on(server: Server) -> tuple[RedisHub, RedisRoomStore]:
    rooms = RedisRoomStore(open_redis(server.url + "/4", timeout=shared.TIMEOUT), prefix=f"t{free_port()}:")
    return RedisHub(rooms, heartbeat=0.2), rooms


def test_a_hub_stops_within_bounds_while_redis_is_stopped(server: Server) -> None:
    """SIGTERM while Redis does not answer: every step of the shutdown gives up in time."""
    async def scenario() -> tuple[float, Any]:
        hub, rooms = hub_on(server)
        await hub.start()
        room = Room.for_friend(name="Ann")
        await rooms.put(room)
        room.take_free_seat("Bo")
        with server.stopped():
            writing = asyncio.ensure_future(rooms.put(room))  # a move in flight as the process stops
            await asyncio.sleep(0.05)
            began = time.monotonic()
            await asyncio.wait_for(hub.stop(), 6 * BOUND)
            stopped_in = time.monotonic() - began
            move = await failure_of(writing)
        return stopped_in, move

    stopped_in, move = asyncio.run(scenario())
    assert stopped_in < 3.0
    assert isinstance(move, Rejection) and move.code == "unavailable"


def test_the_subscription_lost_during_shutdown_is_not_connected_again(server: Server) -> None:
    async def scenario() -> tuple[float, list[dict[str, Any]]]:
        hub, _ = hub_on(server)
        await hub.start()
        assert hub.listener is not None
        with server.client() as other:
            other.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
            await asyncio.sleep(0)  # the loss is read; the hub stops as it would start reconnecting
            began = time.monotonic()
            await asyncio.wait_for(hub.stop(), BOUND)
            stopped_in = time.monotonic() - began
            await asyncio.sleep(1.0)  # (past any reconnect's back-off)
            return stopped_in, [c for c in other.client_list() if int(c.get("sub", 0)) or int(c.get("psub", 0))]

    stopped_in, subscribed = asyncio.run(scenario())
    assert stopped_in < 1.0
    assert subscribed == []


def test_a_lost_subscription_comes_back_and_an_idle_one_is_checked(server: Server) -> None:
    async def scenario() -> tuple[bool, int]:
        hub, _ = hub_on(server)
        await hub.start()
        listener = hub.listener
        assert listener is not None
        first = listener.transport
        with server.client() as other:
            other.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
            deadline = time.monotonic() + BOUND
            while (listener.transport is None or listener.transport is first) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            back = listener.transport is not None and listener.transport is not first
            pings_before = listener.writes
            await asyncio.sleep(1.0)  # idle: the keep-alive PINGs it
            pinged = listener.writes - pings_before
        await asyncio.wait_for(hub.stop(), BOUND)
        return back, pinged

    back, pinged = asyncio.run(scenario())
    assert back
    assert pinged >= 2
