"""The web game: ``noughts web`` serves the page and its websocket from an ASGI app.

Starlette, uvicorn and websockets are optional (``pip install 'noughts[web]'``); nothing
here imports them until a server is asked for, and a missing one is a
:class:`~noughts.NoughtsError` saying what to install.

>>> callable(serve)
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from noughts.errors import NoughtsError

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from starlette.applications import Starlette

    from noughts.web.protocol import Limits

__all__ = ["MAX_WORKERS", "MISSING", "create_app", "running", "serve"]

MISSING = "the web game needs: pip install 'noughts[web]'"
MAX_WORKERS = 64  # processes serving one port


def _need_web() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
        import websockets  # noqa: F401
    except ImportError:
        raise NoughtsError(MISSING) from None


def serve(host: str = "127.0.0.1", port: int = 8000, db: str | None = None, *, scores: bool = True,
          limits: Limits | None = None, log_level: str = "warning", redis: str | None = None,
          workers: int = 1, public_url: str | None = None, allowed_hosts: list[str] | None = None,
          trusted_proxies: list[str] | None = None, loop: str = "auto", ws: str = "websockets-sansio",
          tls: bool = False, cert: str | None = None, key: str | None = None) -> None:
    """Serve the game on http://host:port/ (or https) until Ctrl-C (``noughts web``).

    ``db`` is the score and history file (``None``: the same default as ``noughts play``);
    ``scores=False`` records nothing. ``redis`` (``redis://HOST:PORT/N``) keeps the rooms in
    Redis, shared with every process given the same address; ``workers`` processes then serve
    one port (more than one needs ``redis``). ``public_url`` is the address friends are sent
    (else the machine's network address when ``host`` is every interface). ``allowed_hosts`` are
    the names the server answers to (default: those of ``host``; ``['*']``: any).
    ``trusted_proxies`` (addresses or networks) are the reverse proxies whose ``X-Forwarded-For``
    names the client, for the per-address limits (default: none). ``loop`` (``auto``: uvloop if
    installed, ``asyncio``, ``uvloop``) and ``ws`` (``websockets-sansio``, ``websockets``,
    ``wsproto``) choose uvicorn's event loop and websocket implementation. ``tls`` serves HTTPS
    with a self-signed certificate made once and kept (a phone's browser lends the camera only to
    a secure page); ``cert`` and ``key`` (files) serve it with a real one (see
    :mod:`noughts.web.tls`). Raises :class:`NoughtsError` if the web packages are missing, Redis
    cannot be reached, a certificate cannot be used or the address cannot be listened on.
    """
    _need_web()
    if redis is not None:
        try:
            import redis as _redis  # noqa: F401
        except ImportError:
            raise NoughtsError(MISSING) from None
    from noughts.web.server import serve as _serve

    _serve(host, port, db, scores=scores, limits=limits, log_level=log_level, redis=redis, workers=workers,
           public_url=public_url, allowed_hosts=allowed_hosts, trusted_proxies=trusted_proxies, loop=loop, ws=ws,
           tls=tls, cert=cert, key=key)


def create_app(db: str | None = None, **options: Any) -> Starlette:
    """The ASGI app, for any ASGI server (see :func:`noughts.web.app.create_app`)."""
    _need_web()
    from noughts.web.app import create_app as _create_app

    return _create_app(db, **options)


def running(app: Starlette | None = None, **options: Any) -> AbstractContextManager[str]:
    """Run the app on a free loopback port in a background thread; the context gives its URL."""
    _need_web()
    from noughts.web.server import running as _running

    return _running(app, **options)
