"""The fast paths answer exactly as the long ways do.

Board keeps every 3×3 position it makes and remembers each one's children by cell; Board.parse
reads well-written 3×3 text directly; the engine keeps its default player for each thread, seeds
generators at their first draw, and decodes and encodes with json's own parts made once. Each
check compares with a way that does not use them, over every 3×3 position where that applies.
"""

from __future__ import annotations

import copy
import json
import math
import pickle
import random
import threading
from typing import Any

import pytest

from noughts import board as board_module
from noughts import engine
from noughts.board import Board
from noughts.errors import NoughtsError
from noughts.players.base import SeededOnFirstDraw
from noughts.players.perfect import PerfectPlayer
from noughts.players.perfect_33 import MOVES
from positions import every_3x3_position

LINES = (0b111, 0b111000, 0b111000000, 0b1001001, 0b10010010, 0b100100100, 0b100010001, 0b1010100)


@pytest.fixture(scope="module")
def positions() -> dict[int, Board]:
    """Every reachable 3×3 position by key, found with play()."""
    return every_3x3_position()


def outcome(make: Any, *args: Any) -> object:
    """What a call gives: its value, or the type and message of the noughts error it raises."""
    try:
        return make(*args)
    except NoughtsError as error:
        return type(error), str(error)


# --- Board ------------------------------------------------------------------------------------

def test_positions_played_twice_are_the_kept_child_and_errors_are_the_same_twice(positions: dict[int, Board]) -> None:
    assert len(positions) == 5478
    for board in positions.values():
        legal = set(board.legal_moves)
        for cell in (-1, *range(10), "b2", "z9", True, 4.0):
            first, again = outcome(board.play, cell), outcome(board.play, cell)
            if type(cell) is int and cell in legal:
                assert isinstance(first, Board) and first is again
                # the long way: the marks from bits, checked like any position
                x, o = (board.x, board.o | 1 << cell) if board.ply & 1 else (board.x | 1 << cell, board.o)
                assert first == Board.from_bits(x, o) and first.ply == board.ply + 1
                mover = o if board.ply & 1 else x
                won = [line for line in LINES if mover & line == line]
                assert first.winner == (("O" if board.ply & 1 else "X") if won else None)
            elif type(cell) is not int:
                assert first == again and (not isinstance(first, Board) or first == board.play(board.parse_cell(cell)))
            else:
                assert not isinstance(first, Board) and first == again, (board, cell, first)


def test_every_way_to_make_a_3x3_position_gives_the_kept_one(positions: dict[int, Board]) -> None:
    assert Board() is Board(3, 3) is Board(3, 3, 3) is Board.parse(".........") is positions[0]
    for key, board in positions.items():
        assert Board.parse(str(board)) is board is Board.parse(str(board), k=3)
        assert Board.from_bits(board.x, board.o) is board
        assert pickle.loads(pickle.dumps(board)) is board and copy.deepcopy(board) is board
        assert board.canonical() is positions[board.canonical().key]
        assert board.key == key
    for seed in range(200):
        end = Board().playout(random.Random(seed))
        assert end is positions[end.key]


def test_only_reachable_3x3_positions_are_kept_and_other_shapes_are_not(positions: dict[int, Board]) -> None:
    for text in ("XXX/OOO/...", "OO./X../...", "O../.../..."):
        with pytest.raises(NoughtsError):
            Board.parse(text)
    assert set(board_module._INTERNED_33) <= set(positions)  # never more than the 5,478 positions
    assert Board(4, 4) == Board(4, 4) and Board(4, 4) is not Board(4, 4)
    assert Board(4, 4).play(5) is not Board(4, 4).play(5)


def is_3x3_text(text: str) -> bool:
    cleaned = text.strip()
    if "/" in cleaned:
        rows = cleaned.split("/")
    else:
        rows = [cleaned[i:i + 3] for i in range(0, 9, 3)] if len(cleaned) == 9 else []
    return len(rows) == 3 and all(len(row) == 3 for row in rows)


def test_parse_reads_3x3_text_as_the_long_way_does(positions: dict[int, Board]) -> None:
    # k=3 takes the long way, k=None the direct one for 3×3 text (other shapes' k differ)
    rng = random.Random(5)
    texts = [str(board) for board in positions.values()]
    texts += [text.lower().replace(".", rng.choice("._-")) for text in texts[::7]]
    texts += [text.replace("/", "") for text in texts[::5]]
    alphabet = "XOxo.-_/Z 3"
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.choice((9, 10, 11, 12)))) for _ in range(6000)]
    texts += ["XX./OO./..Z", "XX/.OO./...", "XO//.X./...", " XO./.X./... ", "XOX.X.O.Z", "XOX/OXO/OXO"]
    checked = 0
    for text in texts:
        if is_3x3_text(text):
            assert outcome(Board.parse, text) == outcome(Board.parse, text, 3), text
            checked += 1
    assert checked > 8000


# --- the generator seeded at its first draw ---------------------------------------------------

def draws(rng: random.Random) -> list[object]:
    items = list(range(20))
    rng.shuffle(items)
    return [rng.random(), rng.getrandbits(3), rng.getrandbits(70), rng.randrange(9), rng.choice("abcdefg"), items,
            rng.gauss(0, 1), rng.sample(range(100), 5), rng.uniform(1, 2), rng.randbytes(5), rng.getstate()]


@pytest.mark.parametrize("seed", [0, 1, 7, -5, 2**31, 2**40 + 3, 10**30])
def test_seeded_on_first_draw_draws_as_random_random(seed: int) -> None:
    assert draws(SeededOnFirstDraw(seed)) == draws(random.Random(seed))
    assert SeededOnFirstDraw(seed).getstate() == random.Random(seed).getstate()
    assert SeededOnFirstDraw(seed).gauss(0, 1) == random.Random(seed).gauss(0, 1)
    used = SeededOnFirstDraw(seed + 1)
    draws(used)
    used.start_again(seed)  # after draws of another seed: as new
    assert draws(used) == draws(random.Random(seed))
    for copied in (copy.copy(SeededOnFirstDraw(seed)), pickle.loads(pickle.dumps(SeededOnFirstDraw(seed)))):
        assert draws(copied) == draws(random.Random(seed))
    reseeded, plain = SeededOnFirstDraw(seed), random.Random(seed)
    reseeded.seed("text")
    plain.seed("text")
    assert draws(reseeded) == draws(plain)
    restored = SeededOnFirstDraw(seed)
    restored.setstate(random.Random(99).getstate())
    assert draws(restored) == draws(random.Random(99))


@pytest.mark.parametrize("seed", [1.5, "7", None, True])
def test_seeded_on_first_draw_takes_whole_numbers_only(seed: object) -> None:
    with pytest.raises(TypeError):
        SeededOnFirstDraw(seed)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        SeededOnFirstDraw(1).start_again(seed)  # type: ignore[arg-type]


# --- the engine -------------------------------------------------------------------------------

def expected_reply(board: Board, seed: int) -> dict[str, Any]:
    """The long way: a new perfect player with a new random.Random(seed)."""
    cell = PerfectPlayer(random.Random(seed)).choose(board)
    return {"index": cell, "cell": board.cell_name(cell)}


def test_seeded_moves_are_a_new_perfect_players_in_every_position_in_any_order(positions: dict[int, Board]) -> None:
    unfinished = [board for board in positions.values() if not board.is_over]
    assert {board.key for board in unfinished} == set(MOVES)
    requests = [(board, seed) for board in unfinished for seed in (0, 1, 2**33 + 5)]
    expected = [expected_reply(board, seed) for board, seed in requests]
    ties = sum(len(MOVES[board.key]) > 1 for board, _ in requests)
    assert 0 < ties < len(requests)  # both kinds: a draw from the generator, and none
    for order in (1, -1):
        for (board, seed), wanted in list(zip(requests, expected, strict=True))[::order]:
            assert engine.handle({"cmd": "move", "position": str(board), "seed": seed, "id": seed}) == \
                {"id": seed, **wanted}
    for (board, seed), wanted in list(zip(requests, expected, strict=True))[::9]:  # the general way
        for player in ("perfect", "Perfect"):
            assert engine.handle({"cmd": "move", "position": str(board), "seed": seed, "player": player}) == wanted
        assert engine.handle({"cmd": "move", "position": str(board), "seed": seed, "nodes": 10**6}) == wanted


def test_threads_asking_for_seeded_moves_get_the_same_replies(positions: dict[int, Board]) -> None:
    requests = [{"cmd": "move", "position": str(board), "seed": seed}
                for board in list(positions.values())[:600] if not board.is_over for seed in (3, 4)]
    alone = [engine.handle(request) for request in requests]
    together: list[list[Any]] = [[], []]
    start = threading.Barrier(2)

    def answer(replies: list[Any], step: int) -> None:
        start.wait()
        replies.extend(engine.handle(request) for request in requests[::step])

    threads = [threading.Thread(target=answer, args=(together[0], 1)),
               threading.Thread(target=answer, args=(together[1], -1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert together[0] == alone and together[1] == alone[::-1]


def decoded(text: str, decode: Any) -> object:
    try:
        return decode(text)
    except (ValueError, RecursionError) as error:
        return type(error), str(error)


def test_requests_decode_as_the_json_decoder_does() -> None:
    rng = random.Random(11)
    valid = ['{"cmd": "move", "position": "XX./OO./...", "seed": 1, "id": 7}', '{"cmd":"status"}', '[1, 2]',
             '{"a": [1.5e3, -0, true, false, null, "\\u00e9\\ud83d\\ude00"]}', '"text"', "12", '{"n": NaN}',
             '{"n": Infinity}', '{"deep": ' * 30 + "1" + "}" * 30, "[" * 5000 + "]" * 5000]
    texts = list(valid)
    for _ in range(3000):  # damaged requests: characters dropped, doubled or put in
        text = list(rng.choice(valid[:5]))
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(text))
            choice = rng.randrange(3)
            if choice == 0:
                del text[at]
            elif choice == 1:
                text.insert(at, text[at])
            else:
                text.insert(at, rng.choice('{}[]",: x0.e-\t'))
        texts.append("".join(text).strip())
    for text in texts:
        if text:
            assert decoded(text, engine._decode) == decoded(text, engine._DECODER.decode), text


@pytest.mark.parametrize("reply", [
    {"id": 3, "index": 4, "cell": "b2"},
    {"error": "unexpected 'é' in row 1 — «quoted» \u2028 \"q\" \\ \n\t\x00"},
    {"id": None, "value": 1.5, "plies": -2, "moves": [{"index": 0, "value": 1e300, "ok": True, "no": False}]},
    {"id": "x" * 50, "legal": list(range(100)), "big": 10**40, "nested": {"a": [[], {}, [None]]}},
])
def test_replies_encode_as_json_dumps_does(reply: dict[str, Any]) -> None:
    assert engine.encode(reply) == json.dumps(reply, separators=(",", ":"), allow_nan=False)
    assert engine.encode(reply).isascii() and "\n" not in engine.encode(reply)


def test_replies_that_json_cannot_encode_fail_as_before() -> None:
    for reply in ({"value": math.nan}, {"value": math.inf}, {"value": object()}):
        with pytest.raises((ValueError, TypeError)) as error:
            engine.encode(reply)
        with pytest.raises(error.type):
            json.dumps(reply, separators=(",", ":"), allow_nan=False)
