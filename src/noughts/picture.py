"""A position as a picture file: SVG, or PNG (``noughts picture``; :mod:`noughts.cli.records` runs it).

The SVG comes from :mod:`noughts.svg` (standard library only). PNG needs the optional
``resvg-py`` (``pip install 'noughts[picture]'``): resvg is a self-contained SVG renderer, its
wheels need no system libraries (unlike Cairo), and the pictures use no fonts, so the PNG is
the SVG exactly.
"""

from __future__ import annotations

from noughts.errors import NoughtsError

__all__ = ["FORMATS", "format_of", "png"]

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


def format_of(out: str | None) -> str:
    """The picture format a file name asks for (``None`` or ``-``, stdout: svg); any other ending is refused."""
    if out is None or out == "-":
        return "svg"
    suffix = out.rpartition(".")[2].lower() if "." in out.rpartition("/")[2] else ""
    if suffix not in FORMATS:
        raise NoughtsError(f"the picture's file name ends in .svg or .png, not {out[-20:]!r}")
    return suffix
