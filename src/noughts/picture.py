"""``noughts picture``: a position as an SVG or PNG file.

The SVG comes from :mod:`noughts.svg` (standard library only). PNG needs the optional
``resvg-py`` (``pip install 'noughts[picture]'``): resvg is a self-contained SVG renderer, its
wheels need no system libraries (unlike Cairo), and the pictures use no fonts, so the PNG is
the SVG exactly.
"""

from __future__ import annotations

from noughts.board import Board
from noughts.errors import NoughtsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FORMATS", "png", "run_picture"]

FORMATS = ("svg", "png")
PNG_EXTRA = "pip install 'noughts[picture]'"


def png(svg_text: str) -> bytes:
    """The SVG picture rendered as PNG bytes (needs resvg-py)."""
    try:
        import resvg_py
    except ImportError:
        raise NoughtsError(f"PNG pictures need resvg-py, which is not installed: {PNG_EXTRA} "
                           "(or write .svg, which needs nothing)") from None
    try:
        return bytes(resvg_py.svg_to_bytes(svg_string=svg_text))
    except ValueError as error:  # resvg refused the picture: a bug of ours, said in one line
        raise NoughtsError(f"the picture could not be turned into PNG ({error})") from None


def run_picture(args: Any) -> int:
    """Draw ``args.position`` (or an empty board of ``--rows``/``--cols``) to ``--out`` (stdout: SVG)."""
    import sys

    from noughts import svg

    out = args.out
    kind = _kind(out)
    if args.position is not None:
        board = Board.parse(args.position, args.k)
    else:
        board = Board(3 if args.rows is None else args.rows, 3 if args.cols is None else args.cols, args.k)
    picture = svg.board(board, size=args.size, last_move=args.last, hint=args.move,
                        coordinates=not args.no_coordinates, theme=args.theme)
    if out is None or out == "-":
        sys.stdout.write(picture + "\n")
        return 0
    data = png(picture) if kind == "png" else (picture + "\n").encode("utf-8")
    try:
        with open(out, "wb") as file:
            file.write(data)
    except OSError as error:
        raise NoughtsError(f"cannot write {out}: {error.strerror or error}") from None
    return 0


def _kind(out: str | None) -> str:
    if out is None or out == "-":
        return "svg"
    suffix = out.rpartition(".")[2].lower() if "." in out.rpartition("/")[2] else ""
    if suffix not in FORMATS:
        raise NoughtsError(f"the picture's file name ends in .svg or .png, not {out[-20:]!r}")
    return suffix
