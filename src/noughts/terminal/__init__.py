"""The terminal game: a short menu, games against the computer or another person, and scores.

``session`` plays games on a :class:`~noughts.match.Match`, ``records`` shows what was kept
(history, replay, scores) and ``console`` reads lines and draws the board.
"""

from noughts.terminal.console import MAX_INPUT_BYTES, use_colour
from noughts.terminal.records import history, replay, scores
from noughts.terminal.session import play
from noughts.text import board_diagram as render  # the name the terminal game has always used

__all__ = ["MAX_INPUT_BYTES", "history", "play", "render", "replay", "scores", "use_colour"]
