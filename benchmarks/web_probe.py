"""``noughts web`` with a probe in its event loop: ``python benchmarks/web_probe.py TRACE noughts-args...``.

``benchmarks/web_attacks.py --trace DIR`` starts its server this way, to find what delays honest
moves. The probe writes ``TRACE`` (JSON) when the server stops:

- ``ticks``: a timer every millisecond in the server's event loop records the clock
  (``time.monotonic``, the same clock in every process), the loop thread's CPU time and running
  counts of what the server did (see ``COUNTS``); a gap between two ticks well over a
  millisecond is a long turn of the loop (CPU spent) or a loop that did not run (wall without CPU:
  another thread held the GIL, or the kernel gave the core to another process);
  With each tick, from the kernel (``/proc/self/task/TID/schedstat``), the loop thread's time on
  a CPU and its time runnable but waiting for one: a core taken by other processes.
- ``gc``: every garbage collection: start, duration, CPU, generation, objects collected; and at
  the end what the collector still tracks;
- ``samples`` (only with ``NOUGHTS_PROBE_SAMPLES=1``): every 2 ms, where the loop thread was,
  taken by a thread of the probe's own. Its thread takes the GIL from the loop 500 times a second
  and roughly doubled the honest p99 in the spectators attack: off by default.

:func:`report` prints what the trace says about each attack's window. The counting wrappers cost
a few µs a message.
"""

from __future__ import annotations

import array
import asyncio
import bisect
import gc
import json
import os
import sys
import threading
import time
from collections import Counter
from typing import Any

COUNTS = ("accepted", "handshakes", "joins", "leaves", "disconnects", "broadcasts", "broadcast_sockets",
          "pushes", "closes", "turnstile_waiting", "messages", "on_cpu_s", "runnable_s")
counts: list[float] = [0] * len(COUNTS)
ticks = array.array("d")  # flat: clock, CPU, the counts; an array, so the probe adds nothing for the GC to walk
collections: list[tuple[float, float, int, int, float]] = []  # start, wall, generation, collected, CPU
samples: list[tuple[float, str]] = []
_gc_started = [0.0, 0.0]
_stop = threading.Event()


def _count(name: str) -> int:
    return COUNTS.index(name)


def _wrap(owner: Any, method: str, counter: str, amount: Any = None) -> None:
    original = getattr(owner, method)
    index = _count(counter)
    if asyncio.iscoroutinefunction(original):
        async def wrapped_async(*args: Any, **kwargs: Any) -> Any:
            counts[index] += 1
            return await original(*args, **kwargs)
        setattr(owner, method, wrapped_async)
    else:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            counts[index] += 1 if amount is None else amount(*args)
            return original(*args, **kwargs)
        setattr(owner, method, wrapped)


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _gc_started[0], _gc_started[1] = time.monotonic(), time.thread_time()
    else:
        now = time.monotonic()
        collections.append((_gc_started[0], now - _gc_started[0], info["generation"], info["collected"],
                            time.thread_time() - _gc_started[1]))


def _sampler(main_id: int) -> None:
    here = __file__
    while not _stop.wait(0.002):
        frame = sys._current_frames().get(main_id)
        now = time.monotonic()
        where = []
        while frame is not None and len(where) < 6:
            name = frame.f_code.co_filename
            if name != here and "asyncio" not in name:
                short = name.rsplit("site-packages/", 1)[-1].rsplit("/src/", 1)[-1]
                where.append(f"{short}:{frame.f_code.co_name}:{frame.f_lineno}")
            frame = frame.f_back
        samples.append((now, " < ".join(where)))


def install(trace: str) -> None:
    from noughts.web import connection, hub, lobby, shield

    _wrap(shield.GuardedHTTP, "connection_made", "accepted")
    _wrap(shield.GuardedWebSocket, "handle_connect", "handshakes")
    _wrap(lobby.Lobby, "_on_join", "joins")
    _wrap(lobby.Lobby, "_on_leave", "leaves")
    _wrap(lobby.Lobby, "leave", "disconnects")
    _wrap(lobby.Lobby, "handle", "messages")
    _wrap(hub.Hub, "broadcast", "broadcasts")
    _wrap(hub.Hub, "push_local", "broadcast_sockets", lambda self, code, *rest: len(self.watching.get(code, ())))
    _wrap(connection.Connection, "push", "pushes")
    _wrap(shield.StallGuard, "connection_lost", "closes")
    gc.callbacks.append(_on_gc)
    started = lobby.Lobby.start
    async def start(self: Any) -> None:
        await started(self)
        loop = asyncio.get_running_loop()
        waiting = _count("turnstile_waiting")
        ran_at, queued_at = _count("on_cpu_s"), _count("runnable_s")

        # the loop thread's time on a CPU and waiting for one (runnable, not running), from the kernel
        schedstat = os.open(f"/proc/self/task/{threading.get_native_id()}/schedstat", os.O_RDONLY)

        def tick() -> None:
            counts[waiting] = self.guard.turnstile.waiting
            ran, queued, _ = os.pread(schedstat, 100, 0).split()
            counts[ran_at] = int(ran) / 1e9
            counts[queued_at] = int(queued) / 1e9
            ticks.append(time.monotonic())
            ticks.append(time.thread_time())
            ticks.extend(counts)
            loop.call_later(0.001, tick)

        tick()
        if os.environ.get("NOUGHTS_PROBE_SAMPLES"):  # (its thread takes the GIL every 2 ms: off unless asked)
            threading.Thread(target=_sampler, args=(threading.get_ident(),), daemon=True).start()

    lobby.Lobby.start = start  # type: ignore[method-assign]

    def write() -> None:
        _stop.set()
        heap = {"frozen": gc.get_freeze_count(), "by_generation": [len(gc.get_objects(g)) for g in range(3)],
                "oldest": Counter(type(o).__qualname__ for o in gc.get_objects(2)).most_common(12)}
        width = 2 + len(COUNTS)
        rows = [(ticks[n], ticks[n + 1], ticks[n + 2:n + width].tolist()) for n in range(0, len(ticks), width)]
        with open(trace, "w") as out:
            json.dump({"counts": COUNTS, "ticks": rows, "gc": collections, "samples": samples, **heap}, out)

    stopped = lobby.Lobby.stop

    async def stop(self: Any) -> None:  # (uvicorn ends the process by raising SIGTERM again: no atexit)
        write()
        await stopped(self)

    lobby.Lobby.stop = stop  # type: ignore[method-assign]


def report(folder: str, slowest: int = 12, gap_ms: float = 15.0) -> None:
    """Print, for each attack's window: the loop's long gaps and what ran in them, the GC passes, and
    the slowest honest moves with what the server's loop did while each was on its way."""
    from pathlib import Path

    trace = json.loads(Path(folder, "server.json").read_text())
    played = json.loads(Path(folder, "moves.json").read_text())
    names = trace["counts"]
    ticks = trace["ticks"]
    times = [tick[0] for tick in ticks]

    def between(start: float, end: float) -> tuple[int, int]:
        return max(0, bisect.bisect_left(times, start) - 1), min(len(ticks) - 1, bisect.bisect_right(times, end))

    def counted(first: int, last: int) -> str:
        before, after = ticks[first][2], ticks[last][2]
        return ", ".join(f"{name} {after[n] - before[n]:.4g}" for n, name in enumerate(names)
                         if after[n] != before[n] and "waiting" not in name)

    def ran(start: float, end: float) -> str:
        seen = Counter(where.split(" < ")[0] for when, where in trace["samples"] if start <= when <= end)
        return "; ".join(f"{count}× {where}" for where, count in seen.most_common(4))

    def collected(start: float, end: float) -> list[tuple[float, float, int, int]]:
        return [c for c in trace["gc"] if c[0] + c[1] >= start and c[0] <= end]

    print(f"at the end: {trace['frozen']} objects frozen; tracked by generation {trace['by_generation']}; "
          f"the oldest generation's types: {trace['oldest']}")
    for row in played["rows"]:
        start, end = row["monotonic"]
        first, last = between(start, end)
        gaps = [(ticks[n][0] - ticks[n - 1][0], ticks[n][1] - ticks[n - 1][1], n) for n in range(first + 1, last + 1)]
        cpu = ticks[last][1] - ticks[first][1]
        print(f"\n== {row['attack']}: p99 {row['p99_ms']:.1f} ms; loop thread CPU {cpu:.2f} s in {end - start:.0f} s; "
              f"gaps over 10/20/50 ms: {sum(g > .01 for g, _, _ in gaps)}/{sum(g > .02 for g, _, _ in gaps)}/"
              f"{sum(g > .05 for g, _, _ in gaps)}; counts: {counted(first, last)}")
        passes = collected(start, end)
        by_generation = Counter(c[2] for c in passes)
        longest = max((c[1] for c in passes), default=0.0)
        print(f"   GC: {dict(by_generation)} passes, {1000 * sum(c[1] for c in passes):.1f} ms in all "
              f"(CPU {1000 * sum(c[4] for c in passes):.1f}), longest {1000 * longest:.1f} ms")
        for wall, spent, n in sorted(gaps, reverse=True)[:8]:
            if wall * 1000 < gap_ms:
                break
            at = ticks[n - 1][0]
            waiting = ticks[n - 1][2][names.index("turnstile_waiting")]
            gcs = [f"gen{c[2]} {1000 * c[1]:.1f} ms (CPU {1000 * c[4]:.1f})" for c in collected(at, at + wall)]
            print(f"   gap {1000 * wall:5.1f} ms at +{at - start:6.3f} s, CPU {1000 * spent:5.1f} ms, "
                  f"waiting {waiting:.0f}, {counted(n - 1, n)}; GC {gcs}; ran: {ran(at, at + wall)}")
        moves = sorted((m for m in played["moves"] if start <= m[0] <= end), key=lambda m: -m[1])
        for sent, trip in moves[:slowest]:
            a, b = between(sent, sent + trip)
            inside = [(ticks[n][0] - ticks[n - 1][0], ticks[n][1] - ticks[n - 1][1]) for n in range(a + 1, b + 1)]
            wall, spent = max(inside, default=(0.0, 0.0))
            gcs = [f"gen{c[2]} {1000 * c[1]:.1f} ms" for c in collected(sent, sent + trip)]
            print(f"   move {1000 * trip:5.1f} ms at +{sent - start:6.3f} s: longest gap {1000 * wall:5.1f} ms "
                  f"(CPU {1000 * spent:4.1f}), loop CPU {1000 * (ticks[b][1] - ticks[a][1]):5.1f} ms; GC {gcs}; "
                  f"{counted(a, b)}")


def main() -> int:
    if len(sys.argv) < 3:
        raise SystemExit("usage: web_probe.py TRACE.json web [noughts web's options]")
    trace, *arguments = sys.argv[1:]
    install(trace)
    from noughts.cli import main as noughts

    return noughts(arguments)


if __name__ == "__main__":
    sys.exit(main())
