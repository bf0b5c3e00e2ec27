"""Pictures of a position for the environments' render modes: text, an RGB array and a window.

The picture always shows the board as people see it (rows top to bottom, columns a, b, c…),
whatever cell order the environment numbers its actions in.

``human`` mode opens a pygame window when it can: pygame installed (the ``desktop`` extra) and
a screen to open it on (on Linux ``DISPLAY`` or ``WAYLAND_DISPLAY`` set, or an explicit
``SDL_VIDEODRIVER``). Without one it prints the ``ansi`` text to standard output instead, so a
``human`` environment runs the same on a server or in CI. It never waits between frames.

>>> from noughts import Board
>>> print(ansi(Board.parse("X.O/.X./...")))
   a b c
 1 X . O
 2 . X .
 3 . . .
O to move
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from noughts.text import MARK_COLOURS

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from noughts.board import Board

__all__ = ["HumanView", "ansi", "cell_pixels", "render", "rgb_array"]

BACKGROUND = (250, 250, 245)
GRID = (90, 90, 90)
WINNING_CELL = (255, 236, 150)


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16)


def ansi(board: Board) -> str:
    """The position as text with column letters and row numbers, and who is to move or won."""
    letters = " ".join(chr(ord("a") + c) for c in range(board.cols))
    lines = [f"   {letters}"]
    cells = board.cells
    for r in range(board.rows):
        marks = " ".join(cells[r * board.cols + c] or "." for c in range(board.cols))
        lines.append(f"{r + 1:>2} {marks}")
    if board.winner:
        lines.append(f"{board.winner} wins")
    elif board.is_draw:
        lines.append("a draw")
    else:
        lines.append(f"{board.turn} to move")
    return "\n".join(lines)


def cell_pixels(board: Board) -> int:
    """The side of one cell in pixels: about 480 pixels across the board, 8 to 96 per cell."""
    return max(8, min(96, 480 // max(board.rows, board.cols)))


@lru_cache(maxsize=8)
def _mark_stamps(size: int) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Boolean masks of an X and an O drawn in a ``size``-pixel cell."""
    centre = (size - 1) / 2
    y, x = np.mgrid[0:size, 0:size].astype(np.float64) - centre
    reach = size * 0.32  # how far the strokes run from the centre
    pen = max(1.0, size * 0.06)  # half the stroke width
    within = (np.abs(x) <= reach + pen / 2) & (np.abs(y) <= reach + pen / 2)
    cross = within & ((np.abs(x - y) <= pen * 1.42) | (np.abs(x + y) <= pen * 1.42))
    radius = np.hypot(x, y)
    ring = np.abs(radius - reach) <= pen
    return cross, ring


def rgb_array(board: Board) -> NDArray[np.uint8]:
    """The position as an ``(height, width, 3)`` ``uint8`` image: grid, marks, winning line shaded."""
    size = cell_pixels(board)
    height, width = board.rows * size + 1, board.cols * size + 1
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[:] = BACKGROUND
    cross, ring = _mark_stamps(size)
    colours = {"X": _rgb(MARK_COLOURS["X"]), "O": _rgb(MARK_COLOURS["O"])}
    for cell in board.winning_line or ():
        r, c = divmod(cell, board.cols)
        image[r * size:(r + 1) * size, c * size:(c + 1) * size] = WINNING_CELL
    for cell, mark in enumerate(board.cells):
        if mark is None:
            continue
        r, c = divmod(cell, board.cols)
        patch = image[r * size:(r + 1) * size, c * size:(c + 1) * size]
        patch[cross if mark == "X" else ring] = colours[mark]
    image[::size, :] = GRID
    image[:, ::size] = GRID
    return image


class HumanView:
    """``human`` render mode: a pygame window, or the text on standard output where there is no screen."""

    def __init__(self, caption: str = "noughts") -> None:
        self.caption = caption
        self._pygame: Any = None
        self._screen: Any = None
        self._tried = False

    @staticmethod
    def screen_available() -> bool:
        """Whether there is a screen pygame could open a window on."""
        if os.environ.get("SDL_VIDEODRIVER"):
            return True
        if sys.platform in ("win32", "darwin"):
            return True
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))

    @property
    def has_window(self) -> bool:
        """Whether frames go to a window (``False``: they are printed)."""
        return self._screen is not None

    def _open(self, width: int, height: int) -> None:
        self._tried = True
        if not self.screen_available():
            return
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # no banner on the person's terminal
        try:
            import pygame
        except ImportError:
            return
        try:
            pygame.display.init()
            self._screen = pygame.display.set_mode((width, height))
            pygame.display.set_caption(self.caption)
        except pygame.error:  # a DISPLAY that cannot be reached: print instead
            pygame.display.quit()
            return
        self._pygame = pygame

    def show(self, board: Board) -> None:
        """Draw ``board`` in the window, or print it."""
        image = rgb_array(board)
        if not self._tried:
            self._open(image.shape[1], image.shape[0])
        if self._screen is None:
            print(ansi(board), end="\n\n", file=sys.stdout, flush=True)
            return
        pygame = self._pygame
        pygame.event.pump()  # keeps the window responsive between frames
        surface = pygame.surfarray.make_surface(image.transpose(1, 0, 2))
        self._screen.blit(surface, (0, 0))
        pygame.display.flip()

    def close(self) -> None:
        """Close the window, if one is open."""
        if self._screen is not None:
            self._pygame.display.quit()
        self._screen = self._pygame = None
        self._tried = False


def render(board: Board, mode: str | None, human: HumanView | None) -> NDArray[np.uint8] | str | None:
    """What an environment's ``render()`` returns in ``mode``: ``ansi`` the text, ``rgb_array`` the
    image; ``human`` shows it in ``human`` and returns ``None``."""
    if mode == "ansi":
        return ansi(board)
    if mode == "rgb_array":
        return rgb_array(board)
    if human is not None:
        human.show(board)
    else:
        import gymnasium

        gymnasium.logger.warn("render() was called without a render mode: make the environment with render_mode=")
    return None
