"""Running the app with uvicorn: ``noughts web`` in the foreground, or a test server in a thread.

With ``workers`` above one (``noughts web --redis URL --workers N``), uvicorn's supervisor runs
N processes that share one listening socket, and each builds its app with
:func:`app_from_environment` from the options this process leaves in ``NOUGHTS_WEB_OPTIONS``.
With a certificate (``--tls``, or ``--cert`` and ``--key``: :mod:`noughts.web.tls`) every process
serves HTTPS and wss, and the links friends are sent say https.
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import json
import os
import socket
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import uvicorn
from starlette.applications import Starlette

from noughts import text
from noughts.errors import NoughtsError, SettingError
from noughts.web import MAX_WORKERS
from noughts.web.app import create_app
from noughts.web.costly import CostlyWork, own_processes
from noughts.web.guard import TrustedProxies, default_allowed_hosts, install_log_limiter, raise_descriptor_limit
from noughts.web.protocol import Limits
from noughts.web.shield import WS_IMPLEMENTATIONS

if TYPE_CHECKING:
    from noughts.web.tls import Certificate

__all__ = ["OPTIONS_VARIABLE", "app_from_environment", "listen", "running", "serve"]

OPTIONS_VARIABLE = "NOUGHTS_WEB_OPTIONS"  # how the supervisor hands its options to the worker processes
NEEDS_REDIS = ("more than one worker process needs the rooms in Redis: each process would hold its own rooms, and "
               "a friend reaching another process could not find the game")


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
        sock.listen(LISTEN_BACKLOG)
    except OSError as error:
        sock.close()
        reason = error.strerror or str(error)
        message = f"cannot listen on {host} port {port} ({reason})"
        if error.errno in (48, 98):  # EADDRINUSE (macOS, Linux): another port would do
            raise SettingError(f"{message}: another program is using that port", setting="port",
                               instead=()) from None
        raise NoughtsError(message) from None
    return sock


# A short queue of connections not yet accepted: the event loop accepts every queued connection in one
# turn, so a burst of thousands (an idle-socket flood) stalled honest games for 0.4-0.9 s behind their
# handshakes; with 64 the kernel holds the rest back (their clients retry) and the burst is spread out.
LISTEN_BACKLOG = 64

LOOPS = ("auto", "asyncio", "uvloop")  # auto is uvloop when it is installed, else asyncio


def _config(app: Starlette | str, limits: Limits, log_level: str,
            environ: Mapping[str, str] | None = None, *, loop: str = "auto", ws: str = "websockets-sansio",
            **options: Any) -> uvicorn.Config:
    # uvicorn colours its log lines on a terminal; NO_COLOR (https://no-color.org) turns that off
    colours = None if text.colour_wanted(environ) else False
    # Our protocols are uvicorn's own with the per-address guard in front (noughts.web.shield).
    # On SIGTERM or Ctrl-C, sockets still open after a few seconds are closed rather than waited
    # for: one client that never hangs up must not keep a server from stopping.
    options.setdefault("timeout_graceful_shutdown", 5)
    check_implementations(loop, ws)
    # X-Forwarded-For is believed only from --trusted-proxy peers, by the app (noughts.web.shield):
    # uvicorn's own default would believe it from any client on 127.0.0.1.
    options.setdefault("proxy_headers", False)
    options.setdefault("backlog", LISTEN_BACKLOG)  # uvicorn listens again on our socket with this
    config = uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="on", server_header=False,
                            ws_max_size=limits.max_frame_bytes, ws_per_message_deflate=False, use_colors=colours,
                            http="noughts.web.shield:GuardedHTTP", ws=WS_IMPLEMENTATIONS[ws], loop=loop,
                            **options)
    install_log_limiter(limits.log_every)  # after the Config: it sets up uvicorn's loggers
    return config


def check_implementations(loop: str, ws: str) -> None:
    """A NoughtsError naming the choices, or the package to install, for an event loop or websocket
    implementation this server cannot use."""
    import importlib.util

    if loop not in LOOPS:
        raise NoughtsError(f"the event loop is one of {', '.join(LOOPS)}, not {loop!r:.20}")
    if ws not in WS_IMPLEMENTATIONS:
        raise NoughtsError(f"the websocket implementation is one of {', '.join(WS_IMPLEMENTATIONS)}, "
                           f"not {ws!r:.20}")
    for wanted, package in ((loop, "uvloop"), (ws, "wsproto")):
        if wanted == package and importlib.util.find_spec(package) is None:
            raise NoughtsError(f"{package} is not installed: pip install {package}")


def app_from_environment() -> Starlette:
    """The app of one worker process, from the options its supervisor put in the environment."""
    options = json.loads(os.environ[OPTIONS_VARIABLE])
    if "supervisor" in options:  # first: a worker outliving its supervisor would hold the port on its own
        from noughts.web.supervisor import die_with_supervisor

        die_with_supervisor(options["supervisor"])
    limits = Limits(**options["limits"])
    install_log_limiter(limits.log_every)
    app = create_app(options["db"], scores=options["scores"], limits=limits, redis=options["redis"],
                     allowed_hosts=options["allowed_hosts"], public_url=options.get("public_url"),
                     listen_host=options.get("host", "127.0.0.1"),
                     trusted_proxies=options.get("trusted_proxies", ()))
    app.state.freeze_heap = True  # a process of its own: see noughts.web.app.freeze_heap
    app.state.lobby.costly = CostlyWork(own_processes())  # hints and board checks off this process's GIL
    return app


def broad_networks(proxies: TrustedProxies) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """The trusted networks so broad that any client may be inside: public, and wider than a /8
    (IPv4) or a /16 (IPv6). A private 10.0.0.0/8 or a provider's published /13 is not.

    >>> [str(n) for n in broad_networks(TrustedProxies(["0.0.0.0/0", "::/0", "10.0.0.0/8", "104.16.0.0/13"]))]
    ['0.0.0.0/0', '::/0']
    """
    return [network for network in proxies.networks
            if not network.is_private and network.prefixlen < (8 if network.version == 4 else 16)]


def answered_names(host: str, allowed_hosts: list[str] | None, public_url: str | None) -> list[str]:
    """The host names ``noughts web`` answers to: ``--allowed-host`` (else those of ``host``), and
    always the host of ``--public-url``, since friends are sent there."""
    names = set(allowed_hosts or default_allowed_hosts(host))
    public_name = urlsplit(public_url).hostname if public_url is not None else None
    if public_name and "*" not in names:
        names.add(public_name)
    return sorted(names)


def serve(host: str = "127.0.0.1", port: int = 8000, db: str | None = None, *, scores: bool = True,
          limits: Limits | None = None, log_level: str = "warning", redis: str | None = None,
          workers: int = 1, public_url: str | None = None, allowed_hosts: list[str] | None = None,
          trusted_proxies: list[str] | None = None, loop: str = "auto", ws: str = "websockets-sansio",
          tls: bool = False, cert: str | None = None, key: str | None = None) -> None:
    """Serve until Ctrl-C or SIGTERM; ``loop`` and ``ws`` choose uvicorn's event loop and websocket
    implementation (the defaults measured cheapest a move: see docs/web-protocol.md, "Load").
    ``tls`` serves HTTPS with a self-signed certificate made once and kept; ``cert`` and ``key``
    (files) with a real one (see :mod:`noughts.web.tls`)."""
    limits = limits or Limits()
    check_implementations(loop, ws)
    proxies = list(trusted_proxies or ())
    for network in broad_networks(TrustedProxies(proxies)):  # (a malformed address is one line now, not one per worker)
        print(text.web_proxy_too_broad(str(network)), file=sys.stderr, flush=True)
    if public_url is not None:
        from noughts.web.share import check_public_url

        public_url = check_public_url(public_url)
    hosts = answered_names(host, allowed_hosts, public_url)
    if type(workers) is not int or not 1 <= workers <= MAX_WORKERS:
        shown = f"{workers!r:.20}"
        raise SettingError(f"a server runs 1 to {MAX_WORKERS} worker processes, not {shown}", setting="workers",
                           takes=f"a number of processes from 1 to {MAX_WORKERS}", shown=shown)
    if workers > 1 and redis is None:
        raise NoughtsError(NEEDS_REDIS)
    if redis is not None:
        from noughts.web.shared import check_redis, shown_url

        check_redis(redis)  # one clear line now rather than a traceback from every worker
    certificate = certificate_for(host, tls, cert, key)
    sock = listen(host, port)
    warning = raise_descriptor_limit(limits.max_connections + 2 * limits.connections_per_address)
    if warning is not None:
        print(warning, file=sys.stderr, flush=True)
    bound = sock.getsockname()[1]
    scheme = "https" if certificate is not None else "http"
    shown = f"[{host}]" if ":" in host else host
    everywhere = " (every network interface)" if host in ("0.0.0.0", "::", "") else ""
    if public_url is not None:
        everywhere += f"; friends are sent {public_url}/r/…"
    elif everywhere:
        from noughts.web.share import lan_address

        lan = lan_address()
        shown_lan = f"[{lan}]" if lan and ":" in lan else lan
        reach = "a phone or a friend" if certificate is not None else "friends"
        everywhere += f"; {reach} on your network: {scheme}://{shown_lan}:{bound}/" if lan else \
            "; no network address found, so friend links work on this machine only"
    said_certificate = "" if certificate is None else "\n" + text.web_tls_fingerprint(
        certificate.fingerprint, certificate.made, None if cert else str(certificate.cert_file.parent))
    https: dict[str, Any] = {}  # uvicorn's TLS options: every worker process loads the same files
    if certificate is not None:
        https = {"ssl_certfile": str(certificate.cert_file), "ssl_keyfile": str(certificate.key_file)}
    shared = ""
    if redis is not None:
        shared = f" {workers} worker process{'es' if workers > 1 else ''}, rooms in Redis at {shown_url(redis)};"
    with contextlib.closing(sock), contextlib.suppress(KeyboardInterrupt):
        if workers == 1:
            app = create_app(db, scores=scores, limits=limits, redis=redis, allowed_hosts=hosts,
                             public_url=public_url, listen_host=host, trusted_proxies=proxies)
            app.state.freeze_heap = True  # the process is the server's own: see noughts.web.app.freeze_heap
            app.state.lobby.costly = CostlyWork(own_processes())  # hints and board checks off this process's GIL
            print(f"noughts web: open {scheme}://{shown}:{bound}/ in a browser{everywhere};{shared} Ctrl-C stops "
                  f"the server.{said_certificate}", flush=True)
            # uvicorn shuts down gracefully on Ctrl-C, then raises it again: stopping is the normal end here
            uvicorn.Server(_config(app, limits, log_level, loop=loop, ws=ws, **https)).run(sockets=[sock])
            return
        from noughts.web.supervisor import Supervisor

        os.environ[OPTIONS_VARIABLE] = json.dumps({"db": db, "scores": scores, "redis": redis,
                                                   "public_url": public_url, "host": host,
                                                   "limits": dataclasses.asdict(limits), "allowed_hosts": hosts,
                                                   "trusted_proxies": proxies, "supervisor": os.getpid()})
        config = _config("noughts.web.server:app_from_environment", limits, log_level, factory=True,
                         workers=workers, loop=loop, ws=ws, **https)
        print(f"noughts web: open {scheme}://{shown}:{bound}/ in a browser{everywhere};{shared} Ctrl-C stops "
              f"the server.{said_certificate}", flush=True)
        # the supervisor stops every worker on Ctrl-C or SIGTERM, and starts a new one if a worker dies
        Supervisor(config, sockets=[sock]).run()  # uvicorn's, hearing SIGTERM promptly (noughts.web.supervisor)


def certificate_for(host: str, tls: bool, cert: str | None, key: str | None) -> Certificate | None:
    """The certificate to serve with: ``cert`` and ``key`` if given, else with ``tls`` the kept
    self-signed one (made if need be), else None (plain HTTP)."""
    if cert is None and key is None and not tls:
        return None
    from noughts.web import tls as certificates

    if cert is not None and key is not None:
        return certificates.own_certificate(cert, key)
    if cert is not None or key is not None:
        raise SettingError(text.WEB_TLS_CERT_WITHOUT_KEY, setting="key" if key is None else "cert")
    return certificates.self_signed(host)


@contextlib.contextmanager
def running(app: Starlette | None = None, *, host: str = "127.0.0.1", port: int = 0,
            limits: Limits | None = None, log_level: str = "warning", loop: str = "auto",
            ws: str = "websockets-sansio", tls: Certificate | None = None, **options: Any) -> Iterator[str]:
    """Serve ``app`` (default: a new one made with ``options``) from a thread; yields its base URL.

    A new app answers to the names of ``host`` unless ``allowed_hosts`` is among the options;
    ``loop`` and ``ws`` are as for :func:`serve`; with ``tls`` (a certificate) it serves HTTPS.
    """
    limits = limits or Limits()
    if app is None:
        options.setdefault("allowed_hosts", default_allowed_hosts(host))
        app = create_app(limits=limits, **options)
    sock = listen(host, port)
    https: dict[str, Any] = {} if tls is None else {"ssl_certfile": str(tls.cert_file),
                                                    "ssl_keyfile": str(tls.key_file)}
    server = uvicorn.Server(_config(app, limits, log_level, loop=loop, ws=ws, **https))
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
        yield f"{'https' if tls else 'http'}://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
        if thread.is_alive():
            print("noughts web: the test server did not stop within 10 s", file=sys.stderr)
