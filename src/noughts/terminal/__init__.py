"""The terminal game: a short menu, games against the computer or another person, and scores.

``session`` plays games, ``records`` shows what was kept (history, replay, scores) and
``console`` reads lines and draws the board.
"""

from noughts.terminal.console import MAX_INPUT_BYTES, render, use_colour
from noughts.terminal.records import history, replay, scores
from noughts.terminal.session import (
    DEFAULT_FIRST,
    DEFAULT_OPPONENT,
    FIRST_CHOICES,
    PERSON,
    PlayOptions,
    play,
    play_options,
)
from noughts.text import default_name, describe_line, plural

__all__ = [
    "DEFAULT_FIRST", "DEFAULT_OPPONENT", "FIRST_CHOICES", "MAX_INPUT_BYTES", "PERSON", "PlayOptions",
    "default_name", "describe_line", "history", "play", "play_options", "plural", "render", "replay", "scores",
    "use_colour",
]
