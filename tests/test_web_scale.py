"""The web game over several server processes sharing rooms in a real Redis.

One ``redis-server`` (Debian's package) runs for the module on a free port in a temporary
folder; each test takes a database of its own in it. Real ``noughts web --redis …`` processes
(and one ``--workers 2``) serve real websocket clients (the ``websockets`` package): two
players on different processes, a process killed with SIGKILL mid-game and a player finishing
on another, two processes racing the same seat's move. Nothing is mocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from noughts.cli import main
from noughts.store import open_store
from noughts.web import running
from noughts.web.protocol import Limits, Rejection
from noughts.web.rooms import Conflict, Room
from noughts.web.shared import PREFIX, RedisRoomStore, open_redis

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
           NO_COLOR="1")
WAIT = 20.0  # seconds any one expected message may take on a busy machine


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until(ready: Any, what: str, process: subprocess.Popen[bytes] | None = None, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if ready():
                return
        except (OSError, redis.RedisError):
            pass
        if process is not None and process.poll() is not None:
            raise AssertionError(f"{what} exited with {process.returncode}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not start within {seconds:g} s")
        time.sleep(0.05)


@contextlib.contextmanager
def running_redis(options: list[str], client: redis.Redis, what: str) -> Iterator[None]:
    """``redis-server`` with these options, for the ``with`` block, once ``client`` gets an answer."""
    process = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", *options],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(client.ping, what, process)
        yield
    finally:
        client.close()
        process.terminate()
        process.wait(10)


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server for the module; its base URL (add a database number)."""
    folder = tmp_path_factory.mktemp("redis")
    port = free_port()
    with running_redis(["--port", str(port), "--dir", str(folder), "--databases", "16"], redis.Redis(port=port),
                       "redis-server"):
        yield f"redis://127.0.0.1:{port}"


databases = itertools.count(1)


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """A Redis database of the test's own (rooms, presence and the room count are per database)."""
    return f"{redis_server}/{next(databases)}"


class WebProcess:
    """One ``noughts web --redis …`` process: started, killed, started again on the same port."""

    def __init__(self, redis_url: str, db: str, workers: int = 1, *, wait: bool = True) -> None:
        self.redis_url, self.db, self.workers = redis_url, db, workers
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        # Its output goes to a file, never a pipe nobody reads: a full pipe (64 KiB) would block the
        # server's next log line, and with it its event loop, until the test timed out.
        self.output = tempfile.TemporaryFile()  # noqa: SIM115  (closed in stop)
        if wait:
            self.start()
        else:
            self.launch()

    def start(self) -> None:
        self.launch()
        self.wait_until_healthy()

    def launch(self) -> None:
        if self.output.closed:
            self.output = tempfile.TemporaryFile()  # noqa: SIM115  (closed in stop)
        command = [sys.executable, "-m", "noughts", "web", "--port", str(self.port), "--redis", self.redis_url,
                   "--db", self.db, "--workers", str(self.workers)]
        self.process = subprocess.Popen(command, env=ENV, stdout=self.output, stderr=subprocess.STDOUT)

    def wait_until_healthy(self) -> None:
        wait_until(self.healthy, f"noughts web on port {self.port}", self.process)

    def healthy(self) -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1) as reply:
            return bool(json.load(reply)["ok"])

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(10)

    def stop(self, *, signalled: bool = False) -> int:
        """SIGTERM (unless the test already sent it), as a service manager stops it: returns the exit status.

        A second SIGTERM could reach the process after Python has put the default handlers back on its
        way out, and end it with -15 although it stopped cleanly.
        """
        assert self.process is not None
        if self.process.poll() is None:
            if not signalled:
                self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(f"noughts web on port {self.port} did not stop within 15 s of SIGTERM") from None
        self.output.close()
        return self.process.returncode


@pytest.fixture(scope="module")
def three(redis_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[WebProcess]]:
    """Three server processes sharing one Redis database and one score file."""
    db = str(tmp_path_factory.mktemp("scores") / "noughts.db")
    url = f"{redis_server}/{next(databases)}"
    servers: list[WebProcess] = []
    try:
        for _ in range(3):  # started together, then waited for
            servers.append(WebProcess(url, db, wait=False))
        for server in servers:
            server.wait_until_healthy()
        yield servers
    finally:
        for server in servers:
            server.stop()


class Player:
    """One websocket client, reading until the message it waits for (keeping others for later)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.state: dict[str, Any] | None = None
        self.pending: list[dict[str, Any]] = []

    @classmethod
    async def open(cls, port: int) -> Player:
        player = cls(await connect(f"ws://127.0.0.1:{port}/ws", open_timeout=WAIT))
        assert (await player.next())["type"] == "welcome"
        return player

    async def send(self, **message: Any) -> None:
        await self.ws.send(json.dumps(message))

    async def next(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), WAIT))
        if message["type"] == "state":
            self.state = message
        return message

    async def until(self, kind: str, **fields: Any) -> dict[str, Any]:
        def wanted(message: dict[str, Any]) -> bool:
            return message["type"] == kind and all(message.get(k) == v for k, v in fields.items())

        for message in self.pending:
            if wanted(message):
                self.pending.remove(message)
                return message
        while True:
            message = await self.next()
            if wanted(message):
                return message
            assert message["type"] != "error", message
            if message["type"] not in ("state", "pong"):
                self.pending.append(message)

    async def sees(self, moves: list[int]) -> dict[str, Any]:
        """Read states until one shows exactly these moves."""
        while self.state is None or self.state["moves"] != moves:
            message = await self.next()
            assert message["type"] != "error", message
            if message["type"] not in ("state", "pong"):
                self.pending.append(message)
        return self.state

    async def settle(self) -> list[dict[str, Any]]:
        """Everything sent so far is answered: returns the errors that came back meanwhile."""
        await self.send(type="ping")
        errors = []
        while (message := await self.next())["type"] != "pong":
            if message["type"] == "error":
                errors.append(message)
        return errors

    async def close(self) -> None:
        await self.ws.close()


async def seated(port: int, code: str, token: str, seat: int) -> Player:
    """A player back in their seat (a reload, or a reconnection after a process died)."""
    player = await Player.open(port)
    await player.send(type="join", room=code, token=token)
    joined = await player.until("joined")
    assert (joined["room"], joined["seat"]) == (code, seat)
    return player


async def friends(ann_port: int, bo_port: int, first: str = "me") -> tuple[Player, Player, str, list[str]]:
    """Ann makes a room on one process, Bo joins it on another: both players, the code, the tokens."""
    ann, bo = await Player.open(ann_port), await Player.open(bo_port)
    await ann.send(type="create_room", name="Ann", first=first)
    joined = await ann.until("joined")
    await bo.send(type="join", room=joined["room"], name="Bo")
    taken = await bo.until("joined")
    assert taken["seat"] == 1
    return ann, bo, joined["room"], [joined["token"], taken["token"]]


def run(scenario: Any) -> Any:
    return asyncio.run(asyncio.wait_for(scenario, 120))


def test_two_players_on_two_processes_finish_a_game_through_a_sigkill_and_a_restart(three: list[WebProcess]) -> None:
    first, second, third = three

    async def scenario() -> dict[str, Any]:
        ann, bo, code, tokens = await friends(first.port, second.port)
        state = await bo.sees([])
        assert [s["connected"] for s in state["seats"]] == [True, True]  # Ann's socket is on another process
        for player, cell, moves in ((ann, 4, [4]), (bo, 0, [4, 0])):
            await player.send(type="move", cell=cell)
            await ann.sees(moves)
            await bo.sees(moves)

        first.kill()  # Ann's process dies mid-game, without a word
        with pytest.raises(ConnectionClosed):
            while True:
                await ann.next()
        ann = await seated(third.port, code, tokens[0], 0)  # her page reconnects and reaches another process
        assert (await ann.sees([4, 0]))["seats"][0]["name"] == "Ann"
        await ann.send(type="move", cell=1)
        await bo.sees([4, 0, 1])

        first.start()  # the dead process comes back; Bo's page happens to reach it
        await bo.close()
        bo = await seated(first.port, code, tokens[1], 1)
        await bo.sees([4, 0, 1])
        await bo.send(type="move", cell=2)
        await ann.sees([4, 0, 1, 2])
        await ann.send(type="move", cell=7)  # X down the middle column
        final = await bo.sees([4, 0, 1, 2, 7])
        assert final["result"] == "X" and final["line"] == [1, 4, 7]
        recorded = [await ann.until("recorded"), await bo.until("recorded")]  # from Ann's process, via Redis
        assert recorded[0]["game_id"] is not None and recorded[0] == recorded[1]
        await ann.close()
        await bo.close()
        return recorded[0]

    recorded = run(scenario())
    with open_store(first.db) as store:
        games = store.games(limit=10)
        assert [(g.id, g.x.name, g.o.name, g.result) for g in games] == [(recorded["game_id"], "Ann", "Bo", "X")]


def test_two_processes_racing_one_seats_move_accept_exactly_one(three: list[WebProcess]) -> None:
    """Ann's seat is open in two tabs on two processes; both send a move at once, over and over."""
    first, second, third = three

    async def scenario() -> tuple[int, int]:
        tab1, bo, code, tokens = await friends(first.port, third.port)
        tab2 = await seated(second.port, code, tokens[0], 0)
        races = errors_seen = 0
        while races < 12:
            state = await tab1.sees(tab1.state["moves"] if tab1.state else [])
            if state["result"] is not None:
                await tab1.send(type="rematch")
                await tab1.until("state", game=state["game"] + 1)
                continue
            turn = next(n for n, s in enumerate(state["seats"]) if s["mark"] == state["turn"])
            free = [n for n, mark in enumerate(state["cells"]) if mark is None]
            before = state["moves"]
            if turn == 1:
                await bo.sees(before)
                await bo.send(type="move", cell=free[0], game=state["game"])
                await tab1.sees([*before, free[0]])
                continue
            cells = (free[0], free[-1]) if len(free) > 1 else (free[0], free[0])
            await asyncio.gather(tab1.send(type="move", cell=cells[0], game=state["game"]),
                                 tab2.send(type="move", cell=cells[1], game=state["game"]))
            tabs = (tab1, tab2)
            refused = await asyncio.gather(tab1.settle(), tab2.settle())
            reasons = {e["code"] for errors in refused for e in errors}
            assert reasons <= {"not_your_turn", "occupied", "stale", "game_over"}, refused
            accepted = [not errors for errors in refused]
            assert accepted.count(True) == 1, refused  # never both, never neither
            winner = accepted.index(True)
            after = tabs[winner].state  # its own process showed it before the pong
            assert after is not None and after["game"] == state["game"]
            assert after["moves"] == [*before, cells[winner]], (before, after["moves"], refused)
            await tabs[1 - winner].sees(after["moves"])  # the loser's process hears of it through Redis
            await bo.sees(after["moves"])
            errors_seen += sum(len(errors) for errors in refused)
            races += 1
        for player in (tab1, tab2, bo):
            await player.close()
        return races, errors_seen

    races, refused = run(scenario())
    assert races == 12 and refused >= 12  # every race had a loser, and the loser was told


def test_a_room_store_writes_only_over_the_version_it_read(redis_url: str) -> None:
    async def scenario() -> None:
        one, two = (RedisRoomStore(open_redis(redis_url), max_rooms=3, ttl=60) for _ in range(2))
        room = Room.for_friend(name="Ann")
        room.take_free_seat("Bo")
        await one.put(room)
        a, b = await one.get(room.code), await two.get(room.code)
        assert a is not None and b is not None and a.stored_version == b.stored_version == room.version
        a.play(0, 4)
        b.play(0, 0)
        await one.put(a)
        with pytest.raises(Conflict):
            await two.put(b)  # read before a's move: never written over it
        again = await two.get(room.code)
        assert again is not None and again.moves == (4,) and again.stored_version == a.version
        with pytest.raises(Rejection) as refused:
            again.play(0, 0)
        assert refused.value.code == "not_your_turn"  # what the loser's retry tells the person
        twin = Room.for_friend(name="Cy")
        twin.code = room.code
        with pytest.raises(Conflict):
            await two.put(twin)  # a new room never takes a code in use
        listener = one.client.pubsub(ignore_subscribe_messages=True)
        await listener.subscribe(one.channel(room.code))
        again.play(1, 0)
        await two.put(again)  # nobody else is in the room: the write publishes nothing
        await one.client.hset(one.presence_key(room.code), two.process, "1,0,0")
        again.play(0, 8)
        await two.put(again)  # its own presence only: still nothing
        await one.client.hset(one.presence_key(room.code), one.process, "0,1,0")
        again.play(1, 2)
        await two.put(again)  # another process has a socket there: the state goes out with the write
        heard = [m for m in [await listener.get_message(timeout=1) for _ in range(3)] if m is not None]
        assert [json.loads(m["data"])["s"]["moves"] for m in heard] == [[4, 0, 8, 2]]
        assert json.loads(heard[0]["data"])["v"] == again.stored_version
        await listener.aclose()
        ttl = await one.client.pttl(one.key(room.code))
        assert 60_000 < ttl <= 120_000  # the time to live and a minute's grace, renewed by each write
        for _ in range(2):
            await one.put(Room.for_computer("easy"))
        with pytest.raises(Rejection) as full:
            await one.put(Room.for_computer("easy"))
        assert full.value.code == "full" and await one.count() == 3
        await one.client.set(one.key("DAMAGED"), "7|{not json")
        assert await one.get("DAMAGED") is None
        gone = await asyncio.gather(one.expire(time.time() + 61), two.expire(time.time() + 61))
        assert len(gone[0]) + len(gone[1]) == 3 and not set(gone[0]) & set(gone[1])  # each room expires once
        assert await one.count() == 0 and await one.get(room.code) is None
        for store in (one, two):
            await store.client.aclose()

    run(scenario())


def test_rooms_expire_once_and_everyone_on_every_process_is_told(redis_url: str) -> None:
    limits = Limits(room_ttl=1.0, sweep_every=0.2)
    with running(redis=redis_url, limits=limits, scores=False) as one, \
            running(redis=redis_url, limits=limits, scores=False) as two:
        ports = [int(url.rsplit(":", 1)[1]) for url in (one, two)]

        async def scenario() -> list[dict[str, Any]]:
            ann, bo, code, _ = await friends(ports[0], ports[1])
            closed = [await ann.until("closed"), await bo.until("closed")]
            assert all(c["room"] == code for c in closed)
            with pytest.raises(AssertionError, match="no_room"):
                await ann.send(type="join", room=code)
                await ann.until("joined")
            await ann.close()
            await bo.close()
            return closed

        closed = run(scenario())
    assert closed[0]["message"] == closed[1]["message"]
    assert redis.Redis.from_url(redis_url).zcard(PREFIX + "rooms") == 0


def test_workers_share_one_port_survive_a_killed_worker_and_stop_on_sigterm(redis_url: str, tmp_path: Path) -> None:
    server = WebProcess(redis_url, str(tmp_path / "noughts.db"), workers=2)
    assert server.process is not None
    children: list[int] = []
    signalled = False

    def workers() -> list[int]:
        """The supervisor's worker processes (not its other helpers, such as multiprocessing's tracker)."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, IndexError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                mine = int(fields[1]) == server.process.pid and fields[0] != "Z"  # type: ignore[union-attr]
                if mine and b"spawn_main" in (stat.parent / "cmdline").read_bytes():
                    found.append(int(stat.parent.name))
        return found

    try:
        assert len(workers()) == 2
        original = workers()

        async def move(code: str, token: str, cell: int, moves: list[int]) -> dict[str, Any]:
            """Each move on a new connection, as after a reload: whichever worker takes it."""
            player = await seated(server.port, code, token, 0)
            await player.sees(moves)
            await player.send(type="move", cell=cell)
            state = await player.sees([*moves, cell])
            await player.close()
            return state

        async def scenario() -> None:
            ann = await Player.open(server.port)
            await ann.send(type="create_room", name="Ann", first="me")
            joined = await ann.until("joined")
            await ann.close()
            code, token = joined["room"], joined["token"]
            bo = await Player.open(server.port)
            await bo.send(type="join", room=code, name="Bo")
            bo_token = (await bo.until("joined"))["token"]
            await move(code, token, 4, [])
            await bo.sees([4])
            await bo.send(type="move", cell=0)
            await bo.sees([4, 0])
            os.kill(workers()[0], signal.SIGKILL)  # one worker dies; the supervisor starts another
            await bo.close()
            for _attempt in range(100):  # a page retries until it is back in its seat
                try:
                    bo = await seated(server.port, code, bo_token, 1)
                    break
                except (TimeoutError, OSError, ConnectionClosed, AssertionError):
                    await asyncio.sleep(0.1)
            await move(code, token, 1, [4, 0])
            await bo.sees([4, 0, 1])
            await bo.send(type="move", cell=2)
            await bo.sees([4, 0, 1, 2])
            await move(code, token, 7, [4, 0, 1, 2])
            final = await bo.sees([4, 0, 1, 2, 7])
            assert final["result"] == "X"
            await bo.close()

        run(scenario())
        # (a killed process still counts until the kernel has torn it down: slow on a busy machine)
        wait_until(lambda: len(now := workers()) == 2 and not set(now) <= set(original), "the replacement worker")
        # A worker that does not answer the supervisor's health check (stopped here; on a busy machine,
        # a replacement still starting) must not hold up SIGTERM: before, it did for 5 s per round.
        children = workers()
        slow = next(pid for pid in children if pid not in original)  # the replacement: it may still be starting
        other = next(pid for pid in children if pid in original)  # the survivor: serving, stops at once
        os.kill(slow, signal.SIGSTOP)
        try:
            time.sleep(0.6)  # the supervisor is waiting for the stopped worker's answer by now
            server.process.send_signal(signal.SIGTERM)
            signalled = True
            asked = time.monotonic()
            wait_until(lambda: other not in workers(), "the other worker's exit", seconds=15)
            stopped_in = time.monotonic() - asked
        finally:
            with contextlib.suppress(ProcessLookupError):  # (the supervisor may have killed it)
                os.kill(slow, signal.SIGCONT)  # it stops in turn: the signal is waiting for it
        assert stopped_in < 4.5, f"a worker was asked to stop {stopped_in:.1f} s after SIGTERM"  # uvicorn's: ≥ 5 s
    finally:
        children = children or workers()
        status = server.stop(signalled=signalled)
    assert status == 0
    assert len(children) == 2 and not [pid for pid in children if Path(f"/proc/{pid}").exists()]


def test_more_than_one_worker_needs_redis_and_an_unreachable_redis_is_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["web", "--workers", "2"]) == 2
    assert "--workers needs --redis" in capsys.readouterr().err
    port = free_port()  # nothing listens there
    assert main(["web", "--redis", f"redis://127.0.0.1:{port}/0", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"noughts: cannot reach Redis at redis://127.0.0.1:{port}/0") and err.count("\n") == 1
    assert main(["web", "--redis", "http://example.com"]) == 2
    assert "is not a Redis address" in capsys.readouterr().err


def test_the_page_says_it_is_reconnecting_and_resumes_its_seat_when_its_process_comes_back(
        three: list[WebProcess]) -> None:
    from playwright.sync_api import expect, sync_playwright

    from test_web_browser import CHROMIUM_ARGS, DESKTOP, chromium_path  # the browser tests' own settings

    server = three[0]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=DESKTOP)
            page.set_default_timeout(15_000)
            problems: list[str] = []
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.goto(f"http://127.0.0.1:{server.port}/")
            page.select_option("#opponent", "parsons")
            page.select_option("#first", "me")
            page.get_by_role("button", name="Play the computer").click()
            page.wait_for_function("() => window.noughts.state && window.noughts.state.turn === 'X'")
            page.locator("#board .cell[data-index='0']").click()
            page.wait_for_function("() => window.noughts.state.moves.length === 2")  # mine and the computer's
            before = page.evaluate("window.noughts.state")

            server.kill()
            connection = page.locator("#connection")
            expect(connection).to_have_text("Connection lost. Reconnecting…")
            expect(connection).to_have_class("connection lost")
            server.start()  # the same port: as a restarted service, or another process behind a proxy
            expect(connection).to_have_text("Reconnected.")
            page.wait_for_function("() => window.noughts.seat === 0 && window.noughts.state.moves.length === 2")
            assert page.evaluate("window.noughts.state")["moves"] == before["moves"]
            assert page.evaluate("window.noughts.state")["room"] == before["room"]
            free = next(n for n, mark in enumerate(before["cells"]) if mark is None)
            page.locator(f"#board .cell[data-index='{free}']").click()
            page.wait_for_function("() => window.noughts.state.moves.length >= 3")
            assert page.evaluate("window.noughts.state")["moves"][2] == free
            assert not problems, problems
        finally:
            browser.close()


def test_quick_games_between_two_processes_are_never_refused_a_fair_move(three: list[WebProcess]) -> None:
    """Six rooms, each host on one process and each guest on another, moving quickly.

    Every refusal here would be the server's fault: a player moves only when a state says it is
    their turn, on a free cell (a copy of a room kept by a process must never be behind).
    """
    first, second, _ = three

    async def seat(ws: ClientConnection, number: int, stop_at: float, finished: list[int]) -> None:
        waiting: tuple[int, int] | None = None  # the game and the number of moves a sent move awaits
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
            assert message["type"] != "error", message
            if message["type"] != "state":
                continue
            state = message
            if waiting and (state["game"] > waiting[0] or len(state["moves"]) >= waiting[1]):
                waiting = None
            if state["result"] is not None:
                if number == 0:
                    finished.append(state["game"])
                if time.monotonic() >= stop_at:
                    return
                if number == 0:
                    await ws.send('{"type":"rematch"}')
                continue
            mine = state["seats"][number]
            if waiting is None and mine is not None and mine["mark"] == state["turn"]:
                await asyncio.sleep(0.015)  # within the default 20 messages a second after a burst of 40
                cell = next(n for n, mark in enumerate(state["cells"]) if mark is None)
                waiting = (state["game"], len(state["moves"]) + 1)
                await ws.send(json.dumps({"type": "move", "cell": cell, "game": state["game"]}))

    async def room(stop_at: float, finished: list[int]) -> None:
        ann, bo, _, _ = await friends(first.port, second.port, first="alternate")
        try:
            await asyncio.wait_for(asyncio.gather(seat(ann.ws, 0, stop_at, finished),
                                                  seat(bo.ws, 1, stop_at, finished)), 30)
        except TimeoutError:
            pass  # a guest still waiting for a rematch its host, past the end, will not ask for
        finally:
            await ann.close()
            await bo.close()

    async def scenario() -> list[int]:
        finished: list[int] = []
        stop_at = time.monotonic() + 1.5
        await asyncio.gather(*(room(stop_at, finished) for _ in range(6)))
        return finished

    finished = run(scenario())
    assert len(finished) >= 6  # every room finished at least one game, and nothing was refused


def test_a_kept_copy_behind_another_process_is_read_afresh_before_a_move_is_refused(redis_url: str) -> None:
    """A process keeps the rooms of its sockets as it last wrote them; another process moves
    meanwhile and its news has not arrived yet. The next move must be judged on the room as it is."""
    from noughts.web.hub import Hub
    from noughts.web.lobby import Lobby
    from noughts.web.recording import Recorder

    async def scenario() -> None:
        mine, other = (RedisRoomStore(open_redis(redis_url)) for _ in range(2))
        room = Room.for_friend(name="Ann", first="me")
        room.take_free_seat("Bo")
        mine.local = {room.code}
        await mine.put(room)  # kept by this process as written: Ann (X) to move
        lobby = Lobby(Limits(), mine, Recorder(None, enabled=False), Hub(mine))
        await lobby._update(room.code, lambda r: r.play(0, 4), "gone")
        elsewhere = await other.get(room.code)
        assert elsewhere is not None
        elsewhere.play(1, 0)  # Bo moves on another process; this one has not heard yet
        await other.put(elsewhere)
        played, _ = await lobby._update(room.code, lambda r: r.play(0, 8), "gone")
        assert played.moves == (4, 0, 8)  # not "It is not your turn": the kept copy was behind
        with pytest.raises(Rejection) as refused:  # a refusal the room as it is deserves still comes
            await lobby._update(room.code, lambda r: r.play(0, 2), "gone")
        assert refused.value.code == "not_your_turn"
        stored = await other.get(room.code)
        assert stored is not None and stored.moves == (4, 0, 8)
        fresh = await mine.get(room.code)
        assert fresh is not None and not fresh.cached
        await mine.put(fresh)
        writing = await mine.get(room.code)
        assert writing is not None and writing.cached  # kept from the last write
        assert writing.stored_version is not None
        mine.forget(room.code, older_than=writing.stored_version + 2)  # news of a later change, mid-write
        await mine.put(writing)
        after = await mine.get(room.code)
        assert after is not None and not after.cached  # not kept over the newer change it heard of
        for store in (mine, other):
            await store.client.aclose()

    run(scenario())


@pytest.fixture(scope="module")
def tls_redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server that speaks only TLS, with a certificate of its own: a URL that trusts it."""
    folder = tmp_path_factory.mktemp("redis-tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    port = free_port()
    options = ["--port", "0", "--tls-port", str(port), "--dir", str(folder), "--tls-cert-file", str(cert),
               "--tls-key-file", str(key), "--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no"]
    with running_redis(options, redis.Redis(host="127.0.0.1", port=port, ssl=True, ssl_ca_certs=str(cert)),
                       "redis-server with TLS"):
        yield f"rediss://127.0.0.1:{port}/1?ssl_ca_certs={cert}"


def test_two_processes_share_a_game_through_a_redis_that_speaks_only_tls(tls_redis_url: str, tmp_path: Path) -> None:
    """TLS goes through redis-py's own connections and subscription, not the lean ones: the same game works."""
    db = str(tmp_path / "noughts.db")
    first, second = WebProcess(tls_redis_url, db, wait=False), WebProcess(tls_redis_url, db, wait=False)
    try:
        first.wait_until_healthy()
        second.wait_until_healthy()

        async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
            ann, bo, _, _ = await friends(first.port, second.port)
            moves: list[int] = []
            for player, cell in ((ann, 0), (bo, 3), (ann, 1), (bo, 4), (ann, 2)):
                await player.send(type="move", cell=cell)
                moves.append(cell)
                await ann.sees(moves)
                await bo.sees(moves)
            assert bo.state is not None and bo.state["result"] == "X"
            recorded = (await ann.until("recorded"), await bo.until("recorded"))
            await ann.close()
            await bo.close()
            return recorded

        ann_told, bo_told = run(scenario())
        assert ann_told["game_id"] is not None and ann_told == bo_told
    finally:
        for server in (first, second):
            server.stop()  # (uvicorn raises SIGTERM again once it has stopped cleanly: the status is -15)
    with open_store(db) as store:
        assert [(g.x.name, g.o.name, g.result) for g in store.games(limit=10)] == [("Ann", "Bo", "X")]


def test_without_the_redis_package_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts import web
    from noughts.errors import NoughtsError

    monkeypatch.setitem(sys.modules, "redis", None)  # an import of it now fails
    with pytest.raises(NoughtsError) as caught:
        web.serve(port=0, redis="redis://127.0.0.1:6379/0")
    assert str(caught.value) == web.MISSING


def test_a_killed_process_is_out_of_its_rooms_within_seconds_and_a_move_sent_again_is_done_once(
        three: list[WebProcess]) -> None:
    """Ann's process dies right after her move: Bo soon sees her away; her page, reconnected to another
    process, sends the move again (its answer was lost) and hears it was done, not refused."""
    first, second, third = three

    async def scenario() -> tuple[float, dict[str, Any]]:
        ann, bo, code, tokens = await friends(first.port, second.port)
        await bo.sees([])
        move = {"type": "move", "cell": 4, "game": 1, "ply": 0, "id": "m.1.0.4"}
        await ann.send(**move)
        state = await bo.sees([4])
        assert state["seats"][0]["connected"]
        first.kill()
        killed = time.monotonic()
        while (await bo.next())["type"] != "state" or bo.state is None or bo.state["seats"][0]["connected"]:
            pass
        away = time.monotonic() - killed
        ann = await seated(third.port, code, tokens[0], 0)
        await ann.send(**move)
        answer = await ann.until("done", id="m.1.0.4")
        assert not await ann.settle() and (await ann.sees([4]))["moves"] == [4]
        for player in (ann, bo):
            await player.close()
        return away, answer

    try:
        away, answer = run(scenario())
    finally:
        first.start()
    print(f"a killed process's sockets counted as away after {away:.2f} s")
    assert away < 12.0  # a 3 s lease on 1 s heartbeats; the old 15 s lease never got under 12 s (load-proof margin)
    assert answer == {"type": "done", "re": "move", "repeated": True, "id": "m.1.0.4"}


LIMITED = ('import json, sys\nfrom noughts.web import serve\nfrom noughts.web.protocol import Limits\n'
           'serve(port=int(sys.argv[1]), redis=sys.argv[2], scores=False, limits=Limits(**json.loads(sys.argv[3])))\n')
SMALL = {"rooms_per_address": 2, "address_share": 1.0, "failed_joins": 3, "join_burst": 5, "join_rate": 0.01,
         "connections_per_address": 3, "rate": 1e6, "burst": 1e6}


class LimitedProcess(WebProcess):
    """A server process with small per-address limits (``serve`` with a ``Limits``)."""

    def start(self) -> None:
        command = [sys.executable, "-c", LIMITED, str(self.port), self.redis_url, json.dumps(SMALL)]
        self.process = subprocess.Popen(command, env=ENV, stdout=self.output, stderr=subprocess.STDOUT)
        wait_until(self.healthy, f"a limited server on port {self.port}", self.process)


async def from_address(port: int, source: str) -> Player:
    player = Player(await connect(f"ws://127.0.0.1:{port}/ws", open_timeout=WAIT, local_addr=(source, 0)))
    assert (await player.next())["type"] == "welcome"
    return player


async def answer_to(player: Player, **message: Any) -> dict[str, Any]:
    await player.send(**message)
    while (answer := await player.next())["type"] not in ("joined", "error"):
        pass
    return answer


def test_per_address_limits_hold_over_every_process_on_one_redis(redis_url: str, tmp_path: Path) -> None:
    """Before, each process kept its own counts: two processes gave an address twice its share."""
    one, two = LimitedProcess(redis_url, ""), LimitedProcess(redis_url, "")

    async def scenario() -> None:
        maker = [await from_address(server.port, "127.0.0.11") for server in (one, one, two)]
        made = [await answer_to(maker[n], type="create_room") for n in range(2)]
        assert [m["type"] for m in made] == ["joined", "joined"]
        assert (await answer_to(maker[2], type="create_room"))["code"] == "too_many_rooms"

        guesser = [await from_address(server.port, "127.0.0.12") for server in (one, two)]
        for n, server in enumerate((0, 0, 1)):  # the third failure, on the other process, locks the address out
            assert (await answer_to(guesser[server], type="join", room=f"ZZZZZZZZZZZ{n}"))["code"] == "no_room"
        assert (await answer_to(guesser[0], type="join", room=made[0]["room"]))["code"] == "locked_out"

        joiner = [await from_address(server.port, "127.0.0.13") for server in (one, two)]
        codes = [await answer_to(joiner[n % 2], type="join", room=made[0]["room"]) for n in range(5)]
        assert [c["type"] for c in codes] == ["joined"] * 5
        assert (await answer_to(joiner[1], type="join", room=made[0]["room"]))["code"] == "too_many_joins"

        held = [await from_address(server.port, "127.0.0.14") for server in (one, two, two)]
        with pytest.raises((InvalidStatus, ConnectionClosed, OSError)):  # the fourth, on either process
            extra = await from_address(one.port, "127.0.0.14")
            while True:  # (closed at once if it got through the handshake first)
                await extra.next()
        for player in (*maker, *guesser, *joiner, *held):
            await player.close()

    try:
        run(scenario())
    finally:
        one.stop()
        two.stop()


def test_a_process_whose_pooled_redis_connections_are_all_busy_still_beats_its_heart(redis_url: str) -> None:
    """Under load every pooled connection may be taken (the per-address checks of a burst of new
    sockets, each waiting on a lagging event loop): the heartbeat must not queue behind them, or the
    other processes take a live process for dead and drop its players from every room (seen in
    benchmarks/web_load.py at 1,000-10,000 games on a busy machine)."""
    from noughts.web.shared import RedisHub

    async def scenario() -> tuple[float, float]:
        store = RedisRoomStore(open_redis(redis_url, connections=2))
        hub = RedisHub(store, heartbeat=0.05)
        reader = redis.asyncio.Redis.from_url(redis_url)
        await hub.start()
        await asyncio.sleep(0.2)  # beating
        pool = store.client.connection_pool
        pool.timeout, busy = 0.1, []
        with contextlib.suppress(redis.exceptions.ConnectionError):
            while True:  # every pooled connection in use (the subscription holds one for good)
                busy.append(await pool.get_connection())
        assert busy
        key = f"{store.prefix}processes"
        before = await reader.zscore(key, hub.process)
        await asyncio.sleep(0.6)  # twelve heartbeats
        after = await reader.zscore(key, hub.process)
        for connection in busy:
            await pool.release(connection)
        await asyncio.wait_for(hub.stop(), 10)
        await reader.aclose()
        assert before is not None and after is not None
        return before, after

    before, after = run(scenario())
    assert after - before > 0.3  # the last beat landed within the last few of the twelve


def test_the_writes_of_one_loop_turn_go_to_redis_in_one_write(redis_url: str) -> None:
    """Every command issued in one turn of the event loop goes to Redis in one write, on redis-py's own
    connection (noughts.web.shared.Batch): three rooms' moves in one turn cost one write, not three."""

    async def scenario() -> None:
        store, reader = (RedisRoomStore(open_redis(redis_url)) for _ in range(2))
        rooms = []
        for name in ("Ann", "Bo", "Cy"):
            room = Room.for_friend(name=name)
            room.take_free_seat("Di")
            await store.put(room)  # one at a time: a write each
            rooms.append(room)
        assert store.batch.writes == 3
        for room in rooms:
            room.play(room.match.seat_to_move, 4)
        await asyncio.gather(*(store.put(room) for room in rooms))  # three moves in one turn
        assert store.batch.writes == 4
        read = await asyncio.gather(*(reader.get(room.code) for room in rooms))
        assert [r.moves if r else None for r in read] == [(4,)] * 3
        assert reader.batch.writes == 1  # three reads, one write
        for one in (store, reader):
            await one.batch.close()
            await one.client.aclose()

    run(scenario())


class _Socket:
    """What a hub needs of a websocket: where it is, and what it was sent."""

    def __init__(self) -> None:
        self.room: str | None = None
        self.seat: int | None = None
        self.shown: Any = None
        self.sent: list[dict[str, Any]] = []

    def push(self, message: Any) -> None:
        self.sent.append(json.loads(message) if isinstance(message, str) else message)

    async def until_moves(self, moves: list[int]) -> None:
        while not any(m.get("type") == "state" and m.get("moves") == moves for m in self.sent):
            await asyncio.sleep(0.01)


async def subscribers(client: Any, channel: str) -> int:
    """How many connections Redis has subscribed to ``channel``."""
    [(_, count)] = await client.pubsub_numsub(channel)
    return int(count)


def test_a_change_heard_from_another_process_needs_no_read_for_the_next_move_here(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process's write publishes the room as stored, so this process's next move in it is one
    scripted write, not a read and a write; the subscription comes back by itself when its connection
    is lost, subscribed to the room again, and hears the room's later changes."""
    from noughts.web import shared

    async def scenario() -> None:
        mine = RedisRoomStore(open_redis(redis_url))
        hub = shared.RedisHub(mine, heartbeat=0.2)
        other = RedisRoomStore(open_redis(redis_url))
        await hub.start()
        room = Room.for_friend(name="Ann", first="me")
        room.take_free_seat("Bo")
        await other.put(room)
        ann = _Socket()
        await hub.attach(ann, room.code, 0)  # type: ignore[arg-type]
        assert await subscribers(other.client, hub.channel(room.code)) == 1  # confirmed before attach returned
        sent: list[str] = []
        submit = mine.batch.submit
        monkeypatch.setattr(mine.batch, "submit", lambda *command: (sent.append(command[0]), submit(*command))[1])

        async def bo_moves(cell: int) -> list[int]:
            there = await other.get(room.code)
            assert there is not None
            there.play(1, cell)
            await other.put(there)
            await asyncio.wait_for(ann.until_moves(list(there.moves)), WAIT)
            return list(there.moves)

        here = await mine.get(room.code)
        assert here is not None
        here.play(0, 4)
        await mine.put(here)
        await bo_moves(0)
        sent.clear()
        here = await mine.get(room.code)
        assert here is not None and here.moves == (4, 0) and sent == []  # no read
        here.play(0, 8)
        await mine.put(here)  # the version it was told is the one stored: the write is accepted
        assert sent == ["EVALSHA"]
        await other.client.execute_command("CLIENT", "KILL", "TYPE", "pubsub")  # the subscription is lost
        while await subscribers(other.client, hub.channel(room.code)) != 1:  # until subscribed again
            await asyncio.sleep(0.05)
        await bo_moves(2)
        await asyncio.wait_for(hub.stop(), WAIT)
        await other.batch.close()
        await other.client.aclose()

    run(scenario())


class StoppableRedis:
    """A redis-server of the test's own, with a password, that the test may stop (SIGSTOP) and continue."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.url = f"redis://:sesame@127.0.0.1:{self.port}/3"
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

    def end(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)
        self.process.terminate()
        self.process.wait(10)


@pytest.fixture
def stoppable_redis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StoppableRedis]:
    """A stoppable redis-server, with the hub's waits shortened (every await must end while it is stopped)."""
    from noughts.web import shared

    monkeypatch.setattr(shared, "TIMEOUT", 0.4)
    monkeypatch.setattr(shared, "LISTEN_CHECK", 0.3)
    server = StoppableRedis(tmp_path)
    try:
        yield server
    finally:
        server.end()


BOUND = 4.0  # seconds within which each await on a stopped Redis must end (the shortened waits are well below)


def test_a_command_to_a_stopped_redis_fails_and_the_next_one_reconnects(stoppable_redis: StoppableRedis) -> None:
    from noughts.web import shared

    async def scenario() -> tuple[Any, Any, Any]:
        store = RedisRoomStore(open_redis(stoppable_redis.url, timeout=shared.TIMEOUT))
        first = await store.batch.call("PING")
        with stoppable_redis.stopped():
            try:
                await asyncio.wait_for(store.batch.call("SET", "k", "v"), BOUND)
                stuck: Any = None
            except redis.RedisError as error:
                stuck = error
        again = await asyncio.wait_for(store.batch.call("PING"), BOUND)
        await store.batch.close()
        await store.client.aclose()
        return first, stuck, again

    first, stuck, again = run(scenario())
    assert first == again == "PONG"
    assert isinstance(stuck, redis.TimeoutError)


def test_a_hub_stops_while_redis_is_stopped_and_a_move_in_flight_is_refused(stoppable_redis: StoppableRedis) -> None:
    """SIGTERM while Redis does not answer: every step of the shutdown gives up in time."""
    from noughts.web import shared

    async def scenario() -> Any:
        rooms = RedisRoomStore(open_redis(stoppable_redis.url, timeout=shared.TIMEOUT))
        hub = shared.RedisHub(rooms, heartbeat=0.2)
        await hub.start()
        room = Room.for_friend(name="Ann")
        await rooms.put(room)
        room.take_free_seat("Bo")
        with stoppable_redis.stopped():
            writing = asyncio.ensure_future(rooms.put(room))  # a move in flight as the process stops
            await asyncio.sleep(0.05)
            await asyncio.wait_for(hub.stop(), 6 * BOUND)
            try:
                await asyncio.wait_for(writing, BOUND)
            except Rejection as refused:
                return refused
        return None

    move = run(scenario())
    assert isinstance(move, Rejection) and move.code == "unavailable"


def test_an_idle_subscription_is_pinged_and_one_that_stops_answering_comes_back(
        stoppable_redis: StoppableRedis) -> None:
    """A subscription that hears nothing is PINGed; when Redis stops answering (a dead peer: no FIN, no
    error) its connection is dropped, and once Redis answers again the hub is subscribed again."""
    from noughts.web import shared

    async def scenario() -> tuple[int, int, int]:
        rooms = RedisRoomStore(open_redis(stoppable_redis.url, timeout=shared.TIMEOUT))
        hub = shared.RedisHub(rooms, heartbeat=0.2)
        await hub.start()
        room = Room.for_friend(name="Ann")
        await rooms.put(room)
        await hub.attach(_Socket(), room.code, 0)  # type: ignore[arg-type]
        channel = hub.channel(room.code)
        while hub.pings < 2:  # idle: PINGed, and the PINGs answered
            await asyncio.sleep(0.05)
        pinged = hub.pings
        checker = open_redis(stoppable_redis.url)
        [first] = await checker.client_list(_type="pubsub")
        with stoppable_redis.stopped():
            while not hub.outages:
                await asyncio.sleep(0.05)
        while True:  # until the old connection is gone and a new one is subscribed to the room
            listed = [c["id"] for c in await checker.client_list(_type="pubsub")]
            if listed and first["id"] not in listed and await subscribers(checker, channel) == 1:
                break
            await asyncio.sleep(0.05)
        again = listed != [first["id"]]
        await checker.aclose()
        await asyncio.wait_for(hub.stop(), WAIT)
        return pinged, int(again), hub.outages

    pinged, reconnected, outages = run(scenario())
    assert pinged >= 2 and reconnected == 1
    assert outages == 1  # one, however long it took to come back
