"""The engine's loop: the common 3×3 requests answered from what earlier ones worked out, exactly as
handle() answers them, whatever pieces the input comes in, with replies flushed once nothing is left."""

from __future__ import annotations

import io
import itertools
import json
import os
import random
import select
import subprocess
import sys
import time
from typing import Any

import pytest

from noughts import Board, engine
from noughts.engine import MAX_LINE_BYTES, encode, handle_line, run
from noughts.players.perfect_33 import MOVES
from positions import every_3x3_position

# Requests the loop must leave to the general path, and some it may answer itself, between the others.
ODD_LINES = [
    b"", b"   ", b"\r", b"\xef\xbb\xbf" + b'{"cmd":"status"}', b'\xff{"cmd":"status"}', b"[1]", b"{", b"nonsense",
    b'{"cmd":"status"} {"cmd":"status"}', b'{"cmd":"move","position":"XXX/OO./..."}',
    b'{"cmd":"move","position":"XXX/OO./...","id":3}', b'{"cmd":"move","player":"Perfect","seed":4}',
    b'{"cmd":"move","player":"random","seed":4,"id":"r"}', b'{"cmd":"move","player":"random"}',
    b'{"cmd":"move","seed":"4"}', b'{"cmd":"move","seed":true}', b'{"cmd":"move","seed":4.0}',
    b'{"cmd":"move","nodes":100,"seed":1}', b'{"cmd":"move","seconds":null,"nodes":null,"seed":1}',
    b'{"cmd":"move","rows":3,"position":"X........"}', b'{"cmd":"move","k":3}',
    b'{"cmd":"move","rows":2,"cols":3,"seed":5}', b'{"cmd":"move","position":"X..../...../.....","seed":2}',
    b'{"cmd":"move","position":"XXXX"}', b'{"cmd":"move","position":7}', b'{"cmd":"move","position":"x...o...."}',
    b'{"cmd":"move","positon":"X"}',
    b'{"cmd":"move","id":[1]}', b'{"cmd":"move","id":1.5}', b'{"cmd":"move","id":false}', b'{"cmd":"move","id":1e400}',
    b'{"cmd":"move","id":"\\u00e9\\ud83d\\ude00"}', '{"cmd":"move","id":"é"}'.encode(), b'{"cmd":"move","id":-0}',
    b'{"cmd":"move","id":' + b"9" * 5000 + b"}", b'{"cmd":"status","seed":1}', b'{"cmd":"status","position":null}',
    b'{"cmd":"analyze","position":"XX./OO./...","id":null}', b'{"cmd":"analyse","nodes":0,"position":"XX./OO./..."}',
    b'{"cmd":"analyse","seconds":0}', b'{"cmd":"status","rows":2,"cols":4,"k":2}', b'{"cmd":"players","id":9}',
    b'{"cmd":"hello"}', b'{"cmd":["move"]}', b'{"cmd":"jump"}', b'{"id":2}', b'{"cmd":"move","position":["X"]}',
    b"[" * 60_000, b'{"cmd": "status", "position": "X.O/.X./..O"}\r', b'  {"cmd":"move","seed":9}  ',
]


@pytest.fixture(scope="module")
def positions() -> list[Board]:
    """Every reachable 3×3 position, found with play()."""
    return list(every_3x3_position().values())


@pytest.fixture(scope="module")
def stream(positions: list[Board]) -> bytes:
    """Every 3×3 position asked about (moves seeded and not, status, analyse), in both notations,
    with every kind of id, compact and spaced, between ODD_LINES."""
    assert len(positions) == 5478
    ids: list[Any] = [7, "a-\u00e9", None, -12, 2**40, "", 3.5, True]
    lines = []
    for number, board in enumerate(positions):
        text = str(board) if number % 2 else str(board).replace("/", "")
        for command in ({"cmd": "move", "seed": number}, {"cmd": "status"},
                        {"cmd": "analyse" if number % 3 else "analyze"}, {"cmd": "move"}):
            if command["cmd"] not in ("move", "status") and number % 4:
                continue  # analyse on a quarter of the positions: its reply is long and the same each time
            request: dict[str, Any] = {**command, "position": text}
            if number % 9:
                request["id"] = ids[number // 2 % len(ids)]  # each kind in both notations
            if number % 5 == 0:
                request = dict(reversed(request.items()))
            spaced = number % 2 == 0
            lines.append(json.dumps(request, separators=(", ", ": ") if spaced else (",", ":"),
                                    ensure_ascii=number % 3 == 0).encode())
        if number % 100 == 0:
            lines.append(ODD_LINES[number // 100 % len(ODD_LINES)])
    lines.extend(ODD_LINES)
    return b"\n".join(lines) + b"\n"


def general_replies(data: bytes) -> str:
    """What handle_line() and encode() say to each line: the general path, one line at a time."""
    replies = [handle_line(line) for line in data.split(b"\n")[:-1]]
    return "".join(encode(reply) + "\n" for reply in replies if reply is not None)


def loop_replies(reader: Any) -> str:
    out = io.StringIO()
    assert run(reader, out) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def expected(stream: bytes) -> str:
    """The general path's replies, with the unseeded moves' shared generator seeded."""
    engine._unseeded = random.Random(11)
    try:
        return general_replies(stream)
    finally:
        engine._unseeded = None


def test_the_loop_answers_every_3x3_request_as_handle_does(positions: list[Board], stream: bytes,
                                                            expected: str) -> None:
    engine._boards_33.clear()
    for replies in engine._replies_33.values():
        replies.clear()
    engine._unseeded = random.Random(11)  # the same draws, in the same order, for the unseeded moves
    try:
        got = loop_replies(io.BytesIO(stream))
    finally:
        engine._unseeded = None
    assert got == expected
    replies = [json.loads(line) for line in got.splitlines()]
    unfinished = sum(not board.is_over for board in positions)
    assert sum("index" in reply for reply in replies) >= 2 * unfinished  # the moves were moves, not errors
    assert len(engine._boards_33) <= engine._FAST_POSITIONS_KEPT
    assert all(text is None or len(text) <= 16 for text in engine._boards_33)  # no long text kept
    assert 4000 < len(engine._replies_33["status"]) <= 5478  # most were answered from the cache, which is bounded


def test_every_3x3_move_of_the_loop_is_a_best_move(positions: list[Board]) -> None:
    unfinished = [board for board in positions if not board.is_over]
    data = b"".join(b'{"cmd":"move","position":"%s","id":%d}\n' % (str(board).encode(), n)
                    for n, board in enumerate(unfinished))
    replies = [json.loads(line) for line in loop_replies(io.BytesIO(data)).splitlines()]
    assert [reply["id"] for reply in replies] == list(range(len(unfinished)))
    assert all(reply["index"] in MOVES[board.key] for reply, board in zip(replies, unfinished, strict=True))
    assert {reply["cell"] for reply in replies} == {Board().cell_name(cell) for cell in range(9)}


class PieceReader:
    """Gives the data back in the pieces asked for, and knows how big a piece anyone read."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces
        self.biggest = 0
        self.reads = 0

    def read1(self, size: int = -1) -> bytes:
        self.reads += 1
        piece = self.pieces.pop(0) if self.pieces else b""
        assert size > 0 and len(piece) <= size
        self.biggest = max(self.biggest, len(piece))
        return piece


def split(data: bytes, rng: random.Random, most: int) -> list[bytes]:
    cuts = sorted({0, len(data), *(rng.randrange(len(data)) for _ in range(len(data) // (most // 2) + 1))})
    pieces = [data[a:b] for a, b in itertools.pairwise(cuts)]
    return [part for piece in pieces for part in (piece[i:i + most] for i in range(0, len(piece), most))]


def test_lines_in_any_pieces_get_the_same_replies(stream: bytes) -> None:
    rng = random.Random(5)
    requests = [line for line in stream.split(b"\n")[:-1] if b'"move"' not in line or b"seed" in line]
    data = b"\n".join(requests[::7]) + b"\n"
    too_long = b'{"cmd":"status","id":"' + b"x" * MAX_LINE_BYTES + b'"}\n'
    edge = b'{"cmd":"status","id":"' + b"y" * (MAX_LINE_BYTES - 24) + b'"}\n'  # exactly the limit
    assert len(edge) == MAX_LINE_BYTES + 1
    data = data + too_long + edge + b'{"cmd":"status","id":"last"}'  # no newline at the end
    wanted = general_replies(data + b"\n")
    for most in (1 << 16, 4000, 97):
        reader = PieceReader(split(data, rng, most))
        assert loop_replies(reader) == wanted
        assert reader.biggest <= MAX_LINE_BYTES + 1
    last_too_long = b'{"cmd":"status"}\n' + b"z" * (MAX_LINE_BYTES + 1)
    for pieces in (split(last_too_long, rng, 1 << 16), split(last_too_long, rng, 5000)):
        replies = [json.loads(line) for line in loop_replies(PieceReader(pieces)).splitlines()]
        assert replies[0]["turn"] == "X" and "longer than" in replies[1]["error"] and len(replies) == 2


class LineReader:
    """A stream that can only be read line by line (no read1)."""

    def __init__(self, data: bytes) -> None:
        self.readline = io.BytesIO(data).readline


def test_a_stream_read_by_lines_gets_the_same_replies(stream: bytes) -> None:
    data = b"\n".join(line for line in stream.split(b"\n")[::5] if b'"move"' not in line or b"seed" in line) + b"\n"
    assert loop_replies(LineReader(data)) == loop_replies(io.BytesIO(data)) == general_replies(data)


class Recorder(io.StringIO):
    """Output that counts the reply lines flushed so far."""

    flushed = 0

    def flush(self) -> None:
        self.flushed = self.getvalue().count("\n")


def test_replies_are_flushed_once_no_complete_line_is_left_and_before_a_slow_request(
        monkeypatch: pytest.MonkeyPatch) -> None:
    out = Recorder()
    seen: list[tuple[int, int]] = []  # (reads so far, replies flushed) at each read

    class Watched(PieceReader):
        def read1(self, size: int = -1) -> bytes:
            seen.append((self.reads, out.flushed))
            return super().read1(size)

    general = engine.handle_line
    at_general: list[int] = []

    def handle_line(line: bytes | str) -> Any:
        at_general.append(out.flushed)
        return general(line)

    monkeypatch.setattr(engine, "handle_line", handle_line)
    status = b'{"cmd":"status"}\n'
    pieces = [status * 3, status[:5], status[5:] + status, status + b'{"cmd":"players"}\n' + status * 2, b"\n\n"]
    assert run(Watched(pieces), out) == 0
    assert seen == [(0, 0), (1, 3), (2, 3), (3, 5), (4, 9), (5, 9)]
    assert at_general == [6]  # what was ready went out before the players request was answered


# Without PYTHONUNBUFFERED, so a reply only arrives if the engine really flushes it.
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def read_replies(stdout: Any, count: int, timeout: float = 20) -> list[dict[str, Any]]:
    """``count`` reply lines, failing (not hanging) if the engine does not flush them."""
    fd = stdout.fileno()
    buffer = b""
    deadline = time.monotonic() + timeout
    while buffer.count(b"\n") < count:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no reply within {timeout} s (got {buffer!r})"
        chunk = os.read(fd, 65536)
        assert chunk, "the engine closed its output"
        buffer += chunk
    assert buffer.count(b"\n") == count and buffer.endswith(b"\n")
    return [json.loads(line) for line in buffer.splitlines()]


def test_a_client_gets_a_batch_at_once_and_then_each_answer_as_it_asks() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "noughts", "engine"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=BUFFERED)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        batch = b"".join(b'{"cmd":"move","position":"XX./OO./...","seed":%d,"id":%d}\n' % (n, n) for n in range(300))
        proc.stdin.write(batch)
        proc.stdin.flush()
        replies = read_replies(proc.stdout, 300)
        assert replies == [{"id": n, "index": 2, "cell": "c1"} for n in range(300)]
        for n, (position, cell) in enumerate([("XX./OO./...", 2), ("X.O/.X./..O", 5), ("OO./XX./X..", 2)]):
            proc.stdin.write(b'{"cmd":"move","position":"%s","id":%d}\n' % (position.encode(), n))
            proc.stdin.flush()
            assert read_replies(proc.stdout, 1) == [{"id": n, "index": cell, "cell": Board().cell_name(cell)}]
        proc.stdin.write(b'{"cmd":"status","id":"end"}')  # no newline: answered at the end of input
        proc.stdin.close()
        assert read_replies(proc.stdout, 1)[0]["id"] == "end"
        assert proc.wait(timeout=20) == 0
        assert proc.stderr.read() == b""
    finally:
        proc.kill()
        proc.wait()
