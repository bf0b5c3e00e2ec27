"""The panel's game logic (PanelController) with a recording output and made-up times."""

from __future__ import annotations

from pathlib import Path

import pytest

from noughts import Board, players, text
from noughts.errors import NoughtsError
from noughts.hardware.controller import (
    FLASH_FRAMES,
    LED_NAMES,
    TWO_PEOPLE,
    ButtonEvent,
    PanelController,
    PanelSettings,
    Tally,
    choice_for_cell,
    lcd_ascii,
)
from noughts.match import THINKING_AFTER

THINKING = lcd_ascii(text.THINKING)  # "thinking...": the LCD has no ellipsis


class Out:
    """A panel output that remembers the state and every call."""

    def __init__(self) -> None:
        self.leds = dict.fromkeys(LED_NAMES, False)
        self.lcd = ("", "")
        self.calls: list[tuple[object, ...]] = []

    def set_led(self, name: str, on: bool) -> None:
        assert name in LED_NAMES
        self.leds[name] = on
        self.calls.append(("led", name, on))

    def lcd_write(self, line1: str, line2: str) -> None:
        assert len(line1) <= 16 and len(line2) <= 16
        self.lcd = (line1, line2)
        self.calls.append(("lcd", line1, line2))

    def lit(self) -> set[str]:
        return {name for name, on in self.leds.items() if on}


def make(environ: dict[str, str] | None = None, **overrides: object) -> tuple[PanelController, Out]:
    settings = {"flash": False, "thinking_seconds": 3.0, "opponent": "parsons",
                "opponents": ("parsons", "arduino", "hard"), "seed": 5, **overrides}
    out = Out()
    panel = PanelController(out, PanelSettings(**settings), environ=environ)  # type: ignore[arg-type]
    return panel, out


def press(panel: PanelController, button: str, t: float) -> None:
    panel.handle(ButtonEvent(button, True), t)
    panel.handle(ButtonEvent(button, False), t + 0.1)


def lit_cells(out: Out, colour: str) -> set[int]:
    return {int(name[len(colour):]) for name in out.lit() if name.startswith(colour) and name[-1].isdigit()}


def play_against(panel: PanelController, out: Out, cells: list[int], t: float = 1.0) -> float:
    """The person plays ``cells`` in order (each when it is their turn); checks every step."""
    parsons = players.get("parsons")
    pause = panel.settings.thinking_seconds
    for cell in cells:
        if panel.state == "over":
            break
        if panel.state == "thinking":
            before = panel.game.board
            expected = parsons.choose(before) + 1
            if pause:
                panel.tick(t + pause - 0.1)  # not yet: the seed's pause is 3 s
                assert panel.game.board == before and out.lcd == ("Centre first", THINKING)
            t += pause
            panel.tick(t)
            assert expected in lit_cells(out, "red")
            if panel.state == "over":
                break
        assert panel.state == "turn" and out.lcd[0] == "Your turn..."
        press(panel, str(cell), t)
        assert cell in lit_cells(out, "green")
    if panel.state == "thinking":
        t += pause
        panel.tick(t)
    return t


def lcd_lines_over(panel: PanelController, out: Out, t: float, seconds: float = 12.0) -> set[str]:
    """The second LCD line's texts as the panel takes turns showing them for ``seconds``."""
    lines = set()
    for step in range(int(seconds / 2)):
        panel.tick(t + step * 2.0)
        lines.add(out.lcd[1])
    return lines


def test_the_start_up_flash_is_the_seeds_sequence() -> None:
    panel, out = make(flash=True)
    panel.start(0.0)
    seen = []
    for frame in range(len(FLASH_FRAMES)):
        panel.tick(frame * 0.1 + 0.05)
        seen.append(frozenset(out.lit()))
        assert out.lcd == ("TIC TAC TOE", "")
    assert seen[:4] == [{"green1", "green_win"}, {"red1", "red_win"}, {"green2", "green_win"}, {"red2", "red_win"}]
    assert seen[18:21] == [{"green1"}, {"green4"}, {"green7"}]  # then green column by column
    assert seen[-6:] == [{"red1"}, {"red5"}, {"red9"}, {"green3"}, {"green5"}, {"green7"}]
    assert tuple(seen) == FLASH_FRAMES and len(FLASH_FRAMES) == 42
    press(panel, "5", 4.0)  # buttons do nothing during the flash, as on the seed
    assert panel.state == "flash"
    panel.tick(4.2)
    assert out.lit() == set() and out.lcd == ("Your turn...", "You:0 Cen:0 D:0") and panel.state == "turn"


def test_reset_cuts_the_flash_short() -> None:
    panel, out = make(flash=True)
    panel.start(0.0)
    press(panel, "reset", 0.5)
    assert panel.state == "turn" and out.lit() == set() and out.lcd[0] == "Your turn..."


def test_a_whole_game_the_person_wins() -> None:
    panel, out = make()
    panel.start(0.0)
    assert out.lcd == ("Your turn...", "You:0 Cen:0 D:0")
    t = play_against(panel, out, [1, 8, 7, 4])
    assert panel.game.result == "X" and panel.state == "over"
    assert lit_cells(out, "green") == {1, 8, 7, 4} and lit_cells(out, "red") == {5, 3, 9}
    assert out.leds["green_win"] and not out.leds["red_win"]
    assert out.lcd == ("You win!!!", "Press reset...")
    panel.tick(t + 2.0)  # the second line alternates with the tally
    assert out.lcd == ("You win!!!", "You:1 Cen:0 D:0")
    panel.tick(t + 4.0)
    assert out.lcd[1] == "Press reset..."
    press(panel, "9", t + 5)  # nothing to play after the end
    assert panel.state == "over" and 9 not in lit_cells(out, "green")
    press(panel, "reset", t + 6)
    assert out.lit() == set() and out.lcd == ("Your turn...", "You:1 Cen:0 D:0")


def test_the_computer_wins_and_a_draw_lights_both_winner_leds() -> None:
    panel, out = make()
    panel.start(0.0)
    t = play_against(panel, out, [2, 3, 4, 6, 7, 8, 9])
    assert panel.game.result == "O" and out.lcd == ("You lose", "Press reset...")
    assert out.leds["red_win"] and not out.leds["green_win"]
    press(panel, "reset", t + 1)
    t = play_against(panel, out, [1, 2, 7, 6, 8], t + 2)
    assert panel.game.result == "draw" and out.lcd == ("It's a draw!", "Press reset...")
    assert out.leds["red_win"] and out.leds["green_win"]
    assert len(lit_cells(out, "green") | lit_cells(out, "red")) == 9
    panel.tick(t + 2.0)
    assert out.lcd[1] == "You:0 Cen:1 D:1"


def test_a_press_on_a_lit_cell_or_while_the_computer_thinks_changes_nothing() -> None:
    panel, out = make()
    panel.start(0.0)
    press(panel, "1", 1.0)
    panel.tick(1.4)  # the LCD says the computer is thinking
    calls = len(out.calls)
    press(panel, "2", 1.5)  # the computer is thinking
    press(panel, "1", 1.6)
    assert len(out.calls) == calls and panel.game.moves == (0,)
    panel.tick(4.0)
    red = lit_cells(out, "red").pop()
    calls = len(out.calls)
    press(panel, "1", 5.0)  # the person's own LED
    press(panel, str(red), 5.5)  # the computer's
    assert len(out.calls) == calls and panel.state == "turn" and len(panel.game.moves) == 2


def test_two_buttons_at_once_play_only_the_lower_one() -> None:
    panel, out = make()
    panel.start(0.0)
    panel.handle(ButtonEvent("3", True), 1.0)  # one poll brings both presses, in cell order
    panel.handle(ButtonEvent("7", True), 1.0)
    assert panel.game.moves == (2,) and lit_cells(out, "green") == {3}
    panel.tick(4.0)
    moves = panel.game.moves
    panel.handle(ButtonEvent("3", False), 4.5)  # 7 is still held: pressing 8 now is a chord too
    panel.handle(ButtonEvent("8", True), 4.6)
    assert panel.game.moves == moves
    panel.handle(ButtonEvent("7", False), 4.7)
    panel.handle(ButtonEvent("8", False), 4.7)
    press(panel, "8", 5.0)
    assert panel.game.moves[-1] == 7


def test_reset_mid_game_starts_again_without_counting_it() -> None:
    panel, out = make()
    panel.start(0.0)
    press(panel, "5", 1.0)
    panel.tick(4.0)
    assert len(out.lit()) == 2
    press(panel, "reset", 5.0)
    assert out.lit() == set() and panel.game.moves == () and panel.tally.games == 0
    assert out.lcd == ("Your turn...", "You:0 Cen:0 D:0")
    press(panel, "reset", 5.5)  # and during the computer's pause too
    press(panel, "1", 6.0)
    press(panel, "reset", 6.5)
    panel.tick(10.0)
    assert out.lit() == set() and panel.state == "turn"


def test_holding_a_cell_at_reset_chooses_the_opponent_and_who_starts() -> None:
    assert [choice_for_cell(c, ("a", "b", "c")) for c in range(1, 10)] == [
        ("a", "me"), ("a", "computer"), ("a", "alternate"), ("b", "me"), ("b", "computer"),
        ("b", "alternate"), ("c", "me"), ("c", "computer"), ("c", "alternate")]
    panel, out = make(message_seconds=2.0)
    panel.start(0.0)
    t = play_against(panel, out, [1, 8, 7, 4])
    assert panel.tally.green == 1
    panel.handle(ButtonEvent("8", True), t + 1)  # hard, the computer starts
    press(panel, "reset", t + 1.5)
    panel.handle(ButtonEvent("8", False), t + 2)
    assert (panel.opponent, panel.first) == ("hard", "computer") and panel.tally.games == 0
    assert panel.state == "thinking" and out.lit() == set()
    assert out.lcd == ("vs Hard", "Opponent first")  # the choice, in the menu's words, for a while
    panel.tick(t + 3.5)
    assert out.lcd == ("Hard", THINKING)
    panel.tick(t + 4.6)
    assert len(lit_cells(out, "red")) == 1 and panel.green_mark == "O"
    assert panel.game.x_name == players.label("hard") == "Hard" and panel.game.o_name == panel.match.name_of(0)
    panel.handle(ButtonEvent("3", True), t + 5)  # parsons, taking turns: the person starts game 1
    panel.handle(ButtonEvent("6", True), t + 5)  # a second held cell: the lower one chooses
    press(panel, "reset", t + 5.2)
    panel.handle(ButtonEvent("3", False), t + 5.3)
    panel.handle(ButtonEvent("6", False), t + 5.3)
    assert (panel.opponent, panel.first) == ("parsons", "alternate") and panel.state == "turn"
    assert out.lcd == ("vs Centre first", "Take turns")
    panel.tick(t + 7.2)
    assert out.lcd == ("Your turn...", "You:0 Cen:0 D:0")
    t = play_against(panel, out, [1, 8, 7, 4], t + 8)
    press(panel, "reset", t + 1)  # game 2: the computer starts
    assert panel.state == "thinking" and panel.green_mark == "O"
    assert out.lcd == ("Centre first", "You:1 Cen:0 D:0")  # no choice: the tally; not thinking yet
    press(panel, "reset", t + 2)  # abandoned, not counted; who starts next is the match's rule
    assert panel.tally.games == 1 and panel.match.abandoned is False
    assert panel.state == ("thinking" if panel.match.x_seat == 1 else "turn")


def test_the_two_person_switch_counts_from_the_next_reset() -> None:
    panel, out = make()
    panel.start(0.0)
    panel.handle(ButtonEvent("switch", True), 0.5)
    press(panel, "5", 1.0)
    assert panel.state == "thinking"  # still against the computer until reset
    press(panel, "reset", 2.0)
    assert panel.two_person and out.lcd == ("Green's turn...", "Gre:0 Red:0 D:0")
    for t, cell in enumerate([1, 4, 2, 5], start=3):
        press(panel, str(cell), t)
        assert panel.state == "turn"
    assert lit_cells(out, "green") == {1, 2} and lit_cells(out, "red") == {4, 5}
    assert out.lcd[0] == "Green's turn..."
    press(panel, "3", 8.0)
    assert out.lcd == ("Green wins!!!", "Press reset...") and out.leds["green_win"]
    press(panel, "reset", 9.0)
    assert out.lcd == ("Green's turn...", "Gre:1 Red:0 D:0")
    panel.handle(ButtonEvent("switch", False), 9.5)
    press(panel, "reset", 10.0)  # back to the computer: a new match
    assert not panel.two_person and out.lcd == ("Your turn...", "You:0 Cen:0 D:0")


def test_a_match_ends_after_its_games_and_the_next_reset_starts_another() -> None:
    panel, out = make(match_games=2)
    panel.start(0.0)
    t = play_against(panel, out, [1, 8, 7, 4])
    assert not panel.match_over
    press(panel, "reset", t + 1)
    t = play_against(panel, out, [1, 8, 7, 4], t + 2)
    assert panel.match_over
    assert lcd_lines_over(panel, out, t) == {"Press reset...", "You:2 Cen:0 D:0", "You win match"}
    press(panel, "reset", t + 20)
    assert panel.tally.games == 0 and out.lcd[1] == "You:0 Cen:0 D:0"


def test_the_tally_fits_the_lcd() -> None:
    assert text.short_tally("You", "Hard", [10, 0, 0]) == "You:10 Har:0 D:0"
    assert text.short_tally("You", "Hard", [33, 33, 33]) == "Y:33 H:33 D:33"  # the most a 99-game match holds
    assert text.short_tally(*TWO_PEOPLE, [33, 33, 33]) == "G:33 R:33 D:33"
    assert text.short_match_line(*TWO_PEOPLE, [33, 33, 33]) == "Match drawn"
    assert text.short_tally(*TWO_PEOPLE, [1, 2, 3]) == "Gre:1 Red:2 D:3"
    assert text.short_match_line(*TWO_PEOPLE, [1, 2, 3]) == "Red wins match"
    panel, _ = make()
    panel.start(0.0)
    assert panel.tally_line() == text.short_tally("You", "Centre first", panel.match.score) == "You:0 Cen:0 D:0"


def test_the_game_over_hook_gets_the_finished_game() -> None:
    finished = []
    out = Out()
    panel = PanelController(out, PanelSettings(flash=False, opponent="parsons", thinking_seconds=0.0),
                            on_game_over=lambda p, game: finished.append((p.green_mark, game.to_text())))
    panel.start(0.0)
    play_against(panel, out, [1, 8, 7, 4])
    assert finished == [("X", "a1 b2 b3 c1 a3 c3 a2")]


def test_only_changes_reach_the_output() -> None:
    panel, out = make()
    panel.start(0.0)
    assert len(out.calls) == len(LED_NAMES) + 1  # everything once, at start
    calls = len(out.calls)
    for t in range(1, 20):
        panel.tick(t * 0.01)
    assert len(out.calls) == calls


@pytest.mark.parametrize("first", ["person", "computer"])
def test_the_seeds_own_player_plays_a_full_game_either_way(first: str) -> None:
    panel, out = make(opponent="arduino", first=first, thinking_seconds=0.0)
    panel.start(0.0)
    t = 0.0
    while panel.state != "over":
        t += 0.25
        panel.tick(t)
        if panel.state == "turn":
            board: Board = panel.game.board
            press(panel, str(board.legal_moves[0] + 1), t)
    board = panel.game.board
    assert lit_cells(out, "green") == {c + 1 for c in range(9) if board[c] == panel.green_mark}
    assert lit_cells(out, "red") == {c + 1 for c in range(9) if board[c] == panel.red_mark}


def test_finished_games_go_to_the_score_store(tmp_path: Path) -> None:
    from noughts.store import open_store

    store = open_store(tmp_path / "noughts.db")
    said: list[str] = []
    out = Out()
    panel = PanelController(out, PanelSettings(flash=False, opponent="parsons", thinking_seconds=0.0, player="Ann"),
                            store=store, say=said.append)
    panel.start(0.0)
    t = play_against(panel, out, [1, 8, 7, 4])
    assert store.scores().opponents["parsons"].wins == 1
    (game,) = store.games()
    assert (game.x.name, game.o.name, game.result) == ("Ann", "parsons", "X")
    for step in range(5):  # the end of the game is shown for a while: it is still kept once
        panel.tick(t + step)
    assert len(store.games()) == 1
    panel.handle(ButtonEvent("switch", True), t + 1)
    press(panel, "reset", t + 2)
    for step, cell in enumerate("14253"):
        press(panel, cell, t + 3 + step)
    assert store.scores().people["Green"].wins == 1 and store.scores().people["Red"].losses == 1
    press(panel, "reset", t + 9)  # a game abandoned half way is not kept
    press(panel, "5", t + 9.5)
    press(panel, "reset", t + 9.7)
    assert len(store.games()) == 2
    from noughts.store import StoreError

    def broken(*args: object, **kwargs: object) -> None:
        raise StoreError("The disk is full.")

    store.record = broken  # type: ignore[method-assign]
    for step, cell in enumerate("14253"):  # a store that fails: said, and the panel goes on
        press(panel, cell, t + 11 + step)
    assert said == ["The disk is full."] and panel.state == "over"
    store.close()


def test_the_person_is_named_as_in_noughts_play() -> None:
    panel, _ = make(player=None)
    panel.start(0.0)
    assert panel.match.name_of(0) == text.default_name()
    assert panel.sides() == {"green": ("X", text.default_name()), "red": ("O", "Centre first")}
    panel, _ = make(player="Zoë", environ={})
    panel.start(0.0)
    assert panel.sides()["green"] == ("X", "Zoë")


def test_who_starts_takes_the_matchs_words_and_the_panels_older_one() -> None:
    for word, x_seats in [("person", [0, 0, 0]), ("me", [0, 0, 0]), ("computer", [1, 1, 1]),
                          ("alternate", [0, 1, 0])]:
        panel, out = make(first=word, thinking_seconds=0.0)
        panel.start(0.0)
        seen = []
        for game in range(3):
            seen.append(panel.match.x_seat)
            assert panel.green_mark == ("X" if panel.match.x_seat == 0 else "O")
            play_out(panel, 10.0 * game)
            press(panel, "reset", 10.0 * game + 9)
        assert seen == x_seats, word
    panel, out = make(first="loser", thinking_seconds=0.0)
    panel.start(0.0)
    t = play_against(panel, out, [1, 8, 7, 4])  # the person wins: the computer starts the next game
    press(panel, "reset", t + 1)
    assert panel.match.x_seat == 1 and panel.green_mark == "O" and panel.state == "thinking"
    panel, out = make(first="random", thinking_seconds=0.0, seed=3)
    panel.start(0.0)
    starts = set()
    for game in range(12):
        starts.add(panel.match.x_seat)
        play_out(panel, 10.0 * game)
        press(panel, "reset", 10.0 * game + 9)
    assert starts == {0, 1}
    with pytest.raises(NoughtsError, match="who starts can be me, computer, alternate, loser, random"):
        make(first="whoever")


def play_out(panel: PanelController, t: float) -> None:
    """Play the game in play to its end, the person taking the first free cell."""
    while panel.state != "over":
        t += 0.01
        panel.tick(t)
        if panel.state == "turn":
            press(panel, str(panel.game.board.legal_moves[0] + 1), t)


def test_a_match_is_best_of_its_games() -> None:
    panel, out = make(match_games=3)
    panel.start(0.0)
    t = play_against(panel, out, [1, 8, 7, 4])
    press(panel, "reset", t + 1)
    t = play_against(panel, out, [1, 8, 7, 4], t + 2)
    assert panel.match_over and panel.tally == Tally(2, 0, 0)  # two of three: decided, the third is not played
    assert lcd_lines_over(panel, out, t) == {"Press reset...", "You:2 Cen:0 D:0", "You win match"}
    press(panel, "reset", t + 20)
    assert panel.tally.games == 0 and not panel.match_over and out.lcd[1] == "You:0 Cen:0 D:0"


def test_what_the_lcd_cannot_show_is_made_plain() -> None:
    panel, out = make(opponents=("newell-simon", "arduino", "seed001-rules"))
    panel.start(0.0)
    panel.handle(ButtonEvent("1", True), 1.0)
    press(panel, "reset", 1.1)
    assert out.lcd == ("vs Newell-Simon", "You first")  # the name people see, in the LCD's ASCII
    panel.handle(ButtonEvent("1", False), 1.2)
    panel.handle(ButtonEvent("7", True), 2.0)
    press(panel, "reset", 2.1)
    assert panel.opponent == "simple-rules" and out.lcd == ("vs Simple rules", "You first")
    assert lcd_ascii("Zoë’s turn…") == "Zoe?s turn..."


# issue 28: one vocabulary, one rulebook, no silent waits ----------------------------------------

def test_the_choice_grid_says_who_starts_in_the_menus_words() -> None:
    labels = {rule: label for rule, label, _ in text.first_choices()}
    panel, out = make(opponents=("parsons", "arduino", "hard"), thinking_seconds=10.0)
    panel.start(0.0)
    seen = {}
    for cell in range(4, 7):  # the Arduino row: its name is too long for "Arduino rules first"
        panel.handle(ButtonEvent(str(cell), True), cell)
        press(panel, "reset", cell + 0.1)
        panel.handle(ButtonEvent(str(cell), False), cell + 0.2)
        seen[panel.first] = out.lcd
    assert seen == {"me": ("vs Arduino rules", labels["me"]), "computer": ("vs Arduino rules", "Opponent first"),
                    "alternate": ("vs Arduino rules", labels["alternate"])}
    panel.handle(ButtonEvent("8", True), 10.0)
    press(panel, "reset", 10.1)
    assert out.lcd == ("vs Hard", "Opponent first") == ("vs Hard", text.first_choices()[1][1])
    panel.handle(ButtonEvent("8", False), 10.2)
    panel.handle(ButtonEvent("switch", True), 11.0)  # two people: the column, by their names
    panel.handle(ButtonEvent("2", True), 11.5)
    press(panel, "reset", 12.0)
    assert out.lcd == ("Red's turn...", "Red first") == ("Red's turn...", text.first_choices("Green", "Red")[1][1])


def test_the_opponent_at_power_on_is_the_one_every_front_end_offers_first() -> None:
    panel = PanelController(Out(), PanelSettings(flash=False))
    assert panel.opponent == players.default_for(Board()) == "medium"
    assert panel.match.name_of(1) == "Medium"
    panel = PanelController(Out(), PanelSettings(flash=False, opponent="arduino"))  # named: kept
    assert panel.opponent == "arduino"


def test_a_cell_held_at_reset_never_swallows_the_presses_after_it() -> None:
    panel, out = make(thinking_seconds=0.5, message_seconds=1.0)
    panel.start(0.0)
    panel.handle(ButtonEvent("1", True), 1.0)  # parsons, you first (pressing 1 plays a1: a move)
    press(panel, "reset", 1.5)  # ...chooses; the game it played in is abandoned
    assert panel.game.moves == () and panel.state == "turn"
    panel.tick(3.0)  # still holding 1: the LCD says what it waits for
    assert out.lcd == ("Your turn...", "Let go of cell 1")
    press(panel, "3", 3.5)  # another cell while 1 is still down: it counts
    assert panel.game.moves == (2,) and 3 in lit_cells(out, "green")
    panel.tick(4.5)
    panel.handle(ButtonEvent("1", False), 5.0)  # letting go plays nothing
    assert len(panel.game.moves) == 2 and out.lcd == ("Your turn...", "You:0 Cen:0 D:0")
    press(panel, "1", 5.5)  # and pressed again, 1 is a move like any other
    assert panel.game.moves[2] == 0


def test_a_cell_held_through_the_start_up_flash_is_let_go_before_it_counts() -> None:
    panel, out = make(flash=True)
    panel.start(0.0)
    panel.handle(ButtonEvent("5", True), 0.5)  # held at power-on, through the whole flash
    panel.tick(10.0)
    assert panel.state == "turn" and out.lcd == ("Your turn...", "Let go of cell 5")
    press(panel, "1", 10.5)
    assert panel.game.moves == (0,)


def test_thinking_shows_only_after_the_shared_delay_and_goes_with_the_move() -> None:
    panel, out = make(thinking_seconds=3.0)
    panel.start(0.0)
    press(panel, "5", 1.0)
    panel.tick(1.0 + THINKING_AFTER - 0.01)
    assert out.lcd == ("Centre first", "You:0 Cen:0 D:0")  # the computer's turn, no word yet
    panel.tick(1.0 + THINKING_AFTER)
    assert out.lcd == ("Centre first", THINKING)
    panel.tick(4.0)
    assert out.lcd == ("Your turn...", "You:0 Cen:0 D:0")
    quick, out = make(thinking_seconds=THINKING_AFTER / 2)  # a quicker reply shows no word at all
    quick.start(0.0)
    for step in range(4):
        press(quick, "159"[step % 3], 1.0 + step)
        for tick in range(10):
            quick.tick(1.0 + step + tick * 0.05)
    assert quick.game.moves and all(THINKING not in call for call in out.calls)


def test_the_lcd_says_results_and_the_tally_in_the_shared_words() -> None:
    panel, out = make()
    panel.start(0.0)
    t = play_against(panel, out, [2, 3, 4, 6, 7, 8, 9])
    assert out.lcd[0] == panel.match.result_banner() == text.result_banner("O", "Centre first", you=False)
    panel.tick(t + 2.0)
    assert out.lcd[1] == text.short_tally("You", players.label("parsons"), panel.match.score)


def test_the_power_on_opponent_can_be_chosen_again_from_the_grid() -> None:
    from noughts.hardware.config import load_config

    for settings in (PanelSettings(), load_config(None).game):  # the code's defaults and the default file's
        assert players.default_for(Board()) in settings.opponents
