"""The web game's rooms and message parsing, without any server: seats, turns, tallies, limits."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from noughts import players, text
from noughts.board import Result
from noughts.errors import CellTaken, GameOver, NotYourTurn, NoughtsError
from noughts.match import DEFAULT_OPPONENT, Match
from noughts.store import open_store
from noughts.web.protocol import Limits, Rejection, clean_name, parse
from noughts.web.rooms import MemoryRoomStore, Room

LIMITS = Limits()


def code_of(call: object) -> str:
    with pytest.raises(Rejection) as caught:
        call()  # type: ignore[operator]
    return caught.value.code


def finish(room: Room, cells: list[int] | None = None) -> None:
    """Play ``cells`` (else the first free cell) for whoever is to move, the computer by its own choice."""
    cells = list(cells or [])
    while room.match.result is None:
        match = room.match
        if match.computer_to_move:
            match.apply_now()
        else:
            seat = match.seat_to_move
            assert seat is not None
            room.play(seat, cells.pop(0) if cells else match.board.legal_moves[0])


def test_a_computer_room_plays_to_the_end_and_counts_the_result() -> None:
    room = Room.for_computer("parsons", first="alternate", name="Ann")
    assert room.match.mark_of(0) == "X" and not room.match.computer_to_move  # alternate: the person first
    finish(room, [0, 8, 6, 3])  # parsons' forced loss
    assert room.match.result == Result("X", (0, 3, 6), "line")
    assert (room.state()["result"], room.state()["line"]) == ("X", [0, 3, 6])
    assert room.match.tally == [1, 0, 0]
    assert code_of(lambda: room.play(0, 5)) == "game_over"
    room.rematch()
    assert room.game_no == 2 and room.match.mark_of(0) == "O" and room.match.computer_to_move


def test_the_rules_of_a_friend_room() -> None:
    room = Room.for_friend(first="computer", name="Ann")  # the friend starts every game
    assert room.match.mark_of(0) == "O" and room.match.seat_to_move == 1
    assert room.seat_free and room.state()["seats"][1] is None
    assert code_of(lambda: room.play(0, 4)) == "not_your_turn"
    version = room.version
    assert room.take_free_seat("ann") == (1, room.tokens[1])
    assert room.version == version + 1 and not room.seat_free
    assert room.match.name_of(1) == "ann (2)"  # tallies are kept by name
    assert room.take_free_seat("Bo") is None  # later visitors watch
    room.play(1, 4)
    assert code_of(lambda: room.play(0, 4)) == "occupied"
    assert code_of(lambda: room.play(0, 0, ply=0)) == "stale"
    assert code_of(lambda: room.play(1, 0)) == "not_your_turn"
    assert code_of(lambda: room.rematch()) == "game_not_over"
    assert room.seat_with_token(room.tokens[1] or "") == 1
    assert room.seat_with_token("forged") is None
    finish(room)
    room.rematch()
    assert room.match.seat_to_move == 1  # the rule holds for every game


def test_a_refused_move_says_the_matchs_sentence_under_the_code_of_its_type_of_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    room = Room.for_friend(name="Ann")
    room.take_free_seat("Bo")
    room.play(0, 4)
    refused = []
    for seat, cell in ((1, 4), (0, 0), (1, 99)):
        with pytest.raises(Rejection) as caught:
            room.play(seat, cell)
        refused.append((caught.value.code, str(caught.value)))
    assert refused == [("occupied", text.cell_taken("b2", "X")), ("not_your_turn", text.not_your_turn("Bo")),
                       ("bad_cell", refused[2][1])]
    assert refused[0][1] == "b2 is taken by X: choose an empty square."  # as the terminal and the window say it
    # the code follows the error's type alone, whatever the board looks like
    for error, code in ((CellTaken("taken, says the match", cell=0, mark="O"), "occupied"),
                        (GameOver("over, says the match"), "game_over"), (NotYourTurn("wait, says the match"),
                                                                          "not_your_turn"),
                        (NoughtsError("no, says the match"), "bad_cell")):
        def refuse(cell: int | str, seat: int | None = None, error: NoughtsError = error) -> None:
            raise error

        monkeypatch.setattr(room.match, "play", refuse)
        with pytest.raises(Rejection) as caught:
            room.play(1, 0)
        assert (caught.value.code, str(caught.value)) == (code, str(error))
    monkeypatch.undo()
    finish(room)
    with pytest.raises(Rejection) as caught:
        room.play(0, 0)
    assert (caught.value.code, str(caught.value)) == ("game_over", text.GAME_OVER)


def test_the_friend_takes_the_free_seat_through_the_match(monkeypatch: pytest.MonkeyPatch) -> None:
    joined: list[tuple[int, str]] = []
    join = Match.join

    def watched(match: Match, seat: int, name: str) -> str:
        joined.append((seat, name))
        return join(match, seat, name)

    monkeypatch.setattr(Match, "join", watched)
    room = Room.for_friend(name="Ann")
    room.take_free_seat("Bo")
    assert joined == [(1, "Bo")] and room.match.name_of(1) == room.match.game.o_name == "Bo"  # type: ignore[union-attr]
    assert code_of(lambda: Room.for_friend(name="Ann").take_free_seat("\x07" * 3)) == "bad_field"


def test_a_friend_with_the_hosts_long_name_still_gets_a_name_of_their_own() -> None:
    room = Room.for_friend(name="A" * 40)
    room.take_free_seat("a" * 40)
    assert room.match.name_of(1) == "a" * 36 + " (2)"  # not cut back to the host's name
    assert room.match.name_of(1).casefold() != room.match.name_of(0).casefold()


def test_a_friend_room_takes_turns_to_start_unless_told_otherwise() -> None:
    room = Room.for_friend(name="Ann")
    room.take_free_seat("Bo")
    starters = []
    for _ in range(3):
        starters.append(room.match.seat_to_move)
        finish(room)
        room.rematch()
    assert room.match.first == "alternate" and starters == [0, 1, 0]


def test_unnamed_seats_get_the_pages_names_never_the_servers_login(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER", "www-data")
    monkeypatch.setenv("LOGNAME", "www-data")
    computer, friend = Room.for_computer(), Room.for_friend()
    assert computer.match.name_of(0) == "You" and computer.match.opponent == DEFAULT_OPPONENT
    assert computer.match.name_of(1) == players.label(DEFAULT_OPPONENT)
    assert friend.match.name_of(0) == "Player 1"
    friend.take_free_seat(None)
    assert friend.match.name_of(1) == "Player 2"


def test_an_opponent_that_cannot_play_the_board_is_refused_with_the_matchs_sentence(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(players, "unable", lambda name, board: "it is on holiday" if name == "easy" else None)
    with pytest.raises(NoughtsError) as direct:
        Match("easy")
    with pytest.raises(Rejection) as refused:
        Room.for_computer("easy")
    assert refused.value.code == "bad_field" and str(refused.value) == f"{direct.value}."
    assert str(refused.value).startswith("Easy cannot play a 3×3 board with 3 in a row: it is on holiday.")


def test_the_state_says_the_result_in_the_matchs_sentences() -> None:
    room = Room.for_friend(name="Ann")
    room.take_free_seat("Bo")
    for seat, cell in ((0, 4), (1, 0), (0, 1), (1, 2), (0, 7)):  # X wins down the middle column
        room.play(seat, cell)
    state = room.state()
    assert state["result"] == "X" and state["turn"] is None and state["line"] == [1, 4, 7]
    assert state["result_text"] == [room.match.result_sentence(you=0), room.match.result_sentence(you=1),
                                    "Ann (X) wins along the middle column b1–b3."]
    assert state["result_text"][:2] == ["You win along the middle column b1–b3!",
                                        "Ann (X) wins along the middle column b1–b3. You lose."]
    assert state["tally"] == {"wins": [1, 0], "draws": 0} and state["tally_text"] == "Ann: 1 · Bo: 0 · draws: 0"

    against = Room.for_computer("parsons", first="me", name="Cy")
    finish(against, [0, 8, 6, 3])
    said = against.state()["result_text"]
    assert said[0] == "You win along the left column a1–a3!"
    assert said[2] == "Cy (X) wins along the left column a1–a3."  # said to someone watching
    assert against.state()["seats"][1] == {"name": "parsons", "label": "Centre first", "kind": "computer",
                                           "mark": "O", "connected": True}


def test_the_computer_replays_from_the_room_seed() -> None:
    one = Room.for_computer("medium", first="computer")
    one.match.apply_now()
    two = Room.from_dict(json.loads(json.dumps(one.to_dict())))
    for room in (one, two):
        finish(room)
    assert one.moves == two.moves and one.to_dict() == two.to_dict()


def test_a_room_round_trips_through_json_mid_game_and_records_each_game_once(tmp_path: Path) -> None:
    with open_store(tmp_path / "n.db") as store:
        room = Room.for_friend(name="Ann", store=store)
        room.take_free_seat("Bo")
        room.play(0, 4)
        again = Room.from_dict(json.loads(json.dumps(room.to_dict())), store)
        assert again.to_dict() == room.to_dict() and again.tokens == room.tokens
        assert again.match.name_of(1) == "Bo" and again.moves == (4,)
        finish(again)
        assert store.count_games() == 1
        kept = Room.from_dict(json.loads(json.dumps(again.to_dict())), store)  # a finished game, read back
        assert kept.to_dict()["match"]["kept"] is True
        kept.rematch()
        finish(kept)
        assert store.count_games() == 2
        assert [(g.x.name, g.o.name) for g in store.games()] == [("Bo", "Ann"), ("Ann", "Bo")]
    with pytest.raises(NoughtsError, match="damaged"):
        Room.from_dict({"code": "ABCDEF"})


def test_state_never_shows_a_token() -> None:
    room = Room.for_friend(name="Ann")
    room.take_free_seat("Bo")
    text = json.dumps(room.state((True, False), 3))
    for token in room.tokens:
        assert token and token not in text
    assert room.state()["seats"][0] == {"name": "Ann", "label": "Ann", "kind": "human", "mark": "X",
                                        "connected": False}


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
    ('{"type": "play_computer", "opponent": "person"}', "bad_field"), ('{"type": "play_computer", "opponent": 7}',
                                                                      "bad_field"),
    ('{"type": "play_computer", "first": "both"}', "bad_field"), ('{"type": "create_room", "name": 7}', "bad_field"),
    ('{"type": "join"}', "bad_field"), ('{"type": "join", "room": "../etc"}', "no_room"),
    ('{"type": "join", "room": "ABCDEFGHJKMN", "token": 5}', "bad_field"),
    ('{"type": "join", "room": "ABCDEF"}', "no_room"),
    ('{"type": "move", "cell": 4, "colour": "red"}', "unknown_field"),
])
def test_malformed_messages_are_refused_with_a_reason(text: str, code: str) -> None:
    with pytest.raises(Rejection) as caught:
        parse(text, LIMITS)
    assert caught.value.code == code and str(caught.value).endswith(".")


def test_messages_are_normalised() -> None:
    assert parse('{"type": "move", "cell": "B2", "game": 3}', LIMITS) == {"type": "move", "cell": 4, "game": 3}
    assert parse('{"type": "join", "room": " k7m2-qxab-9cde "}', LIMITS) == {
        "type": "join", "room": "K7M2QXAB9CDE", "name": None, "token": None}
    assert parse('{"type": "play_computer", "opponent": " Hard ", "first": "computer"}', LIMITS)["first"] == "computer"
    assert parse('{"type": "play_computer"}', LIMITS) == {  # no opponent: the board's default, chosen by the lobby
        "type": "play_computer", "opponent": None, "first": "alternate", "name": None,
        "rows": 3, "cols": 3, "k": 3}
    assert parse('{"type": "join", "room": "K7M2QXAB9CDE", "watch": true}', LIMITS)["watch"] is True
    assert "watch" not in parse('{"type": "join", "room": "K7M2QXAB9CDE", "watch": false}', LIMITS)
    assert code_of(lambda: parse('{"type": "join", "room": "K7M2QXAB9CDE", "watch": 1}', LIMITS)) == "bad_field"
    assert parse('{"type": "play_computer", "opponent": "seed001-rules"}', LIMITS)["opponent"] == "simple-rules"
    # who starts: the match's rules and the words it takes for them; "friend" names the opponent
    for word, rule in (("you", "me"), ("opponent", "computer"), ("friend", "computer"), ("Alternate", "alternate"),
                       ("loser", "loser"), ("random", "random"), ("me", "me")):
        assert parse(json.dumps({"type": "create_room", "first": word}), LIMITS)["first"] == rule
    assert clean_name("  Ann\u202e\u0000  Lee ") == "Ann Lee"
    assert clean_name("\u200b") is None and clean_name("x" * 99) == "x" * 40
