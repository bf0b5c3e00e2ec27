"""The ASGI app: the page over HTTP, and one websocket per browser tab for the games.

The server holds all authority: rooms and their matches check every move, make the computer's
moves and record finished games in the score store. Pages only draw what they are sent. The
parts: :mod:`~noughts.web.rooms` (a room: a match, a code, seat tokens), :mod:`~noughts.web.lobby`
(what each message does), :mod:`~noughts.web.hub` (who is in which room; sending changes out),
:mod:`~noughts.web.connection` (one websocket) and :mod:`~noughts.web.recording` (the store's thread).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import html
import json
import os
import re
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from importlib import resources
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import Scope
from starlette.websockets import WebSocket

from noughts import text
from noughts.web.connection import serve_socket
from noughts.web.guard import Guard, TrustedProxies
from noughts.web.hub import Hub
from noughts.web.lobby import Lobby
from noughts.web.protocol import CODE_ALPHABET, CODE_LENGTH, Limits
from noughts.web.recording import Recorder
from noughts.web.rooms import MemoryRoomStore, RoomStore
from noughts.web.share import Share, qr_svg
from noughts.web.shield import GUARD, SECURITY_HEADERS, Shield

__all__ = ["SECURITY_HEADERS", "STATIC", "ListedFiles", "create_app", "render_page"]

FULL_COLLECTION_AFTER = 100  # middle-generation passes before a full one, in the server's own processes

# the files served under /static/, with their types (not the machine's mime.types: it may say application/javascript)
STATIC = {"style.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8"}
SHEET_TYPES = {"svg": "image/svg+xml", "png": "image/png", "pdf": "application/pdf"}  # the printable sheet's formats
PAGE = "index.html"  # a template beside them, filled in by the server and served at / and /r/CODE only
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


def render_page(template: str) -> bytes:
    """index.html with each ``{{key}}`` filled from text.WEB_PAGE, HTML-escaped; ``{{words}}`` is
    text.WEB_WORDS as JSON, so the page has its sentences before its socket opens.

    >>> render_page('<b title="{{hint}}">{{undo}}</b>')
    b'<b title="Hint">Undo</b>'
    """
    words = {**text.WEB_PAGE, "words": json.dumps(text.WEB_WORDS, ensure_ascii=False, separators=(",", ":"))}
    return _PLACEHOLDER.sub(lambda found: html.escape(words[found[1]]), template).encode("utf-8")


class ListedFiles(StaticFiles):
    """Starlette's StaticFiles (its ETag and revalidation, its guard against ``..``) serving only the
    files named in ``types``, each with its type: any other name in the folder is not found.
    """

    def __init__(self, types: Mapping[str, str], *, directory: str | os.PathLike[str] | None = None,
                 packages: list[str | tuple[str, str]] | None = None) -> None:
        super().__init__(directory=directory, packages=packages)
        self.types = dict(types)

    def lookup_path(self, path: str) -> tuple[str, os.stat_result | None]:
        return super().lookup_path(path) if path in self.types else ("", None)

    def file_response(self, full_path: str | os.PathLike[str], stat_result: os.stat_result, scope: Scope,
                      status_code: int = 200) -> Response:
        media_type = self.types[os.path.basename(full_path)]
        response = FileResponse(full_path, status_code=status_code, stat_result=stat_result, media_type=media_type)
        if self.is_not_modified(response.headers, Headers(scope=scope)):
            return NotModifiedResponse(response.headers)
        return response


def public_ports(public_url: str | None) -> set[int]:
    """The port a ``--public-url`` names, which a Host may carry besides the server's own (a proxy's
    port in front of it).

    >>> public_ports("http://play.example.org:9000/"), public_ports("https://play.example.org/"), public_ports(None)
    ({9000}, set(), set())
    """
    try:
        port = urlsplit(public_url).port if public_url else None
    except ValueError:  # Share has said what is wrong with the URL
        return set()
    return {port} if port is not None else set()


def create_app(db: str | None = None, *, scores: bool = True, limits: Limits | None = None,
               rooms: RoomStore | None = None, notify: Callable[[str], None] | None = None,
               redis: str | None = None, heartbeat: float = 1.0, public_url: str | None = None,
               listen_host: str = "127.0.0.1", allowed_hosts: Collection[str] | None = None,
               trusted_proxies: Collection[str] = ()) -> Starlette:
    """The web game as an ASGI app.

    ``db`` is the score file (``None``: the default, as for ``noughts play``); ``scores=False``
    records nothing. ``rooms`` replaces the in-process room store (see :class:`RoomStore`).
    ``redis`` (``redis://HOST:PORT/N``) keeps the rooms in Redis, shared with every other
    process given the same address (see :mod:`noughts.web.shared`); ``heartbeat`` is how often,
    in seconds, this process says it is alive there. ``public_url`` is the address friends are
    sent (``noughts web --public-url``); without it the link is worked out from ``listen_host``,
    the address the server listens on (see :mod:`noughts.web.share`). ``allowed_hosts`` are the
    host names the server answers to (``Host``, and a websocket's ``Origin``); ``None`` or ``'*'``
    in it: any name, as for an app behind a server of your own that checks them (``noughts web``
    passes the names of the address it serves, see :func:`noughts.web.guard.default_allowed_hosts`).
    ``trusted_proxies`` are the addresses (or networks) of proxies whose ``X-Forwarded-For`` names
    the client (``noughts web --trusted-proxy``; see :class:`noughts.web.guard.TrustedProxies`).
    """
    limits = limits or Limits()
    hub: Hub
    trusted = TrustedProxies(trusted_proxies)
    if redis is not None:
        from noughts.web.shared import RedisHub, RedisRoomStore, open_redis
        from noughts.web.shared_guard import SharedGuard

        shared = RedisRoomStore(open_redis(redis), limits.max_rooms, limits.room_ttl)
        rooms, hub = shared, RedisHub(shared, heartbeat=heartbeat)
        # the per-address limits hold over every process on this Redis, not in each one
        guard: Guard = SharedGuard(limits, shared.client, shared.process, shared.prefix, trusted=trusted)
    else:
        rooms = rooms or MemoryRoomStore(limits.max_rooms, limits.room_ttl)
        hub = Hub(rooms)
        guard = Guard(limits, trusted=trusted)
    lobby = Lobby(limits, rooms, Recorder(db, scores, notify), hub, guard)
    allowed = None if allowed_hosts is None or "*" in allowed_hosts else {
        name.strip("[]").lower().rstrip(".") for name in allowed_hosts}
    lobby.share = share = Share(public_url, listen_host)
    # the page's words are filled in once, here: it is served as a fixed file from then on
    page_body = render_page(resources.files("noughts.web").joinpath("static", PAGE).read_text(encoding="utf-8"))
    page_tag = '"' + hashlib.sha256(page_body).hexdigest()[:16] + '"'

    async def page(request: Request) -> Response:
        headers = {**SECURITY_HEADERS, "etag": page_tag}
        if request.headers.get("if-none-match") == page_tag:
            return Response(status_code=304, headers=headers)
        return Response(page_body, media_type="text/html; charset=utf-8", headers=headers)

    @functools.lru_cache(maxsize=256)
    def qr_of(link: str) -> bytes:
        return qr_svg(link).encode("utf-8")

    async def qr(request: Request) -> Response:
        """The QR code of a game's link for a friend, as SVG (the page shows it beside the link)."""
        code = request.path_params["code"].upper()  # as the server writes it in the link: no dashes
        if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
            return PlainTextResponse("Not Found", status_code=404)
        link, _ = share.link(code, request.headers.get("host", ""), request.url.scheme)
        return Response(qr_of(link), media_type="image/svg+xml", headers=SECURITY_HEADERS)

    async def paper_sheet(request: Request) -> Response:
        """The printable sheet of a paper game (``?size=3x3k3``): SVG, or an A4 page as PNG or PDF."""
        from noughts.web import paper

        kind = request.path_params["kind"]
        size = request.query_params.get("size", "3x3")
        shape = paper.sheet_size(size)
        if shape is None or kind not in SHEET_TYPES:
            sides = paper.PAPER_SIDES
            return PlainTextResponse(text.paper_no_such_sheet(size, sides[0], sides[-1]), status_code=404,
                                     headers=SECURITY_HEADERS)
        render = {"svg": paper.sheet_svg_bytes, "png": paper.sheet_png, "pdf": paper.sheet_pdf}[kind]
        try:
            body = await paper.rendered(render, shape.rows, shape.cols)
        except ImportError:  # Pillow or resvg-py missing: the SVG still serves
            return PlainTextResponse(text.PAPER_NO_PRINTABLE_SHEET, status_code=503, headers=SECURITY_HEADERS)
        filename = f"noughts-sheet-{shape.notation}.{kind}"
        return Response(body, media_type=SHEET_TYPES[kind],
                        headers={**SECURITY_HEADERS, "content-disposition": f'inline; filename="{filename}"',
                                 "cache-control": "public, max-age=86400"})

    async def health(request: Request) -> Response:
        # 200 while serving: games go on while the score store is down; "status" says "degraded" then
        return JSONResponse({"ok": True, "connections": hub.connections, **lobby.recorder.health()})

    async def websocket(ws: WebSocket) -> None:
        await serve_socket(ws, lobby)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[Mapping[str, object]]:
        await lobby.start()
        if getattr(app.state, "freeze_heap", False):
            freeze_heap()
        try:
            yield {GUARD: guard}  # uvicorn hands this to each connection's protocol (noughts.web.shield)
        finally:
            await lobby.stop()

    app = Starlette(routes=[
        Route("/", page), Route("/r/{code}", page), Route("/r/{code}/qr.svg", qr),
        Mount("/static", ListedFiles(STATIC, packages=[("noughts.web", "static")]), name="static"),
        Route("/paper/sheet.{kind}", paper_sheet),
        Route("/healthz", health), WebSocketRoute("/ws", websocket),
    ], lifespan=lifespan, middleware=[Middleware(Shield, headers=SECURITY_HEADERS, allowed=allowed, guard=guard,
                                                 ports=public_ports(public_url))])
    app.state.lobby = lobby
    app.state.hub = hub
    app.state.guard = guard
    return app


def freeze_heap() -> None:
    """Keep what the server made while starting (modules, the players' tables: ~50,000 objects) out
    of the garbage collector's full passes, which otherwise walk all of it every time (20–35 ms in
    which the event loop serves nobody); what the clients make later is still collected as ever.

    What the clients make is also walked less often: a full pass comes after ``FULL_COLLECTION_AFTER``
    passes of the middle generation, not Python's 10 (a pass over 600 games' rooms and sockets costs
    30–60 ms, a tenth of the CPU of all their moves; closed sockets leave no cycles, so little waits for it).
    For a server's own process (``noughts web``): in a test's process it would keep the tests' garbage.
    """
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_AFTER)
