"""Running the app with uvicorn: ``noughts web`` in the foreground, or a test server in a thread."""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import uvicorn
from starlette.applications import Starlette

from noughts import text
from noughts.errors import NoughtsError
from noughts.web.app import create_app
from noughts.web.protocol import Limits

__all__ = ["listen", "running", "serve"]


def listen(host: str, port: int) -> socket.socket:
    """A listening socket, or a NoughtsError that says why there cannot be one."""
    if type(port) is not int or not 0 <= port <= 65535:
        raise NoughtsError(f"a port is a whole number from 0 to 65535, not {port!r:.20}")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as error:
        raise NoughtsError(f"cannot serve on {host!r}: {error.strerror or error}") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as error:
        sock.close()
        reason = error.strerror or str(error)
        hint = ": another program is using that port (try --port)" if error.errno in (48, 98) else ""
        raise NoughtsError(f"cannot listen on {host} port {port} ({reason}){hint}") from None
    return sock


def _config(app: Starlette, limits: Limits, log_level: str,
            environ: Mapping[str, str] | None = None) -> uvicorn.Config:
    # uvicorn colours its log lines on a terminal; NO_COLOR (https://no-color.org) turns that off
    colours = None if text.colour_wanted(environ) else False
    return uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="on", server_header=False,
                          ws_max_size=limits.max_frame_bytes, ws_per_message_deflate=False, use_colors=colours)


def serve(host: str = "127.0.0.1", port: int = 8000, db: str | None = None, *, scores: bool = True,
          limits: Limits | None = None, log_level: str = "warning") -> None:
    limits = limits or Limits()
    sock = listen(host, port)
    app = create_app(db, scores=scores, limits=limits)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    everywhere = " (every network interface)" if host in ("0.0.0.0", "::", "") else ""
    print(f"noughts web: open http://{shown}:{bound}/ in a browser{everywhere}; Ctrl-C stops the server.",
          flush=True)
    with contextlib.closing(sock), contextlib.suppress(KeyboardInterrupt):
        # uvicorn shuts down gracefully on Ctrl-C, then raises it again: stopping is the normal end here
        uvicorn.Server(_config(app, limits, log_level)).run(sockets=[sock])


@contextlib.contextmanager
def running(app: Starlette | None = None, *, host: str = "127.0.0.1", port: int = 0,
            limits: Limits | None = None, log_level: str = "warning", **options: Any) -> Iterator[str]:
    """Serve ``app`` (default: a new one made with ``options``) from a thread; yields its base URL."""
    limits = limits or Limits()
    if app is None:
        app = create_app(limits=limits, **options)
    sock = listen(host, port)
    server = uvicorn.Server(_config(app, limits, log_level))
    failed: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as error:  # reported to the caller below
            failed.append(error)

    thread = threading.Thread(target=run, name="noughts-web", daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise NoughtsError(f"the web server did not start: {failed[0] if failed else 'see the log'}")
            thread.join(0.01)
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
        if thread.is_alive():
            print("noughts web: the test server did not stop within 10 s", file=sys.stderr)
