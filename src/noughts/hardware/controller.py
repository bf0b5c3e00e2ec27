"""The panel's game logic, the same for every backend: buttons and time in, LEDs and LCD out.

A :class:`PanelController` is driven by :meth:`~PanelController.handle` (a button pressed or
released) and :meth:`~PanelController.tick` (time passing), each with the time now in seconds,
and writes to a :class:`PanelOutput` (``set_led(name, on)``, ``lcd_write(line1, line2)``), only
what changed. It never sleeps or reads a clock, so tests drive it with made-up times.

The game itself is a :class:`~noughts.match.Match`, as in every front end: the match decides who
starts, whose turn it is, the computer's move, the tally and the best-of score, and records each
finished game once. The panel keeps what is its own: the LEDs, the LCD's 16 columns, the flash,
the computer's thinking pause, the buttons (reset, holding a cell to choose) and the switch.

>>> class Out:
...     def __init__(self): self.leds, self.lcd = set(), None
...     def set_led(self, name, on): self.leds.add(name) if on else self.leds.discard(name)
...     def lcd_write(self, line1, line2): self.lcd = (line1, line2)
>>> out = Out()
>>> panel = PanelController(out, PanelSettings(flash=False, thinking_seconds=3.0, seed=1))
>>> panel.start(0.0); out.lcd
('Your turn...', 'You:0 Med:0 D:0')
>>> panel.handle(ButtonEvent("5", True), 1.0); sorted(out.leds), out.lcd
(['green5'], ('Medium', 'You:0 Med:0 D:0'))
>>> panel.tick(1.5); out.lcd                # the computer has worked for longer than THINKING_AFTER
('Medium', 'thinking...')
>>> panel.tick(4.0); len(out.leds), out.lcd[0]
(2, 'Your turn...')

The seed's board: nine green LEDs for the person, nine red for the computer, a winner LED of
each colour (both for a draw), a 16×2 LCD, nine cell buttons and reset. Its words are noughts'
own (:mod:`noughts.text`), cut to the LCD's 16 columns there. Beyond the seed:

* hold a cell button while pressing reset to choose the opponent (the row) and who starts
  (the column: me, computer, alternate; the LCD names both for a while) — see
  :func:`choice_for_cell`. A cell held when a game begins is neither a move nor a chord until
  it is let go (the LCD asks for that), so it never swallows the presses after it;
* the two-person switch (``switch`` pressed = on), read at reset: green and red are two people;
* a match of ``match_games`` games (the match's best of N), its score on the LCD's second line.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from noughts import players, text
from noughts.board import Board
from noughts.errors import NoughtsError
from noughts.game import Game
from noughts.hardware.defaults import GRID_FIRST, TWO_PEOPLE
from noughts.match import PERSON, THINKING_AFTER, Match, MatchEvent, first_rule, opponent_name

if TYPE_CHECKING:
    from noughts.store import Store

__all__ = [
    "BUTTONS", "ButtonEvent", "CELL_BUTTONS", "FLASH_FRAMES", "LED_NAMES", "PanelController",
    "PanelOutput", "PanelSettings", "TWO_PEOPLE", "Tally", "choice_for_cell", "lcd_ascii",
]

CELL_BUTTONS = tuple(str(i) for i in range(1, 10))
BUTTONS = (*CELL_BUTTONS, "reset", "switch")
LED_NAMES = (*(f"green{i}" for i in range(1, 10)), *(f"red{i}" for i in range(1, 10)), "green_win", "red_win")
LCD_WIDTH = text.LCD_WIDTH


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
    """What the game needs from the configuration (see ``[game]`` in the panel's TOML).

    ``first`` is the match's rule for who starts (me, computer, alternate, loser, random; the
    older ``person`` means me); ``opponent`` None is the default every front end offers
    (:func:`noughts.players.default_for`); ``player`` is the person's name for the scores (None:
    the login name, else You, as ``noughts play``).
    """

    opponents: tuple[str, str, str] = ("easy", "medium", "hard")  # the power-on default is among them
    opponent: str | None = None
    first: str = "me"
    thinking_seconds: float = 3.0
    flash: bool = True
    flash_step_seconds: float = 0.1
    match_games: int = 10
    message_seconds: float = 2.0
    seed: int | str | None = None
    player: str | None = None




def choice_for_cell(cell: int, opponents: tuple[str, str, str]) -> tuple[str, str]:
    """The (opponent, who starts) that holding ``cell`` (1-9) at reset chooses.

    >>> [choice_for_cell(c, ("easy", "arduino", "hard")) for c in (1, 5, 9)]
    [('easy', 'me'), ('arduino', 'computer'), ('hard', 'alternate')]
    """
    row, column = divmod(cell - 1, 3)
    return opponents[row], GRID_FIRST[column]


@dataclass(frozen=True)
class Tally:
    """The score of the match in play: won by green (seat 0, the person), by red, drawn."""

    green: int = 0
    red: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        return self.green + self.red + self.draws


def lcd_ascii(text: str) -> str:
    """Text the LCD's character ROM can show: accents dropped, dashes plain, anything else '?'.

    >>> lcd_ascii("Newell–Simon rules"), lcd_ascii("Zoë · 3×3")
    ('Newell-Simon rules', 'Zoe - 3x3')
    """
    text = text.translate(_LCD_FOLD)
    folded = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return "".join(c if " " <= c <= "~" else "?" for c in folded)


_LCD_FOLD = str.maketrans({"–": "-", "—": "-", "·": "-", "×": "x", "…": "..."})


GameOverHook = Callable[["PanelController", Game], object]

State = Literal["idle", "flash", "turn", "thinking", "over"]


class PanelController:
    """One panel's game: call :meth:`start`, then :meth:`handle` and :meth:`tick` as things happen.

    ``store`` keeps finished games (the match records each once); ``say`` hears the store's
    problems (a full disk), which the panel cannot show on its 16 columns.
    """

    def __init__(self, output: PanelOutput, settings: PanelSettings | None = None, *,
                 store: Store | None = None, on_game_over: GameOverHook | None = None,
                 say: Callable[[str], object] | None = None, environ: Mapping[str, str] | None = None) -> None:
        self.output = output
        self.settings = settings or PanelSettings()
        self.store = store
        self.on_game_over = on_game_over
        self.say = say
        self.environ = environ
        self.state: State = "idle"
        # the computer of the choice grid (registry name)
        self.opponent = _computer(self.settings.opponent or players.default_for(Board()))
        self.first = first_rule(self.settings.first)
        self.two_person = False  # the mode of the game being played
        self.switch_on = False  # the switch as it stands; it takes effect at reset
        self.held: set[str] = set()
        self.spent: set[str] = set()  # cells already down when the game began: no move, no chord, until let go
        self.matches = 0
        self.match = self._new_match()
        self._chosen_at: float | None = None  # when reset chose an opponent: line 2 names it for a while
        self._since = 0.0  # when the current state began
        self._now = 0.0  # the time of the input being handled, for the match's listener
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
    def game(self) -> Game:
        """The game in play (before the first one, an empty game)."""
        return self.match.game if self.match.game is not None else Game(self.match.start)

    @property
    def green_mark(self) -> str:
        """The mark of green (seat 0: the person, or the first of two people) in this game."""
        return self.match.mark_of(0)

    @property
    def red_mark(self) -> str:
        return self.match.mark_of(1)

    @property
    def tally(self) -> Tally:
        """The score of the match in play."""
        return Tally(*self.match.score)

    @property
    def match_over(self) -> bool:
        return self.match.match_over

    def sides(self) -> dict[str, tuple[str, str]]:
        """Each LED colour's mark and the name of who plays it: ``{"green": ("X", "Ann"), ...}``."""
        return {"green": (self.match.mark_of(0), self.match.name_of(0)),
                "red": (self.match.mark_of(1), self.match.name_of(1))}

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
            self.spent.discard(button)
        elif button == "reset":
            self._reset(now)
        elif button in CELL_BUTTONS:
            # A press counts only while no other cell button is down: two at once (or a second
            # hand on the panel in two-person mode) cannot play twice. Presses come in cell order,
            # so of two buttons pressed together the lower-numbered one counts, as the seed's scan.
            # A spent cell (held since before the game) is no hand on the panel: it blocks nothing.
            alone = not self.held.intersection(CELL_BUTTONS) - self.spent
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

    def _new_match(self) -> Match:
        """A match for the mode and choice as they stand (a choice or the switch starts one)."""
        self.matches += 1
        seed = None if self.settings.seed is None else f"{self.settings.seed}/{self.matches}"
        if self.two_person:
            opponent, names = PERSON, list(TWO_PEOPLE)
        else:
            opponent, names = self.opponent, [self.settings.player] if self.settings.player else []
        match = Match(opponent, names=names, first=self.first, best_of=self.settings.match_games, seed=seed,
                      store=self.store, environ=self.environ)
        match.add_listener(self._on_match_event)
        return match

    def _reset(self, now: float) -> None:
        held_cells = sorted(int(b) for b in self.held if b in CELL_BUTTONS)
        new_match = False
        self._chosen_at = None
        if held_cells:  # the lowest held cell chooses
            self.opponent, self.first = choice_for_cell(held_cells[0], self.settings.opponents)
            self.opponent = _computer(self.opponent)
            new_match = True
            self._chosen_at = now
        if self.switch_on != self.two_person:
            self.two_person = self.switch_on
            new_match = True
        if new_match:
            self.match = self._new_match()  # the old match and any game in it are dropped
        self._new_game(now)

    def _new_game(self, now: float) -> None:
        # An unfinished game is abandoned (not counted); after a decided match the score starts again.
        # A cell still down was pressed for something else (choosing at reset) or before the game.
        self.spent = self.held.intersection(CELL_BUTTONS)
        self.match.new_game()
        self._settle(now)

    def _settle(self, now: float) -> None:
        """The state the match is in after a move or a new game."""
        if self.match.game_over:
            if self.state != "over":
                self._enter("over", now)
        elif self.match.computer_to_move:
            self._enter("thinking", now)
        else:
            self._enter("turn", now)

    def _cell(self, cell: int, now: float) -> None:
        if self.state != "turn" or self.match.board[cell] is not None:
            return  # a lit cell, the computer's turn, the flash or a finished game: nothing to do
        try:
            self.match.play(cell)
        except NoughtsError:
            return
        self._settle(now)

    def _computer_move(self, now: float) -> None:
        job = self.match.computer_job()
        if job is not None:
            self.match.apply(job, job.run())  # a 3×3 move takes milliseconds: on this thread
        self._settle(now)

    def _on_match_event(self, event: MatchEvent) -> None:
        if event.kind != "end":
            return
        self._enter("over", self._now)
        if self.match.record_problem and self.say is not None:
            self.say(self.match.record_problem)
        if self.on_game_over is not None and self.match.game is not None:
            self.on_game_over(self, self.match.game)

    # --- output ---------------------------------------------------------------------------
    def _show(self, now: float) -> None:
        leds = dict.fromkeys(LED_NAMES, False)
        if self.state == "flash":
            frame = self._flash_frame(now)
            for name in FLASH_FRAMES[min(frame, len(FLASH_FRAMES) - 1)]:
                leds[name] = True
            lcd = (text.PANEL_TITLE, "")
        else:
            board = self.match.board
            for cell in range(9):
                mark = board[cell]
                if mark is not None:
                    leds[f"{'green' if mark == self.green_mark else 'red'}{cell + 1}"] = True
            lcd = self._text(now)
            if self.state == "over":
                won = self.match.winner_seat()
                leds["green_win"] = won in (None, 0)
                leds["red_win"] = won in (None, 1)
        self._leds = leds
        self._lcd = (lcd_ascii(lcd[0])[:LCD_WIDTH], lcd_ascii(lcd[1])[:LCD_WIDTH])
        for name, on in leds.items():
            if self._sent_leds.get(name) != on:
                self.output.set_led(name, on)
                self._sent_leds[name] = on
        if self._lcd != self._sent_lcd:
            self.output.lcd_write(*self._lcd)
            self._sent_lcd = self._lcd

    def _text(self, now: float) -> tuple[str, str]:
        chosen = self._chosen_lines(now)
        if chosen is not None and self.state != "over":
            return chosen
        tally = self.tally_line()
        if self.state == "thinking":
            # the computer's name at once; text.THINKING only once it has worked THINKING_AFTER seconds
            working = now - self._since >= THINKING_AFTER - 1e-9
            return self.match.name_of(1), text.THINKING if working else tally
        if self.state == "turn":
            seat = self.match.seat_to_move
            top = (text.panel_turn(self.match.name_of(seat)) if self.two_person and seat is not None
                   else text.PANEL_YOUR_TURN)
            held = sorted(int(b) for b in self.spent)
            return top, text.let_go(held[0]) if held else tally
        seat = self.match.winner_seat()
        # the match's words ('You win', 'You lose', "It's a draw", 'Green wins'), with the seed's cheer
        cheer = "!" if seat is None else "!!!" if seat == 0 or self.two_person else ""
        top = self.match.result_banner() + cheer
        lines = [text.PANEL_PRESS_RESET, tally]
        if self.match_over:
            lines.append(self.match_line())
        index = int((now - self._since) / self.settings.message_seconds + 1e-9) % len(lines)
        return top, lines[index]

    def _chosen_lines(self, now: float) -> tuple[str, str] | None:
        """For a while after reset chose, what was chosen: ``vs Hard`` and ``Take turns``."""
        if self._chosen_at is None or now - self._chosen_at >= self.settings.message_seconds:
            return None
        you, other = self._seat_words()
        # the menu's own label: names only with two people, as every front end says it
        first = text.short_first_label(self.first, you, other) if self.two_person else text.first_label(self.first)
        if self.two_person:
            return text.panel_turn(self.match.name_of(self.match.seat_to_move or 0)), first
        name = lcd_ascii(other)
        return (f"vs {name}" if len(name) + 3 <= LCD_WIDTH else name), first

    def _seat_words(self) -> tuple[str, str]:
        """The two sides as the LCD names them: the person at the panel is You, as in every front end."""
        return ("You" if not self.two_person else self.match.name_of(0)), self.match.name_of(1)

    def tally_line(self) -> str:
        """The match so far (:func:`noughts.text.tally_line`) in 16 characters: ``You:2 Hard:1 D:0``."""
        return text.short_tally(*self._seat_words(), self.match.score)

    def match_line(self) -> str:
        """Who won the match, once it is over."""
        return text.short_match_line(*self._seat_words(), self.match.score)


def _computer(name: str) -> str:
    """A computer player's registry name (older names accepted); a person is not one."""
    opponent = opponent_name(name)
    if opponent == PERSON:
        raise NoughtsError("the panel's opponent is a computer player; two people play with the two-person switch")
    return opponent
