"""The match layer: who starts, turns, the computer's jobs, undo, tally and best-of, recording, round trips."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from noughts import players
from noughts.errors import NoughtsError
from noughts.match import FIRST_RULES, PERSON, Match, first_rule, opponent_name
from noughts.store import open_store


def finish_game(match: Match, cells: list[int] | None = None) -> None:
    """Play the game in progress to its end: the given cells for people (else the first free cell)."""
    queue = list(cells or [])
    while not match.game_over:
        if match.computer_to_move:
            match.apply_now()
        else:
            board = match.board
            match.play(queue.pop(0) if queue else board.legal_moves[0])


def x_seats(rule: str, results: list[int | None]) -> list[int]:
    """Which seat played X in each game when the games end with ``results`` (the winning seat or None)."""
    match = Match(PERSON, names=["Ann", "Bob"], first=rule, seed=3)
    seen = []
    wins_for = {0: [0, 3, 1, 4, 2], None: [4, 0, 1, 2, 5, 3, 6, 7, 8]}  # X wins (left column) / a draw
    for result in results:
        match.new_game()
        seen.append(match.x_seat)
        if result is None:
            finish_game(match, wins_for[None])
        else:
            # the winner plays X's winning line if it is X, else X wanders and O wins the top row
            x_line = [0, 1, 3, 2, 6] if result == match.x_seat else [3, 0, 4, 1, 8, 2]
            finish_game(match, x_line)
            assert match.winner_seat() == result, match.board
    return seen


def test_every_first_rule_decides_who_plays_x() -> None:
    results: list[int | None] = [1, 0, None, 0, 1]
    assert x_seats("me", results) == [0, 0, 0, 0, 0]
    assert x_seats("computer", results) == [1, 1, 1, 1, 1]
    assert x_seats("alternate", results) == [0, 1, 0, 1, 0]
    # the loser starts; after a draw the other side starts
    assert x_seats("loser", results) == [0, 0, 1, 0, 1]
    coin = x_seats("random", [None] * 40)
    assert 5 < sum(coin) < 35 and coin == x_seats("random", [None] * 40)  # a fair coin, replayed by the seed


def test_first_rule_words_and_opponent_names() -> None:
    assert {first_rule(w) for w in ("me", "X", "you", "person")} == {"me"}
    assert {first_rule(w) for w in ("computer", "O", "other")} == {"computer"}
    assert set(FIRST_RULES) == {first_rule(w) for w in FIRST_RULES}
    with pytest.raises(NoughtsError, match="who starts can be me, computer, alternate, loser, random"):
        first_rule("sideways")
    assert opponent_name("Hard") == "hard" and opponent_name("friend") == PERSON
    assert opponent_name("seed001-rules") == "simple-rules"
    with pytest.raises(NoughtsError, match="there is no opponent called 'nobody'"):
        opponent_name("nobody")


def test_only_the_side_to_move_may_play() -> None:
    match = Match(PERSON, names=["Ann", "Bob"], first="me")
    match.new_game()
    with pytest.raises(NoughtsError, match="not your turn: Ann is to move"):
        match.play(0, seat=1)
    match.play(0, seat=0)
    computer = Match("easy", first="computer", seed=1)
    computer.new_game()
    with pytest.raises(NoughtsError, match="Wait: it is Easy's turn"):
        computer.play(0)


def test_a_stale_computer_answer_is_dropped() -> None:
    match = Match("hard", names=["Ann"], first="me", seed=5)
    match.new_game()
    match.play(0)
    job = match.computer_job()
    assert job is not None
    match.undo()  # the person takes the move back while the computer is thinking
    assert match.apply(job, job.run()) is False and match.game is not None and match.game.moves == ()
    match.play(4)
    assert match.apply(job, job.run()) is False  # the same number of moves, another position
    again = match.computer_job()
    assert again is not None and match.apply(again, again.run()) and len(match.game.moves) == 2


def test_the_computer_replays_the_same_moves_for_the_same_seed() -> None:
    def moves(seed: int) -> list[tuple[int, ...]]:
        match = Match("easy", names=["Ann"], first="alternate", seed=seed)
        games = []
        for _ in range(4):
            match.new_game()
            finish_game(match)
            assert match.game is not None
            games.append(match.game.moves)
        return games

    assert moves(7) == moves(7) and moves(7) != moves(8)


def test_undo_against_the_computer_takes_back_a_move_and_its_reply() -> None:
    match = Match("hard", names=["Ann"], first="me", seed=1)
    events = []
    match.add_listener(lambda e: events.append(e))
    match.new_game()
    assert not match.can_undo()
    with pytest.raises(NoughtsError, match="no move of yours"):
        match.undo()
    match.play("a1")
    match.apply_now()
    assert match.can_undo()
    taken = match.undo()
    assert len(taken) == 2 and match.game is not None and match.game.moves == ()
    assert events[-1].kind == "undo" and events[-1].text.startswith("Took back your move a1 and Hard's reply")


def test_undo_with_two_people_takes_back_only_the_last_move() -> None:
    match = Match(PERSON, names=["Ann", "Bob"], first="me")
    match.new_game()
    match.play("a1")
    match.play("b2")
    assert match.undo() == (4,)
    assert match.game is not None and match.game.moves == (0,) and match.seat_to_move == 1


def test_tally_best_of_and_the_sentences() -> None:
    match = Match(PERSON, names=["Ann", "Bob"], first="me", best_of=3)
    ended = []
    match.add_listener(lambda e: ended.append(e.text) if e.kind == "end" else None)
    for _ in range(2):
        match.new_game()
        finish_game(match, [0, 3, 1, 4, 2])  # X (Ann) wins the top row
    assert match.match_over and match.score == [2, 0, 0] and match.tally == [2, 0, 0]
    assert ended == ["Ann (X) wins along the top row a1–c1."] * 2
    assert match.tally_text() == "Ann: 2 · Bob: 0 · draws: 0"
    assert match.match_sentence() == "Ann wins the match 2–0 (best of 3)."
    match.new_game()  # a new match: its score starts again, the session's tally goes on
    assert match.score == [0, 0, 0] and match.tally == [2, 0, 0] and match.game_in_match == 1


def test_a_person_hears_you_win_or_you_lose_against_the_computer() -> None:
    from noughts import solver

    match = Match("easy", names=["Ann"], first="alternate", seed=1)
    heard = set()
    while len(heard) < 2 and match.games < 50:
        match.new_game()
        while not match.game_over:
            if match.computer_to_move:
                match.apply_now()
            else:  # the person plays a best move, or the worst one every other game
                moves = solver.analyse(match.board).moves
                best = max(moves, key=lambda m: m.value) if match.games % 2 else min(moves, key=lambda m: m.value)
                match.play(best.index)
        if match.winner_seat() is not None:
            heard.add((match.result_banner(), re.sub(r"along .*\. ", "along … ", match.result_sentence())))
    assert {banner for banner, _ in heard} == {"You win", "You lose"}
    for banner, sentence in heard:
        assert re.fullmatch("You win along .*!" if banner == "You win" else r"Easy \([XO]\) wins along … You lose\.",
                            sentence), sentence


def test_abandoned_and_new_games_are_not_counted(tmp_path: Path) -> None:
    with open_store(tmp_path / "scores.db") as store:
        match = Match("easy", names=["Ann"], first="me", seed=2, store=store)
        match.new_game()
        match.play(0)
        match.new_game()  # the unfinished game is dropped
        match.abandon()
        assert match.tally == [0, 0, 0] and store.count_games() == 0


def test_a_finished_game_is_recorded_exactly_once(tmp_path: Path) -> None:
    with open_store(tmp_path / "scores.db") as store:
        match = Match("easy", names=["Ann"], first="me", seed=2, store=store)
        for _ in range(3):
            match.new_game()
            finish_game(match)
            assert match.recorded is not None and match.recorded_text().startswith("Saved as game")
            match._record()  # a second call for the same game changes nothing
        assert store.count_games() == 3
        resumed = Match.from_dict(json.loads(json.dumps(match.to_dict())), store=store)
        resumed._record()
        assert store.count_games() == 3
        stored = store.games(1)[0]
        assert (stored.x.name, stored.o.name) in (("Ann", "easy"), ("easy", "Ann"))


def test_a_reused_seed_never_drops_a_game_and_a_retried_game_is_kept_once(tmp_path: Path) -> None:
    """Two terminal sessions with ``--seed 7``: the same game and a different one are each stored;
    the seed makes games reproducible, it does not decide whether they are kept."""
    with open_store(tmp_path / "scores.db") as store:
        played = []
        for cells in (None, None, [4]):
            match = Match("easy", names=["Ann"], first="me", seed=7, store=store)
            match.new_game()
            finish_game(match, cells)
            assert match.recorded is not None and match.recorded.game_id is not None, match.recorded_text()
            played.append(match)
        assert played[0].game is not None and played[1].game is not None
        assert played[0].game.moves == played[1].game.moves  # the same game, twice: kept twice
        assert played[2].game is not None and played[2].game.moves != played[0].game.moves
        assert store.count_games() == 3
        assert [game.id for game in store.games()] == [3, 2, 1]
        # a game recorded again (a room moved to another process before its change was stored): kept once
        match = Match("easy", names=["Ann"], first="me", seed=7, store=store)
        match.new_game()
        match.play(4)
        before_the_end = json.loads(json.dumps(match.to_dict()))
        finish_game(match)
        again = Match.from_dict(before_the_end, store=store)
        finish_game(again)
        assert again.recorded == match.recorded and store.count_games() == 4


def test_a_match_saved_before_sessions_keeps_its_old_keys(tmp_path: Path) -> None:
    with open_store(tmp_path / "scores.db") as store:
        match = Match("easy", names=["Ann"], first="me", seed=9, store=store)
        match.new_game()
        match.play(4)
        old = {key: value for key, value in match.to_dict().items() if key != "session"}
        resumed = Match.from_dict(old, store=store)
        finish_game(resumed)
        assert resumed.session == "9" and store.count_games() == 1


def test_a_match_round_trips_through_json_mid_game() -> None:
    match = Match("medium", names=["Ann"], first="alternate", best_of=5, seed=11)
    for _ in range(2):
        match.new_game()
        finish_game(match)
    match.new_game()
    match.apply_now() if match.computer_to_move else match.play(4)
    copy = Match.from_dict(json.loads(json.dumps(match.to_dict())))
    assert copy.to_dict() == match.to_dict()
    assert copy.game is not None and match.game is not None and copy.game.moves == match.game.moves
    # both carry on identically: the computer's choices depend only on the seed and the position
    for m in (match, copy):
        finish_game(m)
    assert copy.game.moves == match.game.moves and copy.tally == match.tally


@pytest.mark.parametrize("damaged", [{}, {"seats": []}, {"seats": "x"}, [], None])
def test_a_damaged_saved_match_is_refused_with_a_sentence(damaged: object) -> None:
    with pytest.raises(NoughtsError, match="saved match is damaged"):
        Match.from_dict(damaged)  # type: ignore[arg-type]


def test_opponents_that_cannot_play_the_board_are_refused_at_once() -> None:
    with pytest.raises(NoughtsError) as refused:
        Match("parsons", rows=4, cols=4)
    message = str(refused.value)
    assert "Centre first cannot play a 4×4 board with 4 in a row" in message
    able = message.split("Opponents that can: ")[1]
    assert "random" in able and "parsons" not in able
    assert all(players.unable(name, Match(PERSON, rows=4, cols=4).start) is None
               for name in able.split(", or")[0].split(", "))


def test_default_names() -> None:
    alone = Match("easy", environ={"USER": "ann"})
    assert [s.name for s in alone.seats] == ["ann", "Easy"]
    assert [s.name for s in Match(PERSON, environ={}).seats] == ["Player 1", "Player 2"]
    assert [s.name for s in Match(PERSON, names=["Player 2"], environ={}).seats] == ["Player 2", "Player 1"]
    with pytest.raises(NoughtsError, match="different names"):
        Match(PERSON, names=["Ann", "ann"])


@pytest.mark.parametrize(("rows", "cols"), [(3, 3), (4, 4), (3, 5), (10, 10), (12, 4)])
def test_the_board_diagram_lines_up_marks_numbers_and_letters(rows: int, cols: int) -> None:
    from noughts import Board
    from noughts.text import board_diagram

    board = Board(rows, cols, 3)
    for cell in (0, rows * cols - 1, cols + 1):
        board = board.play(cell)
    lines = board_diagram(board, last=cols + 1).splitlines()
    header, body = lines[0], lines[1:]
    letter_at = [header.index(chr(ord("a") + c)) for c in range(cols)]
    rule = body[1]
    for r, line in enumerate(body[::2]):
        assert [i for i, ch in enumerate(line) if ch == "|"] == [i for i, ch in enumerate(rule) if ch == "+"], line
        for c, end in enumerate(letter_at):  # every mark, bracket or number ends under its column's letter
            shown = board[r * cols + c] or str(r * cols + c + 1)
            assert line[end - len(shown) + 1:end + 1] == shown, (line, c)


# one rulebook: typed errors, joining, undo and hint by one rule --------------------------------

def test_each_refused_move_raises_its_own_error_type() -> None:
    from noughts.errors import CellTaken, GameOver, NotYourTurn

    match = Match(PERSON, names=["Ann", "Bob"], first="me")
    with pytest.raises(GameOver):
        match.play(0)
    match.new_game()
    match.play("b2", seat=0)
    with pytest.raises(NotYourTurn, match="Bob is to move"):
        match.play(0, seat=0)
    with pytest.raises(CellTaken, match=r"^b2 is taken by X: choose an empty square\.$") as taken:
        match.play("b2", seat=1)
    assert (taken.value.cell, taken.value.mark) == (4, "X")
    finish_game(match)
    with pytest.raises(GameOver, match="over"):
        match.play(0)
    computer = Match("easy", first="computer", seed=1)
    computer.new_game()
    with pytest.raises(NotYourTurn, match="Easy"):
        computer.play(0)


def test_join_names_a_seat_and_the_game_in_play() -> None:
    match = Match(PERSON, names=["Ann"], first="computer")
    match.new_game()
    assert match.join(1, "  Bob  ") == "Bob"
    assert match.name_of(1) == "Bob" and match.game is not None and match.game.x_name == "Bob"
    assert match.join(1, "ann") == "ann (2)"  # the two tallies are kept by name
    with pytest.raises(NoughtsError, match="printable"):
        match.join(0, "A\x07nn")
    with pytest.raises(NoughtsError, match="not a person"):
        Match("easy").join(1, "Bob")


def test_a_person_at_their_own_screen_takes_back_only_their_own_move() -> None:
    match = Match(PERSON, names=["Ann", "Bob"], first="me")
    match.new_game()
    assert None not in (match.undo_refusal(0), match.undo_refusal(1), match.undo_refusal())
    match.play("a1", seat=0)
    assert match.can_undo(0) and match.can_undo() and not match.can_undo(1)
    with pytest.raises(NoughtsError, match="Only your own last move"):
        match.undo(seat=1)
    assert match.undo(seat=0) == (0,)
    match.play("a1", seat=0)
    match.play("b2", seat=1)
    assert match.can_undo(1) and not match.can_undo(0)
    assert match.undo() == (4,)  # at one screen: the last move, whoever made it


def test_a_hint_is_for_the_person_whose_turn_it_is_in_every_kind_of_game() -> None:
    for opponent in (PERSON, "easy"):
        match = Match(opponent, names=["Ann"], first="me", seed=2)
        assert match.hint_refusal() is not None  # no game yet
        match.new_game()
        assert match.hint_refusal() is None and match.hint_refusal(0) is None
        assert match.hint_refusal(1) is not None
        cell, sentence = match.hint(seat=0)
        assert cell is not None and sentence.startswith("Hint: ")
        with pytest.raises(NoughtsError, match="your move"):
            match.hint(seat=1)


def test_the_default_opponent_is_one_rule_for_every_board() -> None:
    from noughts.board import Board

    for shape in [(3, 3, 3), (4, 4, 4), (7, 7, 5), (15, 15, 5)]:
        board = Board(*shape)
        default = players.default_for(board)
        assert players.unable(default, board) is None
        assert default == ("medium" if players.unable("medium", board) is None else "arduino")
    assert players.default_for(Board()) == "medium"


def test_every_board_shape_round_trips_through_its_notation() -> None:
    from noughts.board import Geometry
    from noughts.errors import UnsupportedBoardError

    for rows in range(1, 27):
        for cols in range(1, 27, 5):
            for k in {1, max(rows, cols), min(rows, cols, 5)}:
                geometry = Geometry.get(rows, cols, k)
                assert Geometry.parse(geometry.notation) is geometry or Geometry.parse(geometry.notation) == geometry
    for bad in ["", "x", "3x", "3x3k", "0x3", "27x3", "3x3k9", "3,3", "-3", "3x3k3k3", "٣x3", "9" * 30]:
        with pytest.raises(UnsupportedBoardError):
            Geometry.parse(bad)


def test_the_who_starts_labels_and_descriptions_come_from_one_table() -> None:
    from noughts import text

    assert [rule for rule, _, _ in text.first_choices()] == list(FIRST_RULES)
    assert {rule: about for rule, _, about in text.first_choices()} == FIRST_RULES
    labels = [label for _, label, _ in text.first_choices("Ann", "Bob")]
    assert labels[:2] == ["Ann first", "Bob first"] and len(set(labels)) == len(labels)


def test_play_options_take_the_board_notation_and_refuse_a_contradicting_k() -> None:
    from noughts.match import play_options

    options = play_options(size="7x7k5")
    assert (options.rows, options.cols, options.k) == (7, 7, 5)
    assert play_options(size="7x7k5", k="5").k == 5
    assert play_options(size="4x5", k="3").k == 3 and play_options(size="4").k is None
    with pytest.raises(NoughtsError, match="the board 7x7k5 has 5 in a row, not 4"):
        play_options(size="7x7k5", k="4")
    with pytest.raises(NoughtsError, match="a board is written like"):
        play_options(size="7x7k")


def test_one_result_type_for_board_game_and_match() -> None:
    from noughts.board import Board, Result

    assert Board.parse("XXX/OO./...").result == Result("X", (0, 1, 2), "line")
    assert Board.parse("XOX/XOO/OXX").result == Result(None, None, "full")
    match = Match(PERSON, names=["Ann", "Bob"], first="me")
    assert match.result is None
    match.new_game()
    finish_game(match, [0, 3, 1, 4, 2])
    assert match.result == Result("X", (0, 1, 2), "line") and match.game is not None and match.game.result == "X"
    match.new_game()
    match.play(4)
    match.abandon("You stopped")
    assert match.result == Result(None, None, "abandoned") and match.result.word == "abandoned"
