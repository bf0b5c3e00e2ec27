"""The server's CPU for one message each way: ``python benchmarks/web_frames.py [--quick] [--json FILE]``.

Serves the web game from a thread (uvloop when installed, uvicorn's websockets-sansio protocol,
as ``noughts web``) and plays ``{"type":"ping"}`` against it from a bare socket in lockstep: one
masked text frame in, one ``pong`` frame out, so every message is read and answered on its own as
in a game at people's pace. It reports the server thread's CPU (Linux ``/proc``) a round trip,
the median of several rounds, with the frames read and written directly by the server's protocol
(``noughts.web.shield.GuardedWebSocket``: the default) and, alternating with it in the same run,
with both of those paths switched off (websockets' general parser and the ASGI send: the peer).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import struct
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from noughts.web import shield
from noughts.web.protocol import Limits
from noughts.web.server import running

PING = b'{"type":"ping"}'


def thread_cpu(tid: int) -> float:
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

    def message(self) -> bytes:
        while True:
            if len(self.buffer) >= 2:
                size, at = self.buffer[1] & 0x7F, 2
                if size == 126 and len(self.buffer) >= 4:
                    size, at = struct.unpack("!H", self.buffer[2:4])[0], 4
                if len(self.buffer) >= at + size:
                    payload, self.buffer = self.buffer[at:at + size], self.buffer[at + size:]
                    return payload
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("the server closed the connection")
            self.buffer += chunk

    def round_trip(self) -> None:
        self.sock.sendall(self.ping)
        if b"pong" not in self.message():
            raise SystemExit("the server did not answer pong")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each (default 5; the median is reported)")
    parser.add_argument("--messages", type=int, default=2000, help="round trips a round (default 2,000)")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 500")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.messages = 3, 500
    if not Path("/proc/self/task").is_dir():
        print("web_frames: needs Linux's /proc for a thread's CPU time", file=sys.stderr)
        return 0
    limits = Limits(rate=1e9, burst=1e9, address_rate=1e9, address_burst=10**9)
    direct = shield.GuardedWebSocket._take_texts, shield.GuardedWebSocket.write_frame
    general = (lambda self, data: False), (lambda self, frame: False)
    figures: dict[str, list[float]] = {"direct": [], "general": []}
    with running(scores=False, notify=lambda line: None, limits=limits) as base:
        tid = next(t.native_id for t in threading.enumerate() if t.name == "noughts-web" and t.native_id)
        client = Client(base)
        while b'"scores"' not in client.message()[:20]:  # the welcome, then the scores
            pass
        try:
            for _ in range(args.rounds):
                for kind, (take, write) in (("direct", direct), ("general", general)):
                    shield.GuardedWebSocket._take_texts, shield.GuardedWebSocket.write_frame = take, write  # type: ignore[method-assign]
                    for _ in range(50):  # settle on this path
                        client.round_trip()
                    before = thread_cpu(tid)
                    for _ in range(args.messages):
                        client.round_trip()
                    figures[kind].append((thread_cpu(tid) - before) / args.messages * 1e6)
        finally:
            shield.GuardedWebSocket._take_texts, shield.GuardedWebSocket.write_frame = direct  # type: ignore[method-assign]
            client.sock.close()
    fast, slow = (statistics.median(figures[kind]) for kind in ("direct", "general"))
    print(f"web frames: server thread CPU a ping/pong round trip, median of {args.rounds} × {args.messages:,} "
          f"(lockstep, one message each way; CPU in 1/{os.sysconf('SC_CLK_TCK')} s ticks)")
    print(f"  read and written directly by the protocol (default) {fast:6.1f} µs  "
          f"{[round(x) for x in figures['direct']]}")
    print(f"  websockets' parser and the ASGI send (peer)         {slow:6.1f} µs  "
          f"{[round(x) for x in figures['general']]}")
    if args.json:
        Path(args.json).write_text(json.dumps({"direct_us": fast, "general_us": slow, "runs": figures}, indent=2))
    print(f"  ratio {slow / fast:.2f}× (load average {os.getloadavg()[0]:.1f}; other work on the machine skews both)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
