"""The desktop game (`noughts gui`): noughts and crosses in a resizable pygame window.

pygame-ce is an optional dependency (``pip install 'noughts[desktop]'``); it is imported only
by this package, and only when a window is opened, so ``import noughts.desktop`` always works.

The package is three layers that are tested apart:

* :mod:`~noughts.desktop.layout` — pure geometry from the window size (``cell_at``, the buttons);
* :mod:`~noughts.desktop.controller` — the game flow as a state machine of high-level inputs
  (a cell, a key, a button, the computer's answer) driving a :class:`~noughts.match.Match`,
  with no pygame;
* :mod:`~noughts.desktop.draw` and :mod:`~noughts.desktop.app` — drawing a view, and the window's
  event loop, with the computer's moves worked out on a background thread.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from noughts.desktop.app import App

__all__ = ["MISSING_PYGAME", "open_app", "run"]

MISSING_PYGAME = "the desktop game needs pygame-ce: pip install 'noughts[desktop]'"


def open_app(*, opponent: str | None = None, first: str | None = None, mark: str | None = None,
             best_of: str | int | None = None, seed: str | int | None = None, size: str | int | None = None,
             k: str | int | None = None,
             db: str | None = None, names: Sequence[str] | None = None, no_scores: bool = False,
             think_delay: float | str = 0.0, window: tuple[int, int] | None = None,
             environ: Mapping[str, str] | None = None) -> App:
    """Check the options as `noughts play` does, open the score store and the window.

    Raises :class:`~noughts.errors.NoughtsError` (with a sentence for the person) for a bad
    option, an opponent that cannot play the board, a missing pygame, or no screen to open a
    window on.
    """
    from noughts.errors import NoughtsError
    from noughts.match import DEFAULT_FIRST, Match, play_options

    options = play_options(opponent=opponent, first=first, mark=mark,
                           best_of=None if best_of is None else str(best_of), seed=None if seed is None else str(seed),
                           size=None if size is None else str(size),
                           k=None if k is None else str(k), names=names)
    if options.opponent is not None:  # the match refuses what cannot be played before a window opens
        Match(options.opponent, names=options.names, first=options.first or DEFAULT_FIRST, rows=options.rows,
              cols=options.cols, k=options.k, best_of=options.best_of, environ=environ)
    try:
        delay = float(think_delay)
    except ValueError:
        raise NoughtsError(f"the thinking pause is a number of seconds, like 0.5, not {think_delay!r:.20}") from None
    if not 0 <= delay <= 60:
        raise NoughtsError(f"the thinking pause is between 0 and 60 seconds, not {delay:g}")
    import os

    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # no banner on the person's terminal
    try:
        import pygame  # noqa: F401  # only to learn whether it is there
    except ImportError:
        raise NoughtsError(MISSING_PYGAME) from None
    from noughts.desktop.app import DEFAULT_WINDOW, App

    store = None
    if not no_scores:
        from noughts.store import open_store

        store = open_store(db, environ=environ)  # never raises: problems become notices
    try:
        return App(rows=options.rows, cols=options.cols, k=options.k, opponent=options.opponent,
                   first=options.first, best_of=options.best_of, seed=options.seed, names=options.names,
                   store=store, think_delay=delay, window=window or DEFAULT_WINDOW, environ=environ)
    except BaseException:
        if store is not None:
            store.close()
        raise


def run(*, opponent: str | None = None, first: str | None = None, mark: str | None = None,
        best_of: str | int | None = None, seed: str | int | None = None, size: str | int | None = None,
        k: str | int | None = None,
        db: str | None = None, names: Sequence[str] | None = None, no_scores: bool = False,
        think_delay: float | str = 0.0) -> int:
    """Open the window and play until it is closed; returns the exit status (0, or 130 on Ctrl-C).

    The options are those of `noughts play`, as typed (``size="4x5"``, ``seed="7"``). When both
    ``opponent`` and ``first`` (or ``mark``) are given the game starts at once; otherwise the
    start screen asks, with them chosen. ``think_delay`` is a pause in seconds before each of
    the computer's moves (seed 000's "thinking"), off by default.
    """
    app = open_app(opponent=opponent, first=first, mark=mark, best_of=best_of, seed=seed, size=size, k=k, db=db,
                   names=names, no_scores=no_scores, think_delay=think_delay)
    try:
        return app.run()
    except KeyboardInterrupt:  # Ctrl-C in the terminal that started the window: the game is not counted
        return 130
