"""The web game's rooms and message parsing, without any server: seats, turns, tallies, limits."""

from __future__ import annotations

import asyncio
import json

import pytest

from noughts.web.protocol import Limits, Rejection, clean_name, parse
from noughts.web.rooms import MemoryRoomStore, Room

LIMITS = Limits()


def code_of(call: object) -> str:
    with pytest.raises(Rejection) as caught:
        call()  # type: ignore[operator]
    return caught.value.code


def test_a_computer_room_plays_to_the_end_and_counts_the_result() -> None:
    room = Room.for_computer("parsons", first=0, name="Ann")
    for cell in (0, 8, 6, 3):  # parsons' forced loss
        room.play(0, cell)
        if room.result is None:
            room.computer_move()
    assert room.result == "X" and room.board.winning_line == (0, 3, 6)
    assert room.tally == [1, 0, 0]
    assert code_of(lambda: room.play(0, 5)) == "game_over"
    room.rematch()
    assert room.game_no == 2 and room.mark_of(0) == "O" and room.computer_to_move


def test_the_rules_of_a_friend_room() -> None:
    room = Room.for_friend(first=1, name="Ann")
    assert room.mark_of(0) == "O" and room.turn_seat == 1  # the friend starts
    assert code_of(lambda: room.play(0, 4)) == "not_your_turn"
    assert room.take_free_seat("ann") == (1, room.seats[1].token)  # type: ignore[union-attr]
    assert room.seats[1] is not None and room.seats[1].name == "ann (2)"  # tallies are kept by name
    assert room.take_free_seat("Bo") is None  # later visitors watch
    room.play(1, 4)
    assert code_of(lambda: room.play(0, 4)) == "occupied"
    assert code_of(lambda: room.play(0, 0, ply=0)) == "stale"
    assert code_of(lambda: room.rematch()) == "game_not_over"
    assert room.seat_with_token(room.seats[1].token or "") == 1
    assert room.seat_with_token("forged") is None


def test_the_computer_replays_from_the_room_seed() -> None:
    one = Room.for_computer("medium", first=1)
    two = Room.from_dict(json.loads(json.dumps(one.to_dict())))
    for room in (one, two):
        while room.result is None:
            if room.computer_to_move:
                room.computer_move()
            else:
                room.play(0, room.board.legal_moves[0])
    assert one.moves == two.moves and one.to_dict() == two.to_dict()


def test_state_never_shows_a_token() -> None:
    room = Room.for_friend(name="Ann")
    room.take_free_seat("Bo")
    text = json.dumps(room.state((True, False), 3))
    for seat in room.seats:
        assert seat is not None and seat.token and seat.token not in text
    assert room.state()["seats"][0] == {"name": "Ann", "kind": "human", "mark": "X", "connected": False}


def test_the_memory_store_is_bounded_and_expires_the_oldest() -> None:
    async def scenario() -> None:
        store = MemoryRoomStore(max_rooms=2, ttl=10)
        old, new = Room.for_friend(), Room.for_friend()
        old.touched, new.touched = 100.0, 105.0
        await store.put(old)
        await store.put(new)
        with pytest.raises(Rejection) as full:
            await store.put(Room.for_friend())
        assert full.value.code == "full"
        old.touched = 112.0
        await store.put(old)  # rewriting a room already held is always allowed
        assert await store.expire(116.0) == [new.code]
        assert await store.get(new.code) is None and await store.get(old.code) is old
        await store.delete(old.code)
        assert len(store) == 0

    asyncio.run(scenario())


@pytest.mark.parametrize(("text", "code"), [
    ("", "bad_json"), ("{", "bad_json"), ("[" * 2000, "bad_json"), ("x" * 5000, "too_big"),
    ("é" * 1500, "too_big"), ("[]", "bad_message"), ('"move"', "bad_message"), ('{"type": 4}', "bad_message"),
    ('{"type": "fly"}', "unknown_type"), ('{"type": "move"}', "bad_cell"),
    ('{"type": "move", "cell": true}', "bad_cell"),
    ('{"type": "move", "cell": -1}', "bad_cell"), ('{"type": "move", "cell": 4.0}', "bad_cell"),
    ('{"type": "move", "cell": "z9"}', "bad_cell"), ('{"type": "move", "cell": 4, "mark": "Z"}', "bad_field"),
    ('{"type": "move", "cell": 4, "ply": "1"}', "bad_field"),
    ('{"type": "play_computer", "opponent": "god"}', "bad_field"),
    ('{"type": "play_computer", "first": "both"}', "bad_field"), ('{"type": "create_room", "name": 7}', "bad_field"),
    ('{"type": "join"}', "bad_field"), ('{"type": "join", "room": "../etc"}', "no_room"),
    ('{"type": "join", "room": "ABCDEF", "token": 5}', "bad_field"),
])
def test_malformed_messages_are_refused_with_a_reason(text: str, code: str) -> None:
    with pytest.raises(Rejection) as caught:
        parse(text, LIMITS)
    assert caught.value.code == code and str(caught.value).endswith(".")


def test_messages_are_normalised() -> None:
    assert parse('{"type": "move", "cell": "B2", "game": 3, "extra": 1}', LIMITS) == {
        "type": "move", "cell": 4, "game": 3}
    assert parse('{"type": "join", "room": " k7m2qx "}', LIMITS) == {"type": "join", "room": "K7M2QX", "name": None,
                                                                      "token": None}
    assert parse('{"type": "play_computer", "opponent": " Hard ", "first": "computer"}', LIMITS)["first"] == 1
    assert clean_name("  Ann\u202e\u0000  Lee ") == "Ann Lee"
    assert clean_name("\u200b") is None and clean_name("x" * 99) == "x" * 40
