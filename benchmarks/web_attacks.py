"""The web attack suite at full size: ``python benchmarks/web_attacks.py [--quick] [--json FILE]``.

Starts ``noughts web`` (default limits, a fresh score file) in its own process on a free
loopback port. Honest players (``--honest``, each from an address of its own in 127.0.1.0/24)
play whole games against the easy computer, a move every ``--think`` seconds, and time each
move's round trip (sent → the board with the move comes back). Each attack of issue 12 then
runs for a window while they play, from addresses of the attackers' own in 127.0.0.0/24:

- rooms: one address opens rooms on many sockets until refused;
- idle: 10,000 idle websockets tried from one address, then 64 from each of 16 more (bare
  sockets that send the upgrade request and nothing after: the attacker's CPU stays small);
- slowloris: 1,050 connections sending headers a byte a second (from 16 addresses);
- spectators: 200 sockets join and leave one honest room in a loop;
- guessing: join with random codes as fast as the server answers;
- hostile: malformed, ill-typed and oversized messages as fast as the server answers;

and those of issue 30:

- ping flood: one socket sending 125-byte pings and never reading the pongs (a new one whenever the
  server cuts it off);
- fragments: messages of 65,000 one-byte continuation frames, one after another;
- costly messages: ``hint`` on a 7×7 board and ``players`` over ever new board shapes, as fast as the
  server answers (what the server does about those is its CPU budget per address; this window measures
  the honest players meanwhile).

For each window: the honest moves' p50/p99/max round trip and count, honest errors, the server's
CPU and resident memory growth (its processes for hints and boards included; the most it held
during the window less what it held before; target ≤ 100 MB), and what the attack got (rooms
made, sockets accepted, still open at the end...). At the end every honest game that finished
must be in the score file exactly once. Target (issue 12): p99 ≤ 50 ms during every attack.
The attackers (a process of their own) and the honest players share the machine's cores with
the server: on a loaded machine the figures are upper bounds (the ``lag ms`` column is how late
the honest players' own loop ran: a window whose lag is near its p99 measured the machine).
``--trace DIR`` runs the server under ``benchmarks/web_probe.py`` and says what its
event loop did while the slowest moves were on their way.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from web_load import free_port, raise_file_limit  # this folder's: the load benchmark's helpers

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
TARGET_P99_MS = 50.0
TARGET_RSS_GROWTH_MB = 100.0
CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def log(message: str) -> None:
    print(f"[web-attacks {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Server:
    """``noughts web`` in a process of its own, stopped with SIGTERM at the end."""

    def __init__(self, folder: str, trace: str | None = None, source: Path = SRC) -> None:
        self.port = free_port()
        self.db = str(Path(folder) / "noughts.db")
        self.log = open(Path(folder) / "server.log", "w+")  # noqa: SIM115 - read back at the end
        # with --trace, through the probe (benchmarks/web_probe.py), which writes the loop's turns at the end
        start = [str(HERE / "web_probe.py"), trace] if trace else ["-m", "noughts"]
        self.process = subprocess.Popen(
            [sys.executable, *start, "web", "--port", str(self.port), "--db", self.db],
            env={"PYTHONPATH": str(source), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.1)

    def log_lines(self) -> int:
        self.log.seek(0)
        return len(self.log.read().splitlines())

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(30)


async def open_ws(port: int, source: str, **options: Any) -> ClientConnection:
    sock = socket.socket()
    sock.setblocking(False)
    sock.bind((source, 0))
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return await connect(f"ws://127.0.0.1:{port}/ws", sock=sock, open_timeout=15, **options)


class Honest:
    """Players who time every move; ``window`` collects the round trips of the attack being run."""

    def __init__(self, port: int, players: int, think: float) -> None:
        self.port, self.players, self.think = port, players, think
        self.window: list[float] = []
        self.moves: list[tuple[float, float]] = []  # every move's (sent, round trip), time.monotonic, for --trace
        self.errors: list[str] = []
        self.finished = 0
        self.recorded = 0
        self.stop = asyncio.Event()
        self.lags: list[float] = []  # this process's own event loop's lateness, a measure of its own share

    async def watch_lag(self) -> None:
        loop = asyncio.get_running_loop()
        while not self.stop.is_set():
            started = loop.time()
            await asyncio.sleep(0.01)
            self.lags.append(loop.time() - started - 0.01)

    async def play(self, number: int) -> None:
        rng = random.Random(number)
        ws = await open_ws(self.port, f"127.0.1.{number % 250 + 1}")
        try:
            await ws.send(json.dumps({"type": "play_computer", "opponent": "easy", "first": "me",
                                      "name": f"honest{number}"}))
            sent, started, sent_at = None, 0.0, 0.0
            async for text in ws:
                message = json.loads(text)
                kind = message["type"]
                if kind == "error":
                    self.errors.append(message["code"])
                elif kind == "recorded":
                    self.recorded += 1
                elif kind == "state":
                    if sent is not None and len(message["moves"]) > sent:
                        self.window.append(time.perf_counter() - started)
                        self.moves.append((sent_at, self.window[-1]))
                        sent = None
                    if message["result"] is not None:
                        self.finished += 1
                        await asyncio.sleep(self.think)
                        if self.stop.is_set():
                            return
                        await ws.send('{"type":"rematch"}')
                    elif message["turn"] == message["seats"][0]["mark"] and sent is None:
                        await asyncio.sleep(self.think * rng.uniform(0.5, 1.5))
                        sent = len(message["moves"])
                        started, sent_at = time.perf_counter(), time.monotonic()
                        free = [cell for cell, mark in enumerate(message["cells"]) if mark is None]
                        await ws.send(json.dumps({"type": "move", "cell": rng.choice(free),
                                                  "game": message["game"]}))
        finally:
            await ws.close()


# the attacks -----------------------------------------------------------------------------------------
async def joined_or_error(ws: ClientConnection) -> dict[str, Any] | None:
    """The answer to a create or join (``joined`` or ``error``), None if none comes within a second:
    over the address's message rate the server answers once, then ignores the rest."""
    try:
        while (message := json.loads(await asyncio.wait_for(ws.recv(), 1.0)))["type"] not in ("joined", "error"):
            pass
    except TimeoutError:
        return None
    return dict(message)


async def fill_rooms(port: int, stop: asyncio.Event, found: dict[str, Any]) -> None:
    made = refused = 0
    sockets = []
    for _ in range(40):
        try:
            sockets.append(await open_ws(port, "127.0.0.66"))
        except Exception:
            break
    while not stop.is_set():
        for ws in sockets:
            await ws.send('{"type":"create_room"}')
            if (message := await joined_or_error(ws)) is None:
                refused += 1
                continue
            if message["type"] == "joined":
                made += 1
            else:
                refused += 1
        await asyncio.sleep(0.01)
    found.update(rooms_made=made, refused=refused)
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)


async def open_idle(port: int, source: str) -> socket.socket | None:
    """An idle websocket as cheaply as a client can hold one: the upgrade request on a bare socket,
    nothing read or sent after the server's 101 (None: refused). The server sees what a websocket
    library's client would make it see, without the attacker's own CPU crowding the machine."""
    loop = asyncio.get_running_loop()
    sock = socket.socket()
    sock.setblocking(False)
    try:
        sock.bind((source, 0))
        await asyncio.wait_for(loop.sock_connect(sock, ("127.0.0.1", port)), 15)
        await loop.sock_sendall(sock, (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        answer = await asyncio.wait_for(loop.sock_recv(sock, 4096), 15)
    except (OSError, TimeoutError):
        sock.close()
        return None
    if answer.startswith(b"HTTP/1.1 101"):
        return sock
    sock.close()
    return None


async def idle_sockets(port: int, stop: asyncio.Event, found: dict[str, Any], total: int) -> None:
    opened = await asyncio.gather(*(open_idle(port, "127.0.0.70") for _ in range(total)))
    held = [sock for sock in opened if sock is not None]
    from_one = len(held)
    opened = await asyncio.gather(*(open_idle(port, f"127.0.0.{71 + n}") for n in range(16) for _ in range(64)))
    held += [sock for sock in opened if sock is not None]
    found.update(tried_from_one_address=total, accepted_from_one_address=from_one,
                 accepted_from_16_more=len(held) - from_one, refused=total + 1024 - len(held))
    await stop.wait()
    for sock in held:
        sock.close()


async def slowloris(port: int, stop: asyncio.Event, found: dict[str, Any], total: int) -> None:
    loop = asyncio.get_running_loop()
    request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-a: b\r\n" * 1000
    held: list[socket.socket] = []
    for n in range(total):
        sock = socket.socket()
        sock.setblocking(False)
        sock.bind((f"127.0.0.{100 + n % 16}", 0))
        try:
            await loop.sock_connect(sock, ("127.0.0.1", port))
            held.append(sock)
        except OSError:
            sock.close()
    position = 0
    cut = 0
    while not stop.is_set() and held:
        for sock in list(held):
            try:
                sock.send(request[position:position + 1])
                if sock.recv(4096) == b"":
                    raise ConnectionResetError
            except BlockingIOError:
                pass
            except OSError:
                held.remove(sock)
                sock.close()
                cut += 1
        position += 1
        await asyncio.sleep(1.0)
    found.update(connected=total, cut_off=cut, still_open_at_end=len(held))
    for sock in held:
        sock.close()


async def spectators(port: int, stop: asyncio.Event, found: dict[str, Any], room: str) -> None:
    joins = refused = ignored = 0

    async def loop_one(source: str) -> None:
        nonlocal joins, refused, ignored
        try:
            ws = await open_ws(port, source)
        except Exception:
            return
        try:
            while not stop.is_set():
                await ws.send(json.dumps({"type": "join", "room": room}))
                if (message := await joined_or_error(ws)) is None:
                    ignored += 1
                    continue
                if message["type"] == "joined":
                    joins += 1
                else:
                    refused += 1
                await ws.send('{"type":"leave"}')
        except Exception:
            pass  # closed by the server (too many messages refused in a row)
        finally:
            await ws.close()

    await asyncio.gather(*(loop_one(f"127.0.0.{130 + n % 8}") for n in range(200)), return_exceptions=True)
    found.update(joins=joins, refused=refused, ignored=ignored)


async def flood(port: int, stop: asyncio.Event, found: dict[str, Any], make: Callable[[random.Random], str],
                source: str) -> None:
    rng = random.Random(7)
    answers: dict[str, int] = {}
    closed = 0
    while not stop.is_set():
        try:
            ws = await open_ws(port, source)
            while not stop.is_set():
                await ws.send(make(rng))
                try:  # over the message rate the server answers once, then ignores the rest
                    message = json.loads(await asyncio.wait_for(ws.recv(), 1.0))
                except TimeoutError:
                    answers["(ignored)"] = answers.get("(ignored)", 0) + 1
                    continue
                key = message.get("code") or message["type"]
                answers[key] = answers.get(key, 0) + 1
        except Exception:
            closed += 1
            await asyncio.sleep(0.05)
    found.update(answers=answers, sockets_closed_by_server=closed)


def guess(rng: random.Random) -> str:
    return json.dumps({"type": "join", "room": "".join(rng.choice(CODE_ALPHABET) for _ in range(12))})


HOSTILE = ['{"type":"join","room":"ZZZZZZZZZZZZ","token":"\u00e9t\u00e9"}', "[" * 1900, '{"type":"move","cell":[1]}',
           '{"type":"create_room","first":{"a":1}}', '{"type":"ping","x":"' + "y" * 3000 + '"}',
           '{"type":"move","cell":4,"extra":true}', '{"type":"play_computer","opponent":["easy"]}', "not json"]


def hostile(rng: random.Random) -> str:
    return rng.choice(HOSTILE)


def masked(payload: bytes, opcode: int = 0x1, fin: bool = True) -> bytes:
    """A client's frame (payload under 126 bytes), masked with zeros as RFC 6455 allows: no work to mask."""
    return bytes((0x80 * fin | opcode, 0x80 | len(payload))) + bytes(4) + payload


async def raw_flood(port: int, stop: asyncio.Event, found: dict[str, Any], source: str, data: bytes,
                    read: bool) -> None:
    """Send ``data`` over and over on a bare websocket (reading what comes back only if ``read``), and a
    new socket each time the server cuts one off."""
    sent = cut = 0
    while not stop.is_set():
        sock = await open_idle(port, source)
        if sock is None:
            await asyncio.sleep(0.05)
            continue
        try:
            while not stop.is_set():
                if read:
                    while True:
                        try:
                            if sock.recv(65536) == b"":
                                raise ConnectionResetError
                        except BlockingIOError:
                            break
                try:
                    sent += sock.send(data)
                except BlockingIOError:  # the server reads no faster: wait for room
                    await asyncio.sleep(0.005)
                    continue
                await asyncio.sleep(0)
        except OSError:
            cut += 1
            await asyncio.sleep(0.05)
        finally:
            sock.close()
    found.update(megabytes_sent=round(sent / 1e6, 1), sockets_cut_off=cut)


PING_FLOOD = masked(bytes(125), opcode=0x9) * 500  # 125-byte pings, ~65 KB a send
FRAGMENTS = masked(b"{", fin=False) + masked(b" ", opcode=0x0, fin=False) * 65_000 + masked(b"}", opcode=0x0)


async def costly(port: int, stop: asyncio.Event, found: dict[str, Any]) -> None:
    """``hint`` on 7×7 from one socket and ``players`` over new shapes from another, as fast as answered."""
    answers: dict[str, int] = {}

    async def ask(first: str | None, make: Callable[[random.Random], str], source: str) -> None:
        rng = random.Random(source)
        while not stop.is_set():
            try:
                ws = await open_ws(port, source)
                if first is not None:
                    await ws.send(first)
                while not stop.is_set():
                    await ws.send(make(rng))
                    try:  # over the message rate the server answers once, then ignores the rest
                        while (message := json.loads(await asyncio.wait_for(ws.recv(), 1.0)))["type"] in (
                                "welcome", "scores", "joined", "state"):
                            pass
                    except TimeoutError:
                        answers["(ignored)"] = answers.get("(ignored)", 0) + 1
                        continue
                    key = message.get("code") or message["type"]
                    answers[key] = answers.get(key, 0) + 1
            except Exception:
                answers["(socket closed)"] = answers.get("(socket closed)", 0) + 1
                await asyncio.sleep(0.05)

    def shape(rng: random.Random) -> str:
        rows, cols = rng.randint(3, 15), rng.randint(3, 15)  # (the page's largest board: 15×15)
        return json.dumps({"type": "players", "rows": rows, "cols": cols, "k": rng.randint(3, max(rows, cols))})

    await asyncio.gather(
        ask(json.dumps({"type": "play_computer", "rows": 7, "cols": 7, "first": "me"}),
            lambda rng: '{"type":"hint"}', "127.0.0.162"),
        ask(None, shape, "127.0.0.163"))
    found.update(answers=answers)


# the run -----------------------------------------------------------------------------------------------
async def run(args: argparse.Namespace, server: Server) -> dict[str, Any]:
    honest = Honest(server.port, args.honest, args.think)
    players = [asyncio.create_task(honest.play(n)) for n in range(args.honest)]
    watcher = asyncio.create_task(honest.watch_lag())
    host = await open_ws(server.port, "127.0.0.200")
    await host.send('{"type":"create_room","name":"Watched"}')
    while (message := json.loads(await host.recv()))["type"] != "joined":
        pass
    watched = message["room"]
    results = []
    await asyncio.sleep(2)  # everyone connected and playing
    context = multiprocessing.get_context("fork")
    for number, name in enumerate(ATTACKS):
        if args.only and number and not any(word in name for word in args.only):
            continue
        honest.window, honest.lags = [], []
        errors_before = len(honest.errors)
        queue: Any = context.Queue()
        # The attacker is a process of its own: its work must not delay the honest players' own loop.
        attacker = context.Process(target=attack_process, args=(number, server.port, args, watched, queue))
        attacker.start()
        cpu_before = cpu_seconds(server.process.pid)
        rss_before = rss_megabytes(server.process.pid)
        started, began = time.time(), time.monotonic()
        rss_most = rss_before
        while time.monotonic() < began + args.seconds:  # the server's memory, sampled through the window
            await asyncio.sleep(0.2)
            rss_most = max(rss_most, rss_megabytes(server.process.pid))
        server_cpu = cpu_seconds(server.process.pid) - cpu_before
        window = sorted(honest.window)
        own_lag = max(honest.lags, default=0.0)
        loop = asyncio.get_running_loop()
        try:
            found = await loop.run_in_executor(None, queue.get, True, 60)
        except Exception as error:
            found = {"attack_error": f"{type(error).__name__}: {error}"}
        attacker.join(30)
        row = {"attack": name, "moves": len(window), "errors": honest.errors[errors_before:],
               "p50_ms": 1000 * statistics.median(window) if window else None,
               "p99_ms": 1000 * window[min(len(window) - 1, int(len(window) * 0.99))] if window else None,
               "max_ms": 1000 * window[-1] if window else None, "server_cpu_s": server_cpu,
               "rss_before_mb": rss_before, "rss_growth_mb": rss_most - rss_before,
               "client_lag_max_ms": 1000 * own_lag,
               "window": [round(started, 3), round(started + args.seconds, 3)], "attack_got": found,
               "monotonic": [began, began + args.seconds]}
        results.append(row)
        log(f"{name}: {row['moves']} moves, p99 {fmt(row['p99_ms'])} ms, server CPU {server_cpu:.1f} s, "
            f"RSS +{rss_most - rss_before:.0f} MB; {found}")
        await asyncio.sleep(1)
    honest.stop.set()
    await asyncio.wait(players, timeout=30)
    watcher.cancel()
    await host.close()
    return {"rows": results, "finished": honest.finished, "recorded_messages": honest.recorded,
            "moves": honest.moves}


ATTACKS = ["none (baseline)", "rooms: one address fills rooms", "idle websockets",
           "slowloris (headers a byte a second)", "spectators rejoining in a loop", "guessing room codes",
           "hostile messages", "ping flood (125-byte pings, never read)", "fragments (65,000 one-byte frames)",
           "costly messages (7×7 hints, many shapes)"]


def attack_process(number: int, port: int, args: argparse.Namespace, watched: str, queue: Any) -> None:
    """Run attack ``number`` for the window, then put what it got on ``queue``."""
    async def attack() -> dict[str, Any]:
        stop = asyncio.Event()
        found: dict[str, Any] = {}
        runs: list[Callable[[], Awaitable[None]]] = [
            stop.wait, lambda: fill_rooms(port, stop, found), lambda: idle_sockets(port, stop, found, args.idle),
            lambda: slowloris(port, stop, found, args.slowloris), lambda: spectators(port, stop, found, watched),
            lambda: flood(port, stop, found, guess, "127.0.0.150"),
            lambda: flood(port, stop, found, hostile, "127.0.0.151"),
            lambda: raw_flood(port, stop, found, "127.0.0.160", PING_FLOOD, read=False),
            lambda: raw_flood(port, stop, found, "127.0.0.161", FRAGMENTS, read=True),
            lambda: costly(port, stop, found)]
        task = asyncio.create_task(runs[number]())
        await asyncio.sleep(args.seconds)
        stop.set()
        try:
            await asyncio.wait_for(task, 30)
        except Exception as error:  # an attack that breaks is reported, the run goes on
            found["attack_error"] = f"{type(error).__name__}: {error}"
        found["attacker_cpu_s"] = round(time.process_time(), 1)
        return found

    queue.put(asyncio.run(attack()))


def family(pid: int) -> list[int]:
    """``pid`` and the processes it started, theirs too (the server's processes for hints and boards)."""
    found, look = [], [pid]
    while look:
        one = look.pop()
        found.append(one)
        for task in Path(f"/proc/{one}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                look.extend(int(child) for child in task.read_text().split())
    return found


def cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) process ``pid`` and its children have used so far; 0 where /proc cannot say.

    (A child that has ended is no longer counted: the server keeps its own.)
    """
    total = 0.0
    for one in family(pid):
        try:
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def rss_megabytes(pid: int) -> float:
    """The resident memory of process ``pid`` and its children in MB; 0 where /proc cannot say."""
    total = 0.0
    for one in family(pid):
        try:
            for line in Path(f"/proc/{one}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            pass
    return total


def fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--honest", type=int, default=100, help="honest players (default 100)")
    parser.add_argument("--think", type=float, default=0.5, help="seconds between an honest player's moves")
    parser.add_argument("--seconds", type=float, default=12.0, help="each attack's window (default 12)")
    parser.add_argument("--idle", type=int, default=10_000, help="idle websockets tried from one address")
    parser.add_argument("--slowloris", type=int, default=1050, help="slow-header connections")
    parser.add_argument("--quick", action="store_true", help="small sizes: 20 honest, 6 s windows")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--trace", metavar="DIR", help="probe the server's event loop (benchmarks/web_probe.py) "
                        "and write its trace and every honest move's time there, with a report of the slowest")
    parser.add_argument("--before", metavar="REV", help="serve an older git revision's code (the figures before)")
    parser.add_argument("--only", action="append", metavar="WORD",
                        help="run only the attacks whose name has WORD (repeatable; the baseline always runs)")
    args = parser.parse_args()
    if args.quick:
        args.honest, args.seconds, args.idle, args.slowloris = 20, 6.0, 500, 200
    raise_file_limit()
    with tempfile.TemporaryDirectory(prefix="noughts-web-attacks-") as folder:
        trace = str(Path(args.trace) / "server.json") if args.trace else None
        if args.trace:
            Path(args.trace).mkdir(parents=True, exist_ok=True)
        if args.before:
            from revisions import older_source

            server = Server(folder, trace, older_source(args.before))
        else:
            server = Server(folder, trace)
        try:
            outcome = asyncio.run(run(args, server))
        finally:
            server.stop()
        with sqlite3.connect(server.db) as kept:
            rows = kept.execute("SELECT x_name, COUNT(*) FROM games GROUP BY x_name").fetchall()
        log_lines = server.log_lines()
    saved = sum(count for _, count in rows)
    print(f"\nThe attack suite at full size ({args.honest} honest players, a move every ~{args.think:g} s; "
          f"{args.seconds:g} s per attack; target p99 ≤ {TARGET_P99_MS:g} ms, server memory growth ≤ "
          f"{TARGET_RSS_GROWTH_MB:g} MB)")
    print(f"{'attack':42} {'moves':>6} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'srv CPU':>7} {'RSS +MB':>7} "
          f"{'lag ms':>6}  honest errors  what the attack got")
    for row in outcome["rows"]:
        print(f"{row['attack']:42} {row['moves']:>6} {fmt(row['p50_ms']):>7} {fmt(row['p99_ms']):>7} "
              f"{fmt(row['max_ms']):>7} {row['server_cpu_s']:>6.1f}s {row['rss_growth_mb']:>7.0f} "
              f"{row['client_lag_max_ms']:>6.0f}  "
              f"{len(row['errors']):>13}  "
              f"{json.dumps(row['attack_got'])}")
    same = "yes" if saved == outcome["finished"] else "NO"
    print(f"honest games finished {outcome['finished']}, games in the score file {saved} (each once: {same}; "
          f"'recorded' messages seen {outcome['recorded_messages']}); server log lines: {log_lines}")
    moves = outcome.pop("moves")
    if args.json:
        Path(args.json).write_text(json.dumps({**outcome, "saved": saved, "log_lines": log_lines}, indent=1))
    if args.trace:
        from web_probe import report

        Path(args.trace, "moves.json").write_text(json.dumps({"moves": moves, "rows": outcome["rows"]}))
        report(args.trace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
