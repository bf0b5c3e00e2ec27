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
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
OPPONENTS = ["easy", "medium", "hard", "random", "arduino", "parsons", "mdttt", "newell-simon", "seed001-rules",
             "minimax", "perfect"]
TARGET_GAMES, TARGET_P99_MS = 1000, 20.0
TARGET_CPU_US = 150.0  # server CPU per move (issue 12)


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
    def __init__(self, redis: str | None = None, workers: int = 1) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="noughts-web-load-")
        self.port = free_port()
        code = ("from noughts.web import serve; from noughts.web.protocol import Limits; "
                f"serve('127.0.0.1', {self.port}, {str(Path(self.folder.name) / 'noughts.db')!r}, "
                "limits=Limits(max_connections=20_000, max_rooms=20_000, rooms_per_connection=10**6, "
                f"rate=1e6, burst=1e6), redis={redis!r}, workers={workers})")  # no rate limit for the no-think run
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
        self.folder.cleanup()


# the clients --------------------------------------------------------------------------------------
@dataclass
class Stats:
    window: tuple[float, float] = (0.0, 0.0)  # perf_counter times between which moves count
    computer_ms: list[float] = field(default_factory=list)
    room_ms: list[float] = field(default_factory=list)
    games: int = 0
    errors: list[str] = field(default_factory=list)

    def add(self, kind: str, started: float, ended: float) -> None:
        if self.window[0] <= started and ended <= self.window[1]:
            (self.computer_ms if kind == "computer" else self.room_ms).append((ended - started) * 1000)


async def states(ws: Any) -> Any:
    """The state messages from a socket; errors are fatal to the benchmark, others are skipped."""
    async for text in ws:
        message = json.loads(text)
        if message["type"] == "state":
            yield message
        elif message["type"] == "error":
            raise RuntimeError(f"server error: {message['code']}: {message['message']}")


def my_turn(state: dict[str, Any], seat: int) -> bool:
    mine = state["seats"][seat]
    return state["result"] is None and mine is not None and mine["mark"] == state["turn"]


async def think(rng: random.Random, mean: float) -> None:
    if mean > 0:
        await asyncio.sleep(rng.uniform(0.5 * mean, 1.5 * mean))


async def connect(url: str) -> Any:
    from websockets.asyncio.client import connect as ws_connect

    ws = await ws_connect(url, compression=None, ping_interval=None, open_timeout=60, max_queue=64)
    json.loads(await ws.recv())  # welcome
    return ws


async def computer_games(url: str, stats: Stats, stop_at: float, rng: random.Random, mean_think: float,
                         ready: asyncio.Event) -> None:
    ws = await connect(url)
    stream = states(ws)

    async def until_mine(game: int) -> dict[str, Any]:
        """States until it is our move in this game, or the game is over (the computer moves meanwhile)."""
        async for state in stream:
            if state["game"] == game and (state["result"] is not None or my_turn(state, 0)):
                return state
        raise RuntimeError("the server closed the connection")

    try:
        await ws.send(json.dumps({"type": "play_computer", "opponent": rng.choice(OPPONENTS),
                                  "first": rng.choice(["you", "opponent"])}))
        ready.set()
        state = await until_mine(1)
        while True:
            await think(rng, mean_think)
            if state["result"] is not None:
                stats.games += 1
                if time.perf_counter() >= stop_at:
                    return
                await ws.send('{"type":"rematch"}')
                state = await until_mine(state["game"] + 1)
                continue
            cell = rng.choice([i for i, mark in enumerate(state["cells"]) if mark is None])
            started = time.perf_counter()
            await ws.send(json.dumps({"type": "move", "cell": cell, "game": state["game"]}))
            state = await until_mine(state["game"])  # our move, then the computer's answer (or the end)
            stats.add("computer", started, time.perf_counter())
    finally:
        await ws.close()


async def room_seat(ws: Any, seat: int, stats: Stats, stop_at: float, rng: random.Random, mean_think: float) -> None:
    waiting: tuple[float, int, int] | None = None  # (sent at, game, moves expected)
    async for state in states(ws):
        if waiting and state["game"] == waiting[1] and len(state["moves"]) >= waiting[2]:
            stats.add("room", waiting[0], time.perf_counter())
            waiting = None
        elif waiting and state["game"] > waiting[1]:
            # With rooms shared between processes a socket may be shown only the newest of two
            # quick changes: here the end of the game the move was for never came, its rematch did.
            waiting = None
        if state["result"] is not None:
            if seat == 0:
                stats.games += 1
                if time.perf_counter() >= stop_at:
                    return
                await think(rng, mean_think)
                await ws.send('{"type":"rematch"}')
            elif time.perf_counter() >= stop_at:
                return
            continue
        if my_turn(state, seat) and waiting is None:
            await think(rng, mean_think)
            cell = rng.choice([i for i, mark in enumerate(state["cells"]) if mark is None])
            waiting = (time.perf_counter(), state["game"], len(state["moves"]) + 1)
            await ws.send(json.dumps({"type": "move", "cell": cell, "game": state["game"]}))


async def room_games(url: str, stats: Stats, stop_at: float, rng: random.Random, mean_think: float,
                     ready: asyncio.Event) -> None:
    host, guest = await connect(url), await connect(url)
    try:
        await host.send('{"type":"create_room","name":"Host"}')
        while (joined := json.loads(await host.recv()))["type"] != "joined":
            pass
        await guest.send(json.dumps({"type": "join", "room": joined["room"], "name": "Guest"}))
        ready.set()
        await asyncio.gather(room_seat(host, 0, stats, stop_at, rng, mean_think),
                             room_seat(guest, 1, stats, stop_at, rng, mean_think))
    finally:
        await host.close()
        await guest.close()


async def run_level(server: Server, games: int, seconds: float, mean_think: float, seed: int,
                    redis: RedisServer | None = None) -> dict[str, Any]:
    stats = Stats()
    rng = random.Random(seed)
    ramp = max(1.0, games / 400)  # connections opened over this many seconds, not all at once
    settle = max(1.0, 2 * mean_think)
    start = time.perf_counter()
    measure_from = start + ramp + settle
    stop_at = measure_from + seconds
    stats.window = (measure_from, stop_at)
    readies = []
    tasks = []
    for number in range(games):
        ready = asyncio.Event()
        readies.append(ready)
        play = computer_games if number % 2 == 0 else room_games
        game_rng = random.Random(rng.random())

        async def delayed(play: Any = play, game_rng: random.Random = game_rng, ready: asyncio.Event = ready,
                          delay: float = ramp * number / games) -> None:
            await asyncio.sleep(delay)
            await play(server.url, stats, stop_at, game_rng, mean_think, ready)

        tasks.append(asyncio.create_task(delayed()))
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), measure_from - time.perf_counter())
    connected = sum(r.is_set() for r in readies)
    await asyncio.sleep(max(0.0, measure_from - time.perf_counter()))
    redis_cpu = redis.cpu_seconds if redis is not None else lambda: 0.0
    cpu_before, client_before, redis_before = server.cpu_seconds(), own_cpu_seconds(), redis_cpu()
    await asyncio.sleep(max(0.0, stop_at - time.perf_counter()))
    cpu, client_cpu = server.cpu_seconds() - cpu_before, own_cpu_seconds() - client_before
    in_redis = redis_cpu() - redis_before
    # every client stops after its current game; a generous limit keeps the run bounded regardless
    done, pending = await asyncio.wait(tasks, timeout=30 + 20 * mean_think)
    for task in pending:
        task.cancel()
    for task in done:
        if task.exception() is not None:
            stats.errors.append(repr(task.exception()))
    latencies = stats.computer_ms + stats.room_ms

    def pct(values: list[float], q: float) -> float | None:
        if not values:
            return None
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "games": games, "connected": connected, "think_s": mean_think, "seconds": seconds,
        "moves": len(latencies), "moves_per_s": len(latencies) / seconds,
        "p50_ms": pct(latencies, 0.50), "p99_ms": pct(latencies, 0.99), "max_ms": max(latencies, default=None),
        "computer_p99_ms": pct(stats.computer_ms, 0.99), "room_p99_ms": pct(stats.room_ms, 0.99),
        "mean_ms": statistics.fmean(latencies) if latencies else None,
        "server_cpu": cpu / seconds, "client_cpu": client_cpu / seconds,
        "server_us_per_move": cpu / len(latencies) * 1e6 if latencies else None,
        "redis_cpu": in_redis / seconds if redis is not None else None,
        "redis_us_per_move": in_redis / len(latencies) * 1e6 if redis is not None and latencies else None,
        "errors": stats.errors[:5], "error_count": len(stats.errors),
        "not_finished": len(pending),
    }


@dataclass
class Level:
    games: int
    think: float


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="100,1000", help="concurrent games, comma-separated (default 100,1000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measuring window per level (default 10)")
    parser.add_argument("--think", type=float, default=1.0,
                        help="mean think time before each move, seconds (default 1.0; uniform ±50%%)")
    parser.add_argument("--capacity-games", type=int, default=100,
                        help="games in the last run, played without think time (0: skip it)")
    parser.add_argument("--quick", action="store_true", help="shorter: 5 s windows")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--redis", action="store_true",
                        help="also run the levels on --workers processes sharing rooms in a redis-server")
    parser.add_argument("--workers", type=int, default=2, help="server processes with --redis (default 2)")
    args = parser.parse_args()
    if args.quick:
        args.seconds = min(args.seconds, 5.0)
    try:
        import websockets  # noqa: F401
    except ImportError:
        print("web_load: the websockets package is missing: pip install -e '.[web]'", file=sys.stderr)
        return 2
    raise_file_limit()
    levels = [Level(int(n), args.think) for n in args.levels.split(",") if n.strip()]
    if args.capacity_games:
        levels.append(Level(args.capacity_games, 0.0))
    setups: list[tuple[str, bool, int]] = [("one process, rooms in memory", False, 1)]
    if args.redis:
        setups.append((f"{args.workers} worker processes, rooms in Redis", True, args.workers))
    results = []
    for title, shared, workers in setups:
        redis = RedisServer() if shared else None
        log(f"starting the server: {title} (levels: "
            f"{', '.join(f'{lv.games} games, think {lv.think:g} s' for lv in levels)})")
        server = Server(redis.url if redis else None, workers)
        rows = []
        try:
            for number, level in enumerate(levels):
                log(f"{level.games} concurrent games, think {level.think:g} s: measuring for {args.seconds:g} s")
                result = asyncio.run(run_level(server, level.games, args.seconds, level.think, seed=number,
                                               redis=redis))
                result["setup"] = title
                rows.append(result)
                log(f"  {result['moves_per_s']:.0f} moves/s, p50 {fmt(result['p50_ms'])} ms, "
                    f"p99 {fmt(result['p99_ms'])} ms, server CPU {result['server_cpu']:.0%} "
                    f"({fmt(result['server_us_per_move'], 0)} µs a move), clients' CPU {result['client_cpu']:.0%}")
        finally:
            server.stop()
            if redis is not None:
                redis.stop()
        print_table(title, rows)
        results.extend(rows)
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "target": {
            "games": TARGET_GAMES, "p99_ms": TARGET_P99_MS, "cpu_us_per_move": TARGET_CPU_US}}, indent=2))
    failed = any(r["error_count"] or r["connected"] < r["games"] for r in results)
    return 1 if failed else 0


def fmt(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def print_table(title: str, results: list[dict[str, Any]]) -> None:
    print()
    print(f"noughts web: concurrent games on loopback, {title} (websockets clients in another process)")
    print(f"{'games':>6} {'think':>6} {'moves/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} "
          f"{'vs cpu p99':>10} {'room p99':>8} {'server CPU':>10} {'µs/move':>8} {'redis CPU':>9} {'µs/move':>8} "
          f"{'client CPU':>10}  target")
    for r in results:
        target = ""
        if r["games"] == TARGET_GAMES and r["think_s"] > 0:
            ok = r["p99_ms"] is not None and r["p99_ms"] <= TARGET_P99_MS and not r["error_count"]
            target = f"p99 ≤ {TARGET_P99_MS:g} ms: {'PASS' if ok else 'MISS'}"
        elif r["think_s"] == 0:
            target = "capacity (no think time)"
        redis_cpu = "n/a" if r["redis_cpu"] is None else f"{r['redis_cpu']:.0%}"
        print(f"{r['games']:>6} {r['think_s']:>5g}s {r['moves_per_s']:>8.0f} {fmt(r['p50_ms']):>7} "
              f"{fmt(r['p99_ms']):>7} {fmt(r['max_ms']):>7} {fmt(r['computer_p99_ms']):>10} "
              f"{fmt(r['room_p99_ms']):>8} {r['server_cpu']:>10.0%} {fmt(r['server_us_per_move'], 0):>8} "
              f"{redis_cpu:>9} {fmt(r['redis_us_per_move'], 0):>8} {r['client_cpu']:>10.0%}  {target}")
        if r["error_count"] or r["connected"] < r["games"] or r["not_finished"]:
            print(f"{'':>6} problems: {r['error_count']} client errors {r['errors']}, "
                  f"{r['games'] - r['connected']} games never started, {r['not_finished']} stopped by the time limit")
    cores, load = os.cpu_count() or 1, os.getloadavg()[0]
    print(f"{cores} CPU cores; load average {load:.1f} at the end (other work on the machine skews the figures)")
    print("moves/s counts the clients' moves (each answered; against the computer that includes its reply);")
    print("latency is from sending a move until the mover sees the board with it (and the computer's answer);")
    print(f"µs/move is CPU over the window per move answered (target for the server: ≤ {TARGET_CPU_US:g} µs).")


if __name__ == "__main__":
    sys.exit(main())
