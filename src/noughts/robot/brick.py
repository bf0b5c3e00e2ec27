"""Talking with the human on the EV3 brick, as seed 003 did: its screen, its buttons, the touch sensor.

The seed's menu: left easy, centre (enter) medium, right hard, down shows the high scores for a
few seconds, up exits. During a game the human presses (and releases) the touch sensor after
drawing; up on the brick stops the game (it is kept, like q in the terminal).

>>> brick = ScriptedBrick([set(), {"down"}, set(), {"right"}])
>>> brick_menu(brick, lambda: ["Hard High Score: 3"], sleep=lambda s: None)
'hard'
>>> brick.screens[1]
['Hard High Score: 3']
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from noughts import text

__all__ = ["BRICK_COLUMNS", "MENU", "Brick", "BrickConsole", "ScriptedBrick", "brick_menu", "high_score_lines"]

BRICK_COLUMNS = 22  # characters across the EV3's 178-pixel screen in its default font
BRICK_LINES = 12
POLL_SECONDS = 0.05
SCORES_SECONDS = 6.0  # the seed shows the high scores for six seconds
MENU = {"left": "easy", "enter": "medium", "right": "hard"}


class Brick(Protocol):
    """The brick's screen and inputs (the ``ev3`` backend's robot offers them)."""

    def show(self, lines: Sequence[str]) -> None: ...

    def buttons(self) -> set[str]:
        """The brick buttons held now: left, right, up, down, enter, backspace."""

    def touch_pressed(self) -> bool: ...


def screen_lines(text: str) -> list[str]:
    """``text`` wrapped to the brick's screen, at most its 12 lines."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lines += textwrap.wrap(paragraph, BRICK_COLUMNS) or [""]
    return lines[:BRICK_LINES]


def _released(brick: Brick, sleep: Callable[[float], None]) -> None:
    while brick.buttons():
        sleep(POLL_SECONDS)


def brick_menu(brick: Brick, high_scores: Callable[[], list[str]],
               sleep: Callable[[float], None] = time.sleep) -> str | None:
    """The seed's menu on the brick: the difficulty chosen, or None when up was pressed."""
    menu = ["Welcome to your", "noughts robot!", "", "Select difficulty:",
            *(f"{text.opponent_label(name)} ({button} button)" for button, name in MENU.items()),
            "Scores (down button)", "Exit (up button)"]
    while True:
        brick.show(menu)
        pressed: set[str] = set()
        while not pressed:
            sleep(POLL_SECONDS)
            pressed = brick.buttons()
        _released(brick, sleep)
        for button, difficulty in MENU.items():
            if button in pressed:
                brick.show([f"Difficulty: {text.opponent_label(difficulty)}", "", "Good luck!"])
                return difficulty
        if "up" in pressed:
            brick.show(["Goodbye!"])
            return None
        if "down" in pressed:
            brick.show(high_scores())
            sleep(SCORES_SECONDS)


class BrickConsole:
    """The game's console on the brick: messages on its screen; the signal is a press and release
    of the touch sensor (as the seed waited for both); the up button stops."""

    def __init__(self, brick: Brick, sleep: Callable[[float], None] = time.sleep) -> None:
        self.brick = brick
        self.sleep = sleep
        self.last: list[str] = []

    def show(self, text: str) -> None:
        self.last = screen_lines(text)
        self.brick.show(self.last)

    def wait_for_human(self, prompt: str, *, move: bool = False) -> bool:
        self.brick.show([*screen_lines(prompt.replace("press", "press the touch sensor")), "", "(up button: stop)"])
        while not self.brick.touch_pressed():
            if "up" in self.brick.buttons():
                _released(self.brick, self.sleep)
                return False
            self.sleep(POLL_SECONDS)
        while self.brick.touch_pressed():
            self.sleep(POLL_SECONDS)
        return True


class ScriptedBrick:
    """A brick for tests and the sim: ``script`` is what is held at each poll (button names, and
    ``touch`` for the touch sensor); the screens shown are kept in ``screens``."""

    def __init__(self, script: Iterable[set[str]]) -> None:
        self.script = iter(script)
        self.held: set[str] = set()
        self.screens: list[list[str]] = []

    def _poll(self) -> set[str]:
        self.held = next(self.script, set())
        return self.held

    def show(self, lines: Sequence[str]) -> None:
        self.screens.append(list(lines))

    def buttons(self) -> set[str]:
        return self._poll() - {"touch"}

    def touch_pressed(self) -> bool:
        return "touch" in self._poll()


def high_score_lines(run: int, high: dict[str, int]) -> list[str]:
    """The seed's score screen: each difficulty's high score and the current run.

    >>> high_score_lines(2, {"easy": 1, "medium": 2, "hard": 0})
    ['Easy High Score: 1', 'Medium High Score: 2', 'Hard High Score: 0', 'Current Score: 2']
    """
    lines = [f"{text.opponent_label(name)} High Score: {high.get(name, 0)}" for name in MENU.values()]
    return [*lines, f"Current Score: {run}"]
