"""The floor under the web server's CPU a move: ``python benchmarks/web_floor.py [--sockets N] [--think S]``.

A bare server on the same event loop (uvloop when installed) that answers each masked websocket
text frame with one 600-byte text frame (a ``state``'s size) and does nothing else: no HTTP, no
JSON, no game. Clients in another process hold ``--sockets`` connections, each sending one frame
every ``--think`` seconds on average (uniform ±50 %), as ``benchmarks/web_load.py`` does with 600
games. It prints the server process's CPU (user + system) per message over a 10 s window: what
the kernel's loopback TCP, ``epoll`` and the event loop cost a message on this machine, before
any of the game's Python (see docs/web-protocol.md, Load).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import resource
import socket
import statistics
import time
from typing import Any

REPLY = bytes((0x81, 126)) + (600).to_bytes(2, "big") + b"x" * 600  # an unmasked 600-byte text frame
MARK = REPLY[:4]
FRAME = bytes((0x81, 0x80 | 30)) + b"\0\0\0\0" + b"y" * 30  # a client's masked 30-byte text frame


class _Echo(asyncio.Protocol):
    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        at = 0
        while at + 2 <= len(data):  # (the clients' frames are short and arrive whole)
            at += 6 + (data[at + 1] & 0x7F)
            self.transport.write(REPLY)


def _run(main: Any) -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(main())
    else:
        uvloop.run(main())


def _serve(port: int, ready: Any, cpu: Any) -> None:
    async def main() -> None:
        await asyncio.get_running_loop().create_server(_Echo, "127.0.0.1", port, backlog=2048)
        ready.set()
        while True:  # its own CPU, to the microsecond (the clock ticks of /proc are 10 ms: too coarse here)
            usage = resource.getrusage(resource.RUSAGE_SELF)
            cpu.value = usage.ru_utime + usage.ru_stime
            await asyncio.sleep(0.5)

    _run(main)


class _Client(asyncio.Protocol):
    def __init__(self, answered: list[int]) -> None:
        self.answered = answered

    def data_received(self, data: bytes) -> None:
        self.answered[0] += data.count(MARK)


def _clients(port: int, sockets: int, think: float, answered: Any) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        counted = [0]
        transports = []
        for _ in range(sockets):
            transport, _ = await loop.create_connection(lambda: _Client(counted), "127.0.0.1", port)
            transports.append(transport)

        async def talk(transport: Any) -> None:
            await asyncio.sleep(random.random() * think)
            while True:
                transport.write(FRAME)
                await asyncio.sleep(think * (0.5 + random.random()))

        talking = [asyncio.create_task(talk(transport)) for transport in transports]  # noqa: F841 (kept)
        while True:
            await asyncio.sleep(0.2)
            answered.value = counted[0]

    _run(main)


def measure(sockets: int, think: float, seconds: float = 10.0) -> tuple[float, float]:
    """Messages a second and the server's µs of CPU a message."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    context = multiprocessing.get_context("fork")
    ready, answered, used = context.Event(), context.Value("q", 0), context.Value("d", 0.0)
    server = context.Process(target=_serve, args=(port, ready, used), daemon=True)
    server.start()
    ready.wait(30)
    clients = context.Process(target=_clients, args=(port, sockets, think, answered), daemon=True)
    clients.start()
    try:
        time.sleep(3 + 2 * think)  # every socket connected and talking
        cpu, messages = used.value, answered.value
        time.sleep(seconds)
        cpu, messages = used.value - cpu, answered.value - messages
    finally:
        clients.kill()
        server.kill()
    return messages / seconds, 1e6 * cpu / max(1, messages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sockets", type=int, default=1200, help="client sockets (default 1,200)")
    parser.add_argument("--think", type=float, default=6.0, help="mean seconds between a socket's messages "
                                                                  "(default 6: about 200 messages a second)")
    parser.add_argument("--runs", type=int, default=3, help="runs; the median is reported (default 3)")
    parser.add_argument("--quick", action="store_true", help="one run of 300 sockets")
    args = parser.parse_args()
    if args.quick:
        args.sockets, args.runs = 300, 1
    costs = []
    for _ in range(args.runs):
        rate, cost = measure(args.sockets, args.think)
        costs.append(cost)
        print(f"{args.sockets} sockets: {rate:.0f} messages a second, server {cost:.0f} µs of CPU a message "
              f"(load {os.getloadavg()[0]:.1f})", flush=True)
    print(f"median: {statistics.median(costs):.0f} µs of CPU a message (one frame read, one written)")


if __name__ == "__main__":
    main()
