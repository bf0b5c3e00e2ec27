"""The panel's game logic, the same for every backend: buttons and time in, LEDs and LCD out.

A :class:`PanelController` is driven by :meth:`~PanelController.handle` (a button pressed or
released) and :meth:`~PanelController.tick` (time passing), each with the time now in seconds,
and writes to a :class:`PanelOutput` (``set_led(name, on)``, ``lcd_write(line1, line2)``), only
what changed. It never sleeps or reads a clock, so tests drive it with made-up times.

>>> class Out:
...     def __init__(self): self.leds, self.lcd = set(), None
...     def set_led(self, name, on): self.leds.add(name) if on else self.leds.discard(name)
...     def lcd_write(self, line1, line2): self.lcd = (line1, line2)
>>> out = Out()
>>> panel = PanelController(out, PanelSettings(flash=False, thinking_seconds=3.0, seed=1))
>>> panel.start(0.0); out.lcd
('Your turn...', 'You:0 Me:0 Tie:0')
>>> panel.handle(ButtonEvent("5", True), 1.0); sorted(out.leds), out.lcd
(['green5'], ('My turn...', 'Hmmm...'))
>>> panel.tick(4.0); len(out.leds), out.lcd[0]
(2, 'Your turn...')

The seed's board: nine green LEDs for the person, nine red for the computer, a winner LED of
each colour (both for a draw), a 16×2 LCD, nine cell buttons and reset. Beyond the seed:

* hold a cell button while pressing reset to choose the opponent (the row) and who starts
  (the column: you, the computer, take turns) — see :func:`choice_for_cell`;
* the two-person switch (``switch`` pressed = on), read at reset: green and red are two people;
* a match of ``match_games`` games, its tally on the LCD's second line.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from noughts import players
from noughts.board import Board
from noughts.game import Game, GameEvent

if TYPE_CHECKING:
    from noughts.players.base import Player

__all__ = [
    "BUTTONS", "ButtonEvent", "CELL_BUTTONS", "FLASH_FRAMES", "LED_NAMES", "PanelController",
    "PanelOutput", "PanelSettings", "Tally", "choice_for_cell",
]

CELL_BUTTONS = tuple(str(i) for i in range(1, 10))
BUTTONS = (*CELL_BUTTONS, "reset", "switch")
LED_NAMES = (*(f"green{i}" for i in range(1, 10)), *(f"red{i}" for i in range(1, 10)), "green_win", "red_win")
LCD_WIDTH = 16


def _flash_frames() -> tuple[frozenset[str], ...]:
    """The seed's startupFlash(), one frame per startupFlashSpeed step."""
    frames: list[frozenset[str]] = []
    for cell in range(1, 10):  # each cell green then red, with the winner LED of that colour
        frames += [frozenset({f"green{cell}", "green_win"}), frozenset({f"red{cell}", "red_win"})]
    frames += [frozenset({f"green{c}"}) for c in (1, 4, 7, 2, 5, 8, 3, 6, 9)]  # green by columns
    frames += [frozenset({f"red{c}"}) for c in range(1, 10)]  # red by rows
    frames += [frozenset({f"red{c}"}) for c in (1, 5, 9)]  # red down the diagonal
    frames += [frozenset({f"green{c}"}) for c in (3, 5, 7)]  # green up the other diagonal
    return tuple(frames)


FLASH_FRAMES = _flash_frames()


@dataclass(frozen=True)
class ButtonEvent:
    """``button`` (``"1"``-``"9"``, ``"reset"`` or ``"switch"``) went down or up."""

    button: str
    pressed: bool


class PanelOutput(Protocol):
    def set_led(self, name: str, on: bool) -> None: ...

    def lcd_write(self, line1: str, line2: str) -> None: ...


@dataclass(frozen=True)
class PanelSettings:
    """What the game needs from the configuration (see ``[game]`` in the panel's TOML)."""

    opponents: tuple[str, str, str] = ("easy", "arduino", "hard")
    opponent: str = "arduino"
    first: str = "person"
    thinking_seconds: float = 3.0
    flash: bool = True
    flash_step_seconds: float = 0.1
    match_games: int = 10
    message_seconds: float = 2.0
    seed: int | None = None


def choice_for_cell(cell: int, opponents: tuple[str, str, str]) -> tuple[str, str]:
    """The (opponent, first) that holding ``cell`` (1-9) at reset chooses.

    >>> [choice_for_cell(c, ("easy", "arduino", "hard")) for c in (1, 5, 9)]
    [('easy', 'person'), ('arduino', 'computer'), ('hard', 'alternate')]
    """
    row, column = divmod(cell - 1, 3)
    return opponents[row], ("person", "computer", "alternate")[column]


@dataclass
class Tally:
    """Games of the current match: won by green (the person), by red (the computer), drawn."""

    green: int = 0
    red: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        return self.green + self.red + self.draws


GameOverHook = Callable[["PanelController", Game], object]

State = Literal["idle", "flash", "turn", "thinking", "over"]


class PanelController:
    """One panel's game: call :meth:`start`, then :meth:`handle` and :meth:`tick` as things happen."""

    def __init__(self, output: PanelOutput, settings: PanelSettings | None = None, *,
                 rng: random.Random | None = None, on_game_over: GameOverHook | None = None) -> None:
        self.output = output
        self.settings = settings or PanelSettings()
        self.rng = rng or random.Random(self.settings.seed)
        self.on_game_over = on_game_over
        self.state: State = "idle"
        self.opponent = self.settings.opponent
        self.first = self.settings.first
        self.two_person = False  # the mode of the game being played
        self.switch_on = False  # the switch as it stands; it takes effect at reset
        self.tally = Tally()
        self.game = Game()
        self.green_mark = "X"
        self.held: set[str] = set()
        self._players: dict[str, Player] = {}
        self._since = 0.0  # when the current state began
        self._now = 0.0  # the time of the input being handled, for the game's listener
        self._leds = dict.fromkeys(LED_NAMES, False)
        self._lcd = ("", "")
        self._sent_leds: dict[str, bool] = {}
        self._sent_lcd: tuple[str, str] | None = None

    # --- what the panel shows -------------------------------------------------------------
    @property
    def leds(self) -> dict[str, bool]:
        """Every LED's state as last written."""
        return dict(self._leds)

    @property
    def lcd(self) -> tuple[str, str]:
        return self._lcd

    @property
    def red_mark(self) -> str:
        return "O" if self.green_mark == "X" else "X"

    @property
    def match_over(self) -> bool:
        return self.tally.games >= self.settings.match_games

    # --- inputs ---------------------------------------------------------------------------
    def start(self, now: float) -> None:
        """Power-on: the start-up flash (if configured), then the first game."""
        self._now = now
        if self.settings.flash:
            self._enter("flash", now)
        else:
            self._new_game(now)
        self._show(now)

    def handle(self, event: ButtonEvent, now: float) -> None:
        self._now = now
        button = event.button
        if button == "switch":
            self.switch_on = event.pressed
        elif not event.pressed:
            self.held.discard(button)
        elif button == "reset":
            self._reset(now)
        elif button in CELL_BUTTONS:
            # A press counts only while no other cell button is down: two at once (or a second
            # hand on the panel in two-person mode) cannot play twice. Presses come in cell order,
            # so of two buttons pressed together the lower-numbered one counts, as the seed's scan.
            alone = not self.held.intersection(CELL_BUTTONS)
            self.held.add(button)
            if alone:
                self._cell(int(button) - 1, now)
        self._show(now)

    def tick(self, now: float) -> None:
        """Time passes: the flash advances, the computer finishes thinking, messages alternate."""
        self._now = now
        if self.state == "flash" and self._flash_frame(now) >= len(FLASH_FRAMES):
            self._new_game(now)
        elif self.state == "thinking" and now - self._since >= self.settings.thinking_seconds:
            self._computer_move(now)
        self._show(now)

    # --- flow -----------------------------------------------------------------------------
    def _enter(self, state: State, now: float) -> None:
        self.state = state
        self._since = now

    def _flash_frame(self, now: float) -> int:
        return int((now - self._since) / self.settings.flash_step_seconds + 1e-9)

    def _reset(self, now: float) -> None:
        held_cells = sorted(int(b) for b in self.held if b in CELL_BUTTONS)
        new_match = self.match_over
        if held_cells:  # the lowest held cell chooses
            self.opponent, self.first = choice_for_cell(held_cells[0], self.settings.opponents)
            new_match = True
        if self.switch_on != self.two_person:
            self.two_person = self.switch_on
            new_match = True
        if new_match:
            self.tally = Tally()
        self._new_game(now)

    def _green_starts(self) -> bool:
        if self.first == "alternate":
            return self.tally.games % 2 == 0  # an abandoned game does not move the turn on
        return self.first == "person"

    def _new_game(self, now: float) -> None:
        self.green_mark = "X" if self._green_starts() else "O"
        self.game = Game(Board(), x_name=self._name("X"), o_name=self._name("O"))
        self.game.add_listener(self._on_game_event)
        self._enter("turn", now)
        if not self.two_person and self.game.board.turn == self.red_mark:
            self._enter("thinking", now)

    def _name(self, mark: str) -> str:
        if self.two_person:
            return "Green" if mark == self.green_mark else "Red"
        return "person" if mark == self.green_mark else self.opponent

    def _cell(self, cell: int, now: float) -> None:
        if self.state != "turn" or self.game.board[cell] is not None:
            return  # a lit cell, the computer's turn, the flash or a finished game: nothing to do
        self.game.play(cell)
        if self.state == "turn" and not self.two_person:
            self._enter("thinking", now)

    def _computer_move(self, now: float) -> None:
        player = self._players.get(self.opponent)
        if player is None:
            player = self._players[self.opponent] = players.get(self.opponent, rng=self.rng)
        self.game.play_computer(player)
        if self.state == "thinking":
            self._enter("turn", now)

    def _on_game_event(self, event: GameEvent) -> None:
        if event.kind != "end":
            return
        if event.winner is None:
            self.tally.draws += 1
        elif event.winner == self.green_mark:
            self.tally.green += 1
        else:
            self.tally.red += 1
        self._enter("over", self._now)
        if self.on_game_over is not None:
            self.on_game_over(self, self.game)

    # --- output ---------------------------------------------------------------------------
    def _show(self, now: float) -> None:
        leds = dict.fromkeys(LED_NAMES, False)
        if self.state == "flash":
            frame = self._flash_frame(now)
            for name in FLASH_FRAMES[min(frame, len(FLASH_FRAMES) - 1)]:
                leds[name] = True
            lcd = ("TIC TAC TOE", "")
        else:
            board = self.game.board
            for cell in range(9):
                mark = board[cell]
                if mark is not None:
                    leds[f"{'green' if mark == self.green_mark else 'red'}{cell + 1}"] = True
            lcd = self._text(now)
            if self.state == "over":
                result = self.game.result
                leds["green_win"] = result in ("draw", self.green_mark)
                leds["red_win"] = result in ("draw", self.red_mark)
        self._leds = leds
        self._lcd = (lcd[0][:LCD_WIDTH], lcd[1][:LCD_WIDTH])
        for name, on in leds.items():
            if self._sent_leds.get(name) != on:
                self.output.set_led(name, on)
                self._sent_leds[name] = on
        if self._lcd != self._sent_lcd:
            self.output.lcd_write(*self._lcd)
            self._sent_lcd = self._lcd

    def _text(self, now: float) -> tuple[str, str]:
        tally = self.tally_line()
        if self.state == "thinking":
            return "My turn...", "Hmmm..."  # the seed's playPoss()
        if self.state == "turn":
            if self.two_person:
                colour = "Green" if self.game.board.turn == self.green_mark else "Red"
                return f"{colour}'s turn...", tally
            return "Your turn...", tally
        result = self.game.result
        if result == "draw":
            top = "It's a draw!"
        elif self.two_person:
            top = "Green wins!!!" if result == self.green_mark else "Red wins!!!"
        else:
            top = "You win!!!" if result == self.green_mark else "I win!!!"
        lines = ["Press reset...", tally]
        if self.match_over:
            lines.append(self.match_line())
        index = int((now - self._since) / self.settings.message_seconds + 1e-9) % len(lines)
        return top, lines[index]

    def tally_line(self) -> str:
        """The match so far, in 16 characters: ``You:2 Me:1 Tie:0`` or ``Grn:2 Red:1 Tie:0``."""
        t = self.tally
        names = ("Grn", "Red", "Tie") if self.two_person else ("You", "Me", "Tie")
        for sep, short in ((":", False), ("", False), ("", True)):
            parts = [f"{(n[0] if short else n)}{sep}{v}" for n, v in zip(names, (t.green, t.red, t.draws), strict=True)]
            line = " ".join(parts)
            if len(line) <= LCD_WIDTH:
                return line
        return line[:LCD_WIDTH]

    def match_line(self) -> str:
        """Who won the match, once it is over."""
        t = self.tally
        if t.green == t.red:
            return "Match drawn"
        if self.two_person:
            return "Green wins match" if t.green > t.red else "Red wins match"
        return "You win match!" if t.green > t.red else "I win the match!"
