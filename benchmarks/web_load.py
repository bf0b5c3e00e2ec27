"""Load test of the web game: ``python benchmarks/web_load.py [--quick] [--json FILE]``.

Starts ``noughts.web.serve`` in a separate process on a free loopback port (a fresh score
file in a temporary folder), then opens many websocket clients (the ``websockets`` library,
asyncio, one process) that play whole games, one after another, exactly as a page does: half
the games against a computer player, half in rooms between two clients. Each client waits a
"think time" before every move, like a person; a move's latency is the time from sending it
until the mover sees the board come back (against the computer: with the computer's reply).

For each level (100 and 1,000 concurrent games by default) it reports moves per second, the
p50/p99/max move latency and the server process's CPU use, measured over a fixed window after
every client has connected; then one run without think time shows the server's capacity.
Target: 1,000 concurrent games with p99 ≤ 20 ms. Everything stops by itself: each level has a
time limit and the server is stopped at the end whatever happens.

``--redis`` measures the shared setup too: a ``redis-server`` started for the run in a temporary
folder and ``--workers`` (default 2) server processes sharing one port and the rooms in it, after
the one process of the default setup, at the same levels, as its peer. Server CPU is then the
workers' and the supervisor's together; Redis's own CPU is reported beside it. CPU per move is
the server's CPU over the window divided by the clients' moves answered in it.

The server runs as deployed (``--defences deployed``, the default): every per-address cap, rate
limit and timeout at its default, only the totals of rooms and connections sized for the run,
and every client socket connects from an address of its own (``127.1.0.0/16`` and up: all of
127/8 is this machine), as players on their own machines would; ``--defences off`` is the old
setup, everyone from 127.0.0.1 with no limits (the no-think capacity run always uses it, on a
server of its own). A socket that does not open within 10 s, or is closed or refused before its
handshake, is opened again after about a second, doubling, as the page does; a game whose
socket has not opened after 6 attempts counts as never started. Each level reports the games
started, finished, and told saved or not saved, the moves sent, answered and lost, the sockets
opened again and why, and the connections the kernel dropped at a full listen queue (those
clients wait for TCP to retry: seconds, up to minutes). That counter is the network namespace's:
run under ``unshare -n sh -c 'ip link set lo up; …'`` (root) to have one of the run's own.
After each setup the score store is counted: every game the clients saw finish must be there
once (distinct game keys), but for those whose players were told it was not saved (a score
store not keeping up). ``--db postgresql`` records into a PostgreSQL server started for the run
(tests/pg_server.py, with fsync on) instead of a SQLite file.

Issue 12's scenario is ``--scenario`` (``--redis --only-redis --levels 10000 --cpu-runs 0
--capacity-games 0``): 10,000 games over 2 workers and Redis, each player moving every 3 s on
average; 15,000 client sockets, so the descriptor limit must allow that many in the client
process and half as many in each worker.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import math
import os
import random
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
OPPONENTS = ["easy", "medium", "hard", "random", "arduino", "parsons", "mdttt", "newell-simon", "seed001-rules",
             "minimax", "perfect"]
TARGET_GAMES, TARGET_P99_MS = 1000, 20.0
TARGET_CPU_US = 150.0  # server CPU per move (issue 12)
OPEN_TIMEOUT = 10.0  # seconds a socket may take to open before it is given up and opened again
OPEN_ATTEMPTS = 6  # times a seat's socket is opened again before its game counts as never started


def log(message: str) -> None:
    print(f"[web-load {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def raise_file_limit() -> None:
    """Each client and each server-side socket is a file descriptor; 1,000 games need ~3,000."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else 65536
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# the server ---------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process so far (Linux /proc; 0 elsewhere or once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


class RedisServer:
    """A redis-server for the run, in a temporary folder, on a free loopback port."""

    def __init__(self) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="noughts-web-load-redis-")
        self.port = free_port()
        try:
            self.process = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.folder.name,
                 "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
        except FileNotFoundError:
            raise SystemExit("--redis needs redis-server (apt-get install redis-server)") from None
        self.url = f"redis://127.0.0.1:{self.port}/0"
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as probe:
                    probe.sendall(b"PING\r\n")
                    if probe.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise SystemExit("redis-server did not start") from None
                time.sleep(0.05)

    def cpu_seconds(self) -> float:
        return process_cpu_seconds(self.process.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self.folder.cleanup()


class Server:
    def __init__(self, redis: str | None = None, workers: int = 1, loop: str = "auto",
                 ws: str = "websockets-sansio", scores: bool = True, defences: bool = False,
                 sockets: int = 40_000, db: str | None = None) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="noughts-web-load-")
        self.port = free_port()
        self.db = db or str(Path(self.folder.name) / "noughts.db")
        if defences:  # as deployed: every defence at its default, the totals sized for the run
            limits = f"Limits(max_connections={sockets}, max_rooms={sockets})"
        else:  # no rate limits, no per-address caps: every client from 127.0.0.1, and the no-think run floods
            limits = ("Limits(max_connections=40_000, max_rooms=40_000, rooms_per_connection=10**6, rate=1e6, "
                      "burst=1e6, connections_per_address=10**6, rooms_per_address=10**6, address_share=1.0, "
                      "address_rate=1e9, address_burst=10**9, join_rate=1e6, join_burst=1e6)")
        code = ("from noughts.web import serve; from noughts.web.protocol import Limits; "
                f"serve('127.0.0.1', {self.port}, {self.db!r}, limits={limits}, "
                f"redis={redis!r}, workers={workers}, loop={loop!r}, ws={ws!r}, scores={scores!r})")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
        self.process = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1) as reply:
                    if json.load(reply)["ok"]:
                        break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise SystemExit("the web server did not start (is the web extra installed?)") from None
                time.sleep(0.05)
        self.url = f"ws://127.0.0.1:{self.port}/ws"

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server so far: its process and its worker processes."""
        pid = self.process.pid
        return process_cpu_seconds(pid) + sum(process_cpu_seconds(child) for child in children(pid))

    def stop(self) -> None:
        workers = children(self.process.pid)
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for pid in workers:  # a supervisor killed before its workers stopped leaves them running
            with contextlib.suppress(OSError):
                if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():  # still the worker
                    os.kill(pid, signal.SIGKILL)
        self.recorded, self.recorded_keys = recorded_games(self.db)
        self.folder.cleanup()


COUNT_GAMES = "SELECT count(*), count(DISTINCT game_key) FROM games"


def recorded_games(db: str) -> tuple[int | None, int | None]:
    """Games in the score store's history, and their distinct keys (a game recorded twice has one key
    twice), once the server has stopped: every finished game drained. SQLite file or PostgreSQL URL."""
    if db.startswith("postgresql://"):
        import psycopg

        try:
            with psycopg.connect(db) as connection:
                row = connection.execute(COUNT_GAMES).fetchone()
        except psycopg.Error:
            return None, None
    else:
        import sqlite3

        try:
            with contextlib.closing(sqlite3.connect(db)) as connection:
                row = connection.execute(COUNT_GAMES).fetchone()
        except sqlite3.Error:
            return None, None
    return (int(row[0]), int(row[1])) if row else (None, None)


class Postgres:
    """A PostgreSQL server for the run (tests/pg_server.py: Debian's, in a temporary folder), durable."""

    def __init__(self) -> None:
        sys.path.insert(0, str(HERE.parent / "tests"))
        from pg_server import PostgresServer

        self.server = PostgresServer()
        self.server.fsync = True  # a real server's durability, not the tests' shortcut
        self.server.start()

    def fresh_url(self) -> str:
        return str(self.server.fresh_url())

    def stop(self) -> None:
        self.server.stop()


# the clients --------------------------------------------------------------------------------------
# Raw websocket clients: a few hundred lines of framing instead of a websocket library, so that the
# clients, which share the machine's cores with the server, cost a small fraction of what it does.
# Frames to the server are masked with the key 0 (RFC 6455 requires a mask, not a random one: the
# payload goes out as it is); of the server's messages only states are decoded.
HANDSHAKE = ("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: bm91Z2h0cy13ZWItbG9hZA==\r\nSec-WebSocket-Version: 13\r\n\r\n")
STATE = b'{"type":"state"'
ERROR = b'{"type":"error"'
RECORDED = b'{"type":"recorded"'


def frame(payload: bytes, opcode: int = 0x1) -> bytes:
    """One final client frame, masked with the key 0."""
    size = len(payload)
    if size < 126:
        head = bytes((0x80 | opcode, 0x80 | size))
    elif size < 65536:
        head = bytes((0x80 | opcode, 0x80 | 126)) + size.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 0x80 | 127)) + size.to_bytes(8, "big")
    return head + b"\0\0\0\0" + payload


class Tally:
    """One client process's figures."""

    def __init__(self, window: Any, connected: Any) -> None:
        self.window = window  # time.time() between which moves count, shared with the parent (which sets it)
        self.shared_connected = connected  # games started, over every client process
        self.latencies: dict[str, list[float]] = {"computer": [], "room": []}
        self.finished = 0  # games the clients saw end, over the whole run
        self.recorded = 0  # `recorded` messages to a game's first seat: saved
        self.not_saved: dict[str, int] = {}  # `recorded` messages saying the game was not saved, by reason
        self.errors: list[str] = []
        self.reopened = 0  # sockets opened again because the last attempt never opened
        self.reopen_causes: dict[str, int] = {}
        self.tasks: list[asyncio.Future[None]] = []
        self.addresses = 1  # source addresses: 1 is 127.0.0.1 for every socket, else one per socket
        self.connected = 0
        self.sent = 0  # moves sent
        self.answered = 0  # moves whose board came back

    def address(self, game: Game, seat: int) -> str:
        """Where a seat connects from: with many addresses, its own of 127.1.0.0/16, 127.2.0.0/16…
        (every 127/8 address is this machine's), as players on their own machines would."""
        if self.addresses <= 1:
            return "127.0.0.1"
        index = (2 * game.number + seat) % self.addresses
        return f"127.{1 + index // 65536}.{index // 256 % 256}.{index % 256}"

    def add(self, kind: str, sent: float, now: float) -> None:
        self.answered += 1
        wall = time.time()
        if self.window[0] <= wall - (now - sent) and wall <= self.window[1]:
            self.latencies[kind].append((now - sent) * 1000)


class Seat(asyncio.Protocol):
    """One websocket playing one seat: against the computer (seat 0 of a computer room) or in a friend room."""

    def __init__(self, game: Game, seat: int) -> None:
        self.game, self.seat = game, seat
        self.transport: Any = None
        self.buffer = bytearray()
        self.upgraded = False
        self.waiting: tuple[float, int, int] | None = None  # (sent at, game, moves expected)
        self.busy = False  # a think (then a move or a rematch) is scheduled
        self.done = False

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        transport.write(HANDSHAKE.format(port=self.game.port).encode())
        self.game.loop.call_later(OPEN_TIMEOUT, self.opened_in_time)

    def opened_in_time(self) -> None:
        """A socket whose handshake has not come back in time is given up and opened again."""
        if not self.upgraded and not self.done:
            self.done = True
            self.transport.abort()
            self.game.reopen(self, "no handshake answer in time")

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done:
            if self.upgraded:
                self.game.failed(f"seat {self.seat}: the server closed the connection")
            else:  # as the page does: a socket closed before it opened is opened again, after a pause
                self.game.reopen(self, "closed before the handshake")
        self.done = True

    def send(self, text: str) -> None:
        self.transport.write(frame(text.encode()))

    def close(self) -> None:
        if not self.done:
            self.done = True
            with contextlib.suppress(Exception):
                self.transport.write(frame(b"\x03\xe8", 0x8))
                self.transport.close()

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        if not self.upgraded:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            if b" 101 " not in buffer[:20]:
                self.done = True
                self.transport.close()
                self.game.reopen(self, f"handshake refused: {bytes(buffer[:40])!r}")
                return
            del buffer[:end + 4]
            self.upgraded = True
            self.game.connected(self)
        while len(buffer) >= 2:
            opcode, size, start = buffer[0] & 0x0F, buffer[1] & 0x7F, 2
            if size == 126:
                if len(buffer) < 4:
                    return
                size, start = int.from_bytes(buffer[2:4], "big"), 4
            elif size == 127:
                if len(buffer) < 10:
                    return
                size, start = int.from_bytes(buffer[2:10], "big"), 10
            if len(buffer) < start + size:
                return
            payload = bytes(buffer[start:start + size])
            del buffer[:start + size]
            if opcode == 0x1:
                self.message(payload)
            elif opcode == 0x9:
                self.transport.write(frame(payload, 0xA))
            elif opcode == 0x8:
                if not self.done:
                    self.game.failed(f"seat {self.seat}: closed by the server {payload[2:60]!r}")
                self.done = True
                self.transport.close()
                return

    def message(self, payload: bytes) -> None:
        if payload.startswith(STATE):
            if not self.done:
                self.game.state(self, json.loads(payload))
        elif payload.startswith(ERROR):
            self.game.failed(f"server error: {payload[:160]!r}")
        elif payload.startswith(RECORDED) and self.seat == 0:
            told = json.loads(payload)
            if told.get("game_id") is not None:
                self.game.tally.recorded += 1
            else:  # not saved, and the player told why (the score store not keeping up, say)
                why = str(told.get("message"))[:60]
                self.game.tally.not_saved[why] = self.game.tally.not_saved.get(why, 0) + 1


class Game:
    """One concurrent game: a client playing the computer, or two clients in a room, one game after another."""

    def __init__(self, number: int, port: int, tally: Tally, rng: random.Random, think: float) -> None:
        self.number, self.port, self.tally, self.rng, self.mean_think = number, port, tally, rng, think
        self.kind = "computer" if number % 2 == 0 else "room"
        self.seats: list[Seat] = []  # the open (or opening) sockets, seat 0 first
        self.attempts = [0, 0]  # sockets opened again, per seat
        self.opponent = rng.choice(OPPONENTS)
        self.loop = asyncio.get_running_loop()
        self.finished = self.loop.create_future()
        self.ready = False
        self.room: str | None = None
        self.invited = False
        self.counted = 0  # the last game whose end was counted
        self.rematched = 0  # the last game whose rematch was asked for

    async def start(self) -> None:
        for seat in range(1 if self.kind == "computer" else 2):
            await self.open(seat)

    async def open(self, seat: int) -> None:
        """Open seat ``seat``'s socket from its own address (a connect that hangs is retried, as a page's is)."""
        while True:
            try:
                _, protocol = await asyncio.wait_for(self.loop.create_connection(
                    lambda: Seat(self, seat), "127.0.0.1", self.port, local_addr=(self.tally.address(self, seat), 0)),
                    OPEN_TIMEOUT)
            except (TimeoutError, OSError) as error:
                if not self.again(seat, f"could not connect: {str(error) or type(error).__name__}"):
                    return
                await asyncio.sleep(self.pause(seat))
                continue
            if seat < len(self.seats):
                self.seats[seat] = protocol
            else:
                self.seats.append(protocol)
            return

    def again(self, seat: int, why: str) -> bool:
        """Count one more attempt at opening ``seat``'s socket; False (the game failed) past the last."""
        self.tally.reopened += 1
        self.tally.reopen_causes[why[:40]] = self.tally.reopen_causes.get(why[:40], 0) + 1
        self.attempts[seat] += 1
        if self.attempts[seat] > OPEN_ATTEMPTS or time.time() >= self.tally.window[1]:
            self.failed(f"seat {seat}: gave up opening after {self.attempts[seat]} attempts ({why})")
            return False
        return True

    def pause(self, seat: int) -> float:
        """The page's back-off: about a second, doubling with each attempt, at most 30 s."""
        return min(30.0, (0.5 + self.rng.random()) * 2 ** (self.attempts[seat] - 1))

    def reopen(self, closed: Seat, why: str) -> None:
        if self.finished.done() or not self.again(closed.seat, why):
            return

        async def later() -> None:
            await asyncio.sleep(self.pause(closed.seat))
            if not self.finished.done():
                await self.open(closed.seat)

        self.tally.tasks.append(asyncio.ensure_future(later()))

    def connected(self, seat: Seat) -> None:
        if self.kind == "computer":
            seat.send(json.dumps({"type": "play_computer", "opponent": self.opponent,
                                  "first": self.rng.choice(["you", "opponent"])}))
        elif seat.seat == 0:
            seat.send('{"type":"create_room","name":"Host"}')
        else:
            self.invite()

    def invite(self) -> None:
        """The guest joins once the host's room exists and the guest's socket is open."""
        if self.room is not None and not self.invited and len(self.seats) == 2 and self.seats[1].upgraded \
                and not self.seats[1].done:
            self.invited = True
            self.seats[1].send(json.dumps({"type": "join", "room": self.room, "name": "Guest"}))

    def failed(self, why: str) -> None:
        if len(self.tally.errors) < 1000:
            self.tally.errors.append(why)
        for seat in self.seats:
            seat.close()
        if not self.finished.done():
            self.finished.set_result(None)

    def think(self) -> float:
        return self.rng.uniform(0.5 * self.mean_think, 1.5 * self.mean_think) if self.mean_think > 0 else 0.0

    def state(self, seat: Seat, state: dict[str, Any]) -> None:
        if not self.ready:
            self.ready = True
            self.tally.connected += 1
            with self.tally.shared_connected.get_lock():
                self.tally.shared_connected.value += 1
        if self.kind == "room" and state["seats"][1] is None:
            self.room = state["room"]  # the host's room, waiting for the guest
            self.invite()
            return
        waiting = seat.waiting
        moves = len(state["moves"])
        if waiting is not None:
            if state["game"] == waiting[1] and moves >= waiting[2]:
                self.tally.add(self.kind, waiting[0], time.perf_counter())
                seat.waiting = None
            elif state["game"] > waiting[1]:
                # with rooms shared between processes a socket may be shown only the newest of two quick
                # changes: the end of the game the move was for never came, its rematch did
                seat.waiting = None
        result = state["result"]
        if result is not None and self.counted < state["game"]:  # whichever seat sees the end first
            self.counted = state["game"]
            self.tally.finished += 1
        if time.time() >= self.tally.window[1]:
            self.stop_when_answered()
            return
        if seat.busy or seat.waiting is not None:
            return
        if result is not None:
            # once a game: under load a socket may be shown a game's end again after its rematch was asked
            if seat.seat == 0 and self.rematched < state["game"]:
                self.rematched = state["game"]
                seat.busy = True
                self.loop.call_later(self.think(), self.rematch, seat)
            return
        mine = state["seats"][seat.seat]
        if mine is not None and mine["mark"] == state["turn"]:
            seat.busy = True
            self.loop.call_later(self.think(), self.move, seat, state)

    def move(self, seat: Seat, state: dict[str, Any]) -> None:
        seat.busy = False
        if seat.done or time.time() >= self.tally.window[1]:
            return
        cells = state["cells"]
        cell = self.rng.choice([i for i, mark in enumerate(cells) if mark is None])
        seat.waiting = (time.perf_counter(), state["game"], len(state["moves"]) + 1)
        self.tally.sent += 1
        seat.send(f'{{"type":"move","cell":{cell},"game":{state["game"]}}}')

    def rematch(self, seat: Seat) -> None:
        seat.busy = False
        if not seat.done:
            seat.send('{"type":"rematch"}')

    def stop_when_answered(self) -> None:
        """The run is over: leave, once every move sent has been answered (one never answered is lost)."""
        if all(seat.waiting is None for seat in self.seats):
            self.stop()

    def stop(self) -> None:
        for seat in self.seats:
            seat.close()
        if not self.finished.done():
            self.finished.set_result(None)


_SHARED: dict[str, Any] = {}  # the window and the count of games started, shared by the parent (fork)


async def play_share(port: int, numbers: list[int], think: float, seed: int, start: float,
                     ramp: float, addresses: int = 1) -> dict[str, Any]:
    """One client process's share of the games; returns its figures."""
    window = _SHARED["window"]
    tally = Tally(window, _SHARED["connected"])
    tally.addresses = addresses
    games = []

    async def begin(game: Game, delay: float) -> None:
        await asyncio.sleep(max(0.0, delay))
        try:
            await game.start()
        except OSError as error:
            game.failed(f"could not connect: {error}")

    tasks = []
    total = max(1, max(numbers, default=0) + 1)
    for number in numbers:
        game = Game(number, port, tally, random.Random(f"{seed}:{number}"), think)
        games.append(game)
        tasks.append(asyncio.ensure_future(begin(game, start + ramp * number / total - time.time())))
    while time.time() < window[0]:  # the parent opens the window once every game has started
        await asyncio.sleep(min(0.2, max(0.001, window[0] - time.time())))
    cpu_before = own_cpu_seconds()
    while time.time() < window[1]:
        await asyncio.sleep(min(0.2, max(0.001, window[1] - time.time())))
    cpu = own_cpu_seconds() - cpu_before
    for game in games:
        game.stop_when_answered()
    pending = [g.finished for g in games if not g.finished.done()]
    if pending:  # moves sent before the end wait for their answers, for 10 s at most
        await asyncio.wait(pending, timeout=10)
    lost = sum(seat.waiting is not None for game in games for seat in game.seats)
    unfinished = sum(not game.finished.done() for game in games)
    for game in games:
        game.stop()
    for task in tasks + tally.tasks:
        task.cancel()
    await asyncio.sleep(0.1)
    return {"latencies": tally.latencies, "finished": tally.finished, "recorded": tally.recorded,
            "not_saved": tally.not_saved,
            "errors": tally.errors, "connected": tally.connected, "client_cpu": cpu, "sent": tally.sent,
            "answered": tally.answered, "lost": lost, "unfinished": unfinished,
            "reopened": tally.reopened, "reopen_causes": tally.reopen_causes,
            "cpu_whole_run": own_cpu_seconds()}


def client_process(args: tuple[Any, ...]) -> dict[str, Any]:
    """The body of one client process (a multiprocessing pool's worker)."""
    raise_file_limit()
    try:
        import uvloop

        return uvloop.run(play_share(*args))  # type: ignore[no-any-return]
    except ImportError:
        return asyncio.run(play_share(*args))


def listen_overflows() -> int:
    """Connections the kernel dropped at a full listening queue, machine-wide so far (Linux; 0 elsewhere).

    Such a client is left waiting for TCP to retry (seconds, up to minutes): a burst of connections
    while the server is busy shows here, not in the server's logs."""
    try:
        lines = [line.split() for line in Path("/proc/net/netstat").read_text().splitlines()
                 if line.startswith("TcpExt:")]
        return int(dict(zip(lines[0], lines[1], strict=True))["ListenOverflows"])
    except (OSError, IndexError, KeyError, ValueError):
        return 0


def run_level(server: Server, games: int, seconds: float, mean_think: float, seed: int,
              redis: RedisServer | None = None, processes: int = 1, addresses: int = 1,
              connect_rate: float = 300.0) -> dict[str, Any]:
    """Play ``games`` concurrent games from ``processes`` client processes; the figures of the window."""
    import multiprocessing

    ramp = max(1.0, games / connect_rate)  # games started over this many seconds, not all at once
    overflows_before = listen_overflows()
    settle = max(1.0, 2 * mean_think)
    start = time.time() + 0.5
    shares = [list(range(games))[i::processes] for i in range(processes)]
    context = multiprocessing.get_context("fork")
    # The window opens once every game has started (or a minute after the last was due), then
    # settles: a busy machine's slow start is never measured as moves.
    window = context.Array("d", [math.inf, math.inf], lock=False)
    connected = context.Value("i", 0)
    _SHARED.update(window=window, connected=connected)
    with context.Pool(processes) as pool:
        waiting = pool.map_async(client_process, [(server.port, share, mean_think, seed, start, ramp,
                                                                   addresses) for share in shares])
        deadline = start + ramp + 60
        while connected.value < games and time.time() < deadline:
            time.sleep(0.1)
        measure_from = max(time.time(), start + ramp) + settle
        window[1] = measure_from + seconds
        window[0] = measure_from
        time.sleep(max(0.0, measure_from - time.time()))
        redis_cpu = redis.cpu_seconds if redis is not None else lambda: 0.0
        cpu_before, redis_before = server.cpu_seconds(), redis_cpu()
        time.sleep(max(0.0, window[1] - time.time()))
        cpu, in_redis = server.cpu_seconds() - cpu_before, redis_cpu() - redis_before
        parts = waiting.get(timeout=120 + 40 * mean_think + ramp)
        client_cpu_whole = sum(p["cpu_whole_run"] for p in parts)
    causes: dict[str, int] = {}
    for part in parts:
        for why, count in part["reopen_causes"].items():
            causes[why] = causes.get(why, 0) + count
    computer = [ms for part in parts for ms in part["latencies"]["computer"]]
    room = [ms for part in parts for ms in part["latencies"]["room"]]
    latencies = computer + room
    errors = [e for part in parts for e in part["errors"]]

    def pct(values: list[float], q: float) -> float | None:
        if not values:
            return None
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "games": games, "connected": sum(p["connected"] for p in parts), "think_s": mean_think, "seconds": seconds,
        "moves": len(latencies), "moves_per_s": len(latencies) / seconds,
        "p50_ms": pct(latencies, 0.50), "p99_ms": pct(latencies, 0.99), "max_ms": max(latencies, default=None),
        "computer_p99_ms": pct(computer, 0.99), "room_p99_ms": pct(room, 0.99),
        "mean_ms": statistics.fmean(latencies) if latencies else None,
        "server_cpu": cpu / seconds, "client_cpu": sum(p["client_cpu"] for p in parts) / seconds,
        "server_us_per_move": cpu / len(latencies) * 1e6 if latencies else None,
        "redis_cpu": in_redis / seconds if redis is not None else None,
        "redis_us_per_move": in_redis / len(latencies) * 1e6 if redis is not None and latencies else None,
        "errors": errors[:5], "error_count": len(errors),
        "finished_games": sum(p["finished"] for p in parts), "recorded_messages": sum(p["recorded"] for p in parts),
        "not_saved": {why: sum(p["not_saved"].get(why, 0) for p in parts)
                      for why in {w for p in parts for w in p["not_saved"]}},
        "moves_sent": sum(p["sent"] for p in parts), "moves_answered": sum(p["answered"] for p in parts),
        "lost": sum(p["lost"] for p in parts), "not_finished": sum(p["unfinished"] for p in parts),
        "reopened": sum(p["reopened"] for p in parts), "reopen_causes": causes,
        "listen_overflows": listen_overflows() - overflows_before, "addresses": addresses,
        "client_cpu_s_whole_run": client_cpu_whole,
    }


@dataclass
class Setup:
    title: str
    redis: bool
    workers: int
    loop: str
    scale: bool  # also look for the most games it holds; else only its CPU a move, as a peer


def redis_py_client() -> str:
    """redis-py's version and the reply parser it uses (hiredis's, when installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"redis-py {version('redis')} + hiredis {version('hiredis')}"
    except PackageNotFoundError:
        return f"redis-py {version('redis')}, no hiredis (pip install hiredis)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default=None,
                        help="concurrent games to try, comma-separated, in order, stopping at the first that "
                             "misses p99 ≤ 20 ms (default 250,500,1000,2000,4000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measuring window per run (default 10)")
    parser.add_argument("--think", type=float, default=3.0,
                        help="mean think time before each move, seconds (default 3, the issue's; uniform ±50%%)")
    parser.add_argument("--cpu-games", type=int, default=600, help="games in the CPU-a-move runs (default 600)")
    parser.add_argument("--cpu-runs", type=int, default=3, help="CPU-a-move runs per setup; the median is "
                                                                "reported (default 3)")
    parser.add_argument("--capacity-games", type=int, default=100,
                        help="games in a last run without think time (0: skip it)")
    parser.add_argument("--quick", action="store_true", help="shorter: 5 s windows, one level of 1,000 games")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--redis", action="store_true",
                        help="also run on --workers processes sharing rooms in a redis-server")
    parser.add_argument("--workers", type=int, default=2, help="server processes with --redis (default 2)")
    parser.add_argument("--client-processes", type=int, default=1,
                        help="processes playing the clients (default 1: the clients cost a tenth of the server)")
    parser.add_argument("--ws", default="websockets-sansio", help="the server's websocket implementation: "
                                                                  "websockets-sansio (default), websockets or wsproto")
    parser.add_argument("--defences", choices=["deployed", "off"], default="deployed",
                        help="deployed (default): the server's defences at their defaults (only the totals of "
                             "rooms and connections sized for the run), every client socket from its own "
                             "loopback address (127.1.0.0/16…), as players on their own machines; off: no "
                             "caps or rate limits, every client from 127.0.0.1 (needed by the no-think "
                             "capacity run, which is skipped otherwise)")
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite",
                        help="where finished games are recorded: a SQLite file (default) or a PostgreSQL "
                             "server started for the run (Debian's postgresql, as the tests start it)")
    parser.add_argument("--connect-rate", type=float, default=300.0,
                        help="games started a second while a level ramps up (default 300)")
    parser.add_argument("--scenario", action="store_true",
                        help="issue 12's scenario: 10,000 games over 2 workers and Redis, 3 s think, the "
                             "defences as deployed (--redis --only-redis --levels 10000 --cpu-runs 0 "
                             "--capacity-games 0 --workers 2 --think 3)")
    parser.add_argument("--only-redis", action="store_true",
                        help="with --redis, skip the one-process setups (the scenario of issue 12 alone)")
    parser.add_argument("--no-asyncio", action="store_true",
                        help="skip the peers on asyncio's own event loop (uvloop is the default when installed)")
    args = parser.parse_args()
    if args.scenario:
        args.redis = args.only_redis = True
        args.levels, args.cpu_runs, args.capacity_games, args.workers, args.think = "10000", 0, 0, 2, 3.0
        args.defences = "deployed"
    if args.quick:
        args.seconds = min(args.seconds, 5.0)
    if args.levels is None:
        args.levels = "1000" if args.quick else "250,500,1000,2000,4000"
    raise_file_limit()
    levels = [int(n) for n in args.levels.split(",") if n.strip()]
    uvloop_here = importlib.util.find_spec("uvloop") is not None
    fast = "uvloop" if uvloop_here else "asyncio"
    setups = [Setup(f"one process, rooms in memory, {fast}", False, 1, fast, True)]
    if args.only_redis:
        setups = []
    elif uvloop_here and not args.no_asyncio:
        setups.append(Setup("one process, rooms in memory, asyncio", False, 1, "asyncio", False))
    if args.redis:
        setups.append(Setup(f"{args.workers} workers, rooms in Redis, {fast}, {redis_py_client()}", True,
                            args.workers, fast, True))
        if uvloop_here and not args.no_asyncio:
            setups.append(Setup(f"{args.workers} workers, rooms in Redis, asyncio", True, args.workers, "asyncio",
                                False))
    summaries = []
    results = []
    defences = args.defences == "deployed"
    most_games = max([*levels, args.cpu_games, args.capacity_games])
    addresses = 2 * most_games if defences else 1
    postgres = Postgres() if args.db == "postgresql" else None
    try:
        for setup in setups:
            redis = RedisServer() if setup.redis else None
            log(f"starting the server: {setup.title}")
            server = Server(redis.url if redis else None, setup.workers, setup.loop, args.ws, defences=defences,
                            sockets=max(10_000, 2 * most_games), db=postgres.fresh_url() if postgres else None)
            rows = []

            servers = [server]

            def run(games: int, think: float, kind: str, setup: Setup = setup, server: Server = server,
                    rows: list[dict[str, Any]] = rows, redis: RedisServer | None = redis,
                    addresses: int = addresses) -> dict[str, Any]:
                log(f"{setup.title}: {games} games, think {think:g} s ({kind}), measuring for {args.seconds:g} s")
                result = run_level(server, games, args.seconds, think, seed=len(rows), redis=redis,
                                   processes=args.client_processes, addresses=addresses,
                                   connect_rate=args.connect_rate)
                result.update(setup=setup.title, kind=kind)
                rows.append(result)
                log(f"  {result['moves_per_s']:.0f} moves/s, p50 {fmt(result['p50_ms'])} ms, "
                    f"p99 {fmt(result['p99_ms'])} ms, server CPU {result['server_cpu']:.0%} "
                    f"({fmt(result['server_us_per_move'], 0)} µs a move), "
                    f"clients' CPU {result['client_cpu']:.0%}, lost {result['lost']}, errors {result['error_count']}")
                log(f"  started {result['connected']} of {games} games, {result['finished_games']} finished, "
                    f"{result['reopened']} sockets opened again {result['reopen_causes']}, "
                    f"{result['listen_overflows']} connections dropped at a full listen queue")
                return result

            try:
                for _ in range(args.cpu_runs):
                    run(args.cpu_games, args.think, "cpu")
                held: int | None = None
                if setup.scale:
                    held = 0
                    for games in levels:
                        result = run(games, args.think, "scale")
                        if not passes(result):
                            break
                        held = games
                    if args.capacity_games:
                        # a server of its own with the defences off: without think time a client passes
                        # the message rate limit, as a flood would
                        server.stop()
                        servers.append(Server(redis.url if redis else None, setup.workers, setup.loop, args.ws,
                                              defences=False, db=postgres.fresh_url() if postgres else None))
                        run(args.capacity_games, 0.0, "capacity", server=servers[-1], addresses=1)
            finally:
                servers[-1].stop()
                if redis is not None:
                    redis.stop()
            recorded = [s.recorded for s in servers]
            keys = [s.recorded_keys for s in servers]
            cpu_runs = [r["server_us_per_move"] for r in rows if r["kind"] == "cpu" and r["server_us_per_move"]]
            redis_runs = [r["redis_us_per_move"] for r in rows if r["kind"] == "cpu" and r["redis_us_per_move"]]
            finished = sum(r["finished_games"] for r in rows)
            summary = {"setup": setup.title, "loop": setup.loop, "redis": setup.redis,
                       "us_per_move": statistics.median(cpu_runs) if cpu_runs else None, "us_per_move_runs": cpu_runs,
                       "redis_us_per_move": statistics.median(redis_runs) if redis_runs else None,
                       "held_games": held if setup.scale else None, "finished_games": finished,
                       "told_saved": sum(r["recorded_messages"] for r in rows),
                       "told_not_saved": sum(sum(r["not_saved"].values()) for r in rows),
                       "recorded_games": None if None in recorded else sum(n or 0 for n in recorded),
                       "recorded_keys": None if None in keys else sum(n or 0 for n in keys), "db": args.db,
                       "moves_per_s_per_game": statistics.median(r["moves_per_s"] / r["games"] for r in rows
                                                                 if r["kind"] == "cpu") if cpu_runs else None}
            summaries.append(summary)
            print_table(setup.title, rows)
            results.extend(rows)
    finally:
        if postgres is not None:
            postgres.stop()
    print_summary(summaries, args.think)
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "summary": summaries, "target": {
            "games": TARGET_GAMES, "p99_ms": TARGET_P99_MS, "cpu_us_per_move": TARGET_CPU_US}}, indent=2))
    failed = any(r["error_count"] or r["connected"] < r["games"] or r["lost"] for r in results if r["kind"] != "scale")
    failed = failed or any(s["recorded_games"] is not None and not s["recorded_games"] == s["finished_games"]
                           == s["recorded_keys"] for s in summaries)
    return 1 if failed else 0


def passes(result: dict[str, Any]) -> bool:
    """Every game connected and played, nothing lost, and p99 within the target."""
    return (result["p99_ms"] is not None and result["p99_ms"] <= TARGET_P99_MS and not result["error_count"]
            and not result["lost"] and result["connected"] == result["games"])


def fmt(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def print_table(title: str, results: list[dict[str, Any]]) -> None:
    print()
    print(f"noughts web: concurrent games on loopback, {title} (raw websocket clients in another process)")
    print(f"{'games':>6} {'think':>6} {'moves/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} "
          f"{'server CPU':>10} {'µs/move':>8} {'redis CPU':>9} {'µs/move':>8} {'client CPU':>10} {'lost':>5}  run")
    for r in results:
        redis_cpu = "n/a" if r["redis_cpu"] is None else f"{r['redis_cpu']:.0%}"
        what = {"cpu": "CPU a move", "capacity": "capacity (no think time)"}.get(r["kind"], "")
        if r["kind"] == "scale":
            what = f"p99 ≤ {TARGET_P99_MS:g} ms: {'PASS' if passes(r) else 'MISS'}"
        print(f"{r['games']:>6} {r['think_s']:>5g}s {r['moves_per_s']:>8.0f} {fmt(r['p50_ms']):>7} "
              f"{fmt(r['p99_ms']):>7} {fmt(r['max_ms']):>7} {r['server_cpu']:>10.0%} "
              f"{fmt(r['server_us_per_move'], 0):>8} {redis_cpu:>9} {fmt(r['redis_us_per_move'], 0):>8} "
              f"{r['client_cpu']:>10.0%} {r['lost']:>5}  {what}")
        print(f"{'':>6} games started {r['connected']}, finished {r['finished_games']}, told saved "
              f"{r['recorded_messages']}, told not saved {sum(r['not_saved'].values())} {r['not_saved'] or ''}, "
              "moves sent "
              f"{r['moves_sent']}, answered {r['moves_answered']}, lost {r['lost']}; sockets opened again "
              f"{r['reopened']} {r['reopen_causes'] or ''}; connections dropped at a full listen queue "
              f"{r['listen_overflows']} (machine-wide); clients' CPU over the whole run "
              f"{r['client_cpu_s_whole_run']:.1f} s")
        if r["error_count"] or r["connected"] < r["games"] or r["not_finished"]:
            print(f"{'':>6} problems: {r['error_count']} client errors {r['errors'][:3]}, "
                  f"{r['games'] - r['connected']} games never started, {r['not_finished']} not stopped in time")
    cores, load = os.cpu_count() or 1, os.getloadavg()[0]
    print(f"{cores} CPU cores; load average {load:.1f} at the end (other work on the machine skews the figures)")


def print_summary(summaries: list[dict[str, Any]], think: float) -> None:
    print()
    print(f"noughts web: server CPU a move (median of the CPU runs; target ≤ {TARGET_CPU_US:g} µs), the most games "
          f"held with p99 ≤ {TARGET_P99_MS:g} ms, and finished games recorded")
    for s in summaries:
        held = ("— (CPU only)" if s["held_games"] is None else f"{s['held_games']:,} games" if s["held_games"]
                else "not the fewest games tried")
        runs = ", ".join(f"{u:.0f}" for u in s["us_per_move_runs"])
        redis = f", Redis {s['redis_us_per_move']:.0f} µs" if s["redis_us_per_move"] else ""
        recorded = s["recorded_games"]
        if recorded is None:
            check = "n/a"
        elif recorded == s["finished_games"] == s["recorded_keys"]:
            check = "all, once"
        elif recorded == s["recorded_keys"] == s["finished_games"] - s["told_not_saved"]:
            check = f"{recorded}, once each: every other finished game's players were told it was not saved"
        elif recorded == s["recorded_keys"]:  # none twice, but not the games the clients saw end
            check = (f"MISMATCH: {recorded} recorded once each, against {s['finished_games']} seen finished less "
                     f"{s['told_not_saved']} told not saved (a game's last move unanswered in time is recorded "
                     "but not seen: see lost)")
        else:
            check = f"MISMATCH: {recorded} recorded, {s['recorded_keys']} distinct game keys"
        check += f" ({s['db']})"
        print(f"  {s['setup']:<40} {fmt(s['us_per_move'], 0):>5} µs a move ({runs}){redis}; p99 held: {held}; "
              f"{s['finished_games']} games finished, recorded: {check}; players told {s['told_saved']} saved, "
              f"{s['told_not_saved']} not saved")
    for s in summaries:
        if s["us_per_move"] and s["moves_per_s_per_game"] and s["held_games"] is not None:
            rate = s["moves_per_s_per_game"] * 10_000
            cores = rate * s["us_per_move"] / 1e6
            redis = rate * (s["redis_us_per_move"] or 0) / 1e6
            print(f"  EXTRAPOLATED, not measured: 10,000 games ({think:g} s think) = {rate:,.0f} moves/s; at "
                  f"{s['us_per_move']:.0f} µs a move that is {cores:.1f} cores of server CPU"
                  + (f" and {redis:.2f} of Redis" if s["redis"] else "") + f" ({s['setup']}); at the target "
                  f"{TARGET_CPU_US:g} µs, {rate * TARGET_CPU_US / 1e6:.1f} cores")
    print("  10,000 games (half against the computer, half between two people) hold 15,000 websockets: the server "
          "needs that many descriptors, and so do the clients")


if __name__ == "__main__":
    sys.exit(main())
