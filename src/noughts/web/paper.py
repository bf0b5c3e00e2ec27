"""Paper mode on the web: camera frames from the page, read into the room's :class:`~noughts.paper_game.PaperGame`,
and the printable sheet.

A frame is a binary websocket message holding one picture (JPEG, PNG or WebP). Before anything is
decoded its size in bytes and its pixels (from its header) are checked; it is then decoded and read
(:func:`read_frame`) in the server's costly-work processes (:mod:`noughts.web.costly`) and charged to
its address's CPU time, like a hint. A frame is never stored or logged, and what it showed goes to
its sender only (``paper`` messages); the room's other sockets see the ``state`` when a move is played.

>>> [None if size is None else size.notation for size in map(sheet_size, ["4x5k4", "3x3", "9x9", "3x3k9"])]
['4x5k4', '3x3k3', None, None]
"""

from __future__ import annotations

import asyncio
import functools
import re
import time
from typing import TYPE_CHECKING, Any

from noughts.board import Geometry
from noughts.errors import NoughtsError
from noughts.sheet.reading import SURE, SheetReading
from noughts.web.protocol import PAPER_SIDES

if TYPE_CHECKING:
    from noughts.board import Board
    from noughts.paper_game import PaperView
    from noughts.web.protocol import Limits

__all__ = ["PAPER_SIDES", "FrameLink", "paper_message", "read_frame", "sheet_png", "sheet_pdf",
           "sheet_size", "sheet_svg_bytes"]

A4_MM = (210.0, 297.0)
PRINT_DPI = 300
SHEETS_KEPT = 16  # rendered sheets kept, by size and format (there are 9 sizes)


def sheet_size(value: str) -> Geometry | None:
    """The board a printable sheet is asked for (the one notation, ``RxC`` or ``RxCkK``), or None if
    it is not a sheet the camera reads."""
    try:
        size = Geometry.parse(value)
    except NoughtsError:
        return None
    return size if size.rows in PAPER_SIDES and size.cols in PAPER_SIDES else None


# --- frames ---------------------------------------------------------------------------------------

def read_frame(data: bytes, rows: int, cols: int, max_pixels: int) -> SheetReading | str:
    """Decode one frame and read the sheet in it; a refusal's code ("not_a_picture", "too_many_pixels")
    instead if it cannot be. Runs in a costly-work process: what goes in and out pickles."""
    import numpy as np

    from noughts.sheet.camera import decode_picture, read_image
    from noughts.sheet.geometry import Sheet

    image = decode_picture(data)
    if image is None:
        return "not_a_picture"
    if image.shape[0] * image.shape[1] > max_pixels:
        return "too_many_pixels"
    return read_image(np.asarray(image, np.uint8), Sheet(rows, cols))


class FrameLink:
    """One socket's frames: how many came, the rate bucket, which refusal was said last, the newest waiting."""

    def __init__(self, limits: Limits) -> None:
        self.frames = 0
        self.allowance = limits.picture_burst
        self.stamp = time.monotonic()
        self.said: str | None = None  # the last refusal told (each is told once until a frame is read again)
        self.waiting: tuple[int, bytes] | None = None  # the newest frame not yet read (older ones are dropped)
        self.reading = False
        self.dropping = False  # frames are being dropped for the rate (told once, until one is taken again)

    def allow(self, limits: Limits) -> bool:
        """``picture_burst`` frames at once, ``picture_rate`` a second after that."""
        now = time.monotonic()
        self.allowance = min(limits.picture_burst, self.allowance + (now - self.stamp) * limits.picture_rate)
        self.stamp = now
        if self.allowance < 1:
            return False
        self.allowance -= 1
        return True

    def first_time(self, code: str) -> bool:
        """Whether refusal ``code`` is to be told (not if it was the last one told)."""
        told = self.said != code
        self.said = code
        return told


def paper_message(view: PaperView | None, board: Board, frame: int, *, phase: str, say: str,
                  owed: int | None) -> dict[str, Any]:
    """The ``paper`` message for the frame numbered ``frame`` (``view``: what it showed, if it was read)."""
    reading = view.reading if view is not None else None
    outline = [[x, y] for x, y in reading.outline] if reading is not None and reading.outline else None
    cells = [{"mark": cell.mark, "sure": cell.confidence >= SURE} for cell in reading.cells] if reading else []
    return {"type": "paper", "phase": phase, "say": say, "announce": view.announce if view is not None else None,
            "owed": board.cell_name(owed) if owed is not None else None, "outline": outline, "cells": cells,
            "frame": frame}


# --- the printable sheet ----------------------------------------------------------------------------

@functools.lru_cache(maxsize=SHEETS_KEPT)
def sheet_svg_bytes(rows: int, cols: int) -> bytes:
    """The sheet with its markers as SVG, in millimetres (its real size)."""
    from noughts.sheet.geometry import Sheet
    from noughts.sheet.paper import sheet_svg

    return sheet_svg(Sheet(rows, cols)).encode("utf-8")


def _a4_svg(rows: int, cols: int) -> str:
    """An A4 page at ``PRINT_DPI``, the sheet centred on it at its real size."""
    from noughts.sheet.geometry import Sheet
    from noughts.sheet.paper import sheet_svg

    sheet = Sheet(rows, cols)
    inner = sheet_svg(sheet)
    # the sheet's own root takes its place on the page: sizes in the page's millimetres
    placed = re.sub(r'width="[^"]*" height="[^"]*"',
                    f'x="{(A4_MM[0] - sheet.width) / 2:g}" y="{(A4_MM[1] - sheet.height) / 2:g}" '
                    f'width="{sheet.width:g}" height="{sheet.height:g}"', inner, count=1)
    width, height = (round(side / 25.4 * PRINT_DPI) for side in A4_MM)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {A4_MM[0]:g} {A4_MM[1]:g}"><rect width="100%" height="100%" fill="#ffffff"/>'
            f'{placed}</svg>')


@functools.lru_cache(maxsize=SHEETS_KEPT)
def _page(rows: int, cols: int) -> Any:
    """The A4 page as a Pillow picture in black and white (the sheet's ink is black): a few KB as PNG or PDF."""
    import io

    from PIL import Image

    from noughts.picture import png

    page = Image.open(io.BytesIO(png(_a4_svg(rows, cols))))
    return page.convert("L").point(lambda grey: 255 if grey > 128 else 0, "1")


@functools.lru_cache(maxsize=SHEETS_KEPT)
def sheet_png(rows: int, cols: int) -> bytes:
    """The A4 page as PNG at ``PRINT_DPI`` (which the file says, so it prints at its real size)."""
    import io

    out = io.BytesIO()
    _page(rows, cols).save(out, "PNG", dpi=(PRINT_DPI, PRINT_DPI))
    return out.getvalue()


@functools.lru_cache(maxsize=SHEETS_KEPT)
def sheet_pdf(rows: int, cols: int) -> bytes:
    """The A4 page as a one-page PDF."""
    import io

    out = io.BytesIO()
    _page(rows, cols).save(out, "PDF", resolution=PRINT_DPI, title="noughts paper sheet")
    return out.getvalue()


async def rendered(render: Any, rows: int, cols: int) -> bytes:
    """A sheet rendered on a worker thread the first time (a fraction of a second), then from the cache."""
    return await asyncio.get_running_loop().run_in_executor(None, render, rows, cols)
