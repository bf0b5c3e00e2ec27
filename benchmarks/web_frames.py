"""The server's CPU for one message each way, and for one move: ``python benchmarks/web_frames.py [--quick]
[--json FILE]``.

Serves the web game from a thread (uvloop when installed, as ``noughts web``) twice, side by side in
one process: once with the server's protocol (``noughts.web.shield.GuardedWebSocket``, the default)
and once with uvicorn's stock websockets-sansio protocol with nothing of shield's but the stall guard
(the peer). From a bare socket to each, in lockstep, so every message is read and answered on its own
as in a game at people's pace, it plays ``{"type":"ping"}`` (one masked text frame in, one ``pong``
frame out) and moves of 3×3 games against the computer (a move in, the board with the computer's reply
out). It reports each server thread's CPU (Linux ``/proc``) a round trip and a move, the median of many
short rounds alternating between the two servers, and the ratio.

Issue 30's rule: a hand-written layer stays only if it saves at least a quarter of the server's CPU a
move against the library's own path. shield once read and wrote the frames clients send most itself;
measured here against the stock protocol it saved 13–24 % a move (36–40 % a bare ping), so it went: the
server's protocol is now the library's path with budgets uvicorn has no option for (control frames,
fragments, unread pongs, reading after close), and this benchmark shows what those cost.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import random
import socket
import statistics
import struct
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from noughts.web import shield
from noughts.web.protocol import Limits
from noughts.web.server import running

PING = b'{"type":"ping"}'


def thread_cpu(tid: int) -> float:
    """The thread's CPU time in seconds: to the nanosecond from the scheduler's count where the kernel keeps it."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(Path(f"/proc/self/task/{tid}/schedstat").read_text().split()[0]) / 1e9
    fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Client:
    def __init__(self, base: str) -> None:
        host, port = base.split("//")[1].split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.sock.sendall(f"GET /ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(65536)
        self.buffer = self.buffer.split(b"\r\n\r\n", 1)[1]
        self.ping = bytes((0x81, 0x80 | len(PING))) + bytes(4) + PING  # masked with zeros (RFC 6455 allows it)
        self.game: dict[str, Any] = {}

    def message(self) -> bytes:
        while True:
            if len(self.buffer) >= 2:
                size, at = self.buffer[1] & 0x7F, 2
                if size == 126 and len(self.buffer) >= 4:
                    size, at = struct.unpack("!H", self.buffer[2:4])[0], 4
                if len(self.buffer) >= at + size:
                    opcode = self.buffer[0] & 0x0F
                    payload, self.buffer = self.buffer[at:at + size], self.buffer[at + size:]
                    if opcode == 0x9:  # the server's keepalive ping: answered, as a browser does
                        self.sock.sendall(bytes((0x8A, 0x80 | len(payload))) + bytes(4) + payload)
                        continue
                    return payload
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("the server closed the connection")
            self.buffer += chunk

    def send(self, text: bytes) -> None:
        self.sock.sendall(bytes((0x81, 0x80 | len(text))) + bytes(4) + text)  # masked with zeros (RFC 6455)

    def round_trip(self) -> None:
        self.sock.sendall(self.ping)
        while not self.message().startswith(b'{"type":"pong"'):  # (after a game: what came after its last board)
            pass

    def state(self) -> dict[str, Any]:
        while True:
            payload = self.message()
            if payload.startswith(b'{"type":"state"'):
                return dict(json.loads(payload))
            if payload.startswith(b'{"type":"error"'):
                raise SystemExit(f"the server refused a move: {payload[:200]!r}")

    def start_game(self) -> dict[str, Any]:
        self.send(b'{"type":"play_computer","opponent":"random","first":"you"}')
        return self.state()

    def play(self, moves: int, rng: random.Random) -> None:
        """``moves`` moves of 3×3 games against the computer, each answered (with its reply) before the next."""
        state = self.game
        for _ in range(moves):
            if state["result"] is not None:
                self.send(b'{"type":"rematch"}')
                state = self.state()
                while state["result"] is not None or state["turn"] != state["seats"][0]["mark"]:
                    state = self.state()
            cell = rng.choice([i for i, mark in enumerate(state["cells"]) if mark is None])
            self.send(f'{{"type":"move","cell":{cell},"game":{state["game"]}}}'.encode())
            state = self.state()
            while state["result"] is None and state["turn"] != state["seats"][0]["mark"]:
                state = self.state()  # the board with the move, then with the computer's reply
        self.game = state


# uvicorn's stock websockets-sansio protocol with only the stall guard (connection limits, timeouts) of shield's
LIBRARY = "websockets-sansio-stock"


def stock_protocol() -> type:
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    return type("StockWebSocket", (shield.StallGuard, WebSocketsSansIOProtocol), {})


def measure(tid: int, count: int, step: Callable[[], None]) -> float:
    for _ in range(max(count // 20, 10)):  # settle
        step()
    before = thread_cpu(tid)
    for _ in range(count):
        step()
    return (thread_cpu(tid) - before) / count * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # many short rounds, alternating: a busy machine's spells fall on both servers alike
    parser.add_argument("--rounds", type=int, default=40, help="rounds of each (default 40; the median is reported)")
    parser.add_argument("--messages", type=int, default=250, help="round trips and moves a round (default 250)")
    parser.add_argument("--quick", action="store_true", help="12 rounds of 250")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    if args.quick:
        args.rounds = 12
    if not Path("/proc/self/task").is_dir():
        print("web_frames: needs Linux's /proc for a thread's CPU time", file=sys.stderr)
        return 0
    limits = Limits(rate=1e9, burst=1e9, address_rate=1e9, address_burst=10**9, join_rate=1e9, join_burst=1e9)
    sys.modules[__name__].StockWebSocket = stock_protocol()  # type: ignore[attr-defined]
    shield.WS_IMPLEMENTATIONS[LIBRARY] = f"{__name__}:StockWebSocket"
    figures: dict[str, list[float]] = {f"{kind}_{path}": [] for kind in ("ping", "move")
                                       for path in ("shield", "library")}
    rng = random.Random(30)
    with contextlib.ExitStack() as stack:
        servers = {}
        for path, ws in (("shield", "websockets-sansio"), ("library", LIBRARY)):
            base = stack.enter_context(running(scores=False, notify=lambda line: None, limits=limits, ws=ws))
            tid = next(t.native_id for t in threading.enumerate() if t.name == "noughts-web" and t.native_id
                       and t.native_id not in [server[0] for server in servers.values()])
            client = Client(base)
            stack.callback(client.sock.close)
            while b'"scores"' not in client.message()[:20]:  # the welcome, then the scores
                pass
            client.game = client.start_game()
            servers[path] = (tid, client)
        for _ in range(args.rounds):
            for path, (tid, client) in servers.items():
                figures[f"ping_{path}"].append(measure(tid, args.messages, client.round_trip))
                figures[f"move_{path}"].append(measure(tid, 1, functools.partial(client.play, args.messages, rng))
                                               / args.messages)
    median = {name: statistics.median(values) for name, values in figures.items()}
    print(f"web frames: server thread CPU, median of {args.rounds} × {args.messages:,} (lockstep, one message each "
          f"way)")
    for kind, what in (("ping", "a ping/pong round trip"), ("move", "a move against the computer (3×3)")):
        own, library = median[f"{kind}_shield"], median[f"{kind}_library"]
        print(f"  {what}")
        print(f"    the server's protocol (GuardedWebSocket)       {own:6.1f} µs  "
              f"{[round(x) for x in figures[f'{kind}_shield']]}")
        print(f"    websockets' parser, uvicorn's stock protocol  {library:6.1f} µs  "
              f"{[round(x) for x in figures[f'{kind}_library']]}")
        print(f"    ratio {library / own:.2f}× (shield's budgets cost {own / library - 1:+.0%}; a hand-written path "
              f"stays only if it saves ≥ 25 % a move)")
    if args.json:
        Path(args.json).write_text(json.dumps({"median_us": median, "runs": figures}, indent=2))
    print(f"  (load average {os.getloadavg()[0]:.1f}; other work on the machine skews both)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
