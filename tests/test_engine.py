"""The JSON-lines engine: handle() in-process, run() on byte streams, and the real subprocess."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from child_signals import default_sigint
from noughts import Board, NoughtsError, solver
from noughts.engine import MAX_LINE_BYTES, encode, handle, handle_line, run

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "engine-protocol.md"
README = ROOT / "README.md"


def ask(**request: Any) -> dict[str, Any]:
    return handle(request)


def assert_error(reply: dict[str, Any], *words: str) -> None:
    assert set(reply) <= {"error", "id"}, reply
    assert isinstance(reply["error"], str) and reply["error"], reply
    assert "internal error" not in reply["error"], reply
    for word in words:
        assert word in reply["error"], (word, reply)


def run_lines(data: bytes) -> list[dict[str, Any]]:
    out = io.StringIO()
    assert run(io.BytesIO(data), out) == 0
    text = out.getvalue()
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


# status ------------------------------------------------------------------------------------

def test_status_of_a_game_in_progress() -> None:
    assert ask(cmd="status", position="X.O/.X./..O") == {
        "turn": "X", "winner": None, "line": None, "over": False, "legal": [1, 3, 5, 6, 7]}


def test_status_of_a_win_a_draw_and_the_empty_board() -> None:
    won = ask(cmd="status", position="XXX/OO./...")
    assert won == {"turn": None, "winner": "X", "line": [0, 1, 2], "over": True, "legal": []}
    drawn = ask(cmd="status", position="XOX/XOO/OXX")
    assert drawn == {"turn": None, "winner": None, "line": None, "over": True, "legal": []}
    assert ask(cmd="status")["legal"] == list(range(9))


def test_rows_and_cols_without_a_position_mean_the_empty_board_of_that_size() -> None:
    reply = ask(cmd="status", rows=4, cols=5)
    assert reply["legal"] == list(range(20)) and reply["turn"] == "X"
    assert ask(cmd="status", rows=2)["legal"] == list(range(6))  # cols defaults to 3


def test_k_overrides_the_default() -> None:
    # X has two in a row: a win only when k is 2
    assert ask(cmd="status", position="XX./O../...", k=2)["winner"] == "X"
    assert ask(cmd="status", position="XX./O../...")["winner"] is None
    assert ask(cmd="status", rows=4, cols=4)["turn"] == "X"
    reply = ask(cmd="analyse", rows=3, cols=4, k=3)
    assert (reply["value"], reply["plies"]) == tuple(solver.solve(Board(3, 4, 3)))


def test_rows_or_cols_that_disagree_with_the_position_are_an_error() -> None:
    assert_error(ask(cmd="status", position="X.O/.X./..O", rows=4), "rows", "3×3")
    assert_error(ask(cmd="status", position="X.O/.X./..O", cols=2), "cols")
    assert ask(cmd="status", position="X.O/.X./..O", rows=3, cols=3)["turn"] == "X"


# move --------------------------------------------------------------------------------------

def test_move_returns_a_legal_cell_with_its_name() -> None:
    reply = ask(cmd="move", position="X.O/.X./..O", seed=7)
    assert set(reply) == {"index", "cell"}
    board = Board.parse("X.O/.X./..O")
    assert reply["index"] in board.legal_moves
    assert reply["cell"] == board.cell_name(reply["index"])


def test_the_default_player_is_perfect() -> None:
    # O must take an edge: a corner loses to a fork, which only solver-backed players always see
    position = "X../.O./..X"
    best = set(solver.best_moves(Board.parse(position)))
    for seed in range(10):
        assert ask(cmd="move", position=position, seed=seed)["index"] in best
    assert ask(cmd="move", position="XX./OO./...", player="perfect") == {"index": 2, "cell": "c1"}


@pytest.mark.parametrize("player", ["random", "easy", "perfect", "medium"])
def test_the_same_seed_gives_the_same_move(player: str) -> None:
    for seed in (0, 7, 2**70, -3):
        first = ask(cmd="move", player=player, seed=seed)
        ask(cmd="move", player=player)  # an unseeded request in between changes nothing
        assert [ask(cmd="move", player=player, seed=seed) for _ in range(3)] == [first] * 3


def test_seeds_matter_and_no_seed_means_random() -> None:
    seeded = {ask(cmd="move", player="random", seed=s)["index"] for s in range(30)}
    assert len(seeded) > 3
    unseeded = {ask(cmd="move", player="random")["index"] for _ in range(30)}
    assert len(unseeded) > 3


def test_move_on_a_bigger_board_and_with_k() -> None:
    reply = ask(cmd="move", player="random", rows=5, cols=6, k=4, seed=1)
    assert 0 <= reply["index"] < 30
    # two in a row wins: X takes b1 or b2 (a1-b2 is a diagonal of two)
    assert ask(cmd="move", position="X../O../...", k=2, seed=1)["cell"] in {"b1", "b2"}


def test_move_errors() -> None:
    assert_error(ask(cmd="move", position="XXX/OO./..."), "over", "X has won")
    assert_error(ask(cmd="move", position="XOX/XOO/OXX"), "over", "full")
    assert_error(ask(cmd="move", player="nobody"), "nobody")
    assert_error(ask(cmd="move", player="parsons", rows=4, cols=4), "3×3")
    assert_error(ask(cmd="move", seed="7"), "seed", "whole number")
    assert_error(ask(cmd="move", seed=1.5), "seed")
    assert_error(ask(cmd="move", player=3), "player")
    long_name = ask(cmd="move", player="z" * 60_000)
    assert_error(long_name, "zzz")
    assert len(long_name["error"]) <= 1001


# analyse -----------------------------------------------------------------------------------

def test_analyse_matches_the_solver_move_by_move() -> None:
    position = "X.O/.X./..."
    board = Board.parse(position)
    expected = solver.analyse(board)
    reply = ask(cmd="analyse", position=position)
    assert (reply["value"], reply["plies"]) == (expected.value, expected.plies)
    assert reply["moves"] == [
        {"index": m.index, "cell": board.cell_name(m.index), "value": m.value, "plies": m.plies}
        for m in expected.moves]


def test_analyse_values() -> None:
    assert {k: ask(cmd="analyse")[k] for k in ("value", "plies")} == {"value": 0, "plies": 9}
    win = ask(cmd="analyse", position="XX./OO./...")
    assert (win["value"], win["plies"]) == (1, 1)
    assert {"index": 2, "cell": "c1", "value": 1, "plies": 1} in win["moves"]
    # a finished game: the side to move has lost, nothing to play
    assert ask(cmd="analyse", position="XXX/OO./...") == {"value": -1, "plies": 0, "moves": []}
    assert ask(cmd="analyse", position="XOX/XOO/OXX") == {"value": 0, "plies": 0, "moves": []}


def test_analyse_gives_up_with_an_error_instead_of_hanging(monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts import engine

    monkeypatch.setattr(engine, "ANALYSE_MAX_NODES", 500)
    solver.clear_cache()
    reply = ask(cmd="analyse", rows=4, cols=4, id=3)
    assert_error(reply, "solver", "after searching 500 positions")  # the budget stopped it, not the clock
    assert reply["id"] == 3
    monkeypatch.setattr(engine, "ANALYSE_MAX_NODES", 10**9)
    monkeypatch.setattr(engine, "ANALYSE_MAX_SECONDS", 0.0)
    assert_error(ask(cmd="analyse", rows=4, cols=5), "time")


# players -----------------------------------------------------------------------------------

def test_analyse_with_a_budget_of_its_own() -> None:
    solver.clear_cache()
    assert_error(ask(cmd="analyse", rows=4, cols=4, nodes=10),
                 "the solver gave up after searching 10 positions, its budget")
    out_of_time = ask(cmd="analyse", rows=15, cols=15, seconds=0.2)
    assert_error(out_of_time, "ran out of time")  # after the time it took: on a busy machine 0.3 s, say
    assert re.search(r"positions in \d+\.\d s", out_of_time["error"])
    assert ask(cmd="analyse", position="XX./OO./...", seconds=0.5, nodes=0)["value"] == 1  # 3×3: a lookup
    assert ask(cmd="analyse", rows=4, cols=4, nodes=1_000_000)["plies"] == 16


def test_move_with_a_budget_of_its_own() -> None:
    assert_error(ask(cmd="move", rows=15, cols=15, player="perfect", nodes=100),
                 "cannot solve this 15×15 board (k=5) within 100 positions")
    # medium's heads is hard's move: the strong player's where nothing is proved, within the budget
    assert 0 <= ask(cmd="move", rows=15, cols=15, player="medium", nodes=100, seed=1)["index"] < 225
    assert 0 <= ask(cmd="move", rows=15, cols=15, player="hard", seconds=0.1)["index"] < 225  # the strong player
    reply = ask(cmd="move", rows=15, cols=15, player="minimax", nodes=50, seed=1)
    assert 0 <= reply["index"] < 225
    assert ask(cmd="move", rows=15, cols=15, player="random", nodes=0, seed=1)["cell"]  # no search: no budget


@pytest.mark.parametrize(("field", "value", "words"), [
    ("nodes", -1, ['"nodes" must be 0 or more']),
    ("nodes", 2.5, ['"nodes" must be a whole number of positions', "2.5"]),
    ("nodes", "10", ['"nodes" must be', "string"]),
    ("seconds", 0, ['"seconds" must be a number of seconds above 0', "0"]),
    ("seconds", -1.5, ['"seconds" must be']),
    ("seconds", True, ['"seconds" must be', "true"]),
    ("seconds", "5", ['"seconds" must be', "string"]),
    ("seconds", 1e400, ['"seconds" must be']),
])
def test_bad_budgets_are_errors(field: str, value: object, words: list[str]) -> None:
    for cmd in ("analyse", "move"):
        assert_error(ask(cmd=cmd, rows=4, cols=4, **{field: value}), *words)
    assert_error(ask(cmd="status", nodes=5), "unknown field 'nodes'")


def test_players_lists_names_and_descriptions() -> None:
    from noughts import players

    reply = ask(cmd="players")
    assert reply["players"] == players.names()
    assert {"perfect", "hard", "random"} <= set(reply["players"])
    assert reply["descriptions"] == {n: players.describe(n) for n in players.names()}


# id and malformed requests ----------------------------------------------------------------

@pytest.mark.parametrize("request_id", ["abc", 0, -5, 2.5, None, True, "", 10**30])
def test_id_is_echoed_in_replies_and_errors(request_id: object) -> None:
    assert ask(cmd="status", id=request_id)["id"] == request_id
    error = ask(cmd="status", position="XXX", id=request_id)
    assert error["id"] == request_id and "error" in error
    assert "id" not in ask(cmd="status")


@pytest.mark.parametrize(("bad", "words"), [
    ([], ["JSON object", "array"]),
    ("status", ["JSON object"]),
    (None, ["JSON object", "null"]),
    ({}, ['"cmd"']),
    ({"cmd": 5}, ['"cmd"', "string"]),
    ({"cmd": "fly"}, ["unknown cmd 'fly'"]),
    ({"cmd": "status", "colour": "red"}, ["unknown field 'colour'"]),
    ({"cmd": "status", "player": "perfect"}, ["unknown field 'player'"]),
    ({"cmd": "status", "id": [1]}, ['"id"']),
    ({"cmd": "status", "id": {"a": 1}}, ['"id"']),
    ({"cmd": "status", "position": 12}, ['"position"']),
    ({"cmd": "status", "position": "XXX"}, ["not a position"]),
    ({"cmd": "status", "position": "XXO/X../..."}, ["X has 3 marks and O has 1"]),
    ({"cmd": "status", "rows": "3"}, ['"rows"', "whole number"]),
    ({"cmd": "status", "rows": True}, ['"rows"']),
    ({"cmd": "status", "rows": 3.0}, ['"rows"']),
    ({"cmd": "status", "rows": 0}, ["rows"]),
    ({"cmd": "status", "rows": 10**100}, ["rows"]),
    ({"cmd": "status", "cols": -1}, ["rows and columns"]),
    ({"cmd": "status", "k": 0}, ["k"]),
    ({"cmd": "status", "k": 4}, ["k"]),
    ({"cmd": "status", "position": "X../.../...", "k": 99}, ["k"]),
])
def test_malformed_requests_get_an_error_message(bad: object, words: list[str]) -> None:
    assert_error(handle(bad), *words)


def test_analyze_is_accepted_as_a_spelling_of_analyse() -> None:
    assert ask(cmd="analyze", position="XX./OO./...") == ask(cmd="analyse", position="XX./OO./...")


def test_null_optional_fields_mean_absent() -> None:
    assert ask(cmd="status", position=None, rows=None, k=None) == ask(cmd="status")


def test_handle_line_decodes_and_reports() -> None:
    assert handle_line(b"   \r\n") is None
    assert handle_line("") is None
    assert handle_line(b'{"cmd":"status"}\r\n') == ask(cmd="status")
    assert handle_line('\ufeff{"cmd":"status"}') == ask(cmd="status")
    assert_error(handle_line(b"\xff\xfe{}\n") or {}, "UTF-8")
    assert_error(handle_line(b"{cmd: status}") or {}, "not valid JSON")
    assert_error(handle_line(b'{"cmd":"status"} {}') or {}, "not valid JSON")
    assert_error(handle_line(b'{"cmd":"status","id":NaN}') or {}, "NaN")
    assert_error(handle_line(b'{"cmd":"status","id":Infinity}') or {}, "Infinity")
    assert_error(handle_line(b'{"cmd":"status","seed":' + b"9" * 5000 + b"}") or {}, "not valid JSON")
    assert_error(handle_line(b"[" * 60_000) or {}, "nested too deeply")
    assert_error(handle_line(b'{"cmd":' + b"[" * 30_000 + b"]" * 30_000 + b"}") or {}, "nested")
    assert_error(handle_line(b" " * (MAX_LINE_BYTES + 10) + b"{}") or {}, "longer than")


def test_a_number_too_long_to_read_is_the_engines_own_sentence_not_pythons() -> None:
    from noughts.text import ENGINE_NUMBER_TOO_LONG

    reply = handle_line(b'{"cmd":"status","seed":' + b"9" * 5000 + b"}") or {}
    assert reply == {"error": ENGINE_NUMBER_TOO_LONG}
    assert "set_int_max_str_digits" not in reply["error"]


def test_encode_is_one_ascii_line() -> None:
    line = encode(handle({"cmd": "status", "rows": 99}))
    assert "\n" not in line and line.isascii()
    assert "×" in json.loads(line)["error"]


# run(): the loop --------------------------------------------------------------------------

def test_run_answers_every_line_in_order_and_skips_blank_lines() -> None:
    requests = [
        {"cmd": "status", "id": 1},
        {"cmd": "move", "position": "XX./OO./...", "id": 2},
        {"cmd": "players", "id": 3},
        {"cmd": "analyse", "position": "XX./OO./...", "id": 4},
        {"cmd": "nonsense", "id": 5},
        {"cmd": "status", "position": "XXX/OO./...", "id": 6},
    ]
    data = b"\n\n".join(json.dumps(r).encode() for r in requests) + b"\n   \n\n"
    replies = run_lines(data)
    assert [r["id"] for r in replies] == [1, 2, 3, 4, 5, 6]
    assert replies[1]["cell"] == "c1" and "players" in replies[2] and "error" in replies[4]
    assert replies[5]["winner"] == "X"


def test_run_answers_a_last_line_without_a_newline() -> None:
    assert run_lines(b'{"cmd":"status"}\n{"cmd":"status","id":9}')[-1]["id"] == 9


def test_run_on_empty_input_says_nothing() -> None:
    assert run_lines(b"") == []


class CountingReader(io.BytesIO):
    """A stream that remembers the biggest piece anyone read from it."""

    biggest = 0

    def readline(self, size: int | None = -1) -> bytes:
        line = super().readline(size)
        self.biggest = max(self.biggest, len(line))
        return line

    def read1(self, size: int = -1) -> bytes:
        piece = super().read1(size)
        self.biggest = max(self.biggest, len(piece))
        return piece


def test_an_over_long_line_is_skipped_in_pieces_and_the_engine_carries_on() -> None:
    huge = b'{"cmd":"status","position":"' + b"X" * (20 * MAX_LINE_BYTES) + b'"}\n'
    stream = CountingReader(huge + b'{"cmd":"status","id":"after"}\n')
    out = io.StringIO()
    assert run(stream, out) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert_error(replies[0], "longer than")
    assert replies[1]["id"] == "after" and replies[1]["turn"] == "X"
    assert 0 < stream.biggest <= MAX_LINE_BYTES + 1


def test_a_line_of_exactly_the_limit_is_read() -> None:
    request = b'{"cmd":"status","id":"' + b"a" * MAX_LINE_BYTES + b'"}'
    body = request[:MAX_LINE_BYTES - 2] + b'"}'  # trim the id so the line is exactly the limit
    assert len(body) == MAX_LINE_BYTES
    replies = run_lines(body + b"\n" + b'{"cmd":"status","id":1}\n')
    assert replies[0]["turn"] == "X" and replies[1]["id"] == 1
    too_long = run_lines(b" " + body + b"\n")
    assert_error(too_long[0], "longer than")


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="needs a timer signal")
def test_run_stops_a_request_that_takes_too_long_and_carries_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts import engine

    # no node budget, so only the engine's clock can stop this search
    monkeypatch.setattr(engine, "ANALYSE_MAX_NODES", None)
    monkeypatch.setattr(engine, "ANALYSE_MAX_SECONDS", 1000.0)
    solver.clear_cache()
    data = b'{"cmd":"analyse","rows":15,"cols":15,"k":5,"id":1}\n{"cmd":"status","id":2}\n'
    out = io.StringIO()
    start = time.monotonic()
    assert run(io.BytesIO(data), out, max_seconds=0.5) == 0
    assert time.monotonic() - start < 10
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first == {"id": 1, "error": "the engine gave up on this request after 0.5 seconds"}
    assert second["id"] == 2 and second["turn"] == "X"
    import signal

    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # nothing left ticking
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL  # and the old handler is back


def test_invalid_utf8_gets_an_error_and_the_engine_carries_on() -> None:
    replies = run_lines(b'{"cmd":"status","id":"\xc3\x28"}\n\x80\x81\n{"cmd":"status","id":2}\n')
    assert_error(replies[0], "UTF-8")
    assert_error(replies[1], "UTF-8")
    assert replies[2]["id"] == 2


# the docs ---------------------------------------------------------------------------------

def doc_examples(document: Path = DOCS) -> list[tuple[str, str]]:
    """Pairs of (request, reply) lines from a document: '→ ' then '← '."""
    lines = document.read_text(encoding="utf-8").splitlines()
    pairs = []
    for i, line in enumerate(lines):
        if line.startswith("→ "):
            reply = lines[i + 1]
            assert reply.startswith("← "), f"line {i + 2} of {document.name} should be the reply"
            pairs.append((line[2:], reply[2:]))
    return pairs


def test_the_protocol_document_has_examples_of_every_command() -> None:
    commands = {re.sub(r'.*"cmd":"(\w+)".*', r"\1", line) for line, _ in doc_examples()}
    assert commands >= {"move", "analyse", "status", "players"}
    assert len(doc_examples()) >= 10


def test_the_readme_shows_every_command() -> None:
    commands = {re.sub(r'.*"cmd":"(\w+)".*', r"\1", line) for line, _ in doc_examples(README)}
    assert commands >= {"move", "analyse", "status", "players"}


@pytest.mark.parametrize(("line", "reply"), doc_examples() + doc_examples(README))
def test_every_example_in_the_protocol_document_is_true(line: str, reply: str) -> None:
    actual = encode(handle_line(line) or {})
    if reply.endswith("…"):  # a long reply, shortened in the document: the start must match
        assert actual.startswith(reply[:-1])
    else:
        assert actual == reply, "the document shows the exact bytes"


# fuzz -------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=20,
)
FIELDS = ["cmd", "id", "position", "rows", "cols", "k", "player", "seed", "nodes", "seconds"]
VALID = {"cmd": "move", "id": 1, "position": "X.O/.X./..O", "rows": 3, "cols": 3, "k": 3,
         "player": "random", "seed": 5}
# odd but legal values of each field, which hypothesis mixes with arbitrary JSON
FIELD_VALUES = {
    "cmd": st.sampled_from(["move", "analyse", "status", "players", "analyze", "", "MOVE"]),
    "position": st.sampled_from([
        "", "X", "XXX/OO./...", "x.o/.x./..o", "X.O.X...O", "X/O", ".../...", "..../..../..../....", "/",
        "XO/", "X.O/.X./..O/...",
    ]) | st.text(max_size=40),
    "rows": st.integers(-3, 30) | st.integers(), "cols": st.integers(-3, 30) | st.integers(),
    "k": st.integers(-3, 30) | st.integers(),
    "player": st.sampled_from(["perfect", "hard", "easy", "medium", "random", "minimax", "arduino",
                               "parsons", "mdttt", "newell-simon", "simple-rules", "PERFECT", " hard "]),
    "seed": st.integers(),
    "nodes": st.integers(-3, 100_000) | st.integers(),
    "seconds": st.floats(-1, 5) | st.integers(-3, 5),
    "id": json_values,
}


def check_reply(reply: dict[str, Any]) -> None:
    assert isinstance(reply, dict)
    if "error" in reply:
        assert_error(reply)
    json.loads(encode(reply))  # always encodable


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_fuzz_any_json_value_as_a_request(value: object) -> None:
    check_reply(handle(value))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_every_field_with_wrong_and_odd_values(data: st.DataObject) -> None:
    request = {f: v for f, v in VALID.items() if data.draw(st.booleans(), label=f"keep {f}")}
    request["cmd"] = VALID["cmd"] if "cmd" not in request else request["cmd"]
    for field in data.draw(st.lists(st.sampled_from(FIELDS), max_size=4, unique=True), label="fields"):
        request[field] = data.draw(FIELD_VALUES.get(field, json_values) | json_values, label=field)
    if request.get("cmd") in ("analyse", "analyze", "move"):  # keep the solver to boards it finishes fast
        for f in ("rows", "cols"):
            if isinstance(request.get(f), int) and request[f] > 4:
                request[f] = 4
        if isinstance(request.get("position"), str) and len(request["position"]) > 19:
            request["position"] = request["position"][:19]
    reply = handle(request)
    check_reply(reply)
    if "id" in request and isinstance(request["id"], str | int | float | type(None)):
        assert reply.get("id", "missing") == request["id"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=200) | st.text(max_size=100).map(str.encode), max_size=8))
def test_fuzz_random_bytes_into_the_loop(chunks: list[bytes]) -> None:
    garbage = b"\n".join(chunks)
    replies = run_lines(garbage + b'\n{"cmd":"status","id":"still here"}\n')
    for reply in replies:
        check_reply(reply)
    assert replies[-1] == {"id": "still here", "turn": "X", "winner": None, "line": None,
                           "over": False, "legal": list(range(9))}


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([b"[", b"{\"a\":", b"[{\"cmd\":"]), st.integers(1, 40_000))
def test_fuzz_deeply_nested_json(opening: bytes, depth: int) -> None:
    line = opening * depth
    replies = run_lines(line[:MAX_LINE_BYTES] + b"\n" + b'{"cmd":"status","id":0}\n')
    check_reply(replies[0])
    assert replies[-1]["id"] == 0


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_fuzz_the_position_and_cell_parsers(text: str) -> None:
    board = None
    with contextlib.suppress(NoughtsError):
        board = Board.parse(text)
    try:
        cell = (board or Board()).parse_cell(text)
        assert 0 <= cell < (board or Board()).size
    except NoughtsError:
        pass


# the real thing: a subprocess -------------------------------------------------------------

# Without PYTHONUNBUFFERED, so a reply only arrives if the engine really flushes it.
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def engine_process() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "noughts", "engine"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=BUFFERED,
                            preexec_fn=default_sigint)


def read_reply(proc: subprocess.Popen[bytes], timeout: float = 20) -> dict[str, Any]:
    """One reply line, failing (not hanging) if the engine does not flush it."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buffer = b""
    deadline = time.monotonic() + timeout
    while not buffer.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no reply within {timeout} s (got {buffer!r})"
        chunk = os.read(fd, 1)  # byte by byte so nothing of the next reply is swallowed
        assert chunk, "the engine closed its output"
        buffer += chunk
    reply: dict[str, Any] = json.loads(buffer)
    return reply


def send(proc: subprocess.Popen[bytes], data: bytes) -> None:
    assert proc.stdin is not None
    proc.stdin.write(data)
    proc.stdin.flush()


def test_subprocess_answers_each_line_as_it_comes_and_exits_0_at_eof() -> None:
    proc = engine_process()
    try:
        send(proc, b'{"cmd":"status","id":1}\n')
        assert read_reply(proc) == {"id": 1, "turn": "X", "winner": None, "line": None, "over": False,
                                    "legal": list(range(9))}
        send(proc, b'{"cmd":"move","position":"XX./OO./...","player":"perfect","seed":7,"id":2}\n')
        assert read_reply(proc) == {"id": 2, "index": 2, "cell": "c1"}
        send(proc, b'\n\xff\xfe garbage\n')
        assert_error(read_reply(proc), "UTF-8")
        send(proc, b'{"cmd":"analyse","position":"XX./OO./...","id":3}\n')
        assert read_reply(proc)["value"] == 1
        send(proc, b'{"cmd":"players","id":4}\n')
        assert "perfect" in read_reply(proc)["players"]
        send(proc, b"x" * (3 * MAX_LINE_BYTES) + b"\n")
        send(proc, b'{"cmd":"status","position":"XXX/OO./...","id":5}\n')
        assert_error(read_reply(proc), "longer than")
        assert read_reply(proc)["winner"] == "X"
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
        assert proc.stderr is not None and proc.stderr.read() == b""
    finally:
        proc.kill()
        proc.wait()


def test_subprocess_seeds_are_reproducible_across_processes() -> None:
    request = (b'{"cmd":"move","player":"random","seed":12345}\n' * 2
               + b'{"cmd":"move","player":"easy","seed":9}\n')
    outputs = [subprocess.run([sys.executable, "-m", "noughts", "engine"], input=request,
                              capture_output=True, timeout=30, check=True).stdout for _ in range(2)]
    assert outputs[0] == outputs[1]
    assert len(outputs[0].splitlines()) == 3


def test_subprocess_answers_a_batch_in_order() -> None:
    requests = b"".join(b'{"cmd":"status","rows":%d,"cols":3,"id":%d}\n' % (1 + i % 5, i) for i in range(200))
    result = subprocess.run([sys.executable, "-m", "noughts", "engine"], input=requests,
                            capture_output=True, timeout=60)
    assert result.returncode == 0 and result.stderr == b""
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["id"] for r in replies] == list(range(200))
    assert [len(r["legal"]) for r in replies[:5]] == [3, 6, 9, 12, 15]


def test_subprocess_ctrl_c_exits_130_quietly() -> None:
    import signal

    proc = engine_process()
    try:
        send(proc, b'{"cmd":"status"}\n')
        read_reply(proc)  # it is up and waiting for the next line
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
        assert proc.stderr is not None
        assert proc.stderr.read() == b""
    finally:
        proc.kill()
        proc.wait()


def test_the_engine_does_not_load_the_solver_or_players_to_start() -> None:
    code = ("import sys, io; from noughts import engine; "
            "engine.run(io.BytesIO(b'{\"cmd\":\"status\"}\\n'), io.StringIO()); "
            "print(sorted(m for m in sys.modules if m.startswith('noughts')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = result.stdout
    assert "noughts.solver" not in loaded and "noughts.players" not in loaded, loaded
    assert re.search(r"'noughts.engine'", loaded)


def test_analyse_passes_progress_to_the_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    from noughts import solver

    monkeypatch.setattr(solver, "PROGRESS_INTERVAL", 0.0)  # report at every check of the clock
    solver.clear_cache()
    reports: list[tuple[int, float]] = []
    reply = handle({"cmd": "analyse", "rows": 4, "cols": 4}, progress=lambda n, t: reports.append((n, t)))
    assert reply["value"] == 0 and reply["plies"] == 16
    assert reports and all(n > 0 for n, _ in reports)


def test_a_session_over_many_shapes_keeps_every_cache_bounded() -> None:
    """Caches hold a few shapes, however many are asked about (it was every shape, for ever)."""
    from noughts.board import GEOMETRY_CACHE_SHAPES, Geometry
    from noughts.players import minimax

    shapes = [(rows, cols, k) for rows in (3, 5, 8, 13, 21, 26) for cols in (4, 9, 26) for k in (2, 3)]
    # small budgets: every request still makes its shape's caches (a node on 26×26 costs ~2 ms)
    for rows, cols, k in shapes:
        for request in ({"cmd": "status"}, {"cmd": "analyse", "nodes": 40}, {"cmd": "move", "player": "minimax",
                        "nodes": 200, "seed": 1}, {"cmd": "move", "player": "perfect", "nodes": 40, "seed": 1}):
            reply = handle({**request, "rows": rows, "cols": cols, "k": k})
            assert "internal error" not in reply.get("error", ""), reply
        assert len(Geometry._cache) <= GEOMETRY_CACHE_SHAPES
        assert len(solver._solvers) <= solver.SOLVER_CACHE_SHAPES
        assert len(minimax._exact_memo) <= minimax.CACHE_SHAPES
        assert len(minimax._Tables._cache) <= minimax.CACHE_SHAPES
        assert all(len(s.table) <= s.table_limit for s in solver._solvers.values())
        for geometry in [*Geometry._cache.values(), Geometry.get(3, 3)]:
            assert len(geometry._moves_cache) * geometry.size <= 1 << 20
